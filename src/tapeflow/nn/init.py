"""`tapeflow.nn.init`: in-place parameter initialisations (PyTorch's formulas and defaults).

All draw from the global generator (or `generator=`) and write in place under
`no_grad`, so they work on parameters that require grad. Their draws come from PyTorch's CPU stream
whatever the tensor's device, as a PyTorch model is initialised on the CPU before it is moved.
"""

from __future__ import annotations

import math
import warnings

from .. import linalg
from .._factories import empty_like, eye, initialisation, randn, randperm
from .._ops.elementwise import where
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_", "orthogonal_", "dirac_", "eye_",
           "sparse_", "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform",
           "kaiming_normal", "orthogonal", "dirac"]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (as in PyTorch).

    Arguments:
        nonlinearity: "linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu", ...
        param: the negative slope for "leaky_relu" (default 0.01).

    Returns:
        The gain.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.init.calculate_gain("relu")
        1.4142135623730951
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


_calculate_fan_in_and_fan_out = _fans


@initialisation
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b) samples, in place.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.empty(3, 5)
        >>> _ = tp.nn.init.uniform_(w, a=-0.1, b=0.1)
        >>> bool((w.abs() <= 0.1).all())
        True
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


@initialisation
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2) samples, in place.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.empty(3, 5)
        >>> tp.nn.init.normal_(w, std=0.02).shape
        tapeflow.Size([3, 5])
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


@initialisation
def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """Fill with N(mean, std^2) samples truncated to [a, b], in place, drawn as PyTorch 2.13 draws them:
    when [a, b] holds more than 30% of the mass, normal draws with the ones outside redrawn until none are;
    otherwise uniform draws on [a, b] accepted with probability pdf / pdf(mode), the rejected ones redrawn.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.empty(3, 5)
        >>> bool((tp.nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5).abs() <= 0.5).all())
        True
    """
    if tensor.is_meta:
        return tensor

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    with no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            lo, hi = (tensor.new_tensor(v).item() for v in (a, b))  # (the bounds as the tensor's dtype holds them)
            out = tensor.normal_(mean, std, generator=generator)
            outside = (out < lo) | (out > hi)
            while outside.any():
                out = where(outside, empty_like(out).normal_(mean, std, generator=generator), out)
                outside = (out < lo) | (out > hi)
            return tensor.copy_(out) if out is not tensor else tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def log_ratio(x):  # log(pdf(x) / pdf(mode)), as PyTorch forms it
            return (x - mean).div(std).pow(2).mul(-0.5).sub(log_peak)

        out = tensor.uniform_(a, b, generator=generator)
        pending = empty_like(out).uniform_(generator=generator).log().gt(log_ratio(out))
        while pending.any():
            candidates = empty_like(out).uniform_(a, b, generator=generator)
            out = where(pending, candidates, out)
            pending = where(pending, empty_like(out).uniform_(generator=generator).log().gt(log_ratio(candidates)),
                               pending)
        return tensor.copy_(out) if out is not tensor else tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`, in place.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.init.constant_(tp.empty(2), 0.3)
        tensor([0.3000, 0.3000])
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones, in place.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.init.ones_(tp.empty(2))
        tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros, in place.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.init.zeros_(tp.empty(2))
        tensor([0., 0.])
    """
    with no_grad():
        return tensor.zero_()


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a) with `a = gain * sqrt(6 / (fan_in + fan_out))`.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.empty(3, 5)
        >>> bound = (6 / (3 + 5)) ** 0.5
        >>> bool((tp.nn.init.xavier_uniform_(w).abs() <= bound).all())
        True
    """
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std^2) with `std = gain * sqrt(2 / (fan_in + fan_out))`.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.empty(3, 5)
        >>> tp.nn.init.xavier_normal_(w, gain=2.0).shape
        tapeflow.Size([3, 5])
    """
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    """He uniform: U(-b, b) with `b = gain * sqrt(3 / fan)`. Linear and Conv use `a=sqrt(5)`.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.empty(3, 5)
        >>> bound = (6 / 5) ** 0.5  # gain sqrt(2) for relu, fan_in 5
        >>> bool((tp.nn.init.kaiming_uniform_(w, nonlinearity='relu').abs() <= bound).all())
        True
    """
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    """He normal: N(0, std^2) with `std = gain / sqrt(fan)`.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.empty(3, 5)
        >>> tp.nn.init.kaiming_normal_(w, mode='fan_out').shape
        tapeflow.Size([3, 5])
    """
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


@initialisation
def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (rows or columns orthonormal, times `gain`), in place; dimensions
    after the first are flattened.

    Example:
        >>> import tapeflow as tp
        >>> q = tp.nn.init.orthogonal_(tp.empty(3, 3))
        >>> tp.allclose(q @ q.T, tp.eye(3), atol=1e-5)
        True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor

    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = randn(rows, cols, generator=generator, dtype=tensor.dtype)
    if rows < cols:
        flat = flat.t()
    q, r = linalg.qr(flat)
    q = q * r.diagonal().sign()  # unique up to signs: make the decomposition's diagonal positive
    if rows < cols:
        q = q.t()
    with no_grad():
        return tensor.copy_(q.reshape(tensor.shape) * gain)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a convolution weight so that the convolution is the identity (per group), in place.

    Example:
        >>> import tapeflow as tp
        >>> k = tp.nn.init.dirac_(tp.empty(2, 2, 3))
        >>> k[0, 0], k[1, 1]
        (tensor([0., 1., 0.]), tensor([0., 1., 0.]))
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    centre = tuple(k // 2 for k in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_per_group, tensor.shape[1])):
                tensor[(g * out_per_group + d, d, *centre)] = 1
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """Fill a matrix with the identity, in place.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.init.eye_(tp.empty(2, 3))
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))


@initialisation
def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill a matrix with N(0, std^2) values, then zero a `sparsity` fraction of each column, in place.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.init.sparse_(tp.empty(4, 3), sparsity=0.5)
        >>> (w == 0).sum(0)
        tensor([2, 2, 2])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for c in range(cols):
            tensor[randperm(rows, generator=generator)[:zeros], c] = 0
    return tensor


_EXAMPLE_ARGS = {"constant_": "tp.empty(2, 2), 0.5", "dirac_": "tp.empty(2, 2, 3)"}


def _deprecated(new):
    """PyTorch's deprecated initialiser names without the trailing underscore: they warn and call the new one."""
    old = new.__name__[:-1]

    def init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)
    args = _EXAMPLE_ARGS.get(new.__name__, "tp.empty(2, 2)")
    init.__name__ = init.__qualname__ = old
    init.__doc__ = (f"Deprecated name of `{new.__name__}` (it warns).\n\nExample:\n"
                    "    >>> import tapeflow as tp, warnings\n"
                    "    >>> with warnings.catch_warnings():\n"
                    "    ...     warnings.simplefilter('ignore')\n"
                    f"    ...     tp.nn.init.{old}({args}).dim() >= 2\n"
                    "    True\n")
    return init


uniform, normal, constant = _deprecated(uniform_), _deprecated(normal_), _deprecated(constant_)
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal, dirac = _deprecated(orthogonal_), _deprecated(dirac_)
