"""`ctc_loss`: the connectionist temporal classification loss.

The forward (alpha) recursion runs in log space as one `lax.scan` over time; its gradient is JAX's
derivative of that scan, taken through `interop.from_jax` (one node on the tape).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._tensor import Tensor
from ..amp import full_precision
from ._functional_losses import _reduction

__all__ = ["ctc_loss"]


def _logsumexp(*xs):
    """log(sum(exp(x))) of arrays that may all be -inf, with a finite (zero) gradient there."""
    m = lax.stop_gradient(functools.reduce(jnp.maximum, xs))
    m = jnp.where(jnp.isfinite(m), m, 0.0)
    s = sum(jnp.exp(x - m) for x in xs)
    some = s > 0
    return jnp.where(some, jnp.log(jnp.where(some, s, 1.0)) + m, -jnp.inf)


def _ctc_nll(log_probs, targets, input_lengths, target_lengths, blank):
    """Per-sample `-log p(target | input)` of `log_probs (T, N, C)` and padded `targets (N, S)`."""
    t_max, n, c = log_probs.shape
    s = targets.shape[1]
    neg = jnp.array(-jnp.inf, log_probs.dtype)
    labels = jnp.full((n, 2 * s + 1), blank, targets.dtype).at[:, 1::2].set(jnp.clip(targets, 0, c - 1))
    # a label may be reached from two places back when it is not blank and differs from that one
    skip = (labels != blank) & (labels != jnp.pad(labels, ((0, 0), (2, 0)), constant_values=blank)[:, :-2])
    lp = jnp.take_along_axis(log_probs, jnp.broadcast_to(labels[None], (t_max,) + labels.shape), axis=2)
    first = jnp.where(jnp.arange(2 * s + 1) < jnp.minimum(2, 2 * target_lengths[:, None] + 1), lp[0], neg)

    def step(alpha, xs):
        lp_t, t = xs
        one = jnp.pad(alpha, ((0, 0), (1, 0)), constant_values=-jnp.inf)[:, :-1]
        two = jnp.where(skip, jnp.pad(alpha, ((0, 0), (2, 0)), constant_values=-jnp.inf)[:, :-2], neg)
        new = _logsumexp(alpha, one, two) + lp_t
        return jnp.where((t < input_lengths)[:, None], new, alpha), None

    alpha, _ = lax.scan(step, first, (lp[1:], jnp.arange(1, t_max)))
    end = 2 * target_lengths[:, None]
    last = jnp.take_along_axis(alpha, end, axis=1)[:, 0]
    before = jnp.where(target_lengths > 0, jnp.take_along_axis(alpha, jnp.maximum(end - 1, 0), axis=1)[:, 0], neg)
    nll = -_logsumexp(last, before)
    return jnp.where(input_lengths > 0, nll, jnp.where(target_lengths > 0, jnp.inf, 0.0))


@jax.custom_jvp
def _infinite_is_nan(loss):
    """`loss`, whose derivative is NaN where it is infinite: PyTorch's gradient for an impossible alignment
    (without `zero_infinity`), so that training does not go on as if nothing happened."""
    return loss


@_infinite_is_nan.defjvp
def _infinite_is_nan_jvp(primals, tangents):
    (loss,), (t,) = primals, tangents
    return loss, t * jnp.where(jnp.isinf(loss), jnp.nan, 1.0).astype(t.dtype)


def _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    nll = _ctc_nll(log_probs, targets, input_lengths, target_lengths, blank)
    # NOTE: PyTorch's gradient with respect to log_probs is `exp(log_probs) - posterior` at the frames inside
    # each input length (the gradient of the logits when log_probs come from log_softmax); the extra term
    # below has value 0 and that gradient.
    inside = (jnp.arange(log_probs.shape[0])[:, None] < input_lengths)[..., None]
    extra = jnp.sum(jnp.where(inside, jnp.exp(log_probs), 0.0), axis=(0, 2))
    loss = nll + (extra - lax.stop_gradient(extra))
    if zero_infinity:
        loss = jnp.where(jnp.isinf(nll), 0.0, loss)
    else:
        loss = _infinite_is_nan(loss)
    if reduction == "mean":
        return jnp.mean(loss / jnp.maximum(target_lengths, 1).astype(loss.dtype))
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


@functools.cache
def _ctc_op():
    from ..interop import from_jax

    return from_jax(_ctc)


def _lengths(x, name) -> np.ndarray:
    if isinstance(x, Tensor):
        if x.dtype.is_floating_point:
            raise RuntimeError(f"ctc_loss: {name} must be an integer tensor (got {x.dtype})")
        return np.asarray(x.detach().numpy()).reshape(-1).astype(np.int64)
    if isinstance(x, int):
        return np.array([x], np.int64)
    return np.asarray(list(x), np.int64).reshape(-1)


def _padded(targets, tl, n) -> np.ndarray:
    """Concatenated (1-d) targets cut into rows of a padded `(N, max length)` array."""
    flat = np.asarray(targets.detach().numpy()).astype(np.int64)
    if flat.shape[0] < tl.sum():
        raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, but got size "
                           f"{flat.shape[0]} for argument #2 'targets' (while checking arguments for ctc_loss)")
    out = np.zeros((n, max(int(tl.max(initial=0)), 1)), np.int64)
    starts = np.concatenate([[0], np.cumsum(tl)[:-1]])
    for i in range(n):
        out[i, :tl[i]] = flat[starts[i]:starts[i] + tl[i]]
    return out


def _traced(x) -> bool:
    return isinstance(x, Tensor) and isinstance(x._data, jax.core.Tracer)


def _ctc_traced(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity, unbatched):
    """Inside a trace (`tp.compile`, `tp.func`): the values cannot be read, so padded targets and length
    tensors go to the recursion unchecked."""
    from .._factories import tensor

    n = log_probs.shape[1]
    if targets.ndim == 1 and not unbatched:
        raise RuntimeError("ctc_loss: concatenated (1-d) targets need their lengths on the host; inside a traced "
                           "function pass padded (N, S) targets")

    def as_tensor(x):
        return x.long().reshape(n) if isinstance(x, Tensor) else tensor(np.asarray(x, np.int64).reshape(n))

    out = _ctc_op()(log_probs, targets.long().reshape(n, -1), as_tensor(input_lengths), as_tensor(target_lengths),
                    blank=int(blank), reduction=reduction, zero_infinity=bool(zero_infinity))
    return out.squeeze(0) if unbatched and reduction == "none" else out


@full_precision(devices=("cpu",))
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False) -> Tensor:
    """Connectionist temporal classification: `-log` of the total probability of all alignments of each target.

    Arguments:
        log_probs: `(T, N, C)` (or `(T, C)` unbatched) log-probabilities, e.g. from `log_softmax(2)`.
        targets: padded class indices `(N, S)` or all targets concatenated `(sum(target_lengths),)`.
        input_lengths, target_lengths: per-sample lengths (`(N,)` tensors, tuples or lists).
        blank: the blank class.
        reduction: "none" | "mean" (each loss divided by its target length, then averaged) | "sum".
        zero_infinity: impossible alignments give 0 (and a zero gradient) instead of `inf`.

    Returns:
        The loss (per sample when reduction="none").

    Example:
        >>> import tapeflow as tp
        >>> log_probs = tp.zeros(3, 1, 2).log_softmax(2)
        >>> tp.nn.functional.ctc_loss(log_probs, tp.tensor([[1]]), tp.tensor([3]), tp.tensor([1]), reduction="sum")
        tensor(0.2877)
    """
    reduction = _reduction(reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got {list(log_probs.shape)}")
    t_max, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if any(_traced(x) for x in (targets, input_lengths, target_lengths)):
        return _ctc_traced(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity,
                           unbatched)
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    if il.shape[0] != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.shape[0] != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for name, v in (("input_lengths", il), ("target_lengths", tl)):
        if v.size and v.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {int(v.min())} (while "
                               "checking arguments for ctc_loss)")
    if il.size and il.max() > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {int(il.max())} "
                           "(while checking arguments for ctc_loss)")
    if targets.ndim == 1 and not unbatched:
        padded = _padded(targets, tl, n)
    else:
        padded = np.asarray(targets.detach().numpy()).astype(np.int64).reshape(n, -1)
        if tl.size and tl.max() > padded.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at dimension 1, but got size "
                               f"{padded.shape[1]} for argument #2 'targets' (while checking arguments for ctc_loss)")
    if padded.shape[1] == 0:
        padded = np.zeros((n, 1), np.int64)
    from .._factories import tensor

    out = _ctc_op()(log_probs, tensor(padded), tensor(il), tensor(tl), blank=int(blank), reduction=reduction,
                    zero_infinity=bool(zero_infinity))
    return out.squeeze(0) if unbatched and reduction == "none" else out
