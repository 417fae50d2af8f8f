"""`Dropout`, the channel-wise `Dropout1d/2d/3d`, and `AlphaDropout`, `FeatureAlphaDropout`."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout(Module):
    """Randomly zero elements with probability `p` in training; the identity in `eval()`.

    Arguments:
        p: drop probability.
        inplace: write into the input.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.nn.Dropout(0.5).eval()
        >>> d(tp.ones(3))
        tensor([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zero whole channels of `(N, C, L)` or `(C, L)` with probability `p` in training.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Dropout1d(1.0)(tp.ones(1, 2, 3)).sum()
        tensor(0.)
    """

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """Zero whole channels of `(N, C, H, W)` or `(C, H, W)` with probability `p` in training.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Dropout2d(0.5).eval()(tp.ones(1, 2, 2, 2)).sum()
        tensor(8.)
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole channels of `(N, C, D, H, W)` or `(C, D, H, W)` with probability `p` in training.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Dropout3d(0.0)(tp.ones(1, 2, 1, 1, 1)).sum()
        tensor(2.)
    """

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Dropout that keeps SELU activations' mean and variance; see `functional.alpha_dropout`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.AlphaDropout(0.2).eval()(tp.ones(2))
        tensor([1., 1.])
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """`AlphaDropout` of whole channels; see `functional.feature_alpha_dropout`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.FeatureAlphaDropout(0.2).eval()(tp.ones(1, 2))
        tensor([[1., 1.]])
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
