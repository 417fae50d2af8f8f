"""Programs the user did not ask for: `tp.func` and `autograd.functional` cache their transforms here.

`Implicit.run(func, kind, body, args)` runs `body(func, *args)` (a JAX transform of `func`) as a
`Staged` program kept per `(func, kind)`, `func` held weakly. It returns `MISS` where the caller runs
its uncached path (inside an enclosing JAX transform; a key's first call) and `FAILED` for a key whose
trace failed (data-dependent Python, host reads, a transform that does not apply).
"""

from __future__ import annotations

import contextlib
import types
import weakref

import jax

from .. import _dispatch, _factories
from .._state import state
from .boundary import primal_of, to_arrays
from .program import Staged, Unkeyable, trace_state_clean
from .state import roots_of

__all__ = ["Implicit", "MISS", "FAILED", "uncached"]

MISS = object()  # run the uncached path
FAILED = object()  # run the uncached path: a trace of this key failed, and the transform would fail the same way


def _miss(failed, args, kwargs):
    return FAILED if failed else MISS


class Implicit:
    """Staged transforms of user functions, by function (weakly) and kind."""

    def __init__(self, name: str):
        self.name = name
        self._by_func: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def stages(self, func) -> list:
        """The staged programs kept for `func` (for tests and introspection)."""
        return list(self._by_func.get(getattr(func, "__func__", func), {}).values())

    def run(self, func, kind, body, args: tuple, kwargs: dict | None = None):
        if not trace_state_clean():
            return MISS
        try:
            per = self._by_func.setdefault(getattr(func, "__func__", func), {})
            key = (id(getattr(func, "__self__", None)), kind)
            staged = per.get(key)
        except TypeError:  # a function that cannot be weakly referenced, or an unhashable kind
            return MISS
        if staged is None:
            staged = per[key] = _stage(func, body, self.name)
        try:
            return staged(*args, **(kwargs or {}))
        except Unkeyable:
            return MISS


def _stage(func, body, name: str) -> Staged:
    ref = weakref.WeakMethod(func) if isinstance(func, types.MethodType) else weakref.ref(func)

    def fn(*args, **kwargs):
        f = ref()
        if f is None:
            raise ReferenceError("the function was freed")
        out = to_arrays(body(f, *args, **kwargs))
        if not all(isinstance(o, (jax.Array, jax.core.Tracer)) for o in jax.tree.leaves(out)):
            # A program returns arrays only: a Python value in the output (aux) would come back as one.
            raise TypeError("the output holds values that are not tensors")
        return out

    def roots():
        f = ref()
        return [] if f is None else roots_of(f)

    return Staged(fn, name=f"{name} of {getattr(func, '__qualname__', 'a function')}", fallback=_miss, roots=roots)


@contextlib.contextmanager
def uncached():
    """Around an uncached transform: in-place writes it makes to tensors that outlive it (captured state)
    would keep its tracers. Each such tensor gets the value eager code computes (the tracer's primal)
    with its history as before, as a staged program writes back; under a transform with no
    single value (`vmap`) the write is undone and an error says so. Inside another trace, that trace's
    owner handles writes."""
    if not trace_state_clean():
        yield
        return
    written: dict = {}

    def listen(x, result, old):
        for t, data, *history in old:
            if id(t) not in written and not isinstance(data, jax.core.Tracer):
                written[id(t)] = (weakref.ref(t), data, history)

    state.inplace_listeners.append(listen)
    outer, _factories.draw_tape[0] = _factories.draw_tape[0], _factories.DrawTape((), [])  # (draws: on the host)
    try:
        yield
    finally:
        _factories.draw_tape[0] = outer
        state.inplace_listeners.remove(listen)
        _keep_eager_values(written)


def _keep_eager_values(written: dict) -> None:
    kept, undone = [], []
    for ref, data, history in written.values():
        t = ref()
        if t is None or not isinstance(t._data, jax.core.Tracer):
            continue
        value = primal_of(t._data)
        traced = isinstance(value, jax.core.Tracer)
        (undone if traced else kept).append(t)
        t._raw = data if traced else value
        t.grad_fn, t._output_nr, t._requires_grad = history
    for t in kept + undone:
        if t._base is None and t._storage is not None:
            _dispatch._refresh_views(t._storage, t, t)
    if undone:
        t = next((t for t in undone if t._base is None), undone[0])
        raise RuntimeError(f"vmap: the function modified a tensor it captures (shape {list(t.shape)}) in place with a "
                           "value that is vmapped over, which has no single value to keep; the tensor keeps its old "
                           "value. Pass the tensor as an argument and return its new value instead.")
