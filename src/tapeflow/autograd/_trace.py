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

    def __call__(self, op, args, params, proceed):
        for a in args:
            if isinstance(a, Tensor) and not isinstance(a._data, jax.core.Tracer) and id(a) not in self.seen:
                self.seen[id(a)] = a
        return proceed(op, args, params)


def _discover(f: Callable, arrays: tuple) -> list[Tensor]:
    """Trace `f` abstractly; return the captured tensors that outlive the call."""
    rec = _Discover()

    _dispatch.interceptors.append(rec)
    try:
        jax.eval_shape(f, *arrays)
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
            jax.errors.TracerArrayConversionError, RuntimeError) as e:
        raise Unsupported(str(e)) from e
    finally:
        _dispatch.interceptors.remove(rec)
    refs = [weakref.ref(t) for t in rec.seen.values()]
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


def _closure_key(func) -> tuple:
    """Hashable non-tensor values the function closes over or defaults to (changing them re-traces)."""
    fn = getattr(func, "__func__", func)
    vals = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        vals.append(v if isinstance(v, (int, float, complex, str, bool, type(None))) else type(v))
    for v in getattr(fn, "__defaults__", None) or ():
        vals.append(v if isinstance(v, (int, float, complex, str, bool, type(None))) else type(v))
    return tuple(vals)


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
