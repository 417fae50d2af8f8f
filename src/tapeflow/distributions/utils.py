"""Shared helpers of `tapeflow.distributions`: broadcasting parameters, probabilities <-> logits."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _ops
from .._dtype import get_default_dtype
from .._factories import tensor
from .._tensor import Tensor

__all__ = ["broadcast_all", "probs_to_logits", "logits_to_probs", "clamp_probs", "tril_matrix_to_vec", "vec_to_tril_matrix",
           "lazy_property"]


class lazy_property:
    """A property computed on first use and then kept on the instance (as PyTorch's). The value is computed with
    grad mode on, so that a parameter first derived inside `no_grad` (`sample()` reads `probs` there) still
    carries its graph back to what the distribution was made from.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.distributions import Categorical
        >>> logits = tp.tensor([0.5, -1.0, 2.0], requires_grad=True)
        >>> d = Categorical(logits=logits)
        >>> with tp.no_grad():
        ...     _ = d.probs
        >>> d.probs.requires_grad
        True
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __set_name__(self, owner, name):
        self.__name__ = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        from ..autograd.grad_mode import enable_grad

        with enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.__name__] = value  # (later reads find it before this descriptor)
        return value


def broadcast_all(*values) -> tuple:
    """Numbers and tensors as tensors of one broadcast shape (numbers take the tensors' dtype, else the default)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), get_default_dtype())
    values = [v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype) for v in values]
    return tuple(_ops.broadcast_tensors(*values))


def _eps(dtype) -> float:
    return float(np.finfo(dtype.jax).eps)


def clamp_probs(probs):
    """`probs` kept inside `[eps, 1 - eps]` so that their logs stay finite."""
    eps = _eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Log-odds of binary `probs`, or log-probabilities of categorical ones."""
    ps = clamp_probs(probs)
    return ps.log() - ps.neg().log1p() if is_binary else ps.log()


def logits_to_probs(logits, is_binary: bool = False):
    """Sigmoid of binary `logits`, softmax over the last dimension of categorical ones."""
    return logits.sigmoid() if is_binary else _ops.softmax(logits, -1)


def _tril_positions(n: int, diag: int) -> tuple:
    """Row and column indices of the entries of an `n x n` matrix on or below diagonal `diag`, row by row."""
    return np.tril_indices(n, k=diag)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The entries of the (batched) square `mat` on or below diagonal `diag`, row by row, as a vector."""
    n = mat.shape[-1]
    rows, cols = _tril_positions(n, diag)
    flat = mat.reshape(*mat.shape[:-2], n * n)
    return flat.index_select(-1, tensor(rows * n + cols))


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of `tril_matrix_to_vec`: a (batched) square matrix, zero above diagonal `diag`."""
    m = vec.shape[-1]
    # m = n (n + 1) / 2 + diag n  ->  solve for n
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m) ** 0.5) / 2)
    rows, cols = _tril_positions(n, diag)
    if len(rows) != m:
        raise ValueError(f"a vector of length {m} does not fill the lower triangle (diag={diag}) of a square matrix")
    where = np.full(n * n, m)  # every position reads the appended zero ...
    where[rows * n + cols] = np.arange(m)  # ... except the triangle, which reads the vector
    padded = _ops.cat([vec, vec.new_zeros(*vec.shape[:-1], 1)], -1)
    return padded.index_select(-1, tensor(where)).reshape(*vec.shape[:-1], n, n)
