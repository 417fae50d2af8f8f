"""Loss modules (thin wrappers over `tapeflow.nn.functional`)."""

from __future__ import annotations

import warnings

from .. import functional as F
from .module import Module

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss",
           "KLDivLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "MultiLabelMarginLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"]


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


class MarginRankingLoss(_Loss):
    """`max(0, -y * (x1 - x2) + margin)`; see `functional.margin_ranking_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MarginRankingLoss(margin=0.5)(tp.tensor([1.0]), tp.tensor([0.8]), tp.tensor([1.0]))
        tensor(0.3000)
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """`x` for target 1, `max(0, margin - x)` for target -1; see `functional.hinge_embedding_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.HingeEmbeddingLoss()(tp.tensor([0.3, 0.4]), tp.tensor([1.0, -1.0]))
        tensor(0.4500)
    """

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """`log(1 + exp(-y * x))`; see `functional.soft_margin_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.SoftMarginLoss()(tp.tensor([0.0]), tp.tensor([1.0]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over classes; see `functional.multilabel_soft_margin_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MultiLabelSoftMarginLoss()(tp.zeros(1, 2), tp.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss; see `functional.multi_margin_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MultiMarginLoss()(tp.tensor([[0.1, 0.2, 0.4, 0.8]]), tp.tensor([3]))
        tensor(0.3250)
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D instead")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss with -1-padded class-index targets; see `functional.multilabel_margin_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MultiLabelMarginLoss()(tp.tensor([[0.1, 0.2, 0.4, 0.8]]), tp.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """`1 - cos` for target 1, `max(0, cos - margin)` for -1; see `functional.cosine_embedding_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.CosineEmbeddingLoss()(tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 1.0]]), tp.tensor([1.0]))
        tensor(1.)
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """`max(0, d(a, p) - d(a, n) + margin)`; see `functional.triplet_margin_loss`.

    Example:
        >>> import tapeflow as tp
        >>> a, p, n = tp.tensor([[0.0, 0.0]]), tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 1.5]])
        >>> tp.nn.TripletMarginLoss(eps=0.0)(a, p, n)
        tensor(0.5000)
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any distance function; see `functional.triplet_margin_with_distance_loss`.

    Example:
        >>> import tapeflow as tp
        >>> a, p, n = tp.tensor([[0.0, 0.0]]), tp.tensor([[1.0, 0.0]]), tp.tensor([[0.0, 1.5]])
        >>> tp.nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: (x - y).abs().sum(-1))(a, p, n)
        tensor(0.5000)
    """

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean"):
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """The deprecated name of `NLLLoss` (with PyTorch's FutureWarning).

    Example:
        >>> import warnings, tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.nn.NLLLoss2d()(tp.tensor([[-1.0, -2.0]]), tp.tensor([0]))
        tensor(1.)
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning,
                      stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood; see `functional.poisson_nll_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.PoissonNLLLoss()(tp.tensor([0.0]), tp.tensor([1.0]))
        tensor(1.)
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood with a predicted variance; see `functional.gaussian_nll_loss`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.GaussianNLLLoss()(tp.tensor([0.0]), tp.tensor([1.0]), tp.tensor([1.0]))
        tensor(0.5000)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss; see `functional.ctc_loss`.

    Example:
        >>> import tapeflow as tp
        >>> log_probs = tp.zeros(3, 1, 2).log_softmax(2)
        >>> tp.nn.CTCLoss(reduction="sum")(log_probs, tp.tensor([[1]]), tp.tensor([3]), tp.tensor([1]))
        tensor(0.2877)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(None, None, reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=self.blank,
                          reduction=self.reduction, zero_infinity=self.zero_infinity)
