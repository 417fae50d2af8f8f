"""`Dropout`."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout"]


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
