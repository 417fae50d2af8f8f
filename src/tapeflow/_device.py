"""Devices with PyTorch's spelling, mapped to JAX devices."""

from __future__ import annotations

import jax
import numpy as np

__all__ = ["device", "to_jax_device", "is_meta_device", "get_default_device", "set_default_device"]

_KINDS = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu", "xla": None, "meta": "meta"}


class device:
    """`tapeflow.device("cpu")`, `device("cuda:0")` (= JAX's first GPU), `device("tpu")`.

    Example:
        >>> import tapeflow as tp
        >>> tp.device("cpu")
        device(type='cpu')
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'cuda:0', got {type!r}")
        name, _, idx = type.partition(":")
        if name not in _KINDS:
            raise RuntimeError(
                f"Expected one of cpu, cuda, gpu, tpu, xla, meta device type at start of device string: {type}")
        if idx:
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = name, index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0) == (other.type, other.index or 0)

    def __hash__(self) -> int:
        return hash((self.type, self.index or 0))


def is_meta_device(d) -> bool:
    """Whether `d` (a device or a string) is the meta device (shapes without data, see `_meta`)."""
    return (d.type if isinstance(d, device) else device(d).type) == "meta"


def to_jax_device(d) -> jax.Device:
    """The JAX device for a tapeflow device (or string); a clear error if JAX has none."""
    d = device(d) if not isinstance(d, device) else d
    platform = _KINDS[d.type]
    if platform == "meta":
        raise RuntimeError("tapeflow: the meta device holds no data, so it has no JAX device")
    try:
        devs = jax.devices(platform) if platform else jax.devices()
    except RuntimeError:
        raise RuntimeError(
            f"tapeflow: no {d.type} device is available to JAX (it sees {jax.devices()}); "
            f"install the matching jax extra (e.g. `pip install tapeflow[cuda]`) or use device='cpu'") from None
    i = d.index or 0
    if i >= len(devs):
        raise RuntimeError(f"tapeflow: {d} is out of range: JAX has {len(devs)} {d.type} device(s)")
    return devs[i]


def host_array(a, dtype=None) -> jax.Array:
    """A JAX array holding a copy of host data `a` (a NumPy array or scalar, nested lists of numbers), as
    `dtype` if given; a JAX array is returned as it is (cast to `dtype`).

    `jnp.asarray` copies a NumPy array with a compiled program, one per new shape (~20 ms each on a CPU),
    which a program whose batches change shape pays at every step; the transfer here compiles nothing.
    """
    if isinstance(a, jax.Array):
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    # A private copy: the transfer runs asynchronously and reads its source after this returns, so the
    # caller's array may not be it (a write to it right after would reach the tensor).
    a = np.array(a, dtype, copy=True)
    if not a.dtype.isnative:  # (big-endian data read from a file)
        a = a.astype(a.dtype.newbyteorder("="))
    return jax.device_put(a)


def default_jax_device() -> jax.Device:
    """Where JAX puts arrays and runs programs unless told otherwise (`jax_default_device`, else its first
    device): where a tensor made without a device lives."""
    d = jax.config.jax_default_device
    if d is None or isinstance(d, str):
        return jax.devices(d)[0] if d else jax.devices()[0]
    return d


def get_default_device() -> device:
    """The device a tensor made without one lives on: JAX's default device (the first GPU or TPU where JAX
    has one, else the CPU), or the one `set_default_device` chose.

    Example:
        >>> import tapeflow as tp
        >>> tp.get_default_device() == tp.ones(1).device
        True
    """
    return from_jax_device(default_jax_device())


def set_default_device(d) -> None:
    """Make tensors created without a device (and the programs adaptive eager runs) go to `d`; `None` goes back
    to JAX's default. As PyTorch's, for a program that writes `torch.set_default_device("cuda")`; it sets JAX's
    `jax_default_device`, so JAX code of the same process follows it too.

    Example:
        >>> import tapeflow as tp
        >>> tp.set_default_device("cpu")
        >>> tp.ones(2).device
        device(type='cpu')
        >>> tp.set_default_device(None)
    """
    if d is not None and is_meta_device(d):
        raise NotImplementedError("tapeflow: set_default_device('meta') is not supported; pass device='meta' to "
                                  "the factories instead (tp.empty(2, 3, device='meta'))")
    dev = None if d is None else to_jax_device(d)
    if dev is None and jax.config.jax_default_device is None or dev == default_jax_device():
        return
    jax.config.update("jax_default_device", dev)
    for forget in _FORGET_ON_MOVE:  # (arrays kept on the old default device: constants made once)
        forget()


_FORGET_ON_MOVE: list = []


def place(arr, d) -> jax.Array:
    """`arr` on the device `d` (a tapeflow device or string). An array made without a device (JAX's uncommitted
    arrays) that already lives there stays as it is: it is a tensor of the default device, which ops may combine
    with tensors placed elsewhere (a host tensor on a GPU machine) as JAX moves uncommitted arrays; only an
    array moved by `device_put` is committed to its device."""
    dev = to_jax_device(d)
    if isinstance(arr, jax.Array) and not arr.committed and arr.devices() == {dev}:
        return arr
    return jax.device_put(arr, dev)


def from_jax_device(dev) -> device:
    kind = {"gpu": "cuda", "cuda": "cuda", "rocm": "cuda"}.get(dev.platform, dev.platform)
    if kind == "cpu":  # PyTorch's CPU device has no index; more host devices (simulated ones) keep theirs
        return _CPU if dev.id == 0 else device("cpu", dev.id)
    return device(kind, dev.id)


_CPU = device("cpu")
