"""Activation modules: `ReLU GELU SiLU Tanh Sigmoid Softmax LogSoftmax LeakyReLU ELU`, and the
pointwise ones that only store options for a `functional` call (`Hardtanh ReLU6 CELU ...`)."""

from __future__ import annotations

from ..._factories import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "LeakyReLU", "ELU", "Hardtanh",
           "ReLU6", "Hardsigmoid", "Hardswish", "Softshrink", "Hardshrink", "Threshold", "CELU", "SELU", "Mish",
           "Softsign", "Tanhshrink", "LogSigmoid", "Softplus", "GLU", "PReLU", "RReLU", "Softmin", "Softmax2d"]


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


class _Pointwise(Module):
    """A module that calls `functional.<_fn>(input, *options)`; `_options` names the stored options in order."""

    _fn = ""
    _options: tuple = ()

    def forward(self, input):
        return getattr(F, self._fn)(input, *(getattr(self, name) for name in self._options))

    def extra_repr(self) -> str:
        return ", ".join(f"{n}={getattr(self, n)}" for n in self._options if n != "inplace" or self.inplace)


class Hardtanh(_Pointwise):
    """`x` clipped to `[min_val, max_val]` (no gradient at the bounds).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Hardtanh()(tp.tensor([-2.0, 0.5]))
        tensor([-1.0000,  0.5000])
    """

    _fn, _options = "hardtanh", ("min_val", "max_val", "inplace")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace


class ReLU6(_Pointwise):
    """`min(max(x, 0), 6)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.ReLU6()(tp.tensor([-1.0, 7.0]))
        tensor([0., 6.])
    """

    _fn, _options = "relu6", ("inplace",)

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(ReLU6):
    """`relu6(x + 3) / 6`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Hardsigmoid()(tp.zeros(1))
        tensor([0.5000])
    """

    _fn = "hardsigmoid"


class Hardswish(ReLU6):
    """`x * relu6(x + 3) / 6`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Hardswish()(tp.tensor([3.0]))
        tensor([3.])
    """

    _fn = "hardswish"


class SELU(ReLU6):
    """Scaled ELU with the self-normalising constants.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.SELU()(tp.zeros(1))
        tensor([0.])
    """

    _fn = "selu"


class Mish(ReLU6):
    """`x * tanh(softplus(x))`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Mish()(tp.zeros(1))
        tensor([0.])
    """

    _fn = "mish"


class Softshrink(_Pointwise):
    """Shrink towards 0 by `lambd`; 0 inside `[-lambd, lambd]`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Softshrink()(tp.tensor([1.0, 0.2]))
        tensor([0.5000, 0.0000])
    """

    _fn, _options = "softshrink", ("lambd",)

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd


class Hardshrink(Softshrink):
    """`x` where `|x| > lambd`, else 0.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Hardshrink()(tp.tensor([1.0, 0.2]))
        tensor([1., 0.])
    """

    _fn = "hardshrink"


class Threshold(_Pointwise):
    """`x` where `x > threshold`, else `value`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Threshold(1.0, -1.0)(tp.tensor([0.5, 2.0]))
        tensor([-1.,  2.])
    """

    _fn, _options = "threshold", ("threshold", "value", "inplace")

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace


class CELU(_Pointwise):
    """`x` for x > 0, else `alpha * (exp(x / alpha) - 1)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.CELU()(tp.zeros(1))
        tensor([0.])
    """

    _fn, _options = "celu", ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class Softplus(_Pointwise):
    """`log(1 + exp(beta x)) / beta`, linear above `threshold`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Softplus()(tp.zeros(1))
        tensor([0.6931])
    """

    _fn, _options = "softplus", ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold


class Softsign(_Pointwise):
    """`x / (1 + |x|)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Softsign()(tp.tensor([1.0]))
        tensor([0.5000])
    """

    _fn = "softsign"


class Tanhshrink(_Pointwise):
    """`x - tanh(x)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Tanhshrink()(tp.zeros(1))
        tensor([0.])
    """

    _fn = "tanhshrink"


class LogSigmoid(_Pointwise):
    """`log(sigmoid(x))`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LogSigmoid()(tp.zeros(1))
        tensor([-0.6931])
    """

    _fn = "logsigmoid"


class GLU(Module):
    """Gated linear unit along `dim`: first half times the sigmoid of the second.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.GLU()(tp.tensor([[1.0, 2.0, 0.0, 0.0]]))
        tensor([[0.5000, 1.0000]])
    """

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """Leaky ReLU with a learned negative slope: one (`num_parameters=1`) or one per channel.

    Arguments:
        num_parameters: 1 or the number of channels (dimension 1 of the input).
        init: the slopes' initial value.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.PReLU()
        >>> m(tp.tensor([-2.0, 1.0]))
        tensor([-0.5000,  1.0000], grad_fn=<WhereBackward0>)
        >>> m.weight.shape
        tapeflow.Size([1])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set every slope to `init`."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU (slopes drawn from `U(lower, upper)` in training, their mean in `eval()`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.RReLU(0.1, 0.3).eval()(tp.tensor([-3.0, 2.0]))
        tensor([-0.6000,  2.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{', inplace=True' if self.inplace else ''}"


class Softmin(Module):
    """`softmax(-x)` along `dim`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Softmin(dim=0)(tp.tensor([1.0, 2.0]))
        tensor([0.7311, 0.2689])
    """

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels of `(N, C, H, W)` or `(C, H, W)` (dimension -3).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Softmax2d()(tp.zeros(2, 1, 1)).flatten()
        tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
