"""`tapeflow.nn`: modules, layers, losses, initialisation and utilities (PyTorch's `torch.nn`).

Example:
    >>> import tapeflow as tp
    >>> model = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 3))
    >>> loss = tp.nn.CrossEntropyLoss()(model(tp.randn(5, 4)), tp.tensor([0, 1, 2, 0, 1]))
    >>> loss.backward()
    >>> model[0].weight.grad.shape
    tapeflow.Size([8, 4])
"""

from . import attention, functional, init, parallel, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter

__all__ = ["functional", "init", "parallel", "utils", "Parameter", "Buffer", "DataParallel", *_modules_all]
