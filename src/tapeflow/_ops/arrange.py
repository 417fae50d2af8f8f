"""Rearranging ops built on the views and joins of `shape`: strided views (`unfold`, `as_strided`), stacking and
splitting helpers, diagonals, index grids, and products of tensors (`kron`, `cartesian_prod`, `combinations`)."""

from __future__ import annotations

import builtins

import numpy as np

import xla_ops as X

from .._dispatch import view
from ._args import _dim

__all__ = ["as_strided"]


# -- strided views ------------------------------------------------------------------------------------------------
def unfold(input, dimension, size, step):
    """Windows of `size` elements every `step` along `dimension`, as a new last dimension (a view; an element
    in several windows gets the sum of their gradients).

    Example:
        >>> tp.arange(6.0).unfold(0, 3, 2)
        tensor([[0., 1., 2.],
                [2., 3., 4.]])
    """
    d = _dim(dimension, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return view(input, X.unfold, (("dim", d), ("size", int(size)), ("step", int(step))))


def as_strided(input, size, stride, storage_offset=None):
    """The view of `input`'s elements (in their row-major order) with the given `size` and `stride`, starting at
    `storage_offset`. Reads overlapping elements as often as the strides say; their gradients add up.

    tapeflow tensors are always contiguous: the strides count in the flattened `input` (for a view, in its own
    elements, not in its base's).

    Example:
        >>> tp.as_strided(tp.arange(6.0), (2, 3), (1, 2))
        tensor([[0., 2., 4.],
                [1., 3., 5.]])
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))
    have = input.numel()
    if need > have:
        item = np.dtype(input._raw.dtype).itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {need * item} are out of bounds for storage "
                           f"of size {have * item}")
    return view(input, X.as_strided, (("size", size), ("stride", stride), ("storage_offset", offset)))
