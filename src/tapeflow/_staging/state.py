"""Finding the state a staged function reads without taking it as an argument.

The walk starts from what the function reaches directly (closure cells, the globals its code names,
`self` of a bound method, a callable object's attributes, its arguments) and descends into lists,
tuples, dicts, modules (parameters, buffers), optimizers (parameters, per-parameter state) and one
level of plain objects. Python values met directly (closure cells, globals, attributes of `self`)
are part of a program's key: a trace bakes them in. Tensors out of the walk's reach are caught
while tracing (see `program.py`).
"""

from __future__ import annotations

import functools
import sys
import types
import weakref

from .._tensor import Tensor

__all__ = ["roots_of", "collect", "Snapshot", "hyperparameters", "rate_groups", "module_base", "optimizer_base",
           "optimizer_params"]

_MAX_DEPTH = 4
_ATOMS = (str, bytes, int, float, complex, bool, type(None))
_SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, *_ATOMS)
_CONTAINERS = (dict, list, tuple, set, frozenset)


def skip_type(cls) -> None:
    """Never walk into instances of `cls` (e.g. staged functions: their caches are not the user's state)."""
    global _SKIP
    _SKIP = (*_SKIP, cls)


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
    roots, seen_fns, stack = [], set(), [fn]
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
        values = []
        for cell in f.__closure__ or ():
            try:
                values.append(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        g = getattr(f, "__globals__", {})
        values += [g[name] for name in _names(code) if name in g]
        for value in values:
            (stack if isinstance(value, types.FunctionType) else roots).append(value)
    return roots


@functools.lru_cache(maxsize=1024)
def _names(code) -> frozenset:
    """Global names used by `code` and the code objects nested in it (lambdas, comprehensions)."""
    names, stack = set(), [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return frozenset(names)


def collect(roots, out: dict, modules: list, optimizers: list, slots: dict | None = None,
            snapshot: Snapshot | None = None, atoms: list | None = None) -> None:
    """Add every Tensor reachable from `roots` to `out` (id -> tensor), in discovery order.

    Modules and optimizers met are appended to `modules` / `optimizers`, keyed Python values to
    `atoms`. With `slots`, also record where each tensor is stored (id -> [(container, key)]) so that
    code which *replaces* a stored tensor can be written back; with `snapshot`, what the walk looked at.
    """
    if snapshot is not None:
        snapshot.watch(roots)
        snapshot.roots = _fingerprint(roots)
    seen: set = set()
    # Entries: the object, its depth, where it is stored, and whether a Python value there is keyed
    # (a closure cell, a global, an attribute of `self`; not the contents of lists and dicts).
    stack = [(r, 0, None, None, True) for r in reversed(roots)]
    while stack:
        obj, depth, container, key, keyed = stack.pop()
        if isinstance(obj, Tensor):
            if obj._base is not None:  # a write through the view writes its base: lift both
                out.setdefault(id(obj._base), obj._base)
            out.setdefault(id(obj), obj)
            if slots is not None and container is not None:
                slots.setdefault(id(obj), []).append((container, key))
        elif isinstance(obj, _ATOMS):
            if atoms is not None and keyed:
                atoms.append((type(obj), repr(obj)))
        elif id(obj) not in seen:
            children = _children(obj, depth, modules, optimizers)
            if children is not None:
                seen.add(id(obj))
                stack.extend(reversed(children))
                if snapshot is not None:
                    snapshot.probe(obj)
    if snapshot is not None:
        snapshot.watch(out.values())


def _children(obj, depth: int, modules: list, optimizers: list) -> list | None:
    """The stack entries for what `obj` holds, or None for an object the walk does not enter."""
    kind = _kind(obj)
    if kind == "module":
        modules.append(obj)
        return [(t, 0, d, k, False) for sub in obj.modules() for d in (sub._parameters, sub._buffers)
                for k, t in d.items() if isinstance(t, Tensor)]
    if kind == "optimizer":
        optimizers.append(obj)
        entries = []
        for p in optimizer_params(obj):  # parameters are stored nowhere they could be replaced
            st = obj.state.get(p) or {}
            entries += [(p, 0, None, None, False), *((v, 0, st, k, False) for k, v in st.items())]
        return entries
    if isinstance(obj, _SKIP) or depth >= _MAX_DEPTH:
        return None
    if not isinstance(obj, _CONTAINERS) and (depth or not isinstance(getattr(obj, "__dict__", None), dict)):
        return None  # plain objects: one level, `self` of a bound method or a callable object
    d, items = _items(obj)
    return [(v, depth + 1, d, k, d is not None and d is not obj) for k, v in items]


def _kind(obj) -> str | None:
    module_cls, optimizer_cls = module_base(), optimizer_base()
    if module_cls is not None and isinstance(obj, module_cls):
        return "module"
    return "optimizer" if optimizer_cls is not None and isinstance(obj, optimizer_cls) else None


def _items(obj) -> tuple:
    """Where the values of a container live (the dict or list itself, or an object's `__dict__`: None for
    tuples and sets, which cannot be written) and its `(key, value)` pairs."""
    if isinstance(obj, dict):
        return obj, list(obj.items())
    if isinstance(obj, list):
        return obj, list(enumerate(obj))
    if isinstance(obj, _CONTAINERS):
        return None, [(None, v) for v in obj]
    d = vars(obj)
    return d, list(d.items())


def _fingerprint(values) -> tuple:
    values = list(values)
    return tuple(map(id, values)), tuple(map(type, values))


def _values_fingerprint(objs) -> tuple:
    return _fingerprint(v for _, v in _items(objs[0])[1])


def _module_fingerprint(mods) -> tuple:
    """Training flags and the identities of every parameter, buffer and child of the modules `mods` (a module
    and every module under it when the snapshot was taken: a new or replaced child changes its parent's)."""
    fp = []
    add, extend = fp.append, fp.extend  # (this runs at every call of a staged function: no tuple per module)
    for s in mods:
        add(s.training)
        extend(map(id, s._parameters.values()))
        add(None)
        extend(map(id, s._buffers.values()))
        add(None)
        extend(map(id, s._modules.values()))
    return tuple(fp)


def _optimizer_fingerprint(objs) -> tuple:
    """The identities of the parameters and of the state of the optimizer `objs[0]`, and its settings."""
    opt = objs[0]
    return (tuple(map(id, optimizer_params(opt))), tuple((id(p), *map(id, st.values())) for p, st in opt.state.items()),
            _optimizer_settings(opt))


_FINGERPRINTS = {"module": _module_fingerprint, "optimizer": _optimizer_fingerprint, None: _values_fingerprint}


class Snapshot:
    """What one walk of `collect` looked at: `matches(roots)` tells, in a fraction of a walk's time, whether a
    new walk would find the same tensors, modules, optimizers, Python values, training flags and optimizer
    settings (learning rates aside). Each object the walk entered is kept with the fingerprint of what it
    held; every object met is watched (weakly where it can be) so that no identity is reused while the
    snapshot can match, and the snapshot keeps no tensor, module or object alive."""

    __slots__ = ("roots", "probes", "_watched", "_alive", "_on_collected")

    def __init__(self):
        self.roots = None
        self.probes: list = []
        self._watched: dict = {}
        alive = self._alive = [True]
        self._on_collected = lambda _ref: alive.__setitem__(0, False)  # holds no reference to the snapshot

    def watch(self, values) -> None:
        """Keep the ids of `values` theirs for as long as the snapshot can match."""
        watched = self._watched
        for v in values:
            if id(v) not in watched:
                try:
                    watched[id(v)] = (weakref.ref(v, self._on_collected), True)
                except TypeError:
                    watched[id(v)] = (v, False)

    def probe(self, obj) -> None:
        """Remember what `obj` (a container, object, module or optimizer the walk entered) holds now."""
        kind = _kind(obj)
        objs = list(obj.modules()) if kind == "module" else [obj]
        self.watch(objs)
        fp = _FINGERPRINTS[kind]
        self.probes.append((tuple(self._watched[id(o)] for o in objs), fp, fp(objs)))

    def matches(self, roots) -> bool:
        """Whether `collect(roots, ...)` would find what the walk that made this snapshot found."""
        if not self._alive[0] or _fingerprint(roots) != self.roots:
            return False
        try:
            for refs, fp, value in self.probes:  # (every object watched is alive: `_alive` says so)
                if fp([ref() if weak else ref for ref, weak in refs]) != value:
                    return False
            return True
        except Exception:  # noqa: BLE001 - the structure changed under a probe: walk again
            return False


def _optimizer_settings(opt) -> tuple:
    """The settings a trace bakes in: group settings (a Python learning rate is an input) and non-tensor
    per-parameter state."""
    groups = []
    for g in opt.param_groups:
        settings = []
        for k, v in g.items():
            if k == "params":
                continue
            if type(v) not in _PLAIN:
                v = _hashable(v)
            settings.append((k, "traced") if k == "lr" and _is_rate(v) else (k, v))
        groups.append(tuple(settings))
    state, per_param = [], opt.state
    for p in optimizer_params(opt):
        st = per_param.get(p)
        if st:
            state += [(k, _hashable(v)) for k, v in st.items() if not isinstance(v, Tensor)]
    return tuple(groups), tuple(state)


def hyperparameters(modules: list, optimizers: list) -> tuple:
    """The Python-level settings a trace bakes in: training flags and optimizer settings."""
    return tuple(m.training for root in modules for m in root.modules()), tuple(map(_optimizer_settings, optimizers))


_PLAIN = frozenset((float, int, bool, str, type(None)))  # settings kept as they are (immutable and hashable)


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
