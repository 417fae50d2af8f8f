"""The elementwise transforms (PyTorch's): `ExpTransform`, `PowerTransform`, `SigmoidTransform`,
`SoftplusTransform`, `TanhTransform`, `AbsTransform`, `AffineTransform` and `CumulativeDistributionTransform`.
Re-exported by `tapeflow.distributions.transforms`."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._factories import full_like
from .._tensor import Size
from ..nn.functional import softplus
from . import constraints
from .transforms import Transform
from .utils import broadcast_all

__all__ = ["ExpTransform", "PowerTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "AbsTransform",
           "AffineTransform", "CumulativeDistributionTransform"]


def _broadcast_shape(shape, *params):
    return Size(np.broadcast_shapes(tuple(shape), *(tuple(getattr(p, "shape", ())) for p in params)))


class ExpTransform(Transform):
    """`y = exp(x)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.ExpTransform()(tp.tensor([0.0]))
        tensor([1.])
    """

    bijective = True
    codomain = constraints.positive
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """`y = x ** exponent` on the positive reals.

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.PowerTransform(tp.tensor(2.0))
        >>> t(tp.tensor([3.0])), t.inv(tp.tensor([4.0]))
        (tensor([9.]), tensor([2.]))
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other) -> bool:
        return isinstance(other, PowerTransform) and bool((self.exponent == other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.exponent)

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    """`y = sigmoid(x)`, clamped inside `[tiny, 1 - eps]` as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.SigmoidTransform()(tp.tensor([0.0]))
        tensor([0.5000])
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        f = np.finfo(y.dtype.jax)
        y = y.clamp(min=float(f.tiny), max=1.0 - float(f.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


def _clipped_sigmoid(x):
    f = np.finfo(x.dtype.jax)
    return x.sigmoid().clamp(min=float(f.tiny), max=1.0 - float(f.eps))


class SoftplusTransform(Transform):
    """`y = log(1 + exp(x))` (linear above 20, as `softplus`).

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.SoftplusTransform()
        >>> t.inv(t(tp.tensor([-1.0, 2.0])))
        tensor([-1.,  2.])
    """

    bijective = True
    codomain = constraints.positive
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(Transform):
    """`y = tanh(x)`; the inverse is not clamped (use `cache_size=1` to get `x` back exactly near +-1).

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.TanhTransform()
        >>> t.log_abs_det_jacobian(tp.tensor([0.0]), None)
        tensor([0.])
    """

    bijective = True
    codomain = constraints.interval(-1.0, 1.0)
    sign = 1

    def __eq__(self, other) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written so that it stays finite for large |x|
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """`y = |x|` (not invertible: `inv` picks the non-negative root).

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.AbsTransform()(tp.tensor([-2.0]))
        tensor([2.])
    """

    codomain = constraints.positive

    def __eq__(self, other) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """`y = loc + scale * x` (elementwise; `event_dim` rightmost dimensions count as one event).

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.AffineTransform(1.0, 2.0)
        >>> t(tp.tensor([1.0])), t.inv(tp.tensor([3.0]))
        (tensor([3.]), tensor([1.]))
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                     self._event_dim)

    codomain = domain

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((a == b).all()):
                return False
        return True

    __hash__ = object.__hash__

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        if isinstance(self.scale, numbers.Real):
            result = full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(*result.shape[:result.ndim - self._event_dim], -1).sum(-1)
            return result.expand(*x.shape[:x.ndim - self._event_dim])
        return result.expand(*x.shape)

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.loc, self.scale)

    inverse_shape = forward_shape


class CumulativeDistributionTransform(Transform):
    """`y = distribution.cdf(x)`, onto the unit interval; its log-Jacobian is `distribution.log_prob(x)` (a
    Gaussian copula is a `MultivariateNormal` pushed through the standard normal's CDF).

    Example:
        >>> import tapeflow as tp
        >>> D = tp.distributions
        >>> t = D.transforms.CumulativeDistributionTransform(D.Normal(0.0, 1.0))
        >>> t(tp.tensor([0.0])), t.inv(tp.tensor([0.5]))
        (tensor([0.5000]), tensor([0.]))
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
