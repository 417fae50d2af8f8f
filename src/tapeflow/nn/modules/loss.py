"""Loss modules (thin wrappers over `tapeflow.nn.functional`)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
           "KLDivLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            from .._functional_losses import _reduction

            reduction = _reduction(reduction, size_average, reduce)
        self.reduction = reduction


class MSELoss(_Loss):
    """Mean squared error (`reduction`: "mean", "sum" or "none").

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MSELoss()(tp.zeros(2), tp.ones(2))
        tensor(1.)
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.L1Loss(reduction="sum")(tp.zeros(2), tp.ones(2))
        tensor(2.)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below `beta`, linear above.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.SmoothL1Loss()(tp.zeros(1), tp.ones(1) * 3)
        tensor(2.5000)
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below `delta`, linear (slope `delta`) above.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.HuberLoss()(tp.zeros(1), tp.ones(1) * 3)
        tensor(2.5000)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(None, None, reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits against class indices or class probabilities.

    Arguments:
        weight: per-class weights.
        ignore_index: index targets to skip.
        reduction: "mean" | "sum" | "none".
        label_smoothing: in [0, 1].

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.CrossEntropyLoss()(tp.zeros(2, 4), tp.tensor([0, 3]))
        tensor(1.3863)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices given log-probabilities.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.NLLLoss()(tp.tensor([[-1.0, -2.0]]), tp.tensor([0]))
        tensor(1.)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.BCELoss()(tp.tensor([0.5]), tp.tensor([1.0]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits (sigmoid inside, computed stably).

    Arguments:
        weight: per-element rescaling.
        reduction: "mean" | "sum" | "none".
        pos_weight: weight of positive examples (per class).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.BCEWithLogitsLoss()(tp.zeros(1), tp.ones(1))
        tensor(0.6931)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    """KL divergence with log-probability inputs (`reduction="batchmean"` for the true KL).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.KLDivLoss(reduction="batchmean")(tp.zeros(1, 2), tp.full((1, 2), 0.5))
        tensor(-0.6931)
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
