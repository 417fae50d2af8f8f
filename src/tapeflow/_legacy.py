"""PyTorch's legacy spellings that real programs still use: `FloatTensor`-style constructors and type checks,
`Tensor.type()`, `Tensor.is_cpu` and friends, format specs on tensors, `Tensor.values()` of a dense tensor."""

from __future__ import annotations

from . import _dtype
from ._tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]


class _LegacyType(type):
    """`FloatTensor([1, 2])` / `FloatTensor(2, 3)` build a tensor of that dtype; `isinstance(t, FloatTensor)`
    tests a tensor's dtype."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, device=None):
        return Tensor(*args, device=device).to(cls.dtype)

    def __repr__(cls) -> str:
        return f"<class '{_dtype.PREFIX[0]}.{cls.__name__}'>"


def _legacy(name: str, dtype) -> type:
    doc = (f"A {dtype.name} tensor (legacy constructor).\n\n    Example:\n        >>> import tapeflow as tp\n"
           f"        >>> tp.{name}([1, 0]).dtype\n        tapeflow.{dtype.name}\n    ")
    return _LegacyType(name, (), {"dtype": dtype, "__doc__": doc})


FloatTensor = _legacy("FloatTensor", _dtype.float32)
DoubleTensor = _legacy("DoubleTensor", _dtype.float64)
HalfTensor = _legacy("HalfTensor", _dtype.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", _dtype.bfloat16)
LongTensor = _legacy("LongTensor", _dtype.int64)
IntTensor = _legacy("IntTensor", _dtype.int32)
ShortTensor = _legacy("ShortTensor", _dtype.int16)
CharTensor = _legacy("CharTensor", _dtype.int8)
ByteTensor = _legacy("ByteTensor", _dtype.uint8)
BoolTensor = _legacy("BoolTensor", _dtype.bool)
_BY_DTYPE = {c.dtype: c for c in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor,
                                  ShortTensor, CharTensor, ByteTensor, BoolTensor)}
_BY_NAME = {f"torch.{c.__name__}": c for c in _BY_DTYPE.values()}
_BY_NAME.update({f"torch.cuda.{c.__name__}": c for c in _BY_DTYPE.values()})


def argument_type_name(t: Tensor) -> str:
    """How PyTorch's argument checks name a tensor's type: the legacy class for the eight types C++ still names
    that way (`torch.FloatTensor`), `CPU<Scalar>Type` for the rest (`CPUBoolType`, `CPUBFloat16Type`)."""
    if t.dtype in _BY_DTYPE and t.dtype.name not in ("bool", "bfloat16"):
        return f"{_dtype.PREFIX[0]}.{_BY_DTYPE[t.dtype].__name__}"
    return f"CPU{_dtype.SCALAR_NAMES[t.dtype.name]}Type"


def _type(self: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    """Without an argument: the legacy type name (`'torch.FloatTensor'`); with one (a dtype, a legacy class or its
    name): this tensor converted to it."""
    if dtype is None:
        prefix = "torch.cuda." if self.is_cuda else "torch."
        if self.dtype in _BY_DTYPE:
            return prefix + _BY_DTYPE[self.dtype].__name__
        if self.dtype.is_complex:  # ('torch.ComplexFloatTensor': no legacy class, but its name)
            return f"{prefix}{_dtype.SCALAR_NAMES[self.dtype.name]}Tensor"
        return f"torch.{self.dtype.name}"
    if isinstance(dtype, str):
        if dtype not in _BY_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _BY_NAME[dtype].dtype
    elif isinstance(dtype, _LegacyType):
        dtype = dtype.dtype
    return self.to(dtype)


def _format(self: Tensor, spec: str) -> str:
    if self.ndim == 0 and spec:
        return format(self.item(), spec)
    if spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return str(self)


def _values(self: Tensor):
    raise RuntimeError("values expected sparse tensor layout but got Strided")


Tensor.type = _type
Tensor.__format__ = _format
Tensor.values = _values
Tensor.is_cpu = property(lambda self: self.device.type == "cpu")
Tensor.is_xpu = property(lambda self: False)
Tensor.is_mps = property(lambda self: False)
Tensor.is_sparse = property(lambda self: False)
Tensor.is_quantized = property(lambda self: False)
# Backends and layouts a tapeflow tensor never has (PyTorch's flags, for code that asks).
for _flag in ("is_xla", "is_ipu", "is_mkldnn", "is_vulkan", "is_mtia", "is_maia", "is_sparse_csr", "is_nested"):
    setattr(Tensor, _flag, property(lambda self: False))
del _flag
