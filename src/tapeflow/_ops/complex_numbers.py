"""Complex numbers: parts, magnitude and phase, and views between complex and real tensors.

Gradients follow PyTorch's convention, the conjugate Wirtinger derivative: for a real loss `L` of a complex
`z = x + iy`, `z.grad` is `dL/dx + i dL/dy`, the direction of steepest ascent (see docs/autograd_mechanics.md).
"""

from __future__ import annotations

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch, view
from .._tensor import Tensor
from ..amp import full_precision
from ._args import _to_float
from ._dtype_rules import _kernel

__all__ = ["real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "angle", "sgn", "isreal",
           "vdot", "is_complex"]

_SCALAR = _dtype.SCALAR_NAMES
_REAL_FLOATS = ("float16", "float32", "float64")


def real(input):
    """The real part of a complex tensor (a view: writing into it changes `input`); a real tensor itself.

    Example:
        >>> tp.real(tp.tensor([1 + 2j, 3 - 1j]))
        tensor([1., 3.])
    """
    return view(input, X.real) if input.dtype.is_complex else input


def imag(input):
    """The imaginary part of a complex tensor (a view: writing into it changes `input`).

    Example:
        >>> tp.imag(tp.tensor([1 + 2j, 3 - 1j]))
        tensor([ 2., -1.])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view(input, X.imag)


def view_as_real(input):
    """A complex tensor as a real one with a last dimension of size 2 (real, imaginary), sharing its data.

    Example:
        >>> tp.view_as_real(tp.tensor([1 + 2j]))
        tensor([[1., 2.]])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return view(input, X.view_as_real)


def view_as_complex(input):
    """A real tensor whose last dimension has size 2 (real, imaginary) as a complex one, sharing its data.

    Example:
        >>> tp.view_as_complex(tp.tensor([[1.0, 2.0], [3.0, 0.0]]))
        tensor([1.+2.j, 3.+0.j])
    """
    if input.dtype.name not in _REAL_FLOATS:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_SCALAR[input.dtype.name]}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return view(input, X.view_as_complex)


def _float_pair(name: str, a, b):
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{name}(): argument 'real' and 'imag' must be Tensor")
    if a.dtype.name not in _REAL_FLOATS or b.dtype.name not in _REAL_FLOATS:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_SCALAR[a.dtype.name]} and {_SCALAR[b.dtype.name]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_SCALAR[a.dtype.name]} but got scalar type "
                           f"{_SCALAR[b.dtype.name]} for second argument")


def complex(real, imag):
    """The complex tensor `real + i * imag` (both float16/32/64 of one dtype; broadcasting).

    Example:
        >>> tp.complex(tp.tensor([1.0, 2.0]), tp.tensor([0.5, -1.0]))
        tensor([1.+0.5000j, 2.-1.0000j])
    """
    _float_pair("complex", real, imag)
    return dispatch(X.complex, (real, imag))


@full_precision(devices=("cpu",))
def polar(abs, angle):
    """The complex tensor with magnitude `abs` and phase `angle`: `abs * (cos(angle) + i sin(angle))`.

    Example:
        >>> tp.polar(tp.tensor([2.0]), tp.tensor([0.0]))
        tensor([2.+0.j])
    """
    _float_pair("polar", abs, angle)
    if abs.dtype.name == "float16":  # (no complex32 in XLA; PyTorch's CPU kernel has no half version either)
        raise _kernel("polar_cpu")("float16")
    return dispatch(X.polar, (abs, angle))


def angle(input):
    """The phase of each element in radians (`atan2(imag, real)`); for real input 0 or pi by the sign.

    Example:
        >>> tp.angle(tp.tensor([1j, -1 + 0j]))
        tensor([1.5708, 3.1416])
    """
    return dispatch(X.angle, (input if input.dtype.is_complex else _to_float(input),))


def sgn(input):
    """`input / |input|` elementwise (0 where `input` is 0); `sign` for real tensors.

    Example:
        >>> tp.sgn(tp.tensor([3 + 4j, 0j]))
        tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    if input._raw.dtype.kind == "b":
        return input.clone()  # the sign of a bool is itself
    return dispatch(X.sgn, (input,))


def isreal(input):
    """Which elements have a zero imaginary part (all of them for a real tensor).

    Example:
        >>> tp.isreal(tp.tensor([1 + 0j, 1j]))
        tensor([ True, False])
    """
    from .._factories import ones_like
    from .elementwise import eq

    return eq(imag(input), 0) if input.dtype.is_complex else ones_like(input, dtype=_dtype.bool)


def vdot(input, other):
    """`sum(conj(input) * other)` of two 1-D tensors of one dtype.

    Example:
        >>> tp.vdot(tp.tensor([1j, 2 + 0j]), tp.tensor([1j, 1 + 0j]))
        tensor(3.+0.j)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_SCALAR[input.dtype.name]} "
                           f"and {_SCALAR[other.dtype.name]}")
    from .elementwise import conj
    from .linalg import dot

    return dot(conj(input), other)


def is_complex(input) -> bool:
    """Whether `input` has a complex dtype.

    Example:
        >>> tp.is_complex(tp.tensor([1j])), tp.is_complex(tp.ones(1))
        (True, False)
    """
    return input.dtype.is_complex
