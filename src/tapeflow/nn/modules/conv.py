"""Convolutions: `Conv1d`, `Conv2d`, `Conv3d`, `ConvTranspose1d`, `ConvTranspose2d`, `ConvTranspose3d`."""

from __future__ import annotations

from ..._factories import empty
from .. import functional as F
from ..parameter import Parameter
from .linear import reset_weight_and_bias
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


class _ConvNd(Module):
    _n = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", output_padding=0, device=None, dtype=None):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        modes = ("zeros", "reflect", "replicate", "circular")
        if padding_mode not in modes:
            raise ValueError(f"padding_mode must be one of {modes}, but got padding_mode='{padding_mode}'")
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of ('valid', 'same')")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform weights (`a=sqrt(5)`), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as `Linear`."""
        reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """`Conv1d` and `Conv2d`: PyTorch's signature (no `output_padding`), and `padding_mode` applied by an
    explicit pad before convolving with `_conv` (`F.conv1d` or `F.conv2d`)."""

    _conv = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def forward(self, input):
        if self.padding_mode == "zeros":
            return self._conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        # Pad explicitly with the mode, then convolve without padding.
        n = self._n
        if isinstance(self.padding, str):
            total = [0] * n if self.padding == "valid" else [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in total]
        else:
            pairs = [(p, p) for p in self.padding]
        flat = [v for lo_hi in reversed(pairs) for v in lo_hi]
        return self._conv(F.pad(input, flat, mode=self.padding_mode), self.weight, self.bias, self.stride, 0,
                          self.dilation, self.groups)


class Conv1d(_Conv):
    """1-d convolution over `(N, C_in, L)`.

    Arguments:
        in_channels, out_channels, kernel_size: as in PyTorch.
        stride, padding (int, tuple, "valid", "same"), dilation, groups, bias: as in PyTorch.
        padding_mode: "zeros", "reflect", "replicate" or "circular".

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Conv1d(2, 4, 3, padding=1)(tp.ones(1, 2, 5)).shape
        tapeflow.Size([1, 4, 5])
    """

    _n = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over `(N, C_in, H, W)`.

    Arguments:
        in_channels, out_channels, kernel_size: as in PyTorch.
        stride, padding (int, tuple, "valid", "same"), dilation, groups, bias: as in PyTorch.
        padding_mode: "zeros", "reflect", "replicate" or "circular".

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Conv2d(1, 8, 3, padding="same")(tp.ones(2, 1, 8, 8)).shape
        tapeflow.Size([2, 8, 8, 8])
    """

    _n = 2
    _conv = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over `(N, C_in, D, H, W)`; arguments as `Conv2d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Conv3d(1, 4, 3, padding=1)(tp.ones(2, 1, 4, 4, 4)).shape
        tapeflow.Size([2, 4, 4, 4, 4])
    """

    _n = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolutions: weight `(C_in, C_out / groups, *kernel)`; `output_size=` picks the
    `output_padding` that reaches it."""

    _transposed = True
    _conv_t = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} takes integer padding, not a string")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device=device, dtype=dtype)

    def forward(self, input, output_size=None):
        n, output_padding = self._n, self.output_padding
        if output_size is not None:
            size = tuple(output_size)[-n:]
            output_padding = tuple(
                size[i] - ((input.shape[-n + i] - 1) * self.stride[i] - 2 * self.padding[i]
                           + self.dilation[i] * (self.kernel_size[i] - 1) + 1) for i in range(n))
            if any(p < 0 or p >= max(self.stride[i], self.dilation[i]) for i, p in enumerate(output_padding)):
                raise ValueError(f"requested an output size of {list(size)}, which is not reachable with this "
                                 "stride/padding")
        return self._conv_t(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                            self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution over `(N, C_in, L)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ConvTranspose1d(4, 2, 3, stride=2)(tp.ones(1, 4, 5)).shape
        tapeflow.Size([1, 2, 11])
    """

    _n = 1
    _conv_t = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution (fractionally strided), weight `(C_in, C_out / groups, kH, kW)`.

    Arguments:
        in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation:
            as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ConvTranspose2d(4, 2, 2, stride=2)(tp.ones(1, 4, 3, 3)).shape
        tapeflow.Size([1, 2, 6, 6])
    """

    _n = 2
    _conv_t = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution over `(N, C_in, D, H, W)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ConvTranspose3d(2, 3, 2, stride=2)(tp.ones(1, 2, 2, 3, 3)).shape
        tapeflow.Size([1, 3, 4, 6, 6])
    """

    _n = 3
    _conv_t = staticmethod(F.conv_transpose3d)
