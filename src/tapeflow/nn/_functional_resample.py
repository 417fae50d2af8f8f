"""Resampling and rearranging: `interpolate` (nearest, nearest-exact, linear, bilinear, bicubic, trilinear),
`pixel_shuffle` / `pixel_unshuffle`, and `instance_norm`.

`interpolate` is separable: along each spatial dimension the output gathers source positions and blends them
with fixed weights, as PyTorch computes them; the gathers and blends are tape ops, so gradients follow.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype
from .._factories import tensor
from .._ops._dtype_rules import _kernel
from .._tensor import Tensor
from ..amp import full_precision

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
           "instance_norm"]

_LINEAR = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_COPY_UNCHANGED = ("linear", "bilinear", "trilinear")  # modes whose kernels copy an axis of unchanged size


def _source(out: int, inp: int, scale: float | None, align_corners: bool, cubic: bool) -> np.ndarray:
    """Where each output position samples the input (PyTorch's `area_pixel_compute_source_index`)."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        return dst * ((inp - 1) / (out - 1) if out > 1 else 0.0)
    src = (dst + 0.5) * (1.0 / scale if scale else inp / out) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _cubic_weights(t: np.ndarray, a: float = -0.75) -> list[np.ndarray]:
    """Keys' cubic convolution weights of the four taps at offsets -1, 0, 1, 2 from `floor(src)`."""
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(out: int, inp: int, scale: float | None, mode: str, align_corners: bool):
    """`[(indices, weights), ...]`: the input positions each output position reads and how it weighs them."""
    if mode in ("nearest", "nearest-exact"):
        # NOTE: PyTorch computes the source index in float32 (`floorf((i + 0.5) * scale)`), so a float64 product
        # would pick another pixel at some scales.
        s = np.float32(1.0 / scale) if scale and scale > 0 else np.float32(inp) / np.float32(out)
        dst = np.arange(out, dtype=np.float32) + np.float32(0.5 if mode == "nearest-exact" else 0.0)
        return [(np.minimum(np.floor(dst * s).astype(np.int64), inp - 1), None)]
    cubic = mode == "bicubic"
    src = _source(out, inp, scale, align_corners, cubic)
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    if cubic:
        return [(np.clip(i0 + k, 0, inp - 1), w) for k, w in zip((-1, 0, 1, 2), _cubic_weights(t))]
    return [(np.minimum(i0, inp - 1), 1.0 - t), (np.minimum(i0 + 1, inp - 1), t)]


def _aa_taps(out: int, inp: int, scale: float | None, mode: str, align_corners: bool):
    """Antialiased taps (bilinear's triangle or bicubic's a = -0.5 kernel, widened by the downsampling factor):
    each output position averages every input position under its stretched kernel, weights summing to 1."""
    if align_corners:
        ratio = (inp - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else inp / out
    half = 2.0 if mode == "bicubic" else 1.0  # the kernel's half-width at scale 1
    stretch = max(ratio, 1.0)
    support = half * stretch
    # NOTE: align_corners changes the ratio only; the kernel stays centred on pixel centres (PyTorch's rule).
    centers = ratio * (np.arange(out, dtype=np.float64) + 0.5)
    lo = np.maximum((centers - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((centers + support + 0.5).astype(np.int64), inp)
    width = int(max((hi - lo).max(), 1))
    offsets = np.arange(width)
    x = (lo[:, None] + offsets[None, :] - centers[:, None] + 0.5) / stretch
    if mode == "bicubic":
        ax = np.abs(x)
        w = np.where(ax < 1, (1.5 * ax - 2.5) * ax * ax + 1,
                     np.where(ax < 2, ((-0.5 * ax + 2.5) * ax - 4) * ax + 2, 0.0))
    else:
        w = np.maximum(0.0, 1.0 - np.abs(x))
    w = np.where(offsets[None, :] < (hi - lo)[:, None], w, 0.0)
    total = w.sum(1, keepdims=True)
    w = w / np.where(total == 0, 1.0, total)
    return [(np.minimum(lo + k, inp - 1), w[:, k]) for k in range(width)]


def _filter(mode: str, x: np.ndarray, a: float) -> np.ndarray:
    """The interpolation kernel at offsets `x`: the triangle (bilinear) or Keys' cubic with parameter `a`."""
    ax = np.abs(x)
    if mode == "bilinear":
        return np.maximum(0.0, 1.0 - ax)
    return np.where(ax < 1, ((a + 2) * ax - (a + 3)) * ax * ax + 1,
                    np.where(ax < 2, ((a * ax - 5 * a) * ax + 8 * a) * ax - 4 * a, 0.0))


def _u8_taps(out: int, inp: int, scale: float | None, mode: str, align_corners: bool, antialias: bool):
    """PyTorch's taps for uint8 bilinear / bicubic resizing (its PIL-like path): the weights of the input
    positions each output position reads, in float64, then as integers of `precision` fractional bits (the
    most a 16-bit integer holds for the largest weight). Returns `([(indices, weights), ...], precision)`."""
    if align_corners:
        ratio = (inp - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale and scale > 0 else inp / out
    half = 1 if mode == "bilinear" else 2  # (the kernel's half-width)
    if antialias:
        support = half * ratio if ratio >= 1.0 else float(half)
        width = int(math.ceil(support)) * 2 + 1
    else:
        width = 2 * half
    lo, w, top = np.zeros(out, np.int64), np.zeros((out, width)), 0.0
    for i in range(out):
        if antialias:  # (every input position under the kernel, stretched when downsampling; weights sum to 1)
            center = ratio * (i + 0.5)
            lo[i] = max(int(center - support + 0.5), 0)
            count = min(max(min(int(center + support + 0.5), inp) - lo[i], 0), width)
            row = _filter(mode, (np.arange(count) + lo[i] - center + 0.5) / max(ratio, 1.0), -0.5)
            if row.sum() != 0:
                row = row / row.sum()
                top = max(top, row.max(initial=0.0))
            w[i, :count] = row
            continue
        src = ratio * i if align_corners else ratio * (i + 0.5) - 0.5
        if mode == "bilinear" and not align_corners:
            src = max(src, 0.0)
        base = min(int(np.floor(np.float32(src))), inp - 1)
        t = min(max(src - base, 0.0), 1.0)
        first = base - half + 1
        lo[i] = max(first, 0)
        count = min(max(min(base + half + 1, inp) - lo[i], 0), width)
        # taps beyond either edge add their weight to the edge's (the float kernels clamp their indices)
        k = 0
        for j in range(width):
            if first + j <= 0:
                k = 0
            elif first + j >= inp - 1:
                k = count - 1
            w[i, k] += _filter(mode, np.float64(j + 1 - half) - t, -0.75)
            top = max(top, w[i, k])
            k += 1
    precision = 0
    while precision < 22 and int(0.5 + top * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = w * (1 << precision)
    fixed = np.where(scaled < 0, np.trunc(scaled - 0.5), np.trunc(scaled + 0.5)).astype(np.int32)
    return [(np.minimum(lo + k, inp - 1), fixed[:, k]) for k in range(width)], precision


def _along_u8(x: Tensor, dim: int, taps, precision: int) -> Tensor:
    """One pass of PyTorch's uint8 resize: integer products, rounded at `precision` bits, clamped to 0..255."""
    total = None
    for idx, w in taps:
        shape = [1] * x.ndim
        shape[dim] = len(w)
        term = x.index_select(dim, tensor(idx)).to(_dtype.int32) * tensor(w.reshape(shape), dtype=_dtype.int32)
        total = term if total is None else total + term
    total = (total + (1 << (precision - 1))) >> precision
    return total.clamp(0, 255).to(_dtype.uint8)


def _along(x: Tensor, dim: int, taps) -> Tensor:
    out = None
    for idx, w in taps:
        picked = x.index_select(dim, tensor(idx))
        if w is not None:
            shape = [1] * x.ndim
            shape[dim] = len(w)
            picked = picked * tensor(w.reshape(shape), dtype=x.dtype)
        out = picked if out is None else out + picked
    return out


def _refusing_kernel(input: Tensor, mode: str, spatial: int, antialias: bool) -> str | None:
    """The CPU kernel that refuses `input`'s dtype for `mode`, as PyTorch names it (None: it takes it). Floating
    dtypes pass; uint8 passes the nearest modes, bilinear and bicubic."""
    if input.dtype.is_floating_point or (input.dtype is _dtype.uint8 and mode in (
            "nearest", "nearest-exact", "bilinear", "bicubic")):
        return None
    if antialias:
        return "compute_index_ranges_weights"
    if mode == "area":
        return "adaptive_avg_pool3d_cpu" if spatial == 3 else "adaptive_avg_pool2d"
    if mode in ("nearest", "nearest-exact"):
        return "upsample_nearest2d_channels_last" if spatial == 2 else "compute_indices_weights_nearest"
    if mode == "bilinear":
        return "upsample_bilinear2d_channels_last"
    return "compute_indices_weights_cubic" if mode == "bicubic" else "compute_indices_weights_linear"


@full_precision(devices=("cuda",))
def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions of `(N, C, *spatial)` to `size` or by `scale_factor`.

    `antialias=True` (bilinear and bicubic, 4-D input) widens the kernel by the downsampling factor, so every
    input pixel under it contributes (PyTorch's and PIL's antialiased resize).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.interpolate(tp.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="linear")
        tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
    """
    spatial = input.ndim - 2
    if spatial < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the modes: "
                         f"nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})")
    if mode in _LINEAR and _LINEAR[mode] != spatial and not (mode == "bicubic" and spatial == 2):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_LINEAR[mode] + 2}D input")
    if mode not in ("nearest", "nearest-exact", "area") and mode not in _LINEAR:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported yet (nearest, nearest-exact, linear, "
                                  "bilinear, bicubic, trilinear, area are)")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias and (mode not in ("bilinear", "bicubic") or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    kernel = _refusing_kernel(input, mode, spatial, antialias)
    if kernel is not None:
        raise _kernel(kernel)(input.dtype.name)
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = [int(size)] * spatial if isinstance(size, int) else [int(s) for s in size]
        scales = [None] * spatial
    else:
        factors = [float(scale_factor)] * spatial if isinstance(scale_factor, (int, float)) else list(scale_factor)
        sizes = [int(math.floor(n * f)) for n, f in zip(input.shape[2:], factors)]
        scales = [None] * spatial if recompute_scale_factor else factors
    if len(sizes) != spatial:
        raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                         f"spatial dimensions of {list(input.shape[2:])} and output size of {sizes}.")
    if mode == "area":  # each output cell averages its bin: adaptive average pooling
        from ._functional_pooling import _adaptive_avg_pool

        return _adaptive_avg_pool(spatial, input, sizes)
    if input.dtype is _dtype.uint8 and mode in ("bilinear", "bicubic"):
        out = input  # (PyTorch's uint8 path: the last dimension first, each pass rounded to uint8)
        for k in reversed(range(spatial)):
            if sizes[k] != input.shape[2 + k]:
                taps, precision = _u8_taps(sizes[k], input.shape[2 + k], scales[k], mode, bool(align_corners),
                                           antialias)
                out = _along_u8(out, 2 + k, taps, precision)
        return out
    taps = _aa_taps if antialias else _taps
    out = input
    for k in range(spatial):
        n_in, scale = input.shape[2 + k], scales[k]
        if sizes[k] == n_in and (mode in _COPY_UNCHANGED or (mode == "nearest" and spatial == 2)) and not antialias:
            continue  # PyTorch's kernels copy an axis whose size does not change, whatever the scale factor
        if mode == "nearest" and spatial == 2 and sizes[k] == 2 * n_in:
            scale = None  # (and its 2-d nearest kernel halves the index when the size doubles)
        out = _along(out, 2 + k, taps(sizes[k], n_in, scale, mode, bool(align_corners)))
    return out



def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None) -> Tensor:
    """The deprecated name of `interpolate` (with PyTorch's warning).

    Example:
        >>> import warnings, tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.nn.functional.upsample(tp.ones(1, 1, 2), scale_factor=2).shape
        tapeflow.Size([1, 1, 4])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """The deprecated `interpolate(..., mode="nearest")` (with PyTorch's warning).

    Example:
        >>> import warnings, tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.nn.functional.upsample_nearest(tp.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """The deprecated `interpolate(..., mode="bilinear", align_corners=True)` (with PyTorch's warning).

    Example:
        >>> import warnings, tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.nn.functional.upsample_bilinear(tp.tensor([[[[0.0, 3.0]]]]), size=(1, 4))
        tensor([[[[0., 1., 2., 3.]]]])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """`(*, C r², H, W)` to `(*, C, H r, W r)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.pixel_shuffle(tp.arange(4.0).reshape(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """`(*, C, H r, W r)` to `(*, C r², H, W)`: the inverse of `pixel_shuffle`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.pixel_unshuffle(tp.arange(16.0).reshape(1, 1, 4, 4), 2).shape
        tapeflow.Size([1, 4, 2, 2])
    """
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"{h} and {w} for downscale_factor={r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial positions (`group_norm` with one channel a group).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.instance_norm(tp.tensor([[[1.0, 3.0], [2.0, 2.0]]]))
        tensor([[[-1.0000,  1.0000],
                 [ 0.0000,  0.0000]]])
    """
    from .functional import batch_norm, group_norm

    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if not use_input_stats:
        # Evaluation with running statistics: every sample uses the same per-channel statistics.
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    if running_mean is not None or running_var is not None:
        from ..autograd.grad_mode import no_grad

        with no_grad():  # track the statistics a batch norm over (N*C) would see, as PyTorch does
            n, c = input.shape[:2]
            flat = input.detach().reshape(1, n * c, *input.shape[2:])
            m = flat.mean(dim=tuple(range(2, flat.ndim))).reshape(n, c).mean(0)
            v = flat.var(dim=tuple(range(2, flat.ndim))).reshape(n, c).mean(0)
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(m * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(v * momentum)
    return group_norm(input, input.shape[1], weight, bias, eps)
