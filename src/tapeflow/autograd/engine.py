"""The backward engine.

From the roots, count how many gradient contributions each node will
receive; then run nodes from a ready queue (newest first, as PyTorch does),
each once all its contributions have been summed into its input buffer.
No recursion anywhere: the graph is walked with explicit stacks.

Without `create_graph`, gradients are raw JAX arrays (one compiled VJP call
per node); with it they are Tensors and every step is itself recorded.
"""

from __future__ import annotations

import heapq
import itertools

import jax.numpy as jnp

import xla_ops

from .._adaptive import resolve
from .._dtype import from_jax_dtype
from .._state import grad_lock, state
from .._tensor import FOLLOW_DTYPE, Tensor
from ._engine_compiled import compiled_backward
from .graph import AccumulateGrad, Node

__all__ = ["run_backward", "accumulate"]


def accumulate(var: Tensor, g, create_graph: bool, run_hooks: bool = True) -> None:
    """Add `g` into `var.grad`: in place, or out of place (recorded) under `create_graph`."""
    if g is None:  # reached without a gradient: the leaf's hooks see None (PyTorch); nothing accumulates
        if var._hooks and run_hooks:
            for fn in list(var._hooks.values()):
                fn(None)
        return
    if var._hooks and run_hooks:
        g = _run_tensor_hooks(var._hooks, g, create_graph)
    if var._grad_dtype is not FOLLOW_DTYPE:
        g = _in_grad_dtype(var, g)
    if create_graph:
        gt = g if isinstance(g, Tensor) else Tensor._wrap(g)
        with grad_lock:
            old = var._grad
            var._grad = _copy_of(gt) if old is None else old + gt
    else:
        if isinstance(g, Tensor):
            g = g._data
        with grad_lock:
            old = var._grad
            if old is None:
                var._grad = Tensor._wrap(g)
            elif old._coo is not None:  # (gradients arrive dense: their sum replaces a sparse one, as in PyTorch)
                var._grad = Tensor._wrap(old._data + g)
            else:
                old._data = old._data + g
                old._st().version += 1
    if var._post_accumulate_hooks:
        for fn in list(var._post_accumulate_hooks.values()):
            out = fn(var)
            if out is not None:
                if not isinstance(out, Tensor):
                    raise TypeError(f"expected Variable, but hook returned '{type(out).__name__}'")
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _copy_of(g: Tensor) -> Tensor:
    """A new tensor equal to `g` for a leaf's `.grad` under `create_graph`: never `g` itself (it may be the user's
    gradient tensor), recorded as PyTorch's `CopyBackwards` when `g` has a history."""
    if not g._requires_grad:
        return Tensor._wrap(g._raw)
    from .._dispatch import dispatch

    return dispatch(xla_ops.copy, (Tensor._wrap(g._raw), g))


def _in_grad_dtype(var: Tensor, g):
    """`g` in the dtype a leaf with `grad_dtype` set keeps in `.grad`: that dtype, or with None the dtype of
    the gradient already there (added in place), else `g`'s own."""
    want = var._grad_dtype
    if want is None:
        if var._grad is None:
            return g
        want = var._grad._raw.dtype
    if isinstance(g, Tensor):
        return g if g._raw.dtype == want else g.to(from_jax_dtype(want))
    g = resolve(g)
    return g if g.dtype == want else g.astype(want)


def _run_tensor_hooks(hooks: dict, g, create_graph: bool):
    gt = g if isinstance(g, Tensor) else Tensor._wrap(g)
    for fn in list(hooks.values()):
        new = fn(gt)
        if new is not None:
            if not isinstance(new, Tensor):
                raise TypeError(f"a tensor hook must return a Tensor or None, got {type(new).__name__}")
            if new.shape != gt.shape:
                raise RuntimeError(f"hook changed the gradient's shape from {list(gt.shape)} to {list(new.shape)}")
            gt = new
    return gt if create_graph else gt._data


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _graph(roots: list[Node]) -> dict:
    """Number of incoming edges of every node reachable from `roots`."""
    deps: dict = {}
    stack = []
    for r in roots:
        if r not in deps:
            deps[r] = 0
            stack.append(r)
    while stack:
        node = stack.pop()
        for nxt in node._next[::2]:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps


def _needed(deps: dict, targets: set) -> set:
    """Nodes that must run for the gradients of `targets`: those from which some target is reachable
    through their next functions (post-order, iterative)."""
    needed = set()
    done = set()
    for start in deps:
        if start in done:
            continue
        stack = [(start, iter(start._next[::2]))]
        done.add(start)
        while stack:
            node, it = stack[-1]
            advanced = False
            for nxt in it:
                if nxt is not None and nxt not in done:
                    done.add(nxt)
                    stack.append((nxt, iter(nxt._next[::2])))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            # A node runs when a target lies beyond it; a target itself only has its gradient captured.
            if any(n in needed or n in targets for n in node._next[::2] if n is not None):
                needed.add(node)
    return needed


class _Task:
    """The backward pass running on a thread (`state.graph_task`): which nodes it reaches (`deps`), which of
    them it runs when only some inputs are wanted (`needed`), callbacks for its successful end (`on_exit`,
    `queue_callback`'s: run in order while the pass is still current, so one may queue another) and cleanups
    that run however it ends."""

    __slots__ = ("deps", "needed", "targets", "capture", "id", "on_exit", "cleanups", "__weakref__")

    def __init__(self, deps, needed, targets=(), capture=False):
        self.deps, self.needed, self.targets, self.on_exit, self.cleanups = deps, needed, targets, [], []
        self.capture, self.id = capture, next(_task_ids)


_task_ids = itertools.count()  # (PyTorch's graph task ids: one per pass the engine runs node by node)


#: Backward passes nested on one thread (a custom Function's backward calling backward, reentrant checkpoints)
#: before the next one moves to a fresh thread, as PyTorch's engine does, so that deep reentrant backward never
#: exhausts a thread's Python stack.
MAX_NESTED_BACKWARD = 16


def run_backward(roots: list[tuple[Node, int]], root_grads: list, *, retain_graph: bool, create_graph: bool,
                 inputs: list[Tensor] | None = None, capture: bool = False, allow_unused: bool = False):
    """Run backward from `roots` (graph edges) seeded with `root_grads`.

    With `capture`, gradients for `inputs` are returned (autograd.grad) and no
    `.grad` is touched; otherwise gradients accumulate into leaves (only the
    `inputs`, if given).
    """
    kw = dict(retain_graph=retain_graph, create_graph=create_graph, inputs=inputs, capture=capture,
              allow_unused=allow_unused)
    depth = state.backward_depth
    state.backward_passes += 1
    if depth >= MAX_NESTED_BACKWARD:
        return _on_fresh_thread(_run_backward, roots, root_grads, kw)
    state.backward_depth = depth + 1
    try:
        return _run_backward(roots, root_grads, **kw)
    finally:
        state.backward_depth = depth


def _on_fresh_thread(fn, roots, root_grads, kw):
    """`fn(roots, root_grads, **kw)` on a new thread that starts from this thread's state (grad mode, hooks,
    the backward under way), this one waiting for it."""
    import threading

    parent = {k: list(v) if type(v) is list else v for k, v in vars(state).items()}
    result = []

    def work():
        vars(state).update(parent)
        state.backward_depth = 1
        try:
            result.append((True, fn(roots, root_grads, **kw)))
        except BaseException as e:  # noqa: BLE001 - re-raised on the calling thread
            result.append((False, e))

    worker = threading.Thread(target=work, name="tapeflow-reentrant-backward")
    worker.start()
    worker.join()
    ok, value = result[0]
    if not ok:
        raise value
    return value


def _run_backward(roots, root_grads, *, retain_graph, create_graph, inputs, capture, allow_unused):
    if not create_graph and inputs is None and not state.anomaly and not state.node_interceptors \
            and compiled_backward(roots, root_grads, retain_graph):
        return None
    root_nodes = [n for n, _ in roots]
    deps = _graph(root_nodes)
    for n, _ in roots:
        deps[n] += 1  # the contribution from the (virtual) graph root

    targets: dict = {}  # edge -> index into results
    if inputs is not None:
        from .._dispatch import accumulator

        for i, t in enumerate(inputs):
            if not isinstance(t, Tensor):  # a GradientEdge
                e = (t[0], t[1])
            else:
                e = (t.grad_fn, t._output_nr) if t.grad_fn is not None else (accumulator(t), 0)
            targets.setdefault(e, []).append(i)
        target_nodes = {e[0] for e in targets}
        needed = _needed(deps, target_nodes)
        if not capture:  # backward(inputs=...): the leaves' AccumulateGrad nodes run (with their hooks)
            needed |= {n for n in target_nodes if type(n) is AccumulateGrad}
    else:
        needed = None
    results = [None] * (len(inputs) if inputs is not None else 0)

    buffers: dict = {}
    ready: list = []
    counter = 0
    for (n, nr), g in zip(roots, root_grads):
        buf = buffers.get(n)
        if buf is None:
            buf = buffers[n] = [None] * max(len(n._out_meta), nr + 1, 1)
        buf[nr] = _add(buf[nr], g)
        deps[n] -= 1
        if deps[n] == 0:
            heapq.heappush(ready, (-n._seq, counter, n))
            counter += 1

    plain = not targets and not state.node_interceptors and not state.anomaly
    # (like PyTorch's engine, which runs a graph task under the thread-local state of its caller: a
    # saved-tensor-hooks context entered or left by a hook during backward does not outlive it)
    prev_mode, prev_task, prev_hooks = state.grad_enabled, state.graph_task, state.saved_hooks
    state.grad_enabled = create_graph
    task = state.graph_task = _Task(deps, needed, {e[0] for e in targets}, capture)
    try:
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(node)
            if plain and len(grads) == 1 and node._tensor_hooks is None and node._retained is None \
                    and node._pre_hooks is None and node._post_hooks is None:
                grad_inputs = node.apply(grads, create_graph)
            else:
                grad_inputs = _run_node(node, grads, create_graph, needed, targets, results, capture, inputs)
            if not retain_graph and (needed is None or node in needed):  # only the nodes that ran are freed
                node._release()
            nx, j = node._next, 0
            for g in grad_inputs:
                if j == len(nx):
                    break
                nxt, nr = nx[j], nx[j + 1]
                j += 2
                if nxt is None:
                    continue
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * max(len(nxt._out_meta), nr + 1)
                    elif nr >= len(buf):
                        buf.extend([None] * (nr + 1 - len(buf)))
                    buf[nr] = _add(buf[nr], g)
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    if nxt in buffers or (_runs_without_grad(nxt) and _ungraded(nxt, buffers, needed)):
                        heapq.heappush(ready, (-nxt._seq, counter, nxt))
                        counter += 1
                    else:
                        _skip(nxt, deps, buffers, ready, needed)
        state.grad_enabled = prev_mode
        i = 0
        while i < len(task.on_exit):  # (a callback may queue another)
            task.on_exit[i]()
            i += 1
    finally:
        state.grad_enabled, state.graph_task, state.saved_hooks = prev_mode, prev_task, prev_hooks
        for fn in task.cleanups:
            fn()

    if not capture and inputs is not None:
        return results  # backward(inputs=...): raw gradients of the inputs, for those that are not leaves
    if capture:
        for i, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
        return tuple(None if r is None else (r if isinstance(r, Tensor) else Tensor._wrap(r)) for r in results)
    return None


def _runs_without_grad(node) -> bool:
    """Whether `node`, reached with no gradient at all, still runs (as in PyTorch: its hooks see None, a
    custom Function's backward sees zeros), rather than being skipped with everything only it leads to."""
    return node._runs_ungraded or node._tensor_hooks is not None or node._pre_hooks is not None \
        or node._post_hooks is not None or node._retained is not None \
        or (type(node) is AccumulateGrad and bool(node.variable._hooks))


def _ungraded(node, buffers, needed) -> bool:
    """Queue `node` with no gradient (None for each output), when the pass needs it."""
    if needed is not None and node not in needed:
        return False
    buffers[node] = [None] * max(len(node._out_meta), 1)
    return True


def _skip(node, deps, buffers, ready, needed=None):
    """A node that received no gradient at all: pass `None` on without running it."""
    stack = [node]
    while stack:
        n = stack.pop()
        for nxt in n._next[::2]:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                if nxt in buffers or (_runs_without_grad(nxt) and _ungraded(nxt, buffers, needed)):
                    heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))
                else:
                    stack.append(nxt)


def _run_pre_hooks(node, grads) -> tuple:
    """The node's pre-hooks in order, each seeing the gradients as the last one left them (as Tensors)."""
    gts = tuple(_as_tensor(g) for g in grads)
    for fn in list(node._pre_hooks.values()):
        new = fn(gts)
        if new is not None:
            gts = tuple(new)
    return gts


def _run_node(node, grads, create_graph, needed, targets, results, capture, inputs):
    # 1. hooks registered on the tensors this node produced, then retain_grad.
    th = node._tensor_hooks
    if th:
        for nr, hooks in th.items():
            if not hooks:
                continue
            if nr < len(grads) and grads[nr] is not None:
                grads[nr] = _run_tensor_hooks(hooks, grads[nr], create_graph)
            else:  # an output that got no gradient: its hooks see None (PyTorch's undefined gradient)
                for fn in list(hooks.values()):
                    new = fn(None)
                    if new is not None:
                        if nr >= len(grads):
                            grads.extend([None] * (nr + 1 - len(grads)))
                        grads[nr] = new if create_graph else new._data
    if node._retained:
        for nr, ref in node._retained.items():
            t = ref()
            if t is not None and nr < len(grads) and grads[nr] is not None:
                g = grads[nr]
                if create_graph:
                    t._grad = g if t._grad is None else t._grad + g
                else:
                    g = g._data if isinstance(g, Tensor) else g
                    t._grad = Tensor._wrap(g) if t._grad is None else Tensor._wrap(t._grad._data + g)
    # 2. gradients requested by autograd.grad / backward(inputs=...).
    if targets:
        is_acc = type(node) is AccumulateGrad
        for nr in range(len(grads)):
            idxs = targets.get((node, nr))
            if idxs is None:
                continue
            g = grads[nr]
            if capture and is_acc and node.variable._hooks and g is not None:
                g = _run_tensor_hooks(node.variable._hooks, g, create_graph)
            for i in idxs:
                results[i] = g
        if capture and is_acc:
            return ()
    if needed is not None and node not in needed:
        if node._pre_hooks and not capture and type(node) is not AccumulateGrad:
            # backward(inputs=...) on a non-leaf: its node does not run, but its pre-hooks see the gradient
            # (after it was captured), as in PyTorch; autograd.grad runs none of them.
            _run_pre_hooks(node, grads)
        return ()
    # 3. node pre-hooks (a leaf's own hooks run before its AccumulateGrad's pre-hooks).
    leaf_hooked = False
    if node._pre_hooks and type(node) is AccumulateGrad and node.variable._hooks and grads[0] is not None:
        grads[0] = _run_tensor_hooks(node.variable._hooks, grads[0], create_graph)
        leaf_hooked = True
    if node._pre_hooks:
        grads = [_unwrap(g, create_graph) for g in _run_pre_hooks(node, grads)]
    # A leaf whose .grad is None takes the incoming gradient as its .grad (PyTorch steals the buffer): its
    # AccumulateGrad's post-hooks then see that very tensor, with what post-accumulate hooks did to it.
    stolen = node._post_hooks is not None and type(node) is AccumulateGrad and node.variable._grad is None
    if not node._runs_ungraded and type(node) is not AccumulateGrad and all(g is None for g in grads):
        grad_inputs = (None,) * (len(node._next) // 2)  # a built-in node without any gradient gives none
    elif needed is not None and getattr(getattr(node, "op", None), "no_derivative", None):
        # An op with an input PyTorch has no derivative for (igamma's `input`): asked only for the gradients
        # this pass needs, so that `autograd.grad(out, other)` works as in PyTorch.
        needs, nx = node.needs, node._next
        node.needs = tuple(n and (nx[2 * i] in needed or (nx[2 * i], nx[2 * i + 1]) in targets)
                           for i, n in enumerate(needs))
        try:
            grad_inputs = _compute(node, grads, create_graph, capture, leaf_hooked)
        finally:
            node.needs = needs
    else:
        grad_inputs = _compute(node, grads, create_graph, capture, leaf_hooked)
    # 5. node post-hooks.
    if node._post_hooks:
        full = [_as_tensor(g) for g in grad_inputs]
        gi = node._linked(tuple(full))  # (hooks see the gradients of the inputs PyTorch's node links)
        go = (node.variable._grad,) if stolen and node.variable._grad is not None else tuple(map(_as_tensor, grads))
        for fn in list(node._post_hooks.values()):
            new = fn(gi, go)
            if new is not None:
                new = tuple(new)
                if len(new) != len(gi):
                    raise RuntimeError(f"hook '{getattr(fn, '__name__', type(fn).__name__)}' has returned an "
                                       f"incorrect number of values (got {len(new)}, but expected {len(gi)})")
                gi = new
        if node._visible is not None:
            for j, i in enumerate(node._visible):
                full[i] = gi[j]
            gi = full
        grad_inputs = tuple(_unwrap(g, create_graph) for g in gi)
    return grad_inputs


def _compute(node, grads, create_graph, capture, leaf_hooked):
    # 4. materialise missing gradients of multi-output nodes as zeros; inputs read only by outputs that got
    # no gradient get none (PyTorch's graph does not link them; see `_dispatch._partial_reads`).
    unreached = ()
    if len(grads) > 1:
        if node._reads is not None:
            got = [r for r, g in zip(node._reads, grads) if g is not None]
            unreached = [j for j in range(len(node._next) // 2) if not any(j in r for r in got)]
        for i, g in enumerate(grads):
            if g is None and i < len(node._out_meta) and node._out_meta[i] is not None:
                shape, dtype = node._out_meta[i]
                z = jnp.zeros(shape, dtype)
                grads[i] = Tensor._wrap(z) if create_graph else z
    if leaf_hooked:
        accumulate(node.variable, grads[0], create_graph, run_hooks=False)
        grad_inputs = ()
    elif not capture or type(node) is not AccumulateGrad:
        if state.node_interceptors:
            grad_inputs = _intercepted(node, grads, create_graph, 0)
        else:
            grad_inputs = _apply(node, grads, create_graph)
    else:
        grad_inputs = ()
    if unreached:
        grad_inputs = [None if j in unreached else g for j, g in enumerate(grad_inputs)]
    return grad_inputs


def _apply(node, grads, create_graph):
    if state.anomaly:
        from .anomaly_mode import run_checked

        return run_checked(node, grads, create_graph)
    return node.apply(grads, create_graph)


def _intercepted(node, grads, create_graph, i):
    chain = state.node_interceptors
    if i == len(chain):
        return _apply(node, grads, create_graph)
    return chain[i](node, grads, create_graph, lambda n, g, c: _intercepted(n, g, c, i + 1))


def _as_tensor(g):
    return g if g is None or isinstance(g, Tensor) else Tensor._wrap(g)


def _unwrap(g, create_graph):
    if g is None or create_graph:
        return g
    return g._data if isinstance(g, Tensor) else g
