"""`Fold` and `Unfold`: sliding blocks to columns and back (im2col / col2im)."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """Extract sliding blocks: `(N, C, H, W)` -> `(N, C * prod(kernel_size), L)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Unfold(kernel_size=(2, 3))(tp.randn(2, 5, 3, 4)).shape
        tapeflow.Size([2, 30, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Sum sliding blocks back into `(N, C, *output_size)` (the adjoint of `Unfold`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Fold(output_size=(4, 5), kernel_size=(2, 2))(tp.randn(1, 12, 12)).shape
        tapeflow.Size([1, 3, 4, 5])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
