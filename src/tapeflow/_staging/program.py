"""`Staged`: an eager tapeflow function as cached XLA programs, with eager semantics kept.

The function runs under `jax.jit` with every Tensor it touches holding a tracer, so the tape,
`.backward()`, optimizer steps and JAX transforms inside it become one program. One policy for
`tp.compile`, `tp.func` and `autograd.functional`: state the function reads without taking it as
an argument (parameters, buffers, `.grad`s, optimizer state, learning rates, the RNG key) is an
input; what it writes to that state comes back as outputs written into the same Tensor objects
(state left untouched is not an output: XLA would copy it); random draws thread the key. The key
of a program is built in `_discover`; the last call's state discovery is reused while a snapshot
of what its walk looked at (`state.Snapshot`) still matches.
"""

from __future__ import annotations

import functools
import gc
import itertools
import operator
import sys
import warnings
import weakref

import jax
import jax.extend
import numpy as np

from .. import _dispatch, _factories
from .._state import state as _mode
from .._tensor import Tensor
from . import state as _st
from .boundary import primal_of
from .cache import Programs

__all__ = ["Staged", "EagerOnly", "Unkeyable", "static_key", "trace_state_clean"]

_Tracer = jax.core.Tracer
# Argument leaves that cannot hold state: the rest (modules, optimizers, objects) start the state walk too.
_NOT_ROOTS = (Tensor, jax.Array, np.ndarray, bool, int, float, complex, str, bytes, type(None))

try:
    from jax._src.core import trace_state_clean
except ImportError:  # pragma: no cover - a JAX without it: staged functions then always trace
    def trace_state_clean() -> bool:
        return True


class Unkeyable(TypeError):
    """An argument that is neither traced nor hashable, so it cannot be part of a program's key."""


class _NeedsHistory(Exception):
    """The traced function returned tensors with autograd history and ran no backward pass: a forward whose
    outputs the caller differentiates later. A program's outputs have no history, so such a function runs
    eagerly (with adaptive eager), as `torch.compile` keeps autograd through a compiled forward."""


_EAGER = "its outputs need autograd history: it runs eagerly"


class EagerOnly(Exception):
    """Raised inside a trace by code that must run eagerly (`tp.compiler.disable`): a lenient staged function
    then runs eagerly for that key, without a warning (`torch.compile`'s graph break at a disabled
    function); a strict one (`fullgraph=True`) raises."""


class _NewState(Exception):
    """Raised inside a trace with the tensors that must be lifted but were not known beforehand."""




def _snapshot(t: Tensor) -> tuple:
    g = t._grad
    return (t, t._data, g, None if g is None else g._data, t.grad_fn, t._output_nr, t._requires_grad)


def _restore(snap: tuple) -> None:
    t, data, g, gdata, grad_fn, output_nr, requires_grad = snap
    t._data, t._grad = data, g
    if g is not None:
        g._data = gdata
    t.grad_fn, t._output_nr, t._requires_grad = grad_fn, output_nr, requires_grad


class _Entry:
    """One traced program and what is needed to write its results back: `data_out` / `grad_out` (positions
    of lifted tensors given a new value / `.grad` array), `grad_cleared`, `key_out` (the RNG key advanced),
    `created` (tensors the function stored where it can reach them again), `seen` (tensors read as
    constants), `fresh` (traced by the current call: aliases may have seen tracers), `once` (random draws
    were baked in while tracing: it serves its own call only).

    The trace is kept as a function of the flat inputs (`program`, outputs unflattened by `out_tree`), jitted
    twice at most: `plain`, and `donating`, which lets XLA write the new values of the lifted arrays in
    `donate` (flat input positions: arrays whose tensors get a new value) into their old buffers. A call
    donates only when nothing but their tensors holds those arrays (or `donate_state=True` says so), so no
    alias, view or array taken out with `to_jax` ever sees a deleted buffer."""

    __slots__ = ("program", "plain", "donating", "donate", "out_tree", "out_spec", "created", "data_out", "grad_out",
                 "grad_cleared", "key_out", "fresh", "seen", "once")

    def __init__(self):
        self.program = self.plain = self.donating = self.out_tree = self.out_spec = None
        self.created = self.seen = self.donate = ()
        self.data_out = self.grad_out = self.grad_cleared = ()
        self.key_out = self.fresh = self.once = False

    def runner(self, flat: list, force: bool):
        """The jitted program for this call's flat inputs: `donating` when the arrays to donate are held by
        their tensors alone (`force`: whatever holds them)."""
        if self.donate and (force or _held_once(flat, self.donate)) and trace_state_clean():
            if self.donating is None:
                self.donating = jax.jit(self.program, donate_argnums=self.donate)
            return self.donating
        if self.plain is None:
            self.plain = jax.jit(self.program)
        return self.plain


class _Record:
    """The last call's state discovery, reused while its snapshot still matches (which keeps every object
    it holds weakly alive: the snapshot watches them)."""

    __slots__ = ("snapshot", "found", "optimizers", "lifted_ids", "call_spec", "specs", "key", "slot", "draws")

    def __init__(self, snapshot, found, optimizers, lifted, call_spec, specs, key, slot):
        self.snapshot, self.call_spec, self.specs, self.key, self.slot = snapshot, call_spec, specs, key, slot
        self.draws = None  # the random draws of its program's trace, once traced
        self.found, self.optimizers = [weakref.ref(t) for t in found], [weakref.ref(o) for o in optimizers]
        self.lifted_ids = tuple(map(id, lifted))


class Staged:
    """`fn` as cached programs (see the module docstring).

    Arguments:
        fn: the eager function.
        name: how warnings name it.
        donate_state: let XLA reuse the buffers of lifted state for the new values even when other objects
            hold the old arrays (they become invalid). By default a call donates the arrays of state it
            replaces only when nothing else holds them.
        fallback: the uncached path, `fallback(failed, args, kwargs)`. With one, a key runs it on its first
            call (the warm-up rule), inside an enclosing JAX transform, and for good once tracing it failed
            (data-dependent Python, host reads: `failed` is then True); without one, every key is traced on
            its first call and errors propagate.
        roots: a function returning where the state walk starts (default: what `fn` reaches).
        lenient: without a fallback, a key whose trace fails runs `fn` eagerly from then on (with a warning)
            instead of raising (`torch.compile`'s graph breaks, without `fullgraph=True`).
    """

    def __init__(self, fn, *, name: str, donate_state: bool = False, fallback=None, roots=None,
                 lenient: bool = False):
        self.fn, self.donate_state, self.fallback, self.lenient = fn, donate_state, fallback, lenient
        self._static_roots = roots or functools.partial(_st.roots_of, fn)
        self.programs = Programs(name, warmup=0 if fallback is None else 1)
        self._extra = weakref.WeakValueDictionary()  # id -> Tensor found only while tracing
        self._ctx = self._record = None
        self._rates = ((), [])  # the last learning rates and the device scalars passed for them
        self._last_draws = ()  # the random draws the last trace made (`_factories.DrawTape`)

    @property
    def traces(self) -> int:
        return self.programs.traces

    def reset(self) -> None:
        """Forget every program and the last call's state discovery: the next call traces again."""
        self.programs = Programs(self.programs.name, warmup=self.programs.warmup)
        self._record = None
        self._extra.clear()

    def __call__(self, *args, **kwargs):
        if self.fallback is not None and not trace_state_clean():
            return self.fallback(False, args, kwargs)  # the enclosing transform compiles (or not) the whole
        try:
            return self._call(args, kwargs, allow_new_state=True)
        except _NewState as e:  # trace again with the tensors it found lifted
            self._record = None
            self._extra.update((id(t), t) for t in e.args[0])
        return self._call(args, kwargs, allow_new_state=False)

    def _call(self, args, kwargs, allow_new_state):
        leaves, in_tree, arg_tensors, arg_arrays, spec = _split_arguments(args, kwargs)
        gen = _factories.default_generator
        call_spec = (in_tree, spec, _array_spec(gen.key), _mode.grad_enabled, _mode.anomaly)
        call = (leaves, in_tree, arg_tensors, arg_arrays, allow_new_state)
        rec, lifted = self._discover(leaves, arg_tensors, call_spec)
        slot, fresh = rec.slot, rec.slot.program is None
        if fresh:
            slot = rec.slot = self.programs.slot(rec.key)
            if slot.failed is _EAGER:
                return self.fn(*args, **kwargs)
            if not self.programs.ready(slot):
                return self.fallback(slot.failed is not None, args, kwargs)
            slot.program = _Entry()
        tensors = arg_tensors + lifted
        try:
            outputs = self._run(rec, tensors, call)
        except _NewState:
            raise
        except _NeedsHistory:
            slot.failed = _EAGER
            return self.fn(*args, **kwargs)
        except EagerOnly:
            if not (self.lenient and fresh):
                raise
            slot.failed = _EAGER
            return self.fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - a failed trace: the uncached path reports real errors
            if self.fallback is None and self.lenient and fresh:
                slot.failed = _EAGER
                warnings.warn(f"{self.programs.name} runs eagerly for these arguments: tracing it failed with "
                              f"{type(e).__name__}: {e} (pass fullgraph=True to raise instead)", stacklevel=3)
                return self.fn(*args, **kwargs)
            if self.fallback is None or not fresh:
                raise
            slot.failed = f"{type(e).__name__}: {e}"
            return self.fallback(True, args, kwargs)
        if fresh:
            self.programs.traced(rec.key, stacklevel=4)
        entry = slot.program
        out = self._finish(entry, tensors, outputs)
        if entry.seen:
            self._lift_constants(entry)
        if entry.once:  # its draws were baked in: the next call traces with them as inputs
            slot.program = None
            self._record = None
        return out

    def _run(self, rec, tensors, call):
        """Call the program of `rec` (tracing it first if it is new)."""
        leaves, in_tree, arg_tensors, arg_arrays, allow_new_state = call
        slot, gen = rec.slot, _factories.default_generator
        entry = slot.program
        groups = _st.rate_groups([r() for r in rec.optimizers])
        draws = rec.draws if rec.draws is not None else self._last_draws  # (a new key draws as the last one did)
        self._ctx = (leaves, in_tree, tensors, len(arg_tensors), groups, entry, allow_new_state, rec, draws)
        stream = gen.mt.state() if entry.out_spec is None else None  # (a trace that fails draws nothing)
        datas = [t._data for t in tensors]
        grads = [g._data for t in tensors if (g := t._grad) is not None]
        flat = [*datas, *grads, *arg_arrays, gen.key, *self._rate_inputs(groups)]
        if draws:
            flat += _factories.host_draws(draws)
        del datas, grads  # (`flat` and the tensors hold the arrays: see `_held_once`)
        try:
            if entry.program is None:
                self._trace(entry, tensors, flat, len(arg_arrays), len(groups))
            return jax.tree.unflatten(entry.out_tree, entry.runner(flat, self.donate_state)(*flat)), groups
        except BaseException:
            self._record = None
            if entry.out_spec is None:  # the trace did not complete: forget it
                slot.program = None
            if stream is not None:
                gen.mt.set_state(stream)
            raise
        finally:
            self._ctx = None

    def _finish(self, entry, tensors, outputs):
        """Write the program's results into the tensors and return the function's output."""
        (outs, datas, grads, created, new_key, new_rates), groups = outputs
        _write_back(tensors, datas, grads, entry)
        for t, d in zip(entry.created, created):
            t._data = d
        if entry.key_out:
            _factories.default_generator.key = new_key
        for g, r in zip(groups, new_rates):
            if r is not None:  # the function itself changed the learning rate
                g["lr"] = float(r)
        return _rebuild_outputs(entry.out_spec, outs)

    def _lift_constants(self, entry) -> None:
        """Tensors the trace read as constants (not found by the walk) that outlive it are state the program
        would serve stale: lift them from the next call on (a new trace)."""
        refs, entry.seen = entry.seen, ()
        alive = [t for t in (r() for r in refs) if t is not None]
        if alive:
            gc.collect()  # temporaries of the trace kept only by reference cycles
            alive = [t for t in (r() for r in refs) if t is not None]
        for t in alive:
            self._extra[id(t)] = t
        if alive:
            self._record = None

    def _discover(self, leaves, arg_tensors, call_spec):
        """The lifted tensors and the record of the program to run for them: the last call's while its
        snapshot of the state still matches, otherwise a new walk and key."""
        roots = self._roots(leaves)
        arg_ids = {id(t) for t in arg_tensors}
        rec = self._record
        if rec is not None and rec.snapshot.matches(roots):
            found = [r() for r in rec.found]
            lifted = [t for t in found if id(t) not in arg_ids] if arg_ids else found
            if (rec.call_spec == call_spec and tuple(map(id, lifted)) == rec.lifted_ids
                    and _tensor_specs(lifted) == rec.specs):
                return rec, lifted
        snapshot, atoms, found, modules, optimizers = _st.Snapshot(), [], {}, [], []
        _st.collect(roots, found, modules, optimizers, snapshot=snapshot, atoms=atoms)
        extra = [t for k, t in list(self._extra.items()) if found.setdefault(k, t) is t]
        snapshot.watch(extra)  # a snapshot holding tensors found while tracing stops matching when one goes
        found = list(found.values())
        lifted = [t for t in found if id(t) not in arg_ids]
        specs = _tensor_specs(lifted)
        key = (("arguments", call_spec[:2]), ("random key", call_spec[2]), ("grad mode", call_spec[3:]),
               ("lifted state", tuple(map(id, lifted))), ("shape, dtype or grad of lifted state", specs),
               ("training flag or optimizer setting", _st.hyperparameters(modules, optimizers)),
               ("Python value the function reads", tuple(atoms)))
        slot = self.programs.slot(key, count=False)
        rec = self._record = _Record(snapshot, found, optimizers, lifted, call_spec, specs, key, slot)
        return rec, lifted

    def _roots(self, leaves) -> list:
        """Where the state walk starts: what the function reaches, and arguments that may hold state."""
        return [*self._static_roots(), *(x for x in leaves if not isinstance(x, _NOT_ROOTS))]

    def _rate_inputs(self, groups) -> list:
        """The learning rates as device scalars, made again only when one changes."""
        rates = tuple(float(g["lr"]) for g in groups)
        if rates != self._rates[0]:
            self._rates = (rates, [jax.numpy.asarray(r) for r in rates])
        return self._rates[1]

    def _trace(self, entry, tensors, flat, n_arrays, n_rates) -> None:
        """Trace the function into `entry` (a program of the flat inputs) and find what a call can donate."""
        n = len(tensors)
        has_grad = [t._grad is not None for t in tensors]
        it = iter(flat[n:])
        grads = [next(it) if h else None for h in has_grad]
        arrays = [next(it) for _ in range(n_arrays)]
        key, rates, drawn = next(it), [next(it) for _ in range(n_rates)], list(it)
        closed, shapes = jax.make_jaxpr(self._traced, return_shape=True)(flat[:n], grads, arrays, key, rates, drawn)
        entry.out_tree = jax.tree.structure(shapes)
        entry.program = jax.extend.core.jaxpr_as_fun(closed)
        grad_pos = list(itertools.accumulate(has_grad, initial=n))  # flat position of each input grad
        entry.donate = (*entry.data_out, *(grad_pos[i] for i in entry.grad_out if has_grad[i]))

    # -- what runs under jax.jit -------------------------------------------------------------------------------
    def _traced(self, datas, grads, arrays, rng, rates, drawn):
        leaves, in_tree, tensors, n_args, groups, entry, allow_new_state, rec, draws = self._ctx
        slots: dict = {}  # where each tensor is stored, for code that replaces a stored tensor
        _st.collect(self._roots(leaves), {}, [], [], slots)
        placed = [(c, k, t) for t in tensors for c, k in slots.get(id(t), ())]
        saved = ([_snapshot(t) for t in tensors], [g["lr"] for g in groups], _factories.default_generator.key)
        seen: dict = {}
        tape = _factories.draw_tape[0] = _factories.DrawTape(draws, drawn)
        try:
            passes = _mode.backward_passes
            out = self._call_traced(tensors, datas, grads, arrays, rng, rates, seen)
            if _mode.grad_enabled and _mode.backward_passes == passes and self.fallback is None and any(
                    isinstance(x, Tensor) and x.grad_fn is not None for x in jax.tree.leaves(
                        out, is_leaf=lambda x: isinstance(x, Tensor))):
                raise _NeedsHistory
            found = rec.draws = self._last_draws = tuple(tape.found)
            if found != draws:  # draws made on the host during the trace: a program for this call only
                entry.once = True
            for t in (*tensors, *(s[0] for s in seen.values())):  # written under a transform inside the function
                t._data = primal_of(t._data)
            written = [s[0] for s in seen.values() if s[0]._data is not s[1] and isinstance(s[0]._data, _Tracer)]
            if written and allow_new_state:
                raise _NewState(written)
            entry.out_spec, out_arrays = _flatten_outputs(out)
            new_datas, new_grads = self._changed_state(entry, tensors, placed, datas, grads)
            entry.created = tuple(_created_state({id(t) for t in tensors}, [*self._roots(leaves), *leaves]))
            created = [t._data for t in entry.created]
            gen = _factories.default_generator
            entry.key_out = gen.key is not rng
            new_key = gen.key if entry.key_out else None
            new_rates = [None if isinstance(g["lr"], Tensor) and g["lr"]._data is r else
                         getattr(g["lr"], "_data", g["lr"]) for g, r in zip(groups, rates)]
            entry.seen = tuple(weakref.ref(s[0]) for s in seen.values())
        finally:
            _factories.draw_tape[0] = None
            snaps, old_rates, _factories.default_generator.key = saved
            for g, r in zip(groups, old_rates):
                g["lr"] = r
            for c, k, t in placed:
                c[k] = t  # code that replaced a stored tensor: the original object gets the new value
            for s in (*snaps, *seen.values()):
                _restore(s)
        return out_arrays, new_datas, new_grads, created, new_key, new_rates

    def _call_traced(self, tensors, datas, grads, arrays, rng, rates, seen):
        """Put the traced inputs in place and call the function, watching for tensors it reads as constants."""
        leaves, in_tree, _, n_args, groups, _, allow_new_state, _, _ = self._ctx
        for t, d, g in zip(tensors, datas, grads):
            t._data = d
            if g is not None:
                t._grad._data = g
        _factories.default_generator.key = rng
        for g, r in zip(groups, rates):
            g["lr"] = Tensor._wrap(r)  # a traced 0-d tensor: learning-rate schedules reuse the program
        it, tensor_it = iter(arrays), iter(tensors[:n_args])
        call_leaves = [next(tensor_it) if isinstance(x, Tensor) else
                       next(it) if isinstance(x, (jax.Array, np.ndarray)) else x for x in leaves]
        args, kwargs = jax.tree.unflatten(in_tree, call_leaves)
        watch = functools.partial(_watch, {id(t) for t in tensors}, seen, allow_new_state)
        _mode.interceptors.append(watch)
        try:
            return self.fn(*args, **kwargs)
        finally:
            _mode.interceptors.remove(watch)

    def _changed_state(self, entry, tensors, placed, datas, grads):
        """The new values and grads of the lifted tensors, leaving out (when nothing is donated) those that
        are still the program's inputs: returning an input unchanged makes XLA copy it."""
        final = _final_values(tensors, placed)
        entry.data_out = tuple(i for i, (d, d_in) in enumerate(zip(final, datas)) if d is not d_in)
        new_grads = [None if t._grad is None else t._grad._data for t in tensors]
        pairs = list(zip(new_grads, grads))
        entry.grad_out = tuple(i for i, (g, g_in) in enumerate(pairs) if g is not None and g is not g_in)
        entry.grad_cleared = tuple(i for i, (g, g_in) in enumerate(pairs) if g is None and g_in is not None)
        entry.fresh = True
        return [final[i] for i in entry.data_out], [new_grads[i] for i in entry.grad_out]


_st.skip_type(Staged)


def _refs_in_list(flat: list, i: int) -> int:
    return sys.getrefcount(flat[i])


class _Holder:
    __slots__ = ("value",)


def _calibrate() -> int:
    """The reference count `_refs_in_list` sees for an object held by one slot and the list alone."""
    h = _Holder()
    h.value = object()
    return _refs_in_list([h.value], 0)


_ALONE = _calibrate()


def _held_once(flat: list, positions) -> bool:
    """Whether the arrays at `positions` of `flat` are held by `flat` and one tensor slot each, and nothing
    else (no alias, view, saved tensor, pending op or array taken out by the user)."""
    return all(_refs_in_list(flat, i) <= _ALONE for i in positions)


def _split_arguments(args, kwargs):
    """Flatten the arguments: Tensors and arrays are traced, modules/optimizers lifted, the rest static."""
    if not kwargs and all(map(isinstance, args, itertools.repeat(Tensor))):  # the common case, no tree walk
        leaves = list(args)
        return leaves, _flat_tree(len(args)), leaves, [], _tensor_specs(leaves)
    containers = tuple(c for c in (_st.module_base(), _st.optimizer_base()) if c is not None)
    leaves, in_tree = jax.tree.flatten((args, kwargs), is_leaf=lambda x: isinstance(x, (Tensor, *containers)))
    arg_tensors, arg_arrays, spec = [], [], []
    for x in leaves:
        if isinstance(x, Tensor):
            arg_tensors.append(x)
            g = x._grad
            spec.append(("T", _array_spec(x._data), x._requires_grad, g if g is None else _array_spec(g._data)))
        elif isinstance(x, (jax.Array, np.ndarray)):
            arg_arrays.append(x)
            spec.append(("A", x.shape, x.dtype))
        elif containers and isinstance(x, containers):
            spec.append(("S", id(x)))
        else:
            spec.append(("V", static_key(x)))
    return leaves, in_tree, arg_tensors, arg_arrays, tuple(spec)


def static_key(x):
    """A non-tensor argument as part of a key. Numbers by type and repr: `1`, `1.0` and `True` differ, and
    so do `0.0` and `-0.0`; NaN equals itself."""
    if isinstance(x, (int, float, complex, np.generic)):
        return (type(x), repr(x))
    try:
        hash(x)
    except TypeError as e:
        raise Unkeyable(f"argument of type {type(x).__name__} is neither a Tensor, an array, a Module nor an "
                        "optimizer, so it is treated as static and must be hashable. Pass arrays as Tensors, or "
                        "close over the object instead of passing it.") from e
    return (type(x), x)


@functools.lru_cache(maxsize=64)
def _flat_tree(n: int):
    """The tree of `(args, kwargs)` for `n` positional tensors and no keyword arguments."""
    return jax.tree.structure((tuple(range(n)), {}))


def _final_values(tensors, placed) -> list:
    """Each tensor's value at the end of the trace: its own, or that of a tensor that replaced it where it
    was stored (e.g. `state["exp_avg"] = new_tensor` in an optimizer)."""
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
    _st.collect(roots, found, [], [])
    return [t for k, t in found.items() if k not in known and isinstance(t._data, _Tracer)]


def _tensor_specs(tensors) -> tuple:
    """What a trace bakes in about each lifted tensor (its values are inputs): abstract values (shared
    objects for equal ones, so comparing them is cheap), `requires_grad`, grad presence."""
    grads = list(map(_grad_of, tensors))
    has_grad = tuple(map(operator.is_not, grads, itertools.repeat(None)))
    datas = [*map(_data_of, tensors), *map(_data_of, itertools.compress(grads, has_grad))]
    try:
        avals = tuple(map(_aval, datas))
    except AttributeError:  # not JAX arrays (NumPy)
        avals = tuple(map(_array_spec, datas))
    return avals, has_grad, tuple(map(_requires_grad_of, tensors))


# (`_raw`: a pending value's abstract value is known without running its segment)
_aval, _data_of, _grad_of, _requires_grad_of = map(operator.attrgetter, ("aval", "_raw", "_grad", "_requires_grad"))


def _array_spec(a):
    aval = getattr(a, "aval", None)
    return (a.shape, a.dtype) if aval is None else aval


def _flatten_outputs(out):
    """The output's spec (tree; per leaf "T" tensor, "A" array or ("V", value)) and its arrays."""
    leaves, tree = jax.tree.flatten(out, is_leaf=lambda x: isinstance(x, Tensor))
    kinds = tuple("T" if isinstance(x, Tensor) else "A" if isinstance(x, (jax.Array, np.ndarray, _Tracer)) else
                  ("V", x) for x in leaves)
    return (tree, kinds), [x._data if k == "T" else x for x, k in zip(leaves, kinds) if k in ("T", "A")]


def _rebuild_outputs(spec, arrays):
    tree, kinds = spec
    if kinds == ("T",) and tree.num_nodes == 1:  # a single tensor (e.g. a loss): no tree to rebuild
        return Tensor._wrap(arrays[0])
    it = iter(arrays)
    leaves = [Tensor._wrap(next(it)) if k == "T" else next(it) if k == "A" else k[1] for k in kinds]
    return jax.tree.unflatten(tree, leaves)


def _write_back(tensors, datas, grads, entry) -> None:
    written = [tensors[i] for i in entry.data_out]
    for t, d in zip(written, datas):
        t._data = d
    if entry.fresh:  # aliases (views, `.data`, `detach()`) may have seen tracers during the trace
        entry.fresh = False
        written = tensors
    for t in written:
        st = t._storage
        if st is not None and st.views:  # show aliases the new values
            _dispatch._refresh_views(st, t if t._base is None else t._base, t)
    for i, g in zip(entry.grad_out, grads):
        t = tensors[i]
        if t._grad is None:
            t._grad = Tensor._wrap(g)
        else:
            t._grad._data = g
    for i in entry.grad_cleared:
        tensors[i]._grad = None
