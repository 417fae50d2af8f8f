"""Invertible elementwise transforms (PyTorch's `torch.distributions.transforms`): `ExpTransform`,
`AffineTransform`, `SigmoidTransform`, `AbsTransform`, each with its inverse (`.inv`) and the log of its
Jacobian's absolute determinant, for `TransformedDistribution`."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._factories import full_like
from ..nn.functional import softplus
from . import constraints

__all__ = ["Transform", "ExpTransform", "AffineTransform", "SigmoidTransform", "AbsTransform"]


class Transform:
    """An invertible map `y = t(x)` with `t.inv(y)`, `t.sign` (of its derivative, for monotone maps) and
    `t.log_abs_det_jacobian(x, y)`; `domain` and `codomain` are constraints.

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.ExpTransform()
        >>> t.inv(t(tp.tensor([0.5]))), t.log_abs_det_jacobian(tp.tensor([0.5]), None)
        (tensor([0.5000]), tensor([0.5000]))
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real
    sign = 1

    @property
    def event_dim(self) -> int:
        return self.domain.event_dim

    @property
    def inv(self) -> Transform:
        return _InverseTransform(self)

    def __call__(self, x):
        return self._call(x)

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform: Transform):
        self._inv = transform

    @property
    def inv(self) -> Transform:
        return self._inv

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    def __call__(self, x):
        return self._inv._inverse(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def __eq__(self, other) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"


class ExpTransform(Transform):
    """`y = exp(x)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.ExpTransform()(tp.tensor([0.0]))
        tensor([1.])
    """

    bijective = True
    codomain = constraints.positive

    def __eq__(self, other) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class AffineTransform(Transform):
    """`y = loc + scale * x` (elementwise; `event_dim` rightmost dimensions count as one event).

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.AffineTransform(1.0, 2.0)
        >>> t(tp.tensor([1.0])), t.inv(tp.tensor([3.0]))
        (tensor([3.]), tensor([1.]))
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0):
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                     self._event_dim)

    codomain = domain

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


class SigmoidTransform(Transform):
    """`y = sigmoid(x)`, clamped inside `[tiny, 1 - eps]` as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.SigmoidTransform()(tp.tensor([0.0]))
        tensor([0.5000])
    """

    bijective = True
    codomain = constraints.unit_interval

    def __eq__(self, other) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        f = np.finfo(x.dtype.jax)
        return x.sigmoid().clamp(min=float(f.tiny), max=1.0 - float(f.eps))

    def _inverse(self, y):
        f = np.finfo(y.dtype.jax)
        y = y.clamp(min=float(f.tiny), max=1.0 - float(f.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class AbsTransform(Transform):
    """`y = |x|` (not invertible: `inv` picks the non-negative root).

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.AbsTransform()(tp.tensor([-2.0]))
        tensor([2.])
    """

    codomain = constraints.nonnegative

    def __eq__(self, other) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y
