"""`torch._C` under the alias: the few functions of PyTorch's extension module that Python programs and
libraries call directly (grad mode queries, the tracing-state probe, usage logging). Everything else in
`torch._C` is PyTorch's C++ internals and raises `UnsupportedTorchAPI` naming it.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..autograd.grad_mode import _set_grad, is_grad_enabled, is_inference_mode_enabled
from ..autograd.graph import AccumulateGrad

__all__ = ["is_grad_enabled", "is_inference_mode_enabled", "_set_grad_enabled", "_get_tracing_state",
           "_log_api_usage_once", "_functions"]


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
