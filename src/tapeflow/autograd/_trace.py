"""Run a tapeflow function as a pure JAX function on arrays, and cache JAX
programs built from it.

`pure(func)` wraps arrays (or tracers) into Tensors, calls `func`, and
unwraps the outputs. `Cache` compiles transforms of such a function once per
(function, transform, input shapes/dtypes, captured state): tensors the
function reads but does not take as arguments (closure variables, module
parameters) are found during a first, abstract trace by a dispatch
interceptor and become explicit inputs of the compiled program, so later
calls see their current values and never a stale constant.

`Cache(robust=True, warmup=1)` (used by `tapeflow.func`) adds, for callers
whose arguments are pytrees: a function of arrays given by the caller (`fn`)
with the rest of its inputs described by a hashable `static`; lifting of
every tensor reachable from the function (not only those seen as op
arguments), so that `.numpy()` / `.tolist()` on captured state fails the
trace instead of being baked in; re-tracing when a module's training flag
changes; a compiled program that keeps captured tensors only weakly; one
uncached call per new key before compiling; and a remembered `Unsupported`
for keys whose trace failed (random draws, data-dependent Python, errors).
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable

import jax

from .._staging import jax_region
from .._state import state
from .._tensor import Tensor

__all__ = ["pure", "Cache", "Unsupported", "signature", "trace_state_clean"]


class Unsupported(Exception):
    """The function cannot be traced (data-dependent Python): use the tape."""


def _unwrap_outputs(out, what: str):
    if isinstance(out, Tensor):
        return out._data
    if isinstance(out, (tuple, list)):
        res = []
        for i, o in enumerate(out):
            if not isinstance(o, Tensor):
                raise TypeError(f"The outputs of the user-provided function given to {what} must be either a "
                                f"Tensor or a tuple of Tensors but the given outputs of the user-provided "
                                f"function has an output of type {type(o).__name__} at index {i}.")
            res.append(o._data)
        return tuple(res)
    raise TypeError(f"The outputs of the user-provided function given to {what} must be either a Tensor or a "
                    f"tuple of Tensors but the given outputs of the user-provided function has type "
                    f"{type(out).__name__}.")


def pure(func: Callable, what: str = "the transform") -> Callable:
    """`func` on Tensors -> a function on arrays returning an array or a tuple of arrays."""

    def f(*arrays):
        return _unwrap_outputs(func(*(Tensor._make(a, None, 0, False) for a in arrays)), what)

    return f


def _weak_callable(func: Callable) -> Callable:
    """`func`, held weakly: a compiled program must not keep the function it was built from alive
    (the cache is keyed weakly by that function, so a strong reference would never be released)."""
    if hasattr(func, "__self__") and hasattr(func, "__func__"):
        ref = weakref.WeakMethod(func)
    else:
        try:
            ref = weakref.ref(func)
        except TypeError:
            return func

    def call(*args):
        f = ref()
        if f is None:
            raise Unsupported("the function was freed")
        return f(*args)

    return call


def signature(arrays) -> tuple:
    return tuple((a.shape, a.dtype) for a in arrays)


# -- captured-state discovery ---------------------------------------------------------------
class _Discover:
    """Dispatch interceptor recording Tensors with concrete data seen as op arguments."""

    def __init__(self):
        self.seen: dict = {}
        self.writes_state = False

    def on_inplace(self, x, result):
        if id(x) in self.seen or (x._base is not None and id(x._base) in self.seen):
            self.writes_state = True

    def __call__(self, op, args, params, proceed):
        for a in args:
            if isinstance(a, Tensor) and not isinstance(a._data, jax.core.Tracer) and id(a) not in self.seen:
                self.seen[id(a)] = (a, a._data)
        return proceed(op, args, params)


def _discover(f: Callable, arrays: tuple) -> list[Tensor]:
    """Trace `f` abstractly; return the captured tensors that outlive the call."""
    rec = _Discover()

    from ._function_jax import traced_applies

    functions_before = traced_applies[0]
    state.interceptors.append(rec)
    state.inplace_listeners.append(rec.on_inplace)
    try:
        jax.eval_shape(f, *arrays)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
            jax.errors.TracerArrayConversionError, RuntimeError) as e:
        raise Unsupported(str(e)) from e
    finally:
        state.interceptors.remove(rec)
        state.inplace_listeners.remove(rec.on_inplace)
        # An in-place write to captured state during the abstract trace left a tracer behind: undo it.
        for t, data in rec.seen.values():
            t._data = data
    if traced_applies[0] != functions_before:
        # Custom Functions carry hand-written backward rules (and JAX has no forward mode for
        # them): the tape applies those rules exactly, in every strategy.
        raise Unsupported("the function applies custom autograd Functions")
    if rec.writes_state:
        # Eager semantics keep such writes (running statistics, counters); a compiled
        # program would drop them, so this function runs on the tape.
        raise Unsupported("the function writes in place to tensors it does not take as arguments")
    refs = [weakref.ref(t) for t, _ in rec.seen.values()]
    rec.seen.clear()
    # Temporaries made inside the function (tp.ones(...), constants) are gone by now.
    return [t for t in (r() for r in refs) if t is not None]


def lifted(f: Callable, captured: list[Tensor]) -> Callable:
    """`g(cap_arrays, *xs)`: `f(*xs)` with the captured tensors' data replaced by `cap_arrays`."""

    def g(cap_arrays, *xs):
        old = [t._data for t in captured]
        for t, a in zip(captured, cap_arrays):
            t._data = a
        try:
            return f(*xs)
        finally:
            for t, a in zip(captured, old):
                t._data = a

    return g


_PLAIN = (int, float, complex, str, bool, type(None))


def _closure_key(func) -> tuple:
    """What the function can see, cheaply: plain values it closes over, defaults to or reads as
    globals (by value), tensors among them (by identity), and the parameters and buffers of
    modules among them (by identity). A change re-traces, so rebinding `w = new_tensor` or
    `model.weight = Parameter(...)` is never served from a stale program."""
    fn = getattr(func, "__func__", func)
    objs = []
    owner = getattr(func, "__self__", None)
    if owner is not None:
        objs.append(owner)
    if not isinstance(fn, types.FunctionType):
        objs.append(fn)  # a callable object, e.g. a Module
    else:
        for cell in fn.__closure__ or ():
            try:
                objs.append(cell.cell_contents)
            except ValueError:  # an empty cell
                objs.append(None)
        objs.extend(fn.__defaults__ or ())
        g = fn.__globals__
        objs.extend(g[n] for n in fn.__code__.co_names if n in g)
    return tuple(_see(o) for o in objs)


_OPAQUE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)


def _see(o):
    if isinstance(o, _PLAIN):
        return o
    if isinstance(o, Tensor):
        return id(o)
    if isinstance(o, _OPAQUE):
        return type(o)
    if hasattr(o, "named_parameters") and hasattr(o, "named_buffers"):
        try:
            return (id(o), *(id(t) for _, t in o.named_parameters()), *(id(t) for _, t in o.named_buffers()))
        except TypeError:
            return id(o)
    return type(o)


class _Entry:
    __slots__ = ("refs", "sig", "programs")

    def __init__(self, captured):
        self.refs = [weakref.ref(t) for t in captured]
        self.sig = signature(t._data for t in captured)
        self.programs: dict = {}

    def current(self):
        """The captured tensors, or None when one was freed or changed shape/dtype."""
        ts = [r() for r in self.refs]
        if any(t is None for t in ts):
            return None
        if signature(t._data for t in ts) != self.sig:
            return None
        return ts


class _RobustEntry(_Entry):
    """An entry that also goes stale when a module the function can reach changes its training flag."""

    __slots__ = ("mods", "flags", "rebuilds")

    def __init__(self, captured, modules, rebuilds: int = 0):
        super().__init__(captured)
        self.mods = [weakref.ref(m) for m in modules]
        self.flags = _training_flags(modules)
        self.rebuilds = rebuilds  # how many times this key's entry went stale and was traced again

    def current(self):
        ts = super().current()
        if ts is None:
            return None
        mods = [r() for r in self.mods]
        if any(m is None for m in mods) or _training_flags(mods) != self.flags:
            return None
        return ts


def _training_flags(modules) -> tuple:
    from ..interop._discovery import hyperparameters

    return hyperparameters(modules, [])[0]


_FAILED = "failed"  # a key whose discovery or trace failed: always `Unsupported`
_MAX_KEYS = 64  # per function, in robust mode: beyond this the function's entries are dropped
_MAX_REBUILDS = 8  # a key whose entry keeps going stale (captured tensors replaced every call) runs uncached


def _discover_robust(f: Callable, arrays: tuple, func: Callable, objects) -> tuple[list[Tensor], list]:
    """`_discover`, refusing random draws, plus every tensor reachable from `func` (not optimizer
    state) and the modules among what `func` reaches and `objects` (the call's arguments)."""
    from .._factories import default_generator
    from ..interop._discovery import collect, roots_of
    from ..interop.pytree import optimizer_params

    key = default_generator.key
    try:
        seen = _discover(f, arrays)
    except Unsupported:
        raise
    except Exception as e:  # the function's own error: the caller's uncached path reports it
        raise Unsupported(f"{type(e).__name__}: {e}") from e
    finally:
        drew = default_generator.key is not key
        default_generator.key = key
    if drew:
        # A compiled program would replay the same draws on every call.
        raise Unsupported("the function draws random numbers")
    found: dict = {}
    modules: list = []
    optimizers: list = []
    collect(roots_of(func), found, modules, optimizers)
    collect(objects, {}, modules, [])
    skip = {id(t) for t in seen}
    for opt in optimizers:
        for p in optimizer_params(opt):
            skip.update(id(v) for v in opt.state.get(p, {}).values() if isinstance(v, Tensor))
    return seen + [t for i, t in found.items() if i not in skip], modules


def lifted_weak(f: Callable, captured: list[Tensor]) -> Callable:
    """`lifted`, holding the captured tensors weakly (a compiled program does not keep them alive)."""
    from .._factories import default_generator

    refs = [weakref.ref(t) for t in captured]

    def g(cap_arrays, *xs):
        ts = [r() for r in refs]
        if any(t is None for t in ts):
            raise Unsupported("a captured tensor was freed")
        key = default_generator.key
        try:
            return lifted(f, ts)(cap_arrays, *xs)
        finally:
            if default_generator.key is not key:  # a draw while tracing: never leave a tracer as the key
                default_generator.key = key
                raise Unsupported("the function draws random numbers")

    return g


class Cache:
    """Compiled JAX programs per function.

    `run(func, kind, build, arrays, extra)` returns `program(cap_arrays,
    *arrays, *extra)` where `program = jax.jit(build(g))` and `g(cap, *xs)` is
    the pure function with captured state lifted. `kind` (hashable) names the
    transform and its static options.

    With `robust=True` (see the module docstring) and `warmup=n`, the first
    `n` calls of a new key raise `Unsupported` without tracing, so that
    functions called once are not compiled; the caller runs its uncached path.
    """

    def __init__(self, *, robust: bool = False, warmup: int = 0):
        self._by_func: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.robust = robust
        self.warmup = warmup

    def run(self, func: Callable, kind, build: Callable, arrays: tuple, extra: tuple = (), what: str = "", *,
            fn: Callable | None = None, static=(), objects=()):
        """Run the program for `func` on `arrays` and `extra`.

        `fn`: the function of arrays to trace instead of `pure(func, what)`; `static`
        (hashable): everything else it depends on, part of the key under which
        captured tensors are found; `objects`: the call's arguments, searched for
        modules whose training flags the trace bakes in (robust mode).
        """
        if not _trace_state_clean() or any(isinstance(a, jax.core.Tracer) for a in arrays + extra):
            # Inside an enclosing JAX transform: apply the transform inline, it
            # becomes part of the enclosing program (nothing to cache).
            f = _no_grad(fn if fn is not None else pure(func, what))
            return build(lambda cap, *xs: f(*xs))([], *arrays, *extra)
        owner = getattr(func, "__func__", func)
        try:
            per = self._by_func.get(owner)
        except TypeError:
            raise Unsupported("the function cannot be weakly referenced") from None
        if per is None:
            per = self._by_func[owner] = {}
        key = (id(getattr(func, "__self__", None)), _closure_key(func), signature(arrays), state.grad_enabled, static)
        entry = per.get(key)
        if self.robust:
            if entry is None and len(per) >= _MAX_KEYS:
                per.clear()
            if entry is _FAILED:
                raise Unsupported("an earlier trace of this function with these inputs failed")
        if self.warmup and (entry is None or isinstance(entry, int)):
            calls = entry or 0
            if calls < self.warmup:
                per[key] = calls + 1
                raise Unsupported("not compiled before its next call")
            entry = None
        captured = entry.current() if entry is not None else None
        if captured is None:
            rebuilds = 0
            if self.robust and entry is not None:
                rebuilds = entry.rebuilds + 1
                if rebuilds > _MAX_REBUILDS:
                    per[key] = _FAILED
                    raise Unsupported("the function's captured state keeps changing identity, shape or dtype")
            f = fn if fn is not None else pure(func, what)
            with jax_region(record=False):
                if self.robust:
                    try:
                        captured, modules = _discover_robust(f, arrays, func, objects)
                    except Unsupported:
                        per[key] = _FAILED
                        raise
                else:
                    captured = _discover(f, arrays)
            entry = per[key] = _RobustEntry(captured, modules, rebuilds) if self.robust else _Entry(captured)
        pkey = (kind, signature(extra))
        prog = entry.programs.get(pkey)
        if prog is None:
            f = _no_grad(fn if fn is not None else pure(_weak_callable(func), what))
            if not self.robust:
                prog = entry.programs[pkey] = jax.jit(build(lifted(f, captured)))
                return prog([t._data for t in captured], *arrays, *extra)
            prog = jax.jit(build(lifted_weak(f, captured)))
            try:
                out = prog([t._data for t in captured], *arrays, *extra)
            except Exception as e:  # tracing failed (data-dependent Python on captured state, ...)
                per[key] = _FAILED
                raise Unsupported(f"{type(e).__name__}: {e}") from e
            entry.programs[pkey] = prog
            return out
        return prog([t._data for t in captured], *arrays, *extra)


try:
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # pragma: no cover - a JAX without it: rely on the tracer check of the inputs
    def _trace_state_clean() -> bool:
        return True


def trace_state_clean() -> bool:
    """True outside every JAX transform (nothing is being traced)."""
    return _trace_state_clean()


def _no_grad(f: Callable) -> Callable:
    """`f` with the tape off (JAX differentiates it) and the caller's grad mode kept out."""
    def g(*xs):
        with jax_region(record=False):
            return f(*xs)

    return g
