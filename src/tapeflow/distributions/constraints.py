"""Constraints on distribution parameters and values (PyTorch's `torch.distributions.constraints`): each says
whether a value satisfies it, which argument validation checks."""

from __future__ import annotations

__all__ = ["Constraint", "real", "real_vector", "positive", "nonnegative", "greater_than", "unit_interval", "boolean",
           "simplex", "one_hot", "integer_interval", "nonnegative_integer", "positive_integer", "interval",
           "half_open_interval", "independent"]


class Constraint:
    """A region of values: `check(value)` is a bool tensor, True where `value` lies in it."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound, half_open=False):
        self.lower_bound, self.upper_bound, self.half_open = lower_bound, upper_bound, half_open

    def check(self, value):
        upper = value < self.upper_bound if self.half_open else value <= self.upper_bound
        return (value >= self.lower_bound) & upper

    def __repr__(self) -> str:
        kind = "HalfOpenInterval" if self.half_open else "Interval"
        return f"{kind}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & super().check(value)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Independent(Constraint):
    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int):
        self.base_constraint, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"

    def check(self, value):
        ok = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok


real = _Real()
real_vector = _Independent(real, 1)
positive = _GreaterThan(0.0)
greater_than = _GreaterThan
nonnegative = _Interval(0.0, float("inf"))
unit_interval = _Interval(0.0, 1.0)
boolean = _Boolean()
simplex = _Simplex()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
interval = _Interval
half_open_interval = lambda lo, hi: _Interval(lo, hi, half_open=True)  # noqa: E731
integer_interval = _IntegerInterval
independent = _Independent
