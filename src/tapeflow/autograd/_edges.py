"""Graph edges and hooks over several tensors: `GradientEdge`, `get_gradient_edge`,
`register_multi_grad_hook`, `increment_version`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

from .._state import state
from .._tensor import Tensor

__all__ = ["GradientEdge", "get_gradient_edge", "register_multi_grad_hook", "increment_version"]


class GradientEdge(NamedTuple):
    """An edge of the backward graph: the gradient of output `output_nr` of `node`.

    `autograd.grad` and `backward` accept edges as `inputs`, so a gradient can be asked for with respect to
    a tensor that no longer exists (only its edge was kept)."""

    node: object
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which `tensor`'s gradient flows: its `grad_fn` and output number, or a leaf's
    `AccumulateGrad`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(2, requires_grad=True)
        >>> y = x * 2
        >>> edge = tp.autograd.graph.get_gradient_edge(y)
        >>> (edge.node.name(), edge.output_nr)
        ('MulBackward0', 0)
        >>> tp.autograd.grad(y.sum(), edge)
        (tensor([1., 1.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    from .._dispatch import edge

    node, nr = edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor) -> None:
    """Bump the version counter of `tensor` (or of each tensor in a list), as an in-place write would: for
    code that changes a tensor's value behind autograd's back and wants saved copies to be refused."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._st().version += 1


class _MultiHandle:
    """Removes every per-tensor hook of a `register_multi_grad_hook` at once."""

    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def will_execute(node) -> bool:
    """Whether the backward pass running on this thread will run `node`."""
    task = state.graph_task
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    return node in task.deps and (task.needed is None or node in task.needed or node in task.targets)


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *, mode: str = "all"):
    """Call `fn` once per backward pass with the gradients of several tensors.

    With `mode="all"`, `fn(grads)` runs after the gradients of all `tensors` that the pass reaches are
    computed; `grads` holds one entry per tensor, `None` for those the pass does not reach. With
    `mode="any"`, `fn(grad)` runs once, with the first of those gradients to be computed. Tensors that do not
    require grad are ignored. Returns a handle whose `remove()` unregisters the hook.

    Example:
        >>> import tapeflow as tp
        >>> a = tp.ones(2, requires_grad=True)
        >>> b = tp.ones(2, requires_grad=True)
        >>> seen = []
        >>> h = tp.autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append(gs))
        >>> (a * 2 + b * 3).sum().backward()
        >>> seen
        [[tensor([2., 2.]), tensor([3., 3.])]]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        for t in tensors:
            if not t.requires_grad:
                raise AssertionError("register_multi_grad_hook(mode='all'): every tensor must require grad; "
                                     "leave out those that do not, or use mode='any'")
    lock = threading.Lock()
    pending: dict = {}  # backward pass -> [gradients still to come, gradients]; "any": pass -> True

    def entry_for(task):
        # Called under `lock`, by the pass's first hook; the entry is dropped when the pass ends.
        entry = pending.get(task)
        if entry is None:
            from .._dispatch import edge

            expected = sum(1 for t in tensors if t.requires_grad and will_execute(edge(t)[0]))
            entry = pending[task] = [expected, [None] * len(tensors)]
            task.cleanups.append(lambda: pending.pop(task, None))
        return entry

    def inner(i):
        def hook(grad):
            task = state.graph_task
            with lock:
                entry = entry_for(task)
                if mode == "any":
                    fire, entry[0] = entry[0] > 0, 0
                else:
                    entry[1][i] = grad
                    entry[0] -= 1
                    fire = entry[0] == 0
            if fire:
                fn(grad if mode == "any" else list(entry[1]))
        return hook

    return _MultiHandle(t.register_hook(inner(i)) for i, t in enumerate(tensors) if t.requires_grad)
