"""Custom autograd Functions: a forward written with tapeflow ops (or anything
else) and a hand-written backward.

`Function.apply` runs `forward` without recording, then hangs one backward
node over all tensor outputs. That node *is* the `ctx` the user saw in
`forward` (as in PyTorch), so values stored on `ctx` are readable from
`y.grad_fn` too. Its `apply` follows the engine contract: gradients arrive as
arrays (or Tensors under `create_graph`), are wrapped into Tensors for the
user's `backward`, which runs with grad mode equal to `create_graph` so a
backward written with differentiable tapeflow ops supports double backward.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from xla_ops import broadcast_axes

from .._dtype import from_jax_dtype
from .._state import state
from .._tensor import Tensor, _alias, _is_float_array
from . import forward_ad
from ._function_jax import _invalid_grad, attach_custom_vjp
from ._saved_hooks import Packed, SavedTensor, pack_tensors, unpack_tensor
from .graph import FREED_MESSAGE, Node, _version_error

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction"]


class FunctionCtx:
    """What `forward` (or `setup_context`) receives as `ctx`: a place to stash
    what `backward` will need.

    Tensors go through `save_for_backward` (so in-place changes are detected
    and memory is released after backward); any other value can be stored as
    an attribute (`ctx.coeff = 2.0`).
    """

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep `tensors` (inputs, outputs or intermediates; `None` allowed) for backward.

        Arguments:
            *tensors: the tensors to save. Read them back with `ctx.saved_tensors`.

        Example:
            >>> import tapeflow as tp
            >>> class Square(tp.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         ctx.save_for_backward(x)
            ...         return x * x
            ...     @staticmethod
            ...     def backward(ctx, g):
            ...         (x,) = ctx.saved_tensors
            ...         return 2 * x * g
            >>> x = tp.tensor([3.0], requires_grad=True)
            >>> Square.apply(x).backward(); x.grad
            tensor([6.])
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors, but argument {i} is of type "
                                f"{type(t).__name__}. Store other values as attributes on ctx instead "
                                "(ctx.value = ...).")
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep `tensors` for a `jvp` staticmethod (read back with `ctx.saved_tensors`)."""
        self.save_for_backward(*tensors)

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare that `forward` modified these input tensors in place (they must also be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that have no gradient: they do not require grad, and
        `backward` receives zeros for them."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether `None` output gradients reach `backward` as zero tensors (default `True`)."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The backward node of a custom Function (`<ClassName>Backward`); also its `ctx`."""

    _forward_cls: type = None  # set on the per-class subclass
    materialize_grads = True
    _materialize_non_diff_grads = True
    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()

    def __init__(self):
        Node.__init__(self)
        self.needs_input_grad: tuple = ()
        self._saved = None  # ((tensor, storage, version) or None, ...) once forward is done
        self._freed = False
        self._in_meta: tuple = ()
        self._fn_out_meta: tuple = ()

    # -- saved tensors -----------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to `save_for_backward` (checked against in-place changes)."""
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._saved is None:  # still inside forward/setup_context
            return tuple(self.to_save)
        out = []
        for entry in self._saved:
            if entry is None:
                out.append(None)
                continue
            t, st, version = entry
            packed = type(t) is Packed
            if st is not None and st.version != version:
                raise _version_error((st, version, None if packed else t), self)
            out.append(unpack_tensor(t) if packed else t)
        return tuple(out)

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The saved tensors as `SavedTensor`s (to register pack/unpack hooks on one of them)."""
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(SavedTensor(self, i) for i in range(len(self._saved or ())))

    def _saved_get(self, i):
        entry = self._saved[i]
        return None if entry is None else entry[0]

    def _saved_set(self, i, packed):
        t, st, version = self._saved[i]
        self._saved = (*self._saved[:i], (packed, st, version), *self._saved[i + 1:])

    @property
    def saved_variables(self) -> tuple:
        """Deprecated name of `saved_tensors`."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def _freeze_saved(self, recorded: bool = False) -> None:
        entries = []
        packed = pack_tensors(self.to_save) if recorded and state.saved_hooks else None
        for i, t in enumerate(self.to_save):
            if t is None:
                entries.append(None)
            else:
                st = t._st()
                # What saved-tensor hooks keep is theirs: no version check (PyTorch's rule).
                entries.append((t, st, st.version) if packed is None else (packed[i], None, None))
        self._saved = tuple(entries)
        self.to_save = ()

    def _release(self) -> None:
        if self._saved:
            self._freed = True
            self._saved = ()

    # -- backward ----------------------------------------------------------------------
    def apply(self, grads: list, create_graph: bool) -> tuple:
        cls = self._forward_cls
        backward = _user_backward(cls)
        if backward is None:
            raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                      f"autograd.Function to use it with backward mode AD ({cls.__name__} has neither).")
        gs = []
        for i, g in enumerate(grads):
            meta = self._fn_out_meta[i] if i < len(self._fn_out_meta) else None
            if g is None and meta is not None and self.materialize_grads and (
                    self._materialize_non_diff_grads or i >= len(self._out_meta) or self._out_meta[i] is not None):
                g = jnp.zeros(*meta)
            gs.append(None if g is None else (g if isinstance(g, Tensor) else Tensor._wrap(g)))
        prev = state.grad_enabled
        state.grad_enabled = create_graph
        try:
            res = backward(self, *gs)
        finally:
            state.grad_enabled = prev
        return self._check_grads(res, create_graph)

    def _check_grads(self, res, create_graph: bool) -> tuple:
        n = len(self.needs_input_grad)
        res = res if isinstance(res, tuple) else (res,)
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        if len(res) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(res)}). Return one gradient per forward input, "
                               "None for inputs that are not tensors or need no gradient.")
        out = []
        for i, (r, need, meta) in enumerate(zip(res, self.needs_input_grad, self._in_meta)):
            if r is None or not need:
                out.append(None)
                continue
            if not isinstance(r, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type {type(r).__name__} at "
                                f"index {i}; gradients must be Tensors or None")
            out.append(_fit_grad(self, i, r, meta, create_graph))
        return tuple(out)

    def __call__(self, *grads):
        return Node.__call__(self, *grads)


def _fit_grad(node, i, r: Tensor, meta, create_graph: bool):
    """Check a returned gradient's shape against input `i` (summing a broadcast one), cast its dtype."""
    shape, dtype = meta
    if tuple(r.shape) != shape:
        axes = broadcast_axes(tuple(r.shape), shape)
        if axes is None:
            raise _invalid_grad(node.name(), i, r.shape, shape)
        r = r.sum(dim=axes, keepdim=True) if axes else r
        r = r.reshape(shape)
    if r._data.dtype != dtype:
        r = r.to(from_jax_dtype(dtype))
    return r if create_graph else r._data


def _user_backward(cls) -> Callable | None:
    bwd = cls.backward
    if getattr(bwd, "_tapeflow_base", False):
        bwd = cls.vjp
        if getattr(bwd, "_tapeflow_base", False):
            return None
    return bwd


class _FunctionMeta(type):
    """Gives every Function subclass its own backward node class, `<Name>Backward`."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


def _base(fn):
    fn._tapeflow_base = True
    return staticmethod(fn)


class Function(metaclass=_FunctionMeta):
    """Base class for operations with a custom backward.

    Subclass it with staticmethods `forward(ctx, *args)` and
    `backward(ctx, *grad_outputs)` (or `forward(*args)` plus
    `setup_context(ctx, inputs, output)`), then call `MyFn.apply(*args)`.
    `backward` returns one gradient per `forward` input (`None` where there is
    none); it may use tapeflow ops, which makes double backward work.

    Example:
        >>> import tapeflow as tp
        >>> class Exp(tp.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, i):
        ...         result = i.exp()
        ...         ctx.save_for_backward(result)
        ...         return result
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (result,) = ctx.saved_tensors
        ...         return grad_output * result
        >>> x = tp.tensor([1.0], requires_grad=True)
        >>> y = Exp.apply(x); y
        tensor([2.7183], grad_fn=<ExpBackward>)
        >>> y.backward(); x.grad
        tensor([2.7183])
    """

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise an "
                      "error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)
        self._legacy = True

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           f"new-style autograd function with static forward method: {type(self).__name__}.apply(...)")

    @_base
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Compute the outputs (runs without recording). Override as a staticmethod."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @_base
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Optional: fill `ctx` from `inputs` and `output` when `forward` does not take `ctx`."""
        raise RuntimeError("setup_context is not overridden")

    @_base
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Gradients w.r.t. the forward inputs, given gradients w.r.t. its outputs. Override as a staticmethod."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    #: With `True`, `vmap` of this Function is derived by running it on batched values (tapeflow runs a
    #: Function under `jax.vmap` that way whatever the flag says); PyTorch's default is `False`.
    generate_vmap_rule = False

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """Optional: the batched rule (`torch.func.vmap` support). Without it, `generate_vmap_rule` decides."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @_base
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Optional: output tangents from input tangents, for forward-mode AD. Without it,
        forward-mode AD differentiates the ops `forward` runs."""
        raise RuntimeError("You must implement the jvp function for custom autograd.Function to use it with "
                           "forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the Function: `forward` without recording, then attach the backward node.

        Arguments:
            *args: the forward inputs (tensors and any other values).

        Returns:
            `forward`'s output, whose tensors carry `grad_fn=<ClassNameBackward>`.

        Example:
            >>> import tapeflow as tp
            >>> class Double(tp.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         return x * 2
            ...     @staticmethod
            ...     def backward(ctx, g):
            ...         return g * 2
            >>> Double.apply(tp.ones(2, requires_grad=True)).grad_fn.name()
            'DoubleBackward'
        """
        if getattr(cls.forward, "_tapeflow_base", False):
            raise NotImplementedError("You must implement the forward function for custom autograd.Function "
                                      f"({cls.__name__}): define `@staticmethod def forward(ctx, *args)`.")
        split = not getattr(cls.setup_context, "_tapeflow_base", False)
        if split:  # setup_context sees every forward argument, defaults included (PyTorch binds them too)
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.args), dict(bound.kwargs)
        ctx = cls._backward_cls()
        if state.anomaly:  # anomaly mode reports where the node was created
            import traceback
            ctx._trace = traceback.extract_stack()[:-1]
        record = state.grad_enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = tuple(record and isinstance(a, Tensor) and a._requires_grad for a in args)
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            if split:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            state.grad_enabled = prev
        result = _wrap_outputs(ctx, args, output, record)
        backward = _user_backward(cls)
        if backward is not None and any(isinstance(a, Tensor) and isinstance(a._data, jax.core.Tracer)
                                        and _is_float_array(a._data) for a in args):
            attach_custom_vjp(cls, ctx, args, result, backward)
        if forward_ad._levels:
            forward_ad._function_tangents(cls, ctx, args, output, result)
        return result


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, output, record: bool):
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    dirty = {id(t) for t in ctx.dirty_tensors}
    returned = {id(o) for o in outs if isinstance(o, Tensor)}
    missing = dirty - returned
    if missing:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function; return them.")
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    if not record:
        res = tuple(_alias(o, Tensor._wrap(o._data)) if isinstance(o, Tensor) and id(o) in inputs
                    and id(o) not in dirty else o for o in outs)
        ctx._freeze_saved()
        return res if is_tuple else res[0]
    from .._dispatch import edge

    nondiff = {id(t) for t in ctx.non_differentiable}
    ctx.next_functions = tuple(edge(a) if need else (None, 0) for a, need in zip(args, ctx.needs_input_grad))
    ctx._in_meta = tuple((tuple(a.shape), a._data.dtype) if isinstance(a, Tensor) else None for a in args)
    res, metas = [], []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            res.append(o)
            metas.append(None)
            continue
        metas.append((tuple(o.shape), o._data.dtype) if _is_float_array(o._data) else None)
        if id(o) in dirty:
            if o.grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation. "
                                   "mark_dirty was called on it; apply the Function to a clone() instead.")
            t = o
        elif id(o) in inputs:
            t = _alias(o, Tensor._wrap(o._data))  # an input returned as is: a fresh alias gets the history
        else:
            t = o
        if id(o) in nondiff or not _is_float_array(o._data):
            t.grad_fn, t._output_nr, t._requires_grad = None, 0, False
        else:
            t.grad_fn, t._output_nr, t._requires_grad = ctx, i, True
        res.append(t)
    ctx._fn_out_meta = tuple(metas)
    # The engine fills missing gradients from `_out_meta`; leave them as None when asked to (for every output,
    # or, with `ctx._materialize_non_diff_grads = False`, for the non-differentiable ones).
    if not ctx.materialize_grads:
        ctx._out_meta = (None,) * len(metas)
    elif not ctx._materialize_non_diff_grads:
        ctx._out_meta = tuple(None if isinstance(o, Tensor) and id(o) in nondiff else m for o, m in zip(outs, metas))
    else:
        ctx._out_meta = tuple(metas)
    ctx._freeze_saved(recorded=True)
    return tuple(res) if is_tuple else res[0]


class InplaceFunction(Function):
    """A Function with an `inplace` flag (kept for code written against PyTorch's legacy helper)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class _DelayedErrorNode(Node):
    """Stands in for the backward of a `once_differentiable` backward: fails if reached."""

    __slots__ = ("msg",)

    def __init__(self, msg: str, next_functions: tuple):
        super().__init__(next_functions)
        self.msg = msg

    def name(self) -> str:
        return "DelayedError"

    def apply(self, grads, create_graph):
        raise RuntimeError(self.msg)


def once_differentiable(fn: Callable) -> Callable:
    """Decorate a `backward` that is not itself differentiable.

    It then runs without recording; if a double backward later reaches its
    results, that raises a clear error instead of returning wrong numbers.

    Arguments:
        fn: the `backward` staticmethod's function.

    Returns:
        The wrapped backward.

    Example:
        >>> import tapeflow as tp
        >>> class Cube(tp.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     @tp.autograd.once_differentiable
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 3 * x ** 2 * g
        >>> x = tp.tensor([2.0], requires_grad=True)
        >>> Cube.apply(x).backward(); x.grad
        tensor([12.])
    """

    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        from .._dispatch import edge

        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            res = fn(ctx, *grads)
        finally:
            state.grad_enabled = prev
        if not prev:
            return res
        # Under create_graph the results would depend on the grads and on the
        # forward inputs: hang them on a node that fails if reached.
        edges = [edge(g) for g in grads if isinstance(g, Tensor) and g._requires_grad]
        edges += [e for e, need in zip(getattr(ctx, "next_functions", ()), getattr(ctx, "needs_input_grad", ()))
                  if need]
        if not edges:
            return res
        msg = (f"trying to differentiate twice a function that was marked with @once_differentiable "
               f"({type(ctx).__name__}). Remove the decorator and write backward with differentiable ops.")
        node = _DelayedErrorNode(msg, tuple(edges))
        single = not isinstance(res, tuple)
        items = (res,) if single else res
        wrapped = tuple(Tensor._make(r._data, node, 0, True) if isinstance(r, Tensor) and _is_float_array(r._data)
                        else r for r in items)
        return wrapped[0] if single else wrapped

    return wrapper
