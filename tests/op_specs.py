"""Sample inputs, static parameters and references for every op in `xla_ops.TABLE`.

`tests/test_op_table.py` walks this table: forward against the reference
(float64, plus float32 where it makes sense), the op's VJP against finite
differences and `jax.vjp`, the VJP of the VJP (`Op.grad_op`) against finite
differences, and a representative tapeflow call against the same numbers.
A test fails when an op of the table has no entry here, so a new op needs one.

Adding an entry (one call per op):

    spec("exp", [C(F((3, 4))), C(F(())), C(F((0, 3)))], np.exp,
         tf=lambda x: x.exp())

- `cases`: a list of `C(*args, **params)`. Array arguments are described by
  `F(shape, dom)` (float64 data from a domain below), `I(shape, high)` (int64
  indices in `[0, high)`), `B(shape)` (bools), `A(values)` (a literal array),
  `KEY` (a PRNG key); anything else (a Python number, `None`) is passed as is.
  `params` are the op's static parameters. The first case is the main one:
  it gets finite differences, second order and the tapeflow call. Add a
  broadcasting pair, a 0-d and an empty case where the op allows them. A case
  built with `C(..., grad=False)` is checked forward only (NaN inputs, say).
- `ref`: the NumPy reference, called with the NumPy arrays and the params as
  keywords; it returns one array or a tuple (one per op output). `None` when
  NumPy has no equivalent: then give `jax_ref` (a jnp function, same call)
  and say why in `why`.
- `diff=False` marks a non-differentiable op (must agree with the op's own
  flag). Ops whose first-order rule has kinks draw their data away from them
  (the domains below), so finite differences are meaningful.
- `tf`: the representative tapeflow call, given one Tensor per array argument
  of the main case (float ones require grad); it must compute what the op
  computes on the main case, unless `tf_ref` (a jnp function of the same
  arrays) says what it computes. `tf=None` needs `why`.
- `node`: the `grad_fn` name the tapeflow call must produce (default: the
  op's `node`); `""` skips the check (the call ends in another op).
- `second=False` skips second order (say why in `why`); `fd=False` skips
  finite differences (e.g. a float32 output); `f32=False` skips the float32
  forward; `rtol`/`atol` widen tolerances for float32 and finite differences.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
import scipy.special as sp

import tapeflow as tp

# -- value domains: f(rng, shape) -> float64 array ---------------------------------------------


def REAL(rng, s):
    return rng.uniform(-2.0, 2.0, s)


def POS(rng, s):
    return rng.uniform(0.5, 2.0, s)


def UNIT(rng, s):
    return rng.uniform(-0.9, 0.9, s)


def PROB(rng, s):
    return rng.uniform(0.1, 0.9, s)


def GT1(rng, s):
    return rng.uniform(1.2, 3.0, s)


def NOKINK(rng, s):
    """Away from 0, where abs, relu, sign and p-norms have kinks."""
    return rng.choice([-1.0, 1.0], s) * rng.uniform(0.2, 2.0, s)


def OFFGRID(rng, s):
    """Away from integers and half-integers (floor, round, frac, ...)."""
    return rng.integers(-2, 2, s) + rng.uniform(0.1, 0.4, s)


def INTS(rng, s):
    """Integer-valued floats: ties and zeros for comparisons and counting."""
    return rng.integers(-2, 3, s).astype(np.float64)


def NONFINITE(rng, s):
    x = rng.uniform(-2.0, 2.0, s)
    flat = x.reshape(-1)
    flat[: min(3, flat.size)] = [np.nan, np.inf, -np.inf][: min(3, flat.size)]
    return x


def away(lo, hi, *points, margin=0.05):
    """Uniform on [lo, hi], nudged at least `margin` away from `points` (clamp bounds, ...)."""
    def dom(rng, s):
        x = rng.uniform(lo, hi, s)
        for p in points:
            close = np.abs(x - p) < margin
            x = np.where(close, p + np.where(x >= p, margin, -margin), x)
        return x
    return dom


def SPD(rng, s):
    """Well-conditioned symmetric positive definite matrices (batched over leading dims)."""
    a = rng.uniform(-1.0, 1.0, s)
    return a @ np.swapaxes(a, -1, -2) / s[-1] + 2.0 * np.eye(s[-1])


def WELLCOND(rng, s):
    return rng.uniform(-0.5, 0.5, s) + 2.0 * np.eye(*s[-2:])


def _orthogonal(rng, batch, n):
    return np.linalg.qr(rng.standard_normal((*batch, n, n)))[0]


def SPREAD(rng, s):
    """Random singular vectors, singular values 1, 1.7, 2.4, ...: far apart, so U/V have stable gradients."""
    m, n = s[-2:]
    k = min(m, n)
    u, v = _orthogonal(rng, s[:-2], m)[..., :k], _orthogonal(rng, s[:-2], n)[..., :k]
    return (u * (1.0 + 0.7 * np.arange(k))) @ np.swapaxes(v, -1, -2)


def SYMSPREAD(rng, s):
    """Symmetric, random eigenvectors, eigenvalues -1.5, -0.8, -0.1, 0.6, ...: far apart."""
    q = _orthogonal(rng, s[:-2], s[-1])
    return (q * (-1.5 + 0.7 * np.arange(s[-1]))) @ np.swapaxes(q, -1, -2)


# -- argument descriptions ---------------------------------------------------------------------
@dataclass(frozen=True)
class F:
    """A float64 array argument drawn from `dom` (the spec's domain when None); `const`: not differentiated
    (an input PyTorch has no derivative for, whose gradient the op refuses)."""
    shape: tuple
    dom: Callable | None = None
    const: bool = False


@dataclass(frozen=True)
class I:  # noqa: E742
    """An int64 index array with values in [0, high)."""
    shape: tuple
    high: int


@dataclass(frozen=True)
class B:
    """A bool array."""
    shape: tuple


@dataclass(frozen=True)
class A:
    """A literal array (index arrays with duplicates, exact permutations, ...)."""
    values: Any
    dtype: Any = np.int64


class _Key:
    def __repr__(self):
        return "KEY"


KEY = _Key()


@dataclass
class C:
    """One call: positional arguments and static parameters."""
    args: tuple
    params: dict
    grad: bool = True

    def __init__(self, *args, grad: bool = True, **params):
        self.args, self.params, self.grad = args, params, grad


@dataclass
class Spec:
    name: str
    cases: list
    ref: Callable | None
    dom: Callable = REAL
    jax_ref: Callable | None = None
    diff: bool = True
    tf: Callable | None = None
    tf_ref: Callable | None = None
    node: str | None = None
    second: bool = True
    fd: bool = True
    f32: bool = True
    rtol: float = 1e-6
    atol: float = 1e-6
    why: str = ""
    extra: dict = field(default_factory=dict)


#: Every spec, by op name.
SPECS: dict[str, Spec] = {}


def spec(name, cases, ref, **kw) -> Spec:
    if name in SPECS:
        raise ValueError(f"op_specs: {name!r} has two entries")
    s = Spec(name, cases, ref, **kw)
    if s.ref is None and s.jax_ref is None and s.diff is not False and not s.why:
        raise ValueError(f"op_specs: {name!r} has no reference; give jax_ref and say why")
    if s.tf is None and not s.why:
        raise ValueError(f"op_specs: {name!r} has no tapeflow call; say why")
    SPECS[name] = s
    return s


def make_args(case: C, dom: Callable, rng: np.random.Generator) -> list:
    """The concrete arguments of a case (NumPy arrays, keys, Python values)."""
    out = []
    for a in case.args:
        if isinstance(a, F):
            out.append(np.asarray((a.dom or dom)(rng, a.shape), np.float64))
        elif isinstance(a, I):
            out.append(rng.integers(0, a.high, a.shape).astype(np.int64))
        elif isinstance(a, B):
            out.append(rng.random(a.shape) < 0.5)
        elif isinstance(a, A):
            out.append(np.asarray(a.values, a.dtype))
        elif a is KEY:
            out.append(np.asarray(jax.random.PRNGKey(int(rng.integers(0, 2**31)))))
        else:
            out.append(a)
    return out


# -- shorthands for the common shapes ------------------------------------------------------------
def unary(name, ref, dom=REAL, tf=None, **kw):
    tf = tf or (lambda x: getattr(tp, name)(x))
    return spec(name, [C(F((3, 4))), C(F(())), C(F((0, 3)))], ref, dom=dom, tf=tf, **kw)


def binary(name, ref, dom=REAL, dom2=None, tf=None, more=(), **kw):
    tf = tf or (lambda x, y: getattr(tp, name)(x, y))
    return spec(name, [C(F((3, 4)), F((3, 4), dom2)), C(F((3, 1)), F((4,), dom2)), C(F(()), F((2,), dom2)),
                       C(F((0, 1)), F((3,), dom2)), *more], ref, dom=dom, tf=tf, **kw)


def _np_erfinv(x):
    return sp.erfinv(x)


# == elementwise =================================================================================
binary("add", lambda x, y, alpha=1: x + alpha * y, tf=lambda x, y: x + y, more=[C(F((3, 4)), F((4,)), alpha=2.5)])
binary("sub", lambda x, y, alpha=1: x - alpha * y, tf=lambda x, y: x - y, more=[C(F((3, 4)), F((4,)), alpha=-1.5)])
binary("rsub", lambda x, y: y - x, tf=lambda x, y: tp.rsub(x, y))
binary("mul", np.multiply, tf=lambda x, y: x * y)
binary("div", np.divide, dom2=NOKINK, tf=lambda x, y: x / y)
binary("maximum", np.maximum, tf=lambda x, y: tp.maximum(x, y))
binary("minimum", np.minimum, tf=lambda x, y: tp.minimum(x, y))
binary("pow", np.power, dom=POS, tf=lambda x, y: x ** y)
spec("pow_scalar", [C(F((3, 4)), 3.0), C(F((3, 4)), 0.5), C(F(()), 2.5), C(F((0, 2)), 3.0)], np.power,
     dom=POS, tf=lambda x: x ** 3.0)
spec("rpow", [C(F((3, 4)), 2.0), C(F(()), 0.5)], lambda x, y: np.power(y, x), tf=lambda x: 2.0 ** x)
binary("atan2", np.arctan2, dom=NOKINK, dom2=NOKINK, tf=lambda x, y: tp.atan2(x, y))
binary("fmod", np.fmod, dom=lambda r, s: r.uniform(2.1, 2.4, s) * r.choice([-1, 1], s), dom2=away(1.3, 1.9),
       tf=lambda x, y: tp.fmod(x, y))
binary("remainder", np.remainder, dom=lambda r, s: r.uniform(2.1, 2.4, s) * r.choice([-1, 1], s),
       dom2=lambda r, s: r.uniform(1.3, 1.45, s), tf=lambda x, y: x % y)
binary("hypot", np.hypot, dom=NOKINK, dom2=NOKINK, tf=lambda x, y: tp.hypot(x, y))
binary("fmax", np.fmax, tf=lambda x, y: tp.fmax(x, y))
binary("fmin", np.fmin, tf=lambda x, y: tp.fmin(x, y))
spec("floor_divide", [C(F((3, 4)), F((4,), NOKINK)), C(A([[7, -7, 3]]), A([2, 2, -2]))], np.floor_divide,
     diff=False, tf=lambda x, y: x // y)
spec("div_rounded", [C(F((3, 4)), F((4,), NOKINK), mode="floor"), C(F((3, 4)), F((3, 4), NOKINK), mode="trunc"),
                     C(A([[7, -7, 3]]), A([2, 2, -2]), mode="trunc", grad=False),
                     C(A([[2**62 + 1, -(2**62) - 1]]), A([3, 3]), mode="trunc", grad=False)],
     lambda x, y, mode: np.floor_divide(x, y) if mode == "floor" else
     (np.trunc(x / y) if x.dtype.kind == "f" else np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))),
     tf=lambda x, y: tp.div(x, y, rounding_mode="floor"), fd=False,
     why="PyTorch defines the derivative as zero in both inputs")

unary("neg", np.negative, tf=lambda x: -x)
spec("conj", [C(F((3, 4))), C(F(()))], np.conj, why="real inputs here; tp.conj returns a real tensor itself "
     "(as PyTorch) and tests/test_tensor.py checks complex values and gradients against PyTorch")
# Complex numbers: real inputs here (values and real-linear VJPs against finite differences); complex inputs,
# complex outputs and PyTorch's conjugate convention are checked op by op in tests/test_complex_autograd.py.
_CPLX = "complex inputs and outputs: tests/test_complex_autograd.py checks them against PyTorch and gradcheck"
spec("real", [C(F((3, 4))), C(F(()))], np.real, tf=lambda x: tp.real(x), node="", why=_CPLX)
spec("imag", [C(F((3, 4))), C(F(()))], np.imag, tf=None, why=_CPLX + "; tp.imag refuses real tensors, as PyTorch")
spec("view_as_real", [C(F((3, 4))), C(F(()))], lambda x: np.stack([x, np.zeros_like(x)], -1), tf=None, why=_CPLX)
spec("view_as_complex", [C(F((3, 2)))], lambda x: x[..., 0] + 1j * x[..., 1], tf=None, fd=False, second=False,
     f32=False, why=_CPLX)
spec("complex", [C(F((3, 4)), F((3, 4)))], lambda x, y: x + 1j * y, tf=None, fd=False, second=False, f32=False,
     why=_CPLX)
spec("polar", [C(F((3, 4), POS), F((3, 4)))], lambda r, t: r * np.exp(1j * t), tf=None, fd=False, second=False,
     f32=False, why=_CPLX)
unary("angle", np.angle, NOKINK, why=_CPLX)
unary("sgn", np.sign, NOKINK, why=_CPLX)
unary("exp", np.exp)
unary("exp2", np.exp2)
unary("expm1", np.expm1)
unary("log", np.log, POS)
unary("log2", np.log2, POS)
unary("log10", np.log10, POS)
unary("log1p", np.log1p, POS)
unary("sqrt", np.sqrt, POS)
unary("rsqrt", lambda x: 1 / np.sqrt(x), POS)
unary("reciprocal", np.reciprocal, NOKINK)
unary("square", np.square, tf=lambda x: x ** 2)
unary("sin", np.sin)
unary("cos", np.cos)
unary("tan", np.tan, UNIT)
unary("tanh", np.tanh)
unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)))
unary("relu", lambda x: np.maximum(x, 0), NOKINK)
unary("abs", np.abs, NOKINK, tf=lambda x: abs(x))
unary("asin", np.arcsin, UNIT)
unary("acos", np.arccos, UNIT)
unary("atan", np.arctan)
unary("sinh", np.sinh)
unary("cosh", np.cosh)
unary("asinh", np.arcsinh)
unary("acosh", np.arccosh, GT1)
unary("atanh", np.arctanh, UNIT)
unary("erf", np.vectorize(math.erf, otypes=[np.float64]))
unary("erfc", np.vectorize(math.erfc, otypes=[np.float64]))
unary("erfinv", _np_erfinv, UNIT, rtol=1e-5)
unary("lgamma", np.vectorize(math.lgamma, otypes=[np.float64]), POS)
unary("digamma", sp.digamma, POS)
spec("logit", [C(F((3, 4))), C(F(())), C(F((0, 3))), C(F((3, 4)), eps=0.05)],
     lambda x, eps=None: sp.logit(x if eps is None else np.clip(x, eps, 1 - eps)), dom=PROB,
     tf=lambda x: tp.logit(x))  # (eps below the domain's 0.1: the clamp's kinks stay out of the finite differences)
unary("sign", np.sign, NOKINK)
unary("floor", np.floor, OFFGRID)
unary("ceil", np.ceil, OFFGRID)
unary("trunc", np.trunc, OFFGRID)
spec("round", [C(F((3, 4))), C(F(())), C(F((0, 3))), C(F((3, 4), REAL), decimals=2)],
     lambda x, decimals=0: np.round(x, decimals), dom=OFFGRID, tf=lambda x: x.round())
unary("frac", lambda x: x - np.trunc(x), OFFGRID)
spec("nan_to_num", [C(F((3, 4)), nan=0.0, posinf=None, neginf=None),
                    C(F((3, 4), NONFINITE), nan=1.5, posinf=9.0, neginf=-9.0, grad=False),
                    C(F((2,), NONFINITE), nan=0.0, posinf=None, neginf=None, grad=False)],
     lambda x, nan=0.0, posinf=None, neginf=None: np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf),
     tf=lambda x: tp.nan_to_num(x))


def _np_clamp(x, lo, hi):
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return x


spec("clamp", [C(F((3, 4)), -0.5, 0.5), C(F((3, 4)), F((4,), away(-1.5, -0.3)), F((3, 1), away(0.3, 1.5))),
               C(F((3, 4)), None, 0.5), C(F((3, 4)), F(()), None), C(F(()), -0.5, 0.5), C(F((0, 2)), -0.5, 0.5)],
     _np_clamp, dom=away(-2, 2, -0.5, 0.5), tf=lambda x: x.clamp(-0.5, 0.5), node="ClampBackward1")
spec("clamp_min", [C(F((3, 4)), 0.1), C(F(()), -0.5), C(F((0, 2)), 0.0)],
     lambda x, lo: np.maximum(x, lo), dom=away(-2, 2, 0.1, -0.5, 0.0), tf=lambda x: x.clamp_min(0.1))
spec("clamp_max", [C(F((3, 4)), 0.1), C(F(()), -0.5), C(F((0, 2)), 0.0)],
     lambda x, hi: np.minimum(x, hi), dom=away(-2, 2, 0.1, -0.5, 0.0), tf=lambda x: x.clamp_max(0.1))
spec("clamp_min_tensor", [C(F((3, 4)), F((4,), away(-1.5, -0.3))), C(F(()), F((2, 3))), C(F((0, 2)), F(()))],
     np.maximum, tf=lambda x, lo: x.clamp_min(lo))
spec("clamp_max_tensor", [C(F((3, 4)), F((3, 1), away(0.3, 1.5))), C(F(()), F((2, 3))), C(F((0, 2)), F(()))],
     np.minimum, tf=lambda x, hi: x.clamp_max(hi))
spec("clamp_scalar", [C(F((3, 4)), -0.5, 0.5), C(F((3, 4)), None, 0.5), C(F(()), -0.5, None)],
     _np_clamp, dom=away(-2, 2, -0.5, 0.5), tf=lambda x: x.clamp(-0.5, 0.5))
spec("where", [C(B((3, 4)), F((3, 4)), F((3, 4))), C(B((3, 1)), F((4,)), F(())), C(B(()), F((2,)), F((2,))),
               C(B((0, 2)), F((2,)), F(()))],
     np.where, tf=lambda c, x, y: tp.where(c, x, y))
spec("masked_fill", [C(F((3, 4)), B((3, 4)), 0.5), C(F((3, 4)), B((4,)), F(())), C(F(()), B(()), -1.0),
                     C(F((0, 2)), B((2,)), 1.0)],
     lambda x, mask, value: np.where(mask, value, x), tf=lambda x, m: x.masked_fill(m, 0.5),
     node="MaskedFillBackward0")  # (a number as the value: PyTorch's Scalar overload)
spec("lerp", [C(F((3, 4)), F((3, 4)), F((3, 4))), C(F((3, 1)), F((4,)), F(())), C(F(()), F(()), F(()))],
     lambda x, y, w: x + w * (y - x), tf=lambda x, y, w: tp.lerp(x, y, w), node="LerpBackward1")
spec("lerp_scalar", [C(F((3, 4)), F((3, 4)), weight=0.3), C(F((3, 1)), F((4,)), weight=-1.5), C(F(()), F(()), weight=2.0)],
     lambda x, y, weight: x + weight * (y - x), tf=lambda x, y: tp.lerp(x, y, 0.3))
spec("to_dtype", [C(F((3, 4)), dtype=jnp.float32), C(F(()), dtype=jnp.float32), C(F((3, 4)), dtype=jnp.float64),
                  C(F((2, 3)), dtype=jnp.int32)],
     lambda x, dtype: x.astype(dtype), tf=lambda x: x.float(), fd=False, second=False,
     why="the main case casts to float32, where finite differences are noise; checked against jax.vjp")
spec("to_device", [C(F((3, 4)), device=jax.devices()[0])], lambda x, device: x,
     tf=None, why="single-device machine: Tensor.to() never moves data, so no tapeflow call reaches this op")
unary("clone", lambda x: x.copy(), tf=lambda x: x.clone())
spec("isclose", [C(F((3, 4), INTS), F((3, 4), INTS)), C(F((3, 1)), F((4,)), rtol=0.5, atol=0.1, equal_nan=False)],
     lambda x, y, rtol=1e-5, atol=1e-8, equal_nan=False: np.isclose(x, y, rtol, atol, equal_nan),
     diff=False, tf=lambda x, y: tp.isclose(x, y))

for _n, _f in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
               ("gt", np.greater), ("ge", np.greater_equal)]:
    binary(_n, _f, dom=INTS, dom2=INTS, diff=False, tf=(lambda n: lambda x, y: getattr(tp, n)(x, y))(_n))
for _n, _f in [("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)]:
    spec(_n, [C(B((3, 4)), B((3, 4))), C(B((3, 1)), B((4,))), C(F((3,), INTS), F((3,), INTS))], _f, diff=False,
         tf=(lambda n: lambda x, y: getattr(tp, n)(x, y))(_n))
spec("logical_not", [C(B((3, 4))), C(F((3,), INTS))], np.logical_not, diff=False, tf=lambda x: ~x)
for _n, _f in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)]:
    spec(_n, [C(I((3, 4), 16), I((3, 4), 16)), C(I((3, 1), 16), I((4,), 16)), C(B((3,)), B((3,)))], _f,
         diff=False, tf=(lambda n: lambda x, y: getattr(tp, n)(x, y))(_n))
spec("bitwise_not", [C(I((3, 4), 16)), C(B((3,)))], np.invert, diff=False, tf=lambda x: ~x)
for _n, _f in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    spec(_n, [C(F((3, 4), NONFINITE)), C(F(())), C(F((0, 2)))], _f, diff=False,
         tf=(lambda n: lambda x: getattr(tp, n)(x))(_n))


# == reductions ====================================================================================
def _np_keep(f):
    return lambda x, dim=None, keepdim=False, **kw: f(x, axis=dim, keepdims=keepdim)


spec("sum", [C(F((3, 4))), C(F(())), C(F((0, 3)))], lambda x, dtype=None: np.sum(x), tf=lambda x: x.sum())
spec("sum_dim", [C(F((3, 4)), dim=(1,)), C(F((2, 3, 4)), dim=(0, 2), keepdim=True), C(F((0, 3)), dim=(0,)),
                 C(F((3, 0)), dim=(1,), keepdim=True)],
     _np_keep(np.sum), tf=lambda x: x.sum(1))
spec("mean", [C(F((3, 4))), C(F(()))], lambda x, dtype=None: np.mean(x), tf=lambda x: x.mean())
spec("mean_dim", [C(F((3, 4)), dim=(1,)), C(F((2, 3, 4)), dim=(0, 2), keepdim=True), C(F((0, 3)), dim=(1,))],
     _np_keep(np.mean), tf=lambda x: x.mean(1))
spec("nansum", [C(F((3, 4))), C(F((3, 4)), dim=(1,), keepdim=True), C(F(())),
                C(F((3, 4), lambda r, s: np.where(r.random(s) < 0.3, np.nan, r.uniform(-2, 2, s))), dim=(0,),
                  grad=False)],
     _np_keep(np.nansum), tf=lambda x: x.nansum())
spec("prod", [C(F((3, 4))), C(F(())), C(F((0, 3))), C(A([[0.0, 2.0, 3.0], [1.5, 4.0, 1.0]], np.float64))],
     np.prod, dom=NOKINK, tf=lambda x: x.prod())
spec("prod_dim", [C(F((3, 4)), dim=(1,), keepdim=True), C(F((3, 4)), dim=(0,)), C(F((0, 3)), dim=(1,)),
                  C(A([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]], np.float64), dim=(1,))],
     _np_keep(np.prod), dom=NOKINK, tf=lambda x: x.prod(1, keepdim=True))


def _np_var(f):
    return lambda x, dim=None, correction=1, keepdim=False: f(x, axis=dim, ddof=correction, keepdims=keepdim)


spec("var", [C(F((3, 4))), C(F((3, 4)), dim=(1,), correction=0, keepdim=True), C(F((5,)), dim=(0,), correction=2)],
     _np_var(np.var), tf=lambda x: x.var())
spec("std", [C(F((3, 4))), C(F((3, 4)), dim=(1,), correction=0, keepdim=True), C(F((5,)), dim=(0,), correction=2)],
     _np_var(np.std), tf=lambda x: x.std())
spec("var_mean", [C(F((3, 4))), C(F((3, 4)), dim=(1,), correction=0, keepdim=True), C(F((5,)), dim=(0,), correction=2)],
     lambda x, dim=None, correction=1, keepdim=False: (_np_var(np.var)(x, dim, correction, keepdim),
                                                       np.mean(x, axis=dim, keepdims=keepdim)),
     tf=lambda x: tp.var_mean(x))
spec("std_mean", [C(F((3, 4))), C(F((3, 4)), dim=(1,), correction=0, keepdim=True), C(F((5,)), dim=(0,), correction=2)],
     lambda x, dim=None, correction=1, keepdim=False: (_np_var(np.std)(x, dim, correction, keepdim),
                                                       np.mean(x, axis=dim, keepdims=keepdim)),
     tf=lambda x: tp.std_mean(x))

_TIES = A([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 0.5], [-1.0, -4.0, -1.0, -4.0]], np.float64)
spec("amax", [C(F((3, 4)), dim=(1,)), C(F((2, 3, 4)), dim=(0, 2), keepdim=True), C(F(())), C(_TIES, dim=(1,)),
              C(_TIES)], _np_keep(np.max), tf=lambda x: x.amax(1))
spec("amin", [C(F((3, 4)), dim=(1,)), C(F((2, 3, 4)), dim=(0, 2), keepdim=True), C(F(())), C(_TIES, dim=(1,)),
              C(_TIES)], _np_keep(np.min), tf=lambda x: x.amin(1))
spec("max", [C(F((3, 4))), C(F(())), C(_TIES)], np.max, tf=lambda x: x.max())
spec("min", [C(F((3, 4))), C(F(())), C(_TIES)], np.min, tf=lambda x: x.min())
spec("max_dim", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0, keepdim=True), C(F((2, 0)), dim=0)],
     lambda x, dim, keepdim=False: (np.max(x, dim, keepdims=keepdim), np.argmax(x, dim, keepdims=keepdim)),
     tf=lambda x: x.max(1))
spec("min_dim", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0, keepdim=True), C(F((2, 0)), dim=0)],
     lambda x, dim, keepdim=False: (np.min(x, dim, keepdims=keepdim), np.argmin(x, dim, keepdims=keepdim)),
     tf=lambda x: x.min(1))
spec("argmax", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0, keepdim=True), C(F((3, 4))), C(_TIES, dim=1)],
     lambda x, dim=None, keepdim=False: np.argmax(x, dim, keepdims=keepdim), diff=False, tf=lambda x: x.argmax(1))
spec("argmin", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0, keepdim=True), C(F((3, 4))), C(_TIES, dim=1)],
     lambda x, dim=None, keepdim=False: np.argmin(x, dim, keepdims=keepdim), diff=False, tf=lambda x: x.argmin(1))
spec("all", [C(B((3, 4))), C(B((3, 4)), dim=(1,), keepdim=True), C(F((3,), INTS)), C(B((0,)))],
     _np_keep(np.all), diff=False, tf=lambda x: x.all())
spec("any", [C(B((3, 4))), C(B((3, 4)), dim=(1,), keepdim=True), C(F((3,), INTS)), C(B((0,)))],
     _np_keep(np.any), diff=False, tf=lambda x: x.any())
spec("nonzero_static", [C(F((3, 4), INTS), size=20, fill_value=-1), C(F((3, 4), INTS), size=2, fill_value=5),
                        C(F((5,), INTS), size=7, fill_value=-1)],
     lambda x, size, fill_value: _np_nonzero_static(x, size, fill_value), diff=False,
     tf=lambda x: tp.nonzero_static(x, size=20, fill_value=-1))


def _np_nonzero_static(x, size, fill_value):
    rows = np.argwhere(x)[:size]
    return np.concatenate([rows, np.full((size - len(rows), x.ndim), fill_value)]).astype(np.int64)


spec("count_nonzero", [C(F((3, 4), INTS)), C(F((3, 4), INTS), dim=(1,))],
     lambda x, dim=None: np.count_nonzero(x, axis=dim), diff=False, tf=lambda x: tp.count_nonzero(x))


def _np_logsumexp(x, dim, keepdim=False):
    m = np.max(x, axis=dim, keepdims=True) if x.size else 0.0
    return np.log(np.sum(np.exp(x - m), axis=dim, keepdims=keepdim)) + (m if keepdim else np.squeeze(m, dim)
                                                                          if x.size else 0.0)


spec("logsumexp", [C(F((3, 4)), dim=(1,)), C(F((2, 3, 4)), dim=(0, 2), keepdim=True), C(F((0, 3)), dim=(1,))],
     _np_logsumexp, tf=lambda x: x.logsumexp(1))


def _np_norm(x, p=2.0, dim=None, keepdim=False):
    a = np.abs(x)
    if p == np.inf:
        return np.max(a, axis=dim, keepdims=keepdim)
    if p == -np.inf:
        return np.min(a, axis=dim, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    return np.sum(a ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


spec("norm", [C(F((3, 4)), p=2.0), C(F((3, 4)), p=1.0, dim=(1,)), C(F((3, 4)), p=np.inf, dim=(1,), keepdim=True),
              C(F((3, 4)), p=3.0, dim=(0,)), C(F((3, 4)), p=-np.inf), C(F((3, 4)), p=0.0), C(F(()), p=2.0),
              C(F((0, 3)), p=2.0, dim=(1,)), C(F((3, 4)), p=0.5, dim=(1,))],
     _np_norm, dom=NOKINK, tf=lambda x: x.norm(), node="")
spec("cumsum", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0), C(F((0, 3)), dim=1)],
     lambda x, dim: np.cumsum(x, axis=dim), tf=lambda x: x.cumsum(1))
spec("cumprod", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0), C(F((0, 3)), dim=1),
                 C(A([[1.5, 0.0, 2.0, -1.0], [0.0, 2.0, 0.0, 3.0]], np.float64), dim=1)],
     lambda x, dim: np.cumprod(x, axis=dim), dom=NOKINK, tf=lambda x: x.cumprod(1))
def _np_cum_extreme(x, dim, largest):
    val = (np.maximum if largest else np.minimum).accumulate(x, axis=dim)
    iota = np.moveaxis(np.broadcast_to(np.arange(x.shape[dim]), np.moveaxis(x, dim, -1).shape), -1, dim)
    return val, np.maximum.accumulate(np.where(x == val, iota, -1), axis=dim).astype(np.int64)


spec("cummax", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0), C(A([[1.0, 3.0, 3.0, 2.0, 5.0]], np.float64), dim=1, grad=False)],
     lambda x, dim: _np_cum_extreme(x, dim, True), tf=lambda x: tp.cummax(x, 1))
spec("cummin", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0), C(A([[4.0, 1.0, 2.0, 1.0, 0.5]], np.float64), dim=1, grad=False)],
     lambda x, dim: _np_cum_extreme(x, dim, False), tf=lambda x: x.cummin(1))
spec("logcumsumexp", [C(F((3, 4)), dim=1), C(F((3, 4)), dim=0), C(F((0, 3)), dim=1)],
     lambda x, dim: np.logaddexp.accumulate(x, axis=dim), tf=lambda x: x.logcumsumexp(1))


def _np_softmax(x, dim):
    e = np.exp(x - np.max(x, axis=dim, keepdims=True)) if x.size else x
    return e / np.sum(e, axis=dim, keepdims=True)


spec("softmax", [C(F((3, 4)), dim=1), C(F((2, 3, 4)), dim=0), C(F((0, 3)), dim=1)], _np_softmax,
     tf=lambda x: x.softmax(1))
spec("log_softmax", [C(F((3, 4)), dim=1), C(F((2, 3, 4)), dim=0), C(F((0, 3)), dim=1)],
     lambda x, dim: np.log(_np_softmax(x, dim)), tf=lambda x: x.log_softmax(1))


# == shapes and views ===============================================================================
_S = ("s", None, None, None)  # the encoding of `:`


def _np_basic_index(x, index):
    return x[tuple(slice(*i[1:]) if type(i) is tuple else i for i in index)]


spec("reshape", [C(F((3, 4)), shape=(4, 3)), C(F(()), shape=(1, 1)), C(F((0, 3)), shape=(3, 0))],
     lambda x, shape: np.reshape(x, shape), tf=lambda x: x.reshape(4, 3))
spec("permute", [C(F((2, 3, 4)), dims=(2, 0, 1)), C(F(()), dims=())], lambda x, dims: np.transpose(x, dims),
     tf=lambda x: x.permute(2, 0, 1))
spec("transpose", [C(F((2, 3, 4)), dim0=0, dim1=2), C(F((0, 3)), dim0=1, dim1=0)],
     lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1), tf=lambda x: x.transpose(0, 2))
spec("t", [C(F((3, 4))), C(F((3,))), C(F(()))], lambda x: x.T if x.ndim == 2 else x, tf=lambda x: x.t())
spec("expand", [C(F((3, 1)), shape=(2, 3, 4)), C(F(()), shape=(2,)), C(F((1, 3)), shape=(0, 3))],
     lambda x, shape: np.broadcast_to(x, shape), tf=lambda x: x.expand(2, 3, 4))
spec("squeeze", [C(F((3, 1, 4)), dim=(1,)), C(F((1, 3, 1))), C(F((1,)), dim=(0,))],
     lambda x, dim=None: np.squeeze(x, dim), tf=lambda x: x.squeeze(1))
spec("unsqueeze", [C(F((3, 4)), dim=1), C(F(()), dim=0)], lambda x, dim: np.expand_dims(x, dim),
     tf=lambda x: x.unsqueeze(1))
spec("select", [C(F((3, 4)), dim=1, index=2), C(F((3,)), dim=0, index=0)],
     lambda x, dim, index: np.take(x, index, axis=dim), tf=lambda x: x.select(1, 2))
spec("slice", [C(F((3, 5)), dim=1, start=1, stop=3, step=1), C(F((3, 5)), dim=1, start=0, stop=5, step=2),
               C(F((3, 5)), dim=0, start=2, stop=2, step=1)],
     lambda x, dim, start, stop, step=1: x[(slice(None),) * dim + (slice(start, stop, step),)],
     tf=lambda x: x.narrow(1, 1, 2))
spec("index_basic", [C(F((3, 4, 2)), index=(("s", 1, None, None), None, 2)),
                     C(F((3, 4)), index=(Ellipsis, ("s", None, None, 2))), C(F(()), index=(None,))],
     _np_basic_index, tf=lambda x: x[1:, None, 2])
spec("diagonal", [C(F((3, 4)), offset=1), C(F((2, 3, 3)), offset=0, dim1=1, dim2=2), C(F((3, 4)), offset=-1)],
     lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2), tf=lambda x: x.diagonal(1))
spec("alias", [C(F((3, 4))), C(F(()))], lambda x: x, tf=lambda x: x.squeeze(0),
     node="SqueezeBackward1")  # (squeeze(dim) of a dimension that is not 1: PyTorch names the overload called)
spec("detach", [C(F((3, 4))), C(F(()))], lambda x: x, diff=False, tf=lambda x: x.detach().clone(),
     tf_ref=lambda x: x)
spec("view_dtype", [C(F((3, 4)), dtype="int64", src="float64"), C(F((3, 4)), dtype="float32", src="float64"),
                    C(F((2,)), dtype="uint8", src="float64"), C(F(()), dtype="int64", src="float64")],
     lambda x, dtype, src: x.view(dtype), diff=False, f32=False, tf=lambda x: x.view(tp.int64))
spec("split", [C(F((2, 5)), sizes=(2, 3), dim=1), C(F((4,)), sizes=(1, 3, 0), dim=0)],
     lambda x, sizes, dim: tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim)), tf=lambda x: x.split([2, 3], 1))
spec("split_even", [C(F((2, 5)), sizes=(2, 2, 1), dim=1), C(F((6,)), sizes=(3, 3), dim=0)],
     lambda x, sizes, dim: tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim)), tf=lambda x: x.split(2, 1))
spec("unbind", [C(F((3, 2)), dim=0), C(F((2, 3)), dim=1)], lambda x, dim=0: tuple(np.moveaxis(x, dim, 0)),
     tf=lambda x: x.unbind(0))


def _np_apply_chain(x, chain):
    for name, params, i in chain:
        p = dict(params)
        if name == "t":
            x = x.T
        elif name == "select":
            x = np.take(x, p["index"], axis=p["dim"])
        elif name == "permute":
            x = np.transpose(x, p["dims"])
        else:
            raise KeyError(name)
        if i is not None:
            x = x[i]
    return x


def _np_view_scatter(base, new, chain):
    iota = np.arange(base.size).reshape(base.shape)
    where = _np_apply_chain(iota, chain)
    out = base.copy().reshape(-1)
    out[where.reshape(-1)] = np.broadcast_to(new, where.shape).reshape(-1)
    return out.reshape(base.shape)


def _tf_view_apply(x):
    y = x * 1.0
    v = y.t()
    v.mul_(2.0)
    return v


def _tf_view_scatter(x, new):
    y = x * 1.0
    y.t().copy_(new)
    return y


def _tf_copy(x, src):
    y = x * 1.0
    y.copy_(src)
    return y


_T_CHAIN = (("t", (), None),)
spec("view_apply", [C(F((3, 4)), chain=_T_CHAIN),
                    C(F((3, 4)), chain=(("permute", (("dims", (1, 0)),), None), ("select", (("dim", 0), ("index", 1)),
                                                                                      None)))],
     _np_apply_chain, tf=_tf_view_apply, tf_ref=lambda x: 2.0 * x.T)
spec("view_scatter", [C(F((3, 4)), F((4, 3)), chain=_T_CHAIN),
                      C(F((3, 4)), F((4,)), chain=(("select", (("dim", 0), ("index", 1)), None),)),
                      C(F((3, 4)), F(()), chain=(("select", (("dim", 1), ("index", 0)), None),))],
     _np_view_scatter, tf=_tf_view_scatter, tf_ref=lambda x, new: new.T + 0.0 * x)
spec("copy", [C(F((3, 4)), F((4,))), C(F((3, 4)), F((3, 4))), C(F(()), F(())), C(F((0, 2)), F((2,)))],
     lambda x, src: np.broadcast_to(src, x.shape), tf=_tf_copy, tf_ref=lambda x, s: jnp.broadcast_to(s, x.shape) + 0 * x)
spec("cat", [C(F((2, 3)), F((2, 1)), dim=1), C(F((2,)), F((3,)), dim=0), C(F((0, 3)), F((2, 3)), dim=0)],
     lambda *xs, dim=0: np.concatenate(xs, axis=dim), tf=lambda x, y: tp.cat([x, y], 1))
spec("stack", [C(F((2, 3)), F((2, 3)), dim=1), C(F(()), F(()), dim=0), C(F((0, 2)), F((0, 2)), dim=2)],
     lambda *xs, dim=0: np.stack(xs, axis=dim), tf=lambda x, y: tp.stack([x, y], 1))
spec("flip", [C(F((3, 4)), dims=(0,)), C(F((2, 3, 4)), dims=(0, 2)), C(F(()), dims=())],
     lambda x, dims: np.flip(x, dims), tf=lambda x: x.flip(0))
spec("roll", [C(F((3, 4)), shifts=1, dims=1), C(F((3, 4)), shifts=(1, -2), dims=(0, 1)), C(F((5,)), shifts=7, dims=0),
              C(F((3, 4)), shifts=-5, dims=None)],
     lambda x, shifts, dims=None: np.roll(x, shifts, dims), tf=lambda x: x.roll(1, 1))
spec("repeat", [C(F((2, 3)), repeats=(2, 1)), C(F((2, 3)), repeats=(2, 1, 3)), C(F(()), repeats=(3,))],
     lambda x, repeats: np.tile(x, repeats), tf=lambda x: x.repeat(2, 1))
spec("repeat_interleave", [C(F((2, 3)), repeats=2, dim=1), C(F((2, 3)), repeats=2, dim=None),
                           C(F((3,)), repeats=(1, 0, 2), dim=0)],
     lambda x, repeats, dim=None: np.repeat(x, repeats, axis=dim), tf=lambda x: x.repeat_interleave(2, dim=1))
spec("tril", [C(F((3, 4))), C(F((3, 4)), diagonal=1), C(F((2, 3, 3)), diagonal=-1)],
     lambda x, diagonal=0: np.tril(x, diagonal), tf=lambda x: x.tril())
spec("triu", [C(F((3, 4))), C(F((3, 4)), diagonal=1), C(F((2, 3, 3)), diagonal=-1)],
     lambda x, diagonal=0: np.triu(x, diagonal), tf=lambda x: x.triu())
spec("pad", [C(F((2, 3)), widths=((1, 0), (0, 2)), mode="constant", value=0.0),
             C(F((2, 4)), widths=((0, 0), (2, 1)), mode="reflect"),
             C(F((2, 3)), widths=((1, 1), (0, 2)), mode="edge"), C(F((2, 3)), widths=((0, 0), (1, 2)), mode="wrap")],
     lambda x, widths, mode="constant", value=0.0: np.pad(x, widths, mode=mode, **(
         {"constant_values": value} if mode == "constant" else {})),
     tf=lambda x: tp.nn.functional.pad(x, (0, 2, 1, 0)))


# == indexing =========================================================================================
def _np_index(x, *idx, spec):
    from xla_ops.index import build_index

    return x[build_index(spec, idx)]


def _np_index_put(x, v, *idx, spec, accumulate=False):
    from xla_ops.index import build_index

    out = x.copy()
    if accumulate:
        np.add.at(out, build_index(spec, idx), v)
    else:
        out[build_index(spec, idx)] = v
    return out


def _np_grid(index, dim):
    grids = list(np.ix_(*(np.arange(n) for n in index.shape)))
    grids[dim] = index
    return tuple(grids)


def _np_gather(x, index, dim):
    return x[_np_grid(index, dim)]


def _np_scatter(x, index, src, dim, add=False):
    out = x.copy()
    src = src[tuple(slice(0, n) for n in index.shape)] if np.ndim(src) else src
    if add:
        np.add.at(out, _np_grid(index, dim), src)
    else:
        out[_np_grid(index, dim)] = src
    return out


def _np_index_add(x, index, src, dim, alpha=1):
    out = x.copy()
    np.add.at(np.moveaxis(out, dim, 0), index, alpha * np.moveaxis(src, dim, 0))
    return out


_EMPTY_IDX = A(np.zeros((0,), np.int64))
spec("index", [C(F((4, 3)), A([0, 2, 2]), spec=("T",)), C(F((4, 3)), A([[0], [2]]), A([1, 2]), spec=("T", "T")),
               C(F((4, 3)), A([2, 0]), spec=(_S, "T")), C(F((4, 3)), _EMPTY_IDX, spec=("T",)),
               C(F((2, 4, 3)), A([1, 3]), A([0, 2]), spec=(_S, "T", "T"))],
     _np_index, tf=lambda x, i: x[i])
spec("index_put", [C(F((4, 3)), F((2, 3)), A([0, 2]), spec=("T",), accumulate=False),
                   C(F((4, 3)), F((3,)), A([0, 2, 2]), spec=("T",), accumulate=True),
                   C(F((4, 3)), F(()), A([1, 2]), spec=(_S, "T"), accumulate=False),
                   C(F((4, 3)), F((3,)), _EMPTY_IDX, spec=("T",), accumulate=False)],
     _np_index_put, tf=lambda x, v, i: tp.index_put(x, (i,), v))
spec("gather", [C(F((3, 4)), A([[0, 3], [1, 1], [2, 0]]), dim=1), C(F((3, 4)), A([[2, 0, 1, 1]]), dim=0),
                C(F((3, 4)), A([[0], [3]]), dim=1), C(F((3, 4)), A(np.zeros((3, 0), np.int64)), dim=1)],
     _np_gather, tf=lambda x, i: tp.gather(x, 1, i))
spec("scatter", [C(F((3, 4)), A([[0, 3], [1, 2], [2, 0]]), F((3, 2)), dim=1),
                 C(F((3, 4)), A([[0, 3], [1, 2], [2, 0]]), F((3, 3)), dim=1),
                 C(F((3, 4)), A([[2, 0, 1, 1]]), F((1, 4)), dim=0), C(F((3, 4)), A([[0, 3]]), 1.5, dim=1)],
     _np_scatter, tf=lambda x, i, s: tp.scatter(x, 1, i, s))
spec("scatter_add", [C(F((3, 4)), A([[0, 0], [1, 3], [2, 2]]), F((3, 2)), dim=1),
                     C(F((3, 4)), A([[0, 1, 2, 0], [2, 2, 2, 2]]), F((2, 4)), dim=0),
                     C(F((3, 4)), A([[0, 0], [1, 3], [2, 2]]), F((3, 3)), dim=1)],
     lambda x, index, src, dim: _np_scatter(x, index, src, dim, add=True), tf=lambda x, i, s: tp.scatter_add(x, 1, i, s))
spec("index_select", [C(F((4, 3)), A([0, 2, 2]), dim=0), C(F((4, 3)), A([1]), dim=1), C(F((4, 3)), _EMPTY_IDX, dim=0),
                      C(F((4,)), A(2), dim=0)],
     lambda x, index, dim: np.take(x, index, axis=dim), tf=lambda x, i: x.index_select(0, i))
spec("index_add", [C(F((4, 3)), A([0, 2, 2]), F((3, 3)), dim=0), C(F((4, 3)), A([1, 0]), F((4, 2)), dim=1, alpha=2.0)],
     _np_index_add, tf=lambda x, i, s: x.index_add(0, i, s))
spec("take", [C(F((3, 4)), A([[0, 5], [11, 5]])), C(F(()), A([0])), C(F((3, 4)), _EMPTY_IDX)],
     lambda x, index: np.take(x.reshape(-1), index), tf=lambda x, i: tp.take(x, i))
spec("masked_select", [C(F((3, 4)), A([0, 5, 6, 11]), shape=(3, 4)), C(F((4,)), A([1, 4, 7]), shape=(2, 4)),
                      C(F((2, 1)), A([0, 2, 3, 5]), shape=(2, 3)), C(F((3, 4)), A(np.zeros((0,), np.int64)), shape=(3, 4))],
     lambda x, index, shape: np.broadcast_to(x, shape).reshape(-1)[index],
     tf=lambda x, i: tp.masked_select(x, tp.isin(tp.arange(12).reshape(3, 4), i)))


# == matrix products ====================================================================================
spec("mm", [C(F((3, 4)), F((4, 2))), C(F((0, 4)), F((4, 2))), C(F((3, 0)), F((0, 2)))], np.matmul,
     tf=lambda x, y: x.mm(y))
spec("bmm", [C(F((2, 3, 4)), F((2, 4, 2))), C(F((0, 3, 4)), F((0, 4, 2)))], np.matmul, tf=lambda x, y: x.bmm(y))
spec("mv", [C(F((3, 4)), F((4,))), C(F((0, 4)), F((4,)))], np.matmul, tf=lambda x, y: x.mv(y))
spec("dot", [C(F((4,)), F((4,))), C(F((0,)), F((0,)))], np.dot, tf=lambda x, y: x.dot(y))
spec("matmul", [C(F((2, 1, 3, 4)), F((3, 4, 2))), C(F((4,)), F((2, 4, 3))), C(F((2, 3, 4)), F((4,))),
                C(F((3, 4)), F((2, 4, 2)))], np.matmul, tf=lambda x, y: x @ y)
spec("outer", [C(F((3,)), F((4,))), C(F((0,)), F((2,)))], np.outer, tf=lambda x, y: tp.outer(x, y))


def _added(product):
    """NumPy's `beta * input + alpha * product(a, b)` (the input unread when `beta` is 0)."""
    def ref(input, a, b, beta=1, alpha=1):
        prod = alpha * product(a, b)
        return np.broadcast_to(prod, np.broadcast_shapes(np.shape(input), prod.shape)) if beta == 0 else (
            beta * input + prod)
    return ref


spec("addmm", [C(F((2, 3)), F((2, 4)), F((4, 3))), C(F((3,)), F((2, 4)), F((4, 3)), beta=0.5, alpha=2.0),
               C(F((2, 3)), F((2, 4)), F((4, 3)), beta=0), C(F(()), F((0, 2)), F((2, 3)))],
     _added(np.matmul), tf=lambda i, a, b: tp.addmm(i, a, b), node="AddmmBackward0")
spec("baddbmm", [C(F((2, 3, 2)), F((2, 3, 4)), F((2, 4, 2))),
                 C(F((1, 2)), F((2, 3, 4)), F((2, 4, 2)), beta=-1.0, alpha=0.5)],
     _added(np.matmul), tf=lambda i, a, b: tp.baddbmm(i, a, b), node="BaddbmmBackward0")
spec("addbmm", [C(F((3, 2)), F((2, 3, 4)), F((2, 4, 2))), C(F((2,)), F((3, 3, 4)), F((3, 4, 2)), beta=0.5, alpha=2.0),
                C(F((3, 2)), F((1, 3, 4)), F((1, 4, 2))), C(F((3, 2)), F((0, 3, 4)), F((0, 4, 2)), beta=2.0)],
     _added(lambda a, b: np.matmul(a, b).sum(0)), tf=lambda i, a, b: tp.addbmm(i, a, b), node="AddbmmBackward0")
spec("addmv", [C(F((3,)), F((3, 4)), F((4,))), C(F(()), F((3, 4)), F((4,)), beta=2.0, alpha=-1.0)],
     _added(np.matmul), tf=lambda i, a, b: tp.addmv(i, a, b), node="AddmvBackward0")
spec("addr", [C(F((3, 4)), F((3,)), F((4,))), C(F((4,)), F((3,)), F((4,)), beta=0.5, alpha=2.0)],
     _added(np.outer), tf=lambda i, a, b: tp.addr(i, a, b), node="AddrBackward0")
spec("addcmul", [C(F((3, 4)), F((3, 4)), F((3, 4))), C(F((3, 1)), F((4,)), F(()), value=0.5),
                 C(F(()), F((2,)), F((2,)), value=-2.0)],
     lambda x, t1, t2, value=1: x + value * t1 * t2, tf=lambda x, t1, t2: tp.addcmul(x, t1, t2))
spec("addcdiv", [C(F((3, 4)), F((3, 4)), F((3, 4), away(-2, 2, 0.0))),
                 C(F((3, 1)), F((4,)), F((), away(-2, 2, 0.0)), value=0.5),
                 C(F(()), F((2,)), F((2,), away(-2, 2, 0.0)), value=-2.0)],
     lambda x, t1, t2, value=1: x + value * t1 / t2, tf=lambda x, t1, t2: tp.addcdiv(x, t1, t2))
spec("einsum", [C(F((3, 4)), F((4, 2)), equation="ij,jk->ik"), C(F((2, 3)), equation="ij->j"),
                C(F((2, 3, 4)), F((2, 4)), equation="bij,bj->bi"), C(F((3, 3)), equation="ii->")],
     lambda *xs, equation: np.einsum(equation, *xs), tf=lambda x, y: tp.einsum("ij,jk->ik", x, y))
spec("linalg_inv", [C(F((3, 3), WELLCOND)), C(F((2, 3, 3), WELLCOND))], np.linalg.inv, tf=lambda a: tp.linalg.inv(a))
spec("linalg_det", [C(F((3, 3), WELLCOND)), C(F((2, 3, 3), WELLCOND))], np.linalg.det, tf=lambda a: tp.linalg.det(a))
spec("linalg_solve", [C(F((3, 3), WELLCOND), F((3, 2))), C(F((2, 3, 3), WELLCOND), F((2, 3, 1)))],
     np.linalg.solve, tf=lambda a, b: tp.linalg.solve(a, b))


def _np_solve_triangular(a, b, upper, left=True, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t - t * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    if left:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


spec("linalg_solve_triangular", [C(F((3, 3), WELLCOND), F((3, 2)), upper=True),
                                 C(F((2, 3, 3), WELLCOND), F((3, 2)), upper=False),
                                 C(F((3, 3), WELLCOND), F((2, 2, 3)), upper=True, left=False),
                                 C(F((3, 3), WELLCOND), F((3, 1)), upper=False, unitriangular=True)],
     _np_solve_triangular, tf=lambda a, b: tp.linalg.solve_triangular(a, b, upper=True))
def _np_lu_parts(lu):
    m, n = lu.shape[-2:]
    k = min(m, n)
    return np.tril(lu[..., :, :k], -1) + np.eye(m, k), np.triu(lu[..., :k, :])


def _np_lu(a):
    if a.ndim > 2:
        return tuple(np.stack(r) for r in zip(*(_np_lu(x) for x in a)))
    p, low, up = scipy.linalg.lu(a)
    return p, low, up


def _np_lu_factor(a):
    lu, piv = scipy.linalg.lu_factor(a)
    return lu, (piv + 1).astype(np.int32)


def _np_lu_solve(lu, pivots, b, left=True, adjoint=False):
    n = lu.shape[-1]
    perm = np.arange(n)
    for i, p in enumerate(np.asarray(pivots) - 1):  # LAPACK's row interchanges, in order
        perm[[i, p]] = perm[[p, i]]
    low, up = _np_lu_parts(lu)
    a = (low @ up)[np.argsort(perm)]  # row perm[i] of A is row i of L U
    a = np.swapaxes(a, -1, -2) if adjoint else a
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


# Random matrices, so that rows are really interchanged.
spec("linalg_lu", [C(F((3, 3))), C(F((2, 4, 3))), C(F((3, 5)))], _np_lu,
     tf=lambda a: tuple(tp.linalg.lu(a)))
spec("linalg_lu_factor", [C(F((4, 4))), C(F((3, 5)))], _np_lu_factor,
     tf=lambda a: tuple(tp.linalg.lu_factor(a)))
_PIV = A([2, 3, 3], np.int32)
spec("linalg_lu_solve", [C(F((3, 3), WELLCOND), _PIV, F((3, 2))),
                         C(F((3, 3), WELLCOND), _PIV, F((2, 3, 2)), adjoint=True),
                         C(F((3, 3), WELLCOND), _PIV, F((2, 3)), left=False),
                         C(F((3, 3), WELLCOND), _PIV, F((1, 3)), left=False, adjoint=True)],
     _np_lu_solve, tf=lambda lu, piv, b: tp.linalg.lu_solve(lu, piv, b))


def _np_cholesky_info(a):
    if a.ndim > 2:
        return np.stack([_np_cholesky_info(x) for x in a])
    sym = np.tril(a) + np.tril(a, -1).T
    minors = [np.linalg.eigvalsh(sym[:k, :k]).min() > 0 for k in range(1, a.shape[-1] + 1)]
    return np.int32(minors.index(False) + 1 if False in minors else 0)


_NOT_PD = A([[[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
             [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, -1.0]]], np.float64)
spec("cholesky_info", [C(F((3, 3), SPD)), C(_NOT_PD)], _np_cholesky_info, diff=False,
     tf=lambda a: tp.linalg.cholesky_ex(a).info)

spec("cholesky", [C(F((3, 3), SPD)), C(F((2, 3, 3), SPD))], np.linalg.cholesky, tf=lambda a: tp.linalg.cholesky(a),
     fd=False, why="the value reads the lower triangle while the gradient is symmetric (PyTorch's convention); "
                   "tests/test_linalg.py differentiates along symmetric directions")


# -- decompositions: references are LAPACK through NumPy, so signs of U/V/Q agree with JAX's; U/V/Q are
# compared as they are (no sign fixing), and the inputs keep singular values/eigenvalues far apart.
def _np_svd(a, full_matrices=True):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    m, n = a.shape[-2:]
    if full_matrices and m > n:  # tapeflow's documented completion: the rest of a complete QR of U
        u = np.concatenate([u, np.linalg.qr(u, mode="complete")[0][..., n:]], axis=-1)
    elif full_matrices and m < n:
        v = np.swapaxes(vh, -1, -2)
        vh = np.swapaxes(np.concatenate([v, np.linalg.qr(v, mode="complete")[0][..., m:]], axis=-1), -1, -2)
    return u, s, vh


def _np_pinv(a, atol=None, rtol=None, hermitian=False):
    if rtol is None:
        rtol = 0.0 if atol else np.finfo(a.dtype).eps * max(a.shape[-2:])
    u, s, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    tol = np.maximum(atol or 0.0, rtol * s.max(-1, keepdims=True))
    inv = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0)
    return np.swapaxes(vh, -1, -2) * inv[..., None, :] @ np.swapaxes(u, -1, -2)


def _np_lstsq(a, b, rcond=None, residuals=False):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    (m, n), k = a.shape[-2:], b.shape[-1]
    a2 = np.broadcast_to(a, (*batch, m, n)).reshape(-1, m, n)
    b2 = np.broadcast_to(b, (*batch, m, k)).reshape(-1, m, k)
    x = np.stack([np.linalg.lstsq(ai, bi, rcond=rcond)[0] for ai, bi in zip(a2, b2)]).reshape(*batch, n, k)
    if residuals and m > n:
        return x, np.sum((a @ x - b) ** 2, axis=-2)
    return x, np.zeros((0,))


_RANK1 = A([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], np.float64)
_EIGH_WHY = ("the value reads one triangle while the gradient is symmetric (PyTorch's convention), so entrywise "
             "finite differences cannot match; tests/test_linalg.py differentiates along symmetric directions")

spec("linalg_svd", [C(F((4, 3)), full_matrices=False), C(F((3, 3))), C(F((2, 3, 4)), full_matrices=False),
                    C(F((4, 3))), C(F((2, 3, 5))), C(F((0, 3, 3)))],
     _np_svd, dom=SPREAD, tf=lambda a: tuple(tp.linalg.svd(a, full_matrices=False)))
spec("linalg_svdvals", [C(F((4, 3))), C(F((2, 3, 5))), C(F((0, 2, 2)))],
     lambda a: np.linalg.svd(a, compute_uv=False), dom=SPREAD, tf=lambda a: tp.linalg.svdvals(a))
spec("linalg_qr", [C(F((4, 3))), C(F((3, 3))), C(F((2, 3, 5))), C(F((3, 5)), mode="complete"),
                   C(F((4, 3)), mode="complete", grad=False), C(F((0, 3, 2)))],
     lambda a, mode="reduced": tuple(np.linalg.qr(a, mode=mode)), dom=SPREAD, tf=lambda a: tuple(tp.linalg.qr(a)))
spec("linalg_eigh", [C(F((3, 3))), C(F((2, 4, 4)), UPLO="U"), C(F((3, 3), REAL)), C(F((3, 3), REAL), UPLO="U"),
                     C(F((0, 2, 2)))],
     lambda a, UPLO="L": tuple(np.linalg.eigh(a, UPLO=UPLO)), dom=SYMSPREAD, tf=lambda a: tuple(tp.linalg.eigh(a)),
     fd=False, why=_EIGH_WHY)
spec("linalg_eigvalsh", [C(F((3, 3))), C(F((2, 4, 4)), UPLO="U"), C(F((3, 3), REAL), UPLO="U")],
     lambda a, UPLO="L": np.linalg.eigvalsh(a, UPLO=UPLO), dom=SYMSPREAD, tf=lambda a: tp.linalg.eigvalsh(a),
     fd=False, why=_EIGH_WHY)
spec("linalg_pinv", [C(F((4, 3))), C(F((2, 3, 5))), C(F((3, 3)), rtol=0.5), C(F((3, 3)), atol=1.5), C(_RANK1),
                     C(F((3, 3), SYMSPREAD), hermitian=True)],
     _np_pinv, dom=SPREAD, tf=lambda a: tp.linalg.pinv(a))
spec("linalg_lstsq", [C(F((5, 3), SPREAD), F((5, 2)), residuals=True), C(F((5, 3), SPREAD), F((2, 5, 2))),
                      C(F((3, 5), SPREAD), F((3, 2)), residuals=True, rcond=0.5), C(_RANK1, F((3, 1)), residuals=True)],
     _np_lstsq, tf=lambda a, b: tuple(tp.linalg.lstsq(a, b, driver="gelsd"))[:2])
spec("linalg_matrix_exp", [C(F((3, 3))), C(F((2, 3, 3)))], scipy.linalg.expm,
     tf=lambda a: tp.linalg.matrix_exp(a))
spec("linalg_cross", [C(F((4, 3)), F((4, 3))), C(F((2, 1, 3)), F((1, 4, 3))), C(F((3, 2)), F((3, 1)), dim=0),
                      C(F((3,)), F((3,)))],
     lambda x, y, dim=-1: np.cross(x, y, axis=dim), tf=lambda x, y: tp.linalg.cross(x, y))


# == sorting ===============================================================================================
def _np_sort(x, dim=-1, descending=False):
    idx = np.argsort(-x if descending else x, axis=dim, kind="stable")
    return np.take_along_axis(x, idx, axis=dim), idx


def _np_topk(x, k, dim=-1, largest=True, sorted=True):
    vals, idx = _np_sort(x, dim, descending=largest)
    take = (slice(None),) * (dim % x.ndim) + (slice(0, k),)
    return vals[take], idx[take]


spec("sort", [C(F((3, 4)), dim=-1), C(F((3, 4)), dim=0, descending=True), C(F((0, 3)), dim=1)], _np_sort,
     tf=lambda x: x.sort(-1))
spec("topk", [C(F((3, 5)), k=2, dim=-1), C(F((3, 5)), k=2, dim=0, largest=False), C(F((3, 5)), k=0, dim=1)],
     _np_topk, tf=lambda x: x.topk(2))
spec("median", [C(F((3, 4))), C(F((5,))), C(A([1.0, 2.0, 2.0, 3.0], np.float64), grad=False)],
     lambda x: np.sort(x.reshape(-1))[(x.size - 1) // 2], tf=lambda x: x.median())


def _np_kth(x, k, dim, keepdim=False):
    idx = np.take(np.argsort(x, axis=dim, kind="stable"), [k - 1], axis=dim)
    vals = np.take_along_axis(x, idx, axis=dim)
    return (vals, idx) if keepdim else (np.squeeze(vals, dim), np.squeeze(idx, dim))


spec("median_dim", [C(F((3, 4)), dim=1), C(F((3, 5)), dim=0, keepdim=True)],
     lambda x, dim, keepdim=False: _np_kth(x, (x.shape[dim] + 1) // 2, dim, keepdim), tf=lambda x: x.median(1))
spec("kthvalue", [C(F((3, 4)), k=2, dim=1), C(F((3, 5)), k=3, dim=0, keepdim=True)], _np_kth,
     tf=lambda x: x.kthvalue(2, 1))
spec("argsort", [C(F((3, 4), INTS), dim=-1), C(F((3, 4), INTS), dim=0, descending=True)],
     lambda x, dim=-1, descending=False: _np_sort(x, dim, descending)[1], diff=False, tf=lambda x: x.argsort(-1))


# == random (explicit keys; NumPy has no JAX PRNG, so JAX's own samplers are the reference) ================
_RANDOM = "NumPy cannot reproduce JAX's counter-based PRNG streams: JAX's samplers are the reference"
_GLOBAL_KEY = "the tapeflow factories draw keys from the global generator; covered by the factory tests"
spec("split_key", [C(KEY)], None, jax_ref=lambda key: tuple(jax.random.split(key)), diff=False, f32=False,
     why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("uniform", [C(KEY, shape=(3, 4), dtype=jnp.float64), C(KEY, shape=(), dtype=jnp.float32, low=-2.0, high=3.0)],
     None, jax_ref=lambda key, shape, dtype, low=0.0, high=1.0: jax.random.uniform(key, shape, dtype, low, high),
     diff=False, f32=False, why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("normal", [C(KEY, shape=(3, 4), dtype=jnp.float64), C(KEY, shape=(2,), dtype=jnp.float32, mean=1.0, std=3.0)],
     None, jax_ref=lambda key, shape, dtype, mean=0.0, std=1.0: mean + std * jax.random.normal(key, shape, dtype),
     diff=False, f32=False, why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("normal_scaled", [C(F((2, 3)), F((3,)), F((2, 1), POS)), C(F((3,)), F((3,)), 2.0), C(F((3,)), 0.5, F((3,), POS))],
     lambda z, mean, std: z * std + mean, jax_ref=lambda z, mean, std: jax.lax.stop_gradient(z * std + mean),
     fd=False, second=False,
     why="PyTorch defines the derivative of normal(mean, std) as zero in mean and std; tp.normal draws its own "
         "z (tests/test_reduce_shape_oracle.py compares it with PyTorch)")
spec("randint", [C(KEY, shape=(3, 4), low=-2, high=5, dtype=jnp.int64)], None,
     jax_ref=lambda key, shape, low, high, dtype: jax.random.randint(key, shape, low, high, dtype),
     diff=False, f32=False, why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("bernoulli", [C(KEY, F((3, 4), PROB))], None,
     jax_ref=lambda key, p: jax.random.bernoulli(key, p).astype(p.dtype), diff=False, f32=False,
     why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("categorical", [C(KEY, F((2, 3)), num_samples=4)], None,
     jax_ref=lambda key, logits, num_samples: jnp.moveaxis(jax.random.categorical(
         key, logits, axis=-1, shape=(num_samples, *logits.shape[:-1])), 0, -1),
     diff=False, f32=False, why=f"{_RANDOM}; {_GLOBAL_KEY}; tests/test_sampling.py checks the frequencies")
spec("gumbel_top_k", [C(KEY, F((2, 5)), num_samples=3)], None,
     jax_ref=lambda key, logits, num_samples: jax.lax.top_k(logits + jax.random.gumbel(key, logits.shape,
                                                                                       logits.dtype), num_samples)[1],
     diff=False, f32=False, why=f"{_RANDOM}; {_GLOBAL_KEY}; tests/test_sampling.py checks the frequencies")
spec("poisson", [C(KEY, F((3, 4), POS))], None,
     jax_ref=lambda key, rate: jax.random.poisson(key, rate, rate.shape).astype(rate.dtype),
     diff=False, f32=False, why=f"{_RANDOM}; {_GLOBAL_KEY}; tests/test_sampling.py checks the mean")
spec("exponential", [C(KEY, shape=(3, 4), dtype=jnp.float64)], None,
     jax_ref=lambda key, shape, dtype: jax.random.exponential(key, shape, dtype), diff=False, f32=False,
     why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("cauchy", [C(KEY, shape=(3, 4), dtype=jnp.float64)], None,
     jax_ref=lambda key, shape, dtype: jax.random.cauchy(key, shape, dtype), diff=False, f32=False,
     why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("permutation", [C(KEY, n=5)], None, jax_ref=lambda key, n: jax.random.permutation(key, n),
     diff=False, f32=False, why=f"{_RANDOM}; {_GLOBAL_KEY}")
spec("standard_gamma", [C(F((3, 4), POS), KEY), C(F((2,), lambda r, sh: r.uniform(0.2, 0.9, sh)), KEY)], None,
     jax_ref=lambda alpha, key: jax.random.gamma(key, alpha, alpha.shape, alpha.dtype), fd=False, second=False,
     f32=False, why=f"{_RANDOM}; the gradient is implicit reparameterisation, not the derivative of the sampler's "
                    "path, so finite differences do not apply; tests/test_distributions.py checks it statistically")
spec("dropout", [C(F((3, 4)), KEY, 0.5), C(F(()), KEY, 0.25), C(F((0, 2)), KEY, 0.5)], None,
     jax_ref=lambda x, key, p: jnp.where(jax.random.bernoulli(key, 1.0 - p, x.shape), x / (1.0 - p), 0.0),
     f32=False, why=f"{_RANDOM}; the tapeflow call draws its key from the global generator, so "
                    "test_dropout_through_tapeflow checks it against the mask it drew")


# == fused optimizer updates (PyTorch's documented update rules, in NumPy) ===================================
def _np_sgd(p, g, buf, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
            first=False):
    d = -g if maximize else g
    d = d + weight_decay * p
    if momentum:
        buf = d if first else momentum * buf + (1 - dampening) * d
        d = d + momentum * buf if nesterov else buf
    return p - lr * d, buf


def _np_adam(p, g, m, v, vmax, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
             decoupled=False, amsgrad=False, maximize=False):
    step = step + 1
    step_size, bias2_sqrt = lr / (1 - beta1 ** step), np.sqrt(1 - beta2 ** step)
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    vmax = np.maximum(vmax, v) if amsgrad else vmax
    denom = np.sqrt(vmax if amsgrad else v) / bias2_sqrt + eps
    return p - step_size * m / denom, m, v, vmax, step


def _np_rmsprop(p, g, sq, gavg, buf, step, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                maximize=False):
    step = step + 1
    g = (-g if maximize else g) + weight_decay * p
    sq = alpha * sq + (1 - alpha) * g * g
    if centered:
        gavg = alpha * gavg + (1 - alpha) * g
        avg = np.sqrt(sq - gavg * gavg) + eps
    else:
        avg = np.sqrt(sq) + eps
    if momentum:
        buf = momentum * buf + g / avg
        return p - lr * buf, sq, gavg, buf, step
    return p - lr * g / avg, sq, gavg, buf, step


_OPTIM = "called by tapeflow.optim's step(); the optimizer tests cover that path"
spec("sgd_update", [C(F((3,)), F((3,)), F((3,)), 0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, nesterov=True),
                    C(F((3,)), F((3,)), F((3,)), 0.1, momentum=0.9, first=True, maximize=True),
                    C(F((2, 2)), F((2, 2)), F((2, 2)), 0.05)],
     _np_sgd, diff=False, why=_OPTIM)
_STEP = A(2.0, np.float64)  # the step counter before this update
spec("adam_update", [C(*[F((3,), POS)] * 5, _STEP, 0.01, weight_decay=0.1),
                     C(*[F((3,), POS)] * 5, _STEP, 0.01, weight_decay=0.1, decoupled=True, amsgrad=True,
                       maximize=True)],
     _np_adam, diff=False, why=_OPTIM)
_SQ = F((3,), lambda r, s: r.uniform(4.0, 5.0, s))  # keeps the centred variance positive
spec("rmsprop_update", [C(F((3,)), F((3,)), _SQ, F((3,), POS), F((3,)), _STEP, 0.01, weight_decay=0.1),
                        C(F((3,)), F((3,)), _SQ, F((3,), POS), F((3,)), _STEP, 0.01, momentum=0.9, centered=True,
                          maximize=True)],
     _np_rmsprop, diff=False, why=_OPTIM)



def _np_decay(p, g, lr, weight_decay, decoupled, maximize):
    g = -g if maximize else g
    if decoupled:
        return p * (1 - lr * weight_decay), g
    return p, g + weight_decay * p


def _np_adagrad(p, g, acc, step, lr, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False):
    p, g = _np_decay(p, g, lr, weight_decay, False, maximize)
    acc = acc + g * g
    return p - lr / (1 + step * lr_decay) * g / (np.sqrt(acc) + eps), acc, step + 1


def _np_adadelta(p, g, sq, acc, step, lr, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    p, g = _np_decay(p, g, lr, weight_decay, False, maximize)
    sq = rho * sq + (1 - rho) * g * g
    delta = np.sqrt(acc + eps) / np.sqrt(sq + eps) * g
    return p - lr * delta, sq, rho * acc + (1 - rho) * delta * delta, step + 1


def _np_rprop(p, g, prev, size, step, lr, etaminus=0.5, etaplus=1.2, step_size_min=1e-6, step_size_max=50.0,
              maximize=False):
    g = -g if maximize else g
    size = np.full_like(p, lr) if step == 0 else size
    s = np.sign(g * prev)
    size = np.clip(size * np.where(s > 0, etaplus, np.where(s < 0, etaminus, 1.0)), step_size_min, step_size_max)
    g = np.where(s < 0, 0.0, g)
    return p - np.sign(g) * size, g, size, step + 1


def _np_adamax(p, g, m, u, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, maximize=False):
    p, g = _np_decay(p, g, lr, weight_decay, False, maximize)
    m = beta1 * m + (1 - beta1) * g
    u = np.maximum(beta2 * u, np.abs(g) + eps)
    return p - lr / (1 - beta1 ** (step + 1)) * m / u, m, u, step + 1


def _np_nadam(p, g, m, v, mu_prod, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
              momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    t = step + 1
    p, g = _np_decay(p, g, lr, weight_decay, decoupled_weight_decay, maximize)
    mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    mu_prod = np.float32(mu_prod * np.float32(mu))
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    denom = np.sqrt(v / (1 - beta2 ** t)) + eps
    p = p - lr * (1 - mu) / (1 - np.float64(mu_prod)) * g / denom
    return p - lr * mu_next / (1 - np.float64(mu_prod) * mu_next) * m / denom, m, v, mu_prod, t


def _np_radam(p, g, m, v, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
              maximize=False):
    t = step + 1
    p, g = _np_decay(p, g, lr, weight_decay, decoupled_weight_decay, maximize)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t)
    if rho_t > 5:
        rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return p - m / (1 - beta1 ** t) * lr * np.sqrt(1 - beta2 ** t) / (np.sqrt(v) + eps) * rect, m, v, t
    return p - m / (1 - beta1 ** t) * lr, m, v, t


_LATE = A(10.0, np.float64)  # late enough for RAdam's rectified branch
spec("adagrad_update", [C(F((3,)), F((3,)), F((3,), POS), _STEP, 0.1, lr_decay=0.01, weight_decay=0.1)],
     _np_adagrad, diff=False, why=_OPTIM)
spec("adadelta_update", [C(F((3,)), F((3,)), F((3,), POS), F((3,), POS), _STEP, 1.0, weight_decay=0.1, maximize=True)],
     _np_adadelta, diff=False, why=_OPTIM)
spec("rprop_update", [C(F((3,)), F((3,)), F((3,)), F((3,), POS), _STEP, 0.01),
                      C(F((4,)), F((4,)), F((4,)), F((4,), POS), A(0.0, np.float64), 0.05, maximize=True)],
     _np_rprop, diff=False, why=_OPTIM)
spec("adamax_update", [C(F((3,)), F((3,)), F((3,)), F((3,), POS), _STEP, 0.01, weight_decay=0.1)],
     _np_adamax, diff=False, why=_OPTIM)
spec("nadam_update", [C(F((3,)), F((3,)), F((3,)), F((3,), POS), A(0.8, np.float32), _STEP, 0.01, weight_decay=0.1)],
     _np_nadam, diff=False, f32=False, why=_OPTIM)
spec("radam_update", [C(F((3,)), F((3,)), F((3,)), F((3,), POS), _STEP, 0.01, weight_decay=0.1),
                      C(F((3,)), F((3,)), F((3,)), F((3,), POS), _LATE, 0.01, decoupled_weight_decay=True)],
     _np_radam, diff=False, why=_OPTIM)


def _np_asgd(p, g, ax, eta, mu, step, lr, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    p, g = _np_decay(p, g, lr, weight_decay, False, maximize)
    eta, mu = float(eta), float(mu)  # float32 state, used in double precision
    p = p * (1 - lambd * eta) - eta * g
    ax = p if mu == 1 else ax + (p - ax) * mu
    step = step + 1
    return p, ax, np.float32(lr / (1 + lambd * lr * step) ** alpha), np.float32(1 / max(1.0, step - t0)), step


spec("asgd_update", [C(F((3,)), F((3,)), F((3,)), A(0.05, np.float32), A(1.0, np.float32), _STEP, 0.1, lambd=0.01,
                       weight_decay=0.1, maximize=True),
                     C(F((3,)), F((3,)), F((3,)), A(0.05, np.float32), A(0.5, np.float32), _STEP, 0.1, t0=1.0,
                       alpha=0.5)],
     _np_asgd, diff=False, f32=False, why=_OPTIM)

def _np_adafactor(p, g, row_var, col_var, variance, step, lr, beta2_decay=-0.8, eps1=1e-3, eps2=1e-3, d=1.0,
                  weight_decay=0.0, maximize=False, tensor_lr=False):
    step = step + 1
    g = -g if maximize else g
    weight = step ** beta2_decay
    alpha = max(eps2, np.linalg.norm(p) / np.sqrt(p.size)) * min(lr, 1 / np.sqrt(step))
    p = p * (1 - lr * weight_decay)
    if g.ndim > 1:
        row_var = row_var + weight * ((g * g).mean(-1, keepdims=True) - row_var)
        col_var = col_var + weight * ((g * g).mean(-2, keepdims=True) - col_var)
        estimate = row_var * col_var / np.maximum(row_var.mean(-2, keepdims=True), eps1)
    else:
        variance = variance + weight * (g * g - variance)
        estimate = variance
    update = g / np.sqrt(np.maximum(estimate, eps1 * eps1))
    denom = max(1.0, np.linalg.norm(update) / np.sqrt(update.size) / d)
    return p - alpha / denom * update, row_var, col_var, variance, step


spec("adafactor_update", [C(F((3, 4)), F((3, 4)), F((3, 1), POS), F((1, 4), POS), None, _STEP, 0.01, weight_decay=0.1),
                          C(F((2, 3, 2)), F((2, 3, 2)), F((2, 3, 1), POS), F((2, 1, 2), POS), None, _STEP, 0.5,
                            beta2_decay=-0.5, eps1=1e-30, d=0.5, maximize=True),
                          C(F((3,)), F((3,)), None, None, F((3,), POS), A(0.0, np.float64), 0.01, eps2=0.5),
                          C(F(()), F(()), None, None, F((), POS), _STEP, 0.01, weight_decay=0.1)],
     _np_adafactor, diff=False, why=_OPTIM)


# == nn ops (xla_ops/nn.py) ===================================================================================
# Entries for the neural-network ops go below this line.

from op_specs_index import *  # noqa: E402,F401,F403  (the entries for writes at indices and strided views)
from op_specs_nn import *  # noqa: E402,F401,F403  (the nn op entries register themselves into SPECS)
from op_specs_special import *  # noqa: E402,F401,F403  (special functions, nan-skipping order statistics)

# -- Fourier transforms (real inputs here; complex ones, the conjugate convention and PyTorch's numbers are
# checked against PyTorch in tests/test_fft.py) -----------------------------------------------------------------
_FFT = "complex outputs: tests/test_fft.py checks values and gradients against PyTorch"
spec("fft_r2c", [C(F((3, 4)), s=None, axes=(1,), norm="backward", onesided=True, forward=True),
                 C(F((3, 4)), s=(6,), axes=(0,), norm="ortho", onesided=False, forward=True)],
     lambda x, s, axes, norm, onesided, forward: (np.fft.rfftn if onesided else np.fft.fftn)(x, s=s, axes=axes, norm=norm),
     tf=None, fd=False, second=False, why=_FFT)
spec("fft_c2c", [C(F((3, 4)), s=None, axes=(0, 1), norm="backward", forward=True),
                 C(F((3, 4)), s=(5,), axes=(1,), norm="forward", forward=False)],
     lambda x, s, axes, norm, forward: (np.fft.fftn if forward else np.fft.ifftn)(x, s=s, axes=axes, norm=norm),
     tf=None, fd=False, second=False, why=_FFT)
spec("fft_c2r", [C(F((3, 4)), s=(6,), axes=(1,), norm="backward"), C(F((3, 4)), s=(3, 5), axes=(0, 1), norm="ortho")],
     lambda x, s, axes, norm: np.fft.irfftn(x, s=s, axes=axes, norm=norm), tf=lambda x: tp.fft.irfft(x), fd=False,
     second=False, why=_FFT)
