"""Indexing (`x[...]`, `x[...] = v`, gather/scatter) and small helpers."""

from __future__ import annotations

import builtins
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import xla_ops as X

from .. import _dtype
from .._device import host_array
from .._dispatch import _broadcast_mismatch, dispatch, inplace, view
from .._meta import MetaArray
from .._state import state
from .._tensor import Tensor, as_tensor
from ..amp import full_precision, promote
from ._args import _dim, _operand
from ._checks import check_expandable, check_indices, check_int_indices, tensor_arg
from ._dtype_rules import _kernel

__all__ = [
    "argwhere", "cdist", "cross", "detach", "gather", "index_add", "index_put", "index_select",
    "is_floating_point", "is_nonzero", "masked_select", "nonzero", "nonzero_static", "numel", "scatter", "scatter_add", "take",
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
    elif d == 1:  # (PyTorch's CPU kernel for dimension 1 reports it so; negative indices are refused too)
        check_indices(index, n, lambda v: RuntimeError(f"INDICES element is out of DATA bounds, id={v} axis_dim={n}"),
                      negative=False)
    else:
        check_indices(index, n, lambda v: IndexError("index out of range in self"), negative=False)
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
    if dim is None:  # (the flattened input, gathered: PyTorch's `GatherBackward0` of a view)
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if indices.dtype.name != "int64":
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtype.SCALAR_NAMES[indices.dtype.name]}")
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _dim(dim, input.ndim)
    # Input and indices broadcast against each other outside `dim`, as in PyTorch (which expands the input always).
    index_shape = _broadcast_pair(_with(input.shape, d, indices.shape[d]), tuple(indices.shape))
    input_shape = _broadcast_pair(_with(indices.shape, d, input.shape[d]), tuple(input.shape))
    return gather(input.expand(input_shape), d, indices.expand(index_shape))


def _with(shape, d: int, n: int) -> tuple:
    """`shape` with its size at `d` replaced by `n`."""
    return (*shape[:d], n, *shape[d + 1:])


def _scatter_shapes(name, input, index, src, dim=None) -> None:
    """PyTorch's checks of a scatter's operands: index and src have self's rank, src has self's dtype, and the
    index is no larger than src anywhere nor than self outside `dim`."""
    if isinstance(index, Tensor) and builtins.max(index.ndim, 1) != builtins.max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor):
        if src._raw.dtype != input._raw.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        if isinstance(index, Tensor) and builtins.max(index.ndim, 1) != builtins.max(src.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if dim is not None and isinstance(index, Tensor) and index.ndim == input.ndim and index.ndim:
        d = _dim(dim, input.ndim)
        src_shape = tuple(src.shape) if isinstance(src, Tensor) and src.ndim == index.ndim else None
        for i, n in enumerate(index.shape):
            if (i != d and n > input.shape[i]) or (src_shape is not None and n > src_shape[i]):
                raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} "
                                   f"apart from dimension {d}"
                                   + (f" and to be no larger size than src {list(src_shape)}" if src_shape else ""))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of `input` with `src` (or `value`) written at `index` along `dim`; with `reduce="add"` or
    `"multiply"` they are added or multiplied into the positions instead.

    Example:
        >>> tp.scatter(tp.zeros(2, 3), 1, tp.tensor([[2], [0]]), 1.0)
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """
    if src is None:
        src = value
    if reduce is not None:  # PyTorch's legacy reductions, as scatter_add and scatter_reduce(prod, include_self)
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if not isinstance(src, Tensor):
            _scatter_shapes("scatter", input, index, None, dim)
            src = full_like(index, src, dtype=input.dtype)
        if reduce == "add":
            return scatter_add(input, dim, index, src)
        return scatter_reduce(input, dim, index, src, "prod")
    _scatter_shapes("scatter", input, index, src, dim)
    return dispatch(X.scatter, (input, index, _operand(input, src)), (("dim", _along(input, dim, index)),))


def scatter_add(input, dim, index, src):
    """`input` with `src` added at `index` along `dim` (repeated indices add up).

    Example:
        >>> tp.scatter_add(tp.zeros(3), 0, tp.tensor([0, 0, 2]), tp.tensor([1.0, 2.0, 3.0]))
        tensor([3., 0., 3.])
    """
    _scatter_shapes("scatter_add", input, index, src, dim)
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
    d = _along(input, dim, index, "index", "index_select")
    if isinstance(index, Tensor) and index.ndim == 0:
        index = index.reshape(1)  # (a 0-d index selects one entry and keeps the dimension, as in PyTorch)
    if input.ndim == 0:
        if index.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
        return dispatch(X.index_select, (input.reshape(1), index), (("dim", 0),)).reshape(())
    return dispatch(X.index_select, (input, index), (("dim", d),))


def index_add(input, dim, index, source, *, alpha=1):
    """`input` with `alpha * source` added at `index` along `dim` (repeated indices add up).

    Example:
        >>> tp.index_add(tp.zeros(3), 0, tp.tensor([0, 0, 2]), tp.tensor([1.0, 2.0, 3.0]))
        tensor([3., 0., 3.])
    """
    tensor_arg("index_add", "source", source, 4)
    d = _along(input, dim, index, name="index_add")
    check_index_source("index_add_", input, d, index, source)
    return dispatch(X.index_add, (input, index, source), (("dim", d), ("alpha", alpha)))


def check_index_source(name: str, input, d: int, index, source) -> None:
    """PyTorch's checks of `index_add`-style arguments: a vector of indices, one per slice of `source` along
    `d`, `source` of `input`'s dtype and shape elsewhere."""
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_dtype.SCALAR_NAMES[index.dtype.name]} and size: {list(index.shape)}")
    n = source.shape[d] if source.ndim > d else 1
    if index.numel() != n:
        raise RuntimeError(f"{name}(): Number of indices ({index.numel()}) should be equal to source.size(dim): ({n}), "
                           f"for dim: {d}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"{name}(): self ({_dtype.SCALAR_NAMES[input.dtype.name]}) and source "
                           f"({_dtype.SCALAR_NAMES[source.dtype.name]}) must have the same scalar type")
    if source.ndim != input.ndim or any(a != b for i, (a, b) in enumerate(zip(input.shape, source.shape)) if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(input.shape)} source.shape = {list(source.shape)}")


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
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_pair(tuple(mask.shape), tuple(input.shape))  # (PyTorch names the mask "a")
    raw = mask._raw
    if isinstance(raw, jax.core.Tracer) or type(raw) is MetaArray or type(input._raw) is MetaArray:
        return input.expand(shape)[mask.expand(shape)]  # (the indexing's own errors for traced and meta masks)
    where = np.flatnonzero(np.broadcast_to(np.asarray(mask._data), shape))  # (a host sync, as in PyTorch)
    return dispatch(X.masked_select, (input, Tensor._wrap(host_array(where))), (("shape", shape),))


def _broadcast_pair(a: tuple, b: tuple) -> tuple:
    """The broadcast shape of `a` and `b`, or PyTorch's error naming the dimension that differs (tensor a: `a`)."""
    first = _broadcast_mismatch([a, b])
    if first is not None:
        raise RuntimeError("The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
                           "dimension {}".format(*first))
    return tuple(np.broadcast_shapes(a, b))


def nonzero(input, *, as_tuple=False):
    """Indices of non-zero elements (needs concrete data: a host sync, as in PyTorch).

    Example:
        >>> tp.nonzero(tp.tensor([[0, 1], [2, 0]]))
        tensor([[0, 1],
                [1, 0]])
    """
    arr = np.asarray(input._concrete("nonzero()"))
    if arr.ndim == 0:  # (a 0-d tensor: one row of no indices when nonzero, as in PyTorch)
        if as_tuple:
            return (Tensor._wrap(jnp.zeros((1 if arr else 0,), jnp.int64)),)
        return Tensor._wrap(jnp.zeros((1 if arr else 0, 0), jnp.int64))
    idx = np.nonzero(arr)
    if as_tuple:
        return tuple(Tensor._wrap(host_array(i, np.int64)) for i in idx)
    return Tensor._wrap(host_array(np.stack(idx, axis=1) if idx else np.zeros((0, 0)), np.int64))


def nonzero_static(input, *, size, fill_value=-1):
    """`nonzero` with a fixed number of rows, `size`: the first `size` indices, padded with `fill_value`. Its
    shape does not depend on the data, so it needs no host read and traces under `jax.jit`.

    Example:
        >>> tp.nonzero_static(tp.tensor([[1, 0], [3, 2]]), size=4)
        tensor([[ 0,  0],
                [ 1,  0],
                [ 1,  1],
                [-1, -1]])
    """
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not {type(size).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return dispatch(X.nonzero_static, (input,), (("size", size), ("fill_value", int(fill_value))))


def argwhere(input):
    """Indices of the nonzero elements, one row per element.

    Example:
        >>> tp.argwhere(tp.tensor([[0, 1], [2, 0]]))
        tensor([[0, 1],
                [1, 0]])
    """
    return nonzero(input)


@promote
def index_put(input, indices, values, accumulate=False):
    """`input` with `values` written at the positions named by the tuple `indices` (`accumulate=True` adds).

    Example:
        >>> tp.index_put(tp.zeros(3), (tp.tensor([0, 2]),), tp.tensor([5.0, 6.0]))
        tensor([5., 0., 6.])
    """
    spec, arrays = _parse_index(input, tuple(indices))
    if arrays and isinstance(values, Tensor) and values._raw.dtype != input._raw.dtype:
        s = _dtype.SCALAR_NAMES  # (advanced indexing writes without casting; basic indexing copies, casting)
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {s[input.dtype.name]} "
                           f"for the destination and {s[values.dtype.name]} for the source.")
    try:
        return dispatch(X.index_put, (input, _operand(input, values), *arrays),
                        (("spec", spec), ("accumulate", accumulate)))
    except RuntimeError:
        _check_put_shape(input, spec, arrays, values)
        raise


def _check_put_shape(input, spec, arrays, values) -> None:
    """PyTorch's error for a value that does not broadcast to the indexed region."""
    if not isinstance(values, Tensor):
        return
    target = tuple(dispatch(X.index, (input.detach(), *arrays), (("spec", spec),)).shape) if arrays else \
        tuple(view(input.detach(), X.index_basic, (("index", spec),)).shape)
    have = tuple(values.shape)
    if arrays:
        if any(v not in (1, t) for v, t in zip(reversed(have), reversed(target))) or len(have) > len(target):
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(have)} cannot be broadcast to indexing "
                               f"result of shape {list(target)}")
        return
    check_expandable(values, target)


def _sequence_as_tuple(index, stacklevel: int = 4) -> bool:
    """PyTorch's (and old NumPy's) rule: a short list holding a tensor, a sequence, a slice, `None` or `...` is
    a tuple of indices (`x[[[0, 1]]]` is `x[[0, 1]]`); a list of numbers is one advanced index."""
    if not isinstance(index, list) or len(index) >= 32:
        return False
    if any(isinstance(i, (Tensor, list, tuple, slice)) or i is None or i is Ellipsis for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; use x[tuple(seq)] "
                      "instead of x[seq] (PyTorch will read it as one tensor index in a future release).",
                      UserWarning, stacklevel=stacklevel)
        return True
    return False


def _parse_index(x: Tensor, index) -> tuple[tuple, list]:
    """Encode a NumPy-style index as a hashable spec plus the index arrays it uses."""
    if not isinstance(index, tuple):
        index = tuple(index) if _sequence_as_tuple(index) else (index,)
    spec, arrays = [], []
    for k, i in enumerate(index):
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
            if t._raw.dtype == jnp.uint8 and isinstance(i, Tensor):  # (PyTorch still reads a uint8 tensor as a mask)
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=3)
                t = t != 0
            if t._raw.dtype == jnp.bool_:
                _check_mask(x, t, index, k)
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
    if len(arrays) > 1:
        shapes = [list(a.shape) for a in arrays]
        try:
            np.broadcast_shapes(*(tuple(sh) for sh in shapes))
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(str(sh) for sh in shapes)) from None
    _check_tensor_indices(tuple(x._raw.shape), spec, arrays)
    return spec, arrays


def _check_mask(x: Tensor, mask: Tensor, index: tuple, k: int) -> None:
    """A boolean mask (entry `k` of `index`) must have the shape of the dimensions of `x` it indexes (PyTorch's
    IndexError)."""
    if mask.ndim == 0:
        return
    shape = tuple(x._raw.shape)
    spans = [_span(i) for i in index]
    start = 0
    for j in range(k):
        start += len(shape) - sum(n for n in spans if n is not None) if spans[j] is None else spans[j]
    for j, n in enumerate(mask.shape):
        d = start + j
        if d >= len(shape) or shape[d] != n:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape of the "
                             f"indexed tensor {list(shape)} at index {d}")


def _span(i) -> int | None:
    """How many dimensions an index entry consumes (None for an Ellipsis: the rest)."""
    if i is Ellipsis:
        return None
    if i is None or isinstance(i, builtins.bool):
        return 0
    if isinstance(i, Tensor):
        return i.ndim if i._raw.dtype == jnp.bool_ else 1
    if isinstance(i, (list, tuple, np.ndarray)):
        a = np.asarray(i)
        return a.ndim if a.dtype == np.bool_ else 1
    return 1


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
    if _scalar_bool(index):  # `x[True]` adds a dimension of size 1 (`x[False]`: of size 0)
        y = self.unsqueeze(0)
        return y if builtins.bool(index) else y[:0]
    split = _split_ints(index)
    if split is not None:
        return _getitem(_getitem(self, split[0]), split[1])
    spec, arrays = _parse_index(self, index)
    if not arrays:
        return view(self, X.index_basic, (("index", spec),))
    return dispatch(X.index, (self, *arrays), (("spec", spec),))


def _setitem(self, index, value):
    if type(value) in (builtins.int, builtins.float, builtins.complex):
        # (PyTorch's check that the tensor's dtype holds the number; a half-precision one overflows to infinity)
        value = _dtype.check_number_fits(value, self._raw.dtype, 1)
    if isinstance(value, Tensor) and value.ndim and value._raw.shape[0] == 1:
        shape = value._raw.shape
        k = next((i for i, n in enumerate(shape) if n != 1), len(shape))
        value = value.reshape(shape[k:])  # (PyTorch drops a value's leading 1s: `x[0] = v[None]` works)
    if isinstance(index, Tensor) and index._raw.dtype in (jnp.bool_, jnp.uint8) \
            and tuple(index.shape) == tuple(self.shape) and (not isinstance(value, Tensor) or value.ndim == 0):
        inplace(self, masked_fill(self, index, value))  # (a uint8 mask is refused there, as in PyTorch)
        return
    split = _split_ints(index)
    if split is not None:  # (written through the view the integers select)
        _setitem(_getitem(self, split[0]), split[1], value)
        return
    if not isinstance(index, tuple):
        index = tuple(index) if _sequence_as_tuple(index, 3) else (index,)
    if builtins.any(type(i) is builtins.bool for i in index):
        # (a Python bool adds a dimension of length 1 (True) or 0 (False): it selects everything, or nothing)
        if False in [i for i in index if type(i) is builtins.bool]:
            return
        index = tuple(None if type(i) is builtins.bool else i for i in index)
    if self._requires_grad and self.grad_fn is None and state.grad_enabled and _basic(index):
        # (PyTorch writes a basic index through the view it selects: the leaf is refused as that view's base)
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    inplace(self, index_put(self, index, value))


def _basic(index: tuple) -> builtins.bool:
    """Whether `index` selects a proper view (integers, slices, None; not only full slices)."""
    return all(type(i) in (int, slice) or i is None or i is Ellipsis or isinstance(i, np.integer) for i in index) \
        and not all(i is Ellipsis or i == slice(None) for i in index)


def _scalar_bool(index) -> builtins.bool:
    return isinstance(index, builtins.bool) or (isinstance(index, Tensor) and index.ndim == 0
                                                and index._raw.dtype == jnp.bool_)


def _split_ints(index) -> tuple | None:
    """PyTorch applies an index's integers first (each a `select`) and its tensor indices to what is left, so
    `x[0, :, idx]` has the shape of `x[0][:, idx]` (NumPy would move the indexed dimension first):
    `(integers with the rest as full slices, the rest)`, or None when there are not both kinds."""
    if not isinstance(index, tuple):
        if not (isinstance(index, list) and _sequence_as_tuple_quiet(index)):
            return None
        index = tuple(index)
    has_int = has_advanced = False
    for i in index:  # (this runs on every indexing: plain type tests first)
        t = type(i)
        if t is int:
            has_int = True
        elif t is slice or i is None or i is Ellipsis:
            continue
        elif isinstance(i, (Tensor, list, tuple, np.ndarray)):
            has_advanced = True
        elif isinstance(i, np.integer):
            has_int = True
    if not (has_int and has_advanced):
        return None
    first, rest = [], []
    for i in index:
        if isinstance(i, (int, np.integer)) and not isinstance(i, builtins.bool):
            first.append(i)
        elif i is Ellipsis:
            first.append(i)
            rest.append(i)
        elif i is None or isinstance(i, slice):
            first.append(i)
            rest.append(slice(None))
        else:
            first.extend([slice(None)] * _span(i))
            rest.append(i)
    return tuple(first), tuple(rest)


def _sequence_as_tuple_quiet(index: list) -> builtins.bool:
    return len(index) < 32 and any(isinstance(i, (Tensor, list, tuple, slice)) or i is None or i is Ellipsis
                                   for i in index)


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


_CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


@full_precision  # (at entry, as at the op: its dtype checks see what autocast makes of the inputs)
def cdist(x1, x2, p=2.0, compute_mode=None):
    """Pairwise `p`-norm distances between the rows of `x1` and of `x2` (batch dimensions broadcast), with
    PyTorch's derivative: none at a zero distance, the full gradient to every coordinate tied for the maximum
    with `p=inf`. `compute_mode` is accepted; the distances are always computed from the differences (the most
    accurate of PyTorch's modes).

    Example:
        >>> tp.cdist(tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0], [1.0, 0.0]]))
        tensor([[5., 1.]])
    """
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:  # (nor complex)
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_dtype.SCALAR_NAMES[t.dtype.name]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype in (_dtype.float16, _dtype.bfloat16) and x1.numel() and x2.numel():
        # PyTorch's distance kernel has no half version; its Euclidean path by matrix products has.
        rows = max(x1.shape[-2], x2.shape[-2])
        if not (p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
                compute_mode != "donot_use_mm_for_euclid_dist" and rows > 25))):
            raise _kernel("cdist")(x1.dtype.name)
    _same_scalar_type(x1, x2)
    return dispatch(X.nn.cdist, (x1, x2), (("p", float(p)),))


def _same_scalar_type(a, b) -> None:
    """Kernels that take one dtype (PyTorch does not promote for them): its words."""
    if a._raw.dtype != b._raw.dtype:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"expected scalar type {s[a.dtype.name]} but found {s[b.dtype.name]}")


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
from .._factories import full_like  # noqa: E402
from .elementwise import masked_fill  # noqa: E402
from .shape import _select  # noqa: E402
from .writes import scatter_reduce  # noqa: E402
