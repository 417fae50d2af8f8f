"""`PairwiseDistance` and `CosineSimilarity`."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The `p`-norm of `x1 - x2 + eps` over the last dimension; see `functional.pairwise_distance`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.PairwiseDistance(eps=0.0)(tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]))
        tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity along `dim`, each norm clamped at `eps`; see `functional.cosine_similarity`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.CosineSimilarity(dim=0)(tp.tensor([1.0, 0.0]), tp.tensor([1.0, 1.0]))
        tensor(0.7071)
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
