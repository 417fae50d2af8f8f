"""Argument normalisation shared by the op namespace: dims, operands, float promotion."""

from __future__ import annotations

import builtins
import functools

import jax.numpy as jnp
import numpy as np

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._tensor import Tensor, as_tensor
from ._checks import broadcast_first


def _dim(d: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def one_element_dims(pos: int | None, name: str = "dim", default=None):
    """Decorator: a 0-d input given a dim (`dim` at `pos` among the arguments after the input, or by keyword;
    `default` when not given). PyTorch reads dim 0 / -1 of a 0-d tensor as that of its one element: the function
    runs on the input as a one-element vector and its results are 0-d again (any other dim raises PyTorch's
    IndexError)."""
    def decorate(fn):
        @functools.wraps(fn)
        def run(input, *args, **kwargs):
            if isinstance(input, Tensor) and not input._raw.shape:
                given = pos is not None and len(args) > pos
                dim = args[pos] if given else kwargs.get(name, default)
                if dim is not None and not isinstance(dim, Tensor) and (not isinstance(dim, (list, tuple)) or dim):
                    zero = [0] * len(_dims(dim, 0)) if isinstance(dim, (list, tuple)) else _dim(dim, 0)
                    if given:
                        args = (*args[:pos], zero, *args[pos + 1:])
                    else:
                        kwargs[name] = zero
                    return _as_0d(fn(input.reshape(1), *args, **kwargs))
            return fn(input, *args, **kwargs)
        return run
    return decorate


def _as_0d(out):
    if isinstance(out, Tensor):
        return out.reshape(())
    if isinstance(out, tuple):
        parts = [_as_0d(o) for o in out]
        return type(out)(*parts) if hasattr(out, "_fields") else tuple(parts)
    return out


def _dims(dim, ndim: int):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        ds = [_dim(d, ndim) for d in dim]
        for i, d in enumerate(ds):
            if d in ds[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return tuple(sorted(ds))
    return (_dim(dim, ndim),)


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


_FLOAT_SCALAR = (builtins.float,)


def _operand(x: Tensor, y):
    """A Python float (complex) meeting an integer tensor becomes a default-dtype float (complex), as PyTorch
    promotes."""
    if type(y) is builtins.float and x._raw.dtype.kind in "iub":
        return np.asarray(y, _dtype.get_default_dtype().jax)
    if type(y) is builtins.complex and x._raw.dtype.kind in "iub":
        return np.asarray(y, np.complex128 if _dtype.get_default_dtype().jax == np.float64 else np.complex64)
    if isinstance(y, (np.ndarray, list)):
        return as_tensor(y)
    return y


def _unsupported(name: str, dtype) -> NotImplementedError:
    """PyTorch's error for a kernel it has no version of for `dtype`."""
    return NotImplementedError(f'"{name}" not implemented for \'{_dtype.SCALAR_NAMES.get(str(dtype), str(dtype))}\'')


def _kind_of(x: Tensor, y):
    """A dtype of the category (bool, integer, floating, complex) of `x op y` (the exact width is left to JAX)."""
    xd = x._raw.dtype
    if isinstance(y, Tensor):
        return jnp.result_type(xd, y._raw.dtype)
    if isinstance(y, np.ndarray):
        return jnp.result_type(xd, y.dtype)
    if type(y) is builtins.bool:
        return xd
    if type(y) is builtins.int:
        return np.dtype(np.int64) if xd.kind == "b" else xd
    if type(y) is builtins.float:  # a Python number is weak: the tensor's width wins within its category
        return xd if xd.kind in "fcV" else np.dtype(_dtype.get_default_dtype().jax)
    if type(y) is builtins.complex:
        return xd if xd.kind == "c" else np.dtype(np.complex128 if xd == np.float64 else np.complex64)
    return jnp.result_type(xd, np.asarray(y).dtype)


def _common(name: str, x, y, *, ints: str = "keep", complex_ok: bool = True, bool_ok: bool = True,
            floats_ok: bool = True):
    """`x`, `y` promoted as `_pair` does, then checked as PyTorch's kernel for `name` would be on their common
    dtype: `ints="float"` computes integer inputs in the default float dtype, `ints="refuse"` refuses them; bools
    and complex numbers are refused unless allowed (PyTorch's NotImplementedError naming the kernel)."""
    x, y = _pair(_t(x), y)
    dt = _kind_of(x, y)
    if dt.kind == "c" and not complex_ok or dt.kind == "b" and not bool_ok or dt.kind in "fV" and not floats_ok \
            or dt.kind in "iub" and ints == "refuse":
        broadcast_first(x, y)
        raise _unsupported(name, dt)
    if dt.kind in "iub":
        if ints == "float":
            x = _to_float(x)
            if isinstance(y, Tensor):
                y = _to_float(y)
    return x, y


_CATEGORY: dict = {}  # dtype -> bool 0 < integer 1 < floating 2 < complex 3, the order PyTorch compares first


def _pair(x: Tensor, y):
    """`x`, `y` ready for a binary op under PyTorch's promotion: a 0-d tensor meeting a dimensioned one of the
    same or a higher category takes its dtype (`ones(2) * tensor(3., float64)` is float32); otherwise the
    ordinary promotion of the two dtypes applies. Python numbers: see `_operand`."""
    if type(y) is builtins.float and x._raw.dtype.kind not in "iub":
        return x, y  # (the most common case: no promotion to look at)
    y = _operand(x, y)
    if isinstance(y, Tensor):
        xa, ya = x._raw, y._raw
        if (xa.ndim == 0) != (ya.ndim == 0) and xa.dtype != ya.dtype:
            if ya.ndim == 0 and _cat(ya.dtype) <= _cat(xa.dtype):
                y = dispatch(X.to_dtype, (y,), (("dtype", xa.dtype),))
            elif xa.ndim == 0 and _cat(xa.dtype) <= _cat(ya.dtype):
                x = dispatch(X.to_dtype, (x,), (("dtype", ya.dtype),))
            elif ya.ndim == 0 and _cat(ya.dtype) == 3 and _cat(xa.dtype) == 2:
                y = dispatch(X.to_dtype, (y,), (("dtype", _complex_of(xa.dtype)),))
            elif xa.ndim == 0 and _cat(xa.dtype) == 3 and _cat(ya.dtype) == 2:
                x = dispatch(X.to_dtype, (x,), (("dtype", _complex_of(ya.dtype)),))
    return x, y


def _complex_of(dtype) -> np.dtype:
    """The complex dtype PyTorch gives a dimensioned float tensor meeting a 0-d complex one: its own width
    (float16 would be complex32, which XLA lacks: complex64)."""
    return np.dtype(np.complex128 if dtype == np.float64 else np.complex64)


def result_dtype(*operands) -> np.dtype:
    """PyTorch's result dtype of an op on `operands` (tensors, Python numbers, None): dimensioned tensors
    promote among themselves; 0-d tensors, then Python numbers (in the default dtypes), count only when of a
    higher category (bool < integer < float < complex), a complex one keeping a float's width."""
    states = [None, None, None]  # dimensioned tensors, 0-d tensors, Python numbers
    for a in operands:
        if a is None:
            continue
        if isinstance(a, Tensor):
            i, dt = (0 if a._raw.ndim else 1), np.dtype(a._raw.dtype)
        else:
            i, dt = 2, _number_dtype(a)
        states[i] = dt if states[i] is None else np.dtype(jnp.promote_types(states[i], dt))
    return _combine(states[0], _combine(states[1], states[2]))


def _number_dtype(x) -> np.dtype:
    if type(x) is builtins.bool:
        return np.dtype(np.bool_)
    if type(x) is builtins.int:
        return np.dtype(np.int64)
    default = np.dtype(_dtype.get_default_dtype().jax)
    if type(x) is builtins.complex:
        return np.dtype(np.complex128 if default == np.float64 else np.complex64)
    return default if type(x) is builtins.float else np.asarray(x).dtype


def _combine(higher, lower):
    """PyTorch's `combine_categories`: `lower` counts only when of a higher category than `higher`."""
    if higher is None or lower is None:
        return higher if lower is None else lower
    ch, cl = _cat(higher), _cat(lower)
    if ch == 3:
        return higher
    if cl == 3:
        return _complex_of(higher) if ch == 2 else lower
    if ch == 2:
        return higher
    if ch == 0 or cl == 2:
        return np.dtype(jnp.promote_types(higher, lower))
    return higher


def _cat(dtype) -> int:
    c = _CATEGORY.get(dtype)
    if c is None:
        c = _CATEGORY[dtype] = 0 if dtype.kind == "b" else 1 if dtype.kind in "iu" else 3 if dtype.kind == "c" else 2
    return c


def _to_float(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float dtype for floating-point maths."""
    if x._raw.dtype.kind in "iub":
        return dispatch(X.to_dtype, (x,), (("dtype", _dtype.get_default_dtype().jax),))
    return x
