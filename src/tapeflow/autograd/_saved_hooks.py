"""Saved-tensor hooks: `saved_tensors_hooks`, `save_on_cpu`, `disable_saved_tensors_hooks`.

While a `saved_tensors_hooks(pack, unpack)` region is active on a thread, every tensor an op saves for its
backward (an input, or the op's own output) goes through `pack` when it is saved; the node keeps only what
`pack` returned, and `unpack` turns it back into a tensor each time backward (or `grad_fn._saved_*`) reads
it. The unpacked value takes the saved tensor's place with the saved tensor's history, so double backward
still differentiates through it. Only the innermost region's hooks apply, as in PyTorch.
"""

from __future__ import annotations

import weakref

import jax

from .._adaptive import resolve
from .._state import state
from .._tensor import Tensor, _Views
from .graph import AccumulateGrad

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "pack_node", "unpack_node",
           "pack_tensors", "unpack_tensor", "Packed", "SavedTensor", "saved_slot", "saved_value",
           "allow_mutation_on_saved_tensors"]

_PACK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need "
    "to perform in-place operations on the input to a pack hook.")


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through `pack_hook` and come back through
    `unpack_hook`.

    Arguments:
        pack_hook: `pack_hook(tensor) -> anything`, called when an op saves `tensor`. It must not modify
            `tensor` in place.
        unpack_hook: `unpack_hook(packed) -> Tensor`, called with what `pack_hook` returned whenever the
            saved tensor is needed; it should return a tensor with the original's value.

    Example:
        >>> import tapeflow as tp
        >>> seen = []
        >>> def pack(t):
        ...     seen.append(tuple(t.shape))
        ...     return t.detach().numpy()          # keep a NumPy copy instead of the tensor
        >>> def unpack(a):
        ...     return tp.tensor(a)
        >>> x = tp.tensor([1.0, 2.0], requires_grad=True)
        >>> with tp.autograd.graph.saved_tensors_hooks(pack, unpack):
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad, seen
        (tensor([2., 4.]), [(2,), (2,)])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if state.saved_hooks_disabled is not None:
            raise RuntimeError(state.saved_hooks_disabled)
        state.saved_hooks = (*state.saved_hooks, (self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        state.saved_hooks = state.saved_hooks[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device when backward needs them.

    Trades device memory for transfers, as PyTorch's `save_on_cpu`; `pin_memory` is accepted (JAX manages
    host buffers itself). On a CPU-only machine it changes nothing but where the copies live.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(3, requires_grad=True)
        >>> with tp.autograd.graph.save_on_cpu():
        ...     y = (x.exp() * x).sum()
        >>> y.backward(); x.grad
        tensor([5.4366, 5.4366, 5.4366])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        cpu = jax.devices("cpu")[0]

        def pack(t):
            data = t.detach()._data
            devices = getattr(data, "devices", None)
            home = next(iter(devices())) if devices is not None else cpu
            return home, jax.device_put(data, cpu)

        def unpack(packed):
            home, data = packed
            return Tensor._wrap(data if home == cpu else jax.device_put(data, home))

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager: registering saved-tensor hooks inside it raises `RuntimeError(error_message)`.

    For code that relies on its saved tensors staying as they are.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        ...     try:
        ...         with tp.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        ...             pass
        ...     except RuntimeError as e:
        ...         print(e)
        no hooks here
    """

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        self._prev = state.saved_hooks_disabled
        state.saved_hooks_disabled = self.error_message
        return self

    def __exit__(self, *exc):
        state.saved_hooks_disabled = self._prev
        return False


def _pack(pack, t: Tensor):
    version = t._version
    prev = state.grad_enabled
    state.grad_enabled = False  # a pack hook's own ops save nothing (and so never re-enter it)
    try:
        packed = pack(t)
    finally:
        state.grad_enabled = prev
    if t._version != version:
        raise RuntimeError(_PACK_INPLACE)
    return packed


class Packed:
    """One saved tensor as its pack hook left it, with what is needed to give it back its history."""

    __slots__ = ("packed", "unpack", "grad_fn", "output_nr", "requires_grad")

    def __init__(self, packed, unpack, t: Tensor, own_output: bool):
        self.packed = packed
        self.unpack = unpack
        # A node's own output keeps no reference to the node (it is re-attached when unpacked); a leaf that
        # requires grad is remembered by its AccumulateGrad, so gradients reach the leaf itself.
        self.grad_fn = None if own_output else t.grad_fn
        if self.grad_fn is None and t._requires_grad and not own_output:
            from .._dispatch import accumulator

            self.grad_fn = accumulator(t)
        self.output_nr = t._output_nr
        self.requires_grad = t._requires_grad


def unpack_tensor(p: Packed, node=None) -> Tensor:
    """The tensor `p` stands for: `unpack_hook`'s value with the saved tensor's history."""
    u = p.unpack(p.packed)
    if not isinstance(u, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(u).__name__}")
    fn = node if node is not None else p.grad_fn
    if not p.requires_grad:
        return u if u.grad_fn is None and not u._requires_grad else Tensor._wrap(u._data)
    if type(fn) is AccumulateGrad:
        t = Tensor._make(u._data, None, 0, True)
        t._acc = weakref.ref(fn)
        return t
    return Tensor._make(u._data, fn, p.output_nr, True)


def pack_tensors(tensors, outputs=()) -> tuple:
    """`tensors` (a custom Function's `save_for_backward`) packed by the active hooks; those whose id is in
    `outputs` are the Function's own outputs (given back with its node as their grad_fn)."""
    pack, unpack = state.saved_hooks[-1]
    return tuple(None if t is None else Packed(_pack(pack, t), unpack, t, id(t) in outputs) for t in tensors)


def pack_node(node, args, res) -> None:
    """Pack what `node` (just recorded by the dispatcher for `args` -> `res`) saved."""
    pack, unpack = state.saved_hooks[-1]
    saved = list(node._saved)
    packed_inputs = {}
    for i, a in enumerate(args):
        if saved[i] is not None and isinstance(a, Tensor):
            packed_inputs[i] = Packed(_pack(pack, a), unpack, a, False)
            saved[i] = None
    packed_ans = None
    if node._ans is not None:
        outs = res if type(res) is tuple else (res,)
        packed_ans = tuple(None if o is None else Packed(_pack(pack, o), unpack, o, True) for o in outs)
        node._ans = None
    node._saved = tuple(saved)
    node._unpack = (packed_inputs, packed_ans, type(res) is tuple)
    # What the hooks keep is theirs: in-place writes to the originals afterwards are not checked (PyTorch's rule).
    node._versions = ()


def unpack_node(node, create_graph: bool):
    """`(ans, saved)` of a node whose saved tensors were packed: the arrays its VJP reads, or Tensors with
    history under `create_graph`."""
    packed_inputs, packed_ans, multi = node._unpack
    saved = list(node._saved)
    for i, p in packed_inputs.items():
        t = unpack_tensor(p)
        saved[i] = t if create_graph else t._data
    ans = node._ans
    if packed_ans is not None:
        outs = tuple(None if p is None else unpack_tensor(p, node)._data for p in packed_ans)
        ans = outs if multi else outs[0]
    elif ans is not None:
        ans = resolve(ans)
    return ans, saved


# -- grad_fn._saved_<name> / grad_fn._raw_saved_<name> ---------------------------------------------------
# PyTorch's names of an op's saved inputs, where they are not (self, other); `rpow` (`2 ** x`) takes the
# exponent first.
_INPUT_NAMES = {"mm": ("self", "mat2"), "bmm": ("self", "mat2"), "pow": ("self", "exponent"),
                "pow_scalar": ("self", "exponent"), "rpow": ("exponent", "self")}


def saved_slot(node, name: str):
    """Which of an op node's saved values `_saved_<name>` means: `("input", i)`, `("result", k)` or None."""
    if name == "result" or (name.startswith("result") and name[6:].isdigit()):
        k = int(name[6:] or 0)
        saved_ans = node._ans is not None or (node._unpack is not None and node._unpack[1] is not None)
        return ("result", k) if saved_ans or node._freed else None
    i = _input_index(node, name)
    return None if i is None else ("input", i)


def _input_index(node, name: str) -> int | None:
    """The position of the input PyTorch calls `name` (`"self"`, `"other"`, `"exponent"`) of an op node."""
    names = _INPUT_NAMES.get(node.op.name, ("self", "other"))
    if name in names and names.index(name) < len(node.needs):
        return names.index(name)
    return None


def input_shape(node, name: str) -> tuple | None:
    """The shape of the input PyTorch calls `name` (`"self"`, `"other"`) of an op node, as its
    `_saved_<name>_sym_sizes` gives it; None if the node has no such input."""
    i = _input_index(node, name)
    if i is None:
        return None
    meta = node._metas[i] if i < len(node._metas) else None
    if meta is not None:  # (shape, dtype) of an input not saved; a dtype of None: a Python number
        return None if meta[1] is None else tuple(meta[0])
    saved = node._saved[i] if i < len(node._saved) else None
    return None if saved is None or not hasattr(saved, "shape") else tuple(saved.shape)


def _check_version(node, value) -> None:
    for entry in node._versions:
        if (entry[2] is value or (value is None and entry[2] is None)) and entry[0].version != entry[1]:
            from .graph import _version_error

            raise _version_error(entry, node)


def saved_value(node, slot):
    """`grad_fn._saved_<name>`: the saved tensor (unpacked if hooks packed it), or None if nothing was saved."""
    from .graph import FREED_MESSAGE

    if node._freed:
        raise RuntimeError(FREED_MESSAGE)
    kind, i = slot
    packed_inputs, packed_ans, multi = node._unpack if node._unpack is not None else ({}, None, False)
    if kind == "input":
        if i in packed_inputs:
            return unpack_tensor(packed_inputs[i])
        v = node._saved[i]
        _check_version(node, v)
        return v if v is None or isinstance(v, Tensor) else Tensor._wrap(resolve(v))
    if packed_ans is not None:
        return unpack_tensor(packed_ans[i], node)
    _check_version(node, None)
    ans = resolve(node._ans)
    t = Tensor._make(ans[i] if type(ans) is tuple else ans, node, i, True)
    st = next((entry[0] for entry in node._versions if entry[2] is None), None)
    if st is not None and i == 0:  # the output's alias, as in PyTorch: its version, and later writes to it
        if st.views is None:
            st.views = _Views()
        t._storage = st
        st.views.add(t)
    return t


class SavedTensor:
    """A tensor a backward node saved, as `grad_fn._raw_saved_<name>` returns it: `register_hooks(pack,
    unpack)` packs it now and unpacks it whenever it is read."""

    __slots__ = ("_node", "_slot")

    def __init__(self, node=None, slot=None):
        if node is None:
            raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
        self._node, self._slot = node, slot

    def register_hooks(self, *hooks) -> None:
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            got = ", ".join(type(h).__name__ for h in hooks) or "nothing"
            raise TypeError("register_hooks(): incompatible function arguments. It takes two callables, "
                            f"register_hooks(pack_hook, unpack_hook), but was called with: {got}")
        pack_hook, unpack_hook = hooks
        node = self._node
        if node._freed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of "
                "the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                "you need to backward through the graph a second time or if you need to access saved variables "
                "after calling backward.")
        if self._raw() is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if self._is_packed():
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        if isinstance(self._slot, int):  # a custom Function's saved tensor
            t = node._saved_get(self._slot)
            own_output = node._saved[self._slot][3] is not None
            node._saved_set(self._slot, Packed(_pack(pack_hook, t), unpack_hook, t, own_output))
            return
        kind, i = self._slot
        t = saved_value(node, self._slot)
        packed_inputs, packed_ans, multi = node._unpack if node._unpack is not None else ({}, None, False)
        if kind == "input":
            packed_inputs = {**packed_inputs, i: Packed(_pack(pack_hook, t), unpack_hook, t, False)}
            node._saved = (*node._saved[:i], None, *node._saved[i + 1:])
        else:
            if type(node._ans) is tuple:
                raise RuntimeError("register_hooks on one output of a multi-output node is not supported; "
                                   "use saved_tensors_hooks around the op instead")
            packed_ans = (Packed(_pack(pack_hook, t), unpack_hook, t, True),)
            node._ans = None
        node._unpack = (packed_inputs, packed_ans, multi)

    def _raw(self):
        """What the node keeps for this slot: a `Packed`, a Tensor, an array, or None."""
        node = self._node
        if isinstance(self._slot, int):
            return node._saved_get(self._slot)
        kind, i = self._slot
        packed_inputs, packed_ans, _ = node._unpack if node._unpack is not None else ({}, None, False)
        if kind == "input":
            return packed_inputs.get(i, node._saved[i])
        return packed_ans[i] if packed_ans is not None else node._ans

    @property
    def data(self):
        """What is kept: the pack hook's result when hooks packed it, else the saved tensor (a new tensor for a
        node's own output, as in PyTorch)."""
        raw = self._raw()
        if type(raw) is Packed:
            return raw.packed
        if raw is None or isinstance(raw, Tensor):
            return raw
        if isinstance(self._slot, int):
            return raw
        return saved_value(self._node, self._slot)

    @property
    def unpack_hook(self):
        """The unpack hook of this saved tensor, or None."""
        raw = self._raw()
        return raw.unpack if type(raw) is Packed else None

    def _is_packed(self) -> bool:
        node = self._node
        if isinstance(self._slot, int):
            return type(node._saved_get(self._slot)) is Packed
        if node._unpack is None:
            return False
        kind, i = self._slot
        return i in node._unpack[0] if kind == "input" else node._unpack[1] is not None


# -- allow_mutation_on_saved_tensors ----------------------------------------------------------------------
#: The active `allow_mutation_on_saved_tensors` context (process-wide, as in PyTorch), read by in-place writes.
mutation_context = None

_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in which the graph was "
            "originally recorded.")


def _snapshot(t: Tensor) -> Tensor:
    snap = Tensor._make(t._raw, None, 0, False)  # JAX arrays are immutable: the snapshot needs no copy
    return snap


class _Handle:
    """What a tensor saved under `allow_mutation_on_saved_tensors` is packed into (one per tensor and version)."""

    __slots__ = ("storage", "__weakref__")

    def __init__(self, storage):
        self.storage = storage


class AllowMutationContext(saved_tensors_hooks):
    """The state of one `allow_mutation_on_saved_tensors` region, as PyTorch keeps it: `original` (handle ->
    saved tensor), `cloned` (handle -> its value before an in-place write), `tid_to_weakhandle` ((tensor,
    version) -> handle). Handles live as long as a graph node holds them, so these shrink as graphs are freed."""

    def __init__(self):
        self.original = weakref.WeakKeyDictionary()
        self.cloned = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        super().__init__(self._pack, self._unpack)

    def _pack(self, t):
        tid = (id(t), t._version)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:  # the same tensor at the same version saved again shares its handle
            handle = self.tid_to_weakhandle[tid] = _Handle(t._st())
            self.original[handle] = t
        return handle

    def _unpack(self, handle):
        if mutation_context is not self:
            raise AssertionError(_OUTSIDE)
        if handle in self.cloned:
            return self.cloned[handle]
        if handle not in self.original:
            raise AssertionError(_OUTSIDE)
        return self.original[handle]

    def before_write(self, storage, node=None) -> None:
        """A tensor sharing `storage` is about to be written in place by the op of `node`: saved ones keep their
        current value. What that op saved itself becomes its own copy of the input, under a handle of its own
        (PyTorch saves a clone there), not counted as cloned."""
        if node is not None and getattr(node, "_unpack", None) is not None:
            for p in node._unpack[0].values():
                if type(p.packed) is _Handle and p.packed.storage is storage and p.packed in self.original:
                    snap = _snapshot(self.original[p.packed])
                    p.packed = _Handle(snap._st())
                    self.original[p.packed] = snap
        for handle in [h for h in self.original.keys() if h.storage is storage]:
            self.cloned[handle] = _snapshot(self.original.pop(handle))

    def clear(self) -> None:
        self.original.clear()
        self.cloned.clear()
        self.tid_to_weakhandle.clear()


class allow_mutation_on_saved_tensors:
    """Context manager: in-place writes to tensors saved for backward are allowed; backward uses the values
    they had when they were saved.

    Run both the forward and the backward inside it (backward outside raises), as in PyTorch. Nesting
    raises `RuntimeError`.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autograd.graph.allow_mutation_on_saved_tensors():
        ...     a = tp.ones(3, requires_grad=True)
        ...     b = a.clone()
        ...     out = (b ** 2).sum()
        ...     _ = b.sin_()            # would make backward raise outside the context
        ...     out.backward()
        >>> a.grad
        tensor([2., 2., 2.])
    """

    def __enter__(self) -> AllowMutationContext:
        global mutation_context
        if mutation_context is not None:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self._ctx = AllowMutationContext()
        self._ctx.__enter__()
        mutation_context = self._ctx
        return self._ctx

    def __exit__(self, *exc):
        global mutation_context
        mutation_context = None
        self._ctx.__exit__(*exc)
        self._ctx.clear()
        return False
