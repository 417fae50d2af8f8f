"""`Adafactor`: step for step as PyTorch's `torch.optim.Adafactor`, one fused XLA call per parameter.

A parameter of two or more dimensions keeps a factored second moment: running means of the squared
gradient over its last dimension (`row_var`, the last size 1) and over its second-to-last (`col_var`, that
size 1); their outer product over the row factor's mean estimates the full second moment. A vector or a
scalar keeps the full running mean (`variance`). The step counter lives on the device and the step's scalars
(`t ** beta2_decay`, `min(lr, 1 / sqrt(t))`, the parameter's and the update's RMS) are computed in double
precision, then used in the parameter's dtype, as PyTorch computes them on the host (with a tensor `lr`, in
that tensor's dtype, as PyTorch's tensor arithmetic does).
"""

from __future__ import annotations

import xla_ops as X

from .._dispatch import dispatch
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _zero_step

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor, step for step as PyTorch's `torch.optim.Adafactor` (its single-tensor algorithm).

    Per step `t`, with `G` the gradient (negated when `maximize`): `rho = min(lr, 1 / sqrt(t))`,
    `alpha = max(eps2, RMS(p)) * rho`; `p *= 1 - lr * weight_decay`; the second moment's running mean moves
    toward `G * G` by `t ** beta2_decay` (factored into `row_var` and `col_var` over the last two dimensions
    when `p.ndim >= 2`, else kept whole as `variance`); `U = G / sqrt(max(V, eps1 ** 2))`, and
    `p -= alpha * U / max(1, RMS(U) / d)`.

    Arguments:
        params: tensors or parameter groups.
        lr: the largest relative step size `rho`, and the weight decay's coefficient (default 1e-2); a float or
            a one-element tensor.
        beta2_decay: the exponent of the second moment's averaging weight (default -0.8).
        eps: `(eps1, eps2)`: `eps1` bounds the second-moment estimate (and the row factor's mean) from below
            (`None`: the machine epsilon of the parameters' dtype), `eps2` the parameter scale (default
            `(None, 1e-3)`).
        d: the update clipping threshold (default 1.0).
        weight_decay: decoupled weight decay coefficient (default 0.0).
        foreach: accepted for compatibility.
        maximize: ascend instead of descend.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0, 2.0]))
        >>> opt = tp.optim.Adafactor([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.8419, 1.8419], requires_grad=True)
        >>> sorted(opt.state[w])
        ['step', 'variance']
    """

    def __init__(self, params, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _params_with_factors(self, group: dict):
        """`(p, state)` for each parameter of `group` that has a gradient; a first step creates the state as
        PyTorch lays it out (`row_var`/`col_var` for two or more dimensions, else `variance`)."""
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            if getattr(p.grad, "is_sparse", False):
                raise RuntimeError("Adafactor does not support sparse gradients")
            state = self.state[p]
            if not state:
                state["step"] = Tensor._wrap(_zero_step())  # (one array for all: see `_advanced_step`)
                shape = tuple(p.grad.shape)
                if len(shape) > 1:
                    state["row_var"] = p.grad.new_zeros(shape[:-1] + (1,))
                    state["col_var"] = p.grad.new_zeros(shape[:-2] + (1,) + shape[-1:])
                else:
                    state["variance"] = p.grad.new_zeros(shape)
            yield p, state

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns `closure()`'s loss if given."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                eps1, eps2 = group["eps"]
                advanced = {}
                for p, state in self._params_with_factors(group):
                    if eps1 is None:  # (PyTorch takes the first parameter's dtype for the whole group)
                        from .._toplevel import finfo

                        eps1 = finfo(p.dtype).eps
                    static = (("beta2_decay", group["beta2_decay"]), ("eps1", eps1), ("eps2", eps2),
                              ("d", group["d"]), ("weight_decay", group["weight_decay"]),
                              ("maximize", group["maximize"]), ("tensor_lr", isinstance(group["lr"], Tensor)))
                    new_p, row_var, col_var, variance, step = dispatch(
                        X.optim.adafactor_update, (p, p.grad, state.get("row_var"), state.get("col_var"),
                                            state.get("variance"), state["step"], group["lr"]), static)
                    self._write(p, new_p)
                    state["step"] = self._advanced_step(advanced, state["step"], step)
                    if "variance" in state:
                        state["variance"] = variance
                    else:
                        state["row_var"], state["col_var"] = row_var, col_var
        return loss
