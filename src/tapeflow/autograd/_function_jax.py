"""Custom Functions under JAX differentiation.

When a Function runs on Tensors that wrap JAX tracers (inside `tp.func`,
`jax.grad` of a tapeflow function, `jax.jit`, `jax.vmap`), its outputs are
passed through a `jax.custom_vjp` identity whose backward is the user's
`backward`. JAX then differentiates the Function with the hand-written rule
(as the tape does) instead of differentiating `forward`'s ops, so rules that
change the gradient on purpose (gradient scaling, straight-through) hold
under JAX transforms too.

The forward has already run; its outputs and saved tensors enter the identity
as arguments, so nothing is recomputed and no tracer is closed over. JAX's forward mode (`jax.jvp`, `jacfwd`) does not apply to a
`custom_vjp`; as with `torch.func`, use reverse-mode transforms there.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from xla_ops import broadcast_axes, unbroadcast

from .._state import state
from .._tensor import Tensor, _is_float_array

__all__ = ["attach_custom_vjp", "traced_applies"]

#: Incremented each time a Function runs on traced inputs (the functional API's fast path
#: checks it to send such functions to the tape, which also covers forward-mode transforms).
traced_applies = [0]


def _conj(a):
    return a.conj() if a.dtype.kind == "c" else a


def _zeros_cotangent(a):
    if a is None:
        return None
    if _is_float_array(a):
        return jnp.zeros(a.shape, a.dtype)
    return np.zeros(a.shape, jax.dtypes.float0)


def _invalid_grad(name: str, i: int, got, shape) -> RuntimeError:
    return RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got {list(got)} but expected "
                        f"shape compatible with {list(shape)}. Return a gradient with the shape of the corresponding "
                        "forward input.")


def _fit(g, x, name: str, i: int):
    """Sum a broadcast gradient down to `x`'s shape and cast it to `x`'s dtype."""
    if g.shape != x.shape and broadcast_axes(g.shape, x.shape) is None:
        raise _invalid_grad(name, i, g.shape, x.shape)
    return unbroadcast(g, x)


def attach_custom_vjp(cls, ctx, args: tuple, result, backward) -> None:
    """Route JAX's gradient of `result`'s tensors through `backward` (in place on `result`)."""
    traced_applies[0] += 1
    res = result if isinstance(result, tuple) else (result,)
    in_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    out_pos = [k for k, r in enumerate(res) if isinstance(r, Tensor)]
    saved = [None if e is None else e[0] for e in (ctx._saved or ())]
    attrs = dict(ctx.__dict__)
    name = ctx.name()

    @jax.custom_vjp
    def ident(ins, outs, sv):
        return outs

    def fwd(ins, outs, sv):
        return outs, (ins, outs, sv)

    def bwd(residual, gs):
        ins, outs, sv = residual
        jctx = cls._backward_cls()
        jctx.__dict__.update(attrs)
        jctx._saved = tuple(None if a is None else (Tensor._make(a, None, 0, False), _Fixed, 0, None) for a in sv)
        jctx._freed = False
        grads_out = [None] * len(res)
        for k, o, g in zip(out_pos, outs, gs):
            # `backward` is written in PyTorch's complex convention: JAX's cotangents are its conjugates.
            grads_out[k] = Tensor._wrap(_conj(g)) if _is_float_array(o) else None
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            r = backward(jctx, *grads_out)
        finally:
            state.grad_enabled = prev
        r = r if isinstance(r, tuple) else (r,)
        if len(r) > len(args) and all(x is None for x in r[len(args):]):
            r = r[:len(args)]
        if len(r) != len(args):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {len(args)}, "
                               f"got {len(r)}). Return one gradient per forward input, None for inputs that are "
                               "not tensors or need no gradient.")
        gin = []
        for i, x in zip(in_pos, ins):
            gi = r[i]
            if gi is None or not _is_float_array(x):
                gin.append(_zeros_cotangent(x))
            else:
                gin.append(_conj(_fit(gi._data if isinstance(gi, Tensor) else jnp.asarray(gi), x, name, i)))
        return (tuple(gin), tuple(_zeros_cotangent(o) for o in outs), tuple(_zeros_cotangent(a) for a in sv))

    ident.defvjp(fwd, bwd)
    # Outputs and saved values enter as arguments (no closure over tracers). Their cotangents are
    # zero, so first-order gradients come from `backward` alone; they stay differentiable because
    # a higher-order gradient differentiates `backward` through the saved values.
    new = ident(tuple(args[i]._data for i in in_pos),
                tuple(res[k]._data for k in out_pos),
                tuple(None if s is None else s._data for s in saved))
    for k, arr in zip(out_pos, new):
        res[k]._data = arr


class _FixedStorage:
    """A storage whose version never changes (saved values inside JAX's backward are immutable)."""

    version = 0


_Fixed = _FixedStorage()
