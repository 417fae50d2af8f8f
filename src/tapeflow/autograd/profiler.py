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
import itertools
import json
import threading
import time

import jax

from .._state import state

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList", "kineto_available"]

_active: list = []  # profiles currently recording

COMPILE_PREFIX = "XLA compile: "
# The phases of a JAX compilation that jax.monitoring reports as durations, in seconds.
_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration",
                   "/jax/core/compile/backend_compile_duration")


class Interval:
    """A time range in microseconds.

    Example:
        >>> from tapeflow.autograd.profiler_util import Interval
        >>> Interval(10, 25).elapsed_us()
        15
    """

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEvent:
    """One recorded range, with PyTorch's constructor and attributes: `name`, `time_range` (microseconds),
    `thread`, `input_shapes`, `sequence_nr` (the autograd node an op made, or that a backward range ran; -1
    if none), `count` (1), and its nesting (`cpu_parent`, `cpu_children`).

    Example:
        >>> from tapeflow.autograd.profiler import FunctionEvent
        >>> e = FunctionEvent(id=1, name="step", thread=0, start_us=10, end_us=25)
        >>> e.cpu_time_total, e.count
        (15, 1)
    """

    def __init__(self, id, name, thread, start_us, end_us, fwd_thread=None, input_shapes=None, stack=None,
                 scope=0, use_device=None, cpu_memory_usage=0, device_memory_usage=0, is_async=False,
                 is_remote=False, sequence_nr=-1, node_id=-1, device_type=None, device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None, concrete_inputs=None,
                 kwinputs=None, is_user_annotation=False, metadata_json=None):
        self.id, self.node_id, self.name, self.trace_name = id, node_id, name, trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread, self.fwd_thread = thread, fwd_thread
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack, self.scope, self.use_device = stack if stack is not None else [], scope, use_device
        self.cpu_memory_usage, self.device_memory_usage = cpu_memory_usage, device_memory_usage
        self.is_async, self.is_remote, self.is_legacy = is_async, is_remote, is_legacy
        self.sequence_nr, self.flops, self.is_user_annotation = sequence_nr, flops, is_user_annotation
        self.device_type, self.device_index = device_type, device_index
        self.concrete_inputs, self.kwinputs = concrete_inputs or [], kwinputs or {}
        self.count = 1
        self.cpu_children: list = []
        self.cpu_parent = None
        self.device_time_total = 0.0

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range_start(self):
        return self.time_range.start

    @time_range_start.setter
    def time_range_start(self, value) -> None:
        self.time_range.start = value

    @property
    def time_range_end(self):
        return self.time_range.end

    @time_range_end.setter
    def time_range_end(self, value) -> None:
        self.time_range.end = value

    def append_cpu_child(self, child) -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent) -> None:
        self.cpu_parent = parent

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count

    @property
    def self_device_time_total(self) -> float:
        return self.device_time_total

    @property
    def device_time(self) -> float:
        return self.device_time_total / self.count

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self) -> int:
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.1f}us sequence_nr={self.sequence_nr}>")


class FunctionEventAvg:
    """Totals of the events sharing a key (and input shapes when grouped by them): `add` an event or another
    average, as PyTorch's does (the first one added gives the key).

    Example:
        >>> from tapeflow.autograd.profiler import FunctionEvent, FunctionEventAvg
        >>> avg = FunctionEventAvg()
        >>> avg = avg.add(FunctionEvent(id=0, name="f", thread=0, start_us=0, end_us=4))
        >>> avg.add(FunctionEvent(id=1, name="f", thread=0, start_us=4, end_us=6)).cpu_time
        3.0
    """

    def __init__(self, key=None, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.node_id, self.is_async, self.is_remote, self.use_device = 0, False, False, None
        self.cpu_parent, self.stack, self.scope, self.is_legacy = None, None, None, False
        self.cpu_time_total = self.self_cpu_time_total = 0
        self.device_time_total = self.self_device_time_total = 0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0

    def add(self, other):
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("can only add a FunctionEvent or a FunctionEventAvg")
        if self.key is None:
            self.key, self.node_id, self.is_async, self.is_remote = other.key, other.node_id, other.is_async, \
                other.is_remote
            self.cpu_parent, self.input_shapes, self.stack, self.scope = other.cpu_parent, other.input_shapes, \
                other.stack, other.scope
        elif other.key != self.key:
            raise AssertionError(f"cannot add an event of key {other.key!r} to the average of {self.key!r}")
        for f in ("cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total",
                  "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.count += other.count
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else self.device_time_total / self.count

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
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
            total.key = None  # (events of every key add up)
        total.key = "Total"
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

    def __str__(self) -> str:
        return self.table()

    def _populate_cpu_children(self) -> None:
        """Nest the events by their time ranges, per thread, as PyTorch does for events it did not record
        nested: an event is the child of the innermost earlier event whose range contains its own."""
        for e in self:
            e.cpu_children, e.cpu_parent = [], None
        by_thread: dict = {}
        for e in self:
            if not e.is_async:
                by_thread.setdefault((e.thread, e.node_id), []).append(e)
        for events in by_thread.values():
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
            open_: list = []
            for e in events:
                while open_:
                    parent = open_[-1]
                    if e.time_range.start >= parent.time_range.end or e.time_range.end > parent.time_range.end:
                        open_.pop()
                    else:
                        parent.append_cpu_child(e)
                        e.set_cpu_parent(parent)
                        break
                open_.append(e)

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


_ids = itertools.count(1)


def _event(name: str, start: float, shapes: list, parent, **kw) -> FunctionEvent:
    """A new event starting now under `parent` (its end is set when the range closes)."""
    ev = FunctionEvent(next(_ids), name, threading.get_ident() % 100000, start, start, input_shapes=shapes, **kw)
    if parent is not None:
        ev.cpu_parent = parent
        parent.cpu_children.append(ev)
    return ev


def _nbytes(out) -> int:
    """The bytes of the arrays an op returned (the memory it allocated)."""
    total = 0
    for t in out if isinstance(out, (tuple, list)) else (out,):
        raw = getattr(t, "_raw", None)
        if raw is not None:
            total += raw.size * raw.dtype.itemsize
    return total


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
        profile_memory: record the bytes of the arrays each op returns as its `cpu_memory_usage` (a range's
            includes those of the ranges inside it). Frees are not recorded: JAX frees an array when its last
            reference goes, outside any op.
        with_stack, with_flops, with_modules, use_kineto, use_cpu, experimental_config, acc_events,
            custom_trace_id_callback, post_processing_timeout_s, activity_filters: accepted for PyTorch's
            signature (tapeflow records host ranges itself; it has no Kineto backend).
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
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None, sync: bool = False):
        self.enabled, self.record_shapes, self.profile_memory = enabled, record_shapes, profile_memory
        self.sync = bool(sync or use_cuda or use_device)
        self.function_events = EventList()
        self._stack: list = []
        self._t0 = 0.0
        self._has_device = jax.default_backend() != "cpu"

    def _now(self):
        return (time.perf_counter() - self._t0) * 1e6

    def _range(self, name, shapes, run, sequence_nr=-1):
        ev = _event(name, self._now(), shapes, self._stack[-1] if self._stack else None, sequence_nr=sequence_nr)
        self._stack.append(ev)
        try:
            with jax.profiler.TraceAnnotation(name):
                out = run()
                if self.sync:
                    _block(out)
                if sequence_nr is None:  # (an op: the number of the node it recorded, if it recorded one)
                    first = out[0] if type(out) is tuple and out else out
                    fn = getattr(first, "grad_fn", None)
                    ev.sequence_nr = -1 if fn is None else getattr(fn, "_seq", -1)
                if self.profile_memory:
                    ev.cpu_memory_usage += _nbytes(out)
        finally:
            self._stack.pop()
            ev.time_range_end = self._now()
            if self.sync and self._has_device:
                ev.device_time_total = ev.cpu_time_total
            for child in ev.cpu_children:  # (the compilation of an op or node carries its sequence number)
                if child.name.startswith(COMPILE_PREFIX):
                    child.sequence_nr = ev.sequence_nr
            if ev.cpu_parent is not None:
                ev.cpu_parent.cpu_memory_usage += ev.cpu_memory_usage
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
        ev = _event(name, end - seconds * 1e6, [], parent)
        ev.time_range_end = end
        self.function_events.append(ev)

    def _op(self, op, args, params, proceed):
        return self._range("aten::" + op.name, _shapes(args) if self.record_shapes else [],
                           lambda: proceed(op, args, params), None)

    def _node(self, node, grads, create_graph, proceed):
        return self._range(node.name(), _shapes(grads) if self.record_shapes else [],
                           lambda: proceed(node, grads, create_graph), getattr(node, "_seq", -1))

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
            # (in the order the ranges started, an outer one before those inside it, as PyTorch lists them)
            self.function_events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
        return False

    @property
    def self_cpu_time_total(self) -> float:
        """The host time recorded, in microseconds (each range counted once, without its children)."""
        return sum(e.self_cpu_time_total for e in self.function_events)

    def events(self) -> EventList:
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        return self.function_events.key_averages(group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        return self.function_events.total_average()

    def table(self, sort_by: str | None = "self_cpu_time_total", row_limit: int = 100, header: str | None = None,
              max_name_column_width: int = 55, **unused) -> str:
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, header=header,
                                         max_name_column_width=max_name_column_width)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        self.function_events.export_chrome_trace(path)


def kineto_available() -> bool:
    """False: tapeflow's profiler records its ranges itself, without PyTorch's Kineto library (`profile` accepts
    `use_kineto` and records the same either way).

    Example:
        >>> import tapeflow as tp
        >>> tp.autograd.profiler.kineto_available()
        False
    """
    return False


def _profiler_enabled() -> bool:
    """Whether a profile is recording (`torch.autograd._profiler_enabled`)."""
    return bool(_active)


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
        >>> [e.key for e in prof.events()][0]  # (listed in the order they started)
        'step'
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name

    def __enter__(self):
        self._open = []
        for p in _active:
            ev = _event(self.name, p._now(), [], p._stack[-1] if p._stack else None, is_user_annotation=True)
            p._stack.append(ev)
            self._open.append((p, ev))
        self._ann = jax.profiler.TraceAnnotation(self.name)
        self._ann.__enter__()
        return self

    def __exit__(self, *exc):
        self._ann.__exit__(*(exc or (None, None, None)))
        for p, ev in self._open:
            if p._stack and p._stack[-1] is ev:
                p._stack.pop()
            elif ev in p._stack:  # (closed while a range opened after it is still open)
                p._stack.remove(ev)
            ev.time_range_end = p._now()
            if ev.cpu_parent is not None:
                ev.cpu_parent.cpu_memory_usage += ev.cpu_memory_usage
            p.function_events.append(ev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name):
                return fn(*a, **k)
        return wrapper
