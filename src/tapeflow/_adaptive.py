"""Adaptive eager: eager ops recorded into a pending segment that runs as one cached XLA program.

With adaptive eager on, `dispatch` does not run an op at once: it records it into the thread's
segment and returns tensors holding `Pending` values. Their shapes and dtypes come from the op's
abstract evaluation (cached per op and input types), so a shape error still raises at the user's
line, and the tape is recorded as in eager mode (same nodes, sequence numbers, versions, hooks).
Reading a pending tensor's value (`item`, `numpy`, printing, `bool`, a backward pass, an op that
is not recorded) runs the segment: op by op the first two times its structure is seen (the second
sends it to a compiler thread), as one compiled program from the third on, so code whose structure
changes every step never pays for compilation and first steps do not wait for it.

A tensor holding a `Pending` value keeps its class: `Tensor._data` runs the segment when it reads one,
and the raw slot `Tensor._raw` is read without running anything (shape and dtype checks).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import sys
import threading
import weakref

import jax

from ._compilation_cache import COMPILER_THREAD, XLA_LOCK, _deferred, write_deferred
from ._device import _FORGET_ON_MOVE, default_jax_device
from ._state import state
from ._tensor import Pending, Tensor

try:
    from jax._src.core import trace_state_clean
except ImportError:  # pragma: no cover - a JAX without it: segments always run under compile-time evaluation
    def trace_state_clean() -> bool:
        return False

__all__ = ["Pending", "record", "run_pending", "resolve", "constant", "set_adaptive_eager", "is_adaptive_eager_enabled",
           "adaptive_eager_stats"]

MAX_OPS = 1024  # a longer segment runs at once (compile time grows with a program's size)
_ArrayImpl = type(jax.numpy.zeros(()))
_shapes: dict = {}  # (fn, *input avals) -> output metas
_stats = {"ops recorded": 0, "segments run": 0, "segments run op by op": 0, "programs compiled": 0}


class _Local(threading.local):
    segment = None  # the thread's segment (a new one once it has run)


_local = _Local()
_on = [os.environ.get("TAPEFLOW_ADAPTIVE_EAGER", "1").lower() not in ("0", "off", "false", "no")]


def set_adaptive_eager(enabled: bool) -> None:
    """Turn adaptive eager on or off (it is on unless `TAPEFLOW_ADAPTIVE_EAGER=0`).

    With it on, eager ops are recorded into segments that run as one cached XLA program each once
    their structure repeats; results are the same as op by op. Turn it off to run every op as it
    is called (for example to time single ops).

    Example:
        >>> import tapeflow as tp
        >>> tp.set_adaptive_eager(False); tp.is_adaptive_eager_enabled()
        False
        >>> tp.set_adaptive_eager(True)
    """
    from . import _dispatch

    _on[0] = bool(enabled)
    _dispatch._adaptive = _on[0]


@contextlib.contextmanager
def op_by_op():
    """Run every op as it is called inside the block (adaptive eager off; restored after)."""
    was = _on[0]
    set_adaptive_eager(False)
    try:
        yield
    finally:
        set_adaptive_eager(was)


def is_adaptive_eager_enabled() -> bool:
    """Whether eager ops are recorded into segments (see `set_adaptive_eager`).

    Example:
        >>> import tapeflow as tp
        >>> tp.is_adaptive_eager_enabled()
        True
    """
    return _on[0]


def adaptive_eager_stats() -> dict:
    """Counters of adaptive eager in this process: ops recorded, segments run (and of those, run op by op
    because their structure was new), programs compiled, and `program hits` (segments run as a program
    compiled before).

    Example:
        >>> import tapeflow as tp
        >>> sorted(tp.adaptive_eager_stats())
        ['ops recorded', 'program hits', 'programs compiled', 'segments run', 'segments run op by op']
    """
    s = dict(_stats)
    seg = _local.segment
    if seg is not None and not seg.done:
        s["ops recorded"] += len(seg.ops)  # (recorded ops are counted when their segment runs)
    s["program hits"] = s["segments run"] - s["segments run op by op"] - s["programs compiled"]
    return s


def _dead():
    return None


class _Segment:
    """The ops recorded on one thread since its last segment ran."""

    __slots__ = ("ops", "externals", "ext_ids", "ext_avals", "outs", "lock", "done")

    def __init__(self):
        self.ops, self.externals, self.ext_avals, self.outs = [], [], [], []
        self.ext_ids: dict = {}
        self.lock = threading.RLock()  # re-entered when a traced program records (it records nothing)
        self.done = False

    def run(self) -> None:
        """Compute every output still referenced: as a compiled program once the structure repeats."""
        if trace_state_clean():
            self._run()
            return
        # A value may be read inside a JAX trace (a staged function reading captured state): the segment's
        # inputs are concrete, and so must its results be, not ops staged into that trace.
        with jax.ensure_compile_time_eval():
            self._run()

    def _run(self) -> None:
        with self.lock:
            if self.done:
                return
            self.done = True
            live = tuple([i for i, r in enumerate(self.outs) if r() is not None])
            programs = _programs()
            key = (tuple(self.ops), tuple(self.ext_avals), live)
            slot = programs.slot(key)
            _stats["segments run"] += 1
            _stats["ops recorded"] += len(self.ops)
            if programs.ready(slot) and slot.program is None:
                slot.program = _Compiling()
                programs.traced(key)
                outs = [self.outs[i]() for i in live]
                donate = _donatable(self.externals, self.ext_avals, [o.aval for o in outs if o is not None])
                _compile_later(slot, self.ops, live, self.ext_avals, donate)
            program = slot.program
            if type(program) is _Compiling and slot.seen > 2:
                program.done.wait()  # from the third sighting on a structure always runs compiled
                program = slot.program
            fn = program.pick(self.externals) if type(program) is _Program and slot.failed is None else None
            if fn is not None:
                values = fn(*self.externals)
                if _deferred:  # (the compiler thread's programs, kept for the next run of the program)
                    write_deferred()
            else:  # a new structure, or its second sighting (its program compiles meanwhile)
                if type(program) is _Program and slot.failed is None and not program.asked:
                    program.asked = True  # an array to donate is held elsewhere: compile a plain variant
                    _compile_later(slot, self.ops, live, self.ext_avals, (), program)
                _stats["segments run op by op"] += 1
                values = _replay(self.ops, self.externals, live, call_tiered)
            for i, v in zip(live, values):
                p = self.outs[i]()
                if p is not None:
                    p.value, p.segment = v, None
            self.ops = self.externals = self.ext_avals = self.outs = self.ext_ids = None


def _replay(ops, externals, live, call=None) -> list:
    """The live outputs of the segment's `ops` on `externals`: each op run by `call(fn, args)` (the ops'
    programs one by one at their compilation tier), or called as it is (`call` None: traced into a program)."""
    vals: list = []
    for fn, refs in ops:
        args = [None if r is None else externals[-1 - r] if r < 0 else vals[r] for r in refs]
        out = fn(*args) if call is None else call(fn, args)
        if type(out) is tuple:
            vals.extend(out)
        else:
            vals.append(out)
    return [vals[i] for i in live]


# Tiered compilation. An op's program on a new input signature, run op by op (a structure's first sightings,
# the engine's node-by-node backward), is compiled with quicker settings on the CPU: XLA's plain elemental
# emitter and LLVM's -O1, which compile a new op in about half the time (a tanh ~85 -> ~30 ms, a max-pool
# backward ~380 -> ~160 ms) for code about as fast; -O0 would compile faster still, but its loops run up to 20x
# slower and its rounding differs visibly (a 0/0 became x/0). A signature run more than `TIER_UP` times is
# compiled again with full optimisation. Segment programs, staged code (`tp.compile`) and op-by-op mode
# (adaptive eager off) always compile fully. `TAPEFLOW_TIER_UP=0` turns the quick tier off.
TIER_UP = int(os.environ.get("TAPEFLOW_TIER_UP", "16"))
QUICK_OPTIONS = {"xla_backend_optimization_level": 1, "xla_cpu_use_fusion_emitters": False}
_runs: dict = {}  # (program, input avals) -> runs at the quick tier
_quick: dict = {}  # program -> its quick-tier variant
_tiering: list = []  # [whether programs compile for the CPU], found on first use


def call_tiered(fn, args: list):
    """`fn(*args)` for a jitted op program run op by op: at the quick compilation tier for a signature's first
    `TIER_UP` runs on the CPU, at full optimisation after (see above)."""
    if not _tiering:
        _tiering.append(default_jax_device().platform == "cpu")
    if not _tiering[0] or not trace_state_clean():  # (inside a JAX trace the program is inlined: no tier)
        return fn(*args)
    key = [fn]
    for a in args:
        if type(a) is _ArrayImpl:
            key.append(a.aval)
        elif a is None:
            key.append(None)
        else:  # a tracer (inside a user's JAX transformation), a NumPy array: as it is
            return fn(*args)
    key = tuple(key)
    n = _runs.get(key, 0)
    if n >= TIER_UP:
        return fn(*args)
    if len(_runs) > 50_000:
        _runs.clear()
    _runs[key] = n + 1
    quick = _quick.get(fn)
    if quick is None:
        if len(_quick) > 20_000:
            _quick.clear()
        quick = _quick[fn] = jax.jit(getattr(fn, "__wrapped__", fn), compiler_options=QUICK_OPTIONS)
    return quick(*args)


_FORGET_ON_MOVE.append(_tiering.clear)


class _Compiling:
    """A slot's program while the compiler thread works on it."""

    __slots__ = ("done",)

    def __init__(self):
        self.done = threading.Event()


class _Program:
    """A structure's compiled program. `donating` lets XLA write results into the buffers of the inputs at
    `donate`: arrays that, when the program was asked for, nothing but the segment held (what an optimizer's
    update replaces, a step's old gradients), with an output of their shape and dtype. A run donates only
    while that still holds (`pick`); otherwise it uses `plain`, compiled on the compiler thread the first
    time that happens (`asked`), and runs op by op until then."""

    __slots__ = ("donating", "donate", "plain", "asked")

    def __init__(self, jitted, donate):
        self.donating, self.donate = jitted, donate
        self.plain = None if donate else jitted
        self.asked = not donate

    def pick(self, externals):
        if self.donate and _alone(externals, self.donate):
            return self.donating
        return self.plain


def _refs(values: list, i: int) -> int:
    return sys.getrefcount(values[i])


_ALONE = _refs([object()], 0)  # what `_refs` reads for an object held by the list alone


def _alone(values: list, positions) -> bool:
    """Whether nothing but the list `values` holds the objects at `positions` (no tensor, alias, saved
    tensor or array the user took out can see a donated buffer)."""
    count = sys.getrefcount
    for i in positions:  # (`_refs` written out: this runs at every step, over every donated input)
        if count(values[i]) > _ALONE:
            return False
    return True


def _donatable(externals: list, avals: list, out_avals: list) -> tuple:
    """The positions of inputs that only the segment holds and whose buffers an output of the same shape
    and dtype can take (XLA warns about donated buffers it cannot use)."""
    free: dict = {}
    for a in out_avals:
        k = (a.shape, a.dtype)
        free[k] = free.get(k, 0) + 1
    donate = []
    for i, a in enumerate(avals):
        k = (a.shape, a.dtype)
        if free.get(k) and _refs(externals, i) <= _ALONE:
            free[k] -= 1
            donate.append(i)
    return tuple(donate)

_queue: queue.SimpleQueue = queue.SimpleQueue()
_compiler: list = []


def _compile_later(slot, ops, live, avals, donate, variant_of=None) -> None:
    """Compile the program of a repeated structure on the compiler thread; eager execution goes on meanwhile
    (a program's first steps are not held up by compilation). With `variant_of` (a `_Program`), compile its
    plain variant."""
    if not _compiler:
        worker = threading.Thread(target=_compile_loop, name=COMPILER_THREAD, daemon=True)
        worker.start()
        _compiler.append(worker)
    with _idle:
        _pending_compiles[0] += 1
    _queue.put((slot, ops, live, avals, donate, variant_of))


def _compile_loop() -> None:
    while True:
        slot, ops, live, avals, donate, variant_of = _queue.get()
        marker = slot.program
        if _closing:
            slot.failed = "interpreter shutting down"
            _queue_done(marker)
            continue
        try:
            jitted = jax.jit(_replayer(ops, live), donate_argnums=donate)
            with XLA_LOCK:  # (no cache entry is serialised meanwhile: see `_compilation_cache.XLA_LOCK`)
                jitted.lower(*[jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]).compile()
            # (its first call finds the compiled executable in JAX's caches)
            if variant_of is None:
                slot.program = _Program(jitted, donate)
            else:
                variant_of.plain = jitted
            _stats["programs compiled"] += 1
        except Exception as e:  # noqa: BLE001 - the structure keeps running op by op
            slot.failed = f"{type(e).__name__}: {e}"
        finally:
            _queue_done(marker)


_closing = False


@atexit.register
def _close() -> None:
    """At exit, drop the compilations not started and wait for the one under way (XLA must not be compiling
    while the interpreter shuts down)."""
    global _closing
    _closing = True
    wait_for_compiles(timeout=120)
    write_deferred(block=True)


def _queue_done(marker) -> None:
    if type(marker) is _Compiling:
        marker.done.set()
    with _idle:
        _pending_compiles[0] -= 1
        _idle.notify_all()


_idle = threading.Condition()
_pending_compiles = [0]


def wait_for_compiles(timeout: float | None = None) -> None:
    """Wait until the compiler thread has compiled every program asked for so far (for tests and timing)."""
    with _idle:
        _idle.wait_for(lambda: _pending_compiles[0] == 0, timeout)


def _replayer(ops, live):
    # A fresh function per structure: `jax.jit`s of one function share their traces by argument types.
    return lambda *externals: _replay(ops, externals, live)


_cache = []


def _programs():
    if not _cache:
        from ._staging.cache import Programs

        _cache.append(Programs(None, size=256))  # no re-trace warning: structures are the user's program
    return _cache[0]


def record(fn, arrays: list):
    """Record `fn(*arrays)` (a compiled op) into this thread's segment; return its `Pending` output(s), or
    None when it cannot be recorded (an input that is not a JAX array, e.g. a tracer)."""
    seg = _local.segment
    if seg is None or seg.done:
        seg = _local.segment = _Segment()
    with seg.lock:
        if seg.done:  # another thread ran it meanwhile
            return record(fn, arrays)
        refs, avals = [], []
        ext_ids = seg.ext_ids
        for a in arrays:
            t = type(a)
            if t is Pending:
                if a.segment is seg:
                    refs.append(a.index)
                    avals.append(a.aval)
                    continue
                if a.segment is not None:  # pending in another thread's segment: see below
                    break
                a, t = a.value, type(a.value)  # its segment has run
            if t is _ArrayImpl:
                i = ext_ids.get(id(a))
                if i is None:
                    if a._committed and _elsewhere(a):
                        return None  # (runs where its inputs are, as op by op: a segment runs on one device)
                    i = ext_ids[id(a)] = len(seg.externals)
                    seg.externals.append(a)
                    seg.ext_avals.append(a.aval)
                refs.append(-1 - i)
                avals.append(seg.ext_avals[i])
            elif a is None:
                refs.append(None)
                avals.append(None)
            else:
                return None
        else:
            metas = _shapes.get((fn, *avals))
            if metas is None:
                metas = _infer(fn, avals)
            outs = seg.outs
            if type(metas) is tuple:
                out = tuple(_pending(seg, m) if m is not None else outs.append(_dead) for m in metas)
            else:  # (one output: `_pending` written out)
                out = _new_pending(Pending)
                out.shape, out.dtype, out.aval, out.segment, out.index, out.value = \
                    metas.shape, metas.dtype, metas, seg, len(outs), None
                outs.append(_weakref(out))
            ops = seg.ops
            ops.append((fn, tuple(refs)))
            if len(ops) >= MAX_OPS:
                seg.run()  # (a longer segment would take long to compile)
            return out
    # A value pending in another thread's segment: run that segment, outside this one's lock.
    return record(fn, [a.get() if type(a) is Pending and a.segment is not seg else a for a in arrays])


def _elsewhere(a) -> bool:
    """Whether the array `a` is committed away from the default device, where segments run: a host tensor
    (`.cpu()`, `device="cpu"`) on a GPU machine. An op reading one runs op by op, so JAX's placement rules apply
    as without adaptive eager (a program of the segment cannot take inputs on two devices)."""
    return default_jax_device() not in a.sharding.device_set


def run_pending() -> None:
    """Run this thread's segment now (the end of a backward pass: a training step's structure then repeats
    from one step to the next)."""
    seg = _local.segment
    if seg is not None and not seg.done:
        seg.run()


_new_pending = object.__new__
_weakref = weakref.ref


def _pending(seg, aval):
    p = _new_pending(Pending)
    p.shape, p.dtype, p.aval, p.segment, p.index, p.value = aval.shape, aval.dtype, aval, seg, len(seg.outs), None
    seg.outs.append(_weakref(p))
    return p


def _infer(fn, avals):
    """The output avals of `fn` on inputs of `avals` (raises the op's own error on bad shapes)."""
    specs = [None if a is None else jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
    out = jax.eval_shape(fn, *specs)
    as_aval = lambda s: None if s is None else jax.core.ShapedArray(s.shape, s.dtype, weak_type=s.weak_type)  # noqa: E731
    metas = tuple(map(as_aval, out)) if isinstance(out, tuple) else as_aval(out)
    if len(_shapes) > 100_000:
        _shapes.clear()
    _shapes[(fn, *avals)] = metas
    return metas


def resolve(x):
    """`x` (an array, a `Pending`, or a tuple of them, as a node's saved output) with pending values run."""
    if type(x) is Pending:
        return x.get()
    if type(x) is tuple:
        return tuple(a.get() if type(a) is Pending else a for a in x)
    return x


def constant(fn) -> Tensor:
    """A new tensor holding `fn()`, a compiled program without inputs: recorded into this thread's segment
    when adaptive eager is on (no JAX call of its own, nothing to wait for), run at once otherwise."""
    if _on[0] and not state.anomaly and trace_state_clean():
        out = record(fn, [])
        if out is not None:
            return Tensor._wrap(out)
    return Tensor._wrap(fn())
