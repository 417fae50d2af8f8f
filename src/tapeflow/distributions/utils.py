"""Shared helpers of `tapeflow.distributions`: broadcasting parameters, probabilities <-> logits."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _ops
from .._dtype import get_default_dtype
from .._factories import tensor
from .._tensor import Tensor

__all__ = ["broadcast_all", "probs_to_logits", "logits_to_probs", "clamp_probs"]


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
