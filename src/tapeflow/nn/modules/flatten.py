"""`Flatten`, `Unflatten`."""

from __future__ import annotations

from .module import Module

__all__ = ["Flatten", "Unflatten"]


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


class Unflatten(Module):
    """Split dimension `dim` into `unflattened_size` (the inverse of `Flatten`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Unflatten(1, (2, 3))(tp.ones(4, 6)).shape
        tapeflow.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
