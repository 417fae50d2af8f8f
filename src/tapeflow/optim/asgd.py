"""`ASGD`: averaged stochastic gradient descent, step for step as PyTorch's `torch.optim.ASGD`."""

from __future__ import annotations

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._factories import tensor, zeros_like
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD (Polyak-Ruppert): SGD with a decaying step `eta`, plus a running average `ax` of the iterates
    that starts after `t0` steps.

    Per step: `p *= 1 - lambd * eta; p -= eta * g; ax += mu * (p - ax)`, then
    `eta = lr / (1 + lambd * lr * step) ** alpha` and `mu = 1 / max(1, step - t0)`. The state (`step`, `eta`,
    `mu`, `ax`) is PyTorch's and lives on the device; one fused XLA call per parameter.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.ASGD([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0.0, foreach=None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns `closure()`'s loss if given."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                static = (("lambd", group["lambd"]), ("alpha", group["alpha"]), ("t0", group["t0"]),
                          ("weight_decay", group["weight_decay"]), ("maximize", group["maximize"]))
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = tensor(0.0, dtype=_dtype.float32)
                        state["eta"] = tensor(group["lr"], dtype=_dtype.float32)
                        state["mu"] = tensor(1.0, dtype=_dtype.float32)
                        state["ax"] = zeros_like(p)
                    new_p, state["ax"], state["eta"], state["mu"], state["step"] = dispatch(
                        X.optim.asgd_update, (p, p.grad, state["ax"], state["eta"], state["mu"], state["step"],
                                              group["lr"]), static)
                    self._write(p, new_p)
        return loss
