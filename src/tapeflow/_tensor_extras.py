"""The rest of `Tensor`'s API that programs touch: layouts and memory formats (`tp.strided`,
`tp.channels_last`, ...), size and device queries (`itemsize`, `nbytes`, `get_device`), no-op memory hints
(`pin_memory`, `share_memory_`), `resize_`, `fill_diagonal_`, `apply_` / `map_`, the legacy `new`, and the
older linear-algebra spellings (`cholesky`, `lu`, `lu_solve`, `triangular_solve`)."""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype, _ops, _toplevel, linalg
from ._dispatch import inplace
from ._layout import check_memory_format
from ._tensor import Tensor

__all__ = ["layout", "strided", "sparse_coo", "memory_format", "contiguous_format", "channels_last",
           "channels_last_3d", "preserve_format", "typename", "cholesky", "lu", "lu_unpack", "lu_solve",
           "triangular_solve"]


class layout:
    """A tensor layout. Every tapeflow tensor is `strided` (dense); `sparse_coo` exists for code that names it.

    Example:
        >>> import tapeflow as tp
        >>> tp.ones(2).layout
        tapeflow.strided
    """

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"{_dtype.PREFIX[0]}.{self.name}"


strided, sparse_coo = layout("strided"), layout("sparse_coo")


class memory_format:
    """A memory format. JAX arrays have no strides to choose, so every format is accepted and the data are
    the same; `contiguous_format`, `channels_last`, `channels_last_3d` and `preserve_format` exist for code that
    names them.

    Example:
        >>> import tapeflow as tp
        >>> tp.ones(1, 3, 2, 2).contiguous(memory_format=tp.channels_last).shape
        tapeflow.Size([1, 3, 2, 2])
    """

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"{_dtype.PREFIX[0]}.{self.name}"


contiguous_format, channels_last = memory_format("contiguous_format"), memory_format("channels_last")
channels_last_3d, preserve_format = memory_format("channels_last_3d"), memory_format("preserve_format")


def typename(obj) -> str:
    """The legacy type name of a tensor (`'torch.FloatTensor'`), or an object's qualified class name.

    Example:
        >>> import tapeflow as tp
        >>> tp.typename(tp.ones(1)), tp.typename(3)
        ('torch.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", None) else f"{module}.{cls.__qualname__}"


def cholesky(input, upper: bool = False):
    """The older spelling of `tp.linalg.cholesky(input, upper=upper)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.cholesky(tp.tensor([[4.0, 2.0], [2.0, 2.0]]))
        tensor([[2., 0.],
                [1., 1.]])
    """
    return linalg.cholesky(input, upper=upper)


def lu(A, pivot: bool = True, get_infos: bool = False):
    """The older `torch.lu`: `(LU, pivots)` (and `infos` with `get_infos=True`) of `tp.linalg.lu_factor`.

    Example:
        >>> import tapeflow as tp
        >>> LU, pivots = tp.lu(tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> pivots
        tensor([2, 2], dtype=tapeflow.int32)
    """
    if not pivot:
        raise RuntimeError("lu without pivoting is not implemented on the CPU")
    if get_infos:
        return linalg.lu_factor_ex(A)
    return linalg.lu_factor(A)


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True):
    """`(P, L, U)` from a packed LU factorisation (as `tp.lu` returns it).

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> P, L, U = tp.lu_unpack(*tp.lu(A))
        >>> tp.allclose(P @ L @ U, A)
        True
    """
    from .nn.functional import one_hot

    m, k = LU_data.shape[-2], min(LU_data.shape[-2], LU_data.shape[-1])
    L = _ops.tril(LU_data[..., :, :k], -1) + _eye(m, k, LU_data.dtype)
    U = _ops.triu(LU_data[..., :k, :])
    P = one_hot(_permutation(LU_pivots, m), m).to(LU_data.dtype).mT  # A = P @ L @ U
    return P if unpack_pivots else None, L if unpack_data else None, U if unpack_data else None


def _eye(m, k, dtype):
    from ._factories import eye

    return eye(m, k, dtype=dtype)


def _permutation(pivots, m):
    """The row permutation that LAPACK's 1-based pivots (row i swapped with row pivots[i] - 1) describe."""
    piv = np.asarray(pivots.numpy()) - 1
    batch = piv.reshape(-1, piv.shape[-1])
    perms = []
    for row in batch:
        perm = list(range(m))
        for i, j in enumerate(row):
            perm[i], perm[j] = perm[j], perm[i]
        perms.append(perm)
    from ._factories import tensor

    return tensor(np.asarray(perms).reshape(*piv.shape[:-1], m))


def lu_solve(b, LU_data, LU_pivots):
    """The older `torch.lu_solve(b, LU, pivots)`: `tp.linalg.lu_solve(LU, pivots, b)`.

    Example:
        >>> import tapeflow as tp
        >>> A = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> tp.lu_solve(tp.tensor([[1.0], [2.0]]), *tp.lu(A))
        tensor([[0.0000],
                [0.5000]])
    """
    return linalg.lu_solve(LU_data, LU_pivots, b)


def triangular_solve(b, A, upper: bool = True, transpose: bool = False, unitriangular: bool = False):
    """The older `torch.triangular_solve`: the named tuple `(solution, cloned_coefficient)` of `A X = b` (with
    `A.mT` when `transpose`).

    Example:
        >>> import tapeflow as tp
        >>> tp.triangular_solve(tp.tensor([[2.0], [3.0]]), tp.tensor([[2.0, 1.0], [0.0, 1.0]])).solution
        tensor([[-0.5000],
                [ 3.0000]])
    """
    from collections import namedtuple

    M = A.mT if transpose else A
    X = linalg.solve_triangular(M, b, upper=upper != transpose, unitriangular=unitriangular)
    return namedtuple("triangular_solve", ["solution", "cloned_coefficient"])(X, A.clone())


# -- Tensor methods ----------------------------------------------------------------------------------------------
def _fill_diagonal_(self, fill_value, wrap: bool = False):
    """Write `fill_value` on the main diagonal in place (every dimension equal for more than 2; `wrap` continues
    below a tall matrix's square part every `cols + 1` rows, as NumPy's `fill_diagonal`)."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(tuple(self.shape), bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    from ._factories import tensor

    return inplace(self, _ops.where(tensor(mask), fill_value, self))


def _resize(self, *sizes, what="resize"):
    """The deprecated out-of-place `resize`: this tensor's elements in the shape `sizes` (the same number of
    elements), differentiable.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.ones(2, 3).resize(3, 2).shape
        tapeflow.Size([3, 2])
    """
    warnings.warn(f"non-inplace {what} is deprecated", UserWarning, stacklevel=2)
    n = int(np.prod(sizes, dtype=np.int64))
    if n != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the given "
                           f"tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the number "
                           "of elements. ")
    return self.contiguous().view(*sizes)


def _resize_(self, *sizes, memory_format=None):
    """Give this tensor the shape `sizes` in place: the flat data are kept where they fit, new elements are 0."""
    from ._dispatch import check_inference_write
    from ._factories import zeros

    check_inference_write(self)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    check_memory_format(memory_format, len(shape))
    if shape == tuple(self.shape):
        return self  # nothing changes (and the version stays, as in PyTorch)
    n = int(np.prod(shape, dtype=np.int64))
    if self._base is None and _ops.arrange._has_other_aliases(self):
        if n <= self.numel():  # (the first n elements, in another layout: the aliases keep theirs)
            return _ops.arrange._become(self, lambda x: x.view(-1)[:n].view(shape))
        from ._tensor import _leave_storage

        _leave_storage(self)  # (more elements: a new allocation, the aliases keep the old ones)
    flat = self.detach().reshape(-1)
    if flat.numel() >= n:
        new = flat[:n].reshape(shape)
    else:
        new = _ops.cat([flat, zeros(n - flat.numel(), dtype=self.dtype)]).reshape(shape)
    self._raw = new._raw
    self._st().version += 1
    return self


def _apply_(self, callable):
    """Replace each element by `callable(element)` (Python, on the host; as PyTorch's CPU-only `apply_`)."""
    out = np.vectorize(callable, otypes=[np.dtype(self.dtype.jax)])(self.detach().numpy())
    from ._factories import tensor

    return inplace(self, tensor(out, dtype=self.dtype))


def _map_(self, other, callable):
    """Replace each element by `callable(element, other's element)` (Python, on the host)."""
    a, b = np.broadcast_arrays(self.detach().numpy(), np.asarray(other.detach().numpy()))
    out = np.vectorize(callable, otypes=[np.dtype(self.dtype.jax)])(a, b)
    from ._factories import tensor

    return inplace(self, tensor(out, dtype=self.dtype))


def _new(self, *args, device=None, **kwargs):
    """The legacy constructor, as PyTorch's: `x.new(2, 3)` or `x.new(tp.Size([2, 3]))` an uninitialised (zero)
    tensor of `x`'s dtype, `x.new(data)` (a list, tuple or array) a tensor of that data in `x`'s dtype,
    `x.new()` an empty one; `device=` is the only keyword."""
    from ._factories import tensor, zeros
    from ._tensor import Size

    device = self.device if device is None else device
    if kwargs or (len(args) > 1 and not all(isinstance(a, (int, np.integer)) for a in args)):
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (*, torch.device device = None)\n * (tuple of ints size, *, torch.device device = None)\n"
                        " * (object data, *, torch.device device = None)")
    if len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
        data = args[0]
        if isinstance(data, Tensor):
            raise TypeError(f"new(): expected a size or data, got a Tensor; use x.new_tensor(t) or t.to({self.dtype})")
        if isinstance(data, (float, complex, bool)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=self.dtype, device=device)
    size = args[0] if len(args) == 1 and isinstance(args[0], Size) else args if args else (0,)
    return zeros(*size, dtype=self.dtype, device=device)


def _get_device(self) -> int:
    d = self.device
    return -1 if d.type in ("cpu", "meta") else (d.index or 0)


Tensor.layout = property(lambda self: strided)
Tensor.itemsize = property(lambda self: self.dtype.itemsize)
Tensor.nbytes = property(lambda self: self.dtype.itemsize * self.numel())
Tensor.get_device = _get_device
Tensor.is_signed = lambda self: self.dtype.is_signed
Tensor.char = lambda self: self.to(_dtype.int8)
Tensor.cfloat = lambda self: self.to(_dtype.complex64)
Tensor.cdouble = lambda self: self.to(_dtype.complex128)
Tensor.pin_memory = lambda self, device=None: self
Tensor.is_pinned = lambda self, device=None: False
Tensor.share_memory_ = lambda self: self
Tensor.is_shared = lambda self: False
Tensor.fill_diagonal_ = _fill_diagonal_
Tensor.resize_ = _resize_
Tensor.resize_as_ = lambda self, other, memory_format=None: _resize_(self, tuple(other.shape))
Tensor.resize = _resize
Tensor.resize_as = lambda self, tensor: _resize(self, *tensor.size(), what="resize_as")
Tensor.apply_ = _apply_
Tensor.map_ = _map_
Tensor.new = _new
Tensor.cholesky = cholesky
Tensor.lu = lu
Tensor.lu_solve = lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots)
Tensor.triangular_solve = triangular_solve


def _hardshrink(self, lambd=0.5):
    from .nn.functional import hardshrink

    return hardshrink(self, lambd)


Tensor.hardshrink = _hardshrink
Tensor.unsafe_split = lambda self, split_size, dim=0: _toplevel.unsafe_split(self, split_size, dim)
Tensor.unsafe_chunk = lambda self, chunks, dim=0: _toplevel.unsafe_chunk(self, chunks, dim)
Tensor.unsafe_split_with_sizes = lambda self, split_sizes, dim=0: _toplevel.unsafe_split_with_sizes(self, split_sizes,
                                                                                                   dim)
# (Inference tensors are never views in PyTorch, though they share their base's storage.)
Tensor._is_view = lambda self: self._base is not None and not self._inference
