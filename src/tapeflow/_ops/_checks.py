"""Eager checks of index values: out-of-range indices raise PyTorch's errors instead of returning wrong data.

Checking values held on a device means reading them (see `index_bounds` for what that costs); the check is
skipped when the indices are JAX tracers (inside `jax.jit`, `tp.compile` or another transform), where JAX's
own rule applies: gathers clamp, scatters drop. Under `tp.interop.checked` the same checks are staged
into the program (`jax.experimental.checkify`) and raise PyTorch's error after it runs.
"""

from __future__ import annotations

import builtins
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .._meta import MetaArray
from .._state import state
from .._tensor import Tensor

__all__ = ["tensor_arg", "index_bounds", "check_indices", "check_int_indices", "check_int_divisor", "staged_check",
           "staging_checks", "outside"]


@jax.jit
def _min_max(idx, ignore):
    """Smallest and largest value of `idx`, not counting entries equal to `ignore` (on the device)."""
    keep = idx != ignore
    lo = jnp.min(jnp.where(keep, idx, jnp.iinfo(jnp.int64).max).astype(jnp.int64))
    hi = jnp.max(jnp.where(keep, idx, jnp.iinfo(jnp.int64).min).astype(jnp.int64))
    return jnp.stack([lo, hi])


# View ops whose result holds exactly the values of their input (rearranged or repeated): an index tensor
# viewed through them is checked on its base (whose values an earlier check may already have read).
_SAME_VALUES = frozenset(("reshape", "t", "transpose", "permute", "unsqueeze", "squeeze", "expand", "movedim"))
_NONE = np.iinfo(np.int64).min  # `ignore` when nothing is ignored
_seen: dict = {}  # (id(array), ignore) -> (weak reference to the array, bounds): arrays are immutable


def index_bounds(index, ignore: int | None = None) -> tuple[int, int] | None:
    """`(min, max)` of an index tensor's values (entries equal to `ignore` left out); None for an empty or
    traced one (nothing to check).

    On the CPU the values are read in place with NumPy (a few microseconds); on an accelerator one compiled
    call reduces them and two numbers come back. An array checked before (the same targets every step) is
    not read again."""
    if isinstance(index, Tensor) and index._base is not None and all(s[0] in _SAME_VALUES for s in index._view):
        index = index._base  # a view holding the same values (no segment has to run to read them)
    a = index._data if isinstance(index, Tensor) else index
    if isinstance(a, (jax.core.Tracer, MetaArray)) or a.size == 0 or a.dtype.kind not in "iu":
        return None  # (a meta tensor has no values to check, as on PyTorch's meta device)
    ign = _NONE if ignore is None else int(ignore)
    key = (id(a), ign)
    hit = _seen.get(key)
    if hit is not None and hit[0]() is a:
        return hit[1]
    if next(iter(a.devices())).platform == "cpu":
        arr = np.asarray(a)
        if ignore is not None:
            arr = arr[arr != ign]
        bounds = (int(arr.min()), int(arr.max())) if arr.size else None
    else:
        lo, hi = np.asarray(_min_max(a, np.int64(ign))).tolist()
        bounds = (lo, hi) if lo <= hi else None
    if len(_seen) > 256:
        _seen.clear()
    _seen[key] = (weakref.ref(a), bounds)
    return bounds


@jax.jit
def _float_range(a):
    return jnp.stack([jnp.min(a), jnp.max(a), jnp.any(jnp.isnan(a))]).astype(jnp.float64)


def outside(t, lo: float, hi: float) -> bool:
    """Whether some value of the float tensor `t` is NaN or outside `[lo, hi]` (one small read; False when `t`
    is traced or empty). Used by samplers, whose parameters PyTorch checks before drawing."""
    a = t._data if isinstance(t, Tensor) else t
    if isinstance(a, (jax.core.Tracer, MetaArray)) or a.size == 0:
        return False
    mn, mx, nan = np.asarray(_float_range(a)).tolist()
    return bool(nan) or mn < lo or mx > hi


def check_indices(index, size: int, error, negative: bool = True, ignore: int | None = None) -> None:
    """Raise `error(bad_value)` unless every value of `index` (but `ignore`) is in `[-size, size)`
    (`[0, size)` when `negative` is False)."""
    if staging_checks(index):
        _staged_bounds(index._raw if isinstance(index, Tensor) else index, size, error, negative, ignore)
        return
    b = index_bounds(index, ignore)
    if b is None:
        return
    lo, hi = b
    if hi >= size:
        raise error(hi)
    if lo < (-size if negative else 0):
        raise error(lo)


def staging_checks(t) -> bool:
    """Whether `t` holds a traced value that `tp.interop.checked` wants checked in the program."""
    return state.checked and isinstance(t._raw if isinstance(t, Tensor) else t, jax.core.Tracer)


def staged_check(ok, error, *values) -> None:
    """`checkify.check(ok, ...)`: the error's class and message travel in the check's text (`error` is called
    with one `{}` per value, which checkify fills in), for `tp.interop.checked` to raise."""
    from jax.experimental import checkify

    marks = [f"\x00{i}\x00" for i in range(len(values))]
    exc = error(*marks)
    text = f"{type(exc).__name__}: {exc}".replace("{", "{{").replace("}", "}}")  # (braces of the message itself)
    for m in marks:
        text = text.replace(m, "{}")
    checkify.check(ok, text, *values)


def _staged_bounds(a, size: int, error, negative: bool, ignore) -> None:
    idx = a.astype(jnp.int64)
    keep = jnp.ones(idx.shape, bool) if ignore is None else idx != ignore
    hi = jnp.max(jnp.where(keep, idx, jnp.iinfo(jnp.int64).min), initial=jnp.iinfo(jnp.int64).min)
    lo = jnp.min(jnp.where(keep, idx, jnp.iinfo(jnp.int64).max), initial=jnp.iinfo(jnp.int64).max)
    too_low = lo < (-size if negative else 0)
    staged_check((hi < size) & ~too_low, error, jnp.where(hi >= size, hi, lo))


def check_int_indices(shape: tuple, spec: tuple) -> None:
    """Python-int entries of an indexing spec (see `_parse_index`) against the dimensions they index."""
    used = sum(1 for s in spec if s is not None and s is not Ellipsis)
    if used and not shape and builtins.any(type(s) is int for s in spec):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    d = 0
    for s in spec:
        if s is Ellipsis:
            d += len(shape) - used
        elif s is not None:
            if type(s) is int and not -shape[d] <= s < shape[d]:
                raise IndexError(f"index {s} is out of bounds for dimension {d} with size {shape[d]}")
            d += 1


_any_zero = jax.jit(lambda x: jnp.any(x == 0))


def broadcast_first(*operands) -> None:
    """PyTorch's broadcast error, if the tensors among `operands` do not broadcast together: PyTorch finds the
    shapes before the dtype's kernel or the values, so that error comes before a dtype or division refusal.
    Called on those refusals' paths only."""
    from .._dispatch import _broadcast_mismatch

    shapes = [tuple(a._raw.shape) for a in operands if isinstance(a, Tensor)]
    first = _broadcast_mismatch(shapes) if len(shapes) > 1 else None
    if first is not None:
        a, b, dim = first
        raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                           f"dimension {dim}")


def check_int_divisor(input: Tensor, other) -> None:
    """Integer division or remainder by zero raises, as in PyTorch (XLA would return a garbage value)."""
    if input._raw.dtype.kind not in "iub":
        return
    if isinstance(other, Tensor):
        a = other._data
        if a.dtype.kind not in "iub" or a.size == 0 or isinstance(a, MetaArray):
            return
        if isinstance(a, jax.core.Tracer):
            if state.checked:
                staged_check(~jnp.any(a == 0), lambda: RuntimeError("ZeroDivisionError"))
            return
        if bool(_any_zero(a)):
            broadcast_first(input, other)
            raise RuntimeError("ZeroDivisionError")
    elif type(other) in (int, bool, np.int64, np.int32) and other == 0:
        raise RuntimeError("ZeroDivisionError")


def tensor_arg(fn: str, name: str, value, position: int = 2) -> None:
    """PyTorch's TypeError for a function whose argument `name` must be a Tensor (`maximum(x, 2)`); as a
    method (`x.maximum(2)`) PyTorch counts positions from 1 (see `_methods._counted_from_self`)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def check_expandable(t: Tensor, target: tuple) -> None:
    """PyTorch's errors for `t.expand(target)` where `t` does not expand to `target` (the added tensor of
    `addmm`, the value written into a basic-indexed region)."""
    have = tuple(t.shape)
    if len(have) > len(target):
        raise RuntimeError(f"expand({t.type()}{{{list(have)}}}, size={list(target)}): the number of sizes provided "
                           f"({len(target)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(have)})")
    for i in range(1, len(have) + 1):
        if have[-i] not in (1, target[-i]):
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                               f"({have[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                               f"{list(target)}.  Tensor sizes: {list(have)}")
