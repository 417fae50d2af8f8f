"""Sparse COO tensors, as PyTorch programs build and use them (graph convolutions, sparse features).

A sparse tensor here is a dense tensor that remembers the indices and values it was built from: it reports
`layout == sparse_coo` and `is_sparse`, prints as PyTorch prints a sparse tensor, answers `indices()`,
`values()`, `_nnz()`, `coalesce()`, `to_dense()`, and enters every op as the dense matrix it stands for, so
`torch.sparse.mm`, `torch.spmm`, `@`, `addmm` and `sparse + dense` give PyTorch's numbers and gradients
(through the values, when they require grad). Conversions (`to`, `float`, `double`, `cpu`, `cuda`, `type`,
`clone`, `detach`) keep the sparse layout; other ops return dense tensors, also where PyTorch returns
sparse ones (`sparse * 2`, `sparse.t()`, `sparse + sparse`: their values are PyTorch's). The memory is
the dense tensor's: graphs of up to a few tens of thousands of nodes. A sparse leaf that requires grad
gets a dense `.grad`, as in PyTorch, and a dense gradient accumulated into a sparse `.grad` replaces it with
the dense sum; saving a sparse tensor with `tp.save` stores it dense.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _dtype
from ._tensor import Tensor
from ._tensor_extras import sparse_coo, strided

__all__ = ["sparse_coo_tensor", "spmm"]


class _COO:
    """What a sparse tensor was built from: `indices` (sparse_dim x nnz, int64), `values` (nnz, *dense
    dims), and whether the indices are known to be sorted and unique."""

    __slots__ = ("indices", "values", "coalesced")

    def __init__(self, indices: Tensor, values: Tensor, coalesced: bool):
        self.indices, self.values, self.coalesced = indices, values, coalesced


def coo_of(t) -> _COO | None:
    return t._coo if isinstance(t, Tensor) else None


def _build(indices: Tensor, values: Tensor, size: tuple, coalesced: bool) -> Tensor:
    """The dense tensor of `size` with `values` summed in at `indices`, marked sparse; on the tape when the
    values require grad (the gradient of a value is the dense gradient at its index)."""
    from ._factories import zeros

    dense = zeros(size, dtype=values.dtype)
    if indices.shape[1]:
        dense = dense.index_put(tuple(indices.unbind(0)), values, accumulate=True)
    dense._coo = _COO(indices, values, coalesced)
    return dense


def _check_indices(idx: np.ndarray, size) -> None:
    for d in range(idx.shape[0]):
        if idx.shape[1] == 0:
            continue
        low, high = int(idx[d].min()), int(idx[d].max())
        if low < 0:
            raise RuntimeError(f"found negative index {low} for dim {d}")
        if size is not None and high >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{high}")


def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None) -> Tensor:
    """A sparse COO tensor with `values` at `indices` (sparse_dim x nnz); duplicate indices add up. Without
    `size`, each sparse dimension is one past its largest index (values' trailing dimensions follow).
    `sparse_coo_tensor(size)` is an empty one. With `requires_grad`, it is a leaf whose `.grad` is dense.

    Example:
        >>> import tapeflow as tp
        >>> s = tp.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3))
        >>> s.layout, s._nnz(), s.to_dense()
        (tapeflow.sparse_coo, 2, tensor([[0., 0., 3.],
                [4., 0., 0.]]))
    """
    from ._factories import tensor

    if values is None:  # sparse_coo_tensor(size): no entries
        size = indices if size is None else size
        if size is None or isinstance(size, Tensor):
            raise TypeError("sparse_coo_tensor() takes `indices` and `values`, or a `size` alone")
        size = tuple(int(s) for s in size)
        indices, values = tensor(np.zeros((len(size), 0), np.int64)), tensor([], dtype=dtype or _dtype.get_default_dtype())
    indices = indices if isinstance(indices, Tensor) else tensor(indices)
    values = values if isinstance(values, Tensor) else tensor(values)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if indices.shape[1] != values.shape[0] if values.ndim else indices.shape[1] != 1:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0] if values.ndim else 1}")
    idx = np.asarray(indices.detach().tolist(), dtype=np.int64).reshape(indices.shape)
    size = None if size is None else tuple(int(s) for s in size)
    _check_indices(idx, size)
    if size is None:
        size = tuple(int(idx[d].max()) + 1 if idx.shape[1] else 0 for d in range(idx.shape[0]))
        size += tuple(values.shape[1:])
    if dtype is not None:
        values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    indices = tensor(idx) if indices.dtype != _dtype.int64 else indices.detach()
    if not requires_grad:
        return _build(indices, values, size, bool(is_coalesced))
    if values.requires_grad:
        raise RuntimeError("sparse_coo_tensor(): values require grad, so the result is not a leaf; pass "
                           "requires_grad=False (the result then requires grad through the values)")
    leaf = _build(indices, values, size, bool(is_coalesced))
    coo = leaf._coo
    leaf = leaf.detach().requires_grad_()  # (a leaf: its gradient is the dense gradient, as PyTorch's is)
    leaf._coo = coo
    return leaf


def _coalesce(self) -> Tensor:
    coo = coo_of(self)
    if coo is None:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")
    if coo.coalesced:
        return self
    from ._factories import tensor, zeros

    idx = np.asarray(coo.indices.tolist(), dtype=np.int64).reshape(coo.indices.shape)
    shape = tuple(self.shape[:idx.shape[0]])
    flat = np.ravel_multi_index(tuple(idx), shape) if idx.shape[1] else np.zeros(0, np.int64)
    unique, inverse = np.unique(flat, return_inverse=True)
    values = zeros((len(unique), *coo.values.shape[1:]), dtype=coo.values.dtype)
    values = values.index_add(0, tensor(inverse.reshape(-1).astype(np.int64)), coo.values)
    indices = tensor(np.stack(np.unravel_index(unique, shape)).astype(np.int64).reshape(len(shape), -1))
    out = _ORIGINAL["clone"](self)
    out._coo = _COO(indices, values, True)
    return out


def _part(what: str, coalesced_only: bool):
    """`indices()`/`values()` (which PyTorch gives only for a coalesced tensor) or `_indices()`/`_values()`."""
    def get(self):
        coo = coo_of(self)
        if coo is None:
            raise RuntimeError(f"{what} expected sparse tensor layout but got Strided")
        if coalesced_only and not coo.coalesced:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first")
        return coo.indices if what == "indices" else coo.values
    return get


def _nnz(self) -> int:
    coo = coo_of(self)
    if coo is None:
        raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' backend. It is only "
                                  "available for sparse tensors (build one with sparse_coo_tensor or to_sparse()).")
    return int(coo.indices.shape[1])


def _to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
    out = _ORIGINAL["clone"](self) if coo_of(self) is not None else self
    return out if dtype is None else out.to(dtype)


def _to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None) -> Tensor:
    """The sparse tensor of this dense one: its nonzeros (whole nonzero slices past `sparse_dim`)."""
    if coo_of(self) is not None:
        return self
    from ._factories import tensor

    sparse_dim = self.ndim if sparse_dim is None else int(sparse_dim)
    arr = np.asarray(self.detach().tolist(), dtype=self._raw.dtype).reshape(tuple(self.shape))
    mask = arr != 0
    if sparse_dim < self.ndim:
        mask = mask.reshape(mask.shape[:sparse_dim] + (-1,)).any(-1)
    idx = np.stack(np.nonzero(mask)).astype(np.int64).reshape(sparse_dim, -1)
    indices = tensor(idx)
    values = self[tuple(indices.unbind(0))] if idx.shape[1] else self.new_zeros((0, *self.shape[sparse_dim:]))
    out = _ORIGINAL["clone"](self)
    out._coo = _COO(indices, values, True)
    return out


def _sparse_dim(self) -> int:
    coo = coo_of(self)
    return int(coo.indices.shape[0]) if coo is not None else 0


def _dense_dim(self) -> int:
    coo = coo_of(self)
    return self.ndim - int(coo.indices.shape[0]) if coo is not None else self.ndim


def _is_coalesced(self) -> bool:
    coo = coo_of(self)
    if coo is None:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")
    return coo.coalesced


def _keeps_sparse(method):
    """`method` of a sparse tensor applied to its values too: the result is sparse with the same indices
    (conversions, copies, scaling by a number)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        coo = coo_of(self)
        if coo is not None and isinstance(out, Tensor) and out is not self and coo_of(out) is None:
            if tuple(out.shape) == tuple(self.shape):
                out._coo = _COO(coo.indices, method(coo.values, *args, **kwargs), coo.coalesced)
        return out
    return run


def _sparse_repr(self, base_repr) -> str:
    coo = coo_of(self)
    if coo is None:
        return base_repr(self)
    indices = repr(coo.indices.detach()).replace(f", dtype={_dtype.int64}", "")  # (indices are always int64)
    indices = indices.replace("\n", "\n" + " " * len("tensor(indices="))
    values = repr(coo.values.detach())
    if ", dtype=" in values:  # (the dtype is printed once, after the size)
        values = values[:values.index(", dtype=")] + ")"
    if coo.values.numel() == 0 and ", size=" not in values:  # (PyTorch gives an empty one's size here)
        values = values[:-1] + f", size={tuple(coo.values.shape)})"
    values = values.replace("\n", "\n" + " " * len("       values="))
    size = "(" + ", ".join(str(s) for s in self.shape) + ("," if self.ndim == 1 else "") + ")"
    dtype = "" if self.dtype in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool) else f"dtype={self.dtype}, "
    grad = f", grad_fn=<{type(self.grad_fn).__name__}>" if self.grad_fn is not None else \
        (", requires_grad=True" if self.requires_grad else "")
    return (f"tensor(indices={indices},\n       values={values},\n       size={size}, nnz={coo.indices.shape[1]}, "
            f"{dtype}layout={_dtype.PREFIX[0]}.sparse_coo{grad})")


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """The matrix product of a sparse (or dense) matrix and a dense one: `torch.spmm`.

    Example:
        >>> import tapeflow as tp
        >>> a = tp.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
        >>> tp.spmm(a, tp.ones(2, 1))
        tensor([[2.],
                [3.]])
    """
    return input.mm(mat2)


_ORIGINAL: dict = {}
_CONVERSIONS = ("to", "float", "double", "half", "bfloat16", "long", "int", "cpu", "cuda", "type", "clone", "detach")


def install() -> None:
    """Give `Tensor` its sparse methods (called once every Tensor method exists)."""
    base_repr = Tensor.__repr__
    Tensor._coo = None  # (set on a sparse tensor's own instance)
    Tensor.__repr__ = lambda self: _sparse_repr(self, base_repr)
    Tensor.layout = property(lambda self: sparse_coo if self._coo is not None else strided)
    Tensor.is_sparse = property(lambda self: self._coo is not None)
    Tensor.coalesce = _coalesce
    Tensor.is_coalesced = _is_coalesced
    Tensor.indices = _part("indices", True)
    Tensor.values = _part("values", True)
    Tensor._indices = _part("indices", False)
    Tensor._values = _part("values", False)
    Tensor._nnz = _nnz
    Tensor.to_dense = _to_dense
    Tensor.to_sparse = _to_sparse
    Tensor.to_sparse_coo = _to_sparse
    Tensor.sparse_dim = _sparse_dim
    Tensor.dense_dim = _dense_dim
    for name in _CONVERSIONS:
        _ORIGINAL[name] = getattr(Tensor, name)
        setattr(Tensor, name, _keeps_sparse(_ORIGINAL[name]))

