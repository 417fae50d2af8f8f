"""`torch.autograd.profiler_util` under tapeflow's names: the profiler's event classes and time formatting."""

from __future__ import annotations

from .profiler import EventList, FunctionEvent, FunctionEventAvg, Interval
from .profiler import _fmt as _format_time

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "_format_time"]
