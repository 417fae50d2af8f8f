"""Tensor hooks on traced values: applied to the cotangent inside the JAX program.

A hook registered on a Tensor that holds a JAX tracer puts an identity with a
custom VJP in front of every later use of the tensor, so under `jax.grad`,
`tapeflow.func` or the functional API the hook sees (and may replace) the
tensor's whole gradient, as the tape's hook does. The hook runs at trace
time on a traced gradient: it may compute with tensor ops, not read values.
"""

from __future__ import annotations

import functools

import jax

from .._tensor import Tensor

__all__ = ["hook_traced"]

_HOST_READS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
               jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError)


class _Hooks:
    """The hooks of one traced tensor, in registration order (hashable by identity for `custom_vjp`)."""

    __slots__ = ("fns", "__weakref__")

    def __init__(self):
        self.fns: dict = {}

    def apply(self, g):
        for fn in list(self.fns.values()):
            try:
                new = fn(Tensor._make(g, None, 0, False))
            except (*_HOST_READS, RuntimeError) as e:
                if isinstance(e, RuntimeError) and "traced" not in str(e):
                    raise
                name = getattr(fn, "__qualname__", repr(fn))
                raise RuntimeError(
                    f"The tensor hook {name} reads the gradient's values on the host, which is not possible while "
                    "JAX differentiates the function (under jax.grad / jax.jit, tapeflow.func or "
                    "autograd.functional the gradient is traced). Write the hook with tensor operations only, or "
                    "run the function on the tape (.backward() / autograd.grad).") from e
            if new is not None:
                g = new._data if isinstance(new, Tensor) else new
        return g


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _hooked(hooks, x):
    return x


def _hooked_fwd(hooks, x):
    # The value passes through the hook again, so that a derivative of this derivative (JAX differentiates
    # `fwd` as plain code) sees the hook on its way back through the tensor, as a double backward does.
    return _hooked(hooks, x), None


def _hooked_bwd(hooks, _, g):
    # JAX's cotangent of a complex tensor is the conjugate of the gradient a hook sees on the tape.
    return (_conj(hooks.apply(_conj(g))),)


def _conj(a):
    return a.conj() if a.dtype.kind == "c" else a


_hooked.defvjp(_hooked_fwd, _hooked_bwd)


def hook_traced(t: Tensor, hook):
    """Register `hook` on a tensor holding a tracer; return a handle whose `remove()` unregisters it."""
    from .graph import RemovableHandle

    hooks = getattr(t, "_traced_hooks", None)
    if hooks is None or t._data is not hooks[1]:
        box = _Hooks()
        t._data = _hooked(box, t._data)
        hooks = (box, t._data)
        t._traced_hooks = hooks
    handle = RemovableHandle(hooks[0].fns)
    hooks[0].fns[handle.id] = hook
    return handle
