"""`RMSprop` (with momentum and the centered variant)."""

from __future__ import annotations

import xla_ops as X

from .._dispatch import dispatch
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, step for step as PyTorch's `torch.optim.RMSprop`.

    `square_avg = alpha * square_avg + (1 - alpha) * g^2`; the step divides by
    `sqrt(square_avg) + eps` (minus the squared mean gradient when `centered`).

    Arguments:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-2).
        alpha: smoothing constant (default 0.99).
        eps: added to the denominator.
        weight_decay: L2 penalty.
        momentum: momentum factor.
        centered: normalise by the estimated variance of the gradient.
        maximize: ascend instead of descend.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.RMSprop([w], lr=0.01)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0.0,
                 momentum: float = 0.0, centered: bool = False, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns `closure()`'s loss if given."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                momentum, centered = group["momentum"], group["centered"]
                static = (("alpha", group["alpha"]), ("eps", group["eps"]), ("weight_decay", group["weight_decay"]),
                          ("momentum", momentum), ("centered", centered), ("maximize", group["maximize"]))
                buffers = (["square_avg"] + (["momentum_buffer"] if momentum > 0 else [])
                           + (["grad_avg"] if centered else []))
                advanced = {}
                for p, state in self._params_with_state(group, buffers):
                    new_p, sq, gavg, buf, step = dispatch(
                        X.optim.rmsprop_update,
                        (p, p.grad, state["square_avg"], state.get("grad_avg"), state.get("momentum_buffer"),
                         state["step"], group["lr"]), static)
                    self._write(p, new_p)
                    state["step"], state["square_avg"] = self._advanced_step(advanced, state["step"], step), sq
                    if centered:
                        state["grad_avg"] = gavg
                    if momentum > 0:
                        state["momentum_buffer"] = buf
        return loss
