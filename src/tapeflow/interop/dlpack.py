"""Zero-copy exchange with other array libraries: DLPack, NumPy and `__jax_array__`."""

from __future__ import annotations

import jax

from .._tensor import Tensor

__all__ = ["from_dlpack", "install_tensor_protocols"]


def from_dlpack(ext_tensor) -> Tensor:
    """A Tensor sharing memory with `ext_tensor`, an object implementing the DLPack protocol.

    Works with anything that has `__dlpack__` and `__dlpack_device__` (NumPy
    arrays, PyTorch tensors, CuPy arrays, JAX arrays, tapeflow Tensors).
    Memory is shared when the producer's device and layout allow it; JAX
    copies otherwise (e.g. non-contiguous or read-only buffers).

    Arguments:
        ext_tensor: the producer.

    Returns:
        A new leaf Tensor (not requiring grad).

    Example:
        >>> import numpy as np, tapeflow as tp
        >>> tp.from_dlpack(np.arange(3.0))
        tensor([0., 1., 2.], dtype=tapeflow.float64)
    """
    if isinstance(ext_tensor, Tensor):
        return Tensor._wrap(ext_tensor._data)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(ext_tensor).__name__} does not implement __dlpack__; pass an array "
                        "from a DLPack-capable library (NumPy >= 1.22, PyTorch, CuPy, JAX)")
    return Tensor._wrap(jax.dlpack.from_dlpack(ext_tensor))


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    data = self._concrete("__dlpack__")
    kwargs = {"stream": stream}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return data.__dlpack__(**kwargs)


def _dlpack_device(self):
    return self._concrete("__dlpack_device__").__dlpack_device__()


def _jax_array(self):
    return self._data


def install_tensor_protocols() -> None:
    """Give `Tensor` the `__dlpack__`, `__dlpack_device__` and `__jax_array__` protocols.

    Returns:
        None. Runs when `tapeflow.interop` is imported.

    Example:
        >>> import jax.numpy as jnp, tapeflow as tp
        >>> float(jnp.sum(tp.ones(3)))
        3.0
    """
    _dlpack.__name__ = "__dlpack__"
    _dlpack.__doc__ = "Export the tensor's buffer through the DLPack protocol (shares memory)."
    _dlpack_device.__name__ = "__dlpack_device__"
    _dlpack_device.__doc__ = "The DLPack device type and id of the tensor's buffer."
    _jax_array.__name__ = "__jax_array__"
    _jax_array.__doc__ = "The tensor's `jax.Array`, so `jax.numpy` functions accept tensors."
    Tensor.__dlpack__ = _dlpack
    Tensor.__dlpack_device__ = _dlpack_device
    Tensor.__jax_array__ = _jax_array
