"""`Adagrad`, `Adadelta`, `Adamax`, `NAdam`, `RAdam`: step for step as PyTorch's, one fused XLA call per
parameter (`xla_ops.optim`), state created on a parameter's first step as PyTorch names it."""

from __future__ import annotations

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._factories import full_like, tensor
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _zero_step

__all__ = ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop"]


def _check(**values) -> None:
    for name, v in values.items():
        if v < 0.0:
            raise ValueError(f"Invalid {name.replace('_', ' ') if name != 'lr' else 'learning rate'}: {v}")


def _check_betas(betas) -> None:
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


class _FusedOptimizer(Optimizer):
    """An optimizer whose update is one `xla_ops.optim` op of `(p, grad, *buffers, step, lr)`, returning
    `(new_p, *new_buffers, new_step)`. Subclasses name the op, the buffers and the static options."""

    _update: X.Op
    _buffers: tuple = ()

    def _static(self, group: dict) -> tuple:
        raise NotImplementedError

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns `closure()`'s loss if given."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                static = self._static(group)
                advanced = {}
                for p, state in self._params_with_state(group, list(self._buffers)):
                    out = dispatch(self._update, (p, p.grad, *(state[b] for b in self._buffers), state["step"],
                                                  group["lr"]), static)
                    self._write(p, out[0])
                    for name, value in zip(self._buffers, out[1:-1]):
                        state[name] = value
                    state["step"] = self._advanced_step(advanced, state["step"], out[-1])
        return loss


class Adagrad(_FusedOptimizer):
    """Adagrad: each coordinate's step is scaled by the root of its accumulated squared gradients.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.Adagrad([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    _update, _buffers = X.optim.adagrad_update, ("sum",)

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None):
        _check(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, initial_accumulator_value=initial_accumulator_value,
               epsilon_value=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:  # PyTorch creates Adagrad's state up front
            for p in group["params"]:
                self.state[p]["step"] = Tensor._wrap(_zero_step())
                self.state[p]["sum"] = full_like(p, group["initial_accumulator_value"])

    def _static(self, group):
        return (("lr_decay", group["lr_decay"]), ("weight_decay", group["weight_decay"]), ("eps", group["eps"]),
                ("maximize", group["maximize"]))


class Adadelta(_FusedOptimizer):
    """Adadelta: steps scaled by the ratio of running averages of squared updates and squared gradients.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.Adadelta([w])
        >>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
        0.9968
    """

    _update, _buffers = X.optim.adadelta_update, ("square_avg", "acc_delta")

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0.0,
                 foreach=None, *, capturable: bool = False, maximize: bool = False, differentiable: bool = False):
        _check(lr=lr, epsilon_value=eps, weight_decay_value=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      capturable=capturable, maximize=maximize, differentiable=differentiable))

    def _static(self, group):
        return (("rho", group["rho"]), ("eps", group["eps"]), ("weight_decay", group["weight_decay"]),
                ("maximize", group["maximize"]))


class Adamax(_FusedOptimizer):
    """Adamax: Adam with the infinity norm of past gradients in the denominator.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.Adamax([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    _update, _buffers = X.optim.adamax_update, ("exp_avg", "exp_inf")

    def __init__(self, params, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach=None, *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        _check(lr=lr, epsilon_value=eps, weight_decay_value=weight_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _static(self, group):
        b1, b2 = group["betas"]
        return (("beta1", b1), ("beta2", b2), ("eps", group["eps"]), ("weight_decay", group["weight_decay"]),
                ("maximize", group["maximize"]))


class RAdam(_FusedOptimizer):
    """Rectified Adam: plain momentum steps until the variance estimate is tractable, then rectified Adam steps.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.RAdam([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.8000], requires_grad=True)
    """

    _update, _buffers = X.optim.radam_update, ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        _check(lr=lr, epsilon_value=eps, weight_decay_value=weight_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, capturable=capturable, differentiable=differentiable,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _static(self, group):
        b1, b2 = group["betas"]
        return (("beta1", b1), ("beta2", b2), ("eps", group["eps"]), ("weight_decay", group["weight_decay"]),
                ("decoupled_weight_decay", group["decoupled_weight_decay"]), ("maximize", group["maximize"]))


class NAdam(_FusedOptimizer):
    """Adam with Nesterov momentum and a momentum schedule (`momentum_decay`).

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.NAdam([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); round(w.item(), 4)
        0.8944
    """

    _update, _buffers = X.optim.nadam_update, ("exp_avg", "exp_avg_sq", "mu_product")

    def __init__(self, params, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        _check(lr=lr, epsilon_value=eps, weight_decay_value=weight_decay, momentum_decay=momentum_decay)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _params_with_state(self, group, buffers):
        for p, state in super()._params_with_state(group, buffers[:2]):
            if "mu_product" not in state:
                state["mu_product"] = tensor(1.0, dtype=_dtype.float32)
            yield p, state

    def _static(self, group):
        b1, b2 = group["betas"]
        return (("beta1", b1), ("beta2", b2), ("eps", group["eps"]), ("weight_decay", group["weight_decay"]),
                ("momentum_decay", group["momentum_decay"]),
                ("decoupled_weight_decay", group["decoupled_weight_decay"]), ("maximize", group["maximize"]))


class Rprop(_FusedOptimizer):
    """Rprop: each coordinate moves by its own step size, grown by `etas[1]` while its gradient keeps its sign
    and shrunk by `etas[0]` (that step skipped) when the sign flips; only the gradient's sign is used.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([1.0]))
        >>> opt = tp.optim.Rprop([w], lr=0.1)
        >>> (w * 2).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    _update, _buffers = X.optim.rprop_update, ("prev", "step_size")

    def __init__(self, params, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50.0), *, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False):
        _check(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _static(self, group):
        (etaminus, etaplus), (smin, smax) = group["etas"], group["step_sizes"]
        return (("etaminus", etaminus), ("etaplus", etaplus), ("step_size_min", smin), ("step_size_max", smax),
                ("maximize", group["maximize"]))
