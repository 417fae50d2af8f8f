"""The tape implementations behind `autograd.functional`: `autograd.grad` on a
freshly recorded graph. Used for `create_graph=True` (results stay on the
tape), `strict=True`, and functions that cannot be traced by JAX.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._state import state
from .._tensor import Tensor, _is_float_array
from .backward import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "second", "check_v", "as_tuple", "check_float_inputs"]


class _enable_grad:
    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


def as_tuple(x, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """`(is_tuple, elements)` of a Tensor or a tuple of Tensors (`x` is the `arg_name` of `fn_name`), with
    PyTorch's TypeError for anything else (a list included)."""
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, el in enumerate(xs):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"{where} has type {type(el)}.")
    return is_tuple, xs


# PyTorch's message: its functional API makes each input require grad (`requires_grad_()`).
_NOT_FLOAT = "only Tensors of floating point dtype can require gradients"


def check_float_inputs(xs: tuple) -> None:
    """The inputs are differentiated: each must be floating point or complex."""
    for x in xs:
        if not _is_float_array(x._data):
            raise RuntimeError(_NOT_FLOAT)


#: PyTorch's message for `strict=True` with `vectorize=True` (also what `hessian` reports).
_STRICT_VECTORIZE = ("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                    "together. Please either set `strict=False` or `vectorize=False`.")


def _prep(xs: tuple, create_graph: bool) -> tuple:
    """Inputs to record on: connected to the caller's graph when `create_graph`, else fresh leaves."""
    check_float_inputs(xs)
    res = []
    for x in xs:
        if create_graph and x._requires_grad:
            res.append(x.view_as(x))
        else:
            res.append(Tensor._make(x._data, None, 0, True))
    return tuple(res)


def _call(func, xs: tuple, fn_name: str, strict: bool = False) -> tuple[bool, tuple]:
    is_tuple, outs = as_tuple(func(*xs), "outputs of the user-provided function", fn_name)
    for i, o in enumerate(outs):
        if strict and not o.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")
    return is_tuple, outs


def _post(res, is_tuple: bool):
    return res if is_tuple else res[0]


def _out(outs: tuple, create_graph: bool) -> tuple:
    return outs if create_graph else tuple(o.detach() for o in outs)


def _grads(outs, xs, gouts, create_graph: bool, strict: bool, independent: str, no_graph: str | None = None) -> tuple:
    """`autograd.grad` of `outs` w.r.t. `xs`; unused inputs give zeros (or the error `independent` when `strict`).

    With `no_graph` (a message), strict mode also rejects a gradient that does not depend on the inputs:
    it would have no graph to differentiate further."""
    diff = [(o, g) for o, g in zip(outs, gouts) if o._requires_grad]
    if diff:
        res = _grad(tuple(o for o, _ in diff), xs, tuple(g for _, g in diff), retain_graph=True,
                    create_graph=create_graph, allow_unused=True)
    else:
        res = (None,) * len(xs)
    final = []
    for i, (r, x) in enumerate(zip(res, xs)):
        if r is None:
            if strict:
                raise RuntimeError(independent.format(i=i))
            r = Tensor._wrap(jnp.zeros(x._data.shape, x._data.dtype))
        elif strict and no_graph is not None and not r._requires_grad:
            raise RuntimeError(no_graph.format(i=i))
        final.append(r if create_graph else r.detach())
    return tuple(final)


# PyTorch's messages, by where strict mode finds the independence.
_INDEPENDENT = ("The output of the user-provided function is independent of input {i}. This is not allowed in "
                "strict mode.")
_JACOBIAN_INDEPENDENT = ("The jacobian of the user-provided function is independent of input {i}. This is not "
                         "allowed in strict mode.")
_NO_GRAPH = ("The jacobian of the user-provided function is independent of input {i}. This is not allowed in strict "
             "mode when create_graph=True.")
_HESSIAN_NO_GRAPH = ("The hessian of the user-provided function is independent of input {i}. This is not allowed in "
                     "strict mode when create_graph=True.")
_GRAD_INPUT_NO_GRAPH = ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                        "function. This is not allowed in strict mode.")
_BACK_TRICK = ("The gradient with respect to the input is independent of entry {i} in the grad_outputs when using the "
               "double backward trick to compute forward mode gradients. This is not allowed in strict mode.")
_HVP_TRICK = ("The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. This is "
              "not allowed in strict mode as it prevents from using the double backward trick to replace forward "
              "mode AD.")
_JACOBIAN_NO_GRAPH = ("While computing the hessian, found that the jacobian of the user-provided function with "
                      "respect to input {i} is independent of the input. This is not allowed in strict mode. You "
                      "should ensure that your function is twice differentiable and that the jacobian depends on "
                      "the inputs (this would be violated by a linear function for example).")


def vjp(func, in_tuple, xs, v, create_graph, strict):
    """`v` as given: PyTorch checks its type once the function has run."""
    with _enable_grad():
        ins = _prep(xs, create_graph)
        out_tuple, outs = _call(func, ins, "vjp", strict)
        vs = None if v is None else as_tuple(v, "v", "vjp")[1]
        if vs is None:
            if len(outs) != 1 or outs[0]._data.size != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = (Tensor._wrap(jnp.ones(outs[0]._data.shape, outs[0]._data.dtype)),)
        check_v(vs, outs, out_tuple)
        g = _grads(outs, ins, vs, create_graph, strict, _INDEPENDENT, _NO_GRAPH if create_graph else None)
    return _post(_out(outs, create_graph), out_tuple), _post(g, in_tuple)


def check_v(vs: tuple, ref: tuple, ref_is_tuple: bool = True) -> None:
    """`v` must match `ref` (given as a tuple, or as one tensor) in length and shapes (PyTorch's messages)."""
    if len(vs) != len(ref):
        if not ref_is_tuple:
            raise RuntimeError("The given v should contain a single Tensor.")
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(ref)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, ref)):
        if tuple(a.shape) != tuple(b.shape):
            entry = f"Entry {i} in " if ref_is_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {b.shape} but got {a.shape}.")


def jvp(func, in_tuple, xs, vs, create_graph, strict):
    # The double-backward trick: J v = d/du <J^T u, v>, with a dummy cotangent u.
    with _enable_grad():
        ins = _prep(xs, create_graph)
        out_tuple, outs = _call(func, ins, "jvp", strict)
        us = tuple(Tensor._make(jnp.zeros(o._data.shape, o._data.dtype), None, 0, True) for o in outs)
        gs = _grads(outs, ins, us, True, strict, _INDEPENDENT, _GRAD_INPUT_NO_GRAPH)
        tangents = _grads(gs, us, vs, create_graph, strict, _BACK_TRICK, _NO_GRAPH if create_graph else None)
    return _post(_out(outs, create_graph), out_tuple), _post(tangents, out_tuple)


def _jac_rows(outs, ins, create_graph, strict):
    """Jacobian blocks `[i][j]` (`out_i.shape + in_j.shape`), one VJP per output element."""
    blocks = []
    for i, o in enumerate(outs):
        n = o._data.size
        if o.dtype.is_complex:  # PyTorch differentiates each element as an implicit scalar output
            raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {o.dtype}")
        rows = [[] for _ in ins]
        for k in range(n):
            onehot = Tensor._wrap(jnp.zeros(n, o._data.dtype).at[k].set(1).reshape(o._data.shape))
            msg = (f"Output {i} of the user-provided function is independent of input {{i}}. This is not allowed "
                   "in strict mode.")
            gs = _grads((o,), ins, (onehot,), create_graph, strict, msg, _NO_GRAPH if create_graph else None)
            for j, g in enumerate(gs):
                rows[j].append(g)
        row = []
        for j, x in enumerate(ins):
            if n == 0:
                row.append(Tensor._wrap(jnp.zeros(tuple(o.shape) + tuple(x.shape), x._data.dtype)))
                continue
            from .._ops import stack

            row.append(stack(rows[j]).reshape(tuple(o.shape) + tuple(x.shape)))
        blocks.append(tuple(row))
    return tuple(blocks)


def jacobian(func, in_tuple, xs, create_graph, strict, vectorize=False):
    """With `strict` and `vectorize`, PyTorch's refusal comes once the outputs passed the strict checks."""
    with _enable_grad():
        ins = _prep(xs, create_graph)
        out_tuple, outs = _call(func, ins, "jacobian", strict)
        if strict and vectorize:
            raise RuntimeError(_STRICT_VECTORIZE)
        blocks = _jac_rows(outs, ins, create_graph, strict)
    if not in_tuple:
        blocks = tuple(b[0] for b in blocks)
    return blocks if out_tuple else blocks[0]


def _scalar_out(func, ins, fn_name, strict=False):
    """`(output, output as a 0-d tensor)`: one Tensor (not a tuple, even of one) with a single element."""
    out_tuple, outs = _call(func, ins, fn_name, strict)
    if out_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outs[0]._data.size != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outs[0], outs[0].reshape(())


def hessian(func, in_tuple, xs, create_graph, strict, outer_strategy, vectorize=False):
    with _enable_grad():
        ins = _prep(xs, create_graph)
        _, out = _scalar_out(func, ins, "hessian", strict)
        # (PyTorch's inner jacobian is not strict: a gradient that is None there is zeros without a graph)
        gs = _grads((out,), ins, (None,), True, strict, _JACOBIAN_NO_GRAPH, _JACOBIAN_NO_GRAPH)
        if strict and vectorize:  # PyTorch's outer jacobian refuses once the first gradients passed the checks
            raise RuntimeError(_STRICT_VECTORIZE)
        blocks = _jac_rows(gs, ins, create_graph, strict)
    if not in_tuple:
        blocks = tuple(b[0] for b in blocks)
    return blocks if in_tuple else blocks[0]


def second(kind, func, in_tuple, xs, vs, create_graph, strict):
    """`vhp` (`v^T H`) or `hvp` (`H v`); equal for the symmetric Hessian of a twice-differentiable function.

    The output keeps its shape (a `(1, 1)` output stays `(1, 1)`), as in PyTorch."""
    with _enable_grad():
        ins = _prep(xs, create_graph)
        out, scalar = _scalar_out(func, ins, kind, strict)
        gs = _grads((scalar,), ins, (None,), True, strict, _INDEPENDENT, _JACOBIAN_NO_GRAPH)
        independent = _JACOBIAN_INDEPENDENT if kind == "vhp" else _HVP_TRICK
        prods = _grads(gs, ins, vs, create_graph, strict, independent, _HESSIAN_NO_GRAPH if create_graph else None)
    return (out if create_graph else out.detach()), _post(prods, in_tuple)
