"""Special functions and the rarer elementwise maths: copysign, heaviside, logaddexp, xlogy, sinc, Bessel
functions, the gamma family, bit shifts (`tapeflow.special` gives them PyTorch's `torch.special` names)."""

from __future__ import annotations

import builtins
import math

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._factories import tensor
from .._tensor import Tensor
from ._args import _common, _t, _to_float
from ._checks import tensor_arg
from ._dtype_rules import _kernel
from .unary import lgamma

__all__ = ["copysign", "heaviside", "logaddexp", "logaddexp2", "sinc", "xlogy", "deg2rad", "rad2deg", "signbit",
           "isneginf", "isposinf", "i0", "gcd", "lcm", "polygamma", "mvlgamma", "igamma", "igammac", "nextafter",
           "frexp", "ldexp", "bitwise_left_shift", "bitwise_right_shift"]


def copysign(input, other):
    """The magnitude of `input` with the sign of `other` (a float result, also for integers).

    Example:
        >>> tp.copysign(tp.tensor([1.0, -2.0, 3.0]), tp.tensor([-1.0, 1.0, -0.0]))
        tensor([-1.,  2., -3.])
    """
    return dispatch(X.copysign, _common("copysign_cpu", input, other, ints="float", complex_ok=False))


def heaviside(input, values):
    """The Heaviside step: 0 below zero, 1 above, `values` where `input` is zero (same dtypes, as in PyTorch).

    Example:
        >>> tp.heaviside(tp.tensor([-1.5, 0.0, 2.0]), tp.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    tensor_arg("heaviside", "values", values)
    input, values = _t(input), _t(values)
    if input._raw.dtype.kind == "c" or values._raw.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input._raw.dtype != values._raw.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return dispatch(X.heaviside, (input, values)).to(input.dtype)


def logaddexp(input, other):
    """`log(exp(input) + exp(other))`, computed without overflow.

    Example:
        >>> tp.logaddexp(tp.tensor([0.0, 1.0]), tp.tensor([0.0, -1.0]))
        tensor([0.6931, 1.1269])
    """
    tensor_arg("logaddexp", "other", other)
    return dispatch(X.logaddexp, _common("logaddexp_cpu", input, other, ints="refuse"))


def logaddexp2(input, other):
    """`log2(2 ** input + 2 ** other)`, computed without overflow.

    Example:
        >>> tp.logaddexp2(tp.tensor([0.0, 1.0]), tp.tensor([0.0, 1.0]))
        tensor([1., 2.])
    """
    tensor_arg("logaddexp2", "other", other)
    return dispatch(X.logaddexp2, _common("logaddexp2_cpu", input, other, ints="refuse"))


def sinc(input):
    """The normalised sinc `sin(pi x) / (pi x)`, 1 at 0.

    Example:
        >>> tp.sinc(tp.tensor([0.0, 0.5, 1.0]))
        tensor([ 1.0000e+00,  6.3662e-01, -2.7828e-08])
    """
    return dispatch(X.sinc, (_to_float(_t(input)),))


def xlogy(input, other):
    """`input * log(other)`, 0 where `input` is 0 (unless `other` is NaN).

    Example:
        >>> tp.xlogy(tp.tensor([0.0, 1.0, 2.0]), tp.tensor([0.0, 2.0, 3.0]))
        tensor([0.0000, 0.6931, 2.1972])
    """
    return _number_first(X.xlogy, "xlogy_cpu", input, other)


def _number_first(op, kernel: str, input, other):
    """`op(input, other)` promoted as PyTorch's kernel does; a Python number `input` stays a number, selecting
    PyTorch's Scalar-self overload (its node links `other` alone: `XlogyBackward1`)."""
    if type(input) in (builtins.int, builtins.float, builtins.bool) and isinstance(other, Tensor):
        other, input = _common(kernel, other, input, ints="float", complex_ok=False)
        return dispatch(op, (input, other))
    return dispatch(op, _common(kernel, input, other, ints="float", complex_ok=False))


def xlog1py(input, other):
    """`input * log1p(other)`, 0 where `input` is 0 (unless `other` is NaN).

    Example:
        >>> tp.special.xlog1py(tp.tensor([0.0, 1.0]), tp.tensor([-1.0, 1.0]))
        tensor([0.0000, 0.6931])
    """
    return _number_first(X.xlog1py, "xlog1py_cpu", input, other)


def entr(input):
    """The elementwise entropy term `-x log x` (0 at 0, `-inf` below 0).

    Example:
        >>> tp.special.entr(tp.tensor([0.0, 0.5, 1.0, -1.0]))
        tensor([0.0000, 0.3466, -0.0000,   -inf])
    """
    return dispatch(X.entr, (_to_float(_t(input)),))


def deg2rad(input):
    """Degrees to radians.

    Example:
        >>> tp.deg2rad(tp.tensor([180.0, 90.0]))
        tensor([3.1416, 1.5708])
    """
    return dispatch(X.deg2rad, (_to_float(_t(input)),))


def rad2deg(input):
    """Radians to degrees.

    Example:
        >>> tp.rad2deg(tp.tensor([3.141592653589793, 1.0]))
        tensor([180.0000,  57.2958])
    """
    return dispatch(X.rad2deg, (_to_float(_t(input)),))


def signbit(input):
    """Whether each element's sign bit is set (true for -0.0).

    Example:
        >>> tp.signbit(tp.tensor([-1.0, -0.0, 0.0, 2.0]))
        tensor([ True,  True, False, False])
    """
    return dispatch(X.signbit, (_t(input),))


def isneginf(input):
    """Whether each element is negative infinity.

    Example:
        >>> tp.isneginf(tp.tensor([float("-inf"), float("inf"), 1.0]))
        tensor([ True, False, False])
    """
    return dispatch(X.isneginf, (_t(input),))


def isposinf(input):
    """Whether each element is positive infinity.

    Example:
        >>> tp.isposinf(tp.tensor([float("-inf"), float("inf"), 1.0]))
        tensor([False,  True, False])
    """
    return dispatch(X.isposinf, (_t(input),))


def i0(input):
    """The modified Bessel function of the first kind, order 0.

    Example:
        >>> tp.i0(tp.tensor([0.0, 1.0, 2.0]))
        tensor([1.0000, 1.2661, 2.2796])
    """
    return dispatch(X.i0, (_to_float(_t(input)),))


def i0e(input):
    """The exponentially scaled `i0`: `exp(-|x|) * i0(x)`.

    Example:
        >>> tp.special.i0e(tp.tensor([0.0, 1.0]))
        tensor([1.0000, 0.4658])
    """
    return dispatch(X.i0e, (_to_float(_t(input)),))


def i1(input):
    """The modified Bessel function of the first kind, order 1.

    Example:
        >>> tp.special.i1(tp.tensor([0.0, 1.0]))
        tensor([0.0000, 0.5652])
    """
    return dispatch(X.i1, (_to_float(_t(input)),))


def i1e(input):
    """The exponentially scaled `i1`: `exp(-|x|) * i1(x)`.

    Example:
        >>> tp.special.i1e(tp.tensor([0.0, 1.0]))
        tensor([0.0000, 0.2079])
    """
    return dispatch(X.i1e, (_to_float(_t(input)),))


def gcd(input, other):
    """The greatest common divisor of integers (non-negative).

    Example:
        >>> tp.gcd(tp.tensor([12, -18, 0]), tp.tensor([8, 12, 5]))
        tensor([4, 6, 5])
    """
    tensor_arg("gcd", "other", other)
    return dispatch(X.gcd, _common("gcd_cpu", input, _t(other), ints="keep", bool_ok=False, complex_ok=False,
                                   floats_ok=False))


def lcm(input, other):
    """The least common multiple of integers (non-negative).

    Example:
        >>> tp.lcm(tp.tensor([4, 6, 0]), tp.tensor([6, 4, 5]))
        tensor([12, 12,  0])
    """
    tensor_arg("lcm", "other", other)
    return dispatch(X.lcm, _common("lcm_cpu", input, _t(other), ints="keep", bool_ok=False, complex_ok=False,
                                   floats_ok=False))


def polygamma(n, input):
    """The `n`-th derivative of the digamma function.

    Example:
        >>> tp.polygamma(1, tp.tensor([1.0, 2.0]))
        tensor([1.6449, 0.6449])
    """
    if int(n) != n or n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    input = _t(input)
    if input._raw.dtype.kind == "c":  # (PyTorch's kernel for the order: digamma, trigamma or polygamma)
        raise _kernel(("digamma", "trigamma")[int(n)] if n < 2 else "polygamma")(input.dtype.name)
    return dispatch(X.polygamma, (_to_float(input),), (("n", int(n)),))


def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension `p` (`inf` where an element is at most
    `(p - 1) / 2`, as in PyTorch).

    Example:
        >>> tp.mvlgamma(tp.tensor([2.5, 3.0]), 2)
        tensor([0.8570, 1.5502])
    """
    input = _t(input)
    kind = input._raw.dtype.kind
    if kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if kind == "c":  # (PyTorch builds the offsets -(p-1)/2, ..., 0 with arange in the input's dtype)
        raise _kernel("arange_cpu")(input.dtype.name)
    if kind in "iu":
        input = input.to(_dtype.get_default_dtype())
    if input.dtype in (_dtype.float16, _dtype.bfloat16):
        # PyTorch composes it in the half type, each step rounded: offsets + x, lgamma, a sum, + the constant
        # (itself rounded to the half type first).
        offsets = tensor([j / 2 - (p - 1) / 2 for j in range(int(p))], dtype=input.dtype)
        terms = lgamma(offsets + input.unsqueeze(-1))
        return terms.sum(-1) + tensor(p * (p - 1) * math.log(math.pi) / 4, dtype=input.dtype)
    return dispatch(X.mvlgamma, (input,), (("p", int(p)),))


def igamma(input, other):
    """The regularised lower incomplete gamma function `P(input, other)`.

    Example:
        >>> tp.igamma(tp.tensor([1.0, 2.0]), tp.tensor([1.0, 1.0]))
        tensor([0.6321, 0.2642])
    """
    tensor_arg("igamma", "other", other)
    return dispatch(X.igamma, _common("igamma_cpu", input, other, ints="refuse", complex_ok=False))


def igammac(input, other):
    """The regularised upper incomplete gamma function `Q(input, other) = 1 - P(input, other)`.

    Example:
        >>> tp.igammac(tp.tensor([1.0, 2.0]), tp.tensor([1.0, 1.0]))
        tensor([0.3679, 0.7358])
    """
    tensor_arg("igammac", "other", other)
    return dispatch(X.igammac, _common("igammac_cpu", input, other, ints="refuse", complex_ok=False))


def nextafter(input, other):
    """The next floating-point value after `input` towards `other`.

    Example:
        >>> tp.nextafter(tp.tensor([1.0], dtype=tp.float64), tp.tensor([2.0], dtype=tp.float64)) - 1
        tensor([2.2204e-16], dtype=tapeflow.float64)
    """
    tensor_arg("nextafter", "other", other)
    return dispatch(X.nextafter, _common("nextafter_cpu", input, _t(other), ints="refuse", complex_ok=False))


def frexp(input):
    """Mantissa and exponent: `input = mantissa * 2 ** exponent`, `0.5 <= |mantissa| < 1` (exponent int32).

    Example:
        >>> tp.frexp(tp.tensor([8.0, 0.75]))
        frexp(mantissa=tensor([0.5000, 0.7500]), exponent=tensor([4, 0], dtype=tapeflow.int32))
    """
    from .reduce import return_types

    input = _t(input)
    if input._raw.dtype.kind != "f" and input.dtype is not _dtype.bfloat16:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return return_types.frexp(*dispatch(X.frexp, (input,)))


def ldexp(input, other):
    """`input * 2 ** other`.

    Example:
        >>> tp.ldexp(tp.tensor([1.0, 3.0]), tp.tensor([2, 3]))
        tensor([ 4., 24.])
    """
    tensor_arg("ldexp", "other", other)
    from .._toplevel import result_type

    input, other = _t(input), _t(other)
    if other._raw.dtype == bool and input.dtype.is_floating_point:  # (PyTorch's kernel refuses bool exponents there)
        raise _kernel("ldexp_cpu_exp")("bool")
    dt = result_type(input, other)  # the dtypes' promotion; an integral one computes in the default float dtype
    if not (dt.is_floating_point or dt.is_complex):
        dt = _dtype.get_default_dtype()
    wide = _dtype.float32 if dt in (_dtype.float16, _dtype.bfloat16) else dt  # (2 ** other may overflow a half)
    out = dispatch(X.ldexp, (input.to(wide), other.to(wide)))
    return out if wide is dt else out.to(dt)


def bitwise_left_shift(input, other):
    """Shift the bits of integers left by `other`.

    Example:
        >>> tp.bitwise_left_shift(tp.tensor([1, 3]), 2)
        tensor([ 4, 12])
    """
    return dispatch(X.bitwise_left_shift, _common("lshift_cpu", input, other, bool_ok=False, complex_ok=False,
                                                  floats_ok=False))


def bitwise_right_shift(input, other):
    """Shift the bits of integers right by `other` (arithmetic for signed integers).

    Example:
        >>> tp.bitwise_right_shift(tp.tensor([16, -16]), 2)
        tensor([ 4, -4])
    """
    return dispatch(X.bitwise_right_shift, _common("rshift_cpu", input, other, bool_ok=False, complex_ok=False,
                                                   floats_ok=False))


def erfcx(input):
    """The scaled complementary error function `exp(x ** 2) * erfc(x)`.

    Example:
        >>> tp.special.erfcx(tp.tensor([0.0, 1.0]))
        tensor([1.0000, 0.4276])
    """
    return dispatch(X.erfcx, (_to_float(_t(input)),))


def ndtr(input):
    """The standard normal cumulative distribution function.

    Example:
        >>> tp.special.ndtr(tp.tensor([0.0, 1.0]))
        tensor([0.5000, 0.8413])
    """
    return dispatch(X.ndtr, (_to_float(_t(input)),))


def ndtri(input):
    """The inverse of `ndtr` (the standard normal quantile function).

    Example:
        >>> tp.special.ndtri(tp.tensor([0.5, 0.975]))
        tensor([0.0000, 1.9600])
    """
    return dispatch(X.ndtri, (_to_float(_t(input)),))


def log_ndtr(input):
    """`log(ndtr(input))`, accurate far into the lower tail.

    Example:
        >>> tp.special.log_ndtr(tp.tensor([0.0, -10.0]))
        tensor([ -0.6931, -53.2313])
    """
    return dispatch(X.log_ndtr, (_to_float(_t(input)),))


def zeta(input, other):
    """The Hurwitz zeta function `sum_k (k + other) ** -input`.

    Example:
        >>> tp.special.zeta(tp.tensor([2.0]), tp.tensor([1.0]))
        tensor([1.6449])
    """
    return _number_first(X.zeta, "zeta_cpu", input, other)
