"""`torch._C` under the alias: the few functions of PyTorch's extension module that Python programs and
libraries call directly (grad mode queries, the tracing-state probe, usage logging). Everything else in
`torch._C` is PyTorch's C++ internals and raises `UnsupportedTorchAPI` naming it.
"""

from __future__ import annotations

from .._state import state
from ..autograd._edges import will_execute
from ..autograd.function import Function
from ..autograd.grad_mode import _set_grad, is_grad_enabled, is_inference_mode_enabled
from ..autograd.graph import AccumulateGrad, Node

__all__ = ["is_grad_enabled", "is_inference_mode_enabled", "_set_grad_enabled", "_get_tracing_state",
           "_log_api_usage_once", "_functions", "_will_engine_execute_node", "_current_graph_task_id"]


def _set_grad_enabled(mode: bool) -> None:
    """Switch grad mode on this thread, as a plain call of `torch.set_grad_enabled` does.

    Example:
        >>> from tapeflow.torch import _C
        >>> _C._set_grad_enabled(False); print(_C.is_grad_enabled()); _C._set_grad_enabled(True)
        False
    """
    _set_grad(bool(mode))


def _get_tracing_state():
    """None: no TorchScript trace is ever being recorded (code guarded by it takes its eager branch).

    Example:
        >>> from tapeflow.torch import _C
        >>> _C._get_tracing_state() is None
        True
    """
    return None


def _log_api_usage_once(event: str) -> None:
    """Accepted and ignored: tapeflow keeps no usage log.

    Example:
        >>> from tapeflow.torch import _C
        >>> _C._log_api_usage_once("my_library.model")
    """


class UndefinedGrad(Function):  # (named for its node, `UndefinedGradBackward`)
    @staticmethod
    def forward(ctx, *tensors):
        return tuple(t.clone() for t in tensors) if len(tensors) > 1 else tensors[0].clone()

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * len(grads)


_UndefinedGradFunction = UndefinedGrad
del UndefinedGrad


class _Functions:
    """`torch._C._functions`: the classes of PyTorch's built-in autograd nodes that Python code names."""

    AccumulateGrad = AccumulateGrad

    class UndefinedGrad:
        """`UndefinedGrad()(t)`: `t`'s values, on a node whose backward passes no gradient (None) to `t`.

        Example:
            >>> import tapeflow as tp
            >>> from tapeflow.torch import _C
            >>> x = tp.ones(2, requires_grad=True)
            >>> _C._functions.UndefinedGrad()(x * 2).sum().backward(); print(x.grad)
            None
        """

        def __call__(self, *tensors):
            return _UndefinedGradFunction.apply(*tensors)


_functions = _Functions()


def _will_engine_execute_node(node) -> bool:
    """Whether the backward pass running on this thread will run `node` (a `grad_fn`), as PyTorch's engine
    answers it from a hook.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.torch import _C
        >>> a = tp.ones(2, requires_grad=True); b = a * 2; c = b.cos()
        >>> seen = []
        >>> h = b.register_hook(lambda g: seen.append(_C._will_engine_execute_node(c.grad_fn)))
        >>> b.sum().backward(); seen
        [False]
    """
    if not isinstance(node, Node):
        raise RuntimeError(f"_will_engine_execute_node expects an grad_fn, but got {type(node).__name__}")
    task = state.graph_task
    if task is None:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward pass")
    if task.capture and type(node) is AccumulateGrad:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return will_execute(node)


def _current_graph_task_id() -> int:
    """The number of the backward pass running on this thread (from a hook or a custom Function's backward);
    -1 outside one. Passes run as one compiled program have none.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.torch import _C
        >>> _C._current_graph_task_id()
        -1
    """
    task = state.graph_task
    return -1 if task is None else task.id
