"""Matrix products: `matmul` and its special cases, `einsum`, `addmm`, ..."""

from __future__ import annotations

import xla_ops as X

from .._dispatch import dispatch

__all__ = [
    "addmm", "baddbmm", "bmm", "dot", "einsum", "ger", "inner", "matmul", "mm", "mv", "outer", "tensordot",
    "trace",
]


# -- matrix products ---------------------------------------------------------------------------------------
def matmul(input, other):
    """Matrix product with NumPy's rules (vectors, batches, broadcasting)."""
    a, b = input._data.ndim, other._data.ndim
    if a == 2 and b == 2:
        return dispatch(X.mm, (input, other))
    if a == 1 and b == 1:
        return dispatch(X.dot, (input, other))
    if a == 2 and b == 1:
        return dispatch(X.mv, (input, other))
    if a == 3 and b == 3 and input._data.shape[0] == other._data.shape[0]:
        return dispatch(X.bmm, (input, other))
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    return dispatch(X.matmul, (input, other))


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.ndim}D and {mat2.ndim}D")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    return dispatch(X.mm, (input, mat2))


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {input.ndim}D and {mat2.ndim}D")
    return dispatch(X.bmm, (input, mat2))


def mv(input, vec):
    return dispatch(X.mv, (input, vec))


def dot(input, other):
    return dispatch(X.dot, (input, other))


inner = dot


def outer(input, vec2):
    return dispatch(X.outer, (input, vec2))


ger = outer


def einsum(equation: str, *operands):
    """Einstein summation, e.g. `tp.einsum("ij,jk->ik", a, b)`."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return dispatch(X.einsum, tuple(operands), (("equation", equation),))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    out = mm(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    out = bmm(batch1, batch2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta)


def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        la = "".join(chr(97 + i) for i in range(a.ndim))
        lb = la[a.ndim - dims:] + "".join(chr(97 + a.ndim + i) for i in range(b.ndim - dims))
        out = la[: a.ndim - dims] + lb[dims:]
        return einsum(f"{la},{lb}->{out}", a, b)
    raise TypeError("tensordot: pass dims as an int")


def trace(input):
    return diagonal(input).sum()


# Sibling modules import each other; importing at the end lets every name above exist first.
from .shape import diagonal  # noqa: E402
