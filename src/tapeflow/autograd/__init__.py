"""tapeflow.autograd: the tape, the engine and the tools around them."""

from . import anomaly_mode, forward_ad, function, functional, grad_mode, graph, graph_viz, profiler, profiler_util
from ._saved_hooks import SavedTensor
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .backward import backward, grad
from .function import Function, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .profiler import _profiler_enabled
from .variable import Variable

# tp.autograd.graph.to_dot / render, as PyTorch keeps graph tools under torch.autograd.graph.
graph.to_dot, graph.render = graph_viz.to_dot, graph_viz.render
graph.__all__ = [*graph.__all__, "to_dot", "render"]

__all__ = ["backward", "grad", "Variable", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "is_multithreading_enabled",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "graph", "grad_mode", "anomaly_mode",
           "gradcheck", "gradgradcheck", "GradcheckError", "profiler",
           "Function", "once_differentiable", "function", "functional", "forward_ad"]


class _unsafe_preserve_version_counter:
    """Context manager: `tensor`'s version counter is put back to its value on entry when the region ends, so
    writes inside it are not seen by autograd's checks (for code that knows the write is safe)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __enter__(self):
        self.version = self.tensor._version
        return self

    def __exit__(self, *exc):
        self.tensor._st().version = self.version
        return False


class _force_original_view_tracking:
    """Context manager / decorator accepted for PyTorch compatibility: tapeflow always replays views from their
    base, whatever `mode` asks."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn
