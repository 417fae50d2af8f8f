"""Gradient clipping: `clip_grad_norm_`, `clip_grad_value_`."""

from __future__ import annotations

from collections.abc import Iterable

from ... import _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale gradients in place so that their joint norm is at most `max_norm`.

    The norm is taken over all gradients together, as if concatenated.

    Arguments:
        parameters: tensors whose `.grad` are clipped.
        max_norm: the largest allowed norm.
        norm_type: p of the p-norm (`float("inf")` for the max norm).
        error_if_nonfinite: raise if the norm is nan or inf.
        foreach: accepted for compatibility; ignored.

    Returns:
        The total norm before clipping (a 0-d tensor).

    Example:
        >>> import tapeflow as tp
        >>> p = tp.nn.Parameter(tp.zeros(2)); p.grad = tp.tensor([3.0, 4.0])
        >>> tp.nn.utils.clip_grad_norm_([p], 1.0)
        tensor(5.)
        >>> p.grad
        tensor([0.6000, 0.8000])
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        from ..._factories import tensor

        return tensor(0.0)
    with no_grad():
        norms = _ops.stack([_ops.norm(g, norm_type) for g in grads])
        total = norms.max() if norm_type == float("inf") else _ops.norm(norms, norm_type)
        if error_if_nonfinite and not bool(_ops.isfinite(total)):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = (max_norm / (total + 1e-6)).clamp_max(1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element into `[-clip_value, clip_value]`, in place.

    Arguments:
        parameters: tensors whose `.grad` are clipped.
        clip_value: the bound.
        foreach: accepted for compatibility; ignored.

    Returns:
        None.

    Example:
        >>> import tapeflow as tp
        >>> p = tp.nn.Parameter(tp.zeros(2)); p.grad = tp.tensor([-3.0, 0.5])
        >>> tp.nn.utils.clip_grad_value_([p], 1.0); p.grad
        tensor([-1.0000,  0.5000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
