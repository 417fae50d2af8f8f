"""`tp.compile`: one XLA program for an eager function, with eager semantics kept.

The function runs once under `jax.jit` with every Tensor it touches holding a
tracer; the tape, `.backward()` and optimizer updates run on those tracers
and JAX records the whole step. State the function reads without taking it
as an argument (parameters, buffers, `.grad`s, optimizer state, the global
RNG key) is *lifted*: its current arrays are passed in as inputs, the final
arrays come back as outputs, and they are written into the same Tensor
objects after each call. A call whose lifted state differs in set, shape,
dtype, grad presence, `requires_grad`, module training flags or optimizer
hyperparameters (other than learning rates, which are program inputs) traces
again; otherwise the cached program runs.
"""

from __future__ import annotations

import functools
import warnings
import weakref

import jax
import numpy as np

from .. import _dispatch, _factories
from .._state import state as _mode
from .._tensor import Tensor
from . import _discovery
from .pytree import module_base, optimizer_base

__all__ = ["compile", "CompiledFunction"]

_Tracer = jax.core.Tracer
_MAX_RETRACES_WARNING = 16


class _NewState(Exception):
    """Raised inside a trace when a tensor that must be lifted was not known beforehand."""

    def __init__(self, tensors):
        super().__init__("new state discovered")
        self.tensors = tensors


def _snapshot(t: Tensor) -> tuple:
    g = t.grad
    return (t, t._data, g, None if g is None else g._data, t.grad_fn, t._output_nr, t._requires_grad)


def _restore(snap: tuple) -> None:
    t, data, g, gdata, grad_fn, output_nr, requires_grad = snap
    t._data = data
    t.grad = g
    if g is not None:
        g._data = gdata
    t.grad_fn, t._output_nr, t._requires_grad = grad_fn, output_nr, requires_grad


class _Entry:
    """One traced program and what is needed to call it and write its results back."""

    __slots__ = ("jitted", "out_spec", "created")

    def __init__(self, jitted):
        self.jitted = jitted
        self.out_spec = None
        self.created = ()


class CompiledFunction:
    """An eager tapeflow function compiled to one XLA program per state/argument signature.

    Built by `tapeflow.compile`; call it like the original function.
    """

    def __init__(self, fn, *, donate_state: bool = False):
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.donate_state = donate_state
        self._extra = weakref.WeakValueDictionary()  # id -> Tensor found only while tracing
        self._cache: dict = {}
        self._ctx = None
        self.traces = 0

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        # One compiled function per instance (each has its own state), dropped with the instance.
        bound = self.__dict__.setdefault("_bound", weakref.WeakKeyDictionary())
        try:
            cf = bound.get(obj)
        except TypeError:  # unhashable or not weakly referenceable: compile per access
            return CompiledFunction(self.fn.__get__(obj, objtype), donate_state=self.donate_state)
        if cf is None:
            cf = bound[obj] = CompiledFunction(_discovery.WeakMethod(self.fn, obj), donate_state=self.donate_state)
        return cf

    # -- a call ---------------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        for attempt in range(2):
            try:
                return self._call(args, kwargs, allow_new_state=attempt == 0)
            except _NewState as e:
                for t in e.tensors:
                    self._extra[id(t)] = t
        raise AssertionError("unreachable")

    def _call(self, args, kwargs, allow_new_state):
        leaves, in_tree, arg_tensors, arg_arrays, spec = _split_arguments(args, kwargs)
        lifted, modules, optimizers, slots = self._lifted_state(leaves, arg_tensors)
        gen = _factories.default_generator
        key = (in_tree, spec,
               tuple((id(t), t._data.shape, t._data.dtype, t._requires_grad, _grad_spec(t)) for t in lifted),
               (gen.key.shape, gen.key.dtype), _discovery.hyperparameters(modules, optimizers),
               _mode.grad_enabled, _mode.anomaly)
        entry = self._entry(key)
        tensors = arg_tensors + lifted
        groups = _discovery.rate_groups(optimizers)
        self._ctx = (leaves, in_tree, tensors, len(arg_tensors), slots, groups, entry, allow_new_state)
        inputs = ([t._data for t in tensors], [None if t.grad is None else t.grad._data for t in tensors],
                  arg_arrays, gen.key, [float(g["lr"]) for g in groups])
        try:
            outs, datas, grads, created, new_key, new_rates = entry.jitted(*inputs)
        except BaseException:
            if entry.out_spec is None:  # the trace did not complete: forget it
                self._cache.pop(key, None)
                self.traces -= 1
            raise
        finally:
            self._ctx = None
        _write_back(tensors, datas, grads)
        for t, d in zip(entry.created, created):
            t._data = d
        gen.key = new_key
        for g, r in zip(groups, new_rates):
            if r is not None:  # the function itself changed the learning rate
                g["lr"] = float(r)
        return _rebuild_outputs(entry.out_spec, outs)

    def _lifted_state(self, leaves, arg_tensors):
        """Tensors to lift (in a stable order), the modules and optimizers met, and where tensors are stored."""
        found: dict = {}
        modules: list = []
        optimizers: list = []
        slots: dict = {}
        _discovery.collect([*_discovery.roots_of(self.fn), *leaves], found, modules, optimizers, slots)
        for k, t in list(self._extra.items()):
            found.setdefault(k, t)
        for t in arg_tensors:
            found.pop(id(t), None)
        return list(found.values()), modules, optimizers, slots

    def _entry(self, key) -> _Entry:
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = _Entry(self._make_jitted())
            self.traces += 1
            if self.traces == _MAX_RETRACES_WARNING:
                warnings.warn(f"tp.compile: {getattr(self.fn, '__name__', 'function')} has been traced "
                              f"{self.traces} times. A trace is needed whenever the set, shapes or dtypes of the "
                              "state it touches change, or a hyperparameter/training flag changes; keep them "
                              "fixed between calls to reuse the compiled program.", stacklevel=4)
        return entry

    def _make_jitted(self):
        donate = (0, 1) if self.donate_state else ()

        # A fresh function per signature: JAX shares its trace cache between `jax.jit`s of equal
        # functions (bound methods compare equal), and each signature must get its own trace.
        def traced(datas, grads, arrays, rng, rates):
            return self._traced(datas, grads, arrays, rng, rates)

        return jax.jit(traced, donate_argnums=donate)

    # -- what runs under jax.jit -------------------------------------------------------------------------------
    def _traced(self, datas, grads, arrays, rng, rates):
        leaves, in_tree, tensors, n_args, slots, groups, entry, allow_new_state = self._ctx
        old_rates = [g["lr"] for g in groups]
        rate_tensors = [Tensor._wrap(r) for r in rates]
        known = {id(t) for t in tensors}
        snaps = [_snapshot(t) for t in tensors]
        placed = [(c, k, t) for t in tensors for c, k in slots.get(id(t), ())]
        gen = _factories.default_generator
        old_key = gen.key
        seen: dict = {}
        watch = functools.partial(_watch, known, seen, allow_new_state)
        try:
            for t, d, g in zip(tensors, datas, grads):
                t._data = d
                if g is not None:
                    t.grad._data = g
            gen.key = rng
            for g, r in zip(groups, rate_tensors):
                g["lr"] = r  # a traced 0-d tensor: learning-rate schedules reuse the program
            it = iter(arrays)
            tensor_it = iter(tensors[:n_args])
            call_leaves = [next(tensor_it) if isinstance(x, Tensor) else
                           next(it) if isinstance(x, (jax.Array, np.ndarray)) else x for x in leaves]
            args, kwargs = jax.tree.unflatten(in_tree, call_leaves)
            _dispatch.interceptors.append(watch)
            try:
                out = self.fn(*args, **kwargs)
            finally:
                _dispatch.interceptors.remove(watch)
            written = [s[0] for s in seen.values() if s[0]._data is not s[1] and isinstance(s[0]._data, _Tracer)]
            if written and allow_new_state:
                raise _NewState(written)
            entry.out_spec, out_arrays = _flatten_outputs(out)
            new_datas = _final_values(tensors, placed)
            new_grads = [None if t.grad is None else t.grad._data for t in tensors]
            entry.created = tuple(_created_state(known, [*_discovery.roots_of(self.fn), *leaves]))
            created = [t._data for t in entry.created]
            new_key = gen.key
            new_rates = [None if g["lr"] is r else getattr(g["lr"], "_data", g["lr"])
                         for g, r in zip(groups, rate_tensors)]
        finally:
            for g, r in zip(groups, old_rates):
                g["lr"] = r
            for c, k, t in placed:
                c[k] = t  # code that replaced a stored tensor: the original object gets the new value
            for s in snaps:
                _restore(s)
            for s in seen.values():
                _restore(s)
            gen.key = old_key
        return out_arrays, new_datas, new_grads, created, new_key, new_rates


def _split_arguments(args, kwargs):
    """Flatten the arguments: Tensors and arrays are traced, modules/optimizers lifted, the rest static."""
    module_cls, optimizer_cls = module_base(), optimizer_base()
    containers = tuple(c for c in (module_cls, optimizer_cls) if c is not None)
    leaves, in_tree = jax.tree.flatten((args, kwargs), is_leaf=lambda x: isinstance(x, (Tensor, *containers)))
    arg_tensors, arg_arrays, spec = [], [], []
    for x in leaves:
        if isinstance(x, Tensor):
            arg_tensors.append(x)
            spec.append(("T", x._data.shape, x._data.dtype, x._requires_grad, _grad_spec(x)))
        elif isinstance(x, (jax.Array, np.ndarray)):
            arg_arrays.append(x)
            spec.append(("A", x.shape, x.dtype))
        elif containers and isinstance(x, containers):
            spec.append(("S", id(x)))
        else:
            spec.append(("V", _static(x)))
    return leaves, in_tree, arg_tensors, arg_arrays, tuple(spec)


def _final_values(tensors, placed) -> list:
    """Each tensor's value at the end of the trace: its own, or that of a tensor that replaced it
    where it was stored (e.g. `state["exp_avg"] = new_tensor` in an optimizer)."""
    final = {id(t): t._data for t in tensors}
    for c, k, t in placed:
        cur = c.get(k) if isinstance(c, dict) else (c[k] if k < len(c) else None)
        if cur is not t and isinstance(cur, Tensor):
            final[id(t)] = cur._data
            c[k] = t
    return [final[id(t)] for t in tensors]


def _watch(known, seen, allow_new_state, op, args, params, proceed):
    for a in args:
        if isinstance(a, Tensor) and id(a) not in known and id(a) not in seen and not isinstance(a._data, _Tracer):
            seen[id(a)] = _snapshot(a)
            if a._requires_grad and a.grad_fn is None and allow_new_state:
                raise _NewState([a])
    return proceed(op, args, params)


def _created_state(known, roots):
    """Tensors created during the trace that the function stored where it can reach them again
    (optimizer state, module buffers, closed-over containers)."""
    found: dict = {}
    _discovery.collect(roots, found, [], [])
    return [t for k, t in found.items() if k not in known and isinstance(t._data, _Tracer)]


def _grad_spec(t: Tensor):
    g = t.grad
    return None if g is None else (g._data.shape, g._data.dtype)


def _static(x):
    try:
        hash(x)
    except TypeError as e:
        raise TypeError(f"tp.compile: argument of type {type(x).__name__} is neither a Tensor, an array, a Module "
                        "nor an optimizer, so it is treated as static and must be hashable. Pass arrays as Tensors, "
                        "or close over the object instead of passing it.") from e
    return (type(x), x)


def _flatten_outputs(out):
    leaves, tree = jax.tree.flatten(out, is_leaf=lambda x: isinstance(x, Tensor))
    kinds, arrays = [], []
    for x in leaves:
        if isinstance(x, Tensor):
            kinds.append("T")
            arrays.append(x._data)
        elif isinstance(x, (jax.Array, np.ndarray, _Tracer)):
            kinds.append("A")
            arrays.append(x)
        else:
            kinds.append(("V", x))
    return (tree, tuple(kinds)), arrays


def _rebuild_outputs(spec, arrays):
    tree, kinds = spec
    it = iter(arrays)
    leaves = [Tensor._wrap(next(it)) if k == "T" else next(it) if k == "A" else k[1] for k in kinds]
    return jax.tree.unflatten(tree, leaves)


def _write_back(tensors, datas, grads) -> None:
    for t, d, g in zip(tensors, datas, grads):
        t._data = d
        if g is None:
            t.grad = None
        elif t.grad is None:
            t.grad = Tensor._wrap(g)
        else:
            t.grad._data = g
        st = t._storage
        if st is not None and st.views:
            # Aliases (views, `.data`, `detach()`) saw tracers during the trace; show them the new values.
            _dispatch._refresh_views(st, t if t._base is None else t._base, t)


def compile(model=None, *, donate_state: bool = False, **options):
    """Compile an eager function (e.g. a whole training step) into one XLA program.

    The function is traced with `jax.jit`: forward, `.backward()`, hooks and
    optimizer updates all become one program. Eager semantics are kept for
    tensors: parameters, buffers, `.grad`s, optimizer state and the global RNG
    key that the function reads or writes without taking them as arguments
    are passed in and out of the program and written back into the same
    Tensor objects after every call. Tensor arguments are traced inputs
    (in-place writes to them are written back too); other array arguments
    are traced; modules and optimizers passed as arguments are lifted like
    closed-over ones; any other argument is static (hashable; a new value
    traces again).

    Python side effects behave as under `jax.jit`: Python code in the
    function runs only while tracing, `.item()`/printing of values is not
    possible inside, and results come back as tensors without autograd
    history. A change in the lifted state's set, shapes, dtypes or grad
    presence, in `requires_grad`, module training flags or optimizer
    hyperparameters traces again; learning rates are inputs of the program,
    so schedulers do not cause new traces.

    Arguments:
        model: the function (or a Module, whose forward is compiled). Omit to use as `@tp.compile(...)`.
        donate_state: let XLA reuse the buffers of lifted state for the new values (saves memory; arrays
            aliasing the old values, e.g. from `.detach()`, become invalid).
        **options: accepted for signature compatibility with `torch.compile` (`fullgraph`, `dynamic`,
            `backend`, `mode`, `options`, `disable`); `disable=True` returns the function unchanged.

    Returns:
        A `CompiledFunction` (or the decorator when `model` is omitted).

    Example:
        >>> import tapeflow as tp
        >>> w = tp.ones(3, requires_grad=True)
        >>> @tp.compile
        ... def step(x):
        ...     w.grad = None
        ...     loss = (w * x).sum()
        ...     loss.backward()
        ...     with tp.no_grad():
        ...         w.sub_(0.1 * w.grad)
        ...     return loss
        >>> step(tp.tensor([1.0, 2.0, 3.0]))
        tensor(6.)
        >>> w
        tensor([0.9000, 0.8000, 0.7000], requires_grad=True)
    """
    unknown = set(options) - {"fullgraph", "dynamic", "backend", "mode", "options", "disable"}
    if unknown:
        raise TypeError(f"compile() got unexpected keyword arguments {sorted(unknown)}")

    def wrap(fn):
        if options.get("disable"):
            return fn
        return CompiledFunction(fn, donate_state=donate_state)

    return wrap if model is None else wrap(model)
