"""Learning-rate schedules, as `torch.optim.lr_scheduler`: `StepLR`, `MultiStepLR`, `ConstantLR`, `LinearLR`,
`ExponentialLR`, `PolynomialLR`, `CosineAnnealingLR`, `LambdaLR`, `MultiplicativeLR`, `SequentialLR`,
`ChainedScheduler`; cyclic ones (`OneCycleLR`, `CyclicLR`, `CosineAnnealingWarmRestarts`) and
`ReduceLROnPlateau` are in `_cyclic.py`.

A scheduler rewrites `group["lr"]` of its optimizer at each `step()`; the
optimizer reads it as a traced scalar, so changing it never recompiles.
"""

from __future__ import annotations

import bisect
import collections
import functools
import math
import types
import warnings
from collections.abc import Callable

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "PolynomialLR",
           "CosineAnnealingLR", "LambdaLR", "MultiplicativeLR", "SequentialLR", "ChainedScheduler", "OneCycleLR",
           "CyclicLR", "CosineAnnealingWarmRestarts", "ReduceLROnPlateau"]


def _warns_outside_step(get_lr):
    """A built-in schedule's `get_lr`, warning as PyTorch's do when called anywhere but inside `step()`."""
    @functools.wraps(get_lr)
    def checked(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        return get_lr(self)

    return checked


class LRScheduler:
    """Base class: `step()` advances `last_epoch` and sets each group's lr to `get_lr()`.

    Arguments:
    optimizer: the optimizer whose learning rates are scheduled.
    last_epoch: index of the last epoch (-1 to start fresh; otherwise groups need "initial_lr").

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        >>> isinstance(sched, tp.optim.lr_scheduler.LRScheduler)
        True
        >>> opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.5]
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fn = cls.__dict__.get("get_lr")
        if fn is not None and cls.__module__.startswith("tapeflow.optim"):  # (a user's scheduler: as written)
            cls.get_lr = _warns_outside_step(fn)

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
        self._get_lr_called_within_step = False  # (PyTorch's flags, part of its state dict)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for the current `last_epoch` (each subclass's rule)."""
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr()")

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last `step()`."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and update the optimizer's learning rates (`epoch`: jump there, PyTorch's deprecated
        form, using the closed form of the schedule where it has one)."""
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                lrs = self.get_lr()
            else:
                self.last_epoch = epoch
                lrs = self._closed_form() if hasattr(self, "_closed_form") else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

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
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


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

    def _closed_form(self) -> list[float]:
        lo = self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2 for base in self.base_lrs]


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


class MultiplicativeLR(LambdaLR):
    """Multiply each group's lr by `lr_lambda(epoch)` at every step after the first.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
        >>> opt.step(); sched.step(); opt.step(); sched.step(); sched.get_last_lr()
        [0.25]
    """

    def get_lr(self) -> list[float]:
        if self.last_epoch > 0:
            return [lr * fn(self.last_epoch) for lr, fn in zip(self._lrs(), self.lr_lambdas)]
        return self._lrs()


class MultiStepLR(LRScheduler):
    """Multiply the lr by `gamma` at each epoch listed in `milestones`.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
        >>> for _ in range(3):
        ...     opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = collections.Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        passed = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the lr by `factor` until epoch `total_iters`, then restore it.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)
        >>> before = sched.get_last_lr(); opt.step(); sched.step(); before, sched.get_last_lr()
        ([0.5], [1.0])
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if not 0 < factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr * (1.0 / self.factor) for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Move the lr's factor linearly from `start_factor` to `end_factor` over `total_iters` epochs (warm-up).

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.75]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if not 0 < start_factor <= 1:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if not 0 <= end_factor <= 1:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, a, b, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if t == 0:
            return [lr * a for lr in self._lrs()]
        if t > n:
            return self._lrs()
        return [lr * (1.0 + (b - a) / (n * a + (t - 1) * (b - a))) for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        a, b = self.start_factor, self.end_factor
        return [base * (a + (b - a) * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by `gamma` every epoch.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return self._lrs() if self.last_epoch == 0 else [lr * self.gamma for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr as `(1 - epoch / total_iters) ** power` until `total_iters`.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.PolynomialLR(opt, total_iters=4)
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.75]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, n = self.last_epoch, self.total_iters
        if t == 0 or t > n:
            return self._lrs()
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * factor for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]


class _Composite(LRScheduler):
    """A scheduler made of others: its state holds theirs as state dicts (never the scheduler objects, which
    belong to the optimizer they were built with), and loading it loads each of them."""

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, saved in zip(self._schedulers, inner):
            s.load_state_dict(saved)


class SequentialLR(_Composite):
    """Run `schedulers` one after another, switching at the epochs in `milestones`.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> warm = tp.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
        >>> decay = tp.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> sched = tp.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[2])
        >>> lrs = []
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list[int], last_epoch: int = -1):
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        for i, s in enumerate(schedulers):
            if s.optimizer is not optimizer:
                raise ValueError(f"Sequential Schedulers expects all schedulers to belong to the same optimizer, but "
                                 f"got scheduler {type(s).__name__} at index {i} has {s.optimizer}, which is different "
                                 f"from {type(optimizer).__name__}.")
        self.optimizer, self._schedulers, self._milestones = optimizer, list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:  # undo the initial steps the schedulers took when built
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:
            s.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step several schedulers together at each `step()` (their effects compose).

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.ChainedScheduler([tp.optim.lr_scheduler.ConstantLR(opt, 0.5, 2),
        ...                                                  tp.optim.lr_scheduler.ExponentialLR(opt, 0.5)])
        >>> opt.step(); sched.step(); sched.get_last_lr()
        [0.25]
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None):
        self._schedulers = list(schedulers)
        if not self._schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained")
        self.optimizer = optimizer if optimizer is not None else self._schedulers[0].optimizer
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def step(self) -> None:
        for s in self._schedulers:
            s.step()
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]


from ._cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, ReduceLROnPlateau  # noqa: E402


class _LRScheduler(LRScheduler):
    """PyTorch's older name of the base class, still subclassed by custom schedulers."""
