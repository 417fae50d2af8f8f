"""`tapeflow.nn.functional`: the stateless layer functions (PyTorch's `torch.nn.functional`).

Each function checks its arguments, normalises them into static parameters
and dispatches one `xla_ops.nn` op (one XLA call, one backward node).
Losses live in `_functional_losses.py`, pooling in `_functional_pooling.py`; both are re-exported here.
"""

from __future__ import annotations

import xla_ops as X

from .. import _dtype, _ops
from .._dispatch import dispatch, edge, inplace
from .._factories import bernoulli_like
from .._legacy import argument_type_name
from .._ops._checks import check_indices
from .._ops._dtype_rules import _kernel
from .._tensor import Tensor
from ..amp import lower_precision
from ..autograd.grad_mode import no_grad
from ._functional_attention import multi_head_attention_forward, scaled_dot_product_attention
from ._functional_ctc import ctc_loss
from ._functional_distance import cosine_similarity, pairwise_distance, pdist
from ._functional_embedding_bag import embedding_bag
from ._functional_fold import fold, local_response_norm, unfold
from ._functional_layers import (
    alpha_dropout,
    bilinear,
    celu_,
    channel_shuffle,
    dropout1d,
    dropout2d,
    dropout3d,
    elu_,
    feature_alpha_dropout,
    glu,
    gumbel_softmax,
    hardtanh_,
    leaky_relu_,
    prelu,
    relu_,
    rms_norm,
    rrelu,
    rrelu_,
    selu_,
    softmin,
    threshold_,
)
from ._functional_losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ._functional_margin_losses import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._functional_pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ._functional_resample import (
    instance_norm,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from ._functional_sampling_grid import affine_grid, grid_sample
from ._functional_utils import _check, _tuple, normalize, one_hot, pad

__all__ = [
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
    "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d", "fractional_max_pool3d",
    "batch_norm", "layer_norm", "group_norm", "dropout", "embedding", "relu", "gelu", "silu", "elu",
    "leaky_relu", "softplus", "tanh", "sigmoid", "softmax", "log_softmax", "one_hot", "pad", "normalize",
    "scaled_dot_product_attention", "multi_head_attention_forward", "mse_loss", "l1_loss", "smooth_l1_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "huber_loss",
    "hardtanh", "relu6", "hardsigmoid", "hardswish", "softshrink", "hardshrink", "threshold", "celu", "selu",
    "mish", "softsign", "tanhshrink", "logsigmoid", "interpolate", "upsample",
    "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
    "instance_norm", "fold", "unfold", "local_response_norm",
    "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
    "multi_margin_loss", "multilabel_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss",
    "pairwise_distance", "cosine_similarity", "pdist", "glu", "prelu", "rrelu", "rrelu_", "softmin", "rms_norm",
    "bilinear", "channel_shuffle", "gumbel_softmax", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "relu_", "elu_", "leaky_relu_", "hardtanh_", "threshold_", "selu_", "celu_",
    "embedding_bag", "affine_grid", "grid_sample",
]


# -- linear and convolution -----------------------------------------------------------------
@lower_precision
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`input @ weight.T + bias` as one op.

    Arguments:
        input: `(*, in_features)`.
        weight: `(out_features, in_features)`.
        bias: `(out_features,)` or `None`.

    Returns:
        `(*, out_features)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.linear(tp.ones(2, 3), tp.ones(4, 3), tp.zeros(4)).shape
        tapeflow.Size([2, 4])
    """
    a, w = input._raw, weight._raw  # (shapes and dtypes read raw: this runs for every layer call)
    if not a.shape or not w.shape:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {a.ndim}D and {w.ndim}D")
    if a.shape[-1] != w.shape[-1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, input.shape))} and "
                           f"{weight.shape[-1]}x{weight.shape[0]}); the input's last dimension must equal "
                           "in_features")
    if w.ndim == 1:  # PyTorch's `matmul(input, weight.t())` (+ bias) with a vector weight
        if bias is not None and (a.ndim == 2 or bias.ndim >= 1):
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
        out = input.matmul(weight.t())
        return out if bias is None else out + bias
    if bias is None:
        if a.dtype != w.dtype:
            c = _dtype.CPP_NAMES
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {c[input.dtype.name]} != "
                               f"{c[weight.dtype.name]}")
        return dispatch(X.nn.linear_nobias, (input, weight))
    if a.dtype != w.dtype or bias._raw.dtype != w.dtype:  # (PyTorch's addmm: self vs mat2, then mat1 vs mat2)
        s, first = _dtype.SCALAR_NAMES, bias._raw.dtype != w.dtype
        raise RuntimeError(f"{'self' if first else 'mat1'} and mat2 must have the same dtype, but got "
                           f"{s[(bias if first else input).dtype.name]} and {s[weight.dtype.name]}")
    return dispatch(X.nn.linear, (input, weight, bias))


def _conv_padding(padding, k, dilation, stride, n) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (kk - 1) for d, kk in zip(dilation, k)]
            return tuple((t // 2, t - t // 2) for t in total)
        raise ValueError(f"Invalid padding string '{padding}', should be one of ('valid', 'same')")
    return tuple((p, p) for p in _tuple(padding, n, "padding"))


def _same_weight_dtype(input, weight) -> None:
    if weight._raw.dtype != input._raw.dtype:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"expected scalar type {s[input.dtype.name]} but found {s[weight.dtype.name]}")


def _integer_kernel(input, n: int, dilation: tuple, transposed: bool) -> None:
    """PyTorch's CPU convolution kernels refuse boolean tensors, and its dilated and transposed ones every
    integer type but int64: the same NotImplementedError, naming the kernel PyTorch would have run."""
    kind = input._raw.dtype.kind
    if kind not in "biu":
        return
    if transposed:
        kernel = f"slow_conv_transpose{3 if n == 3 else 2}d_out_cpu"
    elif any(d != 1 for d in dilation):
        kernel = "slow_conv_dilated<>"
    elif kind == "b":
        kernel = "compute_columns3d" if n == 3 else "slow_conv2d_cpu"
    else:
        return
    if kind == "b" or input._raw.dtype.name != "int64":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.SCALAR_NAMES[input.dtype.name]}\'')


@lower_precision
def _convnd(n, input, weight, bias, stride, padding, dilation, groups, kernels=True):
    _check(input, f"conv{n}d")
    unbatched = input.ndim == n + 1
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to conv{n}d, but got input "
                           f"of size: {list(input.shape)}")
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                           f"{input.shape[1]} channels instead")
    stride = _tuple(stride, n, "stride")
    dilation = _tuple(dilation, n, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    pads = _conv_padding(padding, tuple(weight.shape[2:]), dilation, stride, n)
    if any(p < 0 for pair in pads for p in pair):
        raise RuntimeError("negative padding is not supported")
    padded = [size + lo + hi for size, (lo, hi) in zip(input.shape[2:], pads)]
    kernel = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(p < k for p, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual input size")
    if bias is not None and bias._raw.dtype != input._raw.dtype:
        c = _dtype.CPP_NAMES
        raise RuntimeError(f"Input type ({c[input.dtype.name]}) and bias type ({c[bias.dtype.name]}) should be the same")
    _same_weight_dtype(input, weight)
    if kernels:  # (`fold`/`unfold` convolve any dtype: PyTorch's im2col kernels have them all)
        _integer_kernel(input, n, dilation, transposed=False)
    out = dispatch(X.nn.conv, (input, weight, bias),
                   (("stride", stride), ("padding", pads), ("dilation", dilation), ("groups", int(groups))))
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-d convolution (cross-correlation) over `(N, C_in, L)`.

    Arguments:
        input: `(N, C_in, L)` or `(C_in, L)`.
        weight: `(C_out, C_in / groups, k)`.
        bias: `(C_out,)` or `None`.
        stride, padding (int, tuple, "valid" or "same"), dilation, groups: as in PyTorch.

    Returns:
        `(N, C_out, L_out)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.conv1d(tp.ones(1, 2, 5), tp.ones(3, 2, 3)).shape
        tapeflow.Size([1, 3, 3])
    """
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-d convolution (cross-correlation) over `(N, C_in, H, W)`.

    Arguments:
        input: `(N, C_in, H, W)` or `(C_in, H, W)`.
        weight: `(C_out, C_in / groups, kH, kW)`.
        bias: `(C_out,)` or `None`.
        stride, padding (int, tuple, "valid" or "same"), dilation, groups: as in PyTorch.

    Returns:
        `(N, C_out, H_out, W_out)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.conv2d(tp.ones(1, 1, 4, 4), tp.ones(2, 1, 3, 3), padding="same").shape
        tapeflow.Size([1, 2, 4, 4])
    """
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-d convolution (cross-correlation) over `(N, C_in, D, H, W)`; arguments as `conv2d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.conv3d(tp.ones(1, 1, 4, 4, 4), tp.ones(2, 1, 3, 3, 3)).shape
        tapeflow.Size([1, 2, 2, 2, 2])
    """
    return _convnd(3, input, weight, bias, stride, padding, dilation, groups)


def _check_output_padding(output_padding, stride, dilation) -> None:
    """PyTorch's refusal of an output padding not smaller than the stride or the dilation (a 1-D one is shown
    as a 2-D one of height 1)."""
    if all(o < s or o < d for o, s, d in zip(output_padding, stride, dilation)):
        return
    fill = (1,) * (2 - len(stride)) if len(stride) < 2 else ()
    names = ("depth", "height", "width")[-max(len(stride), 2):]
    show = lambda label, values: " ".join(f"{label}_{k}: {v}" for k, v in zip(names, values))  # noqa: E731
    raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                       f"{show('output_padding', (0,) * len(fill) + tuple(output_padding))} "
                       f"{show('stride', fill + tuple(stride))} {show('dilation', fill + tuple(dilation))}")


@lower_precision
def _conv_transposend(n, input, weight, bias, stride, padding, output_padding, groups, dilation, kernels=True):
    _check(input, f"conv_transpose{n}d")
    unbatched = input.ndim == n + 1
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to conv_transpose{n}d, but "
                           f"got input of size: {list(input.shape)}")
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
                           "channels instead")
    params = (("stride", _tuple(stride, n, "stride")), ("padding", _tuple(padding, n, "padding")),
              ("output_padding", _tuple(output_padding, n, "output_padding")),
              ("dilation", _tuple(dilation, n, "dilation")), ("groups", int(groups)))
    _check_output_padding(*(dict(params)[k] for k in ("output_padding", "stride", "dilation")))
    _same_weight_dtype(input, weight)
    if kernels:
        _integer_kernel(input, n, (), transposed=True)
    if bias is not None and bias._raw.dtype != input._raw.dtype:
        bias = bias.to(input.dtype)  # (PyTorch adds the bias into the output in place: the output's dtype wins)
    out = dispatch(X.nn.conv_transpose, (input, weight, bias), params)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 1-d convolution over `(N, C_in, L)`; arguments as `conv_transpose2d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.conv_transpose1d(tp.ones(1, 2, 3), tp.ones(2, 1, 2), stride=2).shape
        tapeflow.Size([1, 1, 6])
    """
    return _conv_transposend(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 2-d convolution (the gradient of `conv2d` with respect to its input).

    Arguments:
        input: `(N, C_in, H, W)` or `(C_in, H, W)`.
        weight: `(C_in, C_out / groups, kH, kW)`.
        bias: `(C_out,)` or `None`.
        stride, padding, output_padding, groups, dilation: as in PyTorch.

    Returns:
        `(N, C_out, H_out, W_out)` with `H_out = (H-1)*stride - 2*padding + dilation*(kH-1) + output_padding + 1`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.conv_transpose2d(tp.ones(1, 2, 3, 3), tp.ones(2, 1, 2, 2), stride=2).shape
        tapeflow.Size([1, 1, 6, 6])
    """
    return _conv_transposend(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 3-d convolution over `(N, C_in, D, H, W)`; arguments as `conv_transpose2d`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.conv_transpose3d(tp.ones(1, 2, 2, 2, 2), tp.ones(2, 1, 2, 2, 2), stride=2).shape
        tapeflow.Size([1, 1, 4, 4, 4])
    """
    return _conv_transposend(3, input, weight, bias, stride, padding, output_padding, groups, dilation)


# -- normalisation ---------------------------------------------------------------------------------------
def _mixed_dtype(input, *params) -> bool:
    """PyTorch's CPU normalisation kernels take parameters of the input's dtype, or float32 parameters for a
    float16/bfloat16 input (mixed precision: computed in float32, the result in the input's dtype, which the
    caller casts to when this returns True); anything else is refused in PyTorch's words."""
    dt = input._raw.dtype
    mixed = [p for p in params if p is not None and p._raw.dtype != dt]
    if not mixed:
        return False
    if dt.name not in ("float32", "float16", "bfloat16"):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if any(p._raw.dtype.name != "float32" for p in mixed):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    return True


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5) -> Tensor:
    """Batch normalisation over the channel dimension 1.

    In training, normalises with the batch statistics and updates
    `running_mean`/`running_var` in place (unbiased variance, factor `momentum`);
    otherwise uses the running statistics.

    Arguments:
        input: `(N, C, *)`.
        running_mean, running_var: `(C,)` tensors or `None`.
        weight, bias: `(C,)` or `None`.
        training: use batch statistics.
        momentum: running-average factor.
        eps: added to the variance.

    Returns:
        The normalised tensor.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(8, 3)
        >>> y = tp.nn.functional.batch_norm(x, None, None, training=True)
        >>> bool(y.mean(0).abs().max() < 1e-5)
        True
    """
    _check(input, "batch_norm")
    c = input.shape[1] if input.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    mixed = _mixed_dtype(input, weight, bias, running_mean, running_var)
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm in evaluation needs running_mean and running_var; pass training=True "
                               "to normalise with batch statistics")
        out = dispatch(X.nn.batch_norm_eval, (input, running_mean, running_var, weight, bias), (("eps", eps),))
        return out.to(input.dtype) if mixed else out
    n = input.numel() // input.shape[1]
    if n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    y, mean, var = dispatch(X.nn.batch_norm, (input, weight, bias), (("eps", eps),))
    if running_mean is not None and running_var is not None:
        with no_grad():
            rm, rv = dispatch(X.nn.batch_norm_stats_update, (running_mean, running_var, mean, var, momentum),
                              (("n", n),))
            inplace(running_mean, rm)
            inplace(running_var, rv)
    return y.to(input.dtype) if mixed else y


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Layer normalisation over the trailing `normalized_shape` dimensions.

    Arguments:
        input: `(*, *normalized_shape)`.
        normalized_shape: int or tuple.
        weight, bias: of shape `normalized_shape` or `None`.
        eps: added to the variance.

    Returns:
        The normalised tensor.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.layer_norm(tp.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    _check(input, "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    full = input._raw.shape
    if full[len(full) - len(shape):] != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    out = dispatch(X.nn.layer_norm, (input, weight, bias), (("ndim", len(shape)), ("eps", eps)))
    return out.to(input.dtype) if _mixed_dtype(input, weight, bias) else out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Group normalisation: channels split into `num_groups` groups, each normalised.

    Arguments:
        input: `(N, C, *)`.
        num_groups: must divide C.
        weight, bias: `(C,)` or `None`.
        eps: added to the variance.

    Returns:
        The normalised tensor.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.group_norm(tp.randn(2, 4, 3), 2).shape
        tapeflow.Size([2, 4, 3])
    """
    _check(input, "group_norm")
    if input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    mixed = _mixed_dtype(input, weight, bias)
    out = dispatch(X.nn.group_norm, (input, weight, bias), (("num_groups", int(num_groups)), ("eps", eps)))
    return out.to(input.dtype) if mixed else out


# -- dropout and embedding ------------------------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Zero each element with probability `p` and scale the rest by `1/(1-p)` (when `training`).

    Uses the global generator (`tapeflow.manual_seed`).

    Arguments:
        input: any tensor.
        p: drop probability in [0, 1].
        training: identity when False.
        inplace: write into `input`.

    Returns:
        The result.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.dropout(tp.ones(3), 0.5, training=False)
        tensor([1., 1., 1.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    kind = input._raw.dtype.kind if input.dtype.name != "bfloat16" else "f"
    if p == 1.0:
        out = input * 0.0 if kind not in "biu" else input.new_zeros(input.shape)  # (an integer input keeps its dtype)
    elif kind in "biu":  # (PyTorch writes the float mask's product into the input's dtype, and refuses)
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_dtype.SCALAR_NAMES[input.dtype.name]}")
    elif kind == "c":
        raise _kernel("bernoulli_scalar_cpu_")(input.dtype.name)
    else:  # (PyTorch's CPU dropout: a Bernoulli(1 - p) mask divided by 1 - p, times the input)
        out = input * (bernoulli_like(input, 1.0 - p) / (1.0 - p))
    return _inplace(input, out) if inplace else out


def _inplace(x, out):
    return inplace(x, out)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False) -> Tensor:
    """Look up rows of `weight` by integer indices.

    Arguments:
        input: integer tensor of indices.
        weight: `(num_embeddings, embedding_dim)`.
        padding_idx: this row gets no gradient.
        max_norm: if given, each row that `input` names and whose `norm_type`-norm exceeds
            `max_norm` is first rescaled in place in `weight` (under `no_grad`, bumping its
            version) to norm `max_norm`, as in PyTorch. No host sync: the rows are chosen
            with a `where` on their norms.
        norm_type: the p of that norm (default 2; `inf` allowed).
        scale_grad_by_freq: divide each row's gradient by how often its index occurs in `input`.
        sparse: accepted for compatibility; the gradient is always a dense tensor.

    Returns:
        `(*input.shape, embedding_dim)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.embedding(tp.tensor([1, 0]), tp.eye(2))
        tensor([[0., 1.],
                [1., 0.]])
        >>> w = tp.tensor([[3.0, 4.0], [0.3, 0.4]])
        >>> out = tp.nn.functional.embedding(tp.tensor([0]), w, max_norm=1.0)
        >>> w.norm(dim=1)
        tensor([1.0000, 0.5000])
    """
    _check(input, "embedding")
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {argument_type_name(input)} instead (while checking arguments for "
                           "embedding)")
    if padding_idx is not None:
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise AssertionError(f"Padding_idx must be within num_embeddings (got {padding_idx} for "
                                 f"{weight.shape[0]} rows)")
        padding_idx %= weight.shape[0]
    check_indices(input, weight.shape[0], lambda v: IndexError("index out of range in self"), negative=False)
    if max_norm is not None:
        with no_grad():
            inplace(weight, dispatch(X.nn.embedding_renorm, (weight, input),
                                     (("max_norm", float(max_norm)), ("norm_type", float(norm_type)))))
    return dispatch(X.nn.embedding, (weight, input), (("padding_idx", padding_idx),
                                                      ("scale_grad_by_freq", bool(scale_grad_by_freq))))


# -- activations ------------------------------------------------------------------------------------------
def _float_only(input, kernel) -> None:
    """PyTorch's kernels of most activations exist for floating-point dtypes only."""
    if input._raw.dtype.kind in "biuc":
        name = str(input._raw.dtype)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.SCALAR_NAMES.get(name, name)}\'')


def _act(op, input, params=(), inplace=False, negative=None):
    out = dispatch(op, (_ops._to_float(input),), params)
    if not inplace:
        return out
    if negative is not None and out.requires_grad:
        out = _refused_backward(out, negative)
    return _inplace(input, out)


# PyTorch's in-place forms of these keep only the result, from which a negative slope's branch cannot be told.
_NEGATIVE_SLOPE_INPLACE = ("In-place {} backward calculation is triggered with a negative slope which is not supported. "
                           "This is caused by calling in-place forward function with a negative slope, please call "
                           "out-of-place version instead.")
_LEAKY_NEGATIVE_INPLACE = _NEGATIVE_SLOPE_INPLACE.format("leakyReLu") + (
    " File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward "
    "calculation with negative slope")


def _refused_backward(out, message: str):
    """`out` behind a node that raises `message` when a backward pass reaches it (the values are unchanged)."""
    from ..autograd.function import Error

    return Tensor._make(out._data, Error(message, (edge(out),)), 0, True)


def relu(input, inplace=False) -> Tensor:
    """`max(x, 0)`. Example: `F.relu(tp.tensor([-1.0, 2.0]))` is `tensor([0., 2.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.relu(x)
        tensor([0., 0., 0., 1.])
    """
    kind = input._raw.dtype.kind
    if kind in "iu":  # integers stay integers, as in PyTorch
        out = dispatch(X.relu, (input,))
        return _inplace(input, out) if inplace else out
    if kind in "bc":
        _ops.relu(input)  # PyTorch's refusal
    return _act(X.relu, input, (), inplace)


def gelu(input, approximate="none") -> Tensor:
    """Gaussian error linear unit; `approximate="tanh"` for the tanh form.

    Example: `F.gelu(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.gelu(x)
        tensor([-0.0455, -0.1543,  0.0000,  0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    _float_only(input, "GeluKernelImpl")
    return _act(X.nn.gelu, input, (("approximate", approximate),))


def silu(input, inplace=False) -> Tensor:
    """`x * sigmoid(x)`. Example: `F.silu(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.silu(x)
        tensor([-0.2384, -0.1888,  0.0000,  0.7311])
    """
    return _act(X.nn.silu, input, (), inplace)


def elu(input, alpha=1.0, inplace=False) -> Tensor:
    """`x` for x > 0, else `alpha * (exp(x) - 1)`. Example: `F.elu(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.elu(x)
        tensor([-0.8647, -0.3935,  0.0000,  1.0000])
    """
    return _act(X.nn.elu, input, (("alpha", float(alpha)),), inplace,
                _NEGATIVE_SLOPE_INPLACE.format("elu") if alpha < 0 else None)


def leaky_relu(input, negative_slope=0.01, inplace=False) -> Tensor:
    """`x` for x > 0, else `negative_slope * x`. Example: `F.leaky_relu(tp.tensor([-1.0]))` is `tensor([-0.0100])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.leaky_relu(x)
        tensor([-0.0200, -0.0050,  0.0000,  1.0000])
    """
    return _act(X.nn.leaky_relu, input, (("negative_slope", float(negative_slope)),), inplace,
                _LEAKY_NEGATIVE_INPLACE if negative_slope < 0 else None)


def celu(input, alpha=1.0, inplace=False) -> Tensor:
    """`x` for x > 0, else `alpha * (exp(x / alpha) - 1)`. Example: `F.celu(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.celu(x)
        tensor([-0.8647, -0.3935,  0.0000,  1.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu with alpha=0 divides by zero; pass a non-zero alpha")
    return _act(X.nn.celu, input, (("alpha", float(alpha)),), inplace,
                _NEGATIVE_SLOPE_INPLACE.format("elu") if alpha < 0 else None)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False) -> Tensor:
    """Scaled ELU with the self-normalising constants. Example: `F.selu(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.selu(x)
        tensor([-1.5202, -0.6918,  0.0000,  1.0507])
    """
    return _act(X.nn.elu, input, (("alpha", _SELU_ALPHA), ("scale", _SELU_SCALE)), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False) -> Tensor:
    """`x` clipped to `[min_val, max_val]`; no gradient at the bounds (PyTorch's rule).

    Example: `F.hardtanh(tp.tensor([-2.0, 0.5]))` is `tensor([-1.0000, 0.5000])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.hardtanh(x)
        tensor([-1.0000, -0.5000,  0.0000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    kind = _int_kind(input)
    if kind:  # integers stay integers, the limits cast to the input's type (truncated), as in PyTorch
        if kind == "b":
            raise RuntimeError("Bool inputs not supported for hardtanh")
        if kind == "u" and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        out = _ops.clamp(input, int(min_val), int(max_val))
        return _inplace(input, out) if inplace else out
    if input._raw.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    return _act(X.nn.hardtanh, input, (("min_val", float(min_val)), ("max_val", float(max_val))), inplace)


def _int_kind(input) -> str:
    """"b" (bool), "i" or "u" (integers) for such an input; "" for floating and complex ones."""
    kind = input._raw.dtype.kind
    return kind if kind in "biu" else ""


def relu6(input, inplace=False) -> Tensor:
    """`hardtanh(x, 0, 6)`. Example: `F.relu6(tp.tensor([-1.0, 7.0]))` is `tensor([0., 6.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.relu6(x)
        tensor([0., 0., 0., 1.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False) -> Tensor:
    """`relu6(x + 3) / 6`. Example: `F.hardsigmoid(tp.zeros(1))` is `tensor([0.5000])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.hardsigmoid(x)
        tensor([0.1667, 0.4167, 0.5000, 0.6667])
    """
    return _act(X.nn.hardsigmoid, input, (), inplace)


def hardswish(input, inplace=False) -> Tensor:
    """`x * relu6(x + 3) / 6`. Example: `F.hardswish(tp.tensor([3.0]))` is `tensor([3.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.hardswish(x)
        tensor([-0.3333, -0.2083,  0.0000,  0.6667])
    """
    return _act(X.nn.hardswish, input, (), inplace)


def softshrink(input, lambd=0.5) -> Tensor:
    """`x - lambd` above `lambd`, `x + lambd` below `-lambd`, else 0.

    Example: `F.softshrink(tp.tensor([1.0, 0.2]))` is `tensor([0.5000, 0.0000])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.softshrink(x)
        tensor([-1.5000, -0.0000,  0.0000,  0.5000])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _act(X.nn.softshrink, input, (("lambd", float(lambd)),))


def hardshrink(input, lambd=0.5) -> Tensor:
    """`x` where `|x| > lambd`, else 0. Example: `F.hardshrink(tp.tensor([1.0, 0.2]))` is `tensor([1., 0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.hardshrink(x)
        tensor([-2.,  0.,  0.,  1.])
    """
    return _act(X.nn.hardshrink, input, (("lambd", float(lambd)),))


def threshold(input, threshold, value, inplace=False) -> Tensor:
    """`x` where `x > threshold`, else `value`. Example: `F.threshold(tp.tensor([0.5, 2.0]), 1.0, -1.0)` is
    `tensor([-1., 2.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.threshold(x, 0.5, -1.0)
        tensor([-1., -1., -1.,  1.])
    """
    kind = _int_kind(input) or ("c" if input._raw.dtype.kind == "c" else "")
    if kind in ("b", "c"):
        raise _kernel("threshold_cpu")(input.dtype.name)
    if kind:  # integers stay integers (threshold and value cast to the input's type, as in PyTorch)
        out = _ops.where(input > int(threshold), input, int(value))
        return _inplace(input, out) if inplace else out
    return _act(X.nn.threshold, input, (("threshold", float(threshold)), ("value", float(value))), inplace)


def mish(input, inplace=False) -> Tensor:
    """`x * tanh(softplus(x))`. Example: `F.mish(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.mish(x)
        tensor([-0.2525, -0.2207,  0.0000,  0.8651])
    """
    out = input * _ops.tanh(softplus(input))
    return _inplace(input, out) if inplace else out


def softsign(input) -> Tensor:
    """`x / (1 + |x|)`. Example: `F.softsign(tp.tensor([1.0]))` is `tensor([0.5000])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.softsign(x)
        tensor([-0.6667, -0.3333,  0.0000,  0.5000])
    """
    return input / (input.abs() + 1)


def tanhshrink(input) -> Tensor:
    """`x - tanh(x)`. Example: `F.tanhshrink(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.tanhshrink(x)
        tensor([-1.0360, -0.0379,  0.0000,  0.2384])
    """
    return input - _ops.tanh(input)


def logsigmoid(input) -> Tensor:
    """`log(sigmoid(x))`, computed stably as `-softplus(-x)`. Example: `F.logsigmoid(tp.zeros(1))` ≈ `-0.6931`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.logsigmoid(x)
        tensor([-2.1269, -0.9741, -0.6931, -0.3133])
    """
    return -softplus(-input)


def softplus(input, beta=1.0, threshold=20.0) -> Tensor:
    """`log(1 + exp(beta x)) / beta`, linear above `threshold`. Example: `F.softplus(tp.zeros(1))` ≈ `0.6931`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.softplus(x)
        tensor([0.1269, 0.4741, 0.6931, 1.3133])
    """
    _float_only(input, "softplus_cpu")
    return _act(X.nn.softplus, input, (("beta", float(beta)), ("threshold", float(threshold))))


def tanh(input) -> Tensor:
    """Elementwise tanh. Example: `F.tanh(tp.zeros(1))` is `tensor([0.])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.tanh(x)
        tensor([-0.9640, -0.4621,  0.0000,  0.7616])
    """
    return _ops.tanh(input)


def sigmoid(input) -> Tensor:
    """Elementwise logistic sigmoid. Example: `F.sigmoid(tp.zeros(1))` is `tensor([0.5000])`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-2.0, -0.5, 0.0, 1.0])
        >>> tp.nn.functional.sigmoid(x)
        tensor([0.1192, 0.3775, 0.5000, 0.7311])
    """
    return _ops.sigmoid(input)


def softmax(input, dim=None, dtype=None) -> Tensor:
    """Softmax along `dim`. Example: `F.softmax(tp.zeros(2), dim=0)` is `tensor([0.5000, 0.5000])`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.softmax(tp.tensor([[1.0, 2.0], [0.0, 0.0]]), dim=1)
        tensor([[0.2689, 0.7311],
                [0.5000, 0.5000]])
    """
    return _ops.softmax(input, _legacy_dim(input, dim), dtype)


def log_softmax(input, dim=None, dtype=None) -> Tensor:
    """Log-softmax along `dim`. Example: `F.log_softmax(tp.zeros(2), dim=0)` ≈ `tensor([-0.6931, -0.6931])`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.log_softmax(tp.tensor([0.0, 0.0]), dim=0)
        tensor([-0.6931, -0.6931])
    """
    return _ops.log_softmax(input, _legacy_dim(input, dim), dtype)


def _legacy_dim(input, dim):
    if dim is None:
        # PyTorch's implicit choice for old code that omits dim.
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return dim


# PyTorch's refusals of input dtypes its CPU kernels lack (see `_ops._dtype_rules`), applied to the namespace.
def _refuse_dtypes() -> None:
    from .._ops._dtype_rules import FUNCTIONAL_RULES, guard

    namespace = globals()
    for name in FUNCTIONAL_RULES:
        namespace[name] = guard(name, namespace[name], FUNCTIONAL_RULES)


_refuse_dtypes()
