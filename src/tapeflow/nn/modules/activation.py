"""Activation modules: `ReLU GELU SiLU Tanh Sigmoid Softmax LogSoftmax LeakyReLU ELU`."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "LeakyReLU", "ELU"]


class ReLU(Module):
    """`max(x, 0)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ReLU()(tp.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit (`approximate="none"` or `"tanh"`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.GELU()(tp.zeros(1))
        tensor([0.])
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """`x * sigmoid(x)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.SiLU()(tp.zeros(1))
        tensor([0.])
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, self.inplace)


class Tanh(Module):
    """Elementwise tanh.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Tanh()(tp.zeros(1))
        tensor([0.])
    """

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """Elementwise logistic sigmoid.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Sigmoid()(tp.zeros(1))
        tensor([0.5000])
    """

    def forward(self, input):
        return F.sigmoid(input)


class Softmax(Module):
    """Softmax along `dim`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Softmax(dim=-1)(tp.zeros(2))
        tensor([0.5000, 0.5000])
    """

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along `dim`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LogSoftmax(dim=-1)(tp.zeros(2)).shape
        tapeflow.Size([2])
    """

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LeakyReLU(Module):
    """`x` for x > 0, else `negative_slope * x`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LeakyReLU(0.1)(tp.tensor([-1.0]))
        tensor([-0.1000])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """`x` for x > 0, else `alpha * (exp(x) - 1)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ELU()(tp.zeros(1))
        tensor([0.])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")
