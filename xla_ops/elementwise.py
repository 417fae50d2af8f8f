"""Elementwise ops: arithmetic, math functions, comparisons, casts."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op, true_divide, unbroadcast, wide_unary


@jax.custom_jvp
def _read_by_derivative(x):
    """`x`, whose derivative (ones) still reads `x`. PyTorch differentiates `x ** 2` as `2 * x.pow(1)` and that
    as `x.pow(0)`: the second derivative stays on the graph through `x`, so a third `grad` gives zeros where it
    would otherwise raise "does not require grad"."""
    return x


@_read_by_derivative.defjvp
def _read_by_derivative_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x, t * jax.lax.integer_pow_p.bind(x, y=0)


# -- broadcasting arithmetic -----------------------------------------------
add = op("add", lambda x, y, alpha=1: x + y if alpha == 1 else x + alpha * y,
         lambda g, ans, x, y, alpha=1: (unbroadcast(g, x), unbroadcast(g if alpha == 1 else g * alpha, y)))
sub = op("sub", lambda x, y, alpha=1: x - y if alpha == 1 else x - alpha * y,
         lambda g, ans, x, y, alpha=1: (unbroadcast(g, x), unbroadcast(-g if alpha == 1 else -alpha * g, y)))
rsub = op("rsub", lambda x, y: y - x,
          lambda g, ans, x, y: (unbroadcast(-g, x), unbroadcast(g, y)), node="RsubBackward0",
          scalar_edges=(1,), overload_nodes={(1,): "RsubBackward1"})
mul = op("mul", jnp.multiply,
         lambda g, ans, x, y: (unbroadcast(g * y, x), unbroadcast(g * x, y)), saves=("x", "y"),
         saved_for={"x": "y", "y": "x"})
# PyTorch's derivatives, operation for operation: `g / y` and `-g * ((x / y) / y)`.
div = op("div", true_divide,
         lambda g, ans, x, y: (unbroadcast(true_divide(g, y), x),
                               unbroadcast(-g * true_divide(true_divide(x, y), y), y)),
         saves=("x", "y"), saved_for={"x": "y"})
maximum = op("maximum", jnp.maximum, lambda g, ans, x, y: _minmax_vjp(g, x, y, x < y, x > y), saves=("x", "y"))
minimum = op("minimum", jnp.minimum, lambda g, ans, x, y: _minmax_vjp(g, x, y, x > y, x < y), saves=("x", "y"))


def _minmax_vjp(g, x, y, x_loses, y_loses):
    # NOTE: ties split the gradient evenly between both inputs, as PyTorch does; a loser gets none, and where a
    # NaN makes neither lose, both get all of it (PyTorch's masks).
    share = jnp.where(x == y, g / 2, g)
    return unbroadcast(jnp.where(x_loses, 0, share), x), unbroadcast(jnp.where(y_loses, 0, share), y)


def _pow(x, y):
    if jnp.issubdtype(jnp.result_type(x, y), jnp.integer):
        # PyTorch's integer powers with a negative exponent: 1 for a base of 1, +-1 for -1, 0 otherwise
        neg = y < 0
        odd = (y % 2) != 0
        small = jnp.where(x == 1, 1, jnp.where(x == -1, jnp.where(odd, -1, 1), 0))
        return jnp.where(neg, small, jnp.power(x, jnp.where(neg, 0, y))).astype(jnp.result_type(x, y))
    return jnp.power(x, y)


def _pow_base_grad(g, x, y):
    # NOTE: PyTorch's rule: no gradient for the base where the exponent is 0 (x**0 is constant, even at x == 0
    # where y * x**(y-1) would be 0 * inf). The factor is masked, not the product, so that forward mode (this
    # map transposed) gets the same zero.
    return g * jnp.where(y == 0, 0, y * jnp.power(x, y - 1))


def _pow_scalar_vjp(g, ans, x, y):
    # NOTE: PyTorch's gradient of `x ** 0` for a number 0 is a constant zero: it has no graph, so a second
    # derivative sees nothing of it. Here the base is replaced by 1 where the exponent is 0 before the power, so
    # the derivative of that zero is zero too, and not the 0 * inf = NaN of `0 ** -1` at x == 0. (A tensor
    # exponent keeps `_pow_base_grad`, whose second derivative there is NaN, as PyTorch's is.)
    safe = jnp.where(y == 0, 1, x)
    return unbroadcast(g * jnp.where(y == 0, 0, y * jnp.power(safe, y - 1)), x), None


def _log_base(x):
    # log x with log 0 = -inf, written so that differentiating it again never meets 1/0 (x == 0 is a constant).
    return jnp.where(x == 0, -jnp.inf, jnp.log(jnp.where(x == 0, 1, x)))


def _pow_exponent_grad(g, ans, x, y):
    # NOTE: d/dy x**y = x**y log x, the logarithm of the base in the result's dtype (a negative real base with a
    # complex exponent has a complex logarithm); PyTorch defines it as 0 where x == 0 and y >= 0 (a complex y:
    # real and >= 0), -inf for y < 0. (The factor is masked, not the product, so that forward mode, this map
    # transposed, gets the same zero.)
    base = x.astype(ans.dtype) if jnp.iscomplexobj(ans) and not jnp.iscomplexobj(x) else x
    nonneg = ((jnp.imag(y) == 0) & (jnp.real(y) >= 0)) if jnp.iscomplexobj(y) else y >= 0
    return g * jnp.where((x == 0) & nonneg, 0, ans * _log_base(base))


def _pow_vjp(g, ans, x, y):
    return unbroadcast(_pow_base_grad(g, x, y), x), unbroadcast(_pow_exponent_grad(g, ans, x, y), y)


def _pow_tensors(x, y):
    """`x ** y` of two tensors. A complex zero base gives what PyTorch's `exp(y log x)` gives: 0 for an exponent
    with a positive real part, inf + nan j for a negative one, NaN for an imaginary one (0 ** 0 too)."""
    out = _pow(x, y)
    if not jnp.iscomplexobj(out):
        return out
    r = jnp.real(y)
    at_zero = jnp.where(r > 0, 0, jnp.where(r < 0, jax.lax.complex(jnp.inf, jnp.nan),
                                            jax.lax.complex(jnp.nan, jnp.nan))).astype(out.dtype)
    return jnp.where(x == 0, at_zero, out)


pow = op("pow", _pow_tensors, _pow_vjp, saves=("x", "y", "ans"), node="PowBackward1")
pow_scalar = op("pow_scalar", _pow, _pow_scalar_vjp, saves=("x", "y"), node="PowBackward0", edges=(0,))
# NOTE: a number to the power of a tensor: d/dx y**x = y**x log y, with `pow`'s rules for the exponent.
rpow = op("rpow", lambda x, y: jnp.power(y, x),
          lambda g, ans, x, y: (unbroadcast(_pow_exponent_grad(g, ans, y, x), x), None),
          saves=("x", "y", "ans"), node="PowBackward2", edges=(0,))


def _atan2_vjp(g, ans, x, y):
    # PyTorch's rule: `g * y / (x² + y²)` and `-g * x / (x² + y²)`, with 0 where x = y = 0 (not 0/0).
    den = x * x + y * y
    recip = jnp.where(den == 0, 0, 1 / jnp.where(den == 0, 1, den))
    return unbroadcast(g * y * recip, x), unbroadcast(g * -x * recip, y)


atan2 = op("atan2", jnp.arctan2, _atan2_vjp, saves=("x", "y"))
fmod = op("fmod", jnp.fmod, node="FmodBackward1", scalar_edges=(1,), overload_nodes={(1,): "FmodBackward0"})
remainder = op("remainder", jnp.remainder, node="RemainderBackward1", scalar_edges=(1,),
               overload_nodes={(1,): "RemainderBackward0"})
# PyTorch's rules: `g * x / hypot` (0/0 is NaN at the origin, as in PyTorch), and for fmax/fmin a tie or a NaN
# on the other side sends the whole gradient to the first input.
hypot = op("hypot", jnp.hypot, lambda g, ans, x, y: (unbroadcast(true_divide(g * x, ans), x),
                                                     unbroadcast(true_divide(g * y, ans), y)),
           saves=("x", "y", "ans"))


def _fminmax_vjp(g, x, y, x_wins):
    return unbroadcast(jnp.where(x_wins, g, 0), x), unbroadcast(jnp.where(x_wins, 0, g), y)


fmax = op("fmax", jnp.fmax, lambda g, ans, x, y: _fminmax_vjp(g, x, y, (x >= y) | jnp.isnan(y)), saves=("x", "y"))
fmin = op("fmin", jnp.fmin, lambda g, ans, x, y: _fminmax_vjp(g, x, y, (x <= y) | jnp.isnan(y)), saves=("x", "y"))
floor_divide = op("floor_divide", jnp.floor_divide, differentiable=False)


def _div_rounded(x, y, mode):
    x, y = jax.lax.stop_gradient(x), jax.lax.stop_gradient(y)
    if mode == "floor":
        return jnp.floor_divide(x, y)
    if jnp.issubdtype(jnp.result_type(x, y), jnp.integer):
        x, y = jnp.broadcast_arrays(x, y)
        return jax.lax.div(x, y)  # (C's division truncates; exact for every int64)
    return jnp.trunc(true_divide(x, y))


# `div(x, y, rounding_mode=...)`: PyTorch's derivative is zero in both inputs (its node is DivBackward2).
div_rounded = op("div_rounded", _div_rounded,
                 lambda g, ans, x, y, mode: (unbroadcast(jnp.zeros_like(g), x), unbroadcast(jnp.zeros_like(g), y)),
                 node="DivBackward2")


# -- unary math --------------------------------------------------------------
neg = op("neg", jnp.negative, lambda g, ans, x: (-g,))
conj = op("conj", jnp.conj, lambda g, ans, x: (jnp.conj(g),), node="ConjBackward0")
exp = op("exp", jnp.exp, lambda g, ans, x: (g * ans,), saves=("ans",))
exp2 = op("exp2", jnp.exp2, lambda g, ans, x: (g * ans * jnp.log(2.0).astype(ans.dtype),), saves=("ans",))
expm1 = op("expm1", jnp.expm1, lambda g, ans, x: (g * (ans + 1),), saves=("ans",))
log = op("log", jnp.log, lambda g, ans, x: (true_divide(g, x),), saves=("x",))
log2 = op("log2", jnp.log2, lambda g, ans, x: (true_divide(g, x * jnp.log(2.0).astype(x.dtype)),), saves=("x",))
log10 = op("log10", jnp.log10, lambda g, ans, x: (true_divide(g, x * jnp.log(10.0).astype(x.dtype)),), saves=("x",))
log1p = op("log1p", jnp.log1p, lambda g, ans, x: (true_divide(g, 1 + x),), saves=("x",), node="Log1PBackward0")
sqrt = op("sqrt", jnp.sqrt, lambda g, ans, x: (true_divide(g, 2 * ans),), saves=("ans",))
rsqrt = op("rsqrt", jax.lax.rsqrt, lambda g, ans, x: (-0.5 * g * ans * ans * ans,), saves=("ans",))
reciprocal = op("reciprocal", jnp.reciprocal, lambda g, ans, x: (-g * ans * ans,), saves=("ans",))
square = op("square", jnp.square, lambda g, ans, x: (2 * g * _read_by_derivative(x),), saves=("x",), node="PowBackward0")
sin = op("sin", jnp.sin, lambda g, ans, x: (g * jnp.cos(x),), saves=("x",))
cos = op("cos", jnp.cos, lambda g, ans, x: (-g * jnp.sin(x),), saves=("x",))
tan = op("tan", jnp.tan, lambda g, ans, x: (g * (1 + ans * ans),), saves=("ans",))
tanh = op("tanh", jnp.tanh, lambda g, ans, x: (g * (1 - ans * ans),), saves=("ans",))
sigmoid = op("sigmoid", jax.nn.sigmoid, lambda g, ans, x: (g * ans * (1 - ans),), saves=("ans",))
# NOTE: PyTorch's masks say where no gradient passes (`ans <= 0`), so a NaN passes it, here and in the other
# piecewise functions (hardtanh, softshrink, threshold, elu, ...).
relu = op("relu", jax.nn.relu, lambda g, ans, x: (jnp.where(ans <= 0, 0, g),), saves=("ans",))
def conj_phase(x):
    """`conj(x) / |x|` (0 at 0): the derivative of `|x|` in JAX's convention (see `_op`), written out so that
    it has a derivative of its own (`jnp.sign`'s is zero); `sign(x)` for real `x`."""
    if not jnp.iscomplexobj(x):
        return _sign(x)
    a = jnp.abs(x)
    return jnp.conj(x) / jnp.where(a == 0, 1, a)


def _sign(x):
    """`(0 < x) - (x < 0)`, PyTorch's sign: 0 at NaN (and +0 at -0)."""
    if x.dtype == jnp.bool_:
        return x
    return ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)) if jnp.issubdtype(x.dtype, jnp.signedinteger) or \
        jnp.issubdtype(x.dtype, jnp.floating) else (x > 0).astype(x.dtype)


abs = op("abs", jnp.abs, lambda g, ans, x: (g * conj_phase(x),), saves=("x",))
asin = op("asin", jnp.arcsin)
acos = op("acos", jnp.arccos)
atan = op("atan", jnp.arctan, lambda g, ans, x: (true_divide(g, 1 + x * x),), saves=("x",))
sinh = op("sinh", jnp.sinh, lambda g, ans, x: (g * jnp.cosh(x),), saves=("x",))
cosh = op("cosh", jnp.cosh, lambda g, ans, x: (g * jnp.sinh(x),), saves=("x",))
asinh = op("asinh", jnp.arcsinh)
def _acosh_vjp(g, ans, x):
    # NOTE: PyTorch's derivatives. Real: 1 / sqrt(x^2 - 1), also where acosh itself is NaN (finite for x < -1;
    # JAX 0.11's own rule gives NaN there). Complex: 1 / (sqrt(z + 1) sqrt(z - 1)), the principal branch's
    # (1 / sqrt(z^2 - 1), JAX's rule, has the wrong sign where Re z < 0).
    if jnp.iscomplexobj(x):
        return (g * jax.lax.rsqrt(x + 1) * jax.lax.rsqrt(x - 1),)
    return (g * jax.lax.rsqrt(x * x - 1),)


acosh = op("acosh", jnp.arccosh, _acosh_vjp, saves=("x",))
atanh = op("atanh", jnp.arctanh)
erf = op("erf", jax.scipy.special.erf)
erfc = op("erfc", jax.scipy.special.erfc)
erfinv = op("erfinv", jax.scipy.special.erfinv)
# float32 lgamma is formed in float64 on CPU: XLA's float32 one is off by 5e-7 at its zeros (lgamma(1) = 0).
def digamma_fn(x):
    """digamma with PyTorch's values at the pole 0: -inf at +0, +inf at -0."""
    d = jax.scipy.special.digamma(x)
    return jnp.where(x == 0, jnp.copysign(jnp.inf, -x).astype(d.dtype), d)


lgamma = op("lgamma", lambda x: wide_unary(jax.scipy.special.gammaln, x),
            lambda g, ans, x: (g * digamma_fn(x),), saves=("x",))
# NOTE: the derivative at 0 is +inf (PyTorch's trigamma there), not NaN.
digamma = op("digamma", digamma_fn,
             lambda g, ans, x: (g * _trigamma(x),), saves=("x",))


def _trigamma(x):
    # PyTorch's values where digamma has no finite derivative: inf at the pole 0, 0 at +inf, NaN at -inf.
    t = jax.scipy.special.polygamma(1, x)
    return jnp.where(x == 0, jnp.inf, jnp.where(x == jnp.inf, 0, jnp.where(x == -jnp.inf, jnp.nan, t))).astype(t.dtype)
def _logit(x, eps=None):
    return jax.scipy.special.logit(x if eps is None else jnp.clip(x, eps, 1 - eps))


def _logit_vjp(g, ans, x, eps=None):
    # NOTE: PyTorch's derivative: NaN outside [0, 1] (not the formula's value there); with `eps`, 0 outside
    # [eps, 1 - eps] (a NaN input keeps a NaN gradient: the mask does not hold it).
    if eps is None:
        return (true_divide(g, jnp.where((x < 0) | (x > 1), jnp.nan, x * (1 - x))),)
    outside = (x < eps) | (x > 1 - eps)
    return (jnp.where(outside, 0, true_divide(g, jnp.where(outside, 1, x * (1 - x)))),)


logit = op("logit", _logit, _logit_vjp, saves=("x",))
# NOTE: the derivative of sign, floor, ceil, round and trunc is zero almost
# everywhere; PyTorch returns zeros rather than refusing, and so do we.
_zero_vjp = lambda g, ans, x, **kw: (jnp.zeros_like(g),)  # noqa: E731
sign = op("sign", lambda x: _sign(x), _zero_vjp)
floor = op("floor", jnp.floor, _zero_vjp)
ceil = op("ceil", jnp.ceil, _zero_vjp)
trunc = op("trunc", jnp.trunc, _zero_vjp)
round = op("round", lambda x, decimals=0: jnp.round(x, decimals), _zero_vjp)
frac = op("frac", lambda x: x - jnp.trunc(x), lambda g, ans, x: (g,))
# PyTorch's rule, a product with the mask (so that a non-finite tangent stays NaN in forward mode, as in PyTorch).
nan_to_num = op("nan_to_num", lambda x, nan=0.0, posinf=None, neginf=None: jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
                lambda g, ans, x, **kw: (g * jnp.isfinite(x).astype(g.dtype),), saves=("x",), opmath=False)

# -- complex numbers -----------------------------------------------------------
# VJPs in JAX's convention, the transpose of each map read as a real-linear one (`imag`'s is `-1j * g`); the
# tape turns them into PyTorch's (`imag`: `1j * g`). The views among them (real, imag, view_as_real,
# view_as_complex) write back through `shape.view_scatter`.
def _is_complex(dtype) -> bool:
    return jnp.issubdtype(dtype, jnp.complexfloating)


real = op("real", jnp.real, lambda g, ans, x: (g.astype(x.dtype),))
imag = op("imag", jnp.imag, lambda g, ans, x: (
    (-1j * g).astype(x.dtype) if _is_complex(x.dtype) else jnp.zeros(x.shape, x.dtype),))
view_as_real = op("view_as_real", lambda x: jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1),
                  lambda g, ans, x: ((g[..., 0] - 1j * g[..., 1]).astype(x.dtype) if _is_complex(x.dtype)
                                     else g[..., 0].astype(x.dtype),))
view_as_complex = op("view_as_complex", lambda x: jax.lax.complex(x[..., 0], x[..., 1]),
                     lambda g, ans, x: (jnp.stack([jnp.real(g), -jnp.imag(g)], axis=-1).astype(x.dtype),))
complex = op("complex", jax.lax.complex,
             lambda g, ans, x, y: (unbroadcast(jnp.real(g), x), unbroadcast(-jnp.imag(g), y)))
polar = op("polar", lambda r, theta: jax.lax.complex(r * jnp.cos(theta), r * jnp.sin(theta)))
# The angle of a real number is piecewise constant: PyTorch gives it no gradient, even at 0.
def _angle(x):
    if _is_complex(x.dtype):
        return jnp.angle(x)
    # (PyTorch's: pi below 0, else 0, so -0 has angle 0; NaN stays NaN. In x's own float dtype: JAX's angle of a
    # 0-d float32 is float64.)
    dt = x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.angle(x).dtype
    x = x.astype(dt)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, jnp.pi, 0).astype(dt))


angle = op("angle", _angle, lambda g, ans, x: (
    jax.vjp(jnp.angle, x)[1](g)[0] if _is_complex(x.dtype) else jnp.zeros(x.shape, x.dtype),), saves=("x",))


def _sgn(x):
    if not jnp.iscomplexobj(x):
        return _sign(x)
    a = jnp.abs(x)
    return jnp.where(a == 0, 0, x / jnp.where(a == 0, 1, a)).astype(x.dtype)


sgn = op("sgn", _sgn)

# -- clamp and select --------------------------------------------------------


def _clamp(x, lo, hi):
    if lo is not None:
        x = jnp.maximum(x, jnp.asarray(lo, x.dtype) if not hasattr(lo, "shape") else lo)
    if hi is not None:
        x = jnp.minimum(x, jnp.asarray(hi, x.dtype) if not hasattr(hi, "shape") else hi)
    return x


def _clamp_vjp(g, ans, x, lo, hi):
    # NOTE: the gradient passes where lo <= x <= hi (boundaries included), as in PyTorch.
    inside = jnp.ones(x.shape, bool)
    glo = ghi = None
    if lo is not None:
        inside = inside & (x >= lo)
        glo = unbroadcast(jnp.where(x < lo, g, 0), lo) if hasattr(lo, "shape") else None
    if hi is not None:
        inside = inside & (x <= hi)
        ghi = unbroadcast(jnp.where(x > hi, g, 0), hi) if hasattr(hi, "shape") else None
    return unbroadcast(jnp.where(inside, g, 0), x), glo, ghi


clamp = op("clamp", _clamp, _clamp_vjp, saves=("x", "lo", "hi"))
# The same with number bounds: PyTorch names that overload's node differently.
clamp_scalar = op("clamp_scalar", _clamp, _clamp_vjp, saves=("x", "lo", "hi"), node="ClampBackward1", edges=(0,))
# One tensor bound (`clamp_min(x, t)`, `clamp_max(x, t)`): PyTorch's nodes of those overloads link two inputs.
clamp_min_tensor = op("clamp_min_tensor", lambda x, lo: _clamp(x, lo, None),
                      lambda g, ans, x, lo: _clamp_vjp(g, ans, x, lo, None)[:2], saves=("x", "lo"),
                      node="ClampMinBackward1")
clamp_max_tensor = op("clamp_max_tensor", lambda x, hi: _clamp(x, None, hi),
                      lambda g, ans, x, hi: _clamp_vjp(g, ans, x, None, hi)[::2], saves=("x", "hi"),
                      node="ClampMaxBackward1")
# NOTE: one-sided clamps pass the gradient at the bound itself (x == lo), as two-sided clamp does.
clamp_min = op("clamp_min", lambda x, lo: jnp.maximum(x, jnp.asarray(lo, x.dtype)),
               lambda g, ans, x, lo: (jnp.where(x >= lo, g, 0), None), saves=("x", "lo"), node="ClampMinBackward0",
               scalar_edges=(1,))
clamp_max = op("clamp_max", lambda x, hi: jnp.minimum(x, jnp.asarray(hi, x.dtype)),
               lambda g, ans, x, hi: (jnp.where(x <= hi, g, 0), None), saves=("x", "hi"), node="ClampMaxBackward0",
               scalar_edges=(1,))


def _where_vjp(g, ans, cond, x, y):
    zero = jnp.zeros((), g.dtype)
    return None, unbroadcast(jnp.where(cond, g, zero), x), unbroadcast(jnp.where(cond, zero, g), y)


where = op("where", jnp.where, _where_vjp, saves=("cond",), node="WhereBackward0", edges=(1, 2))
masked_fill = op("masked_fill", lambda x, mask, value: jnp.where(mask, jnp.asarray(value, x.dtype), x),
                 lambda g, ans, x, mask, value: (
                     unbroadcast(jnp.where(mask, 0, g), x), None,
                     unbroadcast(jnp.sum(jnp.where(mask, g, 0)), value) if hasattr(value, "shape") else None),
                 saves=("mask", "value"), node="MaskedFillBackward1", edges=(0, 2), scalar_edges=(2,),
                 overload_nodes={(2,): "MaskedFillBackward0"})
lerp = op("lerp", lambda x, y, w: x + w * (y - x), node="LerpBackward1")
lerp_scalar = op("lerp_scalar", lambda x, y, weight: x + weight * (y - x),
                 lambda g, ans, x, y, weight: (unbroadcast(g * (1 - weight), x), unbroadcast(g * weight, y)),
                 node="LerpBackward0")


def _addcdiv_vjp(g, ans, x, t1, t2, value=1):
    return (unbroadcast(g, x), unbroadcast(g * true_divide(value, t2), t1),
            unbroadcast(-g * true_divide(value * t1, t2 * t2), t2))


# `input + value * t1 * t2` and `input + value * t1 / t2`, in the order PyTorch's kernels compute them.
addcmul = op("addcmul", lambda x, t1, t2, value=1: x + value * t1 * t2,
             lambda g, ans, x, t1, t2, value=1: (unbroadcast(g, x), unbroadcast(g * (t2 * value), t1),
                                                 unbroadcast(g * (t1 * value), t2)),
             saves=("t1", "t2"), saved_for={"t1": "t2", "t2": "t1"})
addcdiv = op("addcdiv", lambda x, t1, t2, value=1: x + true_divide(value * t1, t2), _addcdiv_vjp,
             saves=("t1", "t2"))

# -- casts and copies --------------------------------------------------------
to_dtype = op("to_dtype", lambda x, dtype: x.astype(dtype), lambda g, ans, x, dtype: (unbroadcast(g, x),),
              node="ToCopyBackward0")
to_device = op("to_device", lambda x, device: jax.device_put(x, device), node="ToCopyBackward0")
clone = op("clone", lambda x: x, lambda g, ans, x: (g,))

# -- non-differentiable ------------------------------------------------------
eq = op("eq", jnp.equal, differentiable=False)
ne = op("ne", jnp.not_equal, differentiable=False)
lt = op("lt", jnp.less, differentiable=False)
le = op("le", jnp.less_equal, differentiable=False)
gt = op("gt", jnp.greater, differentiable=False)
ge = op("ge", jnp.greater_equal, differentiable=False)
logical_and = op("logical_and", jnp.logical_and, differentiable=False)
logical_or = op("logical_or", jnp.logical_or, differentiable=False)
logical_xor = op("logical_xor", jnp.logical_xor, differentiable=False)
logical_not = op("logical_not", jnp.logical_not, differentiable=False)
bitwise_and = op("bitwise_and", jnp.bitwise_and, differentiable=False)
bitwise_or = op("bitwise_or", jnp.bitwise_or, differentiable=False)
bitwise_xor = op("bitwise_xor", jnp.bitwise_xor, differentiable=False)
bitwise_not = op("bitwise_not", jnp.invert, differentiable=False)
isnan = op("isnan", jnp.isnan, differentiable=False)
isinf = op("isinf", jnp.isinf, differentiable=False)
isfinite = op("isfinite", jnp.isfinite, differentiable=False)
isclose = op("isclose", lambda x, y, rtol=1e-5, atol=1e-8, equal_nan=False: jnp.isclose(x, y, rtol, atol, equal_nan), differentiable=False)
