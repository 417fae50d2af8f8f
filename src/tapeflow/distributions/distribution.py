"""`Distribution`: the shared shape bookkeeping, sampling entry points and argument validation."""

from __future__ import annotations

import jax

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from . import constraints

__all__ = ["Distribution"]


class Distribution:
    """Base class of probability distributions: `batch_shape` (independent, differently parametrised draws)
    and `event_shape` (the shape of one draw); `sample`/`rsample` draw `sample_shape + batch_shape +
    event_shape` values (`rsample` differentiably, by reparameterisation).

    Arguments are validated (PyTorch's default) unless `validate_args=False` or
    `Distribution.set_default_validate_args(False)`; validation reads a bool back to the host.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.Normal(0.0, 1.0)
        >>> isinstance(d, tp.distributions.Distribution), d.batch_shape
        (True, tapeflow.Size([]))
    """

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict = {}
    support = None
    _validate_default = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions created afterwards."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_default = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        self._validate_args = self._validate_default if validate_args is None else validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                value = self.__dict__.get(name)
                if value is None and isinstance(getattr(type(self), name, None), property):
                    value = getattr(self, name)  # a parameter held by an inner distribution (not a lazy one)
                if not isinstance(value, Tensor) or _traced(value):
                    continue
                if not bool(constraint.check(value).all()):
                    raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    def expand(self, batch_shape, _instance=None):
        """A view of this distribution with its parameters broadcast to `batch_shape` (no copy, no validation).

        Example:
            >>> import tapeflow as tp
            >>> tp.distributions.Exponential(tp.tensor([1.0, 2.0])).expand((3, 2)).batch_shape
            tapeflow.Size([3, 2])
        """
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        n = len(self._batch_shape)
        new.__dict__.update({k: v for k, v in self.__dict__.items() if not isinstance(v, Tensor)})
        for name in self._expand_names():
            value = self.__dict__[name]
            new.__dict__[name] = value.expand(*batch_shape, *value.shape[n:])
            if self.__dict__.get("_param") is value:
                new._param = new.__dict__[name]
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_names(self) -> list:
        """The tensor parameters `expand` broadcasts (by default those of `arg_constraints` that are set)."""
        return [k for k in self.arg_constraints if isinstance(self.__dict__.get(k), Tensor)]

    def _extended_shape(self, sample_shape=()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        """Draw values (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n: int):
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def cdf(self, value):
        """The cumulative distribution function (where the family has one; NotImplementedError otherwise)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value):
        """The inverse of `cdf` (where the family has one; NotImplementedError otherwise)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True):
        """All values of a discrete distribution's support (NotImplementedError for the others)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def perplexity(self):
        return self.entropy().exp()

    def _validate_sample(self, value) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        if _traced(value) or self.support is None:
            return
        if not bool(self.support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {self.__dict__[k].shape if self.__dict__[k].numel() != 1 else self.__dict__[k]}"
                         for k in names)
        return f"{type(self).__name__}({args})"


def _traced(t: Tensor) -> bool:
    return isinstance(t._data, jax.core.Tracer)
