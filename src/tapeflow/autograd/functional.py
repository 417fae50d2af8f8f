"""`tapeflow.autograd.functional`: vjp, jvp, jacobian, hessian, vhp, hvp of a
user function, with PyTorch's signatures and result shapes.

Two implementations give the same numbers:

- the fast path traces the function once (Tensors wrapping JAX tracers),
  applies a JAX transform (`jax.vjp`, `jax.jvp`, `jax.jacrev`/`jacfwd`,
  forward-over-reverse for second order) and compiles it with `jax.jit`,
  staged and cached like every implicit program (see `tapeflow._staging`):
  captured state is an input, in-place writes to it are written back, random
  draws advance the generator; a key is compiled on its second call;
- the tape path differentiates with `autograd.grad`. It is used for
  `create_graph=True` (results stay connected to the graph), `strict=True`,
  and functions whose Python depends on tensor values (`.item()`,
  `if x > 0`), which cannot be traced.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp

from .._staging import pure
from .._staging.implicit import FAILED, MISS, Implicit, uncached
from .._tensor import Tensor
from . import _functional_tape as tape
from ._functional_tape import as_tuple, check_float_inputs, check_v

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_cache = Implicit("autograd.functional")


class _Unsupported(Exception):
    """The fast path does not apply (the tape path gives the answer, or PyTorch's error)."""


# PyTorch's messages (the missing space in "isonly" included).
_STRATEGY = 'Expected strategy to be either "forward-mode" or "reverse-mode".'
_STRATEGY_HINT = (' Hint: If your function has more outputs than inputs, "forward-mode" tends to be more performant. '
                  'Otherwise, prefer to use "reverse-mode".')
_FWD_CREATE_GRAPH = ('torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` are not '
                     'supported together (yet). Please either set `create_graph=False` or `strategy="reverse-mode"`.')
_FWD_STRICT = ('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not supported '
               'together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
_FWD_VECTORIZE = ("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly implemented for "
                  "`vectorize=True`.")


def _staged(func, kind, prog, tensors: tuple):
    """`prog(g, *arrays)` as a staged program, `g` being `func` on arrays (see `_staging.implicit`)."""
    if any(t.dtype.is_complex for t in tensors if isinstance(t, Tensor)):
        raise _Unsupported("complex inputs: the tape gives PyTorch's conjugate-Wirtinger gradients")
    out = _cache.run(func, kind, _body(prog), tensors)
    if out is FAILED:
        raise _Unsupported("the function cannot be staged")
    if out is MISS:
        try:
            with uncached():
                out = prog(_array_function(func), *_arrays(tensors))
        except Exception as e:  # noqa: BLE001 - the tape path gives the answer, or PyTorch's error
            raise _Unsupported(str(e)) from e
    return out


def _body(prog):
    def body(f, *ts):
        return prog(_array_function(f), *_arrays(ts))
    return body


def _array_function(func):
    """`func` on arrays, returning an array or a tuple of arrays (other outputs: the tape path reports them)."""
    f = pure(func, record=False)

    def g(*arrays):
        out = f(*arrays)
        leaves = out if isinstance(out, tuple) else (out,)
        if not all(isinstance(o, (jax.Array, jax.core.Tracer)) for o in leaves):
            raise _Unsupported("outputs other than a Tensor or a tuple of Tensors")
        return out
    return g


# -- argument handling ------------------------------------------------------------------------
def _as_tuple(x, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """`as_tuple`; the inputs (differentiated) must also be floating point or complex, checked after all types."""
    is_tuple, xs = as_tuple(x, arg_name, fn_name)
    if arg_name == "inputs":
        check_float_inputs(xs)
    return is_tuple, xs


def _is_tensors(v) -> bool:
    return isinstance(v, Tensor) or (isinstance(v, tuple) and all(isinstance(e, Tensor) for e in v))


def _construct_standard_basis_for(tensors: tuple, tensor_numels: tuple) -> tuple:
    """The columns of the `N x N` identity (`N = sum(tensor_numels)`), split into one block per tensor.

    Block `k` has shape `(N, tensor_numels[k])` and the dtype of `tensors[k]`; its ones sit in the rows
    that belong to tensor `k` (the rows of the tensors before it come first). A private helper of
    PyTorch's module, kept for programs and tests that call it."""
    if len(tensors) != len(tensor_numels):
        raise AssertionError(f"Expected tensors and tensor_numels to have the same length, but got {len(tensors)} "
                             f"and {len(tensor_numels)}")
    if len(tensors) == 0:
        raise AssertionError("Expected at least one tensor")
    total = sum(tensor_numels)
    rows = jnp.arange(total)[:, None]
    blocks, first = [], 0
    for t, n in zip(tensors, tensor_numels):
        blocks.append(Tensor._wrap((rows == first + jnp.arange(n)[None, :]).astype(t._data.dtype)))
        first += n
    return tuple(blocks)


def _post(res, is_tuple_flags):
    """Undo the tuple normalisation: one flag per nesting level (outer first)."""
    if isinstance(is_tuple_flags, bool):
        return res if is_tuple_flags else res[0]
    outer, inner = is_tuple_flags
    if not inner:
        res = tuple(r[0] for r in res)
    return res if outer else res[0]


def _input_v(v, xs: tuple, fn_name: str, in_tuple: bool = True) -> tuple:
    """`v` of a product in the inputs' shapes (jvp, vhp, hvp): checked against `xs`, or ones when omitted."""
    if v is None:
        if len(xs) != 1 or xs[0]._data.size != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        return (Tensor._wrap(jnp.ones(xs[0]._data.shape, xs[0]._data.dtype)),)
    vs = _as_tuple(v, "v", fn_name)[1]
    check_v(vs, xs, in_tuple)
    return vs


def _fast(create_graph: bool, strict: bool) -> bool:
    return not create_graph and not strict


def _wrap(arrays) -> tuple:
    return tuple(Tensor._wrap(a) for a in arrays)


def _arrays(ts) -> tuple:
    return tuple(t._data for t in ts)


# -- vjp / jvp ------------------------------------------------------------------------------------
def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The vector-Jacobian product `v^T J` of `func` at `inputs`.

    Arguments:
        func: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: the vector (same shapes as `func`'s outputs); may be omitted when the
            output has a single element.
        create_graph: keep the results connected to the graph (higher order).
        strict: raise if an output does not depend on an input (instead of zeros).

    Returns:
        `(func_output, vjp)`; `vjp` has the structure of `inputs`.

    Example:
        >>> import tapeflow as tp
        >>> out, g = tp.autograd.functional.vjp(lambda x: (x ** 2).sum(), tp.tensor([1.0, 2.0]))
        >>> g
        tensor([2., 4.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
    if _fast(create_graph, strict) and (v is None or _is_tensors(v)):  # (else the tape path reports v's type)
        try:
            return _vjp_fast(func, in_tuple, xs, None if v is None else as_tuple(v, "v", "vjp")[1])
        except _Unsupported:
            pass
    return tape.vjp(func, in_tuple, xs, v, create_graph, strict)


def _vjp_prog(n, g, *args):
    xs, v = args[:n], args[n:]
    out, pull = jax.vjp(g, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    if not v:
        if len(outs) != 1 or outs[0].size != 1:
            raise _Unsupported("v is required")
        v = (jnp.ones(outs[0].shape, outs[0].dtype),)
    if len(v) != len(outs) or any(a.shape != b.shape for a, b in zip(v, outs)):
        raise _Unsupported("v does not match the outputs")
    return out, pull(tuple(v) if isinstance(out, tuple) else v[0])


def _vjp_fast(func, in_tuple, xs, vs):
    n = len(xs)
    out, grads = _staged(func, ("vjp", n), functools.partial(_vjp_prog, n), (*xs, *(vs or ())))
    out_t = out if isinstance(out, tuple) else (out,)
    return _post(_wrap(out_t), isinstance(out, tuple)), _post(_wrap(grads), in_tuple)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The Jacobian-vector product `J v` of `func` at `inputs`.

    Arguments:
        func: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: the tangent (same shapes as `inputs`); may be omitted for a single one-element input.
        create_graph: keep the results connected to the graph.
        strict: raise if an output does not depend on an input.

    Returns:
        `(func_output, jvp)`; `jvp` has the structure of the outputs.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([1.0, 2.0])
        >>> out, t = tp.autograd.functional.jvp(lambda x: x ** 2, x, tp.ones(2))
        >>> t
        tensor([2., 4.])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
    vs = _input_v(v, xs, "jvp", in_tuple)
    if _fast(create_graph, strict):
        try:
            out, tan = _staged(func, "jvp", _jvp_prog, (*xs, *vs))
            is_t = isinstance(out, tuple)
            out_t, tan_t = (out, tan) if is_t else ((out,), (tan,))
            return _post(_wrap(out_t), is_t), _post(_wrap(tan_t), is_t)
        except _Unsupported:
            pass
    return tape.jvp(func, in_tuple, xs, vs, create_graph, strict)


def _jvp_prog(g, *args):
    n = len(args) // 2
    return jax.jvp(g, args[:n], args[n:])


# -- jacobian -----------------------------------------------------------------------------------
_STRATEGIES = ("forward-mode", "reverse-mode")


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of `func` at `inputs`: entry `[i][j]` has shape `out_i.shape + in_j.shape`.

    Arguments:
        func: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: keep the results connected to the graph (higher order).
        strict: raise if an output does not depend on an input.
        vectorize: accepted for compatibility (the compiled path is always vectorised);
            not together with `strict=True` (RuntimeError, as in PyTorch).
        strategy: `"reverse-mode"` (rows by VJPs) or `"forward-mode"` (columns by JVPs).
            As in PyTorch, forward-mode needs `vectorize=True` and refuses `create_graph=True`
            (NotImplementedError) and `strict=True` (RuntimeError); another value is an
            AssertionError.

    Returns:
        A Tensor, or nested tuples following the tuple-ness of outputs (outer) and inputs (inner).

    Example:
        >>> import tapeflow as tp
        >>> J = tp.autograd.functional.jacobian(lambda x: x[:2] * 3, tp.ones(4))
        >>> J.shape
        tapeflow.Size([2, 4])
    """
    if strategy not in _STRATEGIES:
        raise AssertionError(_STRATEGY + _STRATEGY_HINT)
    if strategy == "forward-mode":
        in_tuple, xs = _forward_mode_checks(inputs, "jacobian", create_graph, strict, vectorize)
    else:
        in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
        if strict and vectorize:  # refused once the outputs passed the strict checks (PyTorch's order)
            return tape.jacobian(func, in_tuple, xs, create_graph, strict, vectorize)
    if _fast(create_graph, strict):
        try:
            jac = _staged(func, ("jacobian", strategy), _jacobian_prog(strategy), xs)
            # One tuple per output when the function returns a tuple, else one array per input.
            out_is_tuple = bool(jac) and isinstance(jac[0], tuple)
            rows = jac if out_is_tuple else (jac,)
            return _post(tuple(_wrap(row) for row in rows), (out_is_tuple, in_tuple))
        except _Unsupported:
            pass
    return tape.jacobian(func, in_tuple, xs, create_graph, strict)


def _forward_mode_checks(inputs, fn_name: str, create_graph: bool, strict: bool, vectorize: bool):
    """PyTorch's refusals for a forward-mode (outer) Jacobian, in its order; then the inputs."""
    if create_graph:
        raise NotImplementedError(_FWD_CREATE_GRAPH)
    if strict:
        raise RuntimeError(_FWD_STRICT)
    in_tuple, xs = as_tuple(inputs, "inputs", fn_name)
    if not vectorize:
        raise NotImplementedError(_FWD_VECTORIZE)
    for x in xs:  # PyTorch makes each input a dual tensor (`forward_ad.make_dual`'s message)
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise ValueError(f"Expected primal to be floating point or complex, but got: {x.dtype}")
    return in_tuple, xs


def _jacobian_prog(strategy: str):
    transform = jax.jacfwd if strategy == "forward-mode" else jax.jacrev

    def prog(g, *args):
        return transform(g, argnums=tuple(range(len(args))))(*args)
    return prog


# -- second order -----------------------------------------------------------------------------
def _scalar(g, what: str, aux: bool = False):
    """`g` as a 0-d function: one Tensor (not a tuple, even of one) with a single element.

    With `aux`, `(0-d value, the output as returned)`."""
    def s(*a):
        out = g(*a)
        if isinstance(out, tuple):
            raise RuntimeError(f"The function given to {what} should return a single Tensor")
        if out.size != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {what} should contain a single "
                               "element")
        return (out.reshape(()), out) if aux else out.reshape(())
    return s


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function: entry `[i][j]` has shape `in_i.shape + in_j.shape`.

    Arguments:
        func: a function of Tensors returning a Tensor with a single element.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: keep the results connected to the graph.
        strict: raise if the output does not depend on an input.
        vectorize: accepted for compatibility (the compiled path is always vectorised);
            not together with `strict=True` (RuntimeError, as in PyTorch).
        outer_jacobian_strategy: `"reverse-mode"` or `"forward-mode"` (the latter with the
            refusals of `jacobian`'s forward mode, as in PyTorch). The result is the same exact
            Hessian: the compiled path always uses forward-over-reverse, the tape path
            reverse-over-reverse.

    Returns:
        A Tensor, or a tuple of tuples for tuple inputs.

    Example:
        >>> import tapeflow as tp
        >>> tp.autograd.functional.hessian(lambda x: (x ** 2).sum(), tp.ones(2))
        tensor([[2., 0.],
                [0., 2.]])
    """
    # PyTorch's order: the inputs' types, the strategy, then its outer jacobian's checks
    in_tuple, xs = as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError(_STRATEGY)
    if outer_jacobian_strategy == "forward-mode":
        _forward_mode_checks(inputs, "hessian", create_graph, strict, vectorize)
    check_float_inputs(xs)
    if _fast(create_graph, strict):
        try:
            h = _staged(func, "hessian", _hessian_prog, xs)
            return _post(tuple(_wrap(row) for row in h), (in_tuple, in_tuple))
        except _Unsupported:
            pass
    return tape.hessian(func, in_tuple, xs, create_graph, strict, outer_jacobian_strategy, vectorize)


def _hessian_prog(g, *args):
    argnums = tuple(range(len(args)))
    return jax.jacfwd(jax.jacrev(_scalar(g, "hessian"), argnums=argnums), argnums=argnums)(*args)


def _second(kind: str, func, inputs, v, create_graph, strict):
    in_tuple, xs = _as_tuple(inputs, "inputs", kind)
    vs = _input_v(v, xs, kind, in_tuple)
    if _fast(create_graph, strict):
        try:
            out, prod = _staged(func, kind, functools.partial(_second_prog, kind), (*xs, *vs))
            return Tensor._wrap(out), _post(_wrap(prod), in_tuple)
        except _Unsupported:
            pass
    return tape.second(kind, func, in_tuple, xs, vs, create_graph, strict)


def _second_prog(kind, g, *args):
    """`(output in its own shape, product)`: the output rides along as the gradient's auxiliary value."""
    n = len(args) // 2
    grad = jax.grad(_scalar(g, kind, aux=True), argnums=tuple(range(n)), has_aux=True)
    if kind == "hvp":
        _, prod, out = jax.jvp(grad, args[:n], args[n:], has_aux=True)
    else:
        _, pull, out = jax.vjp(grad, *args[:n], has_aux=True)
        prod = pull(tuple(args[n:]))
    return out, prod


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The vector-Hessian product `v^T H` of a scalar function.

    Arguments:
        func: a function of Tensors returning a single-element Tensor.
        inputs: a Tensor or a tuple of Tensors.
        v: the vector (shapes of `inputs`); may be omitted for a single one-element input.
        create_graph: keep the results connected to the graph.
        strict: raise if the output does not depend on an input.

    Returns:
        `(func_output, vhp)`; `vhp` has the structure of `inputs`.

    Example:
        >>> import tapeflow as tp
        >>> _, p = tp.autograd.functional.vhp(lambda x: (x ** 3).sum(), tp.tensor([1.0, 2.0]), tp.ones(2))
        >>> p
        tensor([ 6., 12.])
    """
    return _second("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The Hessian-vector product `H v` of a scalar function.

    Arguments:
        func: a function of Tensors returning a single-element Tensor.
        inputs: a Tensor or a tuple of Tensors.
        v: the vector (shapes of `inputs`); may be omitted for a single one-element input.
        create_graph: keep the results connected to the graph.
        strict: raise if the output does not depend on an input.

    Returns:
        `(func_output, hvp)`; `hvp` has the structure of `inputs`.

    Example:
        >>> import tapeflow as tp
        >>> _, p = tp.autograd.functional.hvp(lambda x: (x ** 3).sum(), tp.tensor([1.0, 2.0]), tp.ones(2))
        >>> p
        tensor([ 6., 12.])
    """
    return _second("hvp", func, inputs, v, create_graph, strict)

