"""Pooling layers: max (1-3 d), max-unpooling, average (1-3 d), adaptive average (1-3 d), adaptive max (1-3 d),
power-average (1-3 d) and fractional max (2-3 d)."""

from __future__ import annotations

from .. import functional as F
from .._functional_utils import _tuple
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


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


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over `(N, C, D, H, W)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MaxPool3d(2)(tp.ones(1, 3, 4, 4, 4)).shape
        tapeflow.Size([1, 3, 2, 2, 2])
    """

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
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


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of `MaxPool3d`: call as `unpool(output, indices, output_size=None)`.

    Example:
        >>> import tapeflow as tp
        >>> pool, unpool = tp.nn.MaxPool3d(2, return_indices=True), tp.nn.MaxUnpool3d(2)
        >>> unpool(*pool(tp.randn(1, 1, 4, 4, 4))).shape
        tapeflow.Size([1, 1, 4, 4, 4])
    """

    _n = 3

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class AvgPool1d(Module):
    """1-d average pooling over `(N, C, L)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AvgPool1d(2)(tp.ones(1, 3, 8)).shape
        tapeflow.Size([1, 3, 4])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


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
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    _pool = staticmethod(F.avg_pool2d)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """3-d average pooling over `(N, C, D, H, W)`; arguments as `AvgPool2d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AvgPool3d(2)(tp.ones(1, 3, 4, 4, 4)).shape
        tapeflow.Size([1, 3, 2, 2, 2])
    """

    _pool = staticmethod(F.avg_pool3d)


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

    _pool = staticmethod(F.adaptive_avg_pool2d)

    def forward(self, input):
        return self._pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """1-d average pooling to `output_size` positions.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AdaptiveAvgPool1d(3)(tp.ones(2, 4, 7)).shape
        tapeflow.Size([2, 4, 3])
    """

    _pool = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """3-d average pooling to `output_size` `(D, H, W)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AdaptiveAvgPool3d(1)(tp.ones(2, 4, 3, 5, 5)).shape
        tapeflow.Size([2, 4, 1, 1, 1])
    """

    _pool = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool2d(Module):
    """2-d max pooling to `output_size` `(H, W)` (PyTorch's bins).

    Arguments:
        output_size: int or `(H, W)` (`None` keeps that size).
        return_indices: also return the int64 flat positions `h * W + w` of the maxima (for `MaxUnpool2d`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AdaptiveMaxPool2d((2, 1))(tp.ones(2, 4, 5, 5)).shape
        tapeflow.Size([2, 4, 2, 1])
        >>> out, idx = tp.nn.AdaptiveMaxPool2d(2, return_indices=True)(tp.arange(16.0).reshape(1, 4, 4))
        >>> idx
        tensor([[[ 5,  7],
                 [13, 15]]])
    """

    _pool = staticmethod(F.adaptive_max_pool2d)

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return self._pool(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """1-d max pooling to `output_size` positions.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AdaptiveMaxPool1d(1)(tp.ones(2, 4, 7)).shape
        tapeflow.Size([2, 4, 1])
    """

    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """3-d max pooling to `output_size` `(D, H, W)`; `return_indices` gives flat positions over `D * H * W`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AdaptiveMaxPool3d((1, 2, 3))(tp.ones(2, 4, 3, 5, 7)).shape
        tapeflow.Size([2, 4, 1, 2, 3])
    """

    _pool = staticmethod(F.adaptive_max_pool3d)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return self._pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-d power-average pooling: `(sum over each window of x ** p) ** (1 / p)` (see `F.lp_pool1d`).

    Arguments:
        norm_type: `p` (`inf` is max pooling of `|x|`).
        kernel_size, stride (default: kernel_size), ceil_mode: as in `AvgPool1d` (no padding).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LPPool1d(2, 2)(tp.tensor([[3.0, 4.0, 1.0, 0.0]]))
        tensor([[5., 1.]])
    """

    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-d power-average pooling over `(N, C, H, W)` or `(C, H, W)`; arguments as `LPPool1d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LPPool2d(2, (2, 3), stride=1, ceil_mode=True)(tp.ones(1, 3, 5, 6)).shape
        tapeflow.Size([1, 3, 4, 4])
    """

    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-d power-average pooling over `(N, C, D, H, W)` or `(C, D, H, W)`; arguments as `LPPool1d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LPPool3d(1, 2)(tp.ones(1, 2, 4, 4, 4)).shape
        tapeflow.Size([1, 2, 2, 2, 2])
    """

    _pool = staticmethod(F.lp_pool3d)


def _ntuple(v, n):
    return (v,) * n if isinstance(v, (int, float)) else tuple(v)


class _FractionalMaxPoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, self._n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, self._n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                          _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling (Graham, 2014): `kernel_size` windows at pseudo-random steps.

    Arguments:
        kernel_size: int or `(kH, kW)`.
        output_size: int or `(H_out, W_out)`; or give
        output_ratio: a number or pair in (0, 1) (the output is `int(ratio * input size)`).
        return_indices: also return the int64 flat positions `h * W + w` of the maxima (for `MaxUnpool2d`).
        _random_samples: optional `(N, C, 2)` samples in [0, 1) fixing the windows (a buffer); by default
            each call draws new ones from tapeflow's global generator (`tapeflow.manual_seed`).

    Example:
        >>> import tapeflow as tp
        >>> pool = tp.nn.FractionalMaxPool2d(3, output_ratio=0.5)
        >>> pool(tp.randn(2, 4, 10, 9)).shape
        tapeflow.Size([2, 4, 5, 4])
    """

    _pool = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling over `(N, C, T, H, W)` or `(C, T, H, W)`; arguments as `FractionalMaxPool2d`
    (`_random_samples` is `(N, C, 3)`).

    Example:
        >>> import tapeflow as tp
        >>> pool = tp.nn.FractionalMaxPool3d(2, output_size=(3, 2, 4), return_indices=True)
        >>> out, idx = pool(tp.randn(1, 2, 6, 6, 6))
        >>> out.shape, idx.dtype
        (tapeflow.Size([1, 2, 3, 2, 4]), tapeflow.int64)
    """

    _n = 3
    _pool = staticmethod(F.fractional_max_pool3d)

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)
