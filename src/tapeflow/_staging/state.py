"""Finding the state a staged function reads without taking it as an argument.

The walk starts from what the function can reach directly (closure cells, the
globals its code names, `self` of a bound method, the `__dict__` of a callable
object, its arguments) and descends into lists, tuples, dicts, modules
(parameters and buffers), optimizers (parameters and per-parameter state) and
plain objects reached through `self`. Tensors it cannot reach are caught while
tracing (see `program.py`).
"""

from __future__ import annotations

import functools
import sys
import types
import weakref
from itertools import chain
from operator import attrgetter, itemgetter

from .._tensor import Tensor

__all__ = ["roots_of", "collect", "Snapshot", "hyperparameters", "rate_groups"]

_MAX_DEPTH = 4
_SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, str, bytes, int, float, complex,
         bool, type(None))


def module_base():
    """`tapeflow.nn.Module`, or None while `tapeflow.nn` is not imported."""
    return getattr(sys.modules.get("tapeflow.nn"), "Module", None)


def optimizer_base():
    """`tapeflow.optim.Optimizer`, or None while `tapeflow.optim` is not imported."""
    return getattr(sys.modules.get("tapeflow.optim"), "Optimizer", None)


def optimizer_params(opt) -> list:
    """Every parameter of `opt`, in parameter-group order."""
    return [p for group in opt.param_groups for p in group["params"]]


def roots_of(fn) -> list:
    """The objects `fn` can reach without arguments: closure, named globals, bound self."""
    roots: list = []
    seen_fns: set = set()
    stack = [fn]
    while stack:
        f = stack.pop()
        if id(f) in seen_fns:
            continue
        seen_fns.add(id(f))
        if hasattr(f, "__self__") and hasattr(f, "__func__"):  # a bound method
            roots.append(f.__self__)
            stack.append(f.__func__)
            continue
        code = getattr(f, "__code__", None)
        if code is None:
            if hasattr(f, "__dict__") and not isinstance(f, _SKIP):
                roots.append(f)  # a callable object: its attributes are its state
            continue
        for cell in f.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            (stack if isinstance(value, types.FunctionType) else roots).append(value)
        g = getattr(f, "__globals__", {})
        for name in _names(code):
            if name in g:
                value = g[name]
                (stack if isinstance(value, types.FunctionType) else roots).append(value)
    return roots


@functools.lru_cache(maxsize=1024)
def _names(code) -> frozenset:
    """Global names used by `code` and the code objects nested in it (lambdas, comprehensions)."""
    names: set = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return frozenset(names)


def collect(roots, out: dict, modules: list, optimizers: list, slots: dict | None = None,
            snapshot: Snapshot | None = None) -> None:
    """Add every Tensor reachable from `roots` to `out` (id -> tensor), in discovery order.

    Modules and optimizers met on the way are appended to `modules` / `optimizers`.
    With `slots`, also record where each tensor is stored (id -> [(container, key), ...]):
    the parameter/buffer dicts of modules, optimizer state dicts, and plain dicts
    and lists, so that code which *replaces* a stored tensor can be written back.
    With `snapshot` (a new `Snapshot`), also record what the walk looked at, so that
    `snapshot.matches(roots)` can later tell cheaply whether a new walk would find the same.
    """
    module_cls, optimizer_cls = module_base(), optimizer_base()
    seen: dict = {}  # id -> the snapshot probe of that object (None if it has none)
    rec = snapshot
    if rec is not None:
        rec.roots = rec.fingerprint(roots)

    def add(t, container, key):
        out.setdefault(id(t), t)
        if slots is not None and container is not None:
            slots.setdefault(id(t), []).append((container, key))

    def descend(values, keys, container, depth, probe):
        if rec is not None:
            rec.probes[probe][3] = rec.fingerprint(values)
        entries = [(v, depth + 1, container, k, (probe, i)) for i, (k, v) in enumerate(zip(keys, values))]
        stack.extend(reversed(entries))

    # Each entry: the object, its depth, where it is stored (container, key) and, for the snapshot,
    # where it sits among the values of an earlier probe (-1: the roots).
    stack = [(r, 0, None, None, (-1, i)) for i, r in reversed(list(enumerate(roots)))]
    while stack:
        obj, depth, container, key, where = stack.pop()
        if isinstance(obj, Tensor):
            add(obj, container, key)
            continue
        if id(obj) in seen:
            if rec is not None and seen[id(obj)] is not None:
                rec.same_as(where, seen[id(obj)])  # must stay the object met first
            continue
        seen[id(obj)] = None
        if module_cls is not None and isinstance(obj, module_cls):
            modules.append(obj)
            for sub in obj.modules():
                for d in (sub._parameters, sub._buffers):
                    for k, t in d.items():
                        if isinstance(t, Tensor):
                            add(t, d, k)
            if rec is not None:
                rec.add(where, _MODULE, _module_record(rec, obj))
        elif optimizer_cls is not None and isinstance(obj, optimizer_cls):
            optimizers.append(obj)
            for p in optimizer_params(obj):
                add(p, None, None)
                st = obj.state.get(p)
                for k, v in (st or {}).items():
                    if isinstance(v, Tensor):
                        add(v, st, k)
            if rec is not None:
                rec.add(where, _OPTIMIZER, _optimizer_record(rec, obj))
        elif isinstance(obj, _SKIP):
            continue
        elif isinstance(obj, _CONTAINERS) or (depth == 0 and isinstance(getattr(obj, "__dict__", None), dict)):
            probe = seen[id(obj)] = rec.add(where, _PASS, None) if rec is not None else None
            if depth >= _MAX_DEPTH:
                continue
            if rec is not None:
                rec.probes[probe][2] = _VALUES
            if isinstance(obj, dict):
                descend(list(obj.values()), list(obj), obj, depth, probe)
            elif isinstance(obj, list):
                descend(obj, range(len(obj)), obj, depth, probe)
            elif isinstance(obj, (tuple, set, frozenset)):
                values = list(obj)
                descend(values, [None] * len(values), None, depth, probe)
            else:
                # `self` of a bound method, or a callable object: look one level into its attributes.
                d = vars(obj)
                descend(list(d.values()), list(d), d, depth, probe)


# -- snapshots: is the state a function reaches still what the last walk found? ---------------------------------
_VALUES, _PASS, _MODULE, _OPTIMIZER = range(4)
_CONTAINERS = (dict, list, tuple, set, frozenset)
_ATOMS = (bool, int, float, complex, str, bytes, type(None))
_EMPTY: dict = {}
_training, _params_of = attrgetter("training"), itemgetter("params")
_module_dicts = (attrgetter("_parameters"), attrgetter("_buffers"), attrgetter("_modules"))


class Snapshot:
    """What one walk of `collect` looked at, checked again by `matches` in a fraction of a walk's time.

    Each probe (`[parent probe (-1: the roots), position among the parent's values, kind, data]`)
    fetches a container, module or optimizer again from where the walk found it and compares the
    identities and types of what it holds. Identities stay meaningful because every object they
    name is either watched through a weak reference (if one is collected the snapshot no longer
    matches), held (numbers, strings, objects that cannot be weakly referenced), or a container
    compared by its own probe. The snapshot keeps no tensor, module or container alive.
    """

    __slots__ = ("roots", "probes", "same", "_watched", "_alive", "_on_collected")

    def __init__(self):
        self.roots = None
        self.probes: list = []
        self.same: list = []  # (parent, position, probe): a container met again must be the same object
        self._watched: dict = {}
        alive = self._alive = [True]
        self._on_collected = lambda _ref: alive.__setitem__(0, False)  # holds no reference to the snapshot

    @property
    def alive(self) -> bool:
        """False once an object the walk met has been garbage collected."""
        return self._alive[0]

    def add(self, where, kind, data) -> int:
        self.probes.append([where[0], where[1], kind, data])
        return len(self.probes) - 1

    def same_as(self, where, probe) -> None:
        self.same.append((where[0], where[1], probe))

    def watch(self, values) -> None:
        """Keep the ids of `values` theirs for as long as the snapshot can match."""
        watched = self._watched
        for v in values:
            if id(v) not in watched and not isinstance(v, _CONTAINERS):
                try:
                    watched[id(v)] = weakref.ref(v, self._on_collected)
                except TypeError:
                    watched[id(v)] = v

    def fingerprint(self, values) -> tuple:
        """The identities and types of `values`, watched from now on."""
        self.watch(values)
        return _fingerprint(values)

    def matches(self, roots) -> bool:
        """Whether `collect(roots, ...)` would find the same tensors, modules, optimizers, training
        flags and optimizer hyperparameters (learning rates aside) as the walk that made this snapshot."""
        try:
            return self._alive[0] and self._matches(roots)
        except Exception:  # noqa: BLE001 - the structure changed under a probe: walk again
            return False

    def _matches(self, roots) -> bool:
        if _fingerprint(roots) != self.roots:
            return False
        n = len(self.probes)
        objects, values = [None] * n, [None] * n
        for i, (parent, pos, kind, data) in enumerate(self.probes):
            obj = objects[i] = (roots if parent < 0 else values[parent])[pos]
            if kind == _VALUES:
                vals = values[i] = _values_of(obj)
                if _fingerprint(vals) != data:
                    return False
            elif kind == _MODULE:
                refs, fingerprint = data
                mods = [r() for r in refs]
                if mods[0] is not obj or _module_fingerprint(mods) != fingerprint:
                    return False
            elif kind == _OPTIMIZER and not _optimizer_matches(obj, data):
                return False
        return all((roots if parent < 0 else values[parent])[pos] is objects[probe]
                   for parent, pos, probe in self.same)


def _fingerprint(values) -> tuple:
    return tuple(map(id, values)), tuple(map(type, values))


def _values_of(obj) -> list:
    if isinstance(obj, dict):
        return list(obj.values())
    if isinstance(obj, _CONTAINERS):
        return obj if isinstance(obj, list) else list(obj)
    return list(vars(obj).values())


def _module_record(snapshot, module) -> tuple:
    mods = list(module.modules())
    snapshot.watch(mods)
    for d in _module_dict_list(mods):
        snapshot.watch(d.values())
    return [weakref.ref(m) for m in mods], _module_fingerprint(mods)


def _module_dict_list(mods) -> list:
    return [d for get in _module_dicts for d in map(get, mods)]


def _module_fingerprint(mods) -> tuple:
    """Training flags and the identities of every parameter, buffer and child of `mods`."""
    dicts = _module_dict_list(mods)
    return (tuple(map(_training, mods)), tuple(map(len, dicts)),
            tuple(map(id, chain.from_iterable(map(dict.values, dicts)))))


def _optimizer_record(snapshot, opt) -> tuple:
    groups = opt.param_groups
    snapshot.watch([opt])
    snapshot.watch(chain.from_iterable(map(dict.values, groups)))
    snapshot.watch(optimizer_params(opt))
    snapshot.watch(opt.state)
    states = list(opt.state.values())
    snapshot.watch(chain.from_iterable(states))
    snapshot.watch(chain.from_iterable(map(dict.values, states)))
    # Settings other than atoms (lists, objects) may change in place: compare them by value every time.
    mutable = not all(map(_frozen, [v for g in groups for k, v in g.items() if k not in ("params", "lr")]
                          + [v for st in states for v in st.values() if not isinstance(v, Tensor)]))
    return (weakref.ref(opt), _optimizer_fingerprint(opt), _group_ids(groups), _optimizer_settings(opt), mutable)


def _optimizer_fingerprint(opt) -> tuple:
    """The identities of the parameters of `opt`, and of the keys and values of all its state."""
    params = list(map(_params_of, opt.param_groups))
    state = opt.state
    states = list(state.values())
    return (tuple(map(len, params)), tuple(map(id, chain.from_iterable(params))), tuple(map(id, state)),
            tuple(map(len, states)), tuple(map(id, chain.from_iterable(states))),
            tuple(map(id, chain.from_iterable(map(dict.values, states)))))


def _group_ids(groups) -> tuple:
    return tuple(map(id, chain.from_iterable(map(dict.values, groups))))


def _optimizer_settings(opt) -> tuple:
    """What `hyperparameters` reads from `opt`."""
    return (tuple(_group_signature(g) for g in opt.param_groups),
            tuple((k, _hashable(v)) for p in optimizer_params(opt) for k, v in opt.state.get(p, _EMPTY).items()
                  if not isinstance(v, Tensor)))


def _optimizer_matches(opt, record) -> bool:
    ref, fingerprint, group_ids, settings, mutable = record
    if ref() is not opt or _optimizer_fingerprint(opt) != fingerprint:
        return False
    # A changed learning rate changes the groups' ids but not their settings (it is a program input).
    return (not mutable and _group_ids(opt.param_groups) == group_ids) or _optimizer_settings(opt) == settings


def _frozen(v) -> bool:
    return isinstance(v, _ATOMS) or (isinstance(v, (tuple, frozenset)) and all(map(_frozen, v)))


def _group_signature(group) -> tuple:
    """A parameter group's settings as a trace bakes them in (a Python learning rate is an input)."""
    return tuple((k, "traced") if k == "lr" and _is_rate(v) else (k, _hashable(v))
                 for k, v in group.items() if k != "params")


def hyperparameters(modules: list, optimizers: list) -> tuple:
    """The Python-level settings a trace bakes in: training flags and optimizer hyperparameters."""
    flags = tuple(m.training for root in modules for m in root.modules())
    hp = []
    for opt in optimizers:
        for group in opt.param_groups:
            hp.extend(_group_signature(group))
        for p in optimizer_params(opt):
            for k, v in opt.state.get(p, {}).items():
                if not isinstance(v, Tensor):
                    hp.append((k, _hashable(v)))
    return flags, tuple(hp)


def _is_rate(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def rate_groups(optimizers: list) -> list:
    """The parameter groups whose learning rate is a Python number (lifted into the program)."""
    return [g for opt in optimizers for g in opt.param_groups if _is_rate(g.get("lr"))]


def _hashable(v):
    try:
        hash(v)
    except TypeError:
        return repr(v)
    return v
