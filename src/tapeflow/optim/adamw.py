"""`AdamW`: Adam with decoupled weight decay."""

from __future__ import annotations

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay (`p *= 1 - lr * weight_decay` before the Adam step).

    Arguments:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-3).
        betas, eps, amsgrad, maximize: as in `Adam`.
        weight_decay: decoupled decay factor (default 1e-2).

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.AdamW([w], lr=0.1, weight_decay=0.0)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused)
