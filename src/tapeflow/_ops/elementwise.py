"""Arithmetic, unary maths, comparisons and casts."""

from __future__ import annotations

import builtins
import numbers
import warnings

import jax.numpy as jnp
import numpy as np

import xla_ops as X

from .. import _dtype, _layout
from .._dispatch import dispatch
from .._tensor import Tensor, as_tensor
from ._args import _common, _kind_of, _operand, _pair, _t, _to_float, _unsupported, result_dtype
from ._checks import broadcast_first, check_int_divisor, tensor_arg
from ._dtype_rules import _kernel
from .unary import _example_doc

__all__ = [
    "add", "addcdiv", "addcmul", "allclose", "arctan2", "atan2", "bitwise_not", "clamp",
    "clamp_max", "clamp_min", "clip", "clone", "conj", "conj_physical", "div", "divide", "equal", "float_power", "floor_divide",
    "fmax", "fmin",
    "fmod", "hypot", "isclose", "isfinite", "isinf", "isnan", "lerp", "logical_not", "masked_fill", "maximum",
    "minimum", "mul", "multiply", "neg", "negative", "positive", "pow", "rdiv", "remainder",
    "resolve_conj", "rsub", "sub", "subtract", "to_dtype", "true_divide", "where",
]


# -- arithmetic ---------------------------------------------------------------------------------
def add(input, other, *deprecated, alpha=1):
    """`input + alpha * other`, broadcasting. (PyTorch's deprecated `add(input, alpha, other)` warns, and gives
    the same.)

    Example:
        >>> tp.add(tp.tensor([1., 2.]), tp.tensor([10., 20.]), alpha=2)
        tensor([21., 42.])
    """
    if deprecated:
        alpha, (other,) = number_first("add", other, deprecated, stacklevel=4)
    if type(alpha) is int and alpha == 1:
        return dispatch(X.add, _pair(_t(input), other))
    pair = _pair(_t(input), other)
    alpha = _alpha(alpha, pair)
    if alpha is True or (type(alpha) is int and alpha == 1):
        return dispatch(X.add, pair)
    return dispatch(X.add, pair, (("alpha", alpha),))


def sub(input, other, *deprecated, alpha=1):
    """`input - alpha * other`, broadcasting. (PyTorch's deprecated `sub(input, alpha, other)` warns, and gives
    the same.)

    Example:
        >>> tp.sub(tp.tensor([5.0, 5.0]), tp.tensor([1.0, 2.0]), alpha=2)
        tensor([3., 1.])
    """
    if deprecated:
        alpha, (other,) = number_first("sub", other, deprecated, stacklevel=4)
    input = _t(input)
    _no_bool_sub(input, other)
    if type(alpha) is int and alpha == 1:
        return dispatch(X.sub, _pair(input, other))
    pair = _pair(input, other)
    return dispatch(X.sub, pair, (("alpha", _alpha(alpha, pair)),))


# PyTorch's deprecated overloads that take the scaling number before the tensors: (scaling keyword, tensors).
_NUMBER_FIRST = {"add": ("alpha", ("other",)), "sub": ("alpha", ("other",)),
                 "addcmul": ("value", ("tensor1", "tensor2")), "addcdiv": ("value", ("tensor1", "tensor2"))}


def number_first(name: str, number, rest: tuple, method: str | None = None, stacklevel: int = 3) -> tuple:
    """`(number, rest)` for a call of PyTorch's deprecated overload `name(input, number, *rest)` (or the method
    `method` of a tensor), with its warning; a TypeError as Python's for any other extra argument."""
    what, tensors = _NUMBER_FIRST[name]
    if len(rest) != len(tensors) or isinstance(number, Tensor) or not isinstance(number, numbers.Number):
        takes, given = len(tensors) + (0 if method else 1), len(rest) + (1 if method else 2)
        raise TypeError(f"{method or name}() takes {takes} positional argument{'s' if takes > 1 else ''} but {given} "
                        "were given")
    listed = ", ".join(f"Tensor {t}" for t in tensors)
    if method:
        old, new = f"{method}(Number {what}, {listed})", f"{method}({listed}, *, Number {what} = 1)"
    else:
        old = f"{name}(Tensor input, Number {what}, {listed}, *, Tensor out = None)"
        new = f"{name}(Tensor input, {listed}, *, Number {what} = 1, Tensor out = None)"
    message = f"This overload of {method or name} is deprecated:\n\t{old}\nConsider using one of the following " \
              f"signatures instead:\n\t{new}"
    if message not in _warned_overloads:  # (once per process, as PyTorch warns: old optimizers call it every step)
        _warned_overloads.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)
    return number, rest


_warned_overloads: set = set()


def _alpha(alpha, pair):
    """`alpha` as PyTorch's add/sub kernels take it: in the result's dtype when that is float16 or bfloat16
    (`add(x, y, alpha=0.3)` in bfloat16 scales by 0.30078125)."""
    dt = result_dtype(*pair)
    if isinstance(alpha, Tensor):
        alpha = alpha.item()
    elif isinstance(alpha, np.generic):
        alpha = alpha.item()
    # PyTorch's checks of alpha against the result's dtype
    if isinstance(alpha, builtins.bool) and dt.name != "bool":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt.kind not in "fc" and dt.name != "bfloat16" and not isinstance(alpha, int):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dt.kind != "c" and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    if dt.name == "bool":
        return builtins.bool(alpha)  # (a bool result: `a + alpha * b` is `a or (alpha and b)`)
    if dt.name in ("float16", "bfloat16") and isinstance(alpha, builtins.float):
        return builtins.float(np.asarray(alpha).astype(dt))
    return alpha


subtract = sub


def rsub(input, other, *, alpha=1):
    """`other - alpha * input` (the reflected subtraction).

    Example:
        >>> tp.rsub(tp.tensor([1.0, 2.0]), 10)
        tensor([9., 8.])
    """
    input = _t(input)
    if not (type(alpha) is int and alpha == 1):
        _alpha(alpha, _pair(input, other))  # (PyTorch's checks of alpha)
        return sub(other, input * alpha)
    _no_bool_sub(input, other)
    return dispatch(X.rsub, _pair(input, other))


def mul(input, other):
    """Elementwise product, broadcasting.

    Example:
        >>> tp.mul(tp.tensor([1.0, 2.0]), 3)
        tensor([3., 6.])
    """
    return dispatch(X.mul, _pair(_t(input), other))


multiply = mul


def div(input, other, *, rounding_mode=None):
    """True division (integer inputs give floats); `rounding_mode="trunc"|"floor"` rounds.

    Example:
        >>> tp.div(tp.tensor([7, -7]), 2)
        tensor([ 3.5000, -3.5000])
        >>> tp.div(tp.tensor([7, -7]), 2, rounding_mode="floor")
        tensor([ 3, -4])
    """
    input = _t(input)
    if rounding_mode is not None:
        if rounding_mode in ("floor", "trunc"):
            a, b = _common(f"div_{rounding_mode}_cpu", input, other, complex_ok=False, bool_ok=False)
            check_int_divisor(input, other)
            rd = _result_dtype(a, b)
            if not (rd.is_floating_point or rd.is_complex):  # (integer division: both operands in its dtype)
                a, b = (t.to(rd) if isinstance(t, Tensor) else as_tensor(t, dtype=rd) for t in (a, b))
            return dispatch(X.div_rounded, (a, b), (("mode", rounding_mode),))
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    if input._raw.dtype.kind in "iub" and (not isinstance(other, Tensor) or other._raw.dtype.kind in "iub") \
            and type(other) is not builtins.float:
        input = _to_float(input)
    return dispatch(X.div, _pair(input, other))


divide = true_divide = div


def _no_bool_sub(input: Tensor, other) -> None:
    a = input._raw.dtype.kind == "b"
    b = other._raw.dtype.kind == "b" if isinstance(other, Tensor) else type(other) is builtins.bool
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
    """Division rounded down (as Python's `//`); integer division by zero raises.

    Example:
        >>> tp.floor_divide(tp.tensor([7, -7]), 2)
        tensor([ 3, -4])
    """
    input, other_ = _common("div_floor_cpu", input, other, complex_ok=False, bool_ok=False)
    check_int_divisor(input, other)
    return dispatch(X.floor_divide, (input, other_))


def rdiv(input, other):
    """`other / input` (the reflected division).

    Example:
        >>> tp.rdiv(tp.tensor([1.0, 4.0]), 2)
        tensor([2.0000, 0.5000])
    """
    input = _t(input)
    return div(as_tensor(other, dtype=input.dtype if input.dtype.is_floating_point else None), input)


def pow(input, exponent):
    """`input ** exponent`; a Python-number exponent records `PowBackward0`.

    Example:
        >>> tp.pow(tp.tensor([1.0, 2.0, 3.0]), 2)
        tensor([1., 4., 9.])
        >>> tp.pow(2, tp.tensor([1.0, 2.0, 3.0]))
        tensor([2., 4., 8.])
    """
    if not isinstance(input, Tensor):
        exponent = _t(exponent)
        if exponent._raw.dtype.kind == "b" and isinstance(input, builtins.bool):
            raise _kernel("pow")("bool")
        return dispatch(X.rpow, (exponent, _operand(exponent, input)))
    if input._raw.dtype.kind == "b" and isinstance(exponent, builtins.bool):
        # (PyTorch keeps bool: x ** True is x, x ** False is all True)
        return input.clone() if exponent else _ops_ones_like(input)
    if input._raw.dtype.kind in "iu":
        _no_negative_integer_powers(exponent)
    if isinstance(exponent, Tensor):
        return dispatch(X.pow, _common("pow", input, exponent, bool_ok=False))
    if exponent == 2 and input._raw.dtype.kind in "fc":
        return dispatch(X.square, (input,))
    return dispatch(X.pow_scalar, (input, _operand(input, exponent)))


def _ops_ones_like(t):
    from .._factories import ones_like

    return ones_like(t)


def _no_negative_integer_powers(exponent) -> None:
    """PyTorch refuses an integer base with a negative Python-integer exponent (a tensor exponent gives 0, or +-1
    for a base of +-1, as integer division would)."""
    if isinstance(exponent, int) and not isinstance(exponent, builtins.bool) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def float_power(input, exponent):
    """`input ** exponent` computed in float64.

    Example:
        >>> tp.float_power(tp.tensor([2, 3]), 2)
        tensor([4., 9.], dtype=tapeflow.float64)
    """
    input = _t(input)
    complex_ = input._raw.dtype.kind == "c" or (isinstance(exponent, Tensor) and exponent._raw.dtype.kind == "c") \
        or type(exponent) is builtins.complex
    wide = _dtype.complex128 if complex_ else _dtype.float64
    return pow(input.to(wide), exponent.to(wide) if isinstance(exponent, Tensor) else exponent)


def remainder(input, other):
    """Remainder of division with the sign of `other` (Python's `%`).

    Example:
        >>> tp.remainder(tp.tensor([-3.0, 3.0]), 2)
        tensor([1., 1.])
    """
    input, other_ = _common("remainder_cpu", input, other, complex_ok=False, bool_ok=False)
    check_int_divisor(input, other)
    return dispatch(X.remainder, (input, other_))


def fmod(input, other):
    """Remainder of division with the sign of `input` (C's `fmod`).

    Example:
        >>> tp.fmod(tp.tensor([-3.0, 3.0]), 2)
        tensor([-1.,  1.])
    """
    input, other_ = _common("fmod_cpu", input, other, complex_ok=False, bool_ok=False)
    check_int_divisor(input, other)
    return dispatch(X.fmod, (input, other_))


def atan2(input, other):
    """Elementwise angle of the point `(other, input)`, in radians (`arctan2` is the same function).

    Example:
        >>> tp.atan2(tp.tensor([1.0, -1.0]), tp.tensor([1.0, 1.0]))
        tensor([ 0.7854, -0.7854])
    """
    tensor_arg("atan2", "other", other)
    return dispatch(X.atan2, _common("atan2_cpu", input, _t(other), ints="float", complex_ok=False))


arctan2 = atan2


def hypot(input, other):
    """Elementwise `sqrt(input ** 2 + other ** 2)`.

    Example:
        >>> tp.hypot(tp.tensor([3.0]), tp.tensor([4.0]))
        tensor([5.])
    """
    tensor_arg("hypot", "other", other)
    return dispatch(X.hypot, _common("hypot_cpu", input, _t(other), ints="refuse", complex_ok=False))


def _ordered(name, input, other):
    a, b = _pair(_t(input), _t(other))
    if a._raw.dtype.kind == "c" or b._raw.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return a, b


def maximum(input, other):
    """Elementwise maximum, broadcasting; NaN wins (see `fmax`).

    Example:
        >>> tp.maximum(tp.tensor([1.0, 5.0]), tp.tensor([3.0, 2.0]))
        tensor([3., 5.])
    """
    tensor_arg("maximum", "other", other)
    return dispatch(X.maximum, _ordered("maximum", input, other))


def minimum(input, other):
    """Elementwise minimum, broadcasting; NaN wins (see `fmin`).

    Example:
        >>> tp.minimum(tp.tensor([1.0, 5.0]), tp.tensor([3.0, 2.0]))
        tensor([1., 2.])
    """
    tensor_arg("minimum", "other", other)
    return dispatch(X.minimum, _ordered("minimum", input, other))




def fmax(input, other):
    """`maximum` that ignores NaN: where one side is NaN the other is taken.

    Example:
        >>> tp.fmax(tp.tensor([1.0, float("nan")]), tp.tensor([0.0, 2.0]))
        tensor([1., 2.])
    """
    tensor_arg("fmax", "other", other)
    return dispatch(X.fmax, _ordered("fmax", input, other))


def fmin(input, other):
    """`minimum` that ignores NaN: where one side is NaN the other is taken.

    Example:
        >>> tp.fmin(tp.tensor([1.0, float("nan")]), tp.tensor([0.0, 2.0]))
        tensor([0., 2.])
    """
    tensor_arg("fmin", "other", other)
    return dispatch(X.fmin, _ordered("fmin", input, other))


def neg(input):
    """Elementwise `-input` (`negative` is the same function).

    Example:
        >>> tp.neg(tp.tensor([1.0, -2.0]))
        tensor([-1.,  2.])
    """
    if input.dtype is _dtype.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return dispatch(X.neg, (input,))


negative = neg


def conj(input):
    """The complex conjugate; a real tensor is returned as it is (as PyTorch does).

    Example:
        >>> tp.conj(tp.tensor([1 + 2j]))
        tensor([1.-2.j])
    """
    return dispatch(X.conj, (input,)) if input.dtype.is_complex else input


conj_physical = conj


def resolve_conj(input):
    """`input` itself: conjugation is never lazy in tapeflow.

    Example:
        >>> tp.resolve_conj(tp.tensor([1 + 2j]))
        tensor([1.+2.j])
    """
    return input  # conjugation is never lazy here


def positive(input):
    """`input` itself (for symmetry with `neg`).

    Example:
        >>> tp.positive(tp.tensor([1.0, -2.0]))
        tensor([ 1., -2.])
    """
    return input


def lerp(input, end, weight):
    """`input + weight * (end - input)`; `weight` is a number or a Tensor.

    Example:
        >>> tp.lerp(tp.tensor([0.0, 10.0]), tp.tensor([1.0, 20.0]), 0.25)
        tensor([ 0.2500, 12.5000])
    """
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp() received an invalid combination of arguments - got (Tensor, {type(end).__name__}, "
                        f"{type(weight).__name__}), but expected one of: (Tensor input, Tensor end, Tensor weight) or "
                        "(Tensor input, Tensor end, Number weight)")
    if isinstance(weight, Tensor) and weight._raw.ndim == 0 and weight._raw.dtype != input._raw.dtype:
        weight = weight.to(input.dtype)  # (a 0-d weight is taken in the input's dtype, as PyTorch takes it)
    for what, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t._raw.dtype != input._raw.dtype:
            c = _dtype.CPP_NAMES
            raise RuntimeError(f"expected dtype {c[input.dtype.name]} for `{what}` but got dtype {c[t.dtype.name]}")
    if input._raw.dtype.kind not in "fcV":
        raise _unsupported("lerp_kernel_scalar" if not isinstance(weight, Tensor) else "lerp_kernel_tensor",
                           input._raw.dtype)
    if isinstance(weight, Tensor):
        return dispatch(X.lerp, (input, end, weight))
    return dispatch(X.lerp_scalar, (input, end), (("weight", builtins.float(weight)),))


def addcmul(input, tensor1, tensor2, *deprecated, value=1):
    """`input + value * tensor1 * tensor2`, broadcasting. (PyTorch's deprecated `addcmul(input, value, tensor1,
    tensor2)` warns, and gives the same.)

    Example:
        >>> tp.addcmul(tp.ones(2), tp.tensor([1., 2.]), tp.tensor([3., 4.]), value=0.5)
        tensor([2.5000, 5.0000])
    """
    if deprecated:
        value, (tensor1, tensor2) = number_first("addcmul", tensor1, (tensor2, *deprecated), stacklevel=4)
    return _addc("addcmul", X.addcmul, input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *deprecated, value=1):
    """`input + value * tensor1 / tensor2`, broadcasting. (PyTorch's deprecated `addcdiv(input, value, tensor1,
    tensor2)` warns, and gives the same.)

    Example:
        >>> tp.addcdiv(tp.ones(2), tp.tensor([1., 2.]), tp.tensor([4., 4.]), value=2)
        tensor([1.5000, 2.0000])
    """
    if deprecated:
        value, (tensor1, tensor2) = number_first("addcdiv", tensor1, (tensor2, *deprecated), stacklevel=4)
    return _addc("addcdiv", X.addcdiv, input, tensor1, tensor2, value)


_INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
    "tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * "
    "tensor1 / tensor2), for all dtypes.")


def _addc(kind, op, input, tensor1, tensor2, value):
    """`addcmul`/`addcdiv` as one op (PyTorch's one kernel and graph node): the three tensors in their result
    dtype, `value` taken in it (truncated for integers; a complex one refused for real tensors)."""
    for name, pos, t in (("input", 1, input), ("tensor1", 2, tensor1), ("tensor2", 3, tensor2)):
        tensor_arg(kind, name, t, pos)
    if kind == "addcdiv" and tensor1._raw.dtype.kind in "biu" and tensor2._raw.dtype.kind in "biu":
        raise RuntimeError(_INTEGER_ADDCDIV)
    dt = result_dtype(input, tensor1, tensor2)
    if dt == np.bool_:
        raise NotImplementedError(f'"{kind}_cpu_out" not implemented for \'Bool\'')
    if isinstance(value, complex) and dt.kind != "c":
        raise RuntimeError(f"value cannot be converted to type {_VALUE_TYPES.get(dt.name, _dtype.CPP_NAMES.get(dt.name))}"
                           " without overflow")
    if dt.kind in "iu":
        value = builtins.int(value)
    input, tensor1, tensor2 = (t if t._raw.dtype == dt else t.to(_dtype.from_jax_dtype(dt))
                               for t in (input, tensor1, tensor2))
    return dispatch(op, (input, tensor1, tensor2), (("value", value),) if value != 1 else ())


_VALUE_TYPES = {"int64": "int64_t", "int32": "int32_t", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


# -- clamping and selection --------------------------------------------------------------------
def clamp(input, min=None, max=None):
    """Clamp into [min, max]; bounds may be numbers or tensors. The gradient passes where min <= x <= max.

    Example:
        >>> tp.clamp(tp.tensor([-2.0, 0.5, 3.0]), min=-1.0, max=1.0)
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise RuntimeError(f"{_dtype.PREFIX[0]}.clamp: At least one of 'min' or 'max' must not be None")
    kernel = "clamp" if min is not None and max is not None else "maximum" if max is None else "minimum"
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_by_tensors(X.clamp, kernel, input, min, max)
    if builtins.complex in (type(min), type(max)) and input._raw.dtype.kind in "fV":
        raise RuntimeError("value cannot be converted to type double without overflow")  # (PyTorch's words)
    rt = result_dtype(input, min, max)
    if rt.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if rt.kind != "b":  # (PyTorch's check that the result dtype holds a bound)
        for bound in (min, max):
            _dtype.check_number_fits(bound, rt)
    if rt.kind == "b":
        raise _unsupported({"clamp": "clamp_scalar_cpu", "maximum": "clamp_min_scalar_cpu",
                            "minimum": "clamp_max_scalar_cpu"}[kernel], input._raw.dtype)
    return dispatch(X.clamp_scalar, (input, _operand(input, min), _operand(input, max)))


def _clamp_by_tensors(op, kernel: str, input, *bounds):
    """`op(input, *bounds)` with at least one tensor bound, computed in PyTorch's result dtype of all operands."""
    dt = result_dtype(input, *bounds)
    if dt.kind == "c":
        raise _unsupported(f"{kernel}_cpu", dt)
    input, *bounds = (t.to(_dtype.from_jax_dtype(dt)) if isinstance(t, Tensor) and t._raw.dtype != dt else t
                      for t in (input, *bounds))
    return dispatch(op, (input, *(_operand(input, b) for b in bounds)))


clip = clamp


def clamp_min(input, min):
    """`max(input, min)` elementwise; the gradient passes where `input >= min`.

    Example:
        >>> tp.clamp_min(tp.tensor([-2.0, 0.5, 3.0]), 0.0)
        tensor([0.0000, 0.5000, 3.0000])
    """
    if type(min) is builtins.complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if isinstance(min, Tensor):
        return _clamp_by_tensors(X.clamp_min_tensor, "maximum", input, min)
    if not input.dtype.is_floating_point:
        return clamp(input, min=min)
    return dispatch(X.clamp_min, (input, _operand(input, min)))


def clamp_max(input, max):
    """`min(input, max)` elementwise; the gradient passes where `input <= max`.

    Example:
        >>> tp.clamp_max(tp.tensor([-2.0, 0.5, 3.0]), 1.0)
        tensor([-2.0000,  0.5000,  1.0000])
    """
    if type(max) is builtins.complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if isinstance(max, Tensor):
        return _clamp_by_tensors(X.clamp_max_tensor, "minimum", input, max)
    if not input.dtype.is_floating_point:
        return clamp(input, max=max)
    return dispatch(X.clamp_max, (input, _operand(input, max)))


def where(condition, input=None, other=None):
    """`input` where `condition` holds, else `other` (broadcasting). One argument: `nonzero(as_tuple=True)`.

    Example:
        >>> x = tp.tensor([-1.0, 2.0, -3.0])
        >>> tp.where(x > 0, x, tp.zeros(3))
        tensor([0., 2., 0.])
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = _t(condition)
    if cond.dtype is not _dtype.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_dtype.SCALAR_NAMES[cond.dtype.name]}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = as_tensor(input)
    if isinstance(input, Tensor):
        input, other = _pair(input, other)
    else:
        other, input = _pair(other, input)
    return dispatch(X.where, (cond, input, other))


def masked_fill(input, mask, value):
    """`value` where `mask` is true.

    Example:
        >>> tp.masked_fill(tp.zeros(3), tp.tensor([True, False, True]), 5.0)
        tensor([5., 0., 5.])
    """
    mask = _t(mask)
    if mask.dtype is not _dtype.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.CPP_NAMES[mask.dtype.name]}")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if isinstance(input, Tensor):
        if isinstance(value, Tensor) and value._raw.dtype.kind == "c" and input._raw.dtype.kind not in "bc":
            _dtype.check_number_fits(value.item(), input._raw.dtype)  # (PyTorch reads a complex value to check it)
        value = _dtype.check_number_fits(value, input._raw.dtype)
    return dispatch(X.masked_fill, (input, mask, value))


# -- comparisons and logic (never differentiable) -------------------------------------------------
def _no_complex(name, a, b) -> None:
    """Complex numbers have no order: PyTorch refuses them in <, <=, >, >=."""
    dt = _kind_of(a, b)
    if dt.kind == "c":
        broadcast_first(a, b)
        raise _unsupported(f"{name}_cpu", dt)



def _cmp(op, name):
    bitwise = name.startswith("bitwise")

    ordered = name in ("lt", "le", "gt", "ge")

    logical = name.startswith("logical_")

    def f(input, other):
        if logical:
            tensor_arg(name, "other", other)  # (PyTorch's logical ops take no numbers)
        a, b = _pair(_t(input), other)
        if bitwise:  # (PyTorch's message names the promoted type)
            if _kind_of(a, b).kind in "fcV":
                broadcast_first(a, b)
                raise _unsupported(f"{name}_cpu", _kind_of(a, b))
        elif ordered:
            _no_complex(name, a, b)
        return dispatch(op, (a, b))
    f.__name__ = f.__qualname__ = name
    summary, example, other, result = _COMPARISON_DOCS[name]
    f.__doc__ = _example_doc(f"Elementwise {summary}, broadcasting.", f"tp.{name}(tp.tensor({example}), {other})", result)
    return f


# name: (what it computes, an example input, the other operand, what tapeflow prints).
_COMPARISON_DOCS = {
    "eq": ("`input == other`", "[1, 2, 3]", "2", "tensor([False,  True, False])"),
    "ne": ("`input != other` (`not_equal` is the same function)", "[1, 2, 3]", "2", "tensor([ True, False,  True])"),
    "lt": ("`input < other` (`less` is the same function)", "[1, 2, 3]", "2", "tensor([ True, False, False])"),
    "le": ("`input <= other` (`less_equal` is the same function)", "[1, 2, 3]", "2", "tensor([ True,  True, False])"),
    "gt": ("`input > other` (`greater` is the same function)", "[1, 2, 3]", "2", "tensor([False, False,  True])"),
    "ge": ("`input >= other` (`greater_equal` is the same function)", "[1, 2, 3]", "2", "tensor([False,  True,  True])"),
    "logical_and": ("logical AND; nonzero counts as true", "[1, 1, 0]", "tp.tensor([1, 0, 0])", "tensor([ True, False, False])"),
    "logical_or": ("logical OR; nonzero counts as true", "[1, 1, 0]", "tp.tensor([1, 0, 0])", "tensor([ True,  True, False])"),
    "logical_xor": ("logical exclusive OR; nonzero counts as true", "[1, 1, 0]", "tp.tensor([1, 0, 0])", "tensor([False,  True, False])"),
    "bitwise_and": ("bitwise AND of integer or bool tensors (`&`)", "[12, 10]", "tp.tensor([10, 6])", "tensor([8, 2])"),
    "bitwise_or": ("bitwise OR of integer or bool tensors (`|`)", "[12, 10]", "tp.tensor([10, 6])", "tensor([14, 14])"),
    "bitwise_xor": ("bitwise exclusive OR of integer or bool tensors (`^`)", "[12, 10]", "tp.tensor([10, 6])", "tensor([ 6, 12])"),
}


_COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and",
                "bitwise_or", "bitwise_xor"]
for _name in _COMPARISONS:
    globals()[_name] = _cmp(getattr(X, _name), _name)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne  # noqa: F821
__all__ += [*_COMPARISONS, "greater", "greater_equal", "less", "less_equal", "not_equal"]  # made in the loop above


def _integral(name: str, *tensors) -> None:
    """Bitwise NOT takes integers and bools."""
    for t in tensors:
        if isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex):
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype.SCALAR_NAMES[t.dtype.name]}\'')


def logical_not(input):
    """Elementwise logical NOT; nonzero counts as true.

    Example:
        >>> tp.logical_not(tp.tensor([0, 1, 2]))
        tensor([ True, False, False])
    """
    return dispatch(X.logical_not, (input,))


def bitwise_not(input):
    """Elementwise bitwise NOT of an integer or bool tensor.

    Example:
        >>> tp.bitwise_not(tp.tensor([0, 5, -1]))
        tensor([-1, -6,  0])
    """
    _integral("bitwise_not", input)
    return dispatch(X.bitwise_not, (input,))


def isnan(input):
    """Elementwise test for NaN.

    Example:
        >>> tp.isnan(tp.tensor([1.0, float("nan")]))
        tensor([False,  True])
    """
    return dispatch(X.isnan, (input,))


def isinf(input):
    """Elementwise test for positive or negative infinity.

    Example:
        >>> tp.isinf(tp.tensor([1.0, float("-inf"), float("nan")]))
        tensor([False,  True, False])
    """
    return dispatch(X.isinf, (input,))


def isfinite(input):
    """Elementwise test for finite values (not NaN, not infinite).

    Example:
        >>> tp.isfinite(tp.tensor([1.0, float("inf"), float("nan")]))
        tensor([ True, False, False])
    """
    return dispatch(X.isfinite, (input,))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise `|input - other| <= atol + rtol * |other|`, a bool tensor.

    Example:
        >>> tp.isclose(tp.tensor([1.0, 2.0]), tp.tensor([1.0, 2.1]))
        tensor([ True, False])
    """
    other = _t(other)
    if input._raw.dtype != other._raw.dtype:
        raise RuntimeError(f"{_dtype.SCALAR_NAMES.get(str(input._raw.dtype))} did not match "
                           f"{_dtype.SCALAR_NAMES.get(str(other._raw.dtype))}")
    return dispatch(X.isclose, (input, other), (("rtol", rtol), ("atol", atol), ("equal_nan", equal_nan)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> builtins.bool:
    """Whether every element satisfies `|input - other| <= atol + rtol * |other|` (a Python bool).

    Example:
        >>> tp.allclose(tp.tensor([1.0, 2.0]), tp.tensor([1.0, 2.0 + 1e-7]))
        True
    """
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other) -> builtins.bool:
    """Whether both tensors have the same shape and elements (a Python bool).

    Example:
        >>> tp.equal(tp.tensor([1, 2]), tp.tensor([1, 2]))
        True
    """
    tensor_arg("equal", "input", input, 1)
    tensor_arg("equal", "other", other)
    return tuple(input.shape) == tuple(other.shape) and builtins.bool((input == other).all())


# -- dtype and copies ------------------------------------------------------------------------------
def clone(input, *, memory_format=None):
    """A copy with its own storage; gradients flow back to `input`.

    Example:
        >>> x = tp.tensor([1.0, 2.0], requires_grad=True)
        >>> tp.clone(x)
        tensor([1., 2.], grad_fn=<CloneBackward0>)
    """
    if memory_format is not None:
        _layout.check_memory_format(memory_format, input.ndim)
    return dispatch(X.clone, (input,))


def to_dtype(input, dtype):
    """`input` converted to `dtype` (itself when it already has that dtype).

    Example:
        >>> tp.to_dtype(tp.tensor([1.7, -1.7]), tp.int64)
        tensor([ 1, -1])
    """
    jd = _dtype.to_jax_dtype(dtype)
    if input._raw.dtype == jd:
        return input
    return dispatch(X.to_dtype, (input,), (("dtype", jd),))


# Sibling modules import each other; importing at the end lets every name above exist first.
from .index import nonzero  # noqa: E402
