"""`Adam` (with amsgrad, L2 weight decay); `AdamW` lives in adamw.py."""

from __future__ import annotations

import xla_ops as X

from .._dispatch import dispatch
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam, step for step as PyTorch's `torch.optim.Adam`.

    Arguments:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator.
        weight_decay: L2 penalty added to the gradient (with `decoupled_weight_decay=True`, decayed as `AdamW`).
        amsgrad: use the maximum of past squared averages.
        maximize: ascend instead of descend.
        foreach, capturable, differentiable, fused: accepted for compatibility.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.Adam([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    _decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=bool(decoupled_weight_decay or self._decoupled))
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns `closure()`'s loss if given."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                amsgrad = group["amsgrad"]
                static = (("beta1", beta1), ("beta2", beta2), ("eps", group["eps"]),
                          ("weight_decay", group["weight_decay"]),
                          ("decoupled", group.get("decoupled_weight_decay", self._decoupled)),
                          ("amsgrad", amsgrad), ("maximize", group["maximize"]))
                lr = group["lr"]
                buffers = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if amsgrad else [])
                advanced = {}
                for p, state in self._params_with_state(group, buffers):
                    # The fused op also advances the step counter and derives the bias corrections
                    # from it on the device: no host sync, and traceable by tp.compile.
                    new_p, m, v, new_vmax, step = dispatch(
                        X.optim.adam_update,
                        (p, p.grad, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq"), state["step"],
                         lr), static)
                    self._write(p, new_p)
                    state["step"] = self._advanced_step(advanced, state["step"], step)
                    state["exp_avg"], state["exp_avg_sq"] = m, v
                    if amsgrad:
                        state["max_exp_avg_sq"] = new_vmax
        return loss
