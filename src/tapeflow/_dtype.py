"""dtype objects with PyTorch's names and aliases, mapped to JAX dtypes."""

from __future__ import annotations

import builtins
import math

import jax.numpy as jnp
import numpy as np

__all__ = ["dtype", "to_jax_dtype", "from_jax_dtype", "get_default_dtype", "set_default_dtype"]


#: The package name in reprs (`tapeflow.float32`, `tapeflow.Size([2])`); `tapeflow.torch.install()` makes it
#: "torch" while PyTorch programs run on tapeflow, so that what they print and compare reads as under PyTorch.
PREFIX = ["tapeflow"]


class dtype:
    """A tensor element type, e.g. `tapeflow.float32` (alias `tapeflow.float`).

    Example:
        >>> import tapeflow as tp
        >>> tp.float64 is tp.double, tp.tensor([1.0]).dtype
        (True, tapeflow.float32)
    """

    __slots__ = ("name", "jax", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name: str, jax_dtype):
        self.name = name
        self.jax = np.dtype(jax_dtype)
        self.is_floating_point = builtins.bool(jnp.issubdtype(self.jax, jnp.floating))
        self.is_complex = builtins.bool(jnp.issubdtype(self.jax, jnp.complexfloating))
        self.is_signed = self.jax.kind in "fic" or self.name == "bfloat16"
        self.itemsize = self.jax.itemsize

    def __repr__(self) -> str:
        return f"{PREFIX[0]}.{self.name}"

    def __reduce__(self):
        return (from_jax_dtype, (self.jax,))

    def to_real(self) -> dtype:
        return {"complex64": float32, "complex128": float64}.get(self.name, self)


float16 = half = dtype("float16", jnp.float16)
bfloat16 = dtype("bfloat16", jnp.bfloat16)
float32 = float = dtype("float32", jnp.float32)
float64 = double = dtype("float64", jnp.float64)
complex64 = cfloat = dtype("complex64", jnp.complex64)
complex128 = cdouble = dtype("complex128", jnp.complex128)
uint8 = dtype("uint8", jnp.uint8)
int8 = dtype("int8", jnp.int8)
int16 = short = dtype("int16", jnp.int16)
int32 = int = dtype("int32", jnp.int32)
int64 = long = dtype("int64", jnp.int64)
bool = dtype("bool", jnp.bool_)

#: PyTorch's names for each dtype in its error messages: the scalar type ("Float") and the C++ type ("float").
SCALAR_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint8": "Byte", "int8": "Char",
                "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}
CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "uint8": "unsigned char",
             "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}

_ALL = [float16, bfloat16, float32, float64, complex64, complex128, uint8, int8, int16, int32, int64, bool]
_BY_NP = {d.jax: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL} | {"float": float32, "double": float64, "half": float16, "long": int64,
                                         "int": int32, "short": int16, "cfloat": complex64, "cdouble": complex128}
_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python numbers (float32 unless changed).

    Example:
        >>> import tapeflow as tp
        >>> tp.get_default_dtype()
        tapeflow.float32
    """
    return _default[0]


def set_default_dtype(d) -> None:
    """Set the default floating dtype (float32 or float64), as `torch.set_default_dtype`.

    Example:
        >>> import tapeflow as tp
        >>> tp.set_default_dtype(tp.float64); x = tp.tensor([1.0]); tp.set_default_dtype(tp.float32)
        >>> x.dtype
        tapeflow.float64
    """
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def from_jax_dtype(dt) -> dtype:
    try:
        return _BY_NP[dt]
    except KeyError:
        try:
            return _BY_NP[np.dtype(dt)]
        except (KeyError, TypeError):
            raise TypeError(f"tapeflow has no dtype for {dt!r}") from None




def to_dtype(d) -> dtype:
    """Accept a tapeflow dtype, a NumPy/JAX dtype, a name or a Python type."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return complex128
    if isinstance(d, str):
        name = d.removeprefix("torch.").removeprefix("tapeflow.")
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"unknown dtype {d!r}; use one of {sorted(_BY_NAME)} (e.g. tapeflow.float32)")
    try:
        return from_jax_dtype(np.dtype(d))
    except TypeError:
        raise TypeError(f"unknown dtype {d!r}; pass a tapeflow dtype such as tapeflow.float32") from None


def to_jax_dtype(d):
    return None if d is None else to_dtype(d).jax


# -- whether a Python number fits a dtype ----------------------------------------------------------------------
#: The C++ type names PyTorch's overflow message gives.
C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
           "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


def check_fits(v, jd) -> None:
    """PyTorch's refusal of a number its dtype cannot hold (a negative integer wraps into an unsigned
    dtype; infinities and NaN fit a floating one)."""
    if isinstance(v, builtins.complex) or jd.kind == "c" or jd.name not in C_TYPES:
        return
    if jd.kind in "iu":
        info = np.iinfo(jd)
        unsigned_int = jd.kind == "u" and isinstance(v, (builtins.int, np.integer))
        low = -builtins.int(info.max) if unsigned_int else builtins.int(info.min)
        fits = v == v and low <= v <= info.max
    else:
        fits = not math.isfinite(v) or abs(v) <= builtins.float(jnp.finfo(jd).max)
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {C_TYPES[jd.name]} without overflow")


def check_number_fits(value, jd, numel: int | None = None):
    """`value` (a Python number written into a tensor of JAX dtype `jd`: `full`, `fill_`, `masked_fill`, an
    indexed write, a `clamp` bound) after PyTorch's check that `jd` holds it: its real part where a complex
    number with no imaginary part goes into a real dtype. Bools take anything. A one-element write into a
    half-precision tensor overflows to infinity instead, as in PyTorch (`numel` 1)."""
    if type(value) not in (builtins.int, builtins.float, builtins.complex) or jd.kind in "bc":
        return value
    if type(value) is builtins.complex:
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {C_TYPES.get(jd.name, jd.name)} without overflow")
        value = value.real
    if numel == 1 and jd.name in ("float16", "bfloat16"):
        return value
    check_fits(value, jd)
    return value
