"""`to_equinox`: a tapeflow `nn.Module` as an `equinox.Module` for pure JAX code."""

from __future__ import annotations

import contextlib
import functools

import jax

from .._tensor import Tensor
from .convert import _array_to_tensor, _tensor_to_array

__all__ = ["to_equinox", "bound_arrays"]


@contextlib.contextmanager
def bound_arrays(module, params: dict, buffers: dict):
    """Temporarily make `module`'s named parameters and buffers hold the given arrays.

    Arguments:
        module: a tapeflow `nn.Module`.
        params: `{name: array}` for (some of) its parameters.
        buffers: `{name: array}` for (some of) its buffers.

    Returns:
        A context manager; the original arrays (and `.grad`s) are restored on exit.

    Example:
        >>> import jax.numpy as jnp, tapeflow as tp
        >>> lin = tp.nn.Linear(2, 1)
        >>> arrays = {"weight": jnp.ones((1, 2), jnp.float32), "bias": jnp.zeros(1, jnp.float32)}
        >>> with tp.interop.equinox_bridge.bound_arrays(lin, arrays, {}):
        ...     lin(tp.ones(1, 2))
        tensor([[2.]], grad_fn=<AddmmBackward0>)
    """
    named = dict(module.named_parameters())
    named.update(module.named_buffers())
    saved = []
    try:
        for name, arr in (*params.items(), *buffers.items()):
            t = named.get(name)
            if t is None:
                raise KeyError(f"{type(module).__name__} has no parameter or buffer named {name!r}")
            if tuple(jax.numpy.shape(arr)) != tuple(t._data.shape):
                raise ValueError(f"{name}: expected an array of shape {tuple(t._data.shape)}, got "
                                 f"{tuple(jax.numpy.shape(arr))}; under jax.vmap, map over the inputs, not the "
                                 "parameters")
            saved.append((t, t._data, t._grad))
            t._data = arr
        yield module
    finally:
        for t, data, grad in reversed(saved):
            t._data = data
            t._grad = grad


class _Opaque:
    """Holds the tapeflow model as one static (non-pytree) value, compared by identity.

    The model itself is a pytree of arrays, which equinox rejects as a static field.
    """

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Opaque) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)

    def __repr__(self):
        return f"{type(self.obj).__name__}(...)"


@functools.cache
def _equinox_class():
    try:
        import equinox as eqx
    except ImportError as e:
        raise ImportError("to_equinox needs equinox: pip install equinox") from e

    class TapeflowModule(eqx.Module):
        """A tapeflow model as an equinox module: `params`/`buffers` are arrays, the model is static."""

        params: dict
        buffers: dict
        static: _Opaque = eqx.field(static=True)

        @property
        def module(self):
            """The tapeflow model this module runs."""
            return self.static.obj

        def __call__(self, *args, **kwargs):
            """Run the tapeflow model's forward on arrays (or tracers); returns arrays."""
            args, kwargs = jax.tree.map(_array_to_tensor, (args, kwargs))
            with bound_arrays(self.module, self.params, self.buffers):
                out = self.module(*args, **kwargs)
                return jax.tree.map(_tensor_to_array, out, is_leaf=lambda x: isinstance(x, Tensor))

        def to_tapeflow(self):
            """Write this module's parameter and buffer arrays back into the tapeflow model; returns it."""
            named = dict(self.module.named_parameters())
            named.update(self.module.named_buffers())
            for name, arr in (*self.params.items(), *self.buffers.items()):
                named[name]._data = arr
            return self.module

    return TapeflowModule


def to_equinox(module):
    """An `equinox.Module` holding `module`'s parameters and buffers as arrays.

    Its `__call__` is the tapeflow model's forward on arrays, so it works with
    `eqx.filter_jit`, `eqx.filter_grad`, `jax.vmap` and optax; gradients with
    respect to `params` equal tapeflow's `.grad`s. The tapeflow model itself
    is a static field and is not modified by calls (buffer updates made in
    training mode, e.g. BatchNorm's running statistics, are discarded: use
    `eval()` or `tp.compile` for those). `result.to_tapeflow()` writes arrays
    (e.g. after training in JAX) back into the tapeflow model.

    Arguments:
        module: a tapeflow `nn.Module`.

    Returns:
        An `equinox.Module` with fields `params` and `buffers` (dicts `{name: jax.Array}`); `.module` is the
        tapeflow model.

    Example:
        >>> import equinox as eqx, jax.numpy as jnp, tapeflow as tp
        >>> model = tp.interop.to_equinox(tp.nn.Linear(3, 1))
        >>> grads = eqx.filter_grad(lambda m, x: m(x).sum())(model, jnp.ones((2, 3), jnp.float32))
        >>> grads.params["weight"].shape
        (1, 3)
    """
    cls = _equinox_class()
    params = {name: p._data for name, p in module.named_parameters()}
    buffers = {name: b._data for name, b in module.named_buffers()}
    return cls(params, buffers, _Opaque(module))
