"""Eager checks of index values: out-of-range indices raise PyTorch's errors instead of returning wrong data.

Checking values held on a device means reading them (see `index_bounds` for what that costs); the check is
skipped when the indices are JAX tracers (inside `jax.jit`, `tp.compile` or another transform), where JAX's
own rule applies: gathers clamp, scatters drop.
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor

__all__ = ["index_bounds", "check_indices", "check_int_indices", "check_int_divisor"]


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
    if isinstance(a, jax.core.Tracer) or a.size == 0 or a.dtype.kind not in "iu":
        return None
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


def check_indices(index, size: int, error, negative: bool = True, ignore: int | None = None) -> None:
    """Raise `error(bad_value)` unless every value of `index` (but `ignore`) is in `[-size, size)`
    (`[0, size)` when `negative` is False)."""
    b = index_bounds(index, ignore)
    if b is None:
        return
    lo, hi = b
    if hi >= size:
        raise error(hi)
    if lo < (-size if negative else 0):
        raise error(lo)


def check_int_indices(shape: tuple, spec: tuple) -> None:
    """Python-int entries of an indexing spec (see `_parse_index`) against the dimensions they index."""
    used = sum(1 for s in spec if s is not None and s is not Ellipsis)
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


def check_int_divisor(input: Tensor, other) -> None:
    """Integer division or remainder by zero raises, as in PyTorch (XLA would return a garbage value)."""
    if input._raw.dtype.kind not in "iub":
        return
    if isinstance(other, Tensor):
        a = other._data
        if a.dtype.kind not in "iub" or isinstance(a, jax.core.Tracer) or a.size == 0:
            return
        if bool(_any_zero(a)):
            raise RuntimeError("ZeroDivisionError")
    elif type(other) in (int, bool, np.int64, np.int32) and other == 0:
        raise RuntimeError("ZeroDivisionError")
