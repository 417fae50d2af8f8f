"""tapeflow.autograd: the tape, the engine and the tools around them."""

from . import anomaly_mode, forward_ad, function, functional, grad_mode, graph, graph_viz, profiler
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .backward import backward, grad
from .function import Function, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled, set_multithreading_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

# tp.autograd.graph.to_dot / render, as PyTorch keeps graph tools under torch.autograd.graph.
graph.to_dot, graph.render = graph_viz.to_dot, graph_viz.render
graph.__all__ = [*graph.__all__, "to_dot", "render"]

__all__ = ["backward", "grad", "Variable", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "set_multithreading_enabled",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "graph", "grad_mode", "anomaly_mode",
           "gradcheck", "gradgradcheck", "GradcheckError", "profiler",
           "Function", "once_differentiable", "function", "functional", "forward_ad"]
