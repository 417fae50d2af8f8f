"""Pooling layers: `MaxPool1d`, `MaxPool2d`, `MaxUnpool1d`, `MaxUnpool2d`, `AvgPool2d`, `AdaptiveAvgPool2d`."""

from __future__ import annotations

from .. import functional as F
from .._functional_utils import _tuple
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling.

    Arguments:
        kernel_size, stride (default: kernel_size), padding, dilation, ceil_mode: as in PyTorch.
        return_indices: also return the int64 positions of the maxima (for `MaxUnpool1d`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MaxPool1d(2)(tp.ones(1, 3, 8)).shape
        tapeflow.Size([1, 3, 4])
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling.

    Arguments:
        kernel_size, stride (default: kernel_size), padding, dilation, ceil_mode: as in PyTorch.
        return_indices: also return the int64 flat positions `h * W + w` of the maxima (for `MaxUnpool2d`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MaxPool2d(2)(tp.ones(1, 3, 8, 8)).shape
        tapeflow.Size([1, 3, 4, 4])
        >>> out, idx = tp.nn.MaxPool2d(2, return_indices=True)(tp.ones(1, 3, 8, 8))
        >>> idx.dtype
        tapeflow.int64
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class _MaxUnpoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._n, "kernel_size")
        self.stride = _tuple(stride if stride is not None else kernel_size, self._n, "stride")
        self.padding = _tuple(padding, self._n, "padding")

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool1d`: call as `unpool(output, indices, output_size=None)`.

    Example:
        >>> import tapeflow as tp
        >>> pool, unpool = tp.nn.MaxPool1d(2, return_indices=True), tp.nn.MaxUnpool1d(2)
        >>> unpool(*pool(tp.tensor([[[1.0, 3.0, 2.0, 0.0]]])))
        tensor([[[0., 3., 2., 0.]]])
    """

    _n = 1

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool2d`: call as `unpool(output, indices, output_size=None)`.

    Example:
        >>> import tapeflow as tp
        >>> pool, unpool = tp.nn.MaxPool2d(2, return_indices=True), tp.nn.MaxUnpool2d(2)
        >>> out, idx = pool(tp.randn(1, 1, 5, 5))
        >>> unpool(out, idx, output_size=(5, 5)).shape
        tapeflow.Size([1, 1, 5, 5])
    """

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


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
