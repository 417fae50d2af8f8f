"""Cyclic learning-rate schedules (`OneCycleLR`, `CyclicLR`, `CosineAnnealingWarmRestarts`) and the
metric-driven `ReduceLROnPlateau`, as PyTorch defines them."""

from __future__ import annotations

import math
import types

from .lr_scheduler import LRScheduler
from .optimizer import Optimizer

__all__ = ["OneCycleLR", "CyclicLR", "CosineAnnealingWarmRestarts", "ReduceLROnPlateau"]


class _CyclesMomentum:
    """What OneCycleLR and CyclicLR share: with `cycle_momentum`, where momentum is written, `betas[0]` (Adam
    family: `use_beta1`) or `momentum` (SGD, RMSprop); the attributes are PyTorch's, so are the state dicts."""

    def _momentum_setting(self, optimizer: Optimizer, cycle_momentum: bool) -> None:
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults

    @property
    def _key(self) -> str | None:
        if not self.cycle_momentum:
            return None
        return "betas" if self.use_beta1 else "momentum"


def _set_momentum(group: dict, key: str | None, value: float) -> None:
    if key == "betas":
        group["betas"] = (value, *group["betas"][1:])
    elif key == "momentum":
        group["momentum"] = value


def _per_group(value, optimizer: Optimizer, name: str) -> list:
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n


class OneCycleLR(_CyclesMomentum, LRScheduler):
    """The one-cycle policy: warm up from `max_lr / div_factor` to `max_lr`, then anneal far below it;
    momentum cycles the other way. Step once per batch, `total_steps` times.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=0.1, momentum=0.9)
        >>> sched = tp.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
        >>> round(sched.get_last_lr()[0], 4)
        0.04
    """

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.total_steps = total_steps
        self._anneal_func_type = anneal_strategy  # (a name, not the function: the state must pickle safely)
        up = float(pct_start * total_steps) - 1
        if three_phase:
            phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                      (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        # (PyTorch's form: each phase's last step and the param-group keys it anneals between)
        self._schedule_phases = [dict(zip(("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum"), p))
                                 for p in phases]
        self._momentum_setting(optimizer, cycle_momentum)
        if last_epoch == -1:
            for group, mx, lo, hi in zip(optimizer.param_groups, _per_group(max_lr, optimizer, "max_lr"),
                                         _per_group(base_momentum, optimizer, "base_momentum"),
                                         _per_group(max_momentum, optimizer, "max_momentum")):
                group["initial_lr"] = mx / div_factor
                group["max_lr"], group["min_lr"] = mx, mx / div_factor / final_div_factor
                if self._key is not None:
                    _set_momentum(group, self._key, hi)
                    group["max_momentum"], group["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _cos(start: float, end: float, pct: float) -> float:
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _linear(start: float, end: float, pct: float) -> float:
        return (end - start) * pct + start

    def _anneal(self, start: float, end: float, pct: float) -> float:
        return (self._cos if self._anneal_func_type == "cos" else self._linear)(start, end, pct)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self._key is not None:
                        _set_momentum(group, self._key, self._anneal(group[phase["start_momentum"]],
                                                                     group[phase["end_momentum"]], pct))
                    break
                start = end
        return lrs


class CyclicLR(_CyclesMomentum, LRScheduler):
    """Cycle the lr between `base_lr` and `max_lr` (triangular, triangular2 or exp_range); step once per batch.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=0.1, momentum=0.9)
        >>> sched = tp.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2)
        >>> opt.step(); sched.step(); round(sched.get_last_lr()[0], 4)
        0.55
    """

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular", gamma: float = 1.0, scale_fn=None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9,
                 last_epoch: int = -1):
        base_lrs = _per_group(base_lr, optimizer, "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = group["initial_lr"] = lr
        self.max_lrs = _per_group(max_lr, optimizer, "max_lr")
        down = step_size_down if step_size_down is not None else step_size_up
        self.total_size = float(step_size_up + down)
        self.step_ratio = float(step_size_up) / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn  # (the built-in modes are computed in `scale_fn`: nothing unpicklable kept)
        self.scale_mode = ("iterations" if mode == "exp_range" else "cycle") if scale_fn is None else scale_mode
        self._momentum_setting(optimizer, cycle_momentum)
        if cycle_momentum:
            self.base_momentums = _per_group(base_momentum, optimizer, "base_momentum")
            self.max_momentums = _per_group(max_momentum, optimizer, "max_momentum")
            if last_epoch == -1:
                for hi, lo, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    _set_momentum(group, self._key, hi)
                    group["max_momentum"], group["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        """The amplitude factor at cycle (or iteration) `x`: the user's `scale_fn`, or the mode's."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def state_dict(self) -> dict:
        """The state; a custom `scale_fn` that is a plain function or lambda is left out (it cannot be saved), a
        callable object keeps its attributes."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a state from `state_dict()` (the custom `scale_fn` given at construction stays)."""
        state = dict(state_dict)
        saved = state.pop("_scale_fn_custom", None)
        self.__dict__.update(state)
        if saved is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(saved)

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        factor = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (mx - base) * scale * factor for base, mx in zip(self.base_lrs, self.max_lrs)]
        if self._key is not None:
            for group, lo, hi in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, self._key, hi - (hi - lo) * scale * factor)
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing that restarts every `T_i` epochs, the period growing by `T_mult` after each restart.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
        >>> lrs = []
        >>> for _ in range(3):
        ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
        >>> lrs
        [0.5, 1.0, 0.5]
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min, self.T_cur = T_0, T_0, T_mult, eta_min, last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur - self.T_i, self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            lrs = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by `factor` when a metric (passed to `step(metric)`) stops improving for `patience` epochs.

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.nn.Parameter(tp.zeros(1))], lr=1.0)
        >>> sched = tp.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
        >>> for loss in [1.0, 1.0, 1.0]:
        ...     sched.step(loss)
        >>> sched.get_last_lr()
        [0.1]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr=0.0,
                 eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.optimizer, self.mode, self.factor, self.patience = optimizer, mode, factor, patience
        self.threshold, self.threshold_mode, self.cooldown, self.eps = threshold, threshold_mode, cooldown, eps
        self.min_lrs = _per_group(min_lr, optimizer, "min_lr")
        # (a single min_lr also serves param groups added later; a list is per group)
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else min_lr
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.best = self.mode_worse
        self.num_bad_epochs = self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def _better(self, a: float) -> bool:
        if self.mode == "min":
            return a < (self.best * (1 - self.threshold) if self.threshold_mode == "rel" else self.best - self.threshold)
        return a > (self.best * (1 + self.threshold) if self.threshold_mode == "rel" else self.best + self.threshold)

    def step(self, metrics) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            groups = len(self.optimizer.param_groups)
            if groups != len(self.min_lrs):
                if self.default_min_lr is None:
                    raise RuntimeError(
                        f"The number of param groups in the `optimizer` ({groups}) differs from when "
                        f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                        "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                        "`optimizer` param groups.")
                self.min_lrs = [self.default_min_lr] * groups
            for group, lo in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, lo)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]
