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
import re
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from xla_ops import broadcast_axes

from .._dtype import from_jax_dtype
from .._state import state
from .._tensor import FOLLOW_DTYPE, Tensor, _alias, _is_float_array
from . import forward_ad
from ._function_jax import _invalid_grad, attach_custom_vjp
from ._saved_hooks import Packed, SavedTensor, _snapshot, pack_tensors, unpack_tensor
from .graph import FREED_MESSAGE, AccumulateGrad, Node, _version_error

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
        """Keep `tensors` for a `jvp` staticmethod: inside `jvp`, `ctx.saved_tensors` gives these back
        (and inside `backward`, those of `save_for_backward`)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; store other values as "
                                     f"attributes on ctx instead (argument {i} is of type {type(t).__name__}).")
        self.saved_for_forward = tensors

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
    saved_for_forward = ()
    dirty_tensors = ()
    non_differentiable = ()
    _in_jvp = False  # `saved_tensors` gives `saved_for_forward` while the user's jvp runs
    _cleared = False  # saved tensors handed out once under `clear_saved_tensors_on_access`
    _runs_ungraded = True  # (PyTorch calls backward with zeros for outputs that got no gradient)

    def __init__(self):
        Node.__init__(self)
        self.needs_input_grad: tuple = ()
        # Once forward is done: per saved tensor None or (value, storage, version, output_nr). An output of this
        # node is kept as a history-free snapshot (output_nr set) and given back with this node as grad_fn, so
        # the node and its outputs hold no reference cycle.
        self._saved = None
        self._freed = False
        self._in_meta: tuple = ()
        self._fn_out_meta: tuple = ()

    # -- saved tensors -----------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to `save_for_backward` (checked against in-place changes); inside `jvp`, those
        given to `save_for_forward`."""
        if self._in_jvp:
            return tuple(self.saved_for_forward)
        if self._cleared:
            raise RuntimeError("saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is "
                               "set on the autograd.Function. Read ctx.saved_tensors once (keep the tuple), or set "
                               "clear_saved_tensors_on_access=False.")
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._saved is None:  # still inside forward/setup_context
            return tuple(self.to_save)
        out = tuple(None if entry is None else self._unpack_saved(entry) for entry in self._saved)
        if getattr(self._forward_cls, "clear_saved_tensors_on_access", False):
            self._saved, self._cleared = (), True  # the caller's references are now the only ones
        return out

    def _unpack_saved(self, entry):
        t, st, version, nr = entry
        if type(t) is Packed:
            return unpack_tensor(t, None if nr is None else self)
        if st is not None and st.version != version:
            raise _version_error((st, version, t), self, nr)
        return t if nr is None else Tensor._make(t._data, self, nr, True)

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The saved tensors as `SavedTensor`s (to register pack/unpack hooks on one of them)."""
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(SavedTensor(self, i) for i in range(len(self._saved or ())))

    def _saved_get(self, i):
        entry = self._saved[i]
        if entry is None:
            return None
        t, _, _, nr = entry
        return t if nr is None or type(t) is Packed else Tensor._make(t._data, self, nr, True)

    def _saved_set(self, i, packed):
        nr = self._saved[i][3]
        self._saved = (*self._saved[:i], (packed, None, None, nr), *self._saved[i + 1:])

    @property
    def saved_variables(self) -> tuple:
        """Deprecated name of `saved_tensors`."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def _freeze_saved(self, recorded: bool = False, outputs: dict | None = None) -> None:
        """Fix what `save_for_backward` was given; `outputs` maps id -> output_nr of this node's outputs."""
        outputs = outputs or {}
        entries = []
        try:
            packed = pack_tensors(self.to_save, outputs) if recorded and state.saved_hooks else None
        except BaseException:  # (a hook that stops, as a checkpoint's early-stopping recomputation does, must
            self.to_save = ()  # not leave the node holding its own outputs: a reference cycle)
            raise
        for i, t in enumerate(self.to_save):
            nr = None if t is None else outputs.get(id(t))
            if t is None:
                entries.append(None)
            elif packed is not None:  # What saved-tensor hooks keep is theirs: no version check (PyTorch's rule).
                entries.append((packed[i], None, None, nr))
            else:
                st = t._st()
                entries.append((t if nr is None else _snapshot(t), st, st.version, nr))
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
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__}): function {self.name()} "
                                   f"returned it as the gradient at index {i}; gradients must be Tensors or None")
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
    if r._data.dtype != dtype and not _keeps_grad_dtype(node, i):
        r = r.to(from_jax_dtype(dtype))
    return r if create_graph else r._data


def _keeps_grad_dtype(node, i: int) -> bool:
    """Whether input `i` of `node` is a leaf with `grad_dtype` set (its accumulation casts to that instead)."""
    target = node._next[2 * i] if 2 * i < len(node._next) else None
    return type(target) is AccumulateGrad and target.variable._grad_dtype is not FOLLOW_DTYPE


def _user_backward(cls) -> Callable | None:
    bwd, vjp = cls.backward, cls.vjp
    if getattr(bwd, "_tapeflow_base", False):
        return None if getattr(vjp, "_tapeflow_base", False) else vjp
    if not getattr(vjp, "_tapeflow_base", False) and vjp is not bwd:
        raise RuntimeError(f"Implementing both 'backward' and 'vjp' for a custom Function is not allowed. {cls.__name__} "
                           "defines both; keep only one of them.")
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
        """Output tangents from input tangents, for forward-mode AD (a Function applied to dual tensors
        without it raises `NotImplementedError`). Override as a staticmethod."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

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
        # Forward mode: the input tangents are read before forward runs; forward (and the output wrapping)
        # propagate no tangents, the Function's own `jvp` gives the outputs theirs.
        tangents = forward_ad._input_tangents(args) if forward_ad._levels else None
        paused = forward_ad._pause() if forward_ad._levels else None
        prev = state.grad_enabled
        try:
            state.grad_enabled = False
            try:
                if split:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
            finally:
                state.grad_enabled = prev
            dirty = {id(t): t for t in ctx.dirty_tensors}
            nondiff = {id(t) for t in ctx.non_differentiable}
            ctx.dirty_tensors = ctx.non_differentiable = ()  # (the outputs would keep their node alive in a cycle)
            result = _wrap_outputs(ctx, args, output, record, dirty, nondiff)
        finally:
            if paused is not None:
                forward_ad._resume(paused)
        if any(isinstance(a, Tensor) and isinstance(a._data, jax.core.Tracer) and _is_float_array(a._data)
               for a in args):
            backward = _user_backward(cls)
            if backward is not None:
                attach_custom_vjp(cls, ctx, args, result, backward)
        if tangents is not None:
            forward_ad._function_tangents(cls, ctx, args, tangents, output, result, dirty, nondiff)
        return result


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, output, record: bool, dirty: dict, nondiff: set):
    """Give `forward`'s outputs their history (PyTorch's rules): an input returned as is becomes a fresh alias,
    an input marked dirty takes the node as the history of its in-place change, non-differentiable outputs
    get none."""
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    returned = {id(o) for o in outs if isinstance(o, Tensor)}
    if any(k not in returned for k in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function; return them.")
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    if record:
        from .._dispatch import edge

        ctx.next_functions = tuple(edge(a) if need else (None, 0) for a, need in zip(args, ctx.needs_input_grad))
        if not all(isinstance(a, Tensor) for a in args):  # (PyTorch's node links its tensor arguments only)
            ctx._visible = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx._in_meta = tuple((tuple(a.shape), a._data.dtype) if isinstance(a, Tensor) else None for a in args)
    res, metas, own = [], [], {}
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            res.append(o)
            metas.append(None)
            continue
        floating = _is_float_array(o._data)
        metas.append((tuple(o.shape), o._data.dtype) if floating else None)
        if record and floating and id(o) not in nondiff:
            t = _differentiable_output(ctx, o, i, id(o) in inputs, id(o) in dirty, len(outs))
            own[id(t)] = i
        else:
            t = _plain_output(o, id(o) in inputs, id(o) in dirty)
        if t._view and id(o) not in dirty:
            # (an in-place write into it is refused, as in PyTorch, naming the Function and the output)
            t._custom_fn_view = (re.sub(r"Backward\d*$", "", t.grad_fn.name()) if t.grad_fn is not None else
                                 type(ctx).__name__, t._output_nr)
        res.append(t)
    if record:
        ctx._fn_out_meta = tuple(metas)
        # The engine fills missing gradients from `_out_meta`; leave them as None when asked to (for every
        # output, or, with `ctx._materialize_non_diff_grads = False`, for the non-differentiable ones).
        if not ctx.materialize_grads:
            ctx._out_meta = (None,) * len(metas)
        elif not ctx._materialize_non_diff_grads:
            ctx._out_meta = tuple(None if isinstance(o, Tensor) and id(o) in nondiff else m
                                  for o, m in zip(outs, metas))
        else:
            ctx._out_meta = tuple(metas)
    ctx._freeze_saved(recorded=record, outputs=own)
    return tuple(res) if is_tuple else res[0]


def _plain_output(o: Tensor, is_input: bool, is_dirty: bool) -> Tensor:
    """An output without history from this Function."""
    if is_dirty:
        o._st().version += 1  # (marking dirty counts as a write, as in PyTorch)
    if not o._requires_grad:
        return _alias(o, Tensor._wrap(o._data)) if is_input and not is_dirty else o
    if is_input:
        return o.detach()
    if o._base is None:
        o.grad_fn, o._output_nr, o._requires_grad = None, 0, False
    return o  # (a view of an input that requires grad keeps requiring it, as a view made under no_grad does)


_NOT_AN_INPUT = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                 "mutated should be passed to ctx.mark_dirty().")


def _differentiable_output(ctx, o: Tensor, i: int, is_input: bool, is_dirty: bool, n_outputs: int) -> Tensor:
    """Output `i` of `ctx`'s Function, with `ctx` as its history."""
    if not is_dirty:
        t = _alias(o, Tensor._wrap(o._data)) if is_input else o  # an input returned as is: a fresh alias
        t.grad_fn, t._output_nr, t._requires_grad = ctx, i, True
        return t
    if o.grad_fn is None and o._requires_grad and o._base is None:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation. "
                           "mark_dirty was called on it; apply the Function to a clone() instead.")
    if not is_input:
        if o._base is not None:
            raise RuntimeError(_NOT_AN_INPUT)
        warnings.warn(_NOT_AN_INPUT, UserWarning, stacklevel=4)
    if o._base is not None and n_outputs > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
            "return more than one Tensor. Rewriting the history of the view's base needs a single output: clone the "
            "input first (x.clone()), or split the Function in two: one doing the in-place change and returning "
            "only that tensor, a second one doing the rest.")
    # The in-place change forward made is recorded now, as an in-place op's would be (views and base included).
    from .._dispatch import inplace

    o._grad = None
    inplace(o, Tensor._make(o._data, ctx, i, True))
    return o


class InplaceFunction(Function):
    """A Function with an `inplace` flag (kept for code written against PyTorch's legacy helper)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class Error(Node):
    """The node standing for the backward of a `once_differentiable` backward: reaching it raises."""

    __slots__ = ("msg",)

    def __init__(self, msg: str, next_functions: tuple):
        super().__init__(next_functions)
        self.msg = msg

    def name(self) -> str:
        return "Error"

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
        from .._dispatch import accumulator

        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            res = fn(ctx, *grads)
        finally:
            state.grad_enabled = prev
        if not prev or not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return res
        # Under create_graph with gradients that require grad, the results get a history that raises when a
        # backward reaches it (PyTorch's structure: one edge per result, into a detached copy of it).
        single = not isinstance(res, tuple)
        items = (res,) if single else res
        diff = [isinstance(r, Tensor) and _is_float_array(r._data) for r in items]
        edges = tuple((accumulator(Tensor._make(r._data, None, 0, True)), 0) if d else (None, 0)
                      for r, d in zip(items, diff))
        node = Error("trying to differentiate twice a function that was marked with @once_differentiable. The "
                     f"backward of {type(ctx).__name__} is not differentiable: remove the decorator and write it "
                     "with differentiable ops.", edges)
        wrapped = tuple(Tensor._make(r._data, node, i, True) if d else r for i, (r, d) in enumerate(zip(items, diff)))
        return wrapped[0] if single else wrapped

    return wrapper
