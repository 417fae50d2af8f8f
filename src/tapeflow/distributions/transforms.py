"""Invertible transforms (PyTorch's `torch.distributions.transforms`), each with its inverse (`.inv`), the log of
its Jacobian's absolute determinant and its `domain`/`codomain` constraints, for `TransformedDistribution` and
`biject_to`/`transform_to`. This module holds the base class and the ways of combining transforms (composition,
independence, reshaping); the elementwise maps live in `elementwise_transforms`, the maps that couple the
coordinates of an event (to the simplex, to triangular or positive-definite matrices, per slice) in
`event_transforms`, and both are re-exported here."""

from __future__ import annotations

import math

from .._factories import full_like, zeros
from .._tensor import Size
from . import constraints
from .independent import _sum_rightmost

__all__ = ["Transform", "ComposeTransform", "identity_transform", "IndependentTransform", "ReshapeTransform",
           "ExpTransform", "PowerTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "AbsTransform",
           "AffineTransform", "CumulativeDistributionTransform", "SoftmaxTransform", "StickBreakingTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "CorrCholeskyTransform", "CatTransform",
           "StackTransform"]


class Transform:
    """An invertible map `y = t(x)` with `t.inv(y)`, `t.sign` (of its derivative, for monotone maps) and
    `t.log_abs_det_jacobian(x, y)`; `domain` and `codomain` are constraints. With `cache_size=1` the last
    `(x, y)` pair is remembered, so that `t.inv(t(x))` returns `x` itself.

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.ExpTransform()
        >>> t.inv(t(tp.tensor([0.5]))), t.log_abs_det_jacobian(tp.tensor([0.5]), None)
        (tensor([0.5000]), tensor([0.5000]))
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size: int = 0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (`t.inv.inv is t`)."""
        inv = self.__dict__.get("_inv")
        if inv is None:
            inv = self._inv = _InverseTransform(self)
        return inv

    @property
    def sign(self):
        raise NotImplementedError(f"{type(self).__name__} has no sign (it is not a monotone elementwise map)")

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with a cache of `cache_size` (0 or 1) entries."""
        if getattr(self, "_cache_size", 0) == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __call__(self, x):
        if not getattr(self, "_cache_size", 0):
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if not getattr(self, "_cache_size", 0):
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        """The shape of `t(x)` for `x` of `shape`."""
        return shape

    def inverse_shape(self, shape):
        """The shape of `t.inv(y)` for `y` of `shape`."""
        return shape

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_inv", None)
        return state

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform: Transform):
        super().__init__(cache_size=getattr(transform, "_cache_size", 0))
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

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self._inv.with_cache(cache_size).inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"


class ComposeTransform(Transform):
    """`parts[-1](... parts[0](x))`; its event dimension is the largest any part needs, and the parts'
    log-Jacobians are summed over the dimensions they treat elementwise.

    Example:
        >>> import tapeflow as tp
        >>> T = tp.distributions.transforms
        >>> t = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)])
        >>> t(tp.tensor([0.0])), t.inv(tp.tensor([3.0]))
        (tensor([3.]), tensor([0.]))
    """

    def __init__(self, parts: list, cache_size: int = 0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return constraints.independent(domain, event_dim - domain.event_dim) if event_dim > domain.event_dim \
            else domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return constraints.independent(codomain, event_dim - codomain.event_dim) \
            if event_dim > codomain.event_dim else codomain

    @property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self.__dict__.get("_inv")
        if inv is None:
            inv = self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            inv._inv = self
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return full_like(x, 0.0)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))  # free when the parts cache
        xs.append(y)
        total, event_dim = 0.0, self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            total = total + _sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """`base_transform` with its `reinterpreted_batch_ndims` rightmost batch dimensions counted as event
    dimensions: the map is unchanged, its log-Jacobian is summed over them.

    Example:
        >>> import tapeflow as tp
        >>> T = tp.distributions.transforms
        >>> t = T.IndependentTransform(T.ExpTransform(), 1)
        >>> t.log_abs_det_jacobian(tp.tensor([1.0, 2.0]), None), t.event_dim
        (tensor(3.), 1)
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.ndim < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.ndim < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshape the rightmost `in_shape` dimensions to `out_shape` (same number of elements; unit Jacobian).

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.ReshapeTransform((4,), (2, 2))
        >>> t(tp.zeros(3, 4)).shape, t.log_abs_det_jacobian(tp.zeros(3, 4), None).shape
        (tapeflow.Size([3, 2, 2]), tapeflow.Size([3]))
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape,
                                                                             cache_size=cache_size)

    def _call(self, x):
        return x.reshape(*x.shape[:x.ndim - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y):
        return y.reshape(*y.shape[:y.ndim - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return zeros(tuple(x.shape[:x.ndim - len(self.in_shape)]), dtype=x.dtype)

    def forward_shape(self, shape):
        return _swap_tail(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return _swap_tail(shape, self.out_shape, self.in_shape)


def _swap_tail(shape, old, new):
    if len(shape) < len(old):
        raise ValueError("Too few dimensions on input")
    cut = len(shape) - len(old)
    if tuple(shape[cut:]) != tuple(old):
        raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(old)}")
    return Size(tuple(shape[:cut]) + tuple(new))


from .elementwise_transforms import (  # noqa: E402  (they subclass Transform, defined above)
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from .event_transforms import (  # noqa: E402
    CatTransform,
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
)
