"""PyTorch's underlying ops that its top-level namespace also exposes (`torch.hinge_embedding_loss`,
`torch.batch_norm`, `torch.view_copy`, ...): their own argument order and defaults, which differ from
`torch.nn.functional`'s, mapped onto tapeflow's functions."""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from . import _dtype

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss", "cosine_embedding_loss", "ctc_loss",
           "poisson_nll_loss", "kl_div", "binary_cross_entropy_with_logits", "embedding", "batch_norm",
           "instance_norm", "rms_norm", "dropout", "alpha_dropout", "feature_alpha_dropout", "constant_pad_nd",
           "frobenius_norm", "nuclear_norm", "range", "set_default_tensor_type", "get_device", "is_distributed",
           "slice_copy", "split_copy", "split_with_sizes_copy", "unbind_copy"]


def _functional():
    from .nn import functional

    return functional


# -- the losses PyTorch also has at the top level -------------------------------------------------------------
# `torch.hinge_embedding_loss` and its kin are the underlying ops, not `torch.nn.functional`'s: the reduction is a
# number (0 none, 1 mean, 2 sum; PyTorch's top-level default gives the unreduced loss), positional after the
# op's own arguments.
def _reduction(name: str, reduction, position: int) -> str:
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{name}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """`max(0, -target * (input1 - input2) + margin)`; `reduction` 0 (none, the default), 1 (mean) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> tp.margin_ranking_loss(tp.tensor([0.5, 2.0]), tp.tensor([1.0, -1.0]), tp.tensor([1.0, -1.0]))
        tensor([0.5000, 3.0000])
    """
    F = _functional()
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction, 5))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """`input` where `target` is 1, `max(0, margin - input)` where it is -1; `reduction` 0 (none, the default),
    1 (mean) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> tp.hinge_embedding_loss(tp.tensor([0.5, 2.0]), tp.tensor([1.0, -1.0]))
        tensor([0.5000, 0.0000])
    """
    F = _functional()
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction, 4))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    """`max(d(anchor, positive) - d(anchor, negative) + margin, 0)` per sample; `reduction` 0 (none, the
    default), 1 (mean) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> tp.triplet_margin_loss(tp.zeros(2, 3), tp.ones(2, 3), 2 * tp.ones(2, 3))
        tensor([0., 0.])
    """
    F = _functional()
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction, 8))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """`1 - cos(input1, input2)` where `target` is 1, `max(0, cos - margin)` where it is -1; `reduction` 0 (none,
    the default), 1 (mean) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> tp.cosine_embedding_loss(tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 1.0]]), tp.tensor([1.0]))
        tensor([1.])
    """
    F = _functional()
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction, 5))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """The connectionist temporal classification loss per sequence; `reduction` 0 (none, the default), 1 (mean
    over target lengths, then the batch) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> lp = tp.zeros(3, 1, 2).log_softmax(2)
        >>> tp.ctc_loss(lp, tp.tensor([[1]]), [3], [1])
        tensor([0.2877])
    """
    F = _functional()
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      reduction=_reduction("ctc_loss", reduction, 6), zero_infinity=zero_infinity)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """The Poisson negative log-likelihood (`exp(input) - target * input` with `log_input`), every argument
    given as in PyTorch's top-level op; `reduction` 0 (none), 1 (mean) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> tp.poisson_nll_loss(tp.tensor([0.0, 1.0]), tp.tensor([1.0, 2.0]), True, False, 1e-8, 0)
        tensor([1.0000, 0.7183])
    """
    F = _functional()
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction, 6))


def kl_div(input, target, reduction=0, *, log_target=False):
    """The pointwise KL divergence `target * (log(target) - input)` (`input` holds log-probabilities);
    `reduction` 0 (none, the default), 1 (mean) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> tp.kl_div(tp.tensor([0.0, 0.0]), tp.tensor([0.5, 1.0]))
        tensor([-0.3466,  0.0000])
    """
    return _functional().kl_div(input, target, reduction=_reduction("kl_div", reduction, 3), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """Binary cross-entropy of `sigmoid(input)` against `target`, computed from the logits; `reduction` 0 (none,
    the default), 1 (mean) or 2 (sum).

    Example:
        >>> import tapeflow as tp
        >>> tp.binary_cross_entropy_with_logits(tp.tensor([0.0, 2.0]), tp.tensor([1.0, 0.0]))
        tensor([0.6931, 2.1269])
    """
    return _functional().binary_cross_entropy_with_logits(
        input, target, weight, pos_weight=pos_weight,
        reduction=_reduction("binary_cross_entropy_with_logits", reduction, 5))


# -- layers' functions, in the ops' own argument order ----------------------------------------------------------
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of `weight` at `indices` (note the order: the table first); a row `padding_idx` (-1: none) gets
    no gradient.

    Example:
        >>> import tapeflow as tp
        >>> tp.embedding(tp.eye(3), tp.tensor([2, 0]))
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """
    return _functional().embedding(indices, weight, None if padding_idx is None or padding_idx < 0 else padding_idx,
                                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """Batch normalisation with every argument given, in the op's order (`cudnn_enabled` is ignored).

    Example:
        >>> import tapeflow as tp
        >>> tp.batch_norm(tp.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 0.0, False)
        tensor([[-1.],
                [ 1.]])
    """
    return _functional().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """Instance normalisation with every argument given, in the op's order (`cudnn_enabled` is ignored).

    Example:
        >>> import tapeflow as tp
        >>> tp.instance_norm(tp.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1, 0.0, False)
        tensor([[[-1.,  1.]]])
    """
    return _functional().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum,
                                       eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """`input / sqrt(mean(input ** 2) + eps)` over the trailing `normalized_shape`, times `weight`.

    Example:
        >>> import tapeflow as tp
        >>> tp.rms_norm(tp.tensor([[3.0, 4.0]]), [2])
        tensor([[0.8485, 1.1314]])
    """
    return _functional().rms_norm(input, normalized_shape, weight, eps)


def _dropout_function(name: str, example: str, shown: str):
    def f(input, p, train):
        return getattr(_functional(), name)(input, p, train)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"`nn.functional.{name}` with `p` and `train` required, positional.\n\nExample:\n"
                 f"    >>> import tapeflow as tp\n    >>> tp.{name}({example}, 0.5, False)\n    {shown}\n")
    return f


dropout = _dropout_function("dropout", "tp.ones(2)", "tensor([1., 1.])")
alpha_dropout = _dropout_function("alpha_dropout", "tp.ones(2)", "tensor([1., 1.])")
feature_alpha_dropout = _dropout_function("feature_alpha_dropout", "tp.ones(1, 2)", "tensor([[1., 1.]])")


def constant_pad_nd(input, pad, value=0):
    """`input` padded with `value`; `pad` lists (before, after) pairs from the last dimension on.

    Example:
        >>> import tapeflow as tp
        >>> tp.constant_pad_nd(tp.tensor([1.0, 2.0]), [1, 2], 9.0)
        tensor([9., 1., 2., 9., 9.])
    """
    return _functional().pad(input, list(pad), "constant", value)


# -- norms ------------------------------------------------------------------------------------------------------
def frobenius_norm(input, dim=(-2, -1), keepdim=False):
    """The square root of the sum of squares over `dim`.

    Example:
        >>> import tapeflow as tp
        >>> tp.frobenius_norm(tp.tensor([[3.0, 0.0], [0.0, 4.0]]), (0, 1))
        tensor(5.)
    """
    from . import linalg

    dim = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
    return linalg.vector_norm(input, 2, dim, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """The sum of the singular values of the matrices over `dim` (the last two by default); called as
    `nuclear_norm(input, keepdim)` too.

    Example:
        >>> import tapeflow as tp
        >>> tp.nuclear_norm(tp.tensor([[3.0, 0.0], [0.0, -4.0]]))
        tensor(7.)
    """
    from . import linalg

    if isinstance(dim, builtins.bool):  # the (input, keepdim) overload
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


# -- factories and settings ------------------------------------------------------------------------------------
def range(start, end, step=1, *, dtype=None, device=None, requires_grad=False, layout=None, out=None):
    """Values from `start` to `end` inclusive, `step` apart (deprecated in PyTorch: `arange` excludes `end`); in
    the default floating dtype unless `dtype` is given.

    Example:
        >>> import tapeflow as tp
        >>> tp.range(1, 4)
        tensor([1., 2., 3., 4.])
    """
    from ._factories import tensor

    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = builtins.int(np.floor((end - start) / step)) + 1
    values = start + np.arange(n, dtype=np.float64) * step
    result = tensor(values, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


_TENSOR_TYPES = {"FloatTensor": _dtype.float32, "DoubleTensor": _dtype.float64, "HalfTensor": _dtype.float16,
                 "BFloat16Tensor": _dtype.bfloat16}


def set_default_tensor_type(t) -> None:
    """Set the default floating dtype (and, for a `cuda` type, the default device) from a tensor type or its
    name, as PyTorch's deprecated `set_default_tensor_type`.

    Example:
        >>> import tapeflow as tp
        >>> tp.set_default_tensor_type("torch.DoubleTensor"); d = tp.ones(1).dtype
        >>> tp.set_default_tensor_type(tp.FloatTensor); d
        tapeflow.float64
    """
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    dtype = _TENSOR_TYPES.get(name.rsplit(".", 1)[-1])
    if dtype is None:
        raise TypeError(f"only floating-point types are supported as the default type (got {name})")
    if ".cuda." in f".{name}":
        from ._device import set_default_device

        set_default_device("cuda")
    _dtype.set_default_dtype(dtype)


def get_device(input) -> int:
    """`input.get_device()`: the accelerator's index, -1 for the CPU.

    Example:
        >>> import tapeflow as tp
        >>> tp.get_device(tp.ones(1))
        -1
    """
    return input.get_device()


def is_distributed(input) -> bool:
    """False: a tapeflow tensor is never split across processes.

    Example:
        >>> import tapeflow as tp
        >>> tp.is_distributed(tp.ones(1))
        False
    """
    return False


# -- copies of views --------------------------------------------------------------------------------------------
# `torch.view_copy(x, shape)` and its kin: the view's values, as a new tensor that shares nothing.
_COPIES = {  # name: (the view method, the example's extra arguments, the example result's shape)
    "view_copy": ("view", ", (4,)", "[4]"), "t_copy": ("t", "", "[2, 2]"),
    "permute_copy": ("permute", ", (1, 0)", "[2, 2]"), "transpose_copy": ("transpose", ", 0, 1", "[2, 2]"),
    "unsqueeze_copy": ("unsqueeze", ", 0", "[1, 2, 2]"), "squeeze_copy": ("squeeze", "", "[2, 2]"),
    "expand_copy": ("expand", ", (2, 2, 2)", "[2, 2, 2]"), "diagonal_copy": ("diagonal", "", "[2]"),
    "select_copy": ("select", ", 0, 1", "[2]"), "detach_copy": ("detach", "", "[2, 2]"),
    "alias_copy": ("alias", "", "[2, 2]"), "unfold_copy": ("unfold", ", 0, 1, 1", "[2, 2, 1]"),
    "as_strided_copy": ("as_strided", ", (2,), (1,)", "[2]"),
    "view_as_real_copy": ("view_as_real", "", "[2, 2, 2]"),
}


def _copy_function(name: str, method: str, args: str, shape: str):
    def f(input, *args, **kwargs):
        if method == "view_as_real":
            from ._ops import view_as_real

            return view_as_real(input).clone()
        if method == "alias":
            return input.view(tuple(input.shape)).clone()
        return getattr(input, method)(*args, **kwargs).clone()

    f.__name__ = f.__qualname__ = name
    x = "tp.ones(2, 2, dtype=tp.complex64)" if method == "view_as_real" else "tp.arange(4.0).reshape(2, 2)"
    f.__doc__ = (f"`input.{method}(...)` as a new tensor (no view).\n\nExample:\n    >>> import tapeflow as tp\n"
                 f"    >>> x = {x}\n    >>> tp.{name}(x{args}).shape\n    tapeflow.Size({shape})\n")
    return f


for _name, (_method, _args, _shape) in _COPIES.items():
    globals()[_name] = _copy_function(_name, _method, _args, _shape)
    __all__.append(_name)
del _name, _method, _args, _shape


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """`input[..., start:end:step]` along `dim`, as a new tensor.

    Example:
        >>> import tapeflow as tp
        >>> tp.slice_copy(tp.arange(6.0).reshape(2, 3), 1, 0, 2)
        tensor([[0., 1.],
                [3., 4.]])
    """
    d = dim % builtins.max(input.ndim, 1)
    return input[(slice(None),) * d + (slice(start, end, step),)].clone()


def split_copy(input, split_size, dim=0):
    """`input.split(split_size, dim)`, each piece a new tensor.

    Example:
        >>> import tapeflow as tp
        >>> [p.tolist() for p in tp.split_copy(tp.arange(4), 2)]
        [[0, 1], [2, 3]]
    """
    return tuple(p.clone() for p in input.split(split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim=0):
    """`input.split_with_sizes(split_sizes, dim)`, each piece a new tensor.

    Example:
        >>> import tapeflow as tp
        >>> [p.tolist() for p in tp.split_with_sizes_copy(tp.arange(5), [2, 3])]
        [[0, 1], [2, 3, 4]]
    """
    return tuple(p.clone() for p in input.split_with_sizes(split_sizes, dim))


def unbind_copy(input, dim=0):
    """`input.unbind(dim)`, each slice a new tensor.

    Example:
        >>> import tapeflow as tp
        >>> [p.tolist() for p in tp.unbind_copy(tp.arange(4).reshape(2, 2))]
        [[0, 1], [2, 3]]
    """
    return tuple(p.clone() for p in input.unbind(dim))


def _attach() -> None:
    from ._tensor import Tensor

    Tensor.is_distributed = is_distributed


_attach()
