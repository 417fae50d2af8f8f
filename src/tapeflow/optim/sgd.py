"""`SGD`: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""

from __future__ import annotations

import xla_ops as X

from .._dispatch import dispatch
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, step for step as PyTorch's `torch.optim.SGD`.

    With momentum: `buf = momentum * buf + (1 - dampening) * g` (the first
    step sets `buf = g`), then `p -= lr * (g + momentum * buf if nesterov else buf)`.

    Arguments:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-3).
        momentum, dampening, weight_decay: as in PyTorch (default 0).
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend instead of descend.
        foreach, differentiable, fused: accepted for compatibility; the update is always one fused op per tensor.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.SGD([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns `closure()`'s loss if given.

        A group's parameters are updated together by one fused op (one XLA call).
        """
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if not params:
                    continue
                momentum = group["momentum"]
                static = (("momentum", momentum), ("dampening", group["dampening"]),
                          ("weight_decay", group["weight_decay"]), ("nesterov", group["nesterov"]),
                          ("maximize", group["maximize"]))
                bufs = [self.state[p].get("momentum_buffer") for p in params] if momentum else [None] * len(params)
                first = tuple(b is None for b in bufs) if momentum else (False,) * len(params)
                n = len(params)
                if n > 1 and len({id(p) for p in params}) < n:
                    self._step_one_by_one(params, group, static)  # a parameter listed twice is updated twice
                    continue
                if n == 1:
                    outs = dispatch(X.optim.sgd_update, (params[0], params[0].grad, bufs[0], group["lr"]),
                                    static + (("first", first[0]),))
                else:
                    outs = dispatch(X.optim.sgd_update_many,
                                    (*params, *(p.grad for p in params), *bufs, group["lr"]),
                                    static + (("n", n), ("first", first)))
                for i, p in enumerate(params):
                    self._write(p, outs[i])
                    if momentum:
                        new_buf = outs[n + i]
                        self.state[p]["momentum_buffer"] = new_buf if bufs[i] is None else _replace(bufs[i], new_buf)
        return loss

    def _step_one_by_one(self, params, group, static) -> None:
        # PyTorch's CPU loop: the buffers are looked up first, then each entry is updated in turn (a buffer two
        # entries share is updated in place by both); the state keeps the last entry's buffer.
        momentum = group["momentum"]
        bufs = [self.state[p].get("momentum_buffer") for p in params] if momentum else [None] * len(params)
        for i, p in enumerate(params):
            outs = dispatch(X.optim.sgd_update, (p, p.grad, bufs[i], group["lr"]),
                            static + (("first", bufs[i] is None),))
            self._write(p, outs[0])
            if momentum:
                bufs[i] = outs[1] if bufs[i] is None else _replace(bufs[i], outs[1])
        for p, buf in zip(params, bufs):
            if momentum:
                self.state[p]["momentum_buffer"] = buf


def _replace(old: Tensor, new: Tensor) -> Tensor:
    old._raw = new._raw  # (a pending value stays pending)
    old._st().version += 1
    return old
