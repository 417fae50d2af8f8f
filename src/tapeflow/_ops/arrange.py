"""Rearranging ops built on the views and joins of `shape`: strided views (`unfold`, `as_strided`), stacking and
splitting helpers, diagonals, index grids, and products of tensors (`kron`, `cartesian_prod`, `combinations`)."""

from __future__ import annotations

import builtins
import itertools

import jax.numpy as jnp
import numpy as np

import xla_ops as X

from .. import _dtype, _layout
from .._dispatch import rename_node, view
from .._tensor import as_tensor
from ._args import _dim, _t
from ._checks import tensor_arg
from ._dtype_rules import _kernel

__all__ = [
    "as_strided", "as_strided_", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "column_stack",
    "combinations", "diag_embed", "diagflat", "dsplit", "dstack", "hsplit", "is_same_size", "kron", "narrow_copy",
    "reshape_as", "rot90", "row_stack", "split_with_sizes", "sum_to_size", "tril_indices", "triu_indices",
    "unravel_index", "vander", "vsplit",
]


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
    """The view of the storage of `input` with the given `size` and `stride`, starting at `storage_offset`
    (`input.storage_offset()` by default), as PyTorch: for a view, the strides count in its base's row-major
    elements (those `input.stride()` reports). Reads overlapping elements as often as the strides say; their
    gradients add up.

    Example:
        >>> tp.as_strided(tp.arange(6.0), (2, 3), (1, 2))
        tensor([[0., 2., 4.],
                [1., 3., 5.]])
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if input._base is not None and input._view and _layout.layout(input) is not None:
        if storage_offset is None:
            storage_offset = input.storage_offset()
        input = input._base  # (its storage: the view's layout is a place in it)
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


# -- joins and splits ------------------------------------------------------------------------------------------------
def _tensors(tensors, name: str):
    """`f(a, b)` and `f([a, b])` alike: the tensors as a list, and whether they came as one bare tensor."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return [_t(x) for x in tensors[0]], False
    return [_t(x) for x in tensors], len(tensors) == 1


def _atleast(shapes, tensors):
    items, single = _tensors(tensors, "atleast")
    out = [x.reshape(shapes[x.ndim](tuple(x.shape))) if x.ndim < len(shapes) else x for x in items]
    return out[0] if single else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least one dimension (a 0-d one becomes shape `(1,)`); one tensor in, one out.

    Example:
        >>> tp.atleast_1d(tp.tensor(1.0))
        tensor([1.])
    """
    return _atleast([lambda s: (1,)], tensors)


def atleast_2d(*tensors):
    """Each tensor with at least two dimensions (a 1-D one of size `n` becomes a row, `(1, n)`).

    Example:
        >>> tp.atleast_2d(tp.tensor([1.0, 2.0]))
        tensor([[1., 2.]])
    """
    return _atleast([lambda s: (1, 1), lambda s: (1, *s)], tensors)


def atleast_3d(*tensors):
    """Each tensor with at least three dimensions (`(n,)` becomes `(1, n, 1)`, `(m, n)` becomes `(m, n, 1)`).

    Example:
        >>> tp.atleast_3d(tp.tensor([1.0, 2.0])).shape
        tapeflow.Size([1, 2, 1])
    """
    return _atleast([lambda s: (1, 1, 1), lambda s: (1, *s, 1), lambda s: (*s, 1)], tensors)


def column_stack(tensors):
    """The tensors side by side as columns (0-d and 1-D ones become columns first), along dimension 1.

    Example:
        >>> tp.column_stack([tp.tensor([1, 2]), tp.tensor([3, 4])])
        tensor([[1, 3],
                [2, 4]])
    """
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return cat([x.reshape(x.numel(), 1) if x.ndim <= 1 else x for x in (_t(x) for x in tensors)], 1)


def row_stack(tensors):
    """The tensors stacked as rows (`vstack`).

    Example:
        >>> tp.row_stack([tp.tensor([1, 2]), tp.tensor([3, 4])])
        tensor([[1, 2],
                [3, 4]])
    """
    return vstack(tensors)


def dstack(tensors):
    """The tensors stacked along the third dimension (after `atleast_3d`).

    Example:
        >>> tp.dstack([tp.tensor([1, 2]), tp.tensor([3, 4])])
        tensor([[[1, 3],
                 [2, 4]]])
    """
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(list(atleast_3d(list(tensors))), 2)


def _split_along(input, sections, dim: int, name: str, least: int):
    if input.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(sections, int):
        n = input.shape[dim]
        if sections == 0 or n % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{n} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):
    """Split into columns: along dimension 1 (0 for 1-D tensors), into equal sections or at the given indices.

    Example:
        >>> tp.hsplit(tp.arange(6).reshape(2, 3), [1])
        (tensor([[0],
                [3]]), tensor([[1, 2],
                [4, 5]]))
    """
    return _split_along(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


def vsplit(input, indices_or_sections):
    """Split into rows: along dimension 0 (at least 2-D input), into equal sections or at the given indices.

    Example:
        >>> tp.vsplit(tp.arange(4).reshape(2, 2), 2)
        (tensor([[0, 1]]), tensor([[2, 3]]))
    """
    return _split_along(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    """Split along dimension 2 (depth; at least 3-D input), into equal sections or at the given indices.

    Example:
        >>> [p.shape for p in tp.dsplit(tp.zeros(1, 2, 4), 2)]
        [tapeflow.Size([1, 2, 2]), tapeflow.Size([1, 2, 2])]
    """
    return _split_along(input, indices_or_sections, 2, "dsplit", 3)


def split_with_sizes(input, split_sizes, dim=0):
    """Split into pieces of the given sizes along `dim` (views; the sizes must add up to the dimension).

    Example:
        >>> tp.split_with_sizes(tp.arange(5), [2, 3])
        (tensor([0, 1]), tensor([2, 3, 4]))
    """
    return split(input, list(split_sizes), dim)


def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D; a 1-D one is a row) placed along the diagonal of a zero matrix.

    Example:
        >>> tp.block_diag(tp.tensor([[1, 2]]), tp.tensor(3))
        tensor([[1, 2, 0],
                [0, 0, 3]])
    """
    items = [_t(x) for x in tensors]
    for i, x in enumerate(items):
        if x.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{x.ndim} dimensions")
    if not items:
        return zeros(1, 0)
    dtype = items[0].dtype
    for x in items[1:]:
        dtype = _dtype.from_jax_dtype(jnp.promote_types(dtype.jax, x.dtype.jax))
    blocks = [x.reshape(1, 1) if x.ndim == 0 else x.reshape(1, -1) if x.ndim == 1 else x for x in items]
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        rows.append(cat([zeros(r, left, dtype=dtype), b.to(dtype), zeros(r, width - left - c, dtype=dtype)], 1))
        left += c
    return cat(rows, 0)


# -- diagonals ---------------------------------------------------------------------------------------------------------
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose `(dim1, dim2)` planes hold the last dimension of `input` on their `offset` diagonal.

    Example:
        >>> tp.diag_embed(tp.tensor([[1.0, 2.0]]))
        tensor([[[1., 0.],
                 [0., 2.]]])
    """
    nd = input.ndim + 1
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.ndim else 1) + builtins.abs(offset)
    rest = iter(input.shape[:-1])
    shape = [n if k in (d1, d2) else next(rest) for k in range(nd)]
    src = input if input.ndim else input.reshape(1)
    return diagonal_scatter(zeros(*shape, dtype=input.dtype), src, offset, d1, d2)


def diagflat(input, offset=0):
    """The flattened `input` on the `offset` diagonal of a square matrix.

    Example:
        >>> tp.diagflat(tp.tensor([[1, 2]]))
        tensor([[1, 0],
                [0, 2]])
    """
    return diag(input.reshape(-1), offset)


def _tri_indices(row, col, offset, dtype, keep):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype is not None and _dtype.to_dtype(dtype).name not in ("int64", "int32", "int16", "int8", "uint8"):
        raise _kernel("tril_indices")(_dtype.to_dtype(dtype).name)
    r, c = np.indices((row, col)).reshape(2, -1)
    sel = keep(c - r, offset)
    return as_tensor(np.stack([r[sel], c[sel]]), dtype=_dtype.int64 if dtype is None else dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The `(2, N)` coordinates of the lower triangle (on and below the `offset` diagonal) of a `row x col`
    matrix, row by row.

    Example:
        >>> tp.tril_indices(3, 3)
        tensor([[0, 1, 1, 2, 2, 2],
                [0, 0, 1, 0, 1, 2]])
    """
    return _tri_indices(row, col, offset, dtype, lambda k, o: k <= o)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The `(2, N)` coordinates of the upper triangle (on and above the `offset` diagonal) of a `row x col`
    matrix, row by row.

    Example:
        >>> tp.triu_indices(3, 3, 1)
        tensor([[0, 0, 1],
                [1, 2, 2]])
    """
    return _tri_indices(row, col, offset, dtype, lambda k, o: k >= o)


# -- products of tensors ---------------------------------------------------------------------------------------------
def kron(input, other):
    """The Kronecker product: every element of `input` times the whole of `other`, blocks laid out in `input`'s
    shape (the shorter shape padded with leading ones).

    Example:
        >>> tp.kron(tp.tensor([[1, 2]]), tp.tensor([[1], [10]]))
        tensor([[ 1,  2],
                [10, 20]])
    """
    tensor_arg("kron", "other", other)
    a, b = _t(input), _t(other)
    nd = builtins.max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    a = a.reshape(tuple(v for n in sa for v in (n, 1)))
    b = b.reshape(tuple(v for n in sb for v in (1, n)))
    return (a * b).reshape(tuple(m * n for m, n in zip(sa, sb)))


def cartesian_prod(*tensors):
    """All combinations of one element from each 1-D tensor, one per row (a single tensor is returned as is).

    Example:
        >>> tp.cartesian_prod(tp.tensor([1, 2]), tp.tensor([3, 4]))
        tensor([[1, 3],
                [1, 4],
                [2, 3],
                [2, 4]])
    """
    items = [_t(x) for x in tensors]
    for x in items:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if len(items) == 1:
        return items[0]
    if builtins.any(x.dtype != items[0].dtype for x in items):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    shape = tuple(x.shape[0] for x in items)
    cols = [x.reshape(tuple(-1 if j == k else 1 for j in range(len(items)))).expand(shape).reshape(-1)
            for k, x in enumerate(items)]
    return stack(cols, 1)


def combinations(input, r=2, with_replacement=False):
    """The length-`r` combinations of the elements of the 1-D `input` (as `itertools.combinations`, or
    `combinations_with_replacement`), one per row.

    Example:
        >>> tp.combinations(tp.tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input[:0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.asarray(list(pick(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    return input[as_tensor(idx)]


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D `x`: columns `x**(N-1), ..., x, 1` (`increasing`: `1, x, ...`).

    Example:
        >>> tp.vander(tp.tensor([1, 2, 3]), N=3)
        tensor([[1, 1, 1],
                [4, 2, 1],
                [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype.is_floating_point or x.dtype.is_complex:
        base = x
    else:
        base = x.to(_dtype.int64)  # integers and bools count in int64, as in PyTorch
    if n == 0:
        return zeros(x.shape[0], 0, dtype=base.dtype)
    powers = cat([ones(x.shape[0], 1, dtype=base.dtype), base.unsqueeze(1).expand(x.shape[0], n - 1)], 1).cumprod(1)
    return powers if increasing else powers.flip(1)


# -- shapes ------------------------------------------------------------------------------------------------------------
def unravel_index(indices, shape):
    """The coordinates in a tensor of `shape` of each flat index (one tensor per dimension; indices wrap around,
    negative ones count from the end).

    Example:
        >>> tp.unravel_index(tp.tensor([5, 11]), (3, 4))
        (tensor([1, 2]), tensor([1, 3]))
    """
    indices = _t(indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    flat = indices.to(_dtype.int64)
    if flat.numel() == 0:
        return tuple(flat.clone() for _ in shape)
    out, stride = [], 1
    for s in reversed(shape):
        out.append(flat.floor_divide(stride).remainder(s) if s else flat * 0)
        stride *= s
    return tuple(reversed(out))


def sum_to_size(input, *size):
    """`input` summed over the dimensions that broadcasting `size` to its shape would expand.

    Example:
        >>> tp.ones(2, 3).sum_to_size(1, 3)
        tensor([[2., 2., 2.]])
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s not in (1, n) for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = list(range(lead)) + [lead + k for k, s in enumerate(size) if s == 1 and shape[lead + k] != 1]
    out = input.sum(dims, keepdim=True) if dims else input
    return out.reshape(size)


def reshape_as(input, other):
    """`input` reshaped to `other`'s shape.

    Example:
        >>> tp.reshape_as(tp.arange(4), tp.zeros(2, 2))
        tensor([[0, 1],
                [2, 3]])
    """
    return input.reshape(tuple(other.shape))


def is_same_size(input, other) -> builtins.bool:
    """Whether the two tensors have the same shape.

    Example:
        >>> tp.is_same_size(tp.zeros(2, 3), tp.ones(2, 3))
        True
    """
    return tuple(input.shape) == tuple(other.shape)


def narrow_copy(input, dim, start, length):
    """A copy (not a view) of the slice `start:start + length` along `dim`.

    Example:
        >>> tp.narrow_copy(tp.arange(6), 0, 2, 3)
        tensor([2, 3, 4])
    """
    return narrow(input, dim, start, length).clone()


def rot90(input, k=1, dims=(0, 1)):
    """`input` rotated by `k` quarter turns in the plane of `dims`, from the first towards the second.

    Example:
        >>> tp.rot90(tp.tensor([[1, 2], [3, 4]]))
        tensor([[2, 4],
                [1, 3]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _dim(dims[0], input.ndim), _dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip((d0, d1))
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


# -- in-place forms of views (the tensor itself takes the new shape) ---------------------------------------------------
def _become(self, view_fn, node: str | None = None):
    """An in-place view op (`t_`, `transpose_`, `unsqueeze_`, `squeeze_`, `as_strided_`): this tensor takes the
    shape `view_fn(self)` gives. A view stays a view of the same base, one step further down its view chain (so
    later writes through it still reach the base); its history is the view op's, recorded even under no_grad
    when it requires grad (PyTorch regenerates it from the base)."""
    from .._dispatch import _check_view_write, check_inference_write

    check_inference_write(self)
    if self._requires_grad and is_grad_enabled():
        if self._view:
            _check_view_write(self)  # (views that cannot take a history: PyTorch's errors)
        elif self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if self._base is None and not self._requires_grad and _has_other_aliases(self):
        _rebase(self)  # (the tensors viewing it keep reading the old layout)
    if self._requires_grad and self.grad_fn is not None and not is_grad_enabled():
        from ..autograd.grad_mode import enable_grad

        with enable_grad():
            new = view_fn(self)
    else:
        new = view_fn(self)
    if node is not None:
        rename_node(new, node)  # (PyTorch's name for the in-place overload: `TransposeBackward1`)
    if self._base is None and new._base is self:  # a root takes the strides of its rearranged storage
        from .._layout import layout

        own = layout(new)
        self.__dict__["_own_layout"] = own
    self._data, self.grad_fn, self._output_nr = new._data, new.grad_fn, new._output_nr
    if self._base is not None and new._base is self._base:
        multi = _multi_step(self)
        self._view = new._view
        if multi is not None and _multi_step(self) is None:  # (as_strided_ restarts the chain at the storage)
            self._multi_origin = multi  # an output of an op returning several views stays one (PyTorch)
    st = self._st()
    st.version += 1  # (a change of layout counts as a write, as in PyTorch)
    base = self._base if self._base is not None else self
    if st.views is not None and base._requires_grad:
        from .._dispatch import invalidate_view

        for w in list(st.views):  # views made under no_grad get no history (see `invalidate_view`)
            if w is not self and (w._no_grad_view or w._untracked_no_grad_view) and w._base is base:
                invalidate_view(w)
    return self


def _multi_step(t):
    """The view-chain step that made `t` one of several views (`unbind`, `split`), if any."""
    return next((step for step in t._view if step[2] is not None), None) or getattr(t, "_multi_origin", None)


def _has_other_aliases(t) -> bool:
    st = t._storage
    return st is not None and st.views is not None and any(w is not t for w in st.views)


def _rebase(t) -> None:
    """Before a tensor that other tensors view changes its own layout: a hidden root keeps the storage in the
    old layout, the views (whose chains start from that layout) become views of it, and so does `t`."""
    from .._tensor import Tensor, _alias

    root = _alias(t, Tensor._wrap(t._data), peer=True)
    for w in t._storage.views:
        if w._base is t:
            w._base = root
    t._base = root


def transpose_(self, dim0, dim1):
    """In-place `transpose`: this tensor takes the transposed shape.

    Example:
        >>> x = tp.zeros(2, 3); x.transpose_(0, 1).shape
        tapeflow.Size([3, 2])
    """
    return _become(self, lambda x: transpose(x, dim0, dim1), "TransposeBackward1")


def t_(self):
    """In-place `t`: a matrix takes its transposed shape.

    Example:
        >>> x = tp.zeros(2, 3); x.t_().shape
        tapeflow.Size([3, 2])
    """
    def checked(x):  # (after the leaf check, as PyTorch orders them)
        if x.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
        return t(x)
    return _become(self, checked, "TBackward1")


def as_strided_(input, size, stride, storage_offset=None):
    """In-place `as_strided`: this tensor takes the strided view of its elements.

    Example:
        >>> x = tp.arange(4.0); x.as_strided_((2, 2), (1, 2))
        tensor([[0., 2.],
                [1., 3.]])
    """
    return _become(input, lambda x: as_strided(x, size, stride, storage_offset), "AsStridedBackward1")


# Sibling modules import each other; importing at the end lets every name above exist first.
from .._factories import ones, zeros  # noqa: E402
from ..autograd.grad_mode import is_grad_enabled  # noqa: E402
from .shape import cat, diag, narrow, split, stack, t, tensor_split, transpose, vstack  # noqa: E402
from .writes import diagonal_scatter  # noqa: E402
