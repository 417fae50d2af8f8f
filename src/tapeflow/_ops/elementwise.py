"""Arithmetic, unary maths, comparisons and casts."""

from __future__ import annotations

import builtins

import jax.numpy as jnp

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._tensor import Tensor, as_tensor
from ._args import _operand, _pair, _t, _to_float
from ._checks import check_int_divisor

__all__ = [
    "absolute", "add", "addcdiv", "addcmul", "allclose", "arctan2", "atan2", "bitwise_not", "clamp",
    "clamp_max", "clamp_min", "clip", "clone", "conj", "conj_physical", "div", "divide", "equal", "fix", "float_power", "floor_divide",
    "fmax", "fmin",
    "fmod", "hypot", "isclose", "isfinite", "isinf", "isnan", "lerp", "logical_not", "masked_fill", "maximum",
    "minimum", "mul", "multiply", "nan_to_num", "neg", "negative", "positive", "pow", "rdiv", "remainder",
    "resolve_conj", "round", "rsub", "sub", "subtract", "to_dtype", "true_divide", "where",
]


# -- arithmetic ---------------------------------------------------------------------------------
def add(input, other, *, alpha=1):
    """`input + alpha * other`, broadcasting."""
    return dispatch(X.add, _pair(_t(input), other), (("alpha", alpha),) if alpha != 1 else ())


def sub(input, other, *, alpha=1):
    """`input - alpha * other`, broadcasting."""
    input = _t(input)
    _no_bool_sub(input, other)
    return dispatch(X.sub, _pair(input, other), (("alpha", alpha),) if alpha != 1 else ())


subtract = sub


def rsub(input, other, *, alpha=1):
    input = _t(input)
    if alpha != 1:
        return sub(other, input * alpha)
    _no_bool_sub(input, other)
    return dispatch(X.rsub, _pair(input, other))


def mul(input, other):
    """Elementwise product, broadcasting."""
    return dispatch(X.mul, _pair(_t(input), other))


multiply = mul


def div(input, other, *, rounding_mode=None):
    """True division (integer inputs give floats); `rounding_mode="trunc"|"floor"` rounds."""
    input = _t(input)
    if rounding_mode is not None:
        if rounding_mode == "floor":
            return floor_divide(input, other)
        if rounding_mode == "trunc":
            check_int_divisor(input, other)
            return trunc(div(input, other)).to(_result_dtype(input, other))  # noqa: F821
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    if input._data.dtype.kind in "iub" and (not isinstance(other, Tensor) or other._data.dtype.kind in "iub") \
            and type(other) is not builtins.float:
        input = _to_float(input)
    return dispatch(X.div, _pair(input, other))


divide = true_divide = div


def _no_bool_sub(input: Tensor, other) -> None:
    a = input._data.dtype.kind == "b"
    b = other._data.dtype.kind == "b" if isinstance(other, Tensor) else type(other) is builtins.bool
    if a and b and isinstance(other, Tensor):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _result_dtype(a, b):
    return _dtype.from_jax_dtype(jnp.result_type(a._data if isinstance(a, Tensor) else a,
                                                 b._data if isinstance(b, Tensor) else b))


def floor_divide(input, other):
    input = _t(input)
    check_int_divisor(input, other)
    return dispatch(X.floor_divide, _pair(input, other))


def rdiv(input, other):
    input = _t(input)
    return div(as_tensor(other, dtype=input.dtype if input.dtype.is_floating_point else None), input)


def pow(input, exponent):
    """`input ** exponent`; a Python-number exponent records `PowBackward0`."""
    if not isinstance(input, Tensor):
        exponent = _t(exponent)
        return dispatch(X.rpow, (exponent, _operand(exponent, input)))
    if isinstance(exponent, Tensor):
        return dispatch(X.pow, (input, exponent))
    if exponent == 2 and input._data.dtype.kind in "fc":
        return dispatch(X.square, (input,))
    return dispatch(X.pow_scalar, (input, _operand(input, exponent)))


def float_power(input, exponent):
    return pow(_t(input).double(), exponent)


def remainder(input, other):
    input = _t(input)
    check_int_divisor(input, other)
    return dispatch(X.remainder, _pair(input, other))


def fmod(input, other):
    input = _t(input)
    check_int_divisor(input, other)
    return dispatch(X.fmod, _pair(input, other))


def atan2(input, other):
    return dispatch(X.atan2, (_to_float(_t(input)), _t(other)))


arctan2 = atan2


def hypot(input, other):
    return dispatch(X.hypot, (_t(input), _t(other)))


def maximum(input, other):
    return dispatch(X.maximum, _pair(_t(input), _t(other)))


def minimum(input, other):
    return dispatch(X.minimum, _pair(_t(input), _t(other)))




def fmax(input, other):
    """`maximum` that ignores NaN: where one side is NaN the other is taken."""
    other = _t(other)
    return where(isnan(other), input, where(isnan(input), other, maximum(input, other)))


def fmin(input, other):
    """`minimum` that ignores NaN: where one side is NaN the other is taken."""
    other = _t(other)
    return where(isnan(other), input, where(isnan(input), other, minimum(input, other)))


def neg(input):
    return dispatch(X.neg, (input,))


negative = neg


def conj(input):
    """The complex conjugate; a real tensor is returned as it is (as PyTorch does)."""
    return dispatch(X.conj, (input,)) if input.dtype.is_complex else input


conj_physical = conj


def resolve_conj(input):
    return input  # conjugation is never lazy here


def positive(input):
    return input


def lerp(input, end, weight):
    """`input + weight * (end - input)`; `weight` is a number or a Tensor."""
    if isinstance(weight, Tensor):
        return dispatch(X.lerp, (input, end, weight))
    return dispatch(X.lerp_scalar, (input, end), (("weight", builtins.float(weight)),))


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 / tensor2


# -- unary maths (integer inputs promote to float where the result is fractional) -----------------
def _unary(op, floating: bool, name: str):
    if floating:
        def f(input):
            return dispatch(op, (_to_float(input),))
    else:
        def f(input):
            return dispatch(op, (input,))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise `{name}`. Example: `tp.{name}(tp.tensor([0.5]))`."
    return f


_FLOATING = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
             "tan", "tanh", "sigmoid", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf",
             "erfc", "erfinv", "lgamma", "digamma", "logit"]
_KEEP = ["abs", "sign", "floor", "ceil", "trunc", "frac", "relu", "square"]
for _name in _FLOATING + _KEEP:
    globals()[_name] = _unary(getattr(X, _name), _name in _FLOATING, _name)
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821
absolute = abs  # noqa: F821
fix = trunc  # noqa: F821


def round(input, *, decimals: int = 0):
    return dispatch(X.round, (input,), (("decimals", decimals),) if decimals else ())


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return dispatch(X.nan_to_num, (input,), (("nan", nan), ("posinf", posinf), ("neginf", neginf)))


def clamp(input, min=None, max=None):
    """Clamp into [min, max]; bounds may be numbers or tensors. The gradient passes where min <= x <= max."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    tensor_bounds = isinstance(min, Tensor) or isinstance(max, Tensor)
    return dispatch(X.clamp if tensor_bounds else X.clamp_scalar, (input, _operand(input, min), _operand(input, max)))


clip = clamp


def clamp_min(input, min):
    """`max(input, min)` elementwise; the gradient passes where `input >= min`."""
    if isinstance(min, Tensor) or not input.dtype.is_floating_point:
        return clamp(input, min=min)
    return dispatch(X.clamp_min, (input, _operand(input, min)))


def clamp_max(input, max):
    """`min(input, max)` elementwise; the gradient passes where `input <= max`."""
    if isinstance(max, Tensor) or not input.dtype.is_floating_point:
        return clamp(input, max=max)
    return dispatch(X.clamp_max, (input, _operand(input, max)))


def where(condition, input=None, other=None):
    """`input` where `condition` holds, else `other` (broadcasting). One argument: `nonzero(as_tuple=True)`."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = _t(condition)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = as_tensor(input)
    if isinstance(input, Tensor):
        input, other = _pair(input, other)
    else:
        other, input = _pair(other, input)
    return dispatch(X.where, (cond, input, other))


def masked_fill(input, mask, value):
    """`value` where `mask` is true."""
    return dispatch(X.masked_fill, (input, _t(mask), value))


# -- comparisons and logic (never differentiable) -------------------------------------------------
def _cmp(op, name):
    def f(input, other):
        return dispatch(op, _pair(_t(input), other))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise `{name}`, a bool tensor."
    return f


_COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and",
                "bitwise_or", "bitwise_xor"]
for _name in _COMPARISONS:
    globals()[_name] = _cmp(getattr(X, _name), _name)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne  # noqa: F821
__all__ += [*_FLOATING, *_KEEP, *_COMPARISONS,  # the functions made in the loops above, and their aliases
            "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute", "fix",
            "greater", "greater_equal", "less", "less_equal", "not_equal"]


def logical_not(input):
    return dispatch(X.logical_not, (input,))


def bitwise_not(input):
    return dispatch(X.bitwise_not, (input,))


def isnan(input):
    return dispatch(X.isnan, (input,))


def isinf(input):
    return dispatch(X.isinf, (input,))


def isfinite(input):
    return dispatch(X.isfinite, (input,))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return dispatch(X.isclose, (input, _t(other)), (("rtol", rtol), ("atol", atol), ("equal_nan", equal_nan)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> builtins.bool:
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other) -> builtins.bool:
    return tuple(input.shape) == tuple(other.shape) and builtins.bool((input == other).all())


# -- dtype and copies ------------------------------------------------------------------------------
def clone(input, *, memory_format=None):
    """A copy with its own storage; gradients flow back to `input`."""
    return dispatch(X.clone, (input,))


def to_dtype(input, dtype):
    jd = _dtype.to_jax_dtype(dtype)
    if input._data.dtype == jd:
        return input
    return dispatch(X.to_dtype, (input,), (("dtype", jd),))


# Sibling modules import each other; importing at the end lets every name above exist first.
from .index import nonzero  # noqa: E402
