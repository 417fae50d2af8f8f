"""Activation checkpointing (PyTorch's `torch.utils.checkpoint`): run a block without keeping the tensors its
backward needs, and recompute them when the backward pass asks for them.

Memory for compute: the block's forward runs again. Random draws inside (dropout) are replayed from the same
generator state, so the recomputed values equal the first ones. Under a JAX trace (`tp.compile`,
`tp.func`) the block runs as it is and XLA decides what to keep.

The two variants are PyTorch's. `use_reentrant=True` makes the block one node whose backward reruns it and
back-propagates through the rerun. `use_reentrant=False` records the block's graph as usual but replaces every
tensor it saves by a placeholder (saved-tensor hooks); the first placeholder a backward pass unpacks reruns the
block, which fills all of them for that pass, stopping as soon as the last one is filled (early stop).
Checkpoints nest, a block may call `backward`/`autograd.grad` inside, and selective checkpointing
(`create_selective_checkpoint_contexts`) keeps chosen ops' outputs instead of recomputing them.
"""

from __future__ import annotations

import contextlib
import enum
import threading
import traceback
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable

import jax

import xla_ops

from .._factories import get_rng_state, set_rng_state
from .._state import state
from .._tensor import Tensor
from ..autograd._saved_hooks import Packed, pack_tensors, unpack_tensor
from ..autograd.backward import backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "noop_context_fn", "CheckpointError", "CheckpointFunction", "GraphExecGroup", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts"]


class _Flags(threading.local):
    def __init__(self):
        self.early_stop = None  # set_checkpoint_early_stop: overrides checkpoint(early_stop=)
        self.debug = None  # set_checkpoint_debug_enabled: overrides checkpoint(debug=)
        self.group = None  # the active GraphExecGroup


_flags = _Flags()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Context manager (also a decorator): whether non-reentrant checkpoints made inside it stop recomputing as
    soon as every tensor backward needs is back (on by default). It overrides `checkpoint(early_stop=...)`;
    only the forward needs to run inside it.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import checkpoint, set_checkpoint_early_stop
        >>> x = tp.ones(2, requires_grad=True)
        >>> with set_checkpoint_early_stop(False):
        ...     y = checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False)
        >>> y.backward(); x.grad
        tensor([2., 2.])
    """
    prev = _flags.early_stop
    _flags.early_stop = enable
    try:
        yield
    finally:
        _flags.early_stop = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Context manager (also a decorator): checkpoints made inside it run as with `debug=enabled` (None: as
    each call says). Debug mode logs the ops of the forward and of the recomputation, and a mismatch error
    shows both logs with where each op ran.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import checkpoint, set_checkpoint_debug_enabled
        >>> x = tp.ones(2, requires_grad=True)
        >>> with set_checkpoint_debug_enabled(True):
        ...     y = checkpoint(lambda t: t.sin().sum(), x, use_reentrant=False)
        >>> y.backward(); x.grad
        tensor([0.5403, 0.5403])
    """
    prev = _flags.debug
    _flags.debug = enabled
    try:
        yield
    finally:
        _flags.debug = prev


def noop_context_fn():
    """The default `context_fn` of `checkpoint`: two contexts that do nothing (forward, recomputation).

    Example:
        >>> from tapeflow.utils.checkpoint import noop_context_fn
        >>> forward_ctx, recompute_ctx = noop_context_fn()
        >>> with forward_ctx:
        ...     pass
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointError(RuntimeError):
    """Raised when a non-reentrant checkpoint's recomputation does not match its forward (different tensors
    saved), or a saved tensor is unpacked twice in one backward pass.

    Example:
        >>> from tapeflow.utils.checkpoint import CheckpointError
        >>> issubclass(CheckpointError, RuntimeError)
        True
    """


class GraphExecGroup:
    """Context manager: the backward calls inside it count as one backward pass for non-reentrant checkpoints,
    so each checkpointed block is recomputed at most once for all of them. They must not need the same saved
    tensor (a `CheckpointError` says so); nesting raises `RuntimeError`.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import GraphExecGroup, checkpoint
        >>> runs = []
        >>> def block(t):
        ...     runs.append(1)
        ...     y = t.sin()
        ...     return y, y.cos()
        >>> x = tp.ones(2, requires_grad=True)
        >>> y, z = checkpoint(block, x, use_reentrant=False)
        >>> with GraphExecGroup():
        ...     gy, = tp.autograd.grad(z.sum(), y)
        ...     gx, = tp.autograd.grad(y, x, gy)
        >>> len(runs)   # the forward and one recomputation
        2
    """

    def __enter__(self) -> GraphExecGroup:
        if _flags.group is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {_flags.group}")
        _flags.group = self
        return self

    def __exit__(self, *exc) -> None:
        _flags.group = None


# -- use_reentrant=True ---------------------------------------------------------------------------------------
_REENTRANT_GRAD = ("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                   "`inputs` parameter to .backward(). To resolve this error, you can either set "
                   "use_reentrant=False, or call .backward() without passing the `inputs` argument.")


class CheckpointFunction(Function):
    """The block of a reentrant checkpoint as one node: its forward runs the block without recording; its
    backward reruns it with recording on and back-propagates through the rerun (so parameters inside get their
    `.grad` there). `checkpoint(..., use_reentrant=True)` applies it.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import CheckpointFunction
        >>> x = tp.ones(2, requires_grad=True)
        >>> y = CheckpointFunction.apply(lambda t: t * 3, True, x)
        >>> y.grad_fn.name()
        'CheckpointFunctionBackward'
    """

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.autocast = state.autocast
        ctx.tensor_index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_index))
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        task = state.graph_task
        if task is not None and task.targets:  # autograd.grad, or backward(inputs=...)
            raise RuntimeError(_REENTRANT_GRAD)
        args = list(ctx.args)
        for i, t in zip(ctx.tensor_index, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        with _replayed_rng(ctx.rng_state), enable_grad(), _autocast_as(ctx.autocast):
            outputs = ctx.run_function(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *(a._grad if isinstance(a, Tensor) else None for a in args))


def _autocast_as(saved):
    """The autocast state of the forward (`state.autocast` then: `(device type, dtype)` or None) for its
    recomputation, which a backward may run under another one (as PyTorch's checkpoint restores it)."""
    from ..amp import autocast

    if saved is not None:
        return autocast(saved[0], dtype=saved[1])
    if state.autocast is not None:
        return autocast(state.autocast[0], enabled=False)
    return contextlib.nullcontext()


@contextlib.contextmanager
def _replayed_rng(rng_state):
    """Run with the generator at `rng_state` (None: as it is), then put back the state from before."""
    if rng_state is None:
        yield
        return
    outer = get_rng_state()
    set_rng_state(rng_state)
    try:
        yield
    finally:
        set_rng_state(outer)


# -- use_reentrant=False: one frame per checkpoint call -----------------------------------------------------
_DEBUG_TIP = ("\nTip: to see the ops that ran in the forward and in the recomputation, pass `debug=True` to "
              "`torch.utils.checkpoint.checkpoint(...)`, or run the forward inside "
              "`torch.utils.checkpoint.set_checkpoint_debug_enabled(True)`.\n")


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every placeholder is filled (early stop)."""


class _Handle:
    """The key of one recomputed tensor in its frame (the entry dies with the handle)."""


class _Holder:
    """What a node keeps instead of a tensor saved inside a checkpoint: per backward pass (graph id), the
    handle of its recomputed value, None once unpacked."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles = weakref.WeakKeyDictionary()


class _GraphId:
    """The id of an unpack that happens outside any backward pass (`grad_fn._saved_result`): used once."""

    __slots__ = ("__weakref__",)


def _graph_id():
    """Which backward pass is unpacking: the active GraphExecGroup, else the running backward task."""
    if _flags.group is not None:
        return _flags.group
    task = state.graph_task
    return task if task is not None else _GraphId()


def _metadata(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_DETERMINISM_CHECKS = {"default": _metadata, "none": lambda _: None}


class _Frame:
    """The state of one non-reentrant checkpoint call. Graph ids are weak keys: a backward pass's recomputed
    tensors go when the pass (or its placeholders) does."""

    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn = metadata_fn
        self.saved_args = []
        self.weak_holders = []  # one per tensor saved in the forward, in order
        self.x_metadatas = []
        self.recomputed = weakref.WeakKeyDictionary()  # graph id -> {handle: tensor} (weak keys)
        self.recomp_counter = weakref.WeakKeyDictionary()  # graph id -> tensors saved by its recomputation
        self.is_recomputed = weakref.WeakKeyDictionary()
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, args) -> None:
        # The inputs are saved tensors of the enclosing checkpoint, if any (its hooks pack them), so an inner
        # block's recomputation first recomputes the blocks around it.
        tensors = [a for a in args if isinstance(a, Tensor)]
        packed = iter(pack_tensors(tensors) if state.saved_hooks else tensors)
        self.saved_args = [next(packed) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [unpack_tensor(a) if type(a) is Packed else a for a in self.saved_args]

    def recompute(self, gid) -> None:
        args = self.get_inputs()
        try:
            with _RecomputationHook(weakref.ref(self), gid), enable_grad():
                self.recompute_fn(*args)
        except _StopRecomputation:
            pass
        self.is_recomputed[gid] = True
        self.check_recomputed_tensors_match(gid)

    def check_recomputed_tensors_match(self, gid) -> None:
        if self.ignore_saved_mismatch:
            return
        n = self.recomp_counter.get(gid, 0)
        if n != len(self.weak_holders):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {n}.\n{_DEBUG_TIP}")
        recomputed = self.recomputed.get(gid, {})
        differ = []
        for i, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None or self.metadata_fn is None:
                continue
            now = self.metadata_fn(recomputed[holder.handles[gid]])
            if now != self.x_metadatas[i]:
                differ.append(f"tensor at position {i}:\nsaved metadata: {self.x_metadatas[i]}\n"
                              f"recomputed metadata: {now}\n")
        if differ:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\n{''.join(differ)}.\n{_DEBUG_TIP}")


class _RecomputationHook(saved_tensors_hooks):
    """Active while a frame recomputes: each tensor saved fills the next placeholder of the forward."""

    def __init__(self, frame_ref, gid):
        def pack(x):
            # A new tensor, not `x` or `detach()`: `x` may be (or become, as a custom Function's output does)
            # an output of the node that saves it, and `x` or an alias of it would keep that node alive from
            # its own saved tensors (a reference cycle).
            x = Tensor._wrap(x._data)
            frame = frame_ref()
            idx = frame.recomp_counter.get(gid, 0)
            frame.recomp_counter[gid] = idx + 1
            if idx >= len(frame.weak_holders):
                if not frame.forward_completed:  # a backward inside the block's own forward, without early stop
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                      f"than during the original forward pass.\n{_DEBUG_TIP}")
            holder = frame.weak_holders[idx]()
            if holder is not None:  # None: already freed by a backward inside the block's forward
                handle = holder.handles[gid] = _Handle()
                frame.recomputed.setdefault(gid, weakref.WeakKeyDictionary())[handle] = x
            if frame.early_stop and idx + 1 == len(frame.weak_holders):
                raise _StopRecomputation
            # The recomputed graph itself keeps real tensors: a backward inside the block may run through it.
            return x

        super().__init__(pack, lambda x: x)


class _CheckpointHook(saved_tensors_hooks):
    """Active during a checkpointed forward: saved tensors become placeholders that recompute when unpacked."""

    def __init__(self, frame: _Frame):
        def pack(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack(holder):
            try:
                return _unpack(frame, holder)
            except CheckpointError as e:
                if frame.unpack_error_cb is None:
                    raise
                frame.unpack_error_cb(e)

        super().__init__(pack, unpack)


def _unpack(frame: _Frame, holder: _Holder) -> Tensor:
    gid = _graph_id()
    if not frame.is_recomputed.get(gid, False):
        frame.recompute(gid)
    handle = holder.handles.get(gid)
    if handle is None:
        overlap = ("Performing two backward calls that overlap (i.e. require the same saved activation in order "
                   "to compute gradients) is not allowed while under the torch.utils.checkpoint.GraphExecGroup "
                   "context. " if _flags.group is not None else "")
        raise CheckpointError("torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                              f"unpacked once. {overlap}If you are calling ctx.saved_tensors in backward, make sure "
                              "to do so only once. Otherwise please open an issue with details on your use case.")
    value = frame.recomputed[gid][handle]
    holder.handles[gid] = None
    return value


# -- debug mode: logs of the ops run -------------------------------------------------------------------------
class _OpLog:
    """Context manager recording each op dispatched inside it, with where it was called from."""

    def __init__(self):
        self.ops, self.stacks = [], []

    def _record(self, op, args, params, proceed):
        shapes = ", ".join(str(list(a.shape)) if isinstance(a, Tensor) else repr(a) for a in args)
        self.ops.append(f"{op.name}({shapes})")
        self.stacks.append(traceback.format_list(traceback.extract_stack()[:-3][-6:]))
        return proceed(op, args, params)

    def __enter__(self):
        self.ops, self.stacks = [], []
        state.interceptors.append(self._record)
        return self

    def __exit__(self, *exc):
        state.interceptors.remove(self._record)
        return False


def _debug_context_and_callback():
    forward, recompute = _OpLog(), _OpLog()

    def log(title, oplog):
        lines = [f"{i + 1}. {name}\n{''.join(stack)}" for i, (name, stack) in enumerate(zip(oplog.ops, oplog.stacks))]
        return f"== Ops run {title} ({len(lines)}), each with where it was called:\n" + "\n".join(lines)

    def on_error(e: CheckpointError):
        raise CheckpointError(
            f"{log('in the original forward', forward)}\n{log('during recomputation', recompute)}\n"
            "ERROR: Detected non-determinism while running activation checkpointing.\n"
            "You are seeing this error because you passed `debug=True` to checkpoint and tensors to be saved during "
            "the original forward differ from those saved during recomputation. This can happen if different "
            "operators ran in the original forward and in the recomputation: compare the two logs above to find "
            f"where they part.\n{e}") from e

    return (lambda: (forward, recompute)), on_error


# -- selective activation checkpointing ---------------------------------------------------------------------
class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: `MUST_SAVE`/`PREFER_SAVE` keep it from the
    forward; `MUST_RECOMPUTE`/`PREFER_RECOMPUTE` recompute it; `MUST_CPU_OFFLOAD`/`PREFER_CPU_OFFLOAD` are
    accepted and recompute (tapeflow has no offloading compiler to honour them). `MUST_*` and `PREFER_*`
    differ only to compilers that may override a preference.

    Example:
        >>> from tapeflow.utils.checkpoint import CheckpointPolicy
        >>> CheckpointPolicy.MUST_SAVE.value, CheckpointPolicy.PREFER_RECOMPUTE.value
        (0, 3)
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """The first argument of a selective checkpointing policy: `op_output` is the op's result. The policy runs
    in the forward only, so `is_recompute` is always False (kept for policies that read it).

    Example:
        >>> from tapeflow.utils.checkpoint import SelectiveCheckpointContext
        >>> SelectiveCheckpointContext(is_recompute=False).is_recompute
        False
    """

    def __init__(self, *, is_recompute: bool, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_RECOMPUTE, _CONSUMED = object(), object()
_SAC_IGNORED = frozenset({"detach", "alias"})  # checkpointing's own bookkeeping may add these
_SAC_MISMATCH = ("This can happen if the operations in the checkpointed region are nondeterministic or depend on "
                 "global state that changed between forward and backward.")


class _Cached:
    """An op output kept by selective checkpointing: its value, and its version counter with the version then
    (in-place writes to it afterwards are errors). Only the array is kept, not the tensor, whose node would
    otherwise keep itself alive through the checkpoint."""

    __slots__ = ("value", "storage", "version")

    def __init__(self, t: Tensor):
        self.value = t._data
        self.storage = t._st()
        self.version = self.storage.version

    def get(self, allow_mutation: bool):
        if not allow_mutation and self.storage.version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        return self.value


class _OpInterceptor:
    """Context manager: `self._intercept` sees every op dispatched inside it."""

    def __enter__(self):
        self.counter = defaultdict(int)
        state.interceptors.append(self._intercept)
        return self

    def __exit__(self, *exc):
        state.interceptors.remove(self._intercept)
        return False


class _CachingContext(_OpInterceptor):
    """The forward of a selective checkpoint: asks the policy about each op and keeps what it says to save."""

    def __init__(self, policy_fn, storage):
        self.policy_fn, self.storage = policy_fn, storage

    def _intercept(self, op, args, params, proceed):
        out = proceed(op, args, params)
        if op.name in _SAC_IGNORED:
            return out
        idx = self.counter[op]
        self.counter[op] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), op, *args,
                                **dict(params))
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if policy in _SAVE:
            self.storage[op][idx] = (tuple(None if o is None else _Cached(o) for o in out) if type(out) is tuple
                                     else _Cached(out))
        else:
            self.storage[op][idx] = _RECOMPUTE
        return out


class _CachedContext(_OpInterceptor):
    """The recomputation of a selective checkpoint: ops whose outputs were kept are recorded with them."""

    def __init__(self, storage, allow_mutation):
        self.storage, self.allow_mutation = storage, allow_mutation

    def _intercept(self, op, args, params, proceed):
        if op.name in _SAC_IGNORED:
            return proceed(op, args, params)
        idx = self.counter[op]
        self.counter[op] += 1
        entries = self.storage.get(op)
        if entries is None:
            raise RuntimeError(f"{op.name} encountered during backward but not found in storage. {_SAC_MISMATCH}")
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(f"{op.name} invocation index {idx} encountered during backward but not found in "
                               f"storage. {_SAC_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any "
                               "region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return proceed(op, args, params)
        entries[idx] = _CONSUMED
        return _record_with_outputs(op, args, params, entry, self.allow_mutation)


def _record_with_outputs(op, args, params, entry, allow_mutation):
    """`op` on `args` recorded on the tape as usual, its outputs taken from the cache instead of computed."""
    from .._dispatch import _SCALAR_TYPES, _results, _scalar

    arrays = [a._data if isinstance(a, Tensor) else _scalar(a) if type(a) in _SCALAR_TYPES else a for a in args]
    if type(entry) is tuple:
        out = tuple(None if c is None else c.get(allow_mutation) for c in entry)
    else:
        out = entry.get(allow_mutation)
    return _results(op, args, arrays, params, out)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False):
    """The `context_fn` pair of selective activation checkpointing: ops the policy chooses keep their outputs
    from the forward; the others are recomputed in backward.

    The unit is the op tapeflow dispatches (an `xla_ops.Op`, what `torch.ops.aten.<name>.default` names under
    `tapeflow.torch`). Use it as `context_fn=functools.partial(create_selective_checkpoint_contexts, policy)`.

    Arguments:
        policy_fn_or_list: `policy(ctx, op, *args, **params) -> CheckpointPolicy` (or a bool, True for save),
            called once per op in the forward; or a list of ops to save (all others are recomputed).
        allow_cache_entry_mutation: allow in-place writes to saved outputs (an error otherwise).

    Returns:
        The forward context and the recomputation context.

    Example:
        >>> import functools
        >>> import tapeflow as tp
        >>> import xla_ops
        >>> from tapeflow.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts
        >>> keep_sin = functools.partial(create_selective_checkpoint_contexts, [xla_ops.TABLE["sin"]])
        >>> x = tp.ones(2, requires_grad=True)
        >>> y = checkpoint(lambda t: t.sin().cos().sum(), x, use_reentrant=False, context_fn=keep_sin)
        >>> y.backward(); x.grad
        tensor([-0.4029, -0.4029])
    """
    if isinstance(policy_fn_or_list, list):
        from ..torch._ops import OpOverloadPacket

        for op in policy_fn_or_list:
            if not isinstance(op, xla_ops.Op):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload. For example, if you have "
                         "`torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                         if isinstance(op, OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. "
                                 f"{extra}")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = defaultdict(dict)
    return _CachingContext(policy_fn, storage), _CachedContext(storage, allow_cache_entry_mutation)


# -- checkpoint() ---------------------------------------------------------------------------------------------
_SUPPRESSED = ("torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised "
               "during the checkpointed forward. This is not supported because checkpoint cannot return a value for "
               "a failed forward.")


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, early_stop,
                                  args, kwargs):
    unpack_error_cb = None
    if _flags.debug if _flags.debug is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_callback()
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():
        return function(*args, **kwargs)
    rng_state = get_rng_state() if preserve else None
    autocast_state = state.autocast

    def recompute_fn(*inputs):
        with _replayed_rng(rng_state), _autocast_as(autocast_state), recompute_context:
            function(*inputs, **kwargs)

    stop = _flags.early_stop if _flags.early_stop is not None else early_stop
    frame = _Frame(recompute_fn, stop, unpack_error_cb, _DETERMINISM_CHECKS[determinism_check])
    frame.save_inputs(args)
    finished = False
    with _CheckpointHook(frame), forward_context:
        out = function(*args, **kwargs)
        finished = True
    if not finished:
        raise RuntimeError(_SUPPRESSED)
    frame.forward_completed = True
    return out


_USE_REENTRANT = ("the use_reentrant parameter should be passed explicitly. {} "
                  "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
                  "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
                  "variants.")


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs):
    """`function(*args, **kwargs)` without keeping what its backward needs; that is recomputed then.

    Arguments:
        function: the block (a module or any function).
        *args: its arguments (tensors or anything else; nested containers are passed as they are).
        use_reentrant: PyTorch's two variants (see the module docs); pass it explicitly (a warning otherwise,
            defaulting to True). With True, keyword arguments are refused and the block's parameters get
            gradients only when an input requires grad.
        preserve_rng_state: (keyword, default True) replay the generator state for the recomputation.
        context_fn: (non-reentrant) returns two context managers, the forward runs in the first and the
            recomputation in the second (see `create_selective_checkpoint_contexts`).
        determinism_check: (non-reentrant) `"default"` compares the shape, dtype and device of each recomputed
            tensor with the forward's; `"none"` does not.
        debug: (non-reentrant) on a mismatch, show the ops of the forward and of the recomputation.
        early_stop: (non-reentrant) stop recomputing once every saved tensor is back; see
            `set_checkpoint_early_stop`, which overrides it.
        **kwargs: (non-reentrant) keyword arguments of `function`.

    Returns:
        `function`'s output. Gradients reach the block's inputs and the parameters it uses.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import checkpoint
        >>> block = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 4))
        >>> x = tp.randn(2, 4, requires_grad=True)
        >>> checkpoint(block, x, use_reentrant=False).sum().backward()
        >>> x.grad.shape, block[0].weight.grad.shape
        (tapeflow.Size([2, 4]), tapeflow.Size([8, 4]))
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: " + _USE_REENTRANT.format(
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception."), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if any(isinstance(a, Tensor) and isinstance(a._data, jax.core.Tracer) for a in args):
        return function(*args, **kwargs)  # staged: one program, XLA rematerialises as it sees fit
    if not use_reentrant:
        return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, early_stop,
                                             args, kwargs)
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    return CheckpointFunction.apply(function, preserve, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Run a `Sequential` (or list of modules) in `segments` checkpointed chunks; the last chunk runs normally.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import checkpoint_sequential
        >>> net = tp.nn.Sequential(*[tp.nn.Linear(4, 4) for _ in range(4)])
        >>> checkpoint_sequential(net, 2, tp.randn(3, 4), use_reentrant=False).shape
        tapeflow.Size([3, 4])
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: " + _USE_REENTRANT.format(
            "In version 2.9 we will raise an exception if use_reentrant is not passed."), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
