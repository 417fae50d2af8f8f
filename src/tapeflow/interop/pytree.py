"""Tensors, `nn.Module`s and optimizers as JAX pytrees.

Key paths name what they reach (`jax.tree_util.keystr` gives `.0.weight.data`
for a `Sequential`'s first weight, `[0]['momentum_buffer'].data` for an
optimizer's state). A `Tensor` is a pytree node with one child, its array: `jax.tree.leaves(t)`
is `[t's array]` and unflattening builds a fresh leaf tensor around whatever
leaf JAX hands back (an array, a tracer, or one of the placeholder objects
JAX uses internally), so `jax.jit`, `jax.vmap` and `jax.tree.map` accept
tensors directly.

A `Module` flattens to its parameters, buffers and submodules (in
registration order); unflattening makes a structural copy of the module
holding the new tensors, so `jax.tree.map(f, model)` returns a model.

An optimizer flattens to its per-parameter state (`opt.state[p]` dicts);
unflattening makes a copy that shares the parameter groups and holds the new
state.

JAX registers pytree types one class at a time, so every subclass of
`Tensor`, `Module` and `Optimizer` is registered when it is defined.
"""

from __future__ import annotations

import collections
import copy

import jax

from .._staging.state import module_base, optimizer_base, optimizer_params
from .._tensor import Tensor, _init

__all__ = ["register_tensor_type", "register_module_type", "register_optimizer_type", "register_known_types"]

_REGISTERED: set = set()


# -- tensors -------------------------------------------------------------------------------------------------
_EXTRA_ATTRS = ("persistent",)  # per-instance attributes of tensor subclasses that survive a round trip


def _flatten_tensor(t):
    extras = tuple((k, t.__dict__[k]) for k in _EXTRA_ATTRS if k in t.__dict__)
    return (t._data,), (t._requires_grad, extras)


_DATA_KEY = jax.tree_util.GetAttrKey("data")


def _flatten_tensor_with_keys(t):
    children, aux = _flatten_tensor(t)
    return ((_DATA_KEY, children[0]),), aux


def _unflatten_tensor(cls):
    def unflatten(aux, children):
        requires_grad, extras = aux
        t = object.__new__(cls)
        # No validation of the leaf: JAX unflattens with tracers, ShapeDtypeStructs,
        # `None` and sentinel objects while it works out a pytree's structure.
        _init(t, children[0], None, 0, requires_grad)
        for k, v in extras:
            t.__dict__[k] = v
        return t

    return unflatten


def register_tensor_type(cls: type) -> None:
    """Register `cls` (`Tensor` or a subclass) as a pytree node with its array as the only child.

    Arguments:
        cls: the class.

    Returns:
        None. Registering twice is a no-op.

    Example:
        >>> import jax, tapeflow as tp
        >>> jax.tree.leaves(tp.ones(2))
        [Array([1., 1.], dtype=float32)]
    """
    if cls in _REGISTERED:
        return
    jax.tree_util.register_pytree_with_keys(cls, _flatten_tensor_with_keys, _unflatten_tensor(cls), _flatten_tensor)
    _REGISTERED.add(cls)


# -- modules -------------------------------------------------------------------------------------------------
class _ModuleDef:
    """Static part of a flattened module: the module itself and the names of its children."""

    __slots__ = ("module", "names")

    def __init__(self, module, names):
        self.module = module
        self.names = names

    def __eq__(self, other):
        return isinstance(other, _ModuleDef) and self.module is other.module and self.names == other.names

    def __hash__(self):
        return hash((id(self.module), self.names))

    def __repr__(self):
        return f"{type(self.module).__name__}{self.names}"


def _flatten_module(m):
    d = m.__dict__
    params, buffers, mods = d["_parameters"], d["_buffers"], d["_modules"]
    names = (tuple(params), tuple(buffers), tuple(mods))
    return (*params.values(), *buffers.values(), *mods.values()), _ModuleDef(m, names)


def _flatten_module_with_keys(m):
    children, aux = _flatten_module(m)
    names = [n for group in aux.names for n in group]
    return tuple((jax.tree_util.GetAttrKey(n), c) for n, c in zip(names, children)), aux


def _unflatten_module(aux: _ModuleDef, children):
    src = aux.module
    pn, bn, mn = aux.names
    new = object.__new__(type(src))
    d = dict(src.__dict__)
    it = iter(children)
    d["_parameters"] = collections.OrderedDict((n, next(it)) for n in pn)
    d["_buffers"] = collections.OrderedDict((n, next(it)) for n in bn)
    d["_modules"] = collections.OrderedDict((n, next(it)) for n in mn)
    object.__setattr__(new, "__dict__", d)
    return new


def register_module_type(cls: type) -> None:
    """Register an `nn.Module` class as a pytree: children are its parameters, buffers and submodules.

    Arguments:
        cls: the module class (subclasses are registered automatically when defined).

    Returns:
        None.

    Example:
        >>> import jax, tapeflow as tp
        >>> [a.shape for a in jax.tree.leaves(tp.nn.Linear(3, 2))]
        [(2, 3), (2,)]
    """
    if cls in _REGISTERED:
        return
    jax.tree_util.register_pytree_with_keys(cls, _flatten_module_with_keys, _unflatten_module, _flatten_module)
    _REGISTERED.add(cls)


# -- optimizers ----------------------------------------------------------------------------------------------
class _OptimizerDef:
    __slots__ = ("opt", "n")

    def __init__(self, opt, n):
        self.opt = opt
        self.n = n

    def __eq__(self, other):
        return isinstance(other, _OptimizerDef) and self.opt is other.opt and self.n == other.n

    def __hash__(self):
        return hash((id(self.opt), self.n))




def _flatten_optimizer(opt):
    params = optimizer_params(opt)
    return tuple(dict(opt.state.get(p, {})) for p in params), _OptimizerDef(opt, len(params))


def _flatten_optimizer_with_keys(opt):
    children, aux = _flatten_optimizer(opt)
    return tuple((jax.tree_util.SequenceKey(i), c) for i, c in enumerate(children)), aux


def _unflatten_optimizer(aux: _OptimizerDef, children):
    src = aux.opt
    new = copy.copy(src)
    state = copy.copy(src.state)
    state.clear()
    for p, s in zip(optimizer_params(src), children):
        if s:
            state[p] = s
    new.state = state
    return new


def register_optimizer_type(cls: type) -> None:
    """Register an optimizer class as a pytree whose children are its per-parameter state dicts.

    Arguments:
        cls: the optimizer class (subclasses are registered automatically when defined).

    Returns:
        None.

    Example:
        >>> import jax, tapeflow as tp
        >>> p = tp.nn.Parameter(tp.ones(2))
        >>> opt = tp.optim.SGD([p], lr=0.1, momentum=0.9)
        >>> jax.tree.leaves(opt)
        []
    """
    if cls in _REGISTERED:
        return
    jax.tree_util.register_pytree_with_keys(cls, _flatten_optimizer_with_keys, _unflatten_optimizer,
                                            _flatten_optimizer)
    _REGISTERED.add(cls)


# -- registration of whole class hierarchies ---------------------------------------------------------------------
def _register_hierarchy(base: type, register) -> None:
    """Register `base`, its existing subclasses, and every subclass defined from now on."""
    stack = [base]
    while stack:
        cls = stack.pop()
        register(cls)
        stack.extend(cls.__subclasses__())
    if base.__dict__.get("_pytree_hook_installed"):
        return
    previous = base.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if previous is not None:
            previous.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        register(cls)

    base.__init_subclass__ = classmethod(__init_subclass__)
    base._pytree_hook_installed = True


def register_known_types() -> None:
    """Register `Tensor`, `nn.Module` and `optim.Optimizer` (with all their subclasses) as pytrees.

    Returns:
        None. Called when `tapeflow.interop` is imported.

    Example:
        >>> import tapeflow as tp
        >>> tp.interop.register_known_types()
    """
    _register_hierarchy(Tensor, register_tensor_type)
    module_cls, optimizer_cls = module_base(), optimizer_base()
    if module_cls is not None:
        _register_hierarchy(module_cls, register_module_type)
    if optimizer_cls is not None:
        _register_hierarchy(optimizer_cls, register_optimizer_type)



