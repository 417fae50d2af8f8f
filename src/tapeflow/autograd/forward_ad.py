"""Forward-mode AD: dual tensors carrying a tangent, propagated op by op.

Inside `with dual_level():`, `make_dual(x, t)` gives a tensor whose tangent
is `t`. A dispatch interceptor watches every op: when an input carries a
tangent, it runs JAX's JVP of that op's forward (one compiled call, cached
per op, static parameters and which inputs carry tangents) and attaches
the output tangents. `unpack_dual(y)` reads `(primal, tangent)` back.

Tangents are kept in a side table keyed weakly by Tensor, together with the
array they belong to: an in-place write moves the tangent of the written
result onto the target; a tensor whose data changed behind the table's back
(a view refreshed by a write through another alias) reports the stale
tangent as an error instead of using it.
"""

from __future__ import annotations

import functools
import weakref
from collections import namedtuple

import jax
import jax.numpy as jnp

import xla_ops as X
from xla_ops.shape import view_apply, view_scatter

from .. import _dispatch
from .._state import state
from .._tensor import Tensor, _is_float_array
from . import graph

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level", "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "`(primal, tangent)` of a dual tensor; `tangent` is None when it has none."



def _drop(t: Tensor) -> None:
    """`t.detach_()`: `t` carries no tangent from now on, at any level."""
    for table in _tables.values():
        table.discard(t)


class _TangentTable:
    """Tensor -> (data, tangent), by identity, forgetting tensors that die.

    (A WeakKeyDictionary would compare keys with `==`, which is elementwise on Tensors.)
    """

    def __init__(self):
        self._d: dict = {}
        self._saved: dict = {}  # id(node) -> (node ref, (array, tangent)) for nodes that save their output
        # id(view) -> (view ref, parent, steps) for the views made in this level: `parent` is the tensor it was
        # made from (None for the views `make_dual` and `unpack_dual` give, which are no forward views) and
        # `steps` the view chain from it
        self._links: dict = {}

    def get(self, t):
        e = self._d.get(id(t))
        return None if e is None or e[0]() is not t else e[1]

    def discard(self, t) -> None:
        if self.get(t) is not None:
            del self._d[id(t)]

    def __contains__(self, t) -> bool:
        return self.get(t) is not None

    def __setitem__(self, t, value) -> None:
        key = id(t)
        d = self._d
        d[key] = (weakref.ref(t, lambda _, key=key: d.pop(key, None)), value)
        node = t.grad_fn
        if node is not None and getattr(node, "_ans", None) is value[0]:
            # The node keeps this output for its backward, maybe longer than the Tensor lives.
            saved, nkey = self._saved, id(node)
            saved[nkey] = (weakref.ref(node, lambda _, nkey=nkey: saved.pop(nkey, None)), value)

    def link(self, view, parent, steps: tuple) -> None:
        key, links = id(view), self._links
        links[key] = (weakref.ref(view, lambda _, key=key: links.pop(key, None)), parent, steps)

    def link_of(self, t):
        e = self._links.get(id(t))
        return None if e is None or e[0]() is not t else e

    def of_saved_output(self, node):
        e = self._saved.get(id(node))
        return None if e is None or e[0]() is not node else e[1]


def _adopt(node, t: Tensor) -> None:
    """Give `t`, the saved output of `node` re-wrapped by a `create_graph=True` backward, the
    tangent of the output it was saved from (so forward-over-reverse sees it)."""
    for table in _tables.values():
        e = table.of_saved_output(node)
        if e is not None and e[0] is t._data:
            table[t] = e


_levels: list[int] = []
_current_level = -1  # the innermost level's index, -1 outside `dual_level` (PyTorch's module attribute)
_tables: dict[int, _TangentTable] = {}
_jvp_cache: dict = {}


def enter_dual_level() -> int:
    """Start a forward-AD level and return its index (prefer the `dual_level` context manager)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment: exit the current dual_level "
                           "before entering a new one.")
    global _current_level
    level = _current_level = 0
    _levels.append(level)
    _tables[level] = _TangentTable()
    state.interceptors.append(_propagate)
    state.inplace_listeners.append(_on_inplace)
    state.view_listeners.append(_on_view)
    graph.saved_output_hooks.append(_adopt)
    return level


def exit_dual_level(*, level: int | None = None) -> None:
    """End the current forward-AD level: every tangent created in it is dropped."""
    if level is None:
        level = _levels[-1] if _levels else None
    if level is None or level not in _levels:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "Exit levels in the reverse order they were entered.")
    global _current_level
    _levels.remove(level)
    _current_level = _levels[-1] if _levels else -1
    _tables.pop(level, None)
    state.interceptors.remove(_propagate)
    state.inplace_listeners.remove(_on_inplace)
    state.view_listeners.remove(_on_view)
    graph.saved_output_hooks.remove(_adopt)


class dual_level:
    """Context manager for forward-mode AD: dual tensors made inside carry tangents until exit.

    Example:
        >>> import tapeflow as tp
        >>> import tapeflow.autograd.forward_ad as fwAD
        >>> x = tp.tensor([1.0, 2.0])
        >>> with fwAD.dual_level():
        ...     y = fwAD.make_dual(x, tp.ones(2)) ** 2
        ...     fwAD.unpack_dual(y).tangent
        tensor([2., 4.])
    """

    def __enter__(self) -> int:
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc) -> bool:
        exit_dual_level(level=self.level)
        return False


def _table(level: int | None):
    if level is None:
        if not _levels:
            return None
        level = _levels[-1]
    return _tables.get(level)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with the values of `tensor` carrying `tangent` as its forward gradient.

    Arguments:
        tensor: the primal (a floating-point tensor).
        tangent: its tangent, of the same shape and dtype.
        level: the dual level (defaults to the current one).

    Returns:
        A view of `tensor` that carries `tangent`; ops on it propagate the tangent.

    Example:
        >>> import tapeflow as tp
        >>> import tapeflow.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(tp.tensor([0.0]), tp.tensor([3.0]))
        ...     fwAD.unpack_dual(d.sin()).tangent
        tensor([3.])
    """
    table = _table(level)
    if table is None:
        raise RuntimeError("To create a dual Tensor, you need to be within a forward AD level: use "
                           "`with tapeflow.autograd.forward_ad.dual_level():`.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual expects Tensors for both the primal and the tangent")
    if not _is_float_array(tensor._data):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not _is_float_array(tangent._data):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if _tangent_of(tangent, table) is not None:
        raise RuntimeError("Setting a forward grad that itself has a forward gradient at the same level "
                           f"{_levels[-1] if level is None else level} is not supported. Pass "
                           "unpack_dual(tangent).primal to use its values.")
    if tangent._data.dtype != tensor._data.dtype:  # (JAX's forward mode needs one dtype for both)
        tangent = tangent.to(tensor.dtype)
    elif tangent._base is not None and not tangent._requires_grad and tangent.numel() > 0 and (
            tangent._base.numel() != tangent.numel() or tangent.stride() != tensor.stride()):
        # A view laid out otherwise than the primal is copied, as PyTorch does (in-place ops on `dual` write
        # the tangent); an empty one, or one over its whole storage in the primal's layout, is kept as is.
        tangent = tangent.clone()
    dual = tensor.view_as(tensor)
    table.link(dual, None, ())  # its tangent is no view of `tensor`'s (PyTorch's non-differentiable view)
    # A tangent that requires grad stays a Tensor, so tangents computed from it are recorded on the tape.
    table[dual] = (dual._data, tangent)  # the user's tangent itself: `unpack_dual` gives that object back
    return dual


def _tangent_of(t: Tensor, table):
    entry = table.get(t)
    if entry is None:
        return None
    data, tan = entry
    if data is not t._data:
        raise RuntimeError("forward AD: this dual tensor's values were changed through another alias (a view "
                           "or its base was written in place) after its tangent was computed, so the tangent is "
                           "stale. Make the in-place write on the dual tensor itself, or use out-of-place ops.")
    return tan


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """Split a dual tensor into `(primal, tangent)`.

    Arguments:
        tensor: any tensor (its tangent is `None` when it carries none).
        level: the dual level (defaults to the current one).

    Returns:
        `UnpackedDualTensor(primal, tangent)`; `primal` is a view of `tensor`
        without the tangent.

    Example:
        >>> import tapeflow as tp
        >>> import tapeflow.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     p, t = fwAD.unpack_dual(fwAD.make_dual(tp.ones(1), tp.ones(1)) * 5)
        >>> t
        tensor([5.])
    """
    table = _table(level)
    if table is None:
        return UnpackedDualTensor(tensor, None)
    tan = _tangent_of(tensor, table)
    if tan is None:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tan, Tensor):  # (kept: in-place ops on the tangent given out reach the dual, and back)
        tan = Tensor._wrap(tan)
        table[tensor] = (tensor._data, tan)
    primal = _primal_view(tensor)
    table.link(primal, None, ())
    return UnpackedDualTensor(primal, tan)


def _primal_view(tensor: Tensor) -> Tensor:
    # A view made with the interceptor bypassed, so it carries no tangent.
    saved = list(state.interceptors)
    state.interceptors.clear()
    try:
        return tensor.view_as(tensor)
    finally:
        state.interceptors[:] = saved


# -- propagation -------------------------------------------------------------------------
def _jvp_program(op, params: tuple, idx: tuple):
    """Compiled `(*args, *tangents) -> output tangents` for `op` with tangents at positions `idx`."""
    key = (op, params, idx)
    fn = _jvp_cache.get(key)
    if fn is None:
        fn = _jvp_cache[key] = jax.jit(functools.partial(op.jvp, params, idx))
    return fn


def _propagate(op, args, params, proceed):
    out = proceed(op, args, params)
    table = _table(None)
    if table is None or not op.differentiable:
        return out
    idx, tans = [], []
    record = False  # a tangent that depends on something requiring grad goes on the tape
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            tan = _tangent_of(a, table)
            if a._requires_grad:
                record = True
            if tan is not None:
                idx.append(i)
                tans.append(tan)
                if isinstance(tan, Tensor) and tan._requires_grad:
                    record = True
    if not idx:
        return out
    if op in _NO_FORWARD_DERIVATIVE:
        raise NotImplementedError(f"Trying to use forward AD with {op.name} that does not support it because it has "
                                  "not been implemented yet.")
    if record and state.grad_enabled:
        tan_args = tuple(t if isinstance(t, Tensor) else Tensor._wrap(t) for t in tans)
        out_tans = _dispatch.dispatch(op.jvp_op(params, tuple(idx)), (*args, *tan_args), (), True)
    else:
        arrays = [a._data if isinstance(a, Tensor) else _dispatch._scalar(a) if type(a) in _dispatch._SCALAR_TYPES
                  else a for a in args]
        tan_arrays = [t._data if isinstance(t, Tensor) else t for t in tans]
        out_tans = _jvp_program(op, params, tuple(idx))(*arrays, *tan_arrays)
    if isinstance(out, tuple):
        for o, t in zip(out, out_tans):
            _attach(table, o, t)
    else:
        _attach(table, out, out_tans)
    return out


# Ops PyTorch gives no forward derivative (igamma's in its first argument has no closed form): a tangent
# reaching one raises, as in PyTorch, instead of a tangent that leaves that argument out.
_NO_FORWARD_DERIVATIVE = frozenset((X.igamma, X.igammac))


def _attach(table, o, t) -> None:
    """Record `t` (an array, or a Tensor when the tangent is on the tape) as the tangent of `o`."""
    if isinstance(o, Tensor) and t is not None and _is_float_array(o._data):
        if isinstance(t, Tensor):
            if t._data.dtype != o._data.dtype:
                t = t.to(o.dtype)
        elif t.dtype != o._data.dtype:
            t = t.astype(o._data.dtype)
        table[o] = (o._data, t)


# -- views and in-place writes ------------------------------------------------------------------
# As in PyTorch, the tangent of a view is the same view of its base's tangent, so an in-place write into a view
# writes the base's tangent, and every other view of that base sees it. The base here is the view's forward root:
# the storage's root, or the nearest `make_dual`/`unpack_dual`/`detach` alias it was viewed from (their
# tangents are no views of their source's: a write through them leaves the source's tangent alone).
def _on_view(x: Tensor, views) -> None:
    table = _table(None)
    if table is None:
        return
    n = len(x._view) if x._base is not None and x._view else 0
    for v in views if type(views) is tuple else (views,):
        if v._base is not None and v._view:
            table.link(v, x, v._view[n:])


def _forward_root(t: Tensor, table) -> tuple:
    """`(root, chain)`: the tensor whose tangent `t`'s is a view of, and the view chain from it to `t`."""
    steps = ()
    while True:
        e = table.link_of(t)
        if e is None:  # (made before this level: a view of the storage's root)
            if t._base is not None and t._view:
                return t._base, t._view + steps
            return t, steps
        if e[1] is None:
            return t, steps
        t, steps = e[1], e[2] + steps


def _chain_op(op, chain: tuple, *tangents):
    """`op` (`view_apply` or `view_scatter`) along `chain` on tangents (arrays, or Tensors on the tape)."""
    params = (("chain", chain),)
    if state.grad_enabled and any(isinstance(t, Tensor) and t._requires_grad for t in tangents):
        return _dispatch.dispatch(op, tuple(t if isinstance(t, Tensor) else Tensor._wrap(t) for t in tangents),
                                  params)
    return op.compiled(params)(*(t._data if isinstance(t, Tensor) else t for t in tangents))


def _on_inplace(x: Tensor, result: Tensor, old: tuple) -> None:
    table = _table(None)
    if table is None:
        return
    root, chain = _forward_root(x, table)
    entry = table.get(root)  # (its values are the ones before the write)
    root_tan = entry[1] if entry is not None else None
    entry = table.get(result)
    new_tan = entry[1] if entry is not None and tuple(entry[1].shape) == tuple(x._data.shape) else None
    storage_root = x._base if x._base is not None else x
    views = x._storage.views
    aliases = [storage_root, *(w for w in views if w is not storage_root)] if views is not None else [storage_root]
    if root_tan is None and new_tan is None:
        for w in aliases:  # (no tangent written: the aliases that have one keep it)
            e = table.get(w)
            if e is not None:
                table[w] = (w._data, e[1])
        return
    if new_tan is None:  # written from values without a tangent: theirs is zero
        new_tan = jnp.zeros(x._data.shape, x._data.dtype)
    if chain:
        if root_tan is None:
            root_tan = jnp.zeros(root._data.shape, root._data.dtype)
        new_tan = _chain_op(view_scatter, chain, root_tan, new_tan)
    _set_tangent(table, root, table.get(root), new_tan)
    root_tan = table.get(root)[1]
    for w in aliases:
        if w is root:
            continue
        r, c = _forward_root(w, table)
        if r is root:
            table[w] = (w._data, _chain_op(view_apply, c, root_tan) if c else root_tan)
        else:
            e = table.get(w)
            if e is not None:
                table[w] = (w._data, e[1])


def _set_tangent(table, t: Tensor, entry, tan) -> None:
    """`t`'s tangent becomes `tan`: written in place into the tangent Tensor it had (the user's, or one
    `unpack_dual` gave out), as PyTorch's in-place ops write their tangents, unless the tape records either."""
    old = entry[1] if entry is not None else None
    if isinstance(old, Tensor) and not old._requires_grad and not (isinstance(tan, Tensor) and tan._requires_grad) \
            and tuple(old.shape) == tuple(tan.shape):
        paused, enabled = _pause(), state.grad_enabled
        state.grad_enabled = False
        try:
            _dispatch.inplace(old, Tensor._wrap(tan._data if isinstance(tan, Tensor) else tan))
        finally:
            state.grad_enabled = enabled
            _resume(paused)
        tan = old
    table[t] = (t._data, tan)


# -- custom Functions ---------------------------------------------------------------------
def _input_tangents(args: tuple) -> tuple | None:
    """The tangents of a custom Function's inputs (None where there is none), or None when none has one."""
    table = _table(None)
    if table is None:
        return None
    tans = tuple(_tangent_of(a, table) if isinstance(a, Tensor) else None for a in args)
    return tans if any(t is not None for t in tans) else None


def _pause() -> tuple:
    """Stop propagating tangents (while a custom Function's forward and jvp run); give the result to `_resume`."""
    saved = (list(state.interceptors), list(state.inplace_listeners), list(state.view_listeners))
    state.interceptors.remove(_propagate)
    state.inplace_listeners.remove(_on_inplace)
    state.view_listeners.remove(_on_view)
    return saved


def _resume(saved: tuple) -> None:
    state.interceptors[:], state.inplace_listeners[:], state.view_listeners[:] = saved


def _function_tangents(cls, ctx, args: tuple, tangents: tuple, output, result, dirty: dict, nondiff: set) -> None:
    """Give a custom Function's outputs the tangents its `jvp` staticmethod computes from the inputs' ones,
    checking them against what forward did (PyTorch's rules): a modified input's tangent is modified in place
    and returned as is; an output that is a view of an input gets a view of that input's tangent."""
    if getattr(cls.jvp, "_tapeflow_base", False):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  f"forward mode AD ({cls.__name__} has no jvp staticmethod).")
    table = _table(None)
    tin = tuple(_view_tangent(a, table) if tan is not None and isinstance(a, Tensor) and a._base is not None
                else None for a, tan in zip(args, tangents))
    tin = tuple(v if v is not None else _wrap_tangent(a, tan, ctx.materialize_grads)
                for a, tan, v in zip(args, tangents, tin))
    versions = tuple(t._version if t is not None else None for t in tin)
    paused = _pause()
    ctx._in_jvp = True
    try:
        out_t = cls.jvp(ctx, *tin)
    finally:
        ctx._in_jvp = False
        _resume(paused)
    outs = output if isinstance(output, tuple) else (output,)
    res = result if isinstance(result, tuple) else (result,)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    if len(out_t) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                           f"but got {len(out_t)}). Return one tangent per forward output, None for outputs that "
                           "are not differentiable.")
    positions = {id(a): k for k, a in enumerate(args) if isinstance(a, Tensor)}
    for i, (o, r, g) in enumerate(zip(outs, res, out_t)):
        if not isinstance(o, Tensor):
            continue
        if id(o) in nondiff or not _is_float_array(o._data):
            if g is not None:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but the corresponding "
                                   "forward output is not a differentiable Tensor. You should return None at that "
                                   "position instead.")
            continue
        if g is None:
            continue
        if id(o) in dirty:
            k = positions[id(o)]
            if tin[k] is not None and tangents[k] is not None:
                if g._version == versions[k]:
                    raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients "
                                       "inplace. If the forward is modifying an input inplace, then the jvp function "
                                       "must modify the corresponding gradient inplace.")
                if g is not tin[k]:
                    raise RuntimeError("An inplace custom Function is not returning the forward mode gradients "
                                       "as-is. If the forward is modifying an input inplace, then the jvp function "
                                       "must modify the gradient inplace and return it as-is.")
        elif r._base is not None:
            _check_view_tangent(r, g, args, tin)
        _attach(table, r, g)


def _view_tangent(a: Tensor, table):
    """For a view `a` of a tensor with a tangent: that tangent's same view (a Tensor whose `_base` is the root's
    tangent, as PyTorch gives a custom Function's jvp), or None."""
    root, chain = _forward_root(a, table)
    entry = table.get(root) if root is not a and chain else None
    if entry is None:
        return None
    tan = entry[1]
    if not isinstance(tan, Tensor):
        tan = Tensor._wrap(tan)
        table[root] = (entry[0], tan)
    return _dispatch.view(tan, view_apply, (("chain", chain),))


def _wrap_tangent(a, tan, materialize: bool):
    """What the user's jvp receives for input `a`: its tangent as a Tensor; zeros for a floating-point tensor
    without one (None when `ctx.set_materialize_grads(False)`); None for anything else."""
    if tan is not None:
        return tan if isinstance(tan, Tensor) else Tensor._wrap(tan)
    if materialize and isinstance(a, Tensor) and _is_float_array(a._data):
        return Tensor._wrap(jnp.zeros(a._data.shape, a._data.dtype))
    return None


def _check_view_tangent(r: Tensor, g: Tensor, args: tuple, tin: tuple) -> None:
    """`r` is a view: when it is one of an input that has a tangent, `g` must be a view of that tangent."""
    for a, ta in zip(args, tin):
        if not isinstance(a, Tensor) or (a._base if a._base is not None else a) is not r._base:
            continue
        if ta is None:
            return
        if g._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp is "
                               "not returning a view. Return the same view of the input's tangent (for an input "
                               "returned as is, tangent.view_as(tangent)).")
        if ta._base is not None and g._base is not ta._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                               "same base as the given grad input.")
        if ta._base is None and g._base is not ta:
            raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of the "
                               "given grad input.")
        return
