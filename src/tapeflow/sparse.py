"""`tapeflow.sparse`: PyTorch's `torch.sparse` functions for sparse COO tensors (see `sparse_coo_tensor`).

Example:
    >>> import tapeflow as tp
    >>> adj = tp.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 1.0], (2, 2))
    >>> tp.sparse.mm(adj, tp.tensor([[1.0], [2.0]]))
    tensor([[2.],
            [1.]])
"""

from __future__ import annotations

from . import _dtype
from ._sparse import coo_of, sparse_coo_tensor
from ._tensor import Tensor

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "FloatTensor", "DoubleTensor", "LongTensor",
           "IntTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "BoolTensor"]


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """The matrix product of a sparse matrix and a dense (or sparse) one; the result is dense.

    Example:
        >>> import tapeflow as tp
        >>> tp.sparse.mm(tp.eye(2).to_sparse(), tp.ones(2, 1))
        tensor([[1.],
                [1.]])
    """
    if reduce != "sum":
        raise NotImplementedError(f"tapeflow: sparse.mm with reduce='{reduce}' is not supported (only 'sum')")
    return mat1.mm(mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """`beta * mat + alpha * (mat1 @ mat2)` with a sparse `mat1`.

    Example:
        >>> import tapeflow as tp
        >>> tp.sparse.addmm(tp.ones(2, 1), tp.eye(2).to_sparse(), tp.ones(2, 1), alpha=2)
        tensor([[3.],
                [3.]])
    """
    return mat.addmm(mat1, mat2, beta=beta, alpha=alpha)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:  # noqa: A001 - PyTorch's name
    """The sum of a sparse tensor's elements (a dense 0-d tensor), or over `dim` (a sparse tensor).

    Example:
        >>> import tapeflow as tp
        >>> s = tp.sparse_coo_tensor([[0, 1, 1], [0, 0, 1]], [1.0, 2.0, 3.0], (2, 2))
        >>> tp.sparse.sum(s), tp.sparse.sum(s, 1).to_dense()
        (tensor(6.), tensor([1., 5.]))
    """
    dense = input.to_dense() if coo_of(input) is not None else input
    if dtype is not None:
        dense = dense.to(dtype)
    if dim is None:
        return dense.sum()
    out = dense.sum(dim)
    return out.to_sparse() if out.ndim else out


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """Softmax over `dim` of the specified entries only: the unspecified ones count as -inf (they stay zero).

    Example:
        >>> import tapeflow as tp
        >>> s = tp.sparse_coo_tensor([[0, 0], [0, 2]], [1.0, 1.0], (1, 3))
        >>> tp.sparse.softmax(s, 1).to_dense()
        tensor([[0.5000, 0.0000, 0.5000]])
    """
    return _masked(input, dim, dtype, log=False)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """Log-softmax over `dim` of the specified entries only (the unspecified ones stay zero).

    Example:
        >>> import tapeflow as tp
        >>> s = tp.sparse_coo_tensor([[0, 0], [0, 2]], [1.0, 1.0], (1, 3))
        >>> tp.sparse.log_softmax(s, 1).to_dense()
        tensor([[-0.6931,  0.0000, -0.6931]])
    """
    return _masked(input, dim, dtype, log=True)


def _masked(input: Tensor, dim: int, dtype, log: bool) -> Tensor:
    from . import _ops
    from ._factories import ones_like
    from .nn import functional as F

    coo = coo_of(input)
    if coo is None:
        raise RuntimeError("sparse softmax expects a sparse tensor (layout=sparse_coo), got a strided one")
    mask = sparse_coo_tensor(coo.indices, ones_like(coo.values.detach()), tuple(input.shape)).to_dense() != 0
    dense = input.to_dense() if dtype is None else input.to_dense().to(dtype)
    scores = _ops.where(mask, dense, float("-inf"))
    out = (F.log_softmax if log else F.softmax)(scores, dim)
    out = _ops.where(mask, out, 0.0)
    return out.to_sparse()


def _legacy(dtype):
    def construct(*args, size=None):
        """A sparse tensor of this dtype: `(indices, values, size)`, `(indices, values)` or an empty one of a
        size."""
        if args and isinstance(args[0], Tensor):
            indices, values = args[0], args[1]
            shape = size if size is not None else (args[2] if len(args) > 2 else None)
            return sparse_coo_tensor(indices, values, shape, dtype=dtype)
        from ._factories import zeros

        shape = tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else tuple(args)
        return sparse_coo_tensor(zeros((len(shape), 0), dtype=_dtype.int64), zeros((0,), dtype=dtype), shape)
    return construct


FloatTensor, DoubleTensor, HalfTensor = _legacy(_dtype.float32), _legacy(_dtype.float64), _legacy(_dtype.float16)
BFloat16Tensor, LongTensor, IntTensor = _legacy(_dtype.bfloat16), _legacy(_dtype.int64), _legacy(_dtype.int32)
ByteTensor, BoolTensor = _legacy(_dtype.uint8), _legacy(_dtype.bool)
