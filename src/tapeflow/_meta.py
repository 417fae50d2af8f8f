"""The meta device: tensors with a shape and a dtype but no data (PyTorch's `device="meta"`).

A meta tensor holds a `MetaArray` where others hold a JAX array. Ops on meta tensors give meta tensors (their
shapes come from JAX's abstract evaluation, so shape errors are the op's own); reading values raises. Programs
use it to build a module's structure without its weights, e.g. the skeleton `torch.func.functional_call` runs
with stacked weights in the model-ensembling recipe.
"""

from __future__ import annotations

import jax
import numpy as np

from ._device import from_jax_device

__all__ = ["MetaArray", "is_meta", "meta_results", "NO_DATA"]

NO_DATA = "Cannot copy out of meta tensor; no data!"


class MetaArray:
    """Shape and dtype standing in for an array on the meta device."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: tuple, dtype, weak_type: bool = False):
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), weak_type

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def aval(self):
        return jax.core.ShapedArray(self.shape, self.dtype, weak_type=self.weak_type)

    def astype(self, dtype) -> MetaArray:
        return MetaArray(self.shape, dtype)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def __repr__(self) -> str:
        return f"MetaArray({self.shape}, {self.dtype})"


def is_meta(a) -> bool:
    return type(a) is MetaArray


def meta_of(a) -> MetaArray:
    """The meta counterpart of an array (or of a meta array)."""
    return a if type(a) is MetaArray else MetaArray(np.shape(a), a.dtype, getattr(a, "weak_type", False))


def _device_type(a) -> str:
    if type(a) is MetaArray:
        return "meta"
    devices = getattr(a, "devices", None)
    return str(from_jax_device(next(iter(devices())))) if devices is not None else "cpu"


def meta_results(fn, arrays):
    """`fn(*arrays)` with meta arrays among them: the output's shapes and dtypes, as meta arrays (or None where
    `fn` returns None). Every other array argument must be a scalar (PyTorch refuses to mix devices)."""
    kinds = [_device_type(a) for a in arrays if a is not None and np.ndim(a) > 0]
    if len(set(kinds)) > 1:  # PyTorch expects the first tensor's device and names the first that differs
        other = next(k for k in kinds if k != kinds[0])
        raise RuntimeError(f"Tensor on device {other} is not on the expected device {kinds[0]}!")
    specs = [a if a is None or not hasattr(a, "dtype")  # (a Python number: eval_shape takes it as it is)
             else jax.ShapeDtypeStruct(np.shape(a), a.dtype, weak_type=getattr(a, "weak_type", False)) for a in arrays]
    out = jax.eval_shape(fn, *specs)
    convert = lambda s: None if s is None else MetaArray(s.shape, s.dtype, s.weak_type)  # noqa: E731
    return tuple(map(convert, out)) if isinstance(out, (tuple, list)) else convert(out)
