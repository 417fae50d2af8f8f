"""`to_jax` and `from_jax`: move values and functions between tapeflow and JAX.

Values cross without copies: a Tensor's array *is* a `jax.Array` (or a
tracer inside a JAX transform). Functions cross too:

- `to_jax(fn)` turns a tapeflow function into a pure JAX function on arrays
  (jit-able, vmap-able, differentiable by `jax.grad`, usable in `lax.scan`):
  arrays go in as tensors, the same dispatcher runs on tracers, and arrays
  come out.
- `from_jax(fn)` turns a JAX function into a tapeflow op: it runs as one
  compiled XLA call in eager code and records a backward node whose VJP JAX
  derives (to any order, since a VJP is itself JAX code).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable

import jax
import numpy as np

import xla_ops

from .. import _dispatch
from .. import _staging as staging
from .._tensor import Tensor

__all__ = ["to_jax", "from_jax"]


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _tensor_to_array(x):
    return x._data if isinstance(x, Tensor) else x


def _array_to_tensor(x):
    if isinstance(x, (jax.Array, jax.core.Tracer)):
        return Tensor._wrap(x)
    if isinstance(x, np.ndarray):
        return Tensor._wrap(jax.numpy.asarray(x))
    return x


def _is_module(obj) -> bool:
    from .pytree import module_base

    base = module_base()
    return base is not None and isinstance(obj, base)


# -- to_jax -----------------------------------------------------------------------------------------------------
def to_jax(obj):
    """Convert a Tensor, a pytree of Tensors, a Module or a tapeflow function to JAX.

    - a Tensor: its `jax.Array` (no copy);
    - a pytree (dicts, lists, tuples, ...) of Tensors: the same pytree of arrays;
    - an `nn.Module`: a dict `{name: array}` of its parameters and buffers
      (see `to_equinox` for a callable model);
    - a callable: a pure JAX function on arrays. Array arguments are wrapped
      into tensors, the function runs, and tensors in its result are
      unwrapped. Tensors the function closes over (e.g. a model's
      parameters) act as constants of the JAX function.

    Arguments:
        obj: what to convert.

    Returns:
        The JAX counterpart of `obj`.

    Example:
        >>> import jax, jax.numpy as jnp, tapeflow as tp
        >>> f = tp.interop.to_jax(lambda x: (x.sin() * x).sum())
        >>> float(jax.grad(f)(jnp.zeros(3)).sum())
        0.0
    """
    if isinstance(obj, Tensor):
        return obj._data
    if _is_module(obj):
        named = list(obj.named_parameters()) + list(obj.named_buffers())
        return {name: t._data for name, t in named}
    if callable(obj) and not isinstance(obj, type):
        return _pure(obj)
    return jax.tree.map(_tensor_to_array, obj, is_leaf=_is_tensor)


def _pure(fn: Callable) -> Callable:
    pure = functools.wraps(fn)(staging.pure(fn))
    pure.__wrapped_tapeflow__ = fn
    return pure


# -- from_jax -----------------------------------------------------------------------------------------------------
def from_jax(obj):
    """Convert a `jax.Array`, a pytree of arrays, or a JAX function to tapeflow.

    - an array: a Tensor wrapping it (no copy); NumPy arrays are converted;
    - a pytree of arrays: the same pytree of Tensors;
    - a callable: a differentiable tapeflow op. Tensor arguments (anywhere
      in pytree arguments) become the op's inputs; other arguments are
      passed through (Python scalars are traced, keyword arguments are
      static and must be hashable). The result has the function's output
      structure with arrays replaced by Tensors. Backward uses the VJP JAX
      derives, so `backward()`, `autograd.grad` and `create_graph=True`
      (any order) work. The op is compiled once per function (and per
      input shapes), like every tapeflow op.

    Arguments:
        obj: what to convert.

    Returns:
        The tapeflow counterpart of `obj`.

    Example:
        >>> import jax.numpy as jnp, tapeflow as tp
        >>> softplus = tp.interop.from_jax(lambda x: jnp.logaddexp(x, 0.0))
        >>> x = tp.zeros(2, requires_grad=True)
        >>> softplus(x).sum().backward()
        >>> x.grad
        tensor([0.5000, 0.5000])
    """
    if isinstance(obj, (jax.Array, np.ndarray)):
        return _array_to_tensor(obj)
    if callable(obj) and not isinstance(obj, (type, Tensor)):
        return _JaxFunction.get(obj)
    return jax.tree.map(_array_to_tensor, obj)


class _JaxFunction:
    """A JAX function called as a tapeflow op (one `xla_ops.Op`, VJP derived by JAX)."""

    _cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    _strong: dict = {}  # for callables that cannot be weakly referenced

    @classmethod
    def get(cls, fn: Callable) -> _JaxFunction:
        try:
            wrapper = cls._cache.get(fn)
        except TypeError:
            wrapper = cls._strong.get(id(fn))
        if wrapper is None:
            wrapper = cls(fn)
            try:
                cls._cache[fn] = wrapper
            except TypeError:
                cls._strong[id(fn)] = wrapper
        return wrapper

    def __init__(self, fn: Callable):
        self.fn = fn
        self.out_trees: dict = {}
        name = getattr(fn, "__name__", type(fn).__name__)
        functools.update_wrapper(self, fn, updated=())
        # A user's function runs when called, as in eager mode: adaptive eager does not defer it.
        self.op = xla_ops.Op(f"jax_{name}", self._forward, nin=-1, node=_node_name(name), deferrable=False)

    def _forward(self, *leaves, in_tree, kwargs):
        args = jax.tree.unflatten(in_tree, leaves)
        out = self.fn(*args, **dict(kwargs))
        flat, tree = jax.tree.flatten(out)
        if not flat:
            raise TypeError(f"from_jax: {self.__name__} returned no arrays; a tapeflow op must return an array "
                            "or a pytree of arrays")
        self.out_trees[(in_tree, kwargs)] = tree
        return flat[0] if tree == _LEAF else tuple(flat)

    def __call__(self, *args, **kwargs):
        leaves, in_tree = jax.tree.flatten(args, is_leaf=_is_tensor)
        try:
            params = (("in_tree", in_tree), ("kwargs", tuple(sorted(kwargs.items()))))
            hash(params)
        except TypeError as e:
            raise TypeError(f"from_jax: keyword arguments of {self.__name__} are static and must be hashable; "
                            "pass arrays as positional arguments instead") from e
        out = _dispatch.dispatch(self.op, tuple(leaves), params)
        tree = self.out_trees.get((in_tree, params[1][1]), _LEAF)
        if tree == _LEAF:
            return out
        return jax.tree.unflatten(tree, out)

    def __repr__(self) -> str:
        return f"<tapeflow op from JAX function {self.__name__}>"


_LEAF = jax.tree.structure(0)


def _node_name(name: str) -> str:
    if not name.isidentifier():
        return "JaxFunctionBackward0"
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
    return f"{camel}Backward"
