"""Pooling layers: `MaxPool2d`, `AvgPool2d`, `AdaptiveAvgPool2d`."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


class MaxPool2d(Module):
    """2-d max pooling.

    Arguments:
        kernel_size, stride (default: kernel_size), padding, dilation, ceil_mode: as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MaxPool2d(2)(tp.ones(1, 3, 8, 8)).shape
        tapeflow.Size([1, 3, 4, 4])
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation, self.ceil_mode = padding, dilation, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """2-d average pooling.

    Arguments:
        kernel_size, stride (default: kernel_size), padding, ceil_mode, count_include_pad, divisor_override.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AvgPool2d(2)(tp.ones(1, 3, 8, 8)).shape
        tapeflow.Size([1, 3, 4, 4])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size.

    Arguments:
        output_size: int or `(H, W)` (`None` keeps that size).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AdaptiveAvgPool2d(1)(tp.ones(2, 3, 5, 5)).shape
        tapeflow.Size([2, 3, 1, 1])
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
