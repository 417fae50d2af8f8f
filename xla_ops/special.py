"""Special functions and the rarer elementwise maths (`torch.special`, copysign, logaddexp, xlogy, Bessel, ...).

Where PyTorch's derivative differs from the chain rule at a point (`copysign` at 0, `sinc` at 0, `xlogy` where
`x == 0`), the VJP here is PyTorch's, and a NOTE says so.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from ._op import op, unbroadcast, wide_unary
from .elementwise import digamma_fn

__all__ = ["copysign", "heaviside", "logaddexp", "logaddexp2", "sinc", "xlogy", "xlog1py", "entr", "deg2rad",
           "rad2deg", "signbit", "isneginf", "isposinf", "i0", "i0e", "i1", "i1e", "gcd", "lcm", "polygamma",
           "mvlgamma", "igamma", "igammac", "nextafter", "frexp", "erfcx", "ndtr", "ndtri", "log_ndtr",
           "bitwise_left_shift", "bitwise_right_shift", "zeta", "ldexp"]


def _zero_at(cond, v):
    return jnp.where(cond, jnp.zeros((), v.dtype), v)


# NOTE: PyTorch's rule: the magnitude's gradient is `sign(result / x)`, 0 where x == 0; the sign source gets none.
copysign = op("copysign", jnp.copysign,
              lambda g, ans, x, y: (unbroadcast(g * _zero_at(x == 0, ans / jnp.where(x == 0, 1, x)), x),
                                    unbroadcast(jnp.zeros_like(g), y)),
              saves=("x", "y", "ans"), scalar_edges=(1,),
              overload_nodes={(1,): "CopysignBackward1"})
heaviside = op("heaviside", jnp.heaviside, differentiable=False)
logaddexp = op("logaddexp", jnp.logaddexp,
               lambda g, ans, x, y: (unbroadcast(g / (1 + jnp.exp(y - x)), x),
                                     unbroadcast(g / (1 + jnp.exp(x - y)), y)), saves=("x", "y"))
def _ldexp_vjp(g, ans, x, e):
    scale = jnp.exp2(e).astype(g.dtype)
    return unbroadcast(g * scale, x), unbroadcast(g * jnp.conj(x * scale * jnp.log(2.0).astype(e.dtype)), e)


# (x and e already in one floating dtype: tapeflow computes a half-precision ldexp in float32)
ldexp = op("ldexp", lambda x, e: x * jnp.exp2(e).astype(jnp.result_type(x, e)), _ldexp_vjp, saves=("x", "e"),
           saved_for={"x": "e", "e": "x"})
logaddexp2 = op("logaddexp2", jnp.logaddexp2,
                lambda g, ans, x, y: (unbroadcast(g / (1 + jnp.exp2(y - x)), x),
                                      unbroadcast(g / (1 + jnp.exp2(x - y)), y)), saves=("x", "y"))


def _sinc_vjp(g, ans, x):
    # NOTE: PyTorch's rule, written out: (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x == 0.
    # (also 0 where pi x^2 underflows, e.g. x = 1e-30 in float32, where the formula is 0 / 0)
    px = math.pi * x
    den = math.pi * x * x
    d = (px * jnp.cos(px) - jnp.sin(px)) / jnp.where(den == 0, 1, den)
    return (g * _zero_at(den == 0, d),)


def _sinc(x):
    """PyTorch's sinc: 1 at 0, else sin(pi x) / (pi x), so NaN at +-inf (JAX 0.11's `jnp.sinc` gives 0 there
    on a GPU)."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(jnp.result_type(x.dtype, 1.0))
    zero = x == 0
    px = math.pi * jnp.where(zero, 1, x)
    return jnp.where(zero, jnp.ones((), x.dtype), jnp.sin(px) / px)


sinc = op("sinc", _sinc, _sinc_vjp, saves=("x",))


def _xlogy(x, y):
    # 0 where x == 0, unless y is NaN (PyTorch's definition).
    dt = jnp.result_type(x, y)
    x, y = x.astype(dt), y.astype(dt)
    return jnp.where(jnp.isnan(y), jnp.nan, jnp.where(x == 0, 0, x * jnp.log(jnp.where(x == 0, 1, y))))


def _xlog1py(x, y):
    dt = jnp.result_type(x, y)
    x, y = x.astype(dt), y.astype(dt)
    return jnp.where(jnp.isnan(y), jnp.nan, jnp.where(x == 0, 0, x * jnp.log1p(jnp.where(x == 0, 0, y))))


def _log_factor(x, y, log, edge):
    """`log(y)` (`log1p`), but 0 where `x == 0` and `y <= edge` (`log` would be -inf or NaN there): PyTorch's
    derivative of `xlogy` (`xlog1py`) in its first argument, `xlogy(g, y)` masked there."""
    masked = (x == 0) & (y <= edge)
    return jnp.where(masked, 0, log(jnp.where(masked, edge + 1, y))).astype(jnp.result_type(x, y))


# NOTE: PyTorch's rules: the first argument's gradient is g * log(y) (log1p(y)), also where x == 0, except where
# x == 0 and log(y) is not finite (y <= 0; y <= -1), where it is 0.
xlogy = op("xlogy", _xlogy,
           lambda g, ans, x, y: (unbroadcast(g * _log_factor(x, y, jnp.log, 0.0), x),
                                 unbroadcast(g * x / y, y)), saves=("x", "y"), scalar_edges=(0, 1),
           overload_nodes={(0,): "XlogyBackward1", (1,): "XlogyBackward2"})
xlog1py = op("xlog1py", _xlog1py,
             lambda g, ans, x, y: (unbroadcast(g * _log_factor(x, y, jnp.log1p, -1.0), x),
                                   unbroadcast(g * x / (y + 1), y)), saves=("x", "y"),
             node="SpecialXlog1PyBackward0", scalar_edges=(0, 1),
             overload_nodes={(0,): "SpecialXlog1PyBackward1", (1,): "SpecialXlog1PyBackward2"})


def _entr(x):
    # -x log x for x > 0, 0 at 0, -inf below 0, NaN stays NaN
    inner = jnp.where(x > 0, -x * jnp.log(jnp.where(x > 0, x, 1)), jnp.where(x == 0, 0, -jnp.inf))
    return jnp.where(jnp.isnan(x), x, inner).astype(x.dtype)


entr = op("entr", _entr, lambda g, ans, x: (-g * (1 + jnp.log(x)),), saves=("x",), node="SpecialEntrBackward0")
deg2rad = op("deg2rad", lambda x: x * jnp.asarray(math.pi / 180, x.dtype),
             lambda g, ans, x: (g * jnp.asarray(math.pi / 180, g.dtype),), node="Deg2RadBackward0")
rad2deg = op("rad2deg", lambda x: x * jnp.asarray(180 / math.pi, x.dtype),
             lambda g, ans, x: (g * jnp.asarray(180 / math.pi, g.dtype),), node="Rad2DegBackward0")
signbit = op("signbit", jnp.signbit, differentiable=False)
isneginf = op("isneginf", jnp.isneginf, differentiable=False)
isposinf = op("isposinf", jnp.isposinf, differentiable=False)

# -- Bessel functions of the first kind -------------------------------------------------------------------------
i0 = op("i0", jsp.i0, lambda g, ans, x: (g * jsp.i1(x),), saves=("x",))
i0e = op("i0e", jsp.i0e, lambda g, ans, x: (g * (jsp.i1e(x) - jnp.sign(x) * ans),), saves=("x", "ans"),
         node="SpecialI0EBackward0")


def _i1_vjp(g, ans, x):
    # d/dx I1 = I0 - I1 / x, 1/2 at 0
    safe = jnp.where(x == 0, 1, x)
    return (g * jnp.where(x == 0, 0.5, jsp.i0(x) - ans / safe).astype(g.dtype),)


def _i1e_vjp(g, ans, x):
    # d/dx I1e = I0e - I1e (sign(x) + 1 / x), 1/2 at 0
    safe = jnp.where(x == 0, 1, x)
    return (g * jnp.where(x == 0, 0.5, jsp.i0e(x) - ans * (jnp.sign(x) + 1 / safe)).astype(g.dtype),)


i1 = op("i1", jsp.i1, _i1_vjp, saves=("x", "ans"), node="SpecialI1Backward0")
i1e = op("i1e", jsp.i1e, _i1e_vjp, saves=("x", "ans"), node="SpecialI1EBackward0")

# -- gamma family -------------------------------------------------------------------------------------------------
gcd = op("gcd", jnp.gcd, differentiable=False)
lcm = op("lcm", jnp.lcm, differentiable=False)
polygamma = op("polygamma", lambda x, n: jsp.polygamma(n, x),
               lambda g, ans, x, n: (g * jsp.polygamma(n + 1, x),), saves=("x",))


def _mvlgamma_args(x, p):
    # x + (-(p-1)/2, ..., -1/2, 0) in PyTorch's order (so -0 stays +0 in the last one: digamma(+0) = -inf)
    return x[..., None] + (jnp.arange(p, dtype=x.dtype) - (p - 1)) / 2


def _mvlgamma(x, p):
    return jnp.sum(jsp.gammaln(_mvlgamma_args(x, p)), axis=-1) + p * (p - 1) / 4 * math.log(math.pi)


mvlgamma = op("mvlgamma", _mvlgamma, lambda g, ans, x, p: (g * jnp.sum(digamma_fn(_mvlgamma_args(x, p)), -1),),
              saves=("x",))


def _igamma_x_grad(a, x):
    # d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a)
    return jnp.exp((a - 1) * jnp.log(x) - x - jsp.gammaln(a))


# As PyTorch, igamma / igammac are differentiable in `x` only: a gradient or tangent for `a` raises PyTorch's
# NotImplementedError (`no_derivative`) on every path; `a` enters through stop_gradient besides.
def _in_x(fn):
    return lambda a, x: fn(jax.lax.stop_gradient(a), x)


def _edges(fn, upper):
    """`fn` (gammainc or gammaincc) with PyTorch's values where JAX's differ: P(0, x > 0) = 1, P(inf, finite
    x > 0) = 0 (Q the complements) and NaN for P(inf, inf)."""
    def f(a, x):
        out = fn(a, x)
        ok = (a >= 0) & (x > 0)
        out = jnp.where(ok & (a == 0), jnp.asarray(0 if upper else 1, out.dtype), out)
        out = jnp.where(ok & jnp.isposinf(a) & jnp.isfinite(x), jnp.asarray(1 if upper else 0, out.dtype), out)
        return jnp.where(jnp.isposinf(a) & jnp.isposinf(x), jnp.asarray(jnp.nan, out.dtype), out)
    return f


igamma = op("igamma", _in_x(_edges(jsp.gammainc, False)), lambda g, ans, a, x: (
    unbroadcast(jnp.zeros_like(g), a), unbroadcast(g * _igamma_x_grad(a, x), x)), saves=("a", "x"),
    no_derivative={0: "igamma: input"})
igammac = op("igammac", _in_x(_edges(jsp.gammaincc, True)), lambda g, ans, a, x: (
    unbroadcast(jnp.zeros_like(g), a), unbroadcast(-g * _igamma_x_grad(a, x), x)), saves=("a", "x"),
    no_derivative={0: "igammac: input"})
def _nextafter(x, y):
    # PyTorch's derivative: 1 in `input` where it differs from `other` (0 where they are equal), 0 in `other`.
    # Written so that JAX's own differentiation of it agrees (`ans - x` is one ulp of x, exactly).
    ans = jnp.nextafter(jax.lax.stop_gradient(x), jax.lax.stop_gradient(y))
    return jnp.where(x != y, x + (ans - jax.lax.stop_gradient(x)), ans)


nextafter = op("nextafter", _nextafter, lambda g, ans, x, y: (unbroadcast(jnp.where(x != y, g, 0), x),
                                                              unbroadcast(jnp.zeros_like(g), y)), saves=("x", "y"),
              opmath=False)


_UINT = {2: jnp.uint16, 4: jnp.uint32, 8: jnp.uint64}


def _frexp(x):
    # Subnormal numbers from their bits: XLA's CPU arithmetic treats them as 0, so jnp.frexp gets them wrong
    # (PyTorch's are exact: frexp(1e-40) = 0.544 * 2**-132). The others keep jnp.frexp's differentiable form.
    info = jnp.finfo(x.dtype)
    width, mant = 8 * x.dtype.itemsize, info.nmant
    u = _UINT[x.dtype.itemsize]
    bits = jax.lax.bitcast_convert_type(x, u)
    field = (bits >> u(mant)) & u((1 << info.nexp) - 1)
    frac = bits & u((1 << mant) - 1)
    sub = (field == 0) & (frac != 0)
    top = (width - 1) - jax.lax.clz(frac).astype(jnp.int32)  # (the leading bit of a subnormal's fraction)
    frac = (frac << (mant - top).astype(u)) & u((1 << mant) - 1)
    # the sign, the fraction past its leading bit, and the exponent of 0.5
    normalised = (bits & u(1 << (width - 1))) | frac | u((-info.minexp) << mant)
    m, e = jnp.frexp(x)
    m = jnp.where(sub, jax.lax.bitcast_convert_type(normalised, x.dtype), m)
    return m, jnp.where(sub, top - mant + info.minexp + 1, e).astype(jnp.int32)


frexp = op("frexp", _frexp, lambda g, ans, x: (g[0] / jnp.exp2(ans[1].astype(g[0].dtype)),), saves=("ans",))
erfcx = op("erfcx", jsp.erfcx, lambda g, ans, x: (g * (2 * x * ans - 2 / math.sqrt(math.pi)),), saves=("x", "ans"),
           node="SpecialErfcxBackward0")
ndtr = op("ndtr", jsp.ndtr, lambda g, ans, x: (g * jnp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi),), saves=("x",),
          node="SpecialNdtrBackward0")
ndtri = op("ndtri", jsp.ndtri, lambda g, ans, x: (g * math.sqrt(2 * math.pi) * jnp.exp(0.5 * ans * ans),),
           saves=("ans",), node="SpecialNdtriBackward0")
# (float32 formed in float64 on CPU: XLA's float32 log_ndtr is off by ~20 units in the last place near x = 3)
log_ndtr = op("log_ndtr", lambda x: wide_unary(jsp.log_ndtr, x),
              lambda g, ans, x: (g * jnp.exp(-0.5 * x * x - ans) / math.sqrt(2 * math.pi),), saves=("x", "ans"),
              node="SpecialLogNdtrBackward0")
# NOTE: PyTorch differentiates the Hurwitz zeta function in `other` alone (d/dq zeta(x, q) = -x zeta(x + 1, q));
# its derivative in `input` is not implemented, and a backward that needs it raises.
zeta = op("zeta", jsp.zeta, lambda g, ans, x, q: (
    unbroadcast(jnp.zeros_like(g), x), unbroadcast(g * -x * jsp.zeta(x + 1, q), q)), saves=("x", "q"),
    node="SpecialZetaBackward0", scalar_edges=(0, 1),
    overload_nodes={(0,): "SpecialZetaBackward1", (1,): "SpecialZetaBackward2"}, no_derivative={0: "zeta"})
bitwise_left_shift = op("bitwise_left_shift", jnp.left_shift, differentiable=False)
bitwise_right_shift = op("bitwise_right_shift", jnp.right_shift, differentiable=False)
