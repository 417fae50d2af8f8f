"""`Linear`, `Identity`, `Bilinear`, `LazyLinear`."""

from __future__ import annotations

import math

from ..._factories import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Linear", "Identity", "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear"]


def reset_weight_and_bias(weight: Parameter, bias: Parameter | None) -> None:
    """PyTorch's default for `Linear` and the convolutions: Kaiming-uniform weight (`a=sqrt(5)`), bias
    U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Identity()(tp.ones(2))
        tensor([1., 1.])
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """`y = x @ W.T + b`, with PyTorch's default initialisation.

    Arguments:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: learn an additive bias (default True).
        device, dtype: of the parameters.

    Attributes:
        weight: `(out_features, in_features)`, Kaiming-uniform with `a=sqrt(5)`.
        bias: `(out_features,)`, U(-1/sqrt(in_features), 1/sqrt(in_features)).

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.Linear(3, 2)
        >>> m(tp.ones(4, 3)).shape
        tapeflow.Size([4, 2])
        >>> m
        Linear(in_features=3, out_features=2, bias=True)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weights with the default initialisation."""
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """`Linear` under the name PyTorch gives `MultiheadAttention`'s output projection (which its dynamic
    quantisation leaves alone); it computes exactly as `Linear`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.MultiheadAttention(4, 2).out_proj
        NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """


class Bilinear(Module):
    """`y = x1^T A x2 + b` for each output feature; see `functional.bilinear`.

    Arguments:
        in1_features, in2_features, out_features: the sizes.
        bias: learn an additive bias.

    Attributes:
        weight: `(out_features, in1_features, in2_features)`, U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
        bias: `(out_features,)`, same distribution.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.Bilinear(3, 4, 5)(tp.ones(2, 3), tp.ones(2, 4)).shape
        tapeflow.Size([2, 5])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Linear):
    """A `Linear` whose `in_features` is read from the first input.

    Until then `weight` and `bias` are empty placeholders (registered, so an optimizer built now keeps
    them); the first call fills them in place with the default initialisation and the module becomes a
    `Linear`.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.LazyLinear(2)
        >>> m(tp.ones(5, 3)).shape
        tapeflow.Size([5, 2])
        >>> m
        Linear(in_features=3, out_features=2, bias=True)
    """

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self._factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(empty(0, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(0, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """Re-draw the weights (once `in_features` is known)."""
        if self.in_features:
            super().reset_parameters()

    def forward(self, input):
        if not self.in_features:
            from ...autograd.grad_mode import no_grad

            self.in_features = input.shape[-1]
            with no_grad():
                self.weight.data = empty(self.out_features, self.in_features, **self._factory)
                if self.bias is not None:
                    self.bias.data = empty(self.out_features, **self._factory)
            super().reset_parameters()
            del self._factory
            self.__class__ = Linear
        return F.linear(input, self.weight, self.bias)
