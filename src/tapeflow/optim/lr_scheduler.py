"""Learning-rate schedules: `StepLR`, `CosineAnnealingLR`, `LambdaLR`.

A scheduler rewrites `group["lr"]` of its optimizer at each `step()`; the
optimizer reads it as a traced scalar, so changing it never recompiles.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR", "LambdaLR"]


class LRScheduler:
    """Base class: `step()` advances `last_epoch` and sets each group's lr to `get_lr()`.

    Arguments:
        optimizer: the optimizer whose learning rates are scheduled.
        last_epoch: index of the last epoch (-1 to start fresh; otherwise groups need "initial_lr").
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        """The learning rates for the current `last_epoch` (each subclass's rule)."""
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr()")

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last `step()`."""
        return self._last_lr

    def step(self) -> None:
        """Advance one epoch and update the optimizer's learning rates."""
        self._step_count += 1
        self.last_epoch += 1
        lrs = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """The scheduler's state (everything but the optimizer)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a state from `state_dict()`."""
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the learning rate by `gamma` every `step_size` epochs.

    Arguments:
        optimizer: the optimizer.
        step_size: period of the decay.
        gamma: decay factor (default 0.1).
        last_epoch: -1 to start fresh.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        >>> for _ in range(4):
        ...     opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to `eta_min` over `T_max` epochs (PyTorch's recursive form).

    Arguments:
        optimizer: the optimizer.
        T_max: half-period in epochs.
        eta_min: the minimum learning rate.
        last_epoch: -1 to start fresh.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
        >>> opt.step(); sched.step(); round(sched.get_last_lr()[0], 4)
        0.5
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if t == 0:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2 for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (g["lr"] - lo) + lo
                for g in groups]


class LambdaLR(LRScheduler):
    """Set each group's lr to `initial_lr * lr_lambda(epoch)`.

    Arguments:
        optimizer: the optimizer.
        lr_lambda: a function of the epoch, or one per parameter group.
        last_epoch: -1 to start fresh.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e)
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable | list[Callable], last_epoch: int = -1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict:
        """The state; plain functions and lambdas are left out (they cannot be saved), callable objects are kept."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a state from `state_dict()` (callable objects get their attributes back)."""
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)
