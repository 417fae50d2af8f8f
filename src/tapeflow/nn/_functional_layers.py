"""Small layer functions of `tapeflow.nn.functional`: gated, parametric and randomized activations, `softmin`,
`rms_norm`, `bilinear`, `channel_shuffle`, `gumbel_softmax`, channel-wise and alpha dropout, and the in-place
activation forms (`relu_`, ...).

Compositions of tapeflow ops: the gradient at a kink is the parts' (`where(x > 0, ...)` gives the negative
slope at 0, as PyTorch's kernels do). Random draws use the global generator (`tapeflow.manual_seed`).
"""

from __future__ import annotations

import math
import warnings

import jax.numpy as jnp
import numpy as np

from .. import _dtype, _factories, _ops
from .._device import host_array
from .._factories import bernoulli_like, bernoulli_mask, rand, zeros_like
from .._ops._dtype_rules import _kernel
from .._tensor import Tensor
from ..amp import lower_precision
from ..autograd.grad_mode import no_grad
from . import functional as _F

__all__ = ["glu", "prelu", "rrelu", "rrelu_", "softmin", "rms_norm", "bilinear", "channel_shuffle", "gumbel_softmax",
           "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "relu_", "elu_",
           "leaky_relu_", "hardtanh_", "threshold_", "selu_", "celu_"]


# -- activations ------------------------------------------------------------------------------------------------
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of `input` along `dim` times the sigmoid of the second half.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.glu(tp.tensor([1.0, 2.0, 0.0, 0.0]))
        tensor([0.5000, 1.0000])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -input.ndim <= dim < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    d = dim % input.ndim
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.split(n // 2, d)
    return a * _ops.sigmoid(b)


@lower_precision
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """`x` where `x > 0`, else `weight * x`, with one learned slope per channel (dimension 1) or one in all.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.prelu(tp.tensor([[-2.0, 1.0], [3.0, -1.0]]), tp.tensor([0.25, 0.5]))
        tensor([[-0.5000,  1.0000],
                [ 3.0000, -0.5000]])
    """
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if weight._raw.dtype != input._raw.dtype:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"prelu: Type promoting not supported. Got {s[input.dtype.name]} and {s[weight.dtype.name]}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if weight.numel() == 1:
        w = weight.reshape(())
    else:
        w = weight.reshape((channels,) + (1,) * (input.ndim - 2))
    # NOTE: the negative branch at x == 0 (slope `weight`), PyTorch's rule.
    return _ops.where(input > 0, input, w * input)


def _check_rrelu(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training each non-positive element gets a slope drawn from `U(lower, upper)`;
    in evaluation the slope is `(lower + upper) / 2`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.rrelu(tp.tensor([-3.0, 2.0]), 0.1, 0.3)
        tensor([-0.6000,  2.0000])
    """
    _check_rrelu(lower, upper)
    if not training:
        return _F.leaky_relu(input, (lower + upper) / 2, inplace)
    mt = _factories._stream(None, jnp.dtype(jnp.float64), input)
    if mt is not None and not isinstance(mt, _factories.DrawTape) and input.dtype.is_floating_point:
        # PyTorch's CPU kernel: one float64 uniform on [lower, upper) per non-positive element, in memory order
        negative = np.asarray(input._data <= 0)
        slope = np.ones(negative.shape, np.float64)
        slope[negative] = mt.uniform(int(negative.sum()), np.dtype(np.float64), lower, upper)
        slope = Tensor._wrap(host_array(slope.astype(input._raw.dtype)))
    else:
        slope = _factories.drawn_for(input, rand, *input.shape, dtype=input.dtype) * (upper - lower) + lower
    out = _ops.where(input <= 0, input * slope, input)
    return _F._inplace(input, out) if inplace else out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place `rrelu`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-3.0, 2.0])
        >>> _ = tp.nn.functional.rrelu_(x, 0.1, 0.3)
        >>> x
        tensor([-0.6000,  2.0000])
    """
    return rrelu(input, lower, upper, training, inplace=True)


def softmin(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """`softmax(-input, dim)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.softmin(tp.tensor([1.0, 2.0]), dim=0)
        tensor([0.7311, 0.2689])
    """
    return _F.softmax(-input, _F._legacy_dim(input, dim), dtype)


def relu_(input: Tensor) -> Tensor:
    """In-place `relu`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-1.0, 2.0])
        >>> _ = tp.nn.functional.relu_(x)
        >>> x
        tensor([0., 2.])
    """
    return _F.relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place `elu`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.elu_(tp.tensor([0.0, 2.0]))
        tensor([0., 2.])
    """
    return _F.elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place `leaky_relu`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.leaky_relu_(tp.tensor([-1.0, 2.0]), 0.5)
        tensor([-0.5000,  2.0000])
    """
    return _F.leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place `hardtanh`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.hardtanh_(tp.tensor([-3.0, 0.5]))
        tensor([-1.0000,  0.5000])
    """
    return _F.hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place `threshold`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.threshold_(tp.tensor([0.5, 2.0]), 1.0, -1.0)
        tensor([-1.,  2.])
    """
    return _F.threshold(input, threshold, value, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place `selu`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.selu_(tp.tensor([0.0, 1.0]))
        tensor([0.0000, 1.0507])
    """
    return _F.selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place `celu`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.celu_(tp.tensor([0.0, 1.0]))
        tensor([0., 1.])
    """
    return _F.celu(input, alpha, inplace=True)


# -- normalisation and layers ---------------------------------------------------------------------------------
def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """Root-mean-square normalisation over the trailing `normalized_shape` dimensions, times `weight`.

    `eps` (added to the mean square) defaults to the machine epsilon of the input's dtype.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.rms_norm(tp.tensor([[3.0, 4.0]]), (2,))
        tensor([[0.8485, 1.1314]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or input.ndim < len(shape):
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    eps = float(jnp.finfo(input._raw.dtype).eps) if eps is None else eps
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * _ops.rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return out * weight if weight is not None else out


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.bilinear(tp.ones(2, 3), tp.ones(2, 4), tp.ones(5, 3, 4)).shape
        tapeflow.Size([2, 5])
    """
    tensors = (("input1", input1), ("input2", input2), ("weight", weight)) + ((("bias", bias),) if bias is not None else ())
    if len({t._raw.dtype for _, t in tensors}) > 1:
        c = _dtype.CPP_NAMES
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{name}: {c[t.dtype.name]}" for name, t in tensors))
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} "
                               f"and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but expected "
                           f"{weight.shape[0]}")
    out = _ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out + bias if bias is not None else out


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels (dimension 1) of `groups` groups: `(N, g, C/g, *)` transposed to `(N, C/g, g, *)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.channel_shuffle(tp.arange(4.0).reshape(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape((n, c) + rest)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Softmax of `(logits + Gumbel noise) / tau`: a differentiable sample of a categorical distribution.

    With `hard=True` the result is one-hot (the argmax) in value, with the soft sample's gradient.

    Example:
        >>> import tapeflow as tp
        >>> y = tp.nn.functional.gumbel_softmax(tp.zeros(2, 3), hard=True)
        >>> y.sum(-1)
        tensor([1., 1.])
    """
    with no_grad():  # -log of Exponential(1) draws, as PyTorch draws them
        gumbels = -logits.new_empty(logits.shape).exponential_().log()
    y_soft = _F.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# -- dropout ----------------------------------------------------------------------------------------------------
_SELU_ALPHA = 1.7580993408473766  # -selu's negative saturation, scale * alpha


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(input, p, training, inplace, feature, alpha):
    """Bernoulli(1 - p) noise over the elements, or over the (batch, channel) pairs when `feature`."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    kind = input._raw.dtype.kind
    if p == 1.0:  # (PyTorch multiplies by a zero of the input's dtype: an integer input keeps it)
        out = input * 0.0 if kind not in "biu" else input.new_zeros(input.shape)
        return _F._inplace(input, out) if inplace else out
    if kind in "biu":
        # PyTorch draws the noise in the input's dtype and scales it in place by a float, which an integer noise
        # cannot hold; alpha dropout first adds -1 to it, which makes a bool noise int64.
        held = "int64" if alpha and kind == "b" else input.dtype.name
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_dtype.SCALAR_NAMES[held]}")
    if kind == "c":
        raise _kernel("bernoulli_scalar_cpu_")(input.dtype.name)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    with no_grad():
        keep = _factories.drawn_for(input, bernoulli_mask, shape, 1.0 - p, input.dtype) if feature else \
            bernoulli_like(input, 1.0 - p)
    if alpha:
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        out = input * (keep * a) + ((keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p)
    else:
        out = input * (keep / (1.0 - p))
    return _F._inplace(input, out) if inplace else out


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of `(N, C, L)` or `(C, L)` with probability `p`, scaling the rest by `1/(1-p)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.dropout1d(tp.ones(2, 3), training=False)
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:  # unbatched: one sample
        out = _dropout(input.unsqueeze(0), p, training, False, True, False).squeeze(0)
        return _F._inplace(input, out) if inplace and out is not input else out
    return _dropout(input, p, training, inplace, True, False)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of `(N, C, H, W)` with probability `p`, scaling the rest by `1/(1-p)`.

    As in PyTorch, a 3-d input is read as `(N, C, L)` (with a warning).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.dropout2d(tp.ones(1, 2, 1, 1), p=1.0)
        tensor([[[[0.]],
        <BLANKLINE>
                 [[0.]]]])
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _dropout(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of `(N, C, D, H, W)` or `(C, D, H, W)` with probability `p`, scaling the rest.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.dropout3d(tp.ones(1, 1, 1, 1), p=0.0)
        tensor([[[[1.]]]])
    """
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    if input.ndim != 5:  # unbatched: one sample (PyTorch reads every other rank so too)
        out = _dropout(input.unsqueeze(0), p, training, False, True, False).squeeze(0)
        return _F._inplace(input, out) if inplace and out is not input else out
    return _dropout(input, p, training, inplace, True, False)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU activations' mean and variance: dropped elements take SELU's negative saturation,
    then an affine map restores the statistics.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.alpha_dropout(tp.ones(3), 0.5)
        tensor([1., 1., 1.])
    """
    return _dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """`alpha_dropout` of whole channels (dimension 1).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.feature_alpha_dropout(tp.ones(1, 2), 0.5)
        tensor([[1., 1.]])
    """
    return _dropout(input, p, training, inplace, True, True)
