"""Backward graph nodes: `Node`, the op node, `AccumulateGrad`, hook handles.

A node is what a tensor's `grad_fn` points at. `next_functions` holds one
`(node, input_nr)` edge per forward input (`(None, 0)` for inputs that need
no gradient); leaves that require grad appear as their `AccumulateGrad`.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Callable
from typing import NamedTuple

from .. import _dispatch as _dispatch_state
from .._adaptive import call_tiered, resolve
from .._dtype import PREFIX, from_jax_dtype
from .._state import state
from .._tensor import Size, Tensor

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "GradientEdge",
           "get_gradient_edge", "register_multi_grad_hook", "increment_version", "allow_mutation_on_saved_tensors"]

_sequence = itertools.count()
_handle_ids = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward.")


def flat_edges(edges) -> tuple:
    """`((node, nr), ...)` as the flat tuple a node keeps, `(node, nr, ...)`."""
    return tuple([x for e in edges for x in e])


class RemovableHandle:
    """Returned by `register_hook`-style calls; `.remove()` unregisters the hook: it deletes the key `id` from
    `hooks` and from each dict in `extra_dict` (one dict or a list of them). Code that keeps hooks of its own
    makes one per hook and stores the hook under `handle.id` (`torch.utils.hooks.RemovableHandle`).

    Example:
        >>> from collections import OrderedDict
        >>> from tapeflow.utils.hooks import RemovableHandle
        >>> hooks = OrderedDict()
        >>> h = RemovableHandle(hooks); hooks[h.id] = print
        >>> h.remove(); len(hooks)
        0
    """

    __slots__ = ("_hooks_ref", "_extra_refs", "id")

    def __init__(self, hooks: dict, *, extra_dict=None):
        self._hooks_ref = _ref(hooks)
        extra = () if extra_dict is None else extra_dict if isinstance(extra_dict, (list, tuple)) else (extra_dict,)
        self._extra_refs = tuple(map(_ref, extra))
        self.id = next(_handle_ids)

    def remove(self) -> None:
        for ref in (self._hooks_ref, *self._extra_refs):
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _ref(hooks):
    return weakref.ref(hooks) if not isinstance(hooks, dict) else _DictRef(hooks)


class _DictRef:
    # dicts cannot be weakly referenced; hold the dict (hooks live as long as their owner anyway).
    __slots__ = ("d",)

    def __init__(self, d):
        self.d = d

    def __call__(self):
        return self.d


class InputMetadata(NamedTuple):
    """Shape and dtype of one gradient a node receives (`node._input_metadata[i]`)."""

    shape: tuple
    dtype: object


class Node:
    """A node of the backward graph.

    Attributes:
        next_functions: `((node, input_nr), ...)`, one edge per forward input PyTorch's node links.
    """

    # Edges are kept flat, `(node0, input_nr0, node1, input_nr1, ...)`: one object per node for Python's
    # cyclic garbage collector to walk instead of one per edge (long graphs are collected many times).
    __slots__ = ("_next", "_seq", "_out_meta", "__weakref__", "__dict__")

    # Rarely set; class defaults keep node creation (on the hot path) cheap.
    _pre_hooks = None  # {id: fn(grad_outputs)}
    _post_hooks = None  # {id: fn(grad_inputs, grad_outputs)}
    _tensor_hooks = None  # {output_nr: {id: fn(grad)}} of the tensors this node produced
    _retained = None  # {output_nr: weakref to a tensor that called retain_grad()}
    _trace = None  # forward stack, recorded in anomaly mode
    _aval = None  # shape/dtype of the single forward output (multi-output nodes use _out_meta)
    _unpack = None  # saved tensors packed by saved-tensor hooks (see `_saved_hooks`)
    _reads = None  # per output, the inputs it reads, where some input is not read by all (`_partial_reads`)
    _runs_ungraded = False  # a node that runs even when it gets no gradient (a custom Function's backward)
    _visible = None  # the inputs PyTorch's node links, where it links fewer than the tape keeps (None: all)

    def __init__(self, next_functions=()):
        self._next = flat_edges(next_functions)
        self._seq = next(_sequence)
        self._out_meta = ()

    @property
    def next_functions(self) -> tuple:
        """`((node, input_nr), ...)`: where the gradient of each forward input goes, for the inputs PyTorch's
        node links (not an index, a mask, or a Python number taken by a Scalar overload such as `x ** 2`)."""
        n = self._next
        return self._linked(tuple(zip(n[0::2], n[1::2])))

    def _linked(self, per_input: tuple) -> tuple:
        """`per_input` (one item per forward input) less the inputs PyTorch's node does not link."""
        shown = self._visible
        return per_input if shown is None else tuple(per_input[i] for i in shown)

    @next_functions.setter
    def next_functions(self, edges) -> None:
        self._next = flat_edges(edges)
        self._visible = None

    @property
    def metadata(self) -> dict:
        """A dict for user annotations, as PyTorch's `Node.metadata`."""
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def name(self) -> str:
        """The node's PyTorch name, e.g. `"MulBackward0"`."""
        return type(self).__name__

    def _sequence_nr(self) -> int:
        """The node's sequence number: nodes made later have higher ones, and among ready nodes the engine
        runs the highest first (`AccumulateGrad` nodes first of all), as PyTorch's."""
        return self._seq

    _sequence_number = _sequence_nr

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- hooks ----------------------------------------------------------------
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after the node; it may return new `grad_inputs`."""
        if self._post_hooks is None:
            self._post_hooks = {}
        h = RemovableHandle(self._post_hooks)
        self._post_hooks[h.id] = fn
        return h

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_outputs)` runs before the node; it may return new `grad_outputs`."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = fn
        return h

    def _add_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        hooks = self._tensor_hooks.setdefault(output_nr, {})
        h = RemovableHandle(hooks)
        hooks[h.id] = fn
        return h

    @property
    def _input_metadata(self) -> tuple:
        """`InputMetadata(shape, dtype)` of each gradient this node receives (its forward outputs)."""
        if self._aval is not None:
            return (InputMetadata(Size(self._aval.shape), from_jax_dtype(self._aval.dtype)),)
        return tuple(None if m is None else InputMetadata(Size(m[0]), from_jax_dtype(m[1])) for m in self._out_meta)

    def _set_sequence_nr(self, n: int) -> None:
        """Change where this node runs among ready nodes (a higher number runs first), as PyTorch's."""
        self._seq = n

    # -- running ----------------------------------------------------------------
    def apply(self, grads: list, create_graph: bool) -> tuple:
        """Gradients for the forward inputs, given one gradient per forward output.

        Arrays in, arrays out; Tensors in and out when `create_graph` (then the
        computation is itself recorded)."""
        raise NotImplementedError(f"{self.name()} does not define apply")

    def _release(self) -> None:
        """Free saved tensors (after a backward without `retain_graph`)."""

    def __call__(self, *grads):
        """Run this node by hand: gradients w.r.t. its outputs in, w.r.t. its inputs out."""
        from .._state import state
        from .._tensor import Tensor, as_tensor

        n = max(len(self._out_meta), 1)
        if len(grads) != n:
            raise TypeError(f"expected {n} arguments, got {len(grads)} instead")
        gs = [None if g is None else as_tensor(g) for g in grads]
        create = state.grad_enabled and any(g is not None and g.requires_grad for g in gs)
        res = self.apply([g if create or g is None else g._data for g in gs], create)
        res = self._linked(tuple(None if r is None else (r if isinstance(r, Tensor) else Tensor._wrap(r)) for r in res))
        return res[0] if len(res) == 1 else res  # (one gradient per edge of `next_functions`)


detached_in_place = [False]  # set once any tensor with a history is detached in place (`Tensor.detach_`)


def saved_then_detached(node) -> bool:
    """Whether a tensor `node` saved lost its history to `detach_()` afterwards."""
    return detached_in_place[0] and any(e[2] is not None and e[2]._detached_at > node._seq for e in node._versions)


def check_not_detached(node) -> None:
    """PyTorch's refusal of a saved tensor that lost its history to `detach_()` after `node` saved it."""
    if saved_then_detached(node):
        raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                           "This is not supported, please use out-of-place `.detach()` instead")


def _version_error(entry, node, output_nr=None) -> RuntimeError:
    """PyTorch's error for a saved tensor (`entry`: its storage, the version saved, the tensor, or None for the
    node's own saved output) written in place since; `output_nr` when it is output `output_nr` of `node`."""
    storage, version, t = entry
    if t is None:  # the node's own saved output
        ans = getattr(node, "_ans", None)
        ans = ans[0] if isinstance(ans, tuple) else ans
        desc = "saved output" if ans is None else f"{_type_name(ans.dtype, False)} {list(ans.shape)}"
        what = f", which is output 0 of {_short_name(node)},"
    else:
        desc = f"{_type_name(t._raw.dtype, t.is_cuda)} {list(t.shape)}"
        fn, nr = (node, output_nr) if output_nr is not None else (t.grad_fn, t._output_nr)
        what = f", which is output {nr} of {_short_name(fn)}," if fn is not None else ""
    hint = ("the backtrace further above shows the operation that failed to compute its gradient. The variable in "
            "question was changed in there or anywhere later. Good luck!") if state.anomaly else (
            "enable anomaly detection to find the operation that failed to compute its gradient, with "
            f"{PREFIX[0]}.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{desc}]{what} is at version {storage.version}; expected version {version} instead. Hint: {hint}")


def _short_name(node) -> str:
    """A node's name as PyTorch's version error gives it: `Exp` for `ExpBackward0`, `F` for `FBackward`."""
    return re.sub(r"Backward\d*$", "", node.name())


_SCALAR_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _type_name(dtype, cuda: bool) -> str:
    """PyTorch's type string for a tensor of `dtype` in its messages: `torch.FloatTensor`, `CPUComplexFloatType`."""
    from .._legacy import _BY_DTYPE

    legacy = _BY_DTYPE.get(from_jax_dtype(dtype))
    if legacy is not None:
        return f"{PREFIX[0]}.{'cuda.' if cuda else ''}{legacy.__name__}"
    name = _SCALAR_NAMES.get(dtype.name) or dtype.name.capitalize()
    return f"{'CUDA' if cuda else 'CPU'}{name}Type"


#: Called with the Tensor a `create_graph=True` backward wraps around a node's saved output
#: (forward-mode AD uses it to carry that output's tangent over).
saved_output_hooks: list[Callable] = []


class OpNode(Node):
    """The node of one `xla_ops` op; its backward is that op's compiled VJP."""

    __slots__ = ("op", "params", "needs", "_saved", "_ans", "_metas", "_versions", "_freed", "_aval")

    def apply(self, grads, create_graph):
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        for entry in self._versions:
            if entry[0].version != entry[1]:
                raise _version_error(entry, self)
        if detached_in_place[0]:  # (a flag read first: the check walks the saved tensors)
            check_not_detached(self)
        op, nout = self.op, len(grads)
        if self._unpack is not None:
            from ._saved_hooks import unpack_node

            ans, saved = unpack_node(self, create_graph)
        else:
            if self._ans is not None:
                self._ans = resolve(self._ans)
            ans, saved = self._ans, self._saved
        if create_graph:
            from .._dispatch import dispatch

            if ans is not None and nout == 1:
                ans = Tensor._make(ans, self, 0, True)
                for hook in saved_output_hooks:
                    hook(self, ans)
            gop = op.grad_op(self.params, self.needs, self._metas, nout)
            out = dispatch(gop, (*grads, ans, *saved))
            if op.double_backward is not None:
                out = _refuse_double_backward(op, self.params, saved, out)
            return out
        vjp = op.backward(self.params, self.needs, self._metas, nout)
        args = [*grads, ans, *[s._data if isinstance(s, Tensor) else s for s in saved]]
        return call_tiered(vjp, args) if _dispatch_state._adaptive else vjp(*args)

    def __getattr__(self, name):
        # `grad_fn._saved_self`, `_saved_other`, `_saved_result` (and `_raw_saved_*`), as PyTorch's nodes have.
        if name.startswith(("_saved_", "_raw_saved_")):
            from ._saved_hooks import SavedTensor, saved_slot, saved_value

            raw = name.startswith("_raw")
            slot = saved_slot(self, name[11 if raw else 7:])
            if slot is not None:
                return SavedTensor(self, slot) if raw else saved_value(self, slot)
            params = dict(self.params)
            if not raw and name[7:] in params:  # a static argument the node keeps (`_saved_dim`)
                return params[name[7:]]
            if not raw and name.endswith("_sym_sizes"):  # an input's shape (`_saved_self_sym_sizes`)
                from ._saved_hooks import input_shape

                shape = input_shape(self, name[7:-10])
                if shape is not None:
                    return shape
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _release(self):
        # A node that kept nothing stays runnable, as in PyTorch (`_freed` None).
        if self._freed is not None:
            self._freed = True
            self._saved = ()
            self._ans = None
            self._unpack = None
            self._versions = ()  # (its entries hold the saved tensors too)


def _refuse_double_backward(op, params, saved, grads):
    """`grads` with those that `op.double_backward` says have no derivative of their own put behind a node
    that raises its message when a backward reaches it (PyTorch's `DelayedError`)."""
    arrays = [s._data if isinstance(s, Tensor) else s for s in saved]
    refused = op.double_backward(*arrays, **dict(params))
    if not refused:
        return grads
    from .._dispatch import edge
    from .function import Error

    grads = list(grads) if isinstance(grads, tuple) else [grads]
    for i, message in refused.items():
        g = grads[i]
        if g is not None and g.requires_grad:
            grads[i] = Tensor._make(g._data, Error(message, (edge(g),)), 0, True)
    return tuple(grads)


_NODE_CLASSES: dict[str, type] = {}


def node_class(name: str) -> type:
    """The `OpNode` subclass named `name` (`MulBackward0`), made once."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        body = {"__slots__": ()}
        if name in _ENGINE_NODES:  # (PyTorch's C++ nodes of the engine itself give a qualified name)
            body["name"] = lambda self, qualified=f"torch::autograd::{name}": qualified
        cls = _NODE_CLASSES[name] = type(name, (OpNode,), body)
    return cls


_ENGINE_NODES = frozenset(("CopyBackwards", "CopySlices"))


class _NotImplementedBackward(Node):
    """The backward of an op whose derivative PyTorch does not implement (`unique`, `floor_divide`): the output
    joins the graph, as PyTorch's does, and a backward that reaches it raises PyTorch's error."""

    __slots__ = ()
    op_name = ""
    error = NotImplementedError

    def apply(self, grads, create_graph):
        if self.error is NotImplementedError:  # (an op without a derivative formula: `unique`)
            raise NotImplementedError(f"the derivative for '{self.op_name}' is not implemented.")
        raise self.error(f"derivative for {self.op_name} is not implemented")  # (PyTorch's NotImplemented node)


class Invalid(Node):
    """The history of a view made under no_grad or in inference mode once its data changed in place (through
    it, its base or another view) while its base requires grad: PyTorch refuses to give such a view a history
    (its `grad_fn` shows as `<Invalid>`); a backward that reaches it raises PyTorch's error."""

    __slots__ = ("message",)

    def __init__(self, inference: bool):
        super().__init__()
        if inference:
            self.message = (
                "A view was created in inference mode and its base or another view of its base has been modified "
                "inplace in normal mode. Given that this use case is ambiguous and error-prone, it is forbidden. "
                "You can clarify your code by moving both the view and the inplace either both inside the "
                "inference_mode block (if you don't want the inplace to be tracked) or both outside (if you want "
                "the inplace to be tracked).")
        else:
            self.message = (
                "A view was created in no_grad mode and its base or another view of its base has been modified "
                "inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is "
                "forbidden. You can clarify your code by moving both the view and the inplace either both inside "
                "the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the "
                "inplace to be tracked).")

    def apply(self, grads, create_graph):
        raise RuntimeError(self.message)


def not_implemented_node(name: str, op_name: str, inputs, error=NotImplementedError) -> Node:
    """A node named `name` (`Unique2Backward0`, `NotImplemented`) over the edges of `inputs` whose backward raises
    `error` saying that the derivative of `op_name` is not implemented."""
    cls = _NODE_CLASSES.get((name, op_name))
    if cls is None:
        cls = _NODE_CLASSES[(name, op_name)] = type(name, (_NotImplementedBackward,),
                                                    {"__slots__": (), "op_name": op_name, "error": error})
    from .._dispatch import edge

    return cls(tuple(edge(t) for t in inputs))


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable
        self._seq = 2**64 - 1  # runs as soon as it is ready; the largest number, as in PyTorch

    def name(self) -> str:
        """PyTorch's name for it (its class is `AccumulateGrad`)."""
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads, create_graph):
        from .engine import accumulate

        accumulate(self.variable, grads[0], create_graph)
        return ()


from ._edges import GradientEdge, get_gradient_edge, increment_version, register_multi_grad_hook  # noqa: E402
from ._saved_hooks import (  # noqa: E402
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)
