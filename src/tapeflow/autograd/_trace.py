"""Run a tapeflow function as a pure JAX function on arrays, and cache JAX
programs built from it.

`pure(func)` wraps arrays (or tracers) into Tensors, calls `func`, and
unwraps the outputs. `Cache` compiles transforms of such a function once per
(function, transform, input shapes/dtypes, captured state): tensors the
function reads but does not take as arguments (closure variables, module
parameters) are found during a first, abstract trace by a dispatch
interceptor and become explicit inputs of the compiled program, so later
calls see their current values and never a stale constant.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable

import jax

from .. import _dispatch
from .._state import state
from .._tensor import Tensor

__all__ = ["pure", "Cache", "Unsupported", "signature"]


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
    _dispatch.interceptors.append(rec)
    _dispatch.inplace_listeners.append(rec.on_inplace)
    try:
        jax.eval_shape(f, *arrays)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
            jax.errors.TracerArrayConversionError, RuntimeError) as e:
        raise Unsupported(str(e)) from e
    finally:
        _dispatch.interceptors.remove(rec)
        _dispatch.inplace_listeners.remove(rec.on_inplace)
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


class Cache:
    """Compiled JAX programs per function.

    `run(func, kind, build, arrays, extra)` returns `program(cap_arrays,
    *arrays, *extra)` where `program = jax.jit(build(g))` and `g(cap, *xs)` is
    the pure function with captured state lifted. `kind` (hashable) names the
    transform and its static options.
    """

    def __init__(self):
        self._by_func: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def run(self, func: Callable, kind, build: Callable, arrays: tuple, extra: tuple = (), what: str = ""):
        if not _trace_state_clean() or any(isinstance(a, jax.core.Tracer) for a in arrays + extra):
            # Inside an enclosing JAX transform: apply the transform inline, it
            # becomes part of the enclosing program (nothing to cache).
            f = _no_grad(pure(func, what))
            return build(lambda cap, *xs: f(*xs))([], *arrays, *extra)
        owner = getattr(func, "__func__", func)
        try:
            per = self._by_func.get(owner)
        except TypeError:
            raise Unsupported("the function cannot be weakly referenced") from None
        if per is None:
            per = self._by_func[owner] = {}
        key = (id(getattr(func, "__self__", None)), _closure_key(func), signature(arrays), state.grad_enabled)
        entry = per.get(key)
        captured = entry.current() if entry is not None else None
        if captured is None:
            f = pure(func, what)
            prev = state.grad_enabled
            state.grad_enabled = False
            try:
                captured = _discover(f, arrays)
            finally:
                state.grad_enabled = prev
            entry = per[key] = _Entry(captured)
        pkey = (kind, signature(extra))
        prog = entry.programs.get(pkey)
        if prog is None:
            prog = entry.programs[pkey] = jax.jit(build(lifted(_no_grad(pure(func, what)), captured)))
        return prog([t._data for t in captured], *arrays, *extra)


try:
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # pragma: no cover - a JAX without it: rely on the tracer check of the inputs
    def _trace_state_clean() -> bool:
        return True


def _no_grad(f: Callable) -> Callable:
    def g(*xs):
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            return f(*xs)
        finally:
            state.grad_enabled = prev

    return g
