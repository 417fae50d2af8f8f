"""Fused backward: run a whole backward pass as one cached XLA program.

Eager backward makes one XLA call per node. When the same graph *structure*
(ops, static parameters, which inputs need gradients, edges) comes back —
as it does in every training loop — the engine instead calls one program
that runs all the VJPs and the accumulation into `.grad` together, compiled
the second time the structure is seen (so a graph that changes every step
never pays for compilation).

Only plain backward passes qualify: op nodes only, no hooks, no
`retain_grad`, no `create_graph`, no anomaly mode or profiler. Everything
else uses the node-by-node engine, with identical results.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict

import jax

from .._state import grad_lock
from .._tensor import Tensor
from .graph import AccumulateGrad, OpNode

__all__ = ["try_fused_backward"]

#: Largest graph worth fusing (bigger ones would compile for too long).
MAX_NODES = 1000
_CACHE_SIZE = 128

# key -> None (seen once) or the compiled program
_programs: OrderedDict = OrderedDict()


def _plan(roots):
    """Walk the graph once; return (nodes, leaves, key) or None if it does not qualify.

    Nodes are numbered in discovery order (breadth first from the roots); the
    key records, per node, its op, static parameters, what it saved and where
    its gradients go, so equal keys mean the same backward computation."""
    index: dict = {}
    leaves: dict = {}
    nodes: list = []
    key: list = []
    args: list = []  # the distinct saved arrays, passed to the program once each
    arg_index: dict = {}
    for n, _ in roots:
        if type(n) is AccumulateGrad:
            if n.variable._hooks:
                return None
            leaves.setdefault(n, len(leaves))
        elif n not in index:
            index[n] = len(nodes)
            nodes.append(n)
    i = 0
    while i < len(nodes):
        node = nodes[i]
        i += 1
        if not isinstance(node, OpNode) or node._freed or node._pre_hooks or node._post_hooks \
                or node._tensor_hooks or node._retained:
            return None
        for entry in node._versions:
            if entry[0].version != entry[1]:
                return None  # the node-by-node engine raises the precise error
        edges = []
        for nxt, nr in node.next_functions:
            if nxt is None:
                edges.append(None)
            elif type(nxt) is AccumulateGrad:
                j = leaves.get(nxt)
                if j is None:
                    if nxt.variable._hooks:
                        return None
                    j = leaves[nxt] = len(leaves)
                edges.append((-1 - j, nr))
            else:
                j = index.get(nxt)
                if j is None:
                    j = index[nxt] = len(nodes)
                    nodes.append(nxt)
                edges.append((j, nr))
        slots = []
        for a in (node._ans, *node._saved):
            if a is None:
                slots.append(-1)
                continue
            a = getattr(a, "_data", a)
            j = arg_index.get(id(a))
            if j is None:
                j = arg_index[id(a)] = len(args)
                args.append(a)
            slots.append(j)
        key.append((node.op, node.params, node.needs, node._metas, node._out_meta, tuple(slots), tuple(edges)))
        if i > MAX_NODES:
            return None
    root_key = tuple((-1 - leaves[n] if type(n) is AccumulateGrad else index[n], nr) for n, nr in roots)
    leaf_list = list(leaves)
    grads_present = tuple(leaf.variable.grad is not None for leaf in leaf_list)
    return nodes, leaf_list, args, (tuple(key), root_key, grads_present)


def _schedule(nodes_key) -> list[int]:
    """A topological order of the nodes (each before the nodes it sends gradients to)."""
    deps = [0] * len(nodes_key)
    for spec in nodes_key:
        for e in spec[6]:
            if e is not None and e[0] >= 0:
                deps[e[0]] += 1
    ready = [i for i, d in enumerate(deps) if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for e in nodes_key[i][6]:
            if e is not None and e[0] >= 0:
                deps[e[0]] -= 1
                if deps[e[0]] == 0:
                    heapq.heappush(ready, e[0])
    return order


def _program(key):
    """The traced backward for one graph structure."""
    nodes_key, root_key, grads_present = key
    order = _schedule(nodes_key)

    def run(root_grads, args, leaf_grads):
        bufs = [[None] * (len(spec[4]) or 1) for spec in nodes_key]
        acc = [None] * len(grads_present)

        def send(target, nr, g):
            if target < 0:
                i = -1 - target
                acc[i] = g if acc[i] is None else acc[i] + g
            else:
                b = bufs[target]
                b[nr] = g if b[nr] is None else b[nr] + g

        for (target, nr), g in zip(root_key, root_grads):
            send(target, nr, g)
        for i in order:
            op, params, needs, metas, out_meta, slots, edges = nodes_key[i]
            gs = bufs[i]
            if all(g is None for g in gs):
                continue
            nout = len(out_meta) or 1
            if nout > 1:
                gs = [jax.numpy.zeros(*out_meta[k]) if g is None and out_meta[k] is not None else g
                      for k, g in enumerate(gs)]
            out = op._vjp_impl(params, needs, metas, nout, *gs, *(None if j < 0 else args[j] for j in slots))
            for edge, g in zip(edges, out):
                if edge is not None and g is not None:
                    send(edge[0], edge[1], g)
        return [a if old is None or a is None else old + a for old, a in zip(leaf_grads, acc)]

    return jax.jit(run)


def try_fused_backward(roots, root_grads, retain_graph: bool) -> bool:
    """Run backward as one program if this graph structure was seen before; False if not applicable."""
    plan = _plan(roots)
    if plan is None:
        return False
    order, leaves, args, key = plan  # `order`: the nodes, in the key's numbering
    prog = _programs.get(key, False)
    if prog is False:
        _programs[key] = None
        if len(_programs) > _CACHE_SIZE:
            _programs.popitem(last=False)
        return False
    if prog is None:
        prog = _programs[key] = _program(key)
    with grad_lock:  # read the grads, add (in the program, dispatched asynchronously), write them back: atomically
        old = [leaf.variable.grad._data if leaf.variable.grad is not None else None for leaf in leaves]
        new = prog(list(root_grads), args, old)
        for leaf, g in zip(leaves, new):
            if g is None:
                continue
            var = leaf.variable
            if var.grad is None:
                var.grad = Tensor._wrap(g)
            else:
                var.grad._data = g
                var.grad._st().version += 1
    if not retain_graph:
        for node in order:
            node._release()
    return True
