"""Resampling, rearranging and padding layers: `Upsample`, `PixelShuffle`, `InstanceNorm*d`, `*Pad*d`."""

from __future__ import annotations

from ... import _factories
from .. import _functional_resample as R
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "CircularPad1d", "CircularPad2d",
           "CircularPad3d"]


class Upsample(Module):
    """`F.interpolate` as a layer.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Upsample(scale_factor=2)(tp.ones(1, 1, 2, 2)).shape
        tapeflow.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None):
        super().__init__()
        # (scale factors kept as floats, as PyTorch's: its repr shows `2.0`)
        if isinstance(scale_factor, (tuple, list)):
            scale_factor = tuple(float(f) for f in scale_factor)
        elif scale_factor:
            scale_factor = float(scale_factor)
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input):
        return R.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{what}, mode='{self.mode}'"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of images.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.UpsamplingNearest2d(scale_factor=2)(tp.tensor([[[[1.0, 2.0]]]]))
        tensor([[[[1., 1., 2., 2.],
                  [1., 1., 2., 2.]]]])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of images with `align_corners=True` (as this legacy layer has it).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.UpsamplingBilinear2d(scale_factor=2)(tp.ones(1, 1, 2, 2)).shape
        tapeflow.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, "bilinear", True)


class PixelShuffle(Module):
    """`(N, C r², H, W)` to `(N, C, H r, W r)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.PixelShuffle(2)(tp.ones(1, 8, 3, 3)).shape
        tapeflow.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return R.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """`(N, C, H r, W r)` to `(N, C r², H, W)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.PixelUnshuffle(2)(tp.ones(1, 1, 4, 4)).shape
        tapeflow.Size([1, 4, 2, 2])
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return R.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class _InstanceNorm(Module):
    _dims = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_factories.ones(num_features, dtype=dtype))
            self.bias = Parameter(_factories.zeros(num_features, dtype=dtype)) if bias else None
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", _factories.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _factories.ones(num_features, dtype=dtype))
            # (PyTorch registers it, and never counts it up, for instance norms: state dicts load both ways)
            self.register_buffer("num_batches_tracked", _factories.tensor(0))
        else:
            self.running_mean = self.running_var = None

    def forward(self, input):
        if input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.ndim}D input)")
        unbatched = input.ndim == self._dims + 1
        x = input.unsqueeze(0) if unbatched else input
        # Batch statistics unless evaluating with tracked ones; the running buffers (None unless tracked)
        # are updated in training and read in evaluation.
        out = R.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of `(N, C, L)`.

    Example:
        >>> import tapeflow as tp
        >>> y = tp.nn.InstanceNorm1d(2)(tp.tensor([[[1.0, 3.0], [2.0, 2.0]]]))
        >>> y
        tensor([[[-1.0000,  1.0000],
                 [ 0.0000,  0.0000]]])
    """

    _dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of `(N, C, H, W)` (style transfer's normalisation).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.InstanceNorm2d(3)(tp.randn(2, 3, 4, 4)).shape
        tapeflow.Size([2, 3, 4, 4])
    """

    _dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of `(N, C, D, H, W)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.InstanceNorm3d(3, affine=True)(tp.randn(2, 3, 2, 2, 2)).shape
        tapeflow.Size([2, 3, 2, 2, 2])
    """

    _dims = 3


class _Pad(Module):
    _mode, _dims = "constant", 1

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        self.padding = (padding,) * (2 * self._dims) if isinstance(padding, int) else tuple(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, self._mode, self.value if self._mode == "constant" else None)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


def _pad_class(name: str, mode: str, dims: int, doc: str) -> type:
    shape, padded = ", ".join(["1"] + ["2"] * dims), ", ".join(["1"] + ["4"] * dims)
    doc += (f"\n\n    Example:\n        >>> import tapeflow as tp\n        >>> tp.nn.{name}(1)(tp.ones({shape})).shape\n"
            f"        tapeflow.Size([{padded}])\n    ")
    return type(name, (_Pad,), {"_mode": mode, "_dims": dims, "__doc__": doc, "__module__": __name__})


ReflectionPad1d = _pad_class("ReflectionPad1d", "reflect", 1, "Pad the last dimension by reflection.")
ReflectionPad2d = _pad_class("ReflectionPad2d", "reflect", 2, "Pad the last two dimensions by reflection.")
ReflectionPad3d = _pad_class("ReflectionPad3d", "reflect", 3, "Pad the last three dimensions by reflection.")
ReplicationPad1d = _pad_class("ReplicationPad1d", "replicate", 1, "Pad the last dimension with its edge values.")
ReplicationPad2d = _pad_class("ReplicationPad2d", "replicate", 2, "Pad the last two dimensions with edge values.")
ReplicationPad3d = _pad_class("ReplicationPad3d", "replicate", 3, "Pad the last three dimensions with edge values.")
CircularPad1d = _pad_class("CircularPad1d", "circular", 1, "Pad the last dimension by wrapping around.")
CircularPad2d = _pad_class("CircularPad2d", "circular", 2, "Pad the last two dimensions by wrapping around.")
CircularPad3d = _pad_class("CircularPad3d", "circular", 3, "Pad the last three dimensions by wrapping around.")
ConstantPad1d = _pad_class("ConstantPad1d", "constant", 1, "Pad the last dimension with `value`.")
ConstantPad2d = _pad_class("ConstantPad2d", "constant", 2, "Pad the last two dimensions with `value`.")
ConstantPad3d = _pad_class("ConstantPad3d", "constant", 3, "Pad the last three dimensions with `value`.")


class ZeroPad1d(ConstantPad1d):
    """Pad the last dimension with zeros.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ZeroPad1d((1, 0))(tp.tensor([[1.0, 2.0]]))
        tensor([[0., 1., 2.]])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dimensions with zeros.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ZeroPad2d(1)(tp.ones(1, 1, 2, 2)).shape
        tapeflow.Size([1, 1, 4, 4])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dimensions with zeros.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ZeroPad3d(1)(tp.ones(1, 1, 1, 1)).shape
        tapeflow.Size([1, 3, 3, 3])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)
