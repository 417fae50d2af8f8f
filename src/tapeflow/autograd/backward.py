"""`backward` and `grad`: the entry points into the engine."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _toplevel
from .._tensor import Size, Tensor, TracedValueError
from ._edges import GradientEdge
from .engine import run_backward

__all__ = ["backward", "grad"]


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


_ONES: dict = {}


def _ones(shape, dtype):
    """The implicit gradient of a one-element output (cached: arrays are immutable)."""
    key = (shape, dtype)
    g = _ONES.get(key)
    if g is None:
        g = jnp.ones(shape, dtype)
        if not isinstance(g, jax.core.Tracer):
            _ONES[key] = g
    return g


def _edge_grad(edge: GradientEdge, g, i: int, create_graph: bool):
    """The gradient fed into a GradientEdge output: implicit (ones) for a scalar, else checked like a tensor's."""
    from .graph import AccumulateGrad

    if type(edge.node) is AccumulateGrad:
        v = edge.node.variable
        shape, dtype = tuple(v.shape), v._raw.dtype
    else:
        meta = edge.node._input_metadata[edge.output_nr]
        shape, dtype = tuple(meta.shape), meta.dtype.jax
    if g is None:
        if int(np.prod(shape, dtype=np.int64)) != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        g = _ones(shape, dtype)
        return Tensor._wrap(g) if create_graph else g
    if not isinstance(g, Tensor):
        from .._tensor import as_tensor

        g = as_tensor(g)
    if tuple(g.shape) != shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape "
                           f"of {Size(shape)}.")
    if g._raw.dtype != dtype:
        from .._dtype import from_jax_dtype

        want = from_jax_dtype(dtype)
        if g.dtype.is_complex or want.is_complex:
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the same "
                               f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] "
                               f"has a dtype of {want}.")
        g = g.to(want)
    return g if create_graph else g._data


def _roots(outputs, grad_outputs, create_graph, what):
    from .._dispatch import accumulator

    edges, grads = [], []
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{what}: got {len(grad_outputs)} gradients for {len(outputs)} outputs; "
                           "pass one gradient (or None) per output")
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(out, GradientEdge):  # a gradient edge as an output: checked against the node's metadata
            edges.append((out.node, out.output_nr))
            grads.append(_edge_grad(out, g, i, create_graph))
            continue
        if not isinstance(out, Tensor):
            raise TypeError(f"{what}: outputs must be Tensors, got {type(out).__name__} at position {i}")
        if out.grad_fn is None and not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out._raw.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs; pass `gradient=` "
                                   f"(a tensor of shape {list(out.shape)}) to backward, or reduce the output first "
                                   "(e.g. y.sum().backward())")
            if not out.dtype.is_floating_point:  # complex outputs too, as in PyTorch
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            g = _ones(out._raw.shape, out._raw.dtype)
            g = Tensor._wrap(g) if create_graph else g
        else:
            if not isinstance(g, Tensor):
                from .._tensor import as_tensor

                g = as_tensor(g, dtype=out.dtype)
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                                   f"has a shape of {out.shape}.")
            if g._raw.dtype != out._raw.dtype:
                g = g.to(out.dtype)
            g = g if create_graph else g._data
        edges.append((out.grad_fn, out._output_nr) if out.grad_fn is not None else (accumulator(out), 0))
        grads.append(g)
    return edges, grads


_CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak.")
_warned = [False]


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate gradients of `tensors` into the `.grad` of the leaves (or of `inputs`).

    Arguments:
        tensors: output tensor(s) to differentiate.
        grad_tensors: gradient w.r.t. each output; may be omitted for scalar outputs.
        retain_graph: keep saved tensors for another backward (default: `create_graph`).
        create_graph: record the backward pass, for higher-order derivatives.
        inputs: accumulate only into these tensors.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([1.0, 2.0], requires_grad=True)
        >>> tp.autograd.backward((x * x).sum()); x.grad
        tensor([2., 4.])
    """
    outputs = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(outputs)
    else:
        grad_tensors = _as_tuple(grad_tensors) if not isinstance(grad_tensors, (int, float)) else (grad_tensors,)
    if retain_graph is None:
        retain_graph = create_graph
    edges, grads = _roots(outputs, grad_tensors, create_graph, "backward")
    if create_graph and (not _warned[0] or _toplevel.is_warn_always_enabled()):  # once, as PyTorch's
        _warned[0] = True
        warnings.warn(_CREATE_GRAPH_CYCLE, UserWarning, stacklevel=2)
    inputs = _as_tuple(inputs) if inputs is not None else None
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if inputs is None:
        run_backward(edges, grads, retain_graph=retain_graph, create_graph=create_graph)
        return
    for t in inputs:
        if isinstance(t, Tensor) and not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    # The leaves' AccumulateGrad nodes run in the pass (hooks included); a tensor that is not a leaf gets the
    # gradient the pass captured for it.
    res = run_backward(edges, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=list(inputs),
                       capture=False, allow_unused=True)
    from .engine import accumulate

    for t, g in zip(inputs, res):
        if isinstance(t, GradientEdge) or t.grad_fn is None or g is None:
            continue
        accumulate(t, g if create_graph else (g._data if isinstance(g, Tensor) else g), create_graph,
                   run_hooks=False)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """Gradients of `outputs` w.r.t. `inputs`, returned (no `.grad` is touched).

    Arguments:
        outputs: tensor(s) to differentiate.
        inputs: tensor(s) to differentiate with respect to (leaves or intermediates).
        grad_outputs: gradient w.r.t. each output (omit for scalars).
        retain_graph: keep the graph for another pass (default: `create_graph`).
        create_graph: record the computation of the gradients, for higher order.
        allow_unused: return `None` for inputs the outputs do not depend on instead of raising.
        materialize_grads: return zeros instead of `None` for unused inputs.

    Returns:
        A tuple with one gradient per input.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor(3.0, requires_grad=True)
        >>> (dx,) = tp.autograd.grad(x ** 3, x, create_graph=True)
        >>> tp.autograd.grad(dx, x)
        (tensor(18.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    outs = _as_tuple(outputs)
    ins = tuple(inputs.values()) if type(inputs) is dict else _as_tuple(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in ins:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
    if grad_outputs is None:
        gouts = (None,) * len(outs)
    else:
        gouts = _as_tuple(grad_outputs) if not isinstance(grad_outputs, Tensor) else (grad_outputs,)
    if retain_graph is None:
        retain_graph = create_graph
    if materialize_grads:
        allow_unused = True
    edges, grads = _roots(outs, gouts, create_graph, "grad")  # (the outputs are checked first, as in PyTorch)
    if not all(t._requires_grad for t in ins if isinstance(t, Tensor)):
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    res = run_backward(edges, grads, retain_graph=retain_graph, create_graph=create_graph, inputs=list(ins),
                       capture=True, allow_unused=bool(allow_unused))
    if materialize_grads:
        from .._factories import zeros_like

        if any(r is None and isinstance(t, GradientEdge) for t, r in zip(ins, res)):
            raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
        res = tuple(zeros_like(t, requires_grad=create_graph) if r is None else r for t, r in zip(ins, res))
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), res))
    return res


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """`grad` for each slice of `grad_outputs` along its first dimension, stacked."""
    from .._ops import stack

    gouts = _as_tuple(grad_outputs) if not isinstance(grad_outputs, Tensor) else (grad_outputs,)
    if not gouts or any(g is None for g in gouts):
        raise RuntimeError("grad(is_grads_batched=True) needs grad_outputs with a leading batch dimension")
    if any(g.ndim == 0 for g in gouts):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    n = gouts[0].shape[0]
    if any(g.shape[0] != n for g in gouts):
        raise RuntimeError("grad(is_grads_batched=True): every grad_output needs the same batch size")
    for i, (o, g) in enumerate(zip(_as_tuple(outputs), gouts)):
        if isinstance(o, Tensor) and tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                               "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                               "shape of corresponding output, but a mismatch was detected: grad_output"
                               f"[{i}] has a shape of {Size(g.shape[1:])} and output[{i}] has a shape of "
                               f"{Size(o.shape)}. If you only want some tensors in `grad_output` to be considered "
                               "batched, consider using vmap.")
    if not create_graph:
        return _grad_vmapped(outputs, inputs, gouts, retain_graph, allow_unused, materialize_grads)
    # NOTE: with create_graph the results must join the tape, which a vmapped trace cannot: one backward each.
    per = []
    for i in range(n):
        keep = True if i < n - 1 else retain_graph
        per.append(grad(outputs, inputs, tuple(g[i] for g in gouts), retain_graph=keep, create_graph=create_graph,
                        allow_unused=allow_unused, materialize_grads=materialize_grads))
    return tuple(None if col[0] is None else stack(list(col)) for col in zip(*per))


def _grad_vmapped(outputs, inputs, gouts, retain_graph, allow_unused, materialize_grads):
    """One backward pass traced under `jax.vmap` over the cotangents' leading dimension."""
    def one(*gs):
        res = grad(outputs, inputs, tuple(Tensor._wrap(g) for g in gs), retain_graph=retain_graph,
                   allow_unused=allow_unused, materialize_grads=materialize_grads)
        return tuple(None if r is None else r._data for r in res)

    try:
        arrays = jax.vmap(one)(*(g._data for g in gouts))
    except (TracedValueError, jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
            jax.errors.TracerIntegerConversionError, jax.errors.TracerArrayConversionError) as e:
        raise RuntimeError("grad(is_grads_batched=True) runs the backward pass once under jax.vmap over the "
                           "cotangents, and a backward function or hook here reads values on the host (.item(), "
                           "bool(), numpy()). Make it vmap-friendly, or call grad once per cotangent with "
                           f"is_grads_batched=False. ({type(e).__name__})") from e
    return tuple(None if a is None else Tensor._wrap(a) for a in arrays)
