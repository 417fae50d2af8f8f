"""`torch.profiler`: the autograd profiler (`tapeflow.autograd.profiler`) driven the way training loops
drive PyTorch's: activities, a schedule over `prof.step()` calls and a handler for each finished trace.

    with tp.profiler.profile(schedule=tp.profiler.schedule(wait=1, warmup=1, active=2),
                             on_trace_ready=tp.profiler.tensorboard_trace_handler("./log")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

A schedule maps each step number to an action: `NONE` (not recording), `WARMUP` (recording, then
discarded), `RECORD`, and `RECORD_AND_SAVE` (the last step of an active window: the trace is handed
to `on_trace_ready`, after which `key_averages()`, `events()` and `export_chrome_trace()` describe
it). Without a schedule the whole block is one trace, handed over when the block ends.
"""

from __future__ import annotations

import enum
import os
import socket
import time
from collections.abc import Callable, Iterable

from .autograd import profiler as _autograd_profiler
from .autograd.profiler import record_function

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What to profile: `CPU` (host ranges of ops, backward nodes and `record_function`); the device
    activities (`CUDA`, ...) make each range wait for its outputs, so that it includes device time."""

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set:
    """The activities `profile` accepts.

    Example:
        >>> import tapeflow as tp
        >>> tp.profiler.ProfilerActivity.CPU in tp.profiler.supported_activities()
        True
    """
    return set(ProfilerActivity)


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (see `schedule`)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A schedule: after `skip_first` steps, cycles of `wait` idle steps, `warmup` steps and `active`
    recorded steps (the last of which saves the trace), `repeat` times (0: forever). With
    `skip_first_wait`, the first cycle has no wait.

    Example:
        >>> import tapeflow as tp
        >>> s = tp.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
        >>> [s(i).name for i in range(5)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings

        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"the step number must not be negative, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait  # the first cycle starts at its warm-up
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        k = step % cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if k == cycle - 1 else ProfilerAction.RECORD

    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False):
    """An `on_trace_ready` handler that writes each trace as a Chrome trace file into `dir_name`
    (`<worker>.<time in ns>.pt.trace.json`, viewable in Perfetto, chrome://tracing or TensorBoard's
    profiler plugin).

    Example:
        >>> import os, tempfile, tapeflow as tp
        >>> d = tempfile.mkdtemp()
        >>> with tp.profiler.profile(on_trace_ready=tp.profiler.tensorboard_trace_handler(d)):
        ...     _ = tp.ones(2) * 2
        >>> [f.endswith(".pt.trace.json") for f in os.listdir(d)]
        [True]
    """
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns()}.pt.trace.json")
        if use_gzip:
            import gzip
            import shutil

            prof.export_chrome_trace(path)
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
        else:
            prof.export_chrome_trace(path)

    return handler


class profile:
    """Profile a block, step by step (see the module docstring).

    Arguments:
        activities: `ProfilerActivity` values (default: CPU, and the device if JAX has one); a device
            activity makes each range include its device time.
        schedule: step number -> `ProfilerAction` (see `schedule`); default: record everything.
        on_trace_ready: called with the profiler when a trace is complete.
        record_shapes: record the input shapes of each op.
        profile_memory, with_stack, with_flops, with_modules, experimental_config,
            execution_trace_observer, acc_events, use_cuda, custom_trace_id_callback: accepted for
            PyTorch's signature.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(4, requires_grad=True)
        >>> with tp.profiler.profile(activities=[tp.profiler.ProfilerActivity.CPU]) as prof:
        ...     with tp.profiler.record_function("step"):
        ...         (x * x).sum().backward()
        >>> "step" in {e.key for e in prof.key_averages()}
        True
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None, schedule=None,
                 on_trace_ready=None, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None, acc_events: bool = False,
                 use_cuda: bool | None = None, custom_trace_id_callback=None):
        acts = set(activities) if activities is not None else None
        if acts is not None and not all(isinstance(a, ProfilerActivity) for a in acts):
            raise TypeError(f"activities must be ProfilerActivity values, got {sorted(map(repr, acts))}")
        self.activities = acts if acts is not None else {ProfilerActivity.CPU}
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self._device = bool(use_cuda) or any(a is not ProfilerActivity.CPU for a in self.activities)
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._running = None  # the autograd profiler recording now
        self.profiler = None  # the autograd profiler of the last complete trace

    # -- the recording window ------------------------------------------------------------------------------
    def _start(self) -> None:
        self._running = _autograd_profiler.profile(record_shapes=self.record_shapes, sync=self._device)
        self._running.__enter__()

    def _stop(self) -> None:
        running, self._running = self._running, None
        running.__exit__(None, None, None)
        self.profiler = running

    def _save(self) -> None:
        self._stop()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _enter_action(self, prev: ProfilerAction, new: ProfilerAction) -> None:
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev is ProfilerAction.RECORD_AND_SAVE:
            self._save()
        elif prev is ProfilerAction.WARMUP and new in recording and self._running is not None:
            self._running.__exit__(None, None, None)  # warm-up ranges are discarded
            self._running = None
        elif prev in (ProfilerAction.WARMUP, ProfilerAction.RECORD) and new is ProfilerAction.NONE:
            self._save()  # a window the schedule cut short
        if new is not ProfilerAction.NONE and self._running is None:
            self._start()

    def start(self) -> None:
        """Begin profiling (what entering the `with` block does)."""
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._enter_action(ProfilerAction.NONE, self.current_action)

    def stop(self) -> None:
        """End profiling (what leaving the `with` block does): a trace being recorded is handed over."""
        if self._running is not None:
            if self.current_action is ProfilerAction.WARMUP:
                self._running.__exit__(None, None, None)
                self._running = None
            else:
                self._save()
        self.current_action = ProfilerAction.NONE

    def step(self) -> None:
        """Mark the end of a training step: the schedule's action for the next step takes effect."""
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._enter_action(prev, self.current_action)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- the last complete trace ---------------------------------------------------------------------------
    def _trace(self):
        if self.profiler is None:
            raise RuntimeError("the profiler has no complete trace yet: read its results after the block, or in "
                               "on_trace_ready")
        return self.profiler

    def events(self):
        """The recorded ranges of the last complete trace."""
        return self._trace().events()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0):
        """The last complete trace's ranges averaged by name (`.table(sort_by=..., row_limit=...)` prints them)."""
        return self._trace().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        """Write the last complete trace as a Chrome trace (JSON)."""
        self._trace().export_chrome_trace(path)
