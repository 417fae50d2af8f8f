"""The one boundary between tapeflow and JAX: Tensors <-> arrays, and a user's function as JAX code."""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np

from .._state import state
from .._tensor import Tensor

__all__ = ["to_arrays", "to_tensors", "pure", "primal_of"]

_ARRAYS = (jax.Array, jax.core.Tracer)


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _wrap(x):
    if isinstance(x, np.ndarray):
        x = jax.numpy.asarray(x)
    return Tensor._make(x, None, 0, False) if isinstance(x, _ARRAYS) else x


def to_arrays(tree):
    """`tree` with every Tensor replaced by its array (no copy)."""
    return jax.tree.map(lambda x: x._data if isinstance(x, Tensor) else x, tree, is_leaf=_is_tensor)


def to_tensors(tree):
    """`tree` with every array (or tracer, or NumPy array) wrapped in a Tensor that needs no grad."""
    return jax.tree.map(_wrap, tree, is_leaf=_is_tensor)


def primal_of(x):
    """What a differentiation tracer left behind by a finished transform stands for (e.g. a value written
    into captured state under `jax.grad`): its primal, the value eager code computes."""
    while isinstance(x, jax.core.Tracer) and hasattr(x, "primal"):
        x = x.primal
    return x


def pure(func: Callable, kwargs: dict | None = None, *, record: bool | None = None) -> Callable:
    """`func` (Tensors in, Tensors out) as a function of arrays and pytrees of arrays.

    It runs as code whose derivative JAX takes: a grad mode set outside does not stop JAX's gradients
    inside (as `torch.func` ignores an enclosing `no_grad`), while the user's own `no_grad` regions
    inside still do. `record=False` also keeps the tape off (nothing to record when JAX differentiates).
    """
    kwargs = kwargs or {}

    def f(*args, **kw):
        saved = (state.grad_enabled, state.stop_traced)
        state.stop_traced = False
        if record is not None:
            state.grad_enabled = record
        try:
            out = func(*to_tensors(args), **to_tensors(kw), **kwargs)
        finally:
            state.grad_enabled, state.stop_traced = saved
        return to_arrays(out)

    return f
