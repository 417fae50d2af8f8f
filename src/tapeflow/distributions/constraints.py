"""Constraints on distribution parameters and values (PyTorch's `torch.distributions.constraints`): each says
whether a value satisfies it, which argument validation checks, and `biject_to`/`transform_to` map each kind to a
transform from unconstrained space."""

from __future__ import annotations

import numpy as np

from .. import _dtype, _ops, linalg
from .._factories import full

__all__ = ["Constraint", "dependent", "dependent_property", "is_dependent", "independent", "boolean", "one_hot",
           "nonnegative_integer", "positive_integer", "integer_interval", "real", "real_vector", "positive",
           "nonnegative", "greater_than", "greater_than_eq", "less_than", "multinomial", "unit_interval", "interval",
           "half_open_interval", "simplex", "lower_triangular", "lower_cholesky", "corr_cholesky", "square",
           "symmetric", "positive_semidefinite", "positive_definite", "cat", "stack"]


class Constraint:
    """A region of values: `check(value)` is a bool tensor over `value`'s shape less the `event_dim` rightmost
    dimensions, True where the event lies in it.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.constraints.positive.check(tp.tensor([1.0, -1.0]))
        tensor([ True, False])
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A placeholder whose region depends on other variables (it cannot be checked)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


class _DependentProperty(property, _Dependent):
    """A `property` that is also a dependent constraint: the class attribute says "depends on the instance",
    the instance attribute is the actual constraint."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


def is_dependent(constraint) -> bool:
    """Whether `constraint` is a (placeholder) dependent constraint.

    Example:
        >>> from tapeflow.distributions import constraints
        >>> constraints.is_dependent(constraints.dependent), constraints.is_dependent(constraints.real)
        (True, False)
    """
    return isinstance(constraint, _Dependent)


class _Independent(Constraint):
    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"base_constraint must be a Constraint, got {type(base_constraint).__name__}")
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"

    def check(self, value):
        ok = self.base_constraint.check(value)
        if ok.ndim < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Bounded(Constraint):
    """Shared `repr` of the constraints with numeric bounds."""

    _bounds: tuple = ()

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "(" + ", ".join(f"{b}={getattr(self, b)}" for b in self._bounds) + ")"


class _IntegerInterval(_Bounded):
    is_discrete = True
    _bounds = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Bounded):
    is_discrete = True
    _bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only for NaN


class _GreaterThan(_Bounded):
    _bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return value >= self.lower_bound


class _LessThan(_Bounded):
    _bounds = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    _bounds = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(_Bounded):
    """Non-negative counts summing to at most `upper_bound` (PyTorch checks this weaker condition too)."""

    is_discrete = True
    event_dim = 1
    _bounds = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


def _all_last_two(ok):
    return ok.reshape(*ok.shape[:-2], -1).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _all_last_two(value.tril() == value)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        return _all_last_two(value.tril() == value) & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        tol = float(np.finfo(value.dtype.jax).eps) * value.shape[-1] * 10  # 10: PyTorch's fudge factor
        unit_rows = ((value.detach().pow(2).sum(-1).sqrt() - 1.0).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=_dtype.bool)


class _Symmetric(_Square):
    def check(self, value):
        if value.shape[-2] != value.shape[-1]:
            return super().check(value)
        return _all_last_two(_ops.isclose(value, value.transpose(-2, -1), atol=1e-6))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        if value.shape[-2] != value.shape[-1]:
            return super().check(value)
        # `&` rather than PyTorch's early return: the same answer without reading the symmetry check back
        return super().check(value) & (linalg.eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        if value.shape[-2] != value.shape[-1]:
            return super().check(value)
        return super().check(value) & (linalg.cholesky_ex(value).info == 0)


class _Cat(Constraint):
    """`cseq[i]` on the `lengths[i]` consecutive slices along `dim` (as `cat` would join them)."""

    def __init__(self, cseq, dim: int = 0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        starts = np.cumsum([0] + self.lengths[:-1])
        return _ops.cat([c.check(value.narrow(self.dim, int(s), n))
                         for c, s, n in zip(self.cseq, starts, self.lengths)], self.dim)


class _Stack(Constraint):
    """`cseq[i]` on the `i`-th slice along `dim` (as `stack` would join them)."""

    def __init__(self, cseq, dim: int = 0):
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        return _ops.stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _Independent
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _Independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
