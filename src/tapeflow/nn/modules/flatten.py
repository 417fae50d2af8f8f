"""`Flatten`."""

from __future__ import annotations

from .module import Module

__all__ = ["Flatten"]


class Flatten(Module):
    """Flatten dimensions `start_dim..end_dim` into one (by default all but the batch dimension).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Flatten()(tp.ones(2, 3, 4)).shape
        tapeflow.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
