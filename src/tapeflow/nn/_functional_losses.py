"""Loss functions of `tapeflow.nn.functional` (one fused op each)."""

from __future__ import annotations

import warnings

import xla_ops as X

from .. import _dtype, _ops
from .._dispatch import dispatch
from .._ops._checks import check_indices, outside
from .._state import state
from .._tensor import Tensor
from ..amp import full_precision, refuse_bce

__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div"]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction, size_average=None, reduce=None) -> str:
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _same_shape(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                      f"in {name}. This will likely lead to incorrect results due to broadcasting. Please ensure "
                      "they have the same size.", stacklevel=3)


def _class_checks(input, target, weight, name: str) -> None:
    """PyTorch's checks of class-index targets, in its order (`nll_loss_nd`: the 1-D/2-D kernel, the spatial
    kernel for 4-D inputs, and 3-D or 5-D and more inputs, which it reshapes to 4-D)."""
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"{name}: input and target must be Tensors")
    nd = input.ndim
    if nd == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if nd != 1 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")
    c = input.shape[1] if nd > 1 else input.shape[0]
    if nd <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 1 and target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    elif nd == 4 and target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.ndim}")
    elif nd != 4 and tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0], *input.shape[2:]]}, got {list(target.shape)}")
    s = _dtype.SCALAR_NAMES
    if target.dtype.name not in ("int64", "uint8"):
        hint = ""
        if target.dtype.is_floating_point:  # (PyTorch's words, then what was probably meant)
            hint = (f": {name} reads a float target as class probabilities only when it has the input's shape "
                    f"{list(input.shape)} (this one has shape {list(target.shape)}); for class indices pass "
                    "`target.long()`" if name == "cross_entropy" else
                    f": {name} takes class indices; pass `target.long()`")
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {s[target.dtype.name]}{hint}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}" if nd <= 2 else
                           "weight tensor should be defined either for all or no classes")
    if nd == 4 and tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    if weight is not None and weight._raw.dtype != input._raw.dtype:
        raise RuntimeError(f"expected scalar type {s[input.dtype.name]} but found {s[weight.dtype.name]}")


def _probability_checks(input, target, weight, ignore_index, label_smoothing) -> None:
    """PyTorch's checks of a cross_entropy target of the input's shape (class probabilities), in its order."""
    if not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_dtype.SCALAR_NAMES[target.dtype.name]}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    _check_smoothing(label_smoothing)
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {c} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")


def _check_smoothing(label_smoothing) -> None:
    if not 0.0 <= label_smoothing <= 1.0:  # (a C++ double printed as PyTorch prints it: 2, 0.5, 1e+10)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {float(label_smoothing):g}")


def _check_targets(input, target, ignore_index) -> None:
    """Class indices must name a class (or be `ignore_index`): a wrong one would silently count as 0."""
    c = input.shape[1] if input.ndim >= 2 else input.shape[0]
    check_indices(target, c, lambda v: IndexError(f"Target {v} is out of bounds."), negative=False,
                  ignore=int(ignore_index))


def not_differentiable(kernel: str, **inputs) -> None:
    """PyTorch's refusal, with grad mode on, of a tensor that requires grad where its kernel has no derivative
    (a loss's class weights): tapeflow would differentiate it, PyTorch cannot."""
    if state.grad_enabled:
        for name, t in inputs.items():
            if isinstance(t, Tensor) and t.requires_grad:
                raise RuntimeError(f"The function '{kernel}' is not differentiable with respect to argument "
                                   f"'{name}'. This input cannot have requires_grad True.")


def _one_target(input, target):
    """The class of a 1-D input (one sample's scores) may come as a one-element 1-D target (as in PyTorch)."""
    return target.reshape(()) if input.ndim == 1 and target.ndim == 1 else target


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0) -> Tensor:
    """Cross-entropy between logits and class indices or class probabilities (one fused op).

    Arguments:
        input: logits `(N, C)`, `(N, C, d1, ...)` or `(C,)`.
        target: class indices (integer, input's shape without C) or probabilities (input's shape).
        weight: per-class weights `(C,)`.
        ignore_index: index targets equal to this contribute nothing (and do not count in the mean).
        reduction: "none" | "mean" | "sum".
        label_smoothing: in [0, 1].

    Returns:
        The loss (a scalar unless reduction="none").

    Example:
        >>> import tapeflow as tp
        >>> F = tp.nn.functional
        >>> F.cross_entropy(tp.zeros(2, 4), tp.tensor([1, 3]))
        tensor(1.3863)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError("cross_entropy: input and target must be Tensors")
    probs = input.ndim > 0 and tuple(target.shape) == tuple(input.shape)  # (PyTorch decides by shape alone)
    if probs:
        _probability_checks(input, target, weight, ignore_index, label_smoothing)
    else:
        if label_smoothing > 0.0:
            _check_smoothing(label_smoothing)
        _class_checks(input, target, weight, "cross_entropy")
        target = _one_target(input, target)
    if not probs:
        _check_targets(input, target, ignore_index)
        not_differentiable("nll_loss_forward", weight=weight)
    elif target._raw.dtype != input._raw.dtype:  # (probabilities: PyTorch's composite formula promotes)
        from .._toplevel import result_type

        common = result_type(input, target)
        input, target = input.to(common), target.to(common)
    params = (("ignore_index", int(ignore_index)), ("reduction", reduction),
              ("label_smoothing", float(label_smoothing)), ("probs", probs))
    return dispatch(X.nn.cross_entropy, (input, target, weight), params)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean") -> Tensor:
    """Negative log-likelihood of class indices under log-probabilities `input`.

    Arguments:
        input: log-probabilities `(N, C)`, `(N, C, d1, ...)` or `(C,)`.
        target: integer class indices.
        weight: per-class weights `(C,)`.
        ignore_index: targets equal to this are skipped.
        reduction: "none" | "mean" | "sum".

    Returns:
        The loss.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.nll_loss(tp.tensor([[-1.0, -2.0]]), tp.tensor([1]))
        tensor(2.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _class_checks(input, target, weight, "nll_loss")
    target = _one_target(input, target)
    _check_targets(input, target, ignore_index)
    not_differentiable("nll_loss_forward", weight=weight)
    return dispatch(X.nn.nll_loss, (input, target, weight),
                    (("ignore_index", int(ignore_index)), ("reduction", reduction)))


def _pointwise(op, input, target, name, params):
    _same_shape(input, target, name)
    return dispatch(op, (input, target), params)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Mean squared error. Example: `F.mse_loss(tp.zeros(2), tp.ones(2))` is `tensor(1.)`.

    Example:
        >>> import tapeflow as tp
        >>> p = tp.tensor([0.5, 2.0, -1.0])
        >>> t = tp.tensor([1.0, 1.0, 1.0])
        >>> tp.nn.functional.mse_loss(p, t)
        tensor(1.7500)
    """
    return _pointwise(X.nn.mse_loss, input, target, "mse_loss",
                      (("reduction", _reduction(reduction, size_average, reduce)),))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Mean absolute error. Example: `F.l1_loss(tp.zeros(2), tp.ones(2))` is `tensor(1.)`.

    Example:
        >>> import tapeflow as tp
        >>> p = tp.tensor([0.5, 2.0, -1.0])
        >>> t = tp.tensor([1.0, 1.0, 1.0])
        >>> tp.nn.functional.l1_loss(p, t, reduction='sum')
        tensor(3.5000)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if isinstance(input, Tensor) and isinstance(target, Tensor):
        kinds = {input._raw.dtype.kind, target._raw.dtype.kind}
        if "c" in kinds:  # PyTorch's composite: |input - target| is real
            _same_shape(input, target, "l1_loss")
            d = _ops.abs(input - target)
            return d if reduction == "none" else d.sum() if reduction == "sum" else d.mean()
        if kinds <= set("biu") and reduction == "mean":
            from .._toplevel import result_type

            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {_dtype.SCALAR_NAMES[result_type(input, target).name]}")
    return _pointwise(X.nn.l1_loss, input, target, "l1_loss", (("reduction", reduction),))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0) -> Tensor:
    """Huber-like loss: quadratic below `beta`, linear above.

    Example: `F.smooth_l1_loss(tp.zeros(1), tp.ones(1) * 3)` is `tensor(2.5000)`.

    Example:
        >>> import tapeflow as tp
        >>> p = tp.tensor([0.5, 2.0, -1.0])
        >>> t = tp.tensor([1.0, 1.0, 1.0])
        >>> tp.nn.functional.smooth_l1_loss(p, t)
        tensor(0.7083)
    """
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _pointwise(X.nn.smooth_l1_loss, input, target, "smooth_l1_loss",
                      (("reduction", _reduction(reduction, size_average, reduce)), ("beta", float(beta))))


@full_precision
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None) -> Tensor:
    """Quadratic below `delta`, linear (slope `delta`) above: `smooth_l1_loss` scaled by `delta`.

    Example: `F.huber_loss(tp.zeros(1), tp.ones(1) * 3)` is `tensor(2.5000)`.

    Example:
        >>> import tapeflow as tp
        >>> p = tp.tensor([0.5, 2.0, -1.0])
        >>> t = tp.tensor([1.0, 1.0, 1.0])
        >>> tp.nn.functional.huber_loss(p, t, delta=0.5)
        tensor(0.4583)
    """
    if weight is not None:
        raise RuntimeError("huber_loss: weight is not supported yet; multiply an unreduced loss instead")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    out = _pointwise(X.nn.huber_loss, input, target, "huber_loss",
                     (("reduction", _reduction(reduction, None, None)), ("delta", float(delta))))
    return out if out.dtype == input.dtype else out.to(input.dtype)  # (PyTorch writes into a tensor like input)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Binary cross-entropy between probabilities `input` and `target` (logs clamped at -100).

    Example: `F.binary_cross_entropy(tp.tensor([0.5]), tp.tensor([1.0]))` is `tensor(0.6931)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.binary_cross_entropy(tp.tensor([0.9, 0.2]), tp.tensor([1.0, 0.0]))
        tensor(0.1643)
    """
    refuse_bce()
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target._raw.dtype != input._raw.dtype:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"Found dtype {s[target.dtype.name]} but expected {s[input.dtype.name]}")
    # PyTorch checks both ranges (a log of a value outside [0, 1] would be NaN or a silently clamped -100); one
    # small read each, skipped on traced values.
    for name, t in (("input", input), ("target", target)):
        if isinstance(t, Tensor) and t.dtype.is_floating_point and outside(t, 0.0, 1.0):
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    not_differentiable("binary_cross_entropy", weight=weight)
    return dispatch(X.nn.binary_cross_entropy, (input, target, weight),
                    (("reduction", _reduction(reduction, size_average, reduce)),))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None) -> Tensor:
    """`binary_cross_entropy(sigmoid(input), target)`, computed stably.

    Example: `F.binary_cross_entropy_with_logits(tp.zeros(1), tp.ones(1))` is `tensor(0.6931)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.binary_cross_entropy_with_logits(tp.tensor([2.0, -1.0]), tp.tensor([1.0, 0.0]))
        tensor(0.2201)
    """
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return dispatch(X.nn.binary_cross_entropy_with_logits, (input, target, weight, pos_weight),
                    (("reduction", _reduction(reduction, size_average, reduce)),))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False) -> Tensor:
    """Kullback-Leibler divergence with `input` given as log-probabilities.

    `reduction="batchmean"` divides the sum by the batch size (the mathematically correct KL).

    Example: `F.kl_div(tp.tensor([0.0]), tp.tensor([1.0]), reduction="sum")` is `tensor(0.)`.

    Example:
        >>> import tapeflow as tp
        >>> logq = tp.tensor([0.25, 0.75]).log()
        >>> tp.nn.functional.kl_div(logq, tp.tensor([0.5, 0.5]), reduction='batchmean')
        tensor(0.0719)
    """
    for t in (input, target):
        if isinstance(t, Tensor) and t.dtype.name != "bfloat16" and t._raw.dtype.kind in "biuc":
            raise RuntimeError(f"kl_div: {'Complex' if t._raw.dtype.kind == 'c' else 'Integral'} inputs not supported.")
    if reduction != "batchmean":
        reduction = _reduction(reduction, size_average, reduce)
    return _pointwise(X.nn.kl_div, input, target, "kl_div",
                      (("reduction", reduction), ("log_target", bool(log_target))))
