"""Storage identity, as PyTorch reports it: `Tensor.data_ptr()`, `Tensor.untyped_storage()` and the
deprecated `Tensor.storage()`.

A tensor's values are a JAX array, which has no stable address (an in-place write makes a new one), so
tapeflow gives each storage (the `_Storage` that a tensor and all its aliases share) an address range of
its own the first time one is asked for. Addresses then relate as PyTorch's do: a view's `data_ptr()`
is its storage's plus its storage offset in bytes, every alias of one storage reports the same storage
address, an in-place write keeps it, and the ranges of two live storages never overlap. Code that finds
shared tensors by address (checkpoint writers, tied weights) sees what it would see under PyTorch.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

from . import _dtype
from ._tensor import Tensor

__all__ = ["UntypedStorage", "TypedStorage"]

_ALIGN = 64  # bytes between ranges, as an allocator's alignment
_next = [0x7F0000000000]  # the next free address (the value is arbitrary: it reads as a host pointer)
_lock = threading.Lock()


def _owner(t: Tensor) -> Tensor:
    """The tensor whose values are the whole storage of `t`: its base, or itself."""
    return t._base if t._base is not None else t


def _nbytes(t: Tensor) -> int:
    return t._raw.size * t._raw.dtype.itemsize


def _address(t: Tensor) -> int:
    """The address of `t`'s storage (0 for a storage of no bytes, as PyTorch's empty allocation)."""
    owner = _owner(t)
    size = _nbytes(owner)
    if size == 0:
        return 0
    st = owner._st()
    if not st.ptr:
        with _lock:
            if not st.ptr:
                st.ptr = _next[0]
                _next[0] += -(-size // _ALIGN) * _ALIGN
    return st.ptr


def data_ptr(self) -> int:
    """The address of this tensor's first element: its storage's address plus its storage offset in bytes.

    Aliases of one storage (views, `detach()`, `.data`) report addresses in the same range, an in-place write
    keeps the address, and live storages never overlap, as PyTorch's allocations.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.zeros(4)
        >>> x[1:].data_ptr() - x.data_ptr()
        4
        >>> x.add_(1).data_ptr() == x.data_ptr()
        True
    """
    if self._raw.size == 0:
        return 0  # (PyTorch's, for a tensor of no elements, even a view into a larger storage)
    base = _address(self)
    return base + self.storage_offset() * self._raw.dtype.itemsize


class _Elements:
    """Reading a storage's elements (bytes, or values of a dtype: `_values`) and printing them as PyTorch."""

    def tolist(self) -> list:
        """The elements, as Python numbers."""
        return self._values().tolist()

    def __getitem__(self, i):
        return self._values()[i].tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[{_dtype.PREFIX[0]}.storage.{self._describe()}]"


class UntypedStorage(_Elements):
    """The bytes behind a tensor and its aliases, as `Tensor.untyped_storage()` gives them: an address
    (`data_ptr`), a size in bytes (`nbytes`, `size`, `len`) and the bytes themselves (`tolist`, indexing).
    `UntypedStorage(n)` makes a storage of `n` zero bytes.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.zeros(2, 3)
        >>> s = x.untyped_storage()
        >>> s.nbytes(), s.data_ptr() == x.t().untyped_storage().data_ptr()
        (24, True)
    """

    def __init__(self, size: int = 0, *, device=None):
        from ._factories import zeros

        if not isinstance(size, (int, np.integer)) or isinstance(size, bool):
            raise TypeError(f"UntypedStorage(): argument 'size' must be int, not {type(size).__name__}")
        self._tensor = zeros(int(size), dtype=_dtype.uint8, device=device)

    @classmethod
    def _of(cls, t: Tensor) -> UntypedStorage:
        s = cls.__new__(cls)
        s._tensor = _owner(t)
        return s

    def data_ptr(self) -> int:
        """The storage's address (0 when it holds no bytes)."""
        return _address(self._tensor)

    def nbytes(self) -> int:
        """The storage's size in bytes."""
        return _nbytes(self._tensor)

    size = nbytes

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    @property
    def dtype(self):
        return _dtype.uint8

    @property
    def device(self):
        return self._tensor.device

    @property
    def is_cuda(self) -> bool:
        return self._tensor.is_cuda

    def is_shared(self) -> bool:
        return False

    def is_pinned(self, device=None) -> bool:
        return False

    def _values(self) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(self._tensor._data)).reshape(-1).view(np.uint8)

    def _describe(self) -> str:
        return f"UntypedStorage(device={self.device}) of size {self.nbytes()}"

    def untyped(self) -> UntypedStorage:
        return self


class TypedStorage(_Elements):
    """A storage seen in elements of a dtype (`Tensor.storage()`, deprecated in PyTorch in favour of
    `untyped_storage()`, with the same warning).

    Example:
        >>> import warnings, tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     s = tp.arange(6.).view(2, 3)[1].storage()
        >>> s.size(), s.tolist()
        (6, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError("TypedStorage is made by Tensor.storage(); make an UntypedStorage to allocate bytes")

    @classmethod
    def _of(cls, t: Tensor) -> TypedStorage:
        s = cls.__new__(cls)
        s._untyped, s._dtype = UntypedStorage._of(t), t.dtype
        return s

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._untyped.device

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def element_size(self) -> int:
        return self._dtype.itemsize

    def size(self) -> int:
        """The storage's size in elements of its dtype."""
        return self.nbytes() // self._dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def _values(self) -> np.ndarray:
        return self._untyped._values().view(np.dtype(self._dtype.jax))

    def _describe(self) -> str:
        return f"TypedStorage(dtype={self._dtype}, device={self.device}) of size {self.size()}"


_TYPED_WARNING = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


_warned: list = []


def untyped_storage(self) -> UntypedStorage:
    """The storage of this tensor and its aliases, in bytes (see `UntypedStorage`).

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(3)
        >>> x.untyped_storage().data_ptr() == x[2:].untyped_storage().data_ptr()
        True
    """
    return UntypedStorage._of(self)


def storage(self) -> TypedStorage:
    """The storage of this tensor in elements of its dtype (deprecated, as in PyTorch: use
    `untyped_storage()`).

    Example:
        >>> import warnings, tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.ones(3).storage().size()
        3
    """
    if not _warned:  # (once per process, as PyTorch's)
        _warned.append(True)
        warnings.warn(_TYPED_WARNING, UserWarning, stacklevel=2)
    return TypedStorage._of(self)


Tensor.data_ptr = data_ptr
Tensor.untyped_storage = untyped_storage
Tensor.storage = storage
