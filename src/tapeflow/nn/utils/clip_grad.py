"""Gradient clipping: `clip_grad_norm_`, `clip_grad_value_`."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from ... import _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


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
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)  # may be a generator
    norm_type = float(norm_type)  # (a bad one is refused even when no parameter has a gradient, as in PyTorch)
    grads = _grads(parameters)
    if not grads:
        from ..._factories import tensor

        return tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """Deprecated name of `clip_grad_norm_` (it warns, as in PyTorch).

    Example:
        >>> import tapeflow as tp, warnings
        >>> p = tp.nn.Parameter(tp.zeros(2)); p.grad = tp.tensor([3.0, 4.0])
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.nn.utils.clip_grad_norm([p], 1.0)
        tensor(5.)
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def get_total_norm(tensors: Iterable[Tensor] | Tensor, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The `norm_type`-norm of `tensors` together, as if concatenated (`clip_grad_norm_`'s first half).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.utils.get_total_norm([tp.tensor([3.0]), tp.tensor([4.0])])
        tensor(5.)
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        from ..._factories import tensor

        return tensor(0.0)
    with no_grad():
        norms = _ops.stack([_ops.norm(g, norm_type) for g in tensors])
        total = norms.max() if norm_type == float("inf") else _ops.norm(norms, norm_type)
        if error_if_nonfinite and not bool(_ops.isfinite(total)):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale the gradients of `parameters` in place by `max_norm / (total_norm + 1e-6)` where that is below 1
    (`clip_grad_norm_`'s second half, given a norm from `get_total_norm`).

    Example:
        >>> import tapeflow as tp
        >>> p = tp.nn.Parameter(tp.zeros(2)); p.grad = tp.tensor([3.0, 4.0])
        >>> tp.nn.utils.clip_grads_with_norm_([p], 1.0, tp.tensor(5.0)); p.grad
        tensor([0.6000, 0.8000])
    """
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp_max(1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


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
