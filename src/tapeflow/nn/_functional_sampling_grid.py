"""`affine_grid` and `grid_sample` (2-d and 3-d).

`grid_sample` is a composition of tapeflow ops: unnormalise the grid, apply the padding rule, gather the
corner pixels and weight them. Corner positions (`floor`, `round`) are constants to autograd, so the grid's
gradient is the derivative of the interpolation weights, as in PyTorch's kernel. Two PyTorch conventions are
kept on purpose: a clipped coordinate has zero gradient on the border itself, and a reflection at exactly
the low edge keeps the sign.
"""

from __future__ import annotations

import itertools
import warnings

from .. import _dtype, _ops
from .._factories import arange, linspace, ones, zeros_like
from .._tensor import Tensor

__all__ = ["affine_grid", "grid_sample"]


def _base(n: int, align_corners: bool, like: Tensor) -> Tensor:
    """Normalised pixel-centre coordinates of `n` pixels in [-1, 1]."""
    if n <= 1:
        return arange(n, dtype=like.dtype) * 0.0
    steps = linspace(-1, 1, n, dtype=like.dtype)  # (PyTorch's values to the last bit: a grid on pixel centres
    return steps if align_corners else steps * (n - 1) / n  # lands on the same side of each kink)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps, for `grid_sample`.

    Arguments:
        theta: `(N, 2, 3)` (2-d) or `(N, 3, 4)` (3-d) affine matrices.
        size: the output size `(N, C, H, W)` or `(N, C, D, H, W)`.
        align_corners: -1 and 1 name the corner pixels' centres (True) or their outer edges (False).

    Returns:
        `(N, H, W, 2)` or `(N, D, H, W, 3)` grid of `(x, y[, z])` in normalised coordinates.

    Example:
        >>> import tapeflow as tp
        >>> theta = tp.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> tp.nn.functional.affine_grid(theta, (1, 1, 2, 2), align_corners=True)[0, :, :, 0]
        tensor([[-1.,  1.],
                [-1.,  1.]])
    """
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[2:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:  # (PyTorch's batched product of the base grid and theta refuses it)
        k1 = len(size) - 1
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {k1}] but "
                           f"got: [{theta.shape[0]}, {k1}].")
    k = len(spatial)
    # coordinates ordered (x, y[, z]) = the last spatial dimension first, then a column of ones
    axes = [_base(s, align_corners, theta) for s in spatial]
    cols = []
    for j, axis in enumerate(reversed(axes)):
        dim = k - 1 - j
        shape = [1] * k
        shape[dim] = spatial[dim]
        cols.append(axis.reshape(shape).expand(*spatial))
    cols.append(ones(*spatial, dtype=theta.dtype))
    base = _ops.stack(cols, -1).reshape(1, -1, k + 1)  # (1, prod(spatial), k + 1)
    grid = base @ theta.transpose(1, 2)  # (N, prod(spatial), k)
    return grid.reshape((size[0],) + tuple(spatial) + (k,))


# -- grid_sample ---------------------------------------------------------------------------------------------------
def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size):
    """Clamp into [0, size - 1]; gradient 1 strictly inside, 0 on and beyond the border (PyTorch's rule)."""
    inside = (coord > 0) & (coord < size - 1)
    return _ops.where(inside, coord, _ops.clamp(coord, 0, size - 1).detach())


def _reflect(coord, twice_low, twice_high):
    """Reflect into [twice_low / 2, twice_high / 2] (gradient +-1 by the number of reflections)."""
    if twice_low == twice_high:
        return zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = coord - low
    c = _ops.where(c < 0, -c, c)  # NOTE: at exactly the low edge the sign is kept (+1), as in PyTorch
    flips = _ops.floor(c.detach() / span)
    extra = c - flips * span
    even = _ops.remainder(flips, 2) == 0
    return _ops.where(even, extra + low, span - extra + low)


def _source_index(coord, size, padding_mode, align_corners):
    coord = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        coord = _clip(coord, size)
    elif padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        coord = _clip(coord, size)
    return coord


def _gather(flat, coords, sizes):
    """Pixels of `flat (N, C, prod(spatial))` at integer coordinates `(x, y[, z])`, 0 outside the image."""
    valid, index, stride = None, None, 1
    for coord, size in zip(coords, sizes):  # x runs fastest
        inside = (coord >= 0) & (coord <= size - 1)
        valid = inside if valid is None else valid & inside
        term = _ops.clamp(coord, 0, size - 1).long() * stride
        index = term if index is None else index + term
        stride *= size
    n, c = flat.shape[:2]
    out_shape = (n, c) + tuple(coords[0].shape[1:])
    values = flat.gather(2, index.reshape(n, 1, -1).expand(n, c, -1)).reshape(out_shape)
    return _ops.where(valid.unsqueeze(1), values, zeros_like(values))


_A = -0.75  # the cubic convolution kernel's parameter


def _cubic_weights(t):
    """Weights of the taps at offsets -1, 0, 1, 2 for a fractional position `t` in [0, 1)."""
    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic(input, grid, padding_mode, align_corners):
    """4 x 4 taps around each location; the padding rule applies to each tap's (integer) position."""
    n, c, h, w = input.shape
    ix = _unnormalize(grid[..., 0], w, align_corners)
    iy = _unnormalize(grid[..., 1], h, align_corners)
    x0, y0 = _ops.floor(ix).detach(), _ops.floor(iy).detach()
    wx, wy = _cubic_weights(ix - x0), _cubic_weights(iy - y0)
    flat = input.reshape(n, c, -1)
    out = 0
    for j in range(4):
        ty = _source_index_int(y0 + (j - 1), h, padding_mode, align_corners)
        row = 0
        for i in range(4):
            tx = _source_index_int(x0 + (i - 1), w, padding_mode, align_corners)
            row = row + _gather(flat, [tx, ty], (w, h)) * wx[i].unsqueeze(1)
        out = out + row * wy[j].unsqueeze(1)
    return out


def _source_index_int(coord, size, padding_mode, align_corners):
    """A tap's pixel position after the padding rule (no gradient: taps are integer positions)."""
    if padding_mode == "border":
        coord = _ops.clamp(coord, 0, size - 1)
    elif padding_mode == "reflection":
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord = _ops.clamp(_reflect(coord, *twice), 0, size - 1)
    return _ops.floor(coord).detach()


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample `input` at the normalised `(x, y)` locations of `grid` (as produced by `affine_grid`).

    Arguments:
        input: `(N, C, H, W)` or `(N, C, D, H, W)`.
        grid: `(N, Ho, Wo, 2)` or `(N, Do, Ho, Wo, 3)` of `(x, y[, z])`; -1 and 1 are the image's edges
            (`align_corners=False`) or corner pixels' centres.
        mode: "bilinear" (trilinear for 3-d inputs) | "nearest" | "bicubic" (2-d only).
        padding_mode: "zeros" | "border" | "reflection": the value of locations outside the image.
        align_corners: as in `affine_grid`.

    Returns:
        `(N, C, Ho, Wo)` or `(N, C, Do, Ho, Wo)`.

    Example:
        >>> import tapeflow as tp
        >>> image = tp.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> tp.nn.functional.grid_sample(image, tp.zeros(1, 1, 1, 2), align_corners=False)
        tensor([[[[2.5000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if grid._raw.dtype != input._raw.dtype:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"expected scalar type {s[input.dtype.name]} but found {s[grid.dtype.name]}")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == "bicubic":
        if input.ndim != 4:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        return _bicubic(input, grid, padding_mode, align_corners)
    n, c = input.shape[:2]
    sizes = tuple(reversed(input.shape[2:]))  # (W, H[, D]), the order of the grid's coordinates
    coords = [_source_index(grid[..., i], size, padding_mode, align_corners) for i, size in enumerate(sizes)]
    flat = input.reshape(n, c, -1)
    if mode == "nearest":
        # The grid's gradient is zero (PyTorch's), but it is linked: a finite coordinate times zero.
        link = sum(_ops.where(_ops.isfinite(x), x, 0.0) for x in coords) * 0.0
        return _gather(flat, [_ops.round(x).detach() for x in coords], sizes) + link.unsqueeze(1)
    lows = [_ops.floor(x).detach() for x in coords]
    out = 0
    for corner in itertools.product((0, 1), repeat=len(coords)):
        weight, at = None, []
        for x, low, up in zip(coords, lows, corner):
            # the weight of the upper corner is x - low, of the lower one (low + 1) - x
            w = x - low if up else (low + 1) - x
            weight = w if weight is None else weight * w
            at.append(low + up)
        out = out + _gather(flat, at, sizes) * weight.unsqueeze(1)
    return out
