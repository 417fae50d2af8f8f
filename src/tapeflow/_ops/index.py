"""Indexing (`x[...]`, `x[...] = v`, gather/scatter) and small helpers."""

from __future__ import annotations

import builtins
import warnings

import jax.numpy as jnp
import numpy as np

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch, inplace, view
from .._tensor import Tensor, as_tensor
from ._args import _dim, _operand
from ._checks import check_indices, check_int_indices

__all__ = [
    "argwhere", "cdist", "cross", "detach", "gather", "index_add", "index_put", "index_select",
    "is_floating_point", "is_nonzero", "masked_select", "nonzero", "numel", "scatter", "scatter_add", "take",
    "take_along_dim",
]


# -- indexing -------------------------------------------------------------------------------------------------
def _index_dtype(index, message: str) -> None:
    """Index tensors are integers (PyTorch's message for each op)."""
    if isinstance(index, Tensor) and index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(message.format(_dtype.SCALAR_NAMES[index.dtype.name]))


def _along(input, dim: int, index, kind: str = "runtime", name: str = "scatter") -> int:
    """`dim` normalised, after checking the values of `index` against the size of `input` along it."""
    _index_dtype(index, {"index_select": "index_select(): Expected dtype int32 or int64 for index",
                         "index_add": "index_add_(): Expected dtype int32/int64 for index but got: {}"}.get(
        name, f"{name}(): Expected dtype int32/int64 for index"))
    d = _dim(dim, input.ndim)
    n = input._raw.shape[d] if input.ndim else 1
    if kind == "runtime":
        check_indices(index, n, lambda v: RuntimeError(f"index {v} is out of bounds for dimension {d} with size {n}"),
                      negative=False)
    else:
        check_indices(index, n, lambda v: IndexError("index out of range in self"))
    return d


def gather(input, dim, index, *, sparse_grad: builtins.bool = False):
    """`out[i][j] = input[i][index[i][j]]` for `dim=1` (and likewise for other dims). `sparse_grad` is
    accepted; the gradient is dense (tapeflow has no sparse tensors).

    Example:
        >>> tp.gather(tp.tensor([[1, 2], [3, 4]]), 1, tp.tensor([[1], [0]]))
        tensor([[2],
                [3]])
    """
    if isinstance(index, Tensor) and builtins.max(index.ndim, 1) != builtins.max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    d = _along(input, dim, index, name="gather")
    if isinstance(index, Tensor) and index.ndim == input.ndim:
        for i, (a, b) in enumerate(zip(index.shape, input.shape)):
            if i != d and a > b:
                raise RuntimeError(f"Size does not match at dimension {i} expected index {list(index.shape)} to be "
                                   f"no larger than self {list(input.shape)} apart from dimension {d}")
    return dispatch(X.gather, (input, index), (("dim", d),))


def take_along_dim(input, indices, dim=None):
    """Elements picked along `dim` by `indices` (as `numpy.take_along_axis`).

    Example:
        >>> x = tp.tensor([[10, 30, 20]])
        >>> tp.take_along_dim(x, tp.argsort(x, dim=1), dim=1)
        tensor([[10, 20, 30]])
    """
    if dim is None:
        return take(input, indices)
    return gather(input, dim, indices)


def _scatter_shapes(name, input, index, src) -> None:
    """PyTorch's checks of a scatter's operands: index and src have self's rank, src has self's dtype."""
    if isinstance(index, Tensor) and builtins.max(index.ndim, 1) != builtins.max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor):
        if src._raw.dtype != input._raw.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        if isinstance(index, Tensor) and builtins.max(index.ndim, 1) != builtins.max(src.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of `input` with `src` (or `value`) written at `index` along `dim`.

    Example:
        >>> tp.scatter(tp.zeros(2, 3), 1, tp.tensor([[2], [0]]), 1.0)
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """
    if src is None:
        src = value
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise RuntimeError(f"scatter: reduce='{reduce}' is not supported; use reduce='add' or scatter_reduce")
    _scatter_shapes("scatter", input, index, src)
    return dispatch(X.scatter, (input, index, _operand(input, src)), (("dim", _along(input, dim, index)),))


def scatter_add(input, dim, index, src):
    """`input` with `src` added at `index` along `dim` (repeated indices add up).

    Example:
        >>> tp.scatter_add(tp.zeros(3), 0, tp.tensor([0, 0, 2]), tp.tensor([1.0, 2.0, 3.0]))
        tensor([3., 0., 3.])
    """
    _scatter_shapes("scatter_add", input, index, src)
    return dispatch(X.scatter_add, (input, index, src), (("dim", _along(input, dim, index)),))


def index_select(input, dim, index):
    """The entries at `index` along `dim`.

    Example:
        >>> tp.index_select(tp.tensor([[1, 2], [3, 4], [5, 6]]), 0, tp.tensor([2, 0]))
        tensor([[5, 6],
                [1, 2]])
    """
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return dispatch(X.index_select, (input, index), (("dim", _along(input, dim, index, "index", "index_select")),))


def index_add(input, dim, index, source, *, alpha=1):
    """`input` with `alpha * source` added at `index` along `dim` (repeated indices add up).

    Example:
        >>> tp.index_add(tp.zeros(3), 0, tp.tensor([0, 0, 2]), tp.tensor([1.0, 2.0, 3.0]))
        tensor([3., 0., 3.])
    """
    return dispatch(X.index_add, (input, index, source),
                    (("dim", _along(input, dim, index, "index", "index_add")), ("alpha", alpha)))


def take(input, index):
    """Elements of the flattened `input` at `index`, in `index`'s shape.

    Example:
        >>> tp.take(tp.tensor([[1, 2], [3, 4]]), tp.tensor([0, 3]))
        tensor([1, 4])
    """
    _index_dtype(index, "take(): Expected a long tensor for index, but got {}")
    n = input.numel()
    check_indices(index, n, lambda v: IndexError(f"out of range: tried to access index {v} on a tensor of {n} "
                                                 "elements."))
    return dispatch(X.take, (input, index))


def masked_select(input, mask):
    """The elements where `mask` is true, as a 1-D tensor.

    Example:
        >>> x = tp.tensor([1.0, -2.0, 3.0])
        >>> tp.masked_select(x, x > 0)
        tensor([1., 3.])
    """
    return input[mask.expand_as(input) if tuple(mask.shape) != tuple(input.shape) else mask]


def nonzero(input, *, as_tuple=False):
    """Indices of non-zero elements (needs concrete data: a host sync, as in PyTorch).

    Example:
        >>> tp.nonzero(tp.tensor([[0, 1], [2, 0]]))
        tensor([[0, 1],
                [1, 0]])
    """
    arr = np.asarray(input._concrete("nonzero()"))
    idx = np.nonzero(arr)
    if as_tuple:
        return tuple(Tensor._wrap(jnp.asarray(i, jnp.int64)) for i in idx)
    return Tensor._wrap(jnp.asarray(np.stack(idx, axis=1) if idx else np.zeros((0, 0)), jnp.int64))


def argwhere(input):
    """Indices of the nonzero elements, one row per element.

    Example:
        >>> tp.argwhere(tp.tensor([[0, 1], [2, 0]]))
        tensor([[0, 1],
                [1, 0]])
    """
    return nonzero(input)


def index_put(input, indices, values, accumulate=False):
    """`input` with `values` written at the positions named by the tuple `indices` (`accumulate=True` adds).

    Example:
        >>> tp.index_put(tp.zeros(3), (tp.tensor([0, 2]),), tp.tensor([5.0, 6.0]))
        tensor([5., 0., 6.])
    """
    spec, arrays = _parse_index(input, tuple(indices))
    return dispatch(X.index_put, (input, _operand(input, values), *arrays),
                    (("spec", spec), ("accumulate", accumulate)))


def _sequence_as_tuple(index) -> bool:
    """PyTorch's (and old NumPy's) rule: a short list holding a tensor, a sequence, a slice, `None` or `...` is
    a tuple of indices (`x[[[0, 1]]]` is `x[[0, 1]]`); a list of numbers is one advanced index."""
    if not isinstance(index, list) or len(index) >= 32:
        return False
    if any(isinstance(i, (Tensor, list, tuple, slice)) or i is None or i is Ellipsis for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; use x[tuple(seq)] "
                      "instead of x[seq] (PyTorch will read it as one tensor index in a future release).",
                      UserWarning, stacklevel=4)
        return True
    return False


def _parse_index(x: Tensor, index) -> tuple[tuple, list]:
    """Encode a NumPy-style index as a hashable spec plus the index arrays it uses."""
    if not isinstance(index, tuple):
        index = tuple(index) if _sequence_as_tuple(index) else (index,)
    spec, arrays = [], []
    for i in index:
        if isinstance(i, builtins.bool):
            i = as_tensor(i)
        if isinstance(i, (int, np.integer)):
            spec.append(int(i))
        elif isinstance(i, slice):
            vals = [None if v is None else int(v) for v in (i.start, i.stop, i.step)]
            if vals[2] is not None and vals[2] <= 0:
                raise ValueError("step must be greater than zero")
            spec.append(("s", *vals))
        elif i is None or i is Ellipsis:
            spec.append(i)
        else:
            t = i if isinstance(i, Tensor) else as_tensor(np.asarray(i) if isinstance(i, (list, tuple)) else i)
            if t._raw.dtype == jnp.bool_:
                for a in nonzero(t, as_tuple=True):
                    spec.append("T")
                    arrays.append(a)
                continue
            if t._raw.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            spec.append("T")
            arrays.append(t)
    spec = tuple(spec)
    check_int_indices(tuple(x._raw.shape), spec)
    _check_tensor_indices(tuple(x._raw.shape), spec, arrays)
    return spec, arrays


def _check_tensor_indices(shape: tuple, spec: tuple, arrays: list) -> None:
    used = sum(1 for s in spec if s is not None and s is not Ellipsis)
    d, k = 0, 0
    for s in spec:
        if s is Ellipsis:
            d += len(shape) - used
        elif s is not None:
            if s == "T":
                check_indices(arrays[k], shape[d], lambda v, dim=d, n=shape[d]: IndexError(
                    f"index {v} is out of bounds for dimension {dim} with size {n}"))
                k += 1
            d += 1


def _getitem(self, index):
    if type(index) is int and self._raw.ndim:
        n = self._raw.shape[0]
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {n}")
        return _select(self, 0, index, n)
    spec, arrays = _parse_index(self, index)
    if not arrays:
        return view(self, X.index_basic, (("index", spec),))
    return dispatch(X.index, (self, *arrays), (("spec", spec),))


def _setitem(self, index, value):
    if isinstance(index, Tensor) and index._raw.dtype == jnp.bool_ and tuple(index.shape) == tuple(self.shape) \
            and (not isinstance(value, Tensor) or value.ndim == 0):
        inplace(self, masked_fill(self, index, value))
        return
    if not isinstance(index, tuple):
        index = tuple(index) if _sequence_as_tuple(index) else (index,)
    inplace(self, index_put(self, index, value))


# -- misc ---------------------------------------------------------------------------------------------------------
def numel(input) -> int:
    """The number of elements.

    Example:
        >>> tp.numel(tp.zeros(2, 3))
        6
    """
    return input.numel()


def is_floating_point(input) -> builtins.bool:
    """Whether `input`'s dtype is a floating-point type.

    Example:
        >>> tp.is_floating_point(tp.tensor([1.0])), tp.is_floating_point(tp.tensor([1]))
        (True, False)
    """
    return input.dtype.is_floating_point


def is_nonzero(input) -> builtins.bool:
    """Whether a one-element tensor is nonzero (a Python bool; more elements raise).

    Example:
        >>> tp.is_nonzero(tp.tensor([0.5]))
        True
    """
    return builtins.bool(input)


def detach(input):
    """A tensor sharing `input`'s data, cut from the tape (it does not require grad).

    Example:
        >>> x = tp.ones(2, requires_grad=True)
        >>> tp.detach(x * 2)
        tensor([2., 2.])
    """
    return input.detach()


def cdist(x1, x2, p=2.0):
    """Pairwise `p`-norm distances between the rows of `x1` and of `x2`.

    Example:
        >>> tp.cdist(tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0], [1.0, 0.0]]))
        tensor([[5., 1.]])
    """
    return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1)


def cross(input, other, dim=None):
    """Cross product along `dim` (the batch dimensions broadcast), as `tp.linalg.cross`.

    Without `dim`, PyTorch's deprecated default: the first dimension of size 3 (with a warning).

    Example:
        >>> tp.cross(tp.tensor([1.0, 0.0, 0.0]), tp.tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    if dim is None:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
        warnings.warn("Using cross without specifying the dim arg is deprecated. Please either pass the dim "
                      "explicitly or simply use tp.linalg.cross. The default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
    from ..linalg import cross as linalg_cross

    return linalg_cross(input, other, dim=dim)


# Sibling modules import each other; importing at the end lets every name above exist first.
from .elementwise import masked_fill  # noqa: E402
from .reduce import norm  # noqa: E402
from .shape import _select  # noqa: E402
