"""The dispatcher: unwrap Tensors, run one compiled `xla_ops` op, wrap the
result, and record a backward node when grad mode is on and an input
requires grad. This is the hottest path in tapeflow; keep it flat.

Also here: views (aliases that share storage) and in-place writes.
"""

from __future__ import annotations

import math
import re
import traceback
import weakref

import jax
import jax.numpy as jnp
import numpy as np

import xla_ops
from xla_ops.shape import view_apply, view_scatter

from . import _adaptive as _lazy
from . import _device as _device_mod
from . import _dtype
from ._meta import MetaArray, meta_results
from ._state import state
from ._tensor import _FLOAT_KINDS, Tensor, _alias, _is_float_array, _Storage
from .autograd import _saved_hooks
from .autograd.graph import AccumulateGrad, Invalid, OpNode, _sequence, node_class

__all__ = ["dispatch", "view", "inplace", "accumulator", "edge", "check_inference_write", "rename_node"]

_new = object.__new__
_raw_set = Tensor.__dict__["_raw"].__set__
# The `grad_fn` slot itself, read and written past the property of an invalid view (whose `grad_fn` raises).
_grad_fn, _set_grad_fn = Tensor.__dict__["grad_fn"].__get__, Tensor.__dict__["grad_fn"].__set__
_adaptive = _lazy.is_adaptive_eager_enabled()  # read on every dispatch; `set_adaptive_eager` changes it

def accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's `AccumulateGrad` node (made on demand, kept while a graph uses it)."""
    ref = t._acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._acc = weakref.ref(acc)
    return acc


def edge(t: Tensor) -> tuple:
    """The graph edge a gradient for `t` flows into."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (accumulator(t), 0) if t._requires_grad and t._no_grad_view is None else (None, 0)


def dispatch(op: xla_ops.Op, args: tuple, params: tuple = (), _inner: bool = False):
    """Run `op` on `args` (Tensors, Python scalars, None); return Tensor(s)."""
    if state.interceptors:
        if not _inner:
            return _intercepted(op, args, params, 0)
        if _adaptive and op.deferrable and not state.anomaly and all(
                getattr(f, "deferrable", False) for f in state.interceptors):
            return _dispatch_adaptive(op, args, params)  # (interceptors that only recast arguments: autocast)
    elif _adaptive and op.deferrable and not state.anomaly:
        return _dispatch_adaptive(op, args, params)
    # (`_data`: an input recorded while adaptive eager was on runs its segment first; a pending input met
    # by the op's jitted call would cost an exception through JAX's traceback filtering, milliseconds)
    arrays = [a._data if isinstance(a, Tensor) else _scalar(a) if type(a) in _SCALAR_TYPES else a for a in args]
    fn = op._fwd_cache.get(params)
    if fn is None:
        fn = op.compiled(params)
    try:
        out = fn(*arrays)
    except (TypeError, ValueError) as e:
        if any(type(a) is MetaArray for a in arrays):
            return _meta_outputs(fn, arrays, op, args)
        raise _op_error(op, args, e) from e
    return _results(op, args, arrays, params, out)


def _meta_outputs(fn, arrays, op, args):
    """An op on meta tensors (see `_meta`): meta results, their shapes from abstract evaluation."""
    try:
        out = meta_results(fn, arrays)
    except (TypeError, ValueError) as e:
        raise _op_error(op, args, e) from e
    if type(out) is tuple:
        return tuple(None if o is None else Tensor._wrap(o) for o in out)
    return Tensor._wrap(out)


def _dispatch_adaptive(op, args, params):
    """`dispatch` with adaptive eager on: the op is recorded into the thread's segment (see `_adaptive`)."""
    arrays = []  # (a loop: a comprehension is a call of its own)
    for a in args:
        arrays.append(a._raw if isinstance(a, Tensor) else _scalar(a) if type(a) in _SCALAR_TYPES else a)
    fn = op._fwd_cache.get(params)
    if fn is None:
        fn = op.compiled(params)
    try:
        out = _lazy.record(fn, arrays)
        if out is None:  # not recordable (e.g. a tracer among the inputs): run it now
            arrays = [a.get() if type(a) is _lazy.Pending else a for a in arrays]
            return _results(op, args, arrays, params, fn(*arrays))
    except (TypeError, ValueError) as e:
        if any(type(a) is MetaArray for a in arrays):
            return _meta_outputs(fn, arrays, op, args)
        raise _op_error(op, args, e) from e
    return _results(op, args, arrays, params, out)


def _results(op, args, arrays, params, out):
    """The op's output as Tensors, recorded on the tape when an input requires grad."""
    if state.grad_enabled and op.differentiable:
        n = len(args)
        if n == 2:  # (most ops; which inputs need grad, as one of four shared tuples)
            a, b = args
            needs = _NEEDS2[(isinstance(a, Tensor) and a._requires_grad) + 2 * (isinstance(b, Tensor) and b._requires_grad)]
        elif n == 1:
            a = args[0]
            needs = _ONE if isinstance(a, Tensor) and a._requires_grad else None
        else:
            needs = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
            if True not in needs:
                needs = None
        if needs is not None and op.unread_inputs:
            needs = _read_needs(op, params, arrays, needs)
        if needs is not None:
            return _record(op, args, arrays, params, out, needs)
    elif state.stop_traced:
        out = _stop_traced(out)
    elif state.grad_enabled and op in _UNDIFFERENTIATED:
        res = _undifferentiated(op, args, out)
        if res is not None:
            return res
    if type(out) is tuple:
        return tuple(None if o is None else Tensor._wrap(o) for o in out)
    t = _new(Tensor)
    _raw_set(t, out)
    t.grad_fn, t._output_nr, t._requires_grad, t._grad, t._storage = None, 0, False, None, None
    if state.inference:
        t._inference = True
    return t


# Ops whose derivative PyTorch does not implement: with an input that requires grad, the output joins the graph
# through PyTorch's `NotImplemented` node, so a backward that reaches it raises instead of passing over it.
_UNDIFFERENTIATED = {xla_ops.floor_divide: "aten::floor_divide", xla_ops.heaviside: "aten::heaviside",
                     xla_ops.histogram: "aten::histogram"}


def _undifferentiated(op, args, out):
    """The outputs of `op` (in `_UNDIFFERENTIATED`) with the first one on PyTorch's `NotImplemented` node; None
    when no input requires grad."""
    first = out[0] if type(out) is tuple else out
    inputs = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
    if not inputs or first.dtype.kind not in _FLOAT_KINDS:
        return None
    from .autograd.graph import not_implemented_node

    res = Tensor._make(first, not_implemented_node("NotImplemented", _UNDIFFERENTIATED[op], inputs, RuntimeError),
                       0, True)
    if type(out) is tuple:
        return (res, *(None if o is None else Tensor._wrap(o) for o in out[1:]))
    return res


def _stop_traced(out):
    """Results computed in a user's `no_grad` region on JAX tracers: JAX must not differentiate them either."""
    first = out[0] if type(out) is tuple else out
    if isinstance(first, jax.core.Tracer):
        return jax.tree.map(jax.lax.stop_gradient, out)
    return out


def _intercepted(op, args, params, i):
    chain = state.interceptors
    if i == len(chain):
        return dispatch(op, args, params, True)
    return chain[i](op, args, params, lambda o, a, p: _intercepted(o, a, p, i + 1))


# NumPy scalars count as Python numbers (weakly typed), as in PyTorch.
_SCALAR_TYPES = frozenset((float, int, bool, np.float64, np.float32, np.float16, np.int64, np.int32, np.bool_))
_scalars: dict = {}


def _scalar(a):
    """A Python number as a cached, weakly typed JAX scalar (passing Python
    numbers to a jitted function converts them on every call, and converting
    one runs a JAX op outside the pending segment)."""
    key = (type(a), a)
    v = _scalars.get(key)
    if v is None:
        if a == 0:  # 0.0 and -0.0 are equal keys: zeros are kept apart by their sign
            key = (type(a), math.copysign(1.0, a))
            v = _zeros.get(key)
            if v is not None:
                return v
        v = jnp.asarray(a.item() if isinstance(a, np.generic) else a)
        # NaN never hits the cache; inside a JAX trace `asarray` gives a tracer, which must not outlive that trace.
        if a == a and not isinstance(v, jax.core.Tracer):
            cache = _zeros if a == 0 else _scalars
            if len(cache) > 4096:
                cache.clear()
            cache[key] = v
    return v


_zeros: dict = {}
_device_mod._FORGET_ON_MOVE += [_scalars.clear, _zeros.clear]


def _op_error(op, args, e) -> RuntimeError:
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    msg = str(e)
    if "broadcast" in msg.lower() or "incompatible shapes" in msg.lower():
        first = _broadcast_mismatch(shapes)
        if first is not None:
            (a, b, dim) = first
            return RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                                f"dimension {dim} ({op.name} of shapes {' and '.join(str(list(s)) for s in shapes)})")
    listed = ", ".join(str(list(a.shape)) if isinstance(a, Tensor) else repr(a) for a in args)
    return RuntimeError(f"{op.name} failed on inputs of shapes ({listed}): {msg}")


def _broadcast_mismatch(shapes: list) -> tuple | None:
    """`(size_a, size_b, dim)` of the first pair of shapes that do not broadcast, dims counted as PyTorch does."""
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            n = max(len(a), len(b))
            pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
            for dim in range(n - 1, -1, -1):
                if pa[dim] != pb[dim] and 1 not in (pa[dim], pb[dim]):
                    return pa[dim], pb[dim], dim
    return None


_INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                    "mode in computation tracked by autograd. To work around this, you can make a clone to get a normal "
                    "tensor and use it in autograd, or use `tapeflow.no_grad()` instead of `tapeflow.inference_mode()`.")


_NO_EDGE = (None, 0)  # the edge of an input that needs no gradient
_interned: dict = {}
_plans: dict = {}  # (op, which inputs need grad) -> (node class, inputs saved, the `needs` tuple nodes share)


def _plan(op, needs: tuple) -> tuple:
    """What `_record` makes of `op` when the inputs marked in `needs` require grad: the node class and
    which inputs it saves (None: all of them)."""
    saves = op.saves
    if op.saved_for:
        saves = _saves_needed(op, needs)
    elif op.linear:
        saves = _saves_linear(op, needs)
    plan = _plans[(op, needs)] = (node_class(op.node), saves, needs)
    return plan


def _shared(t: tuple) -> tuple:
    """One shared copy of a node's small constant tuple (`_metas`): fewer objects for the cyclic garbage
    collector to walk on long graphs."""
    s = _interned.get(t)
    if s is None:
        if len(_interned) > 10_000:
            _interned.clear()
        s = _interned[t] = t
    return s


def _record(op, args, arrays, params, out, needs):
    """Record the node of `op` (the inputs marked in `needs` require grad) and return its outputs as Tensors
    with the node as their `grad_fn`."""
    plan = _plans.get((op, needs))
    if plan is None:
        plan = _plan(op, needs)
    cls, saves, needs = plan
    if op.edge_rule is not None and op.edge_rule[2]:
        cls = _overload_class(op.edge_rule, args, cls)
    node = _new(cls)
    edges, saved, versions, metas = [], [], [], []
    any_meta = False
    keeps = op.save_ans  # whether the node keeps anything that backward frees
    i = -1
    for a in args:
        i += 1
        if isinstance(a, Tensor):
            if not needs[i]:
                edges += _NO_EDGE
            elif a.grad_fn is not None:
                edges.append(a.grad_fn)
                edges.append(a._output_nr)
            elif a._no_grad_view is None:
                edges.append(accumulator(a))
                edges.append(0)
            else:  # a view made under no_grad / inference mode: its gradient goes nowhere (PyTorch)
                edges += _NO_EDGE
            if saves is None or i in saves:
                keeps = True
                if a._inference:
                    raise RuntimeError(_INFERENCE_SAVED)
                metas.append(None)
                if i in op.snapshot and (a.grad_fn is not None or not a._requires_grad):
                    saved.append(_snapshot(a))
                    continue
                saved.append(a)
                st = a._storage
                if st is None:
                    st = a._st()
                versions.append((st, st.version, a))
            else:
                saved.append(None)
                any_meta = True
                x = arrays[i]
                metas.append((x.shape, x.dtype))
        else:
            edges += _NO_EDGE
            if saves is None or i in saves:
                x = arrays[i]
                saved.append(x)
                metas.append(None)
                keeps = keeps or x is not None  # a saved number is freed too (PyTorch saves it as a tensor)
            else:
                saved.append(None)
                any_meta = True
                metas.append(_NO_META)
    node.op = op
    node.params = params
    node.needs = needs
    node._next = tuple(edges)
    if op.edge_rule is not None:
        node._visible = _visible_inputs(op.edge_rule, args)
    node._saved = tuple(saved)
    if any_meta:
        metas = tuple(metas)
        node._metas = _interned.get(metas) or _shared(metas)
    else:
        node._metas = ()
    node._freed = False if keeps else None  # None: nothing to free, so backward may run through it again
    node._seq = next(_sequence)
    if state.anomaly:
        node._trace = traceback.extract_stack()[:-3]
    if type(out) is tuple:
        res = tuple(None if o is None else Tensor._make(o, node, i, True) if _is_float_array(o)
                    else Tensor._wrap(o) for i, o in enumerate(out))
        node._out_meta = tuple(None if o is None or not _is_float_array(o) else (o.shape, o.dtype) for o in out)
        node._aval = None
        if len(out) > 1:
            reads = _partial_reads(op, params, arrays, needs, node._out_meta)
            if reads is not None:
                node._reads = reads
        first = res[0]
    else:
        if out.dtype.kind in _FLOAT_KINDS:
            res = _new(Tensor)
            _raw_set(res, out)
            res.grad_fn = node
            res._output_nr = 0
            res._requires_grad = True
            res._grad = None
            res._storage = None
        else:
            res = Tensor._wrap(out)
        node._out_meta = ()
        node._aval = out.aval
        first = res
    if op.save_ans:
        node._ans = out
        st = first._storage = _Storage()
        versions.append((st, 0, None))
    else:
        node._ans = None
    node._versions = tuple(versions)
    if state.saved_hooks:
        _pack_saved(node, args, res)
    return res


def _visible_inputs(rule, args):
    """The inputs PyTorch's node links (see `xla_ops.Op.edge_rule`), or None for all of them."""
    edges, scalar, _ = rule
    n = len(args)
    shown = tuple(i for i in (range(n) if edges is None else edges)
                  if i < n and not (i in scalar and not isinstance(args[i], Tensor)))
    return None if len(shown) == n else shown


def _overload_class(rule, args, default):
    """The node class of the PyTorch overload that `args` select (see `xla_ops.Op.edge_rule`)."""
    numbers = tuple(sorted(i for i in rule[1] if i < len(args) and not isinstance(args[i], Tensor)))
    name = rule[2].get(numbers)
    return default if name is None else node_class(name)


def _read_needs(op, params, arrays, needs):
    """`needs` less the inputs no output of `op` reads (`Op.unread_inputs`): no edge links them, so their
    gradient is None, as in PyTorch (None when no input is left)."""
    reads = _reads_of(op, params, arrays)
    if reads is None:
        return needs
    read = frozenset().union(*reads)
    needs = tuple(need and i in read for i, need in enumerate(needs))
    return needs if True in needs else None


def _reads_of(op, params, arrays):
    """`op.dependencies` on inputs `arrays`, or None when their abstract values are not known (e.g. NumPy)."""
    try:
        return op.dependencies(params, tuple(None if a is None else (a.shape, a.dtype, a.aval.weak_type)
                                             for a in arrays))
    except Exception:  # noqa: BLE001 - then every output counts as reading every input
        return None


def _partial_reads(op, params, arrays, needs, out_meta):
    """Which inputs each output of a multi-output `op` reads (`Op.dependencies`), when some input that needs
    a gradient is not read by every output that carries one (the gradients of the rest: the engine then
    gives such an input no gradient when the outputs that read it got none, as PyTorch, whose graph never
    links them); None otherwise, or when the inputs' abstract values are not known."""
    reads = _reads_of(op, params, arrays)
    if reads is None:
        return None
    carrying = [r for r, m in zip(reads, out_meta) if m is not None]
    for j, need in enumerate(needs):
        if need and not all(j in r for r in carrying):
            return reads
    return None


_ONE = (True,)
_NEEDS2 = (None, (True, False), (False, True), (True, True))  # by `needs[0] + 2 * needs[1]`
_NO_META = ((), None)  # the meta of an input that is a Python number


def _pack_saved(node, args, res) -> None:
    _saved_hooks.pack_node(node, args, res)


def _saves_linear(op, needs):
    """The inputs of a linear op that some gradient reads: each one another input's gradient needs (none of
    the differentiable ones when the inputs enter separately, as a write into a region of a base does)."""
    grads = [i for i, need in enumerate(needs) if need]
    if len(grads) > 1 and op.linear != "separable":
        return None  # every input is read by another's gradient
    return frozenset(i for i in range(len(needs)) if i not in grads)


def _snapshot(t: Tensor):
    """`t`'s current value with `t`'s history, immune to later in-place writes into `t` (JAX arrays are
    immutable); a tensor outside autograd is kept as its array."""
    if not t._requires_grad:
        return t._raw
    snap = Tensor._make(None, t.grad_fn, t._output_nr, True)
    _raw_set(snap, t._raw)
    return snap


def _saves_needed(op, needs):
    """`op.saves` less the inputs saved only for gradients that no input here needs."""
    saves = op.saves
    for i, users in op.saved_for.items():
        for j in users:
            if j < len(needs) and needs[j]:
                break
        else:
            saves = saves - {i}
    return saves


# -- views ------------------------------------------------------------------------------
def view(x: Tensor, op: xla_ops.Op, params: tuple = ()):
    """Apply a view op: the result aliases `x` (shared storage and version)."""
    if x._inference and not state.inference:
        return _inference_view(x, op, params)
    out = dispatch(op, (x,), params)
    if type(out) is tuple:
        res = tuple(_alias(x, o, (op.name, params, i)) for i, o in enumerate(out))
    else:
        res = _alias(x, out, (op.name, params, None))
    if x._requires_grad and not state.grad_enabled and not x._inference:
        # As PyTorch's, a view of a tensor requiring grad made under no_grad / inference mode requires grad
        # too: a leaf whose gradient goes nowhere (ops on it record the edge (None, 0)); not a view of an
        # inference tensor.
        for v in res if type(res) is tuple else (res,):
            if v._raw.dtype.kind in _FLOAT_KINDS:
                v._requires_grad = True
    if state.view_listeners:
        for f in state.view_listeners:
            f(x, res)
    return res


def _inference_view(x: Tensor, op, params):
    """A view op on an inference tensor outside inference mode: as in PyTorch, an inference tensor that needs no
    grad and records no graph (a write into it outside inference mode is refused, one inside reaches `x`)."""
    enabled, state.grad_enabled = state.grad_enabled, False
    try:
        out = dispatch(op, (x,), params)
        res = tuple(_alias(x, o, (op.name, params, i)) for i, o in enumerate(out)) if type(out) is tuple \
            else _alias(x, out, (op.name, params, None))
    finally:
        state.grad_enabled = enabled
    for v in res if type(res) is tuple else (res,):
        v._inference = True
        v._no_grad_view = None
    return res


# -- in-place writes -------------------------------------------------------------------------
def inplace(x: Tensor, result: Tensor) -> Tensor:
    """Make `x` hold `result` (computed out of place from `x`), as an in-place op would.

    The write goes through to `x`'s base and every alias; the shared version
    counter is bumped; `x` takes over `result`'s history.
    """
    check_inference_write(x)
    if _grad_fn(x) is None and x._requires_grad and state.grad_enabled and x._no_grad_view is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. "
            "Wrap the update in `with tapeflow.no_grad():`, or work on x.detach() / a clone.")
    if x._view and state.grad_enabled:
        if x._requires_grad or x._base._requires_grad:
            _check_view_write(x)
        elif result.grad_fn is not None:
            _check_untracked_view_write(x)
    if result._raw.shape != x._raw.shape:
        raise RuntimeError(f"output with shape {list(x._raw.shape)} doesn't match the broadcast shape "
                           f"{list(result._raw.shape)}")
    if result._raw.dtype != x._raw.dtype:
        result = _cast_for_inplace(x, result)
    if _saved_hooks.mutation_context is not None:
        _saved_hooks.mutation_context.before_write(x._st(), result.grad_fn)
    listeners = state.inplace_listeners
    old = tuple((t, t._raw, _grad_fn(t), t._output_nr, t._requires_grad) for t in (x, x._base) if t is not None) \
        if listeners else None  # what the write replaces, for listeners that may undo it
    st = x._st()
    node = result.grad_fn
    retained = [(t, t.grad_fn, t._output_nr) for t in (x, x._base) if t is not None and t._retains_grad]
    if node is not None:
        _snapshot_saved(node, st)
    base = x._base
    if base is None:
        _raw_set(x, result._raw)
        if result.grad_fn is not None:
            x.grad_fn, x._output_nr, x._requires_grad = result.grad_fn, result._output_nr, True
    elif x._view == ():
        _raw_set(base, result._raw)
        _raw_set(x, result._raw)
        if result.grad_fn is not None:
            x.grad_fn, x._output_nr, x._requires_grad = result.grad_fn, result._output_nr, True
    else:
        _write_view(x, base, result, st)
    st.version += 1
    if node is not None and result._storage is not None:
        _retarget_saved(node, result._storage, st)
    _refresh_views(st, base if base is not None else x, x)
    for t, old_fn, old_nr in retained:
        _move_retained(t, old_fn, old_nr)
    if listeners:
        for f in listeners:
            f(x, result, old)
    return x


def check_inference_write(x: Tensor) -> None:
    """An inference tensor is written in place only inside inference mode (PyTorch's rule)."""
    if x._inference and not state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")


_CUSTOM_VIEW = ("This view was created inside a custom Function (or because an input was returned as-is) and the "
                "autograd logic to handle view+inplace would override the custom backward associated with the custom "
                "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
                "output of the custom Function.")
_MULTI_VIEW = ("This view is the output of a function that returns multiple views. Such functions do not allow the "
               "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


def _mode_view_error(mode: str, what: str = "A view", reason: str | None = None) -> RuntimeError:
    """PyTorch's refusal of an in-place write in grad mode into a view made under no_grad or in inference mode
    (`mode`)."""
    made, written, block = ("inference mode", "in normal mode", "inference_mode") if mode == "inference" else \
        ("no_grad mode", "with grad mode enabled", "no_grad")
    if reason is None:
        reason = ("Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                  f"by moving both the view and the inplace either both inside the {block} block (if you don't want "
                  "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    return RuntimeError(f"{what} was created in {made} and is being modified inplace {written}. {reason}")


def _check_untracked_view_write(v: Tensor) -> None:
    """PyTorch's refusals of an in-place write that would give a history to a view of a tensor that needs no
    gradient, when the view cannot take one (made by a custom Function, by an op returning several views, or
    under no_grad / in inference mode)."""
    multi = (any(step[2] is not None for step in v._view) or getattr(v, "_multi_origin", None) is not None) \
        and not v._unsafe_view
    if v._custom_fn_view or multi:
        raise _mode_view_error("no_grad", reason=_CUSTOM_VIEW if v._custom_fn_view else _MULTI_VIEW)
    if v._untracked_no_grad_view:
        raise _mode_view_error(v._untracked_no_grad_view)


def _check_view_write(v: Tensor) -> None:
    """PyTorch's refusals of an in-place write into a view whose history cannot be rewritten soundly."""
    if v._custom_fn_view and _grad_fn(v) is not None:
        name, nr = v._custom_fn_view
        raise RuntimeError(f"Output {nr} of {name} is a view and is being modified inplace. " + _CUSTOM_VIEW)
    if v._no_grad_view == "inference":
        raise _mode_view_error("inference")
    if v._no_grad_view:
        raise _mode_view_error("no_grad", reason=_CUSTOM_VIEW if v._custom_fn_view else None)
    if v._untracked_no_grad_view and _grad_fn(v) is not None:  # (a view of a no_grad view given requires_grad)
        name = re.sub(r"Backward\d*$", "", v.grad_fn.name())
        raise _mode_view_error(v._untracked_no_grad_view, f"Output {v._output_nr} of {name} is a view of a view which")
    multi = next((step for step in v._view if step[2] is not None), None) or getattr(v, "_multi_origin", None)
    if multi is not None and v.grad_fn is not None and not v._unsafe_view:
        name = re.sub(r"Backward\d*$", "", xla_ops.TABLE[multi[0]].node)  # (the op that made the several views)
        raise RuntimeError(
            f"Output {multi[2]} of {name} is a view and is being modified inplace. This view is the output of a "
            "function that returns multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one.")


def _move_retained(t: Tensor, old_fn, old_nr: int) -> None:
    """`t.retain_grad()` follows `t` to its new history after an in-place write (its old version's gradient is
    not retained), as in PyTorch."""
    if t.grad_fn is old_fn:
        return
    if old_fn is not None and old_fn._retained:
        old_fn._retained.pop(old_nr, None)
    node = t.grad_fn
    if node._retained is None:
        node._retained = {}
    node._retained[t._output_nr] = weakref.ref(t)


def _snapshot_saved(node, st) -> None:
    """The node of an in-place op saved the tensor it is about to overwrite:
    point it at a snapshot of the old value and history instead (JAX arrays are
    immutable, so the snapshot is exact and needs no copy)."""
    saved = getattr(node, "_saved", None)
    if not saved or not any(isinstance(s, Tensor) and s._storage is st for s in saved):
        return
    snaps = {}
    for s in saved:
        if isinstance(s, Tensor) and s._storage is st and id(s) not in snaps:
            snaps[id(s)] = snap = Tensor._make(None, s.grad_fn, s._output_nr, s._requires_grad)
            _raw_set(snap, s._raw)
    node._saved = tuple(snaps.get(id(s), s) if isinstance(s, Tensor) else s for s in saved)
    node._versions = tuple((snaps[id(e[2])]._st(), 0, snaps[id(e[2])]) if e[2] is not None and id(e[2]) in snaps
                           else e for e in node._versions)


def _retarget_saved(node, old_st, st) -> None:
    """Saved entries that referred to the temporary result now refer to the
    written tensor, at its new version."""
    versions = getattr(node, "_versions", None)
    if versions and any(e[0] is old_st for e in versions):
        node._versions = tuple((st, st.version, e[2]) if e[0] is old_st else e for e in versions)


def _category(dt) -> int:
    return 3 if dt.is_complex else 2 if dt.is_floating_point else 0 if dt.name == "bool" else 1


def _cast_for_inplace(x, result):
    if _category(result.dtype) > _category(x.dtype):  # PyTorch casts down within a category, never across
        names = _dtype.SCALAR_NAMES
        raise RuntimeError(f"result type {names[result.dtype.name]} can't be cast to the desired "
                           f"output type {names[x.dtype.name]}")
    return dispatch(xla_ops.to_dtype, (result,), (("dtype", x._raw.dtype),))


def reads_bytes(chain) -> bool:
    """Whether a view chain reinterprets bytes (`view(dtype)`): autograd does not see such a view, as in PyTorch,
    so writes through it, and the view's values after writes to its base, carry no history."""
    for step in chain:
        if step[0] == "view_dtype":
            return True
    return False


def _write_view(v: Tensor, base: Tensor, result: Tensor, st) -> None:
    chain = v._view
    if state.grad_enabled and (v._requires_grad or result._requires_grad or base._requires_grad) \
            and not reads_bytes(chain):  # (a value with
        # history makes the base and the view part of the graph, even when neither required grad before; a base
        # that came to require grad after the view was taken is refused if a leaf, recorded otherwise)
        if base.grad_fn is None and base._requires_grad:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation. "
                "Wrap it in `with tapeflow.no_grad():` or modify a clone.")
        new_base = dispatch(view_scatter, (base, result), (("chain", chain),))
        _snapshot_saved(new_base.grad_fn, st)
        base._data, base.grad_fn, base._output_nr, base._requires_grad = new_base._data, new_base.grad_fn, 0, True
        # The view's new history reads the new base; snapshot it so the version bump does not invalidate it.
        snap = Tensor._make(base._data, base.grad_fn, 0, True)
        nv = dispatch(view_apply, (snap,), (("chain", chain),))
        old = v.grad_fn
        if old is not None and old._tensor_hooks:  # PyTorch's graph no longer reaches the view's old node (ours
            old._tensor_hooks.pop(v._output_nr, None)  # does, through the write's own node): its hooks never run
        v._data, v.grad_fn, v._output_nr, v._requires_grad = nv._data, nv.grad_fn, 0, True
        return
    base._data = view_scatter.compiled((("chain", chain),))(base._data, result._data)
    v._data = result._data
    if result.grad_fn is not None:
        v.grad_fn, v._output_nr, v._requires_grad = result.grad_fn, result._output_nr, True


def rename_node(t: Tensor, name: str) -> Tensor:
    """`t` with the node its op just recorded named `name`: PyTorch names a node after the overload called
    (`squeeze()` gives `SqueezeBackward0`, `squeeze(dim)` `SqueezeBackward1`, `transpose_` `TransposeBackward1`)
    where one table op serves several."""
    fn = _grad_fn(t)
    if fn is not None and isinstance(fn, OpNode) and type(fn).__name__ != name:
        fn.__class__ = node_class(name)
    return t


def invalidate_view(w: Tensor) -> None:
    """A view made under no_grad / in inference mode whose data changed while its base requires grad: PyTorch
    gives it no history. It requires grad, but reading its `grad_fn` (so `is_leaf`, or an op on it in grad mode)
    raises PyTorch's error; ops on it under no_grad still run."""
    _set_grad_fn(w, Invalid((w._no_grad_view or w._untracked_no_grad_view) == "inference"))
    w._output_nr, w._requires_grad = 0, True
    w.__class__ = _invalid_class(type(w))


_invalid_of: dict = {}


def _invalid_grad_fn(t):
    raise RuntimeError(_grad_fn(t).message)


_NOT_WRITES = frozenset(("requires_grad_", "share_memory_", "detach_"))


def _invalid_getattribute(t, name):
    # An in-place method of an invalid view in grad mode: PyTorch refuses the write before reading the history.
    if name[-1] == "_" and name[0] != "_" and state.grad_enabled and name not in _NOT_WRITES:
        raise _mode_view_error(t._no_grad_view or t._untracked_no_grad_view)
    return object.__getattribute__(t, name)


def _invalid_class(cls) -> type:
    """The subclass of `cls` for its invalid views (see `invalidate_view`): same name, same layout."""
    if cls in _invalid_of.values():
        return cls
    inv = _invalid_of.get(cls)
    if inv is None:
        inv = _invalid_of[cls] = type(cls.__name__, (cls,), {
            "__slots__": (), "grad_fn": property(_invalid_grad_fn, _set_grad_fn),
            "__getattribute__": _invalid_getattribute,
            "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    return inv


def _refresh_views(st, base: Tensor, writer: Tensor) -> None:
    """After a write, recompute every other live alias from the base."""
    if st.views is None:
        return
    rehistory = state.grad_enabled and base.grad_fn is not None
    for w in list(st.views):
        invalid = type(_grad_fn(w)) is Invalid
        if not invalid and (w._no_grad_view or w._untracked_no_grad_view) and w._base is base \
                and base._requires_grad:
            invalidate_view(w)
            invalid = True
        if w is writer:
            continue
        if rehistory and w._view and w._base is base and not invalid and not reads_bytes(w._view):
            # A view reads the base's new history (PyTorch regenerates its grad_fn the same way), and so requires
            # grad from now on if it did not. (A view of a detached alias of the base, `detach()` of a view, only
            # reads the new values.)
            snap = Tensor._make(base._data, base.grad_fn, base._output_nr, True)
            nv = dispatch(view_apply, (snap,), (("chain", w._view),))
            old_fn, old_nr = w.grad_fn, w._output_nr
            w._data, w.grad_fn, w._output_nr, w._requires_grad = nv._data, nv.grad_fn, 0, True
            if w._retains_grad:
                _move_retained(w, old_fn, old_nr)
            continue
        w._data = base._data if not w._view else view_apply.compiled((("chain", w._view),))(base._data)
