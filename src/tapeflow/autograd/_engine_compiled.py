"""The engine's compiled mode: a backward pass whose graph structure was seen before runs as one program.

When a graph *structure* (ops, static parameters, what each node saved, edges) comes back, as in every
training loop, the engine's own pass is traced under `jax.jit` with the saved arrays as inputs: one
program runs the VJPs and the accumulation into `.grad`. A structure compiles on its second sighting
(the warm-up rule), so a graph that changes every step never pays for it. Only plain passes qualify
(op nodes, no hooks, `retain_grad`, `create_graph`, anomaly mode or profiler); the rest runs node by node.
"""

from __future__ import annotations

import threading

import jax

from .._staging.cache import Programs
from .._state import grad_lock
from .._tensor import Tensor
from .graph import AccumulateGrad, OpNode

__all__ = ["compiled_backward"]

MAX_NODES = 1000  # larger graphs would compile for too long
_programs = Programs(None, size=128)  # one per process, for every graph: no re-trace warning
_graph = threading.local()  # the graph a trace walks (`_traced` reads it)


def _plan(roots):
    """Walk the graph once: `(nodes, leaves, saved arrays, key)`, or None if it does not qualify. The key
    records, per node, its op, static parameters, the saved arrays it reads and where its gradients go."""
    index, leaves, nodes, key, args, arg_index = {}, {}, [], [], [], {}

    def number(n):
        if type(n) is AccumulateGrad:
            return -1 - leaves.setdefault(n, len(leaves))
        if n not in index:
            index[n] = len(nodes)
            nodes.append(n)
        return index[n]

    root_key = tuple((number(n), nr) for n, nr in roots)
    for node in nodes:  # grows while it is walked
        if len(nodes) > MAX_NODES or not _plain(node):
            return None
        edges = tuple(None if n is None else (number(n), nr) for n, nr in node.next_functions)
        slots = []
        for a in (node._ans, *node._saved):
            a = getattr(a, "_data", a)
            if a is not None and id(a) not in arg_index:
                arg_index[id(a)] = len(args)
                args.append(a)
            slots.append(-1 if a is None else arg_index[id(a)])
        key.append((node.op, node.params, node.needs, node._metas, node._out_meta, tuple(slots), edges))
    if any(leaf.variable._hooks or leaf.variable._post_accumulate_hooks for leaf in leaves):
        return None
    grads_present = tuple(leaf.variable._grad is not None for leaf in leaves)
    return nodes, list(leaves), args, (tuple(key), root_key, grads_present)


def _plain(node) -> bool:
    return (isinstance(node, OpNode) and not node._freed and not node._pre_hooks and not node._post_hooks
            and not node._tensor_hooks and not node._retained
            and all(entry[0].version == entry[1] for entry in node._versions))  # else the engine raises


def _traced(root_grads, args, leaf_grads):
    """The engine's own pass over `_graph.current`, each node's VJP reading the program's inputs in place of
    the arrays it saved. The nodes are not touched: another thread may run the same graph meanwhile."""
    from .._state import state
    from .engine import run_backward

    roots, nodes, leaves, key = _graph.current
    inputs = {n: [None if j < 0 else args[j] for j in spec[5]] for n, spec in zip(nodes, key[0])}

    def from_inputs(node, grads, create_graph, proceed):
        ans, *saved = inputs[node]
        return node.op.backward(node.params, node.needs, node._metas, len(grads))(*grads, ans, *saved)

    state.node_interceptors.append(from_inputs)
    try:
        new = run_backward(roots, list(root_grads), retain_graph=True, create_graph=False,
                           inputs=[leaf.variable for leaf in leaves], capture=True, allow_unused=True)
    finally:
        state.node_interceptors.remove(from_inputs)
    new = [None if g is None else g._data for g in new]
    return [a if old is None or a is None else old + a for old, a in zip(leaf_grads, new)]


def compiled_backward(roots, root_grads, retain_graph: bool) -> bool:
    """Run backward as one program if this graph structure was seen before; False if not (yet) applicable."""
    plan = _plan(roots)
    if plan is None:
        return False
    nodes, leaves, args, key = plan
    slot = _programs.slot(key)
    if not _programs.ready(slot):
        return False
    if slot.program is None:
        # A fresh function per structure: `jax.jit`s of one function share their traces by argument types.
        slot.program = jax.jit(lambda root_grads, saved, leaf_grads: _traced(root_grads, saved, leaf_grads))
        _programs.traced(key)
    with grad_lock:  # read the grads, add (in the program, dispatched asynchronously), write back: atomically
        old = [None if leaf.variable._grad is None else leaf.variable._grad._data for leaf in leaves]
        _graph.current = (roots, nodes, leaves, key)
        try:
            new = slot.program(list(root_grads), args, old)
        finally:
            _graph.current = None
        for leaf, g in zip(leaves, new):
            var = leaf.variable
            if g is None:
                continue
            if var._grad is None:
                var._grad = Tensor._wrap(g)
            else:
                var._grad._data = g
                var._grad._st().version += 1
    if not retain_graph:
        for node in nodes:
            node._release()
    return True
