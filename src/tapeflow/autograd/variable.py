"""`Variable`: the legacy wrapper, kept so old code runs. It returns a Tensor."""

from __future__ import annotations

from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """`Variable(t, requires_grad=False)`: a new leaf Tensor sharing `t`'s data (as `t.detach()`), with
    `requires_grad` set as asked.

    Example:
        >>> import tapeflow as tp
        >>> v = tp.autograd.Variable(tp.ones(2), requires_grad=True)
        >>> isinstance(v, tp.Tensor), v.requires_grad
        (True, True)
    """

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))


class _ExecutionEngine:
    """`Variable._execution_engine`: PyTorch's handle on its autograd engine, for the one call programs make."""

    @staticmethod
    def queue_callback(callback) -> None:
        """Run `callback()` when the backward pass running on this thread ends."""
        from .._state import state

        task = state.graph_task
        if task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        task.on_exit.append(callback)


Variable._execution_engine = _ExecutionEngine()
