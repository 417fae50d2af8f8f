"""The autograd profiler: host-time ranges for every op, backward node and `record_function`.

Device time: JAX dispatches asynchronously, so by default an op's range measures
its host (dispatch) time and device execution shows up wherever the host next
waits. With `profile(sync=True)` (or `use_device` / `use_cuda`), every op's and
node's outputs are `block_until_ready`'d inside its range, so each range includes
its device execution and is also reported as device time (on a GPU or TPU; on the CPU
host and device time are the same, so no device columns are shown). Every range is also a
`jax.profiler.TraceAnnotation`, so it appears in traces taken with `jax.profiler.trace`.

XLA compilation: the first call of an op with new shapes traces, lowers and compiles it.
JAX reports those phases through `jax.monitoring`; the profiler records their sum as a child
range "XLA compile: <op>" of the op that triggered it, so compilation is a row of its own and
is not counted in the op's self time.
"""

from __future__ import annotations

import functools
import json
import threading
import time

import jax

from .._state import state

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList"]

_active: list = []  # profiles currently recording

COMPILE_PREFIX = "XLA compile: "
# The phases of a JAX compilation that jax.monitoring reports as durations, in seconds.
_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
                   "/jax/core/compile/backend_compile_duration")


class FunctionEvent:
    """One recorded range: name, start/end (microseconds), nesting, input shapes."""

    def __init__(self, name, start, tid, shapes, parent):
        self.name, self.key = name, name
        self.time_range_start, self.time_range_end = start, start
        self.thread, self.input_shapes, self.cpu_parent = tid, shapes, parent
        self.cpu_children: list = []
        self.device_time_total = 0.0

    @property
    def cpu_time_total(self) -> float:
        return self.time_range_end - self.time_range_start

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        return self.device_time_total

    def __repr__(self):
        return f"<FunctionEvent {self.name} cpu_time_total={self.cpu_time_total:.1f}us>"


class FunctionEventAvg:
    """Totals of the events sharing a key (and input shapes when grouped by them)."""

    def __init__(self, key, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0

    def add(self, e):
        self.count += 1
        for f in ("cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total"):
            setattr(self, f, getattr(self, f) + getattr(e, f))
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self) -> float:
        return self.device_time_total / max(self.count, 1)

    def __repr__(self):
        return f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.1f}us>"


def _fmt(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events with `table`, `key_averages`, `total_average` and `export_chrome_trace`."""

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        groups: dict = {}
        for e in self:
            k = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            if k not in groups:
                groups[k] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else None)
            groups[k].add(e)
        return EventList(groups.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = "self_cpu_time_total", row_limit: int = 100,
              header: str | None = None, max_name_column_width: int = 55) -> str:
        rows = list(self if isinstance(self[0] if self else None, FunctionEventAvg) else self.key_averages())
        if sort_by:
            rows.sort(key=lambda r: getattr(r, sort_by), reverse=True)
        rows = rows[:row_limit] if row_limit and row_limit > 0 else rows
        self_total = sum(r.self_cpu_time_total for r in self) or 1.0
        device = any(r.device_time_total for r in rows)
        cols = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        cols += ["Self Device", "Device total", "Device time avg"] if device else []
        cols += ["# of Calls"]
        width = max([len(c) for c in cols[1:]] + [12])
        namew = min(max([len(r.key) for r in rows] + [4]), max_name_column_width)
        line = "-" * namew + "  " + "  ".join("-" * width for _ in cols[1:])
        out = [header] if header else []
        out += [line, cols[0].ljust(namew) + "  " + "  ".join(c.rjust(width) for c in cols[1:]), line]
        for r in rows:
            vals = [f"{100 * r.self_cpu_time_total / self_total:.2f}%", _fmt(r.self_cpu_time_total),
                    f"{100 * r.cpu_time_total / self_total:.2f}%", _fmt(r.cpu_time_total), _fmt(r.cpu_time)]
            if device:
                vals += [_fmt(r.self_device_time_total), _fmt(r.device_time_total), _fmt(r.device_time)]
            vals.append(str(r.count))
            out.append(r.key[:namew].ljust(namew) + "  " + "  ".join(v.rjust(width) for v in vals))
        out += [line, f"Self CPU time total: {_fmt(self_total)}"]
        compile_total = sum(r.self_cpu_time_total for r in self if r.key.startswith(COMPILE_PREFIX))
        if compile_total:
            out.append(f"XLA compile time total: {_fmt(compile_total)} (first calls with new shapes; "
                       "later calls reuse the compiled programs)")
        if device:
            out.append(f"Self Device time total: {_fmt(sum(r.self_device_time_total for r in self))}")
        return "\n".join(out) + "\n"

    def export_chrome_trace(self, path: str) -> None:
        ranges = [e for e in self if isinstance(e, FunctionEvent)]
        events = [{"name": e.name, "ph": "X", "cat": "xla_compile" if e.name.startswith(COMPILE_PREFIX) else "cpu_op",
                   "ts": e.time_range_start, "dur": e.cpu_time_total, "pid": 0, "tid": e.thread,
                   "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                  for e in ranges]
        # Metadata events name the process and each thread in trace viewers.
        meta = [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": f"tapeflow ({jax.default_backend()})"}}]
        main = threading.main_thread().ident % 100000
        for tid in sorted({e.thread for e in ranges}):
            name = "main thread" if tid == main else f"thread {tid}"
            meta.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": tid, "args": {"name": name}})
        events = meta + events
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)


def _shapes(args):
    return [list(a.shape) if hasattr(a, "shape") else [] for a in args]


def _block(x):
    leaves = [getattr(t, "_data", t) for t in (x if isinstance(x, (tuple, list)) else (x,))]
    for leaf in leaves:
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


class profile:
    """Context manager recording forward ops (`aten::mul`), backward nodes (`MulBackward0`)
    and `record_function` ranges, with their nesting.

    Arguments:
        enabled: record at all.
        use_cuda, use_device: wait for each op's outputs inside its range (see `sync`).
        record_shapes: remember the input shapes of each op.
        with_stack, profile_memory, with_flops, with_modules: accepted for PyTorch compatibility.
        sync: block until each op's outputs are ready inside its range, so times include device work.

    Returns:
        The profiler; after the block, `key_averages()`, `events()`, `export_chrome_trace(path)`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(3, requires_grad=True)
        >>> with tp.autograd.profiler.profile() as prof:
        ...     (x * x).sum().backward()
        >>> sorted(e.key for e in prof.key_averages())[:2]
        ['MulBackward0', 'SumBackward0']
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, sync: bool = False):
        self.enabled, self.record_shapes = enabled, record_shapes
        self.sync = bool(sync or use_cuda or use_device)
        self.function_events = EventList()
        self._stack: list = []
        self._t0 = 0.0
        self._has_device = jax.default_backend() != "cpu"

    def _now(self):
        return (time.perf_counter() - self._t0) * 1e6

    def _range(self, name, shapes, run):
        parent = self._stack[-1] if self._stack else None
        ev = FunctionEvent(name, self._now(), threading.get_ident() % 100000, shapes, parent)
        if parent is not None:
            parent.cpu_children.append(ev)
        self._stack.append(ev)
        try:
            with jax.profiler.TraceAnnotation(name):
                out = run()
                if self.sync:
                    _block(out)
        finally:
            self._stack.pop()
            ev.time_range_end = self._now()
            if self.sync and self._has_device:
                ev.device_time_total = ev.cpu_time_total
            self.function_events.append(ev)
        return out

    def _compiled(self, seconds: float, fun_name: str) -> None:
        """Record `seconds` of XLA compilation, just finished, under the innermost open range."""
        end = self._now()
        parent = self._stack[-1] if self._stack else None
        last = parent.cpu_children[-1] if parent is not None and parent.cpu_children else None
        if last is not None and last.name.startswith(COMPILE_PREFIX):  # one row per op for all its phases
            last.time_range_start = end - last.cpu_time_total - seconds * 1e6
            last.time_range_end = end
            return
        name = COMPILE_PREFIX + (parent.name if parent is not None else fun_name)
        ev = FunctionEvent(name, end - seconds * 1e6, threading.get_ident() % 100000, [], parent)
        ev.time_range_end = end
        if parent is not None:
            parent.cpu_children.append(ev)
        self.function_events.append(ev)

    def _op(self, op, args, params, proceed):
        return self._range("aten::" + op.name, _shapes(args) if self.record_shapes else [],
                           lambda: proceed(op, args, params))

    def _node(self, node, grads, create_graph, proceed):
        return self._range(node.name(), _shapes(grads) if self.record_shapes else [],
                           lambda: proceed(node, grads, create_graph))

    def __enter__(self):
        if self.enabled:
            self._t0 = time.perf_counter()
            state.interceptors.append(self._op)
            state.node_interceptors.append(self._node)
            if not _active:
                jax.monitoring.register_event_duration_secs_listener(_on_jax_duration)
            _active.append(self)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            state.interceptors.remove(self._op)
            state.node_interceptors.remove(self._node)
            _active.remove(self)
            if not _active:
                jax.monitoring.unregister_event_duration_listener(_on_jax_duration)
        return False

    def events(self) -> EventList:
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        return self.function_events.key_averages(group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        return self.function_events.total_average()

    def table(self, sort_by: str | None = "self_cpu_time_total", row_limit: int = 100) -> str:
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit)

    def export_chrome_trace(self, path: str) -> None:
        self.function_events.export_chrome_trace(path)


def _on_jax_duration(event: str, duration: float, **kwargs) -> None:
    if event in _COMPILE_EVENTS:
        for p in _active:
            p._compiled(duration, str(kwargs.get("fun_name", "jit")))


class record_function:
    """A named range in the profile (context manager or decorator).

    Arguments:
        name: the range's name.
        args: optional string shown with it (accepted for PyTorch compatibility).

    Returns:
        The context manager.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autograd.profiler.profile() as prof:
        ...     with tp.autograd.profiler.record_function("step"):
        ...         y = tp.ones(2) * 2
        >>> [e.key for e in prof.events()][-1]
        'step'
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name

    def __enter__(self):
        self._open = []
        for p in _active:
            parent = p._stack[-1] if p._stack else None
            ev = FunctionEvent(self.name, p._now(), threading.get_ident() % 100000, [], parent)
            if parent is not None:
                parent.cpu_children.append(ev)
            p._stack.append(ev)
            self._open.append((p, ev))
        self._ann = jax.profiler.TraceAnnotation(self.name)
        self._ann.__enter__()
        return self

    def __exit__(self, *exc):
        self._ann.__exit__(*exc)
        for p, ev in self._open:
            if p._stack and p._stack[-1] is ev:
                p._stack.pop()
            ev.time_range_end = p._now()
            p.function_events.append(ev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name):
                return fn(*a, **k)
        return wrapper
