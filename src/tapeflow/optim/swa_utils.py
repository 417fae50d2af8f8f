"""Stochastic weight averaging and exponential moving averages of a model's weights (PyTorch's
`torch.optim.swa_utils`): `AveragedModel`, the averaging rules, `SWALR` and `update_bn`."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable

from .. import _dtype
from .._factories import tensor
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
           "get_swa_multi_avg_fn"]


def get_swa_avg_fn() -> Callable:
    """The equal-weight running mean: `avg + (current - avg) / (n + 1)` after `n` models.

    Example:
        >>> import tapeflow as tp
        >>> tp.optim.swa_utils.get_swa_avg_fn()(tp.tensor(1.0), tp.tensor(4.0), tp.tensor(2))
        tensor(2.)
    """
    def swa_update(averaged: Tensor, current: Tensor, num_averaged) -> Tensor:
        return averaged + (current - averaged) / (num_averaged + 1)
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The exponential moving average: `decay * avg + (1 - decay) * current`.

    Example:
        >>> import tapeflow as tp
        >>> tp.optim.swa_utils.get_ema_avg_fn(0.5)(tp.tensor(1.0), tp.tensor(3.0), tp.tensor(1))
        tensor(2.)
    """
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(averaged: Tensor, current: Tensor, num_averaged) -> Tensor:
        return decay * averaged + (1 - decay) * current
    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """`get_swa_avg_fn` over lists of tensors, updating the averages in place.

    Example:
        >>> import tapeflow as tp
        >>> avg = [tp.tensor(1.0)]
        >>> tp.optim.swa_utils.get_swa_multi_avg_fn()(avg, [tp.tensor(4.0)], tp.tensor(2)); avg
        [tensor(2.)]
    """
    one = get_swa_avg_fn()

    def swa_update(averaged: list, current: list, num_averaged) -> None:
        for a, c in zip(averaged, current):
            a.copy_(one(a, c, num_averaged) if a.dtype.is_floating_point or a.dtype.is_complex else c)
    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """`get_ema_avg_fn` over lists of tensors, updating the averages in place.

    Example:
        >>> import tapeflow as tp
        >>> avg = [tp.tensor(1.0)]
        >>> tp.optim.swa_utils.get_ema_multi_avg_fn(0.5)(avg, [tp.tensor(3.0)], tp.tensor(1)); avg
        [tensor(2.)]
    """
    one = get_ema_avg_fn(decay)

    def ema_update(averaged: list, current: list, num_averaged) -> None:
        for a, c in zip(averaged, current):
            a.copy_(one(a, c, num_averaged) if a.dtype.is_floating_point or a.dtype.is_complex else c)
    return ema_update


class AveragedModel(Module):
    """A copy of `model` whose parameters are an average of the weights it is shown (SWA by default, or an EMA
    with `multi_avg_fn=get_ema_multi_avg_fn(decay)`); calling it runs the averaged copy.

    Arguments:
        model: the model to average (deep-copied; it is not changed).
        device: accepted for PyTorch compatibility (tapeflow places the copy where the model is).
        avg_fn: `avg_fn(averaged, current, num_averaged) -> new average`, one tensor at a time.
        multi_avg_fn: `multi_avg_fn(averaged_list, current_list, num_averaged)`, updating in place.
        use_buffers: average the buffers too (else they are copied from `model` at each update).

    Example:
        >>> import tapeflow as tp
        >>> model = tp.nn.Linear(1, 1, bias=False)
        >>> swa = tp.optim.swa_utils.AveragedModel(model)
        >>> with tp.no_grad():
        ...     _ = model.weight.fill_(1.0); swa.update_parameters(model)
        ...     _ = model.weight.fill_(3.0); swa.update_parameters(model)
        >>> swa.module.weight, int(swa.n_averaged)
        (Parameter containing:
        tensor([[2.]], requires_grad=True), 2)
    """

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> Iterable[Tensor]:
        return itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current weights into the average (the first call copies them)."""
        mine = [p.detach() for p in self._tensors(self.module)]
        theirs = [p.detach() for p in self._tensors(model)]
        with no_grad():
            first = int(self.n_averaged) == 0
            if first:
                for a, c in zip(mine, theirs):
                    a.copy_(c)
            elif self.avg_fn is not None:
                for a, c in zip(mine, theirs):
                    a.copy_(self.avg_fn(a, c, self.n_averaged))
            else:
                (self.multi_avg_fn or get_swa_multi_avg_fn())(mine, theirs, self.n_averaged)
            if not self.use_buffers:  # buffers follow the model being averaged
                for b, c in zip(self.module.buffers(), model.buffers()):
                    b.detach().copy_(c.detach())
            self.n_averaged.add_(1)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to `swa_lr` over `anneal_epochs` epochs (cosine or linear), then hold it.

    Arguments:
        optimizer: the optimizer to schedule.
        swa_lr: the final learning rate (one per group, or one for all).
        anneal_epochs: epochs of annealing (0: switch at once).
        anneal_strategy: `"cos"` or `"linear"`.
        last_epoch: the index of the last epoch (-1 to start).

    Example:
        >>> import tapeflow as tp
        >>> opt = tp.optim.SGD([tp.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = tp.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
        >>> [round(g["lr"], 4) for g in opt.param_groups]
        [1.0]
        >>> opt.step(); sched.step(); round(sched.get_last_lr()[0], 4)
        0.55
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1):
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(lrs) != len(optimizer.param_groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: swa_lr has {len(lrs)}, "
                             f"optimizer.param_groups has {len(optimizer.param_groups)}")
        for lr, group in zip(lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_func = _cosine if anneal_strategy == "cos" else _linear
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        # The current lr is a blend of the lr annealing started from and swa_lr: recover the start from the
        # previous step's blend, then blend again at this step's position.
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev = self.anneal_func(max(0.0, min(1.0, (step - 1) / span)))
        now = self.anneal_func(max(0.0, min(1.0, step / span)))
        out = []
        for group in self.optimizer.param_groups:
            swa = group["swa_lr"]
            start = swa if prev == 1 else (group["lr"] - prev * swa) / (1 - prev)
            out.append(swa * now + start * (1 - now))
        return out

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")} | {
            "_anneal_strategy": "cos" if self.anneal_func is _cosine else "linear"}

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        self.anneal_func = _cosine if state.pop("_anneal_strategy", "cos") == "cos" else _linear
        self.__dict__.update(state)


def _linear(t: float) -> float:
    return t


def _cosine(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2


def update_bn(loader: Iterable, model: Module, device=None) -> None:
    """Recompute the running statistics of every BatchNorm layer of `model` with one pass over `loader`
    (a cumulative average over its batches), as needed after averaging weights.

    Arguments:
        loader: batches (a tensor, or a list/tuple whose first item is the input).
        model: the model to run.
        device: if given, inputs are moved there first.

    Example:
        >>> import tapeflow as tp
        >>> model = tp.nn.Sequential(tp.nn.Linear(2, 2), tp.nn.BatchNorm1d(2))
        >>> tp.optim.swa_utils.update_bn([tp.ones(4, 2), tp.zeros(4, 2)], model)
        >>> int(model[1].num_batches_tracked)
        2
    """
    from ..nn.modules.normalization import _BatchNorm

    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)
