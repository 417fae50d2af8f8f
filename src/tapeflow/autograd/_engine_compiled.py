"""The engine's compiled mode: a backward pass whose graph structure was seen before runs as one program.

When a graph *structure* (ops, static parameters, what each node saved, edges) comes back, as in every
training loop, the engine's own pass is traced under `jax.jit` with the saved arrays as inputs: one
program runs the VJPs and the accumulation into `.grad`. A structure compiles on its second sighting
(the warm-up rule), so a graph that changes every step never pays for it. Only plain passes qualify
(op nodes, no hooks, `retain_grad`, `create_graph`, anomaly mode or profiler); the rest runs node by node.
With adaptive eager on, the program is recorded into the pending segment like an op: the forward, the
backward and the `.grad` accumulation then run as one program.
"""

from __future__ import annotations

import jax

from .. import _adaptive, _dispatch
from .._staging.cache import Programs
from .._state import grad_lock, state
from .._tensor import FOLLOW_DTYPE, Tensor
from .graph import AccumulateGrad, OpNode, detached_in_place, saved_then_detached

__all__ = ["compiled_backward"]

MAX_NODES = 1000  # larger graphs would compile for too long
_programs = Programs(None, size=128)  # one per process, for every graph: no re-trace warning


def _plan(roots):
    """Walk the graph once: `(nodes, leaves, saved arrays, key)`, or None if it does not qualify. The key
    records, per node, its op, static parameters, the saved arrays it reads and where its gradients go.
    Saved arrays are read raw: pending values stay pending. (This runs at every backward of a training
    loop, so the walk is written out flat, without calls per edge or per saved array.)"""
    index, leaves, nodes, key, args, arg_index = {}, {}, [], [], [], {}
    root_key = []
    for n, nr in roots:
        if type(n) is AccumulateGrad:
            root_key.append((-1 - leaves.setdefault(n, len(leaves)), nr))
        else:
            if n not in index:
                index[n] = len(nodes)
                nodes.append(n)
            root_key.append((index[n], nr))
    detached = detached_in_place[0]  # (read once: a flag set only once some tensor was detached in place)
    add_node, add_key, add_arg, leaf_number, arg_number = \
        nodes.append, key.append, args.append, leaves.setdefault, arg_index.get
    for node in nodes:  # grows while it is walked
        if not isinstance(node, OpNode) or node._freed or node._pre_hooks is not None \
                or node._post_hooks is not None or node._tensor_hooks or node._retained or node._unpack is not None \
                or len(nodes) > MAX_NODES:
            return None
        for entry in node._versions:
            if entry[0].version != entry[1]:
                return None  # the engine raises
        if detached and saved_then_detached(node):
            return None  # (so does it here)
        edges = []  # flat: (node number, input_nr, ...), None where a gradient goes nowhere
        e = node._next
        for j in range(0, len(e), 2):
            n = e[j]
            if n is None:
                edges.append(None)
                continue
            if type(n) is AccumulateGrad:
                edges.append(-1 - leaf_number(n, len(leaves)))
            else:
                i = index.get(n)
                if i is None:
                    i = index[n] = len(nodes)
                    add_node(n)
                edges.append(i)
            edges.append(e[j + 1])
        # per saved slot (the output first): the index of its array among `args`, -1 for None
        a = node._ans
        if a is None:
            slots = [-1]
        elif type(a) is tuple:  # a multi-output op's outputs
            slots = [tuple(-1 if b is None else _arg_number(b, args, arg_index) for b in a)]
        else:
            i = arg_number(id(a))
            if i is None:
                i = arg_index[id(a)] = len(args)
                add_arg(a)
            slots = [i]
        for a in node._saved:
            if a is None:
                slots.append(-1)
                continue
            if isinstance(a, Tensor):
                a = a._raw
            i = arg_number(id(a))
            if i is None:
                i = arg_index[id(a)] = len(args)
                add_arg(a)
            slots.append(i)
        add_key((node.op, node.params, node.needs, node._metas, node._out_meta, tuple(slots), tuple(edges)))
    for leaf in leaves:
        v = leaf.variable
        if v._hooks or v._post_accumulate_hooks or v._grad_dtype is not FOLLOW_DTYPE:
            return None
        if v._grad is not None and v._grad._coo is not None:
            return None  # (a sparse `.grad` is replaced by the dense sum: see `engine.accumulate`)
    grads_present = tuple(leaf.variable._grad is not None for leaf in leaves)
    return nodes, list(leaves), args, (tuple(key), tuple(root_key), grads_present)


def _skeleton(roots, nodes, leaves) -> tuple:
    """`(roots, nodes, leaves)` of a copy of the graph's structure that holds none of its tensors: op nodes
    with their ops, static parameters and edges, and a stand-in tensor of the same shape for each leaf. A
    program keeps it to trace the pass again (inside a segment's program), so that it keeps no parameter
    or saved value of the graph it was made from alive (a model dropped after training is freed)."""
    from .._dispatch import accumulator

    copies = {}
    for leaf in leaves:
        v = leaf.variable
        stand_in = Tensor._make(jax.ShapeDtypeStruct(v.shape, v._raw.dtype), None, 0, True)
        copies[leaf] = accumulator(stand_in)  # (kept alive by the edges below; it keeps `stand_in`)
    for n in nodes:
        c = copies[n] = object.__new__(type(n))
        c.op, c.params, c.needs, c._metas, c._out_meta, c._aval, c._seq = \
            n.op, n.params, n.needs, n._metas, n._out_meta, n._aval, n._seq
        c._saved, c._ans, c._versions, c._freed = (), None, (), None
        if n._reads is not None:
            c._reads = n._reads
    for n in nodes:
        copies[n]._next = tuple(copies.get(e, e) if type(e) is not int else e for e in n._next)
    return ([(copies[n], nr) for n, nr in roots], [copies[n] for n in nodes], [copies[leaf] for leaf in leaves])


def _arg_number(a, args: list, arg_index: dict) -> int:
    i = arg_index.get(id(a))
    if i is None:
        i = arg_index[id(a)] = len(args)
        args.append(a)
    return i


def _pick(args, j):
    return tuple(_pick(args, k) for k in j) if type(j) is tuple else None if j < 0 else args[j]


def _traced(graph, root_grads, args, leaf_grads):
    """The engine's own pass over `graph` (one graph of the program's structure), each node's VJP reading
    the program's inputs in place of the arrays it saved. The nodes are not touched: another thread may run
    the same graph meanwhile."""
    from .engine import run_backward

    roots, nodes, leaves, key = graph
    inputs = {n: [_pick(args, j) for j in spec[5]] for n, spec in zip(nodes, key[0])}

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
    return tuple(a if old is None or a is None else old + a for old, a in zip(leaf_grads, new))


def _program(graph, n_roots: int, n_args: int):
    """The jitted program of `graph`'s structure on flat inputs `(*root grads, *saved arrays, *leaf grads)`.
    `graph` (a `_skeleton`) stays with it, so that a trace (now, or later inside a segment's program) can
    walk it."""
    def flat(*xs):
        return _traced(graph, xs[:n_roots], xs[n_roots:n_roots + n_args], xs[n_roots + n_args:])
    return jax.jit(flat)


def compiled_backward(roots, root_grads, retain_graph: bool) -> bool:
    """Run backward as one program if this graph structure was seen before; False if not (yet) applicable."""
    pending = _backward_program(roots, root_grads, retain_graph)
    if pending is None:
        return False
    if pending:  # (the walk's references to saved values are gone: they are not kept as the program's outputs)
        _adaptive.run_pending()  # one program per step: the optimizer update, the forward and this backward
    return True


def _backward_program(roots, root_grads, retain_graph: bool):
    """Run (or record, with adaptive eager on) the program of this graph's structure: None if there is none
    (yet), else whether the gradients are pending."""
    plan = _plan(roots)
    if plan is None:
        return None
    nodes, leaves, args, key = plan
    slot = _programs.slot(key)
    if not _programs.ready(slot):
        return None
    if slot.program is None:
        # A graph with an op that must not be deferred (see `xla_ops.Op`) runs as its own program, now.
        deferrable = all(n.op.deferrable for n in nodes)
        slot.program = (_program((*_skeleton(roots, nodes, leaves), key), len(root_grads), len(args)), deferrable)
        _programs.traced(key)
    program, deferrable = slot.program
    with grad_lock:  # read the grads, add (in the program, run asynchronously), write back: atomically
        old = [None if leaf.variable._grad is None else leaf.variable._grad._raw for leaf in leaves]
        inputs = [*root_grads, *args, *old]
        new = _adaptive.record(program, inputs) if _dispatch._adaptive and deferrable else None
        if new is None:
            new = program(*map(_adaptive.resolve, inputs))
        for leaf, g in zip(leaves, new):
            var = leaf.variable
            if g is None:
                continue
            if var._grad is None:
                var._grad = Tensor._wrap(g)
            else:
                var._grad._raw = g
                var._grad._st().version += 1
    if not retain_graph:
        for node in nodes:
            node._release()
    return any(type(g) is _adaptive.Pending for g in new)
