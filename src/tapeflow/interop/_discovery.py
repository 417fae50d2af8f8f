"""Finding the state a function reads without taking it as an argument.

`tp.compile` lifts such state into inputs and outputs of the compiled
program. Candidates are found by walking what the function can reach
directly: its closure cells, the globals its code names, `self` of a bound
method (or the `__dict__` of a callable object), and its arguments. The walk
descends into lists, tuples, dicts, `nn.Module`s (parameters and buffers),
optimizers (parameters and per-parameter state) and plain objects reached
through `self`. Tensors it cannot reach this way are caught while tracing
(see `compile.py`).
"""

from __future__ import annotations

import types
import weakref

from .._tensor import Tensor
from .pytree import module_base, optimizer_base, optimizer_params

__all__ = ["roots_of", "collect", "hyperparameters", "rate_groups", "WeakMethod"]

_MAX_DEPTH = 4
_SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, str, bytes, int, float, complex,
         bool, type(None))


class WeakMethod:
    """`func` bound to `obj` without keeping `obj` alive (for compiled methods cached per instance)."""

    __slots__ = ("func", "ref", "__weakref__")

    def __init__(self, func, obj):
        self.func = func
        self.ref = weakref.ref(obj)

    @property
    def __self__(self):
        return self.ref()

    @property
    def __func__(self):
        return self.func

    @property
    def __name__(self):
        return self.func.__name__

    def __call__(self, *args, **kwargs):
        obj = self.ref()
        if obj is None:
            raise ReferenceError("the object this compiled method belongs to no longer exists")
        return self.func(obj, *args, **kwargs)


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
        if isinstance(f, (types.MethodType, WeakMethod)):
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


def _names(code) -> set:
    """Global names used by `code` and the code objects nested in it (lambdas, comprehensions)."""
    names: set = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return names


def collect(roots, out: dict, modules: list, optimizers: list, slots: dict | None = None) -> None:
    """Add every Tensor reachable from `roots` to `out` (id -> tensor), in discovery order.

    Modules and optimizers met on the way are appended to `modules` / `optimizers`.
    With `slots`, also record where each tensor is stored (id -> [(container, key), ...]):
    the parameter/buffer dicts of modules, optimizer state dicts, and plain dicts
    and lists, so that code which *replaces* a stored tensor can be written back.
    """
    module_cls, optimizer_cls = module_base(), optimizer_base()
    seen: set = set()

    def add(t, container, key):
        out.setdefault(id(t), t)
        if slots is not None and container is not None:
            slots.setdefault(id(t), []).append((container, key))

    stack = [(r, 0, None, None) for r in reversed(list(roots))]
    while stack:
        obj, depth, container, key = stack.pop()
        if isinstance(obj, Tensor):
            add(obj, container, key)
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if module_cls is not None and isinstance(obj, module_cls):
            modules.append(obj)
            for sub in obj.modules():
                for d in (sub._parameters, sub._buffers):
                    for k, t in d.items():
                        if isinstance(t, Tensor):
                            add(t, d, k)
        elif optimizer_cls is not None and isinstance(obj, optimizer_cls):
            optimizers.append(obj)
            for p in optimizer_params(obj):
                add(p, None, None)
                st = obj.state.get(p)
                for k, v in (st or {}).items():
                    if isinstance(v, Tensor):
                        add(v, st, k)
        elif isinstance(obj, _SKIP) or depth >= _MAX_DEPTH:
            continue
        elif isinstance(obj, dict):
            stack.extend((v, depth + 1, obj, k) for k, v in reversed(list(obj.items())))
        elif isinstance(obj, list):
            stack.extend((v, depth + 1, obj, i) for i, v in reversed(list(enumerate(obj))))
        elif isinstance(obj, (tuple, set, frozenset)):
            stack.extend((v, depth + 1, None, None) for v in reversed(list(obj)))
        elif depth == 0 and isinstance(getattr(obj, "__dict__", None), dict):
            # `self` of a bound method, or a callable object: look one level into its attributes.
            stack.extend((v, depth + 1, vars(obj), k) for k, v in reversed(list(vars(obj).items())))


def hyperparameters(modules: list, optimizers: list) -> tuple:
    """The Python-level settings a trace bakes in: training flags and optimizer hyperparameters."""
    flags = tuple(m.training for root in modules for m in root.modules())
    hp = []
    for opt in optimizers:
        for group in opt.param_groups:
            for k, v in group.items():
                if k == "lr" and _is_rate(v):
                    hp.append((k, "traced"))  # an input of the program: schedules need no new trace
                elif k != "params":
                    hp.append((k, _hashable(v)))
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
