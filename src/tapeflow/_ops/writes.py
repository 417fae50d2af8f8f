"""Writes into a copy: reductions at indices (`scatter_reduce`, `index_reduce`), copies and fills at indices,
`masked_scatter`, `put`, and the inverses of views (`slice_scatter`, `select_scatter`, `diagonal_scatter`)."""

from __future__ import annotations

import builtins

import jax
import numpy as np

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._tensor import Tensor, as_tensor
from ._args import _dim, _t
from ._checks import check_indices

__all__ = [
    "diagonal_scatter", "index_copy", "index_fill", "index_put_", "index_reduce", "masked_scatter", "put",
    "scatter_reduce", "select_scatter", "slice_scatter",
]

_SCATTER_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "amax", "amin": "amin",
                       "max": "amax", "min": "amin"}  # PyTorch also takes max/min for amax/amin


def _name(t: Tensor) -> str:
    return _dtype.SCALAR_NAMES[t.dtype.name]


def _is_index(t, int32: bool = True) -> bool:
    return isinstance(t, Tensor) and t.dtype.name in (("int64", "int32") if int32 else ("int64",))


def _source(input: Tensor, source) -> Tensor:
    return source if isinstance(source, Tensor) else as_tensor(source, dtype=input.dtype)


# -- reductions at indices ------------------------------------------------------------------------------------
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """`input` with the values of `src` reduced into the positions `index` names along `dim`.

    `reduce` is one of `"sum"`, `"prod"`, `"mean"`, `"amax"`, `"amin"`; with `include_self=False` the values
    already in `input` at those positions take no part. Gradients as PyTorch's: `amax`/`amin` share among all
    values equal to the result (ties), `prod` handles zeros, `mean` divides by the count.

    Example:
        >>> x = tp.tensor([0.0, 10.0, 0.0])
        >>> tp.scatter_reduce(x, 0, tp.tensor([0, 0, 1]), tp.tensor([1.0, 3.0, 5.0]), "amax")
        tensor([ 3., 10.,  0.])
        >>> tp.scatter_reduce(x, 0, tp.tensor([0, 0, 1]), tp.tensor([1.0, 3.0, 5.0]), "amax", include_self=False)
        tensor([3., 5., 0.])
    """
    mode = _SCATTER_REDUCTIONS.get(reduce)
    if mode is None:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _check_scatter(input, dim, index, src)
    params = (("dim", d), ("reduce", mode), ("include_self", builtins.bool(include_self)))
    if input.ndim == 0:  # a 0-d tensor is written as one of shape (1,)
        return dispatch(X.scatter_reduce, (input.reshape(1), index.reshape(-1), src.reshape(-1)), params).reshape(())
    return dispatch(X.scatter_reduce, (input, index, src), params)


def _check_scatter(input, dim, index, src) -> int:
    """PyTorch's checks of a scatter's arguments; `dim` normalised."""
    d = _dim(dim, input.ndim)
    if not _is_index(index):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    nd = builtins.max(input.ndim, 1)
    if builtins.max(index.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if builtins.max(src.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    ishape, sshape, xshape = (tuple(t.shape) or (1,) for t in (index, src, input))
    if index.numel() and builtins.any(ishape[k] > sshape[k] or (k != d and ishape[k] > xshape[k])
                                      for k in range(nd)):
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} apart "
                           f"from dimension {d} and to be no larger size than src {list(src.shape)}")
    n = xshape[d]
    check_indices(index, n, lambda v: RuntimeError(f"index {v} is out of bounds for dimension {d} with size {n}"),
                  negative=False)
    return d


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """`input` with the slices of `source` reduced into the slices `index` names along `dim`.

    `reduce` is one of `"prod"`, `"mean"`, `"amax"`, `"amin"`; `include_self=False` leaves the values already in
    `input` out of the reduction. Gradients as `scatter_reduce`'s.

    Example:
        >>> x = tp.ones(2, 2)
        >>> tp.index_reduce(x, 0, tp.tensor([0, 0]), tp.tensor([[2.0, 3.0], [4.0, 5.0]]), "prod")
        tensor([[ 8., 15.],
                [ 1.,  1.]])
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _check_index_source(input, dim, index, source, "index_reduce_")
    params = (("dim", d), ("reduce", reduce), ("include_self", builtins.bool(include_self)))
    if input.ndim <= 1 and source.ndim == 0:  # a single value is written as a slice of shape (1,)
        source = source.reshape(1)
    if input.ndim == 0:
        return dispatch(X.index_reduce, (input.reshape(1), index.reshape(-1), source), params).reshape(())
    return dispatch(X.index_reduce, (input, index.reshape(-1), source), params)


def _check_index_source(input, dim, index, source, name) -> int:
    """Checks shared by index_reduce and index_copy: one index per slice of `source` along `dim`."""
    d = _dim(dim, input.ndim)
    copy = name == "index_copy_"
    if not _is_index(index, int32=not copy):
        if copy:
            raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_name(_t(index))}")
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: {_name(_t(index))}")
    if index.ndim > 1:
        if copy:
            raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_name(index)} and size: {list(index.shape)}")
    k = source.shape[d] if source.ndim else 1
    if index.numel() != k:
        if copy:
            raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                             f"({k})")
        raise RuntimeError(f"{name}(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                           f"({k}), for dim: {d}")
    if source.dtype != input.dtype:
        if copy:
            raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                               f"{_name(input)} and (source) {_name(source)}")
        raise RuntimeError(f"{name}(): self ({_name(input)}) and source ({_name(source)}) must have the same "
                           "scalar type")
    rest = lambda t: [n for j, n in enumerate(t.shape) if j != d]  # noqa: E731
    # (index_copy_ also takes a 0-d source for one index; index_reduce_ wants source's rank to be self's)
    if (source.ndim or not copy) and (source.ndim != input.ndim or rest(source) != rest(input)):
        if copy:
            raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                               f"slice shape: {' '.join(map(str, rest(input)))} at dimension {d} and source slice "
                               f"shape: {' '.join(map(str, rest(source)))} at dimension 0.")
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    n = input.shape[d] if input.ndim else 1
    if copy:
        check_indices(index, n, lambda v: IndexError(f"index_copy_(): index {v} is out of bounds for dimension {d} "
                                                     f"with size {n}"), negative=False)
    else:
        check_indices(index, n, lambda v: IndexError("index out of range in self"), negative=False)
    return d


# -- copies and fills at indices ----------------------------------------------------------------------------------
def index_copy(input, dim, index, source):
    """`input` with the slices of `source` copied to the slices `index` names along `dim`.

    With a repeated index one of the slices is kept; each of them still receives its gradient (as in PyTorch).

    Example:
        >>> tp.index_copy(tp.zeros(3, 2), 0, tp.tensor([2, 0]), tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor([[3., 4.],
                [0., 0.],
                [1., 2.]])
    """
    d = _check_index_source(input, dim, index, source, "index_copy_")
    if input.ndim == 0:
        return dispatch(X.put, (input, index, source), (("accumulate", False),))
    return dispatch(X.index_copy, (input, index.reshape(-1), source), (("dim", d),))


def index_fill(input, dim, index, value):
    """`input` with `value` written into the slices `index` names along `dim` (negative indices count from the end).

    Example:
        >>> tp.index_fill(tp.zeros(2, 3), 1, tp.tensor([0, 2]), -1.0)
        tensor([[-1.,  0., -1.],
                [-1.,  0., -1.]])
    """
    d = _dim(dim, input.ndim)
    if not _is_index(index, int32=False):
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                           "dimension(s).")
    n = input.shape[d] if input.ndim else 1
    check_indices(index, n, lambda v: IndexError(f"index {v} is out of bounds for dimension {d} with size {n}"))
    if input.ndim == 0:
        input = input.reshape(1)
        return dispatch(X.index_fill, (input, index.reshape(-1), value), (("dim", 0),)).reshape(())
    return dispatch(X.index_fill, (input, index.reshape(-1), value), (("dim", d),))


def masked_scatter(input, mask, source):
    """`input` with the elements of `source`, in order, written where `mask` is true (`mask` broadcasts).

    Example:
        >>> x = tp.zeros(4)
        >>> tp.masked_scatter(x, tp.tensor([True, False, True, True]), tp.tensor([1.0, 2.0, 3.0, 4.0]))
        tensor([1., 0., 2., 3.])
    """
    mask = _t(mask)
    if mask.dtype is not _dtype.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {_name(mask)}")
    source = _source(input, source)
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got{_name(input)} and "
                           f"{_name(source)}")
    if tuple(mask.shape) != tuple(input.shape):
        shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
        input, mask = input.expand(shape), mask.expand(shape)
    m = mask._data
    if isinstance(m, jax.Array) and not isinstance(m, jax.core.Tracer):  # a check needs the values (not traced)
        if int(np.count_nonzero(np.asarray(m))) > source.numel():
            raise RuntimeError("Number of elements of source < number of ones in mask")
    return dispatch(X.masked_scatter, (input, mask, source))


def put(input, index, source, accumulate=False):
    """`input` with `source` written at `index` of the flattened tensor (`accumulate=True` adds instead).

    Example:
        >>> tp.put(tp.zeros(2, 2), tp.tensor([0, -1]), tp.tensor([1.0, 2.0]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    if not _is_index(index, int32=False):
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_name(_t(index))}")
    source = _source(input, source)
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_name(input)} and source.dtype = {_name(source)}")
    n = input.numel()
    check_indices(index, n, lambda v: IndexError(f"out of range: tried to access index {v} on a tensor of {n} "
                                                 "elements."))
    return dispatch(X.put, (input, index, source), (("accumulate", builtins.bool(accumulate)),))


def index_put_(input, indices, values, accumulate=False):
    """In-place `index_put`: writes `values` at `indices` into `input` and returns it.

    Example:
        >>> x = tp.zeros(3)
        >>> tp.index_put_(x, (tp.tensor([0, 2]),), tp.tensor([5.0, 6.0]))
        tensor([5., 0., 6.])
    """
    return input.index_put_(indices, values, accumulate)


# -- the inverses of views ----------------------------------------------------------------------------------------
def _check_slice_shape(src, shape) -> None:
    if tuple(src.shape) != tuple(shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(shape)}")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """`input` with `src` written into the slice `start:end:step` along `dim` (the inverse of slicing).

    Example:
        >>> tp.slice_scatter(tp.zeros(2, 4), tp.ones(2, 2), dim=1, start=0, step=2)
        tensor([[1., 0., 1., 0.],
                [1., 0., 1., 0.]])
    """
    d = _dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    n = input.shape[d] if input.ndim else 1
    lo, hi, st = slice(start, end, step).indices(n)
    shape = list(input.shape)
    shape[d] = len(range(lo, hi, st))
    _check_slice_shape(_t(src), shape)
    return dispatch(X.slice_scatter, (input, src), (("dim", d), ("start", lo), ("stop", hi), ("step", st)))


def select_scatter(input, src, dim, index):
    """`input` with `src` written into the slice at `index` along `dim` (the inverse of `select`).

    Example:
        >>> tp.select_scatter(tp.zeros(2, 2), tp.ones(2), 0, 1)
        tensor([[0., 0.],
                [1., 1.]])
    """
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    _check_slice_shape(_t(src), [s for j, s in enumerate(input.shape) if j != d])
    return dispatch(X.select_scatter, (input, src), (("dim", d), ("index", int(index) % n)))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """`input` with `src` written onto the diagonal that `diagonal(input, offset, dim1, dim2)` reads.

    Example:
        >>> tp.diagonal_scatter(tp.zeros(2, 3), tp.ones(2), 1)
        tensor([[0., 1., 0.],
                [0., 0., 1.]])
    """
    nd = input.ndim
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    _check_slice_shape(_t(src), input.diagonal(offset, d1, d2).shape)
    return dispatch(X.diagonal_scatter, (input, src), (("offset", offset), ("dim1", d1), ("dim2", d2)))
