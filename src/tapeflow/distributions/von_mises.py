"""`VonMises`: the circular normal distribution on angles, sampled by Best and Fisher's rejection method."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _ops, special
from .._factories import next_key
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x):
    """`log I0(x)` through the exponentially scaled Bessel function (finite for large `x`)."""
    return special.i0e(x).log() + x


def _rejection_sample(key, loc, concentration, proposal_r, shape):
    """Best & Fisher (1979): propose `f = cos(angle)` from a wrapped Cauchy, accept against the von Mises density;
    loop (inside XLA, no host reads) until every entry has accepted once."""
    loc, kappa, r = (jnp.broadcast_to(a, shape) for a in (loc, concentration, proposal_r))

    def body(state):
        key, x, done = state
        key, sub = jax.random.split(key)
        u1, u2, u3 = jax.random.uniform(sub, (3, *shape), loc.dtype)
        z = jnp.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accept = ((c * (2 - c) - u2) > 0) | (jnp.log(c / u2) + 1 - c >= 0)
        x = jnp.where(accept & ~done, jnp.sign(u3 - 0.5) * jnp.arccos(f), x)
        return key, x, done | accept

    state = (key, jnp.zeros(shape, loc.dtype), jnp.zeros(shape, bool))
    _, x, _ = jax.lax.while_loop(lambda s: ~jnp.all(s[2]), body, state)
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Von Mises distribution on the circle with mean direction `loc` and `concentration` kappa (density
    proportional to `exp(kappa cos(x - loc))`); draws lie in `[-pi, pi)`. Not reparameterised.

    Example:
        >>> import tapeflow as tp
        >>> d = tp.distributions.VonMises(tp.tensor([0.0]), tp.tensor([1.0]))
        >>> d.log_prob(tp.tensor([0.0])), d.variance, d.sample((3,)).shape
        (tensor([-1.0738]), tensor([0.5536]), tapeflow.Size([3, 1]))
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # NOTE: log I0 from the exact scaled Bessel function; PyTorch uses a polynomial fit (1e-7 relative error).
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(self.concentration)

    @property
    def _proposal_r(self):
        kappa = self.concentration.detach().double()
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        # the closed form cancels catastrophically for tiny kappa: use its Taylor expansion there
        return _ops.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=()):
        """Angles in `[-pi, pi)` (drawn in float64, returned in the parameters' dtype)."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            loc, kappa = self.loc.detach().double(), self.concentration.detach().double()
            x = _rejection_sample(next_key(), loc._data, kappa._data, self._proposal_r._data, shape)
            return Tensor._wrap(x).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance `1 - I1(kappa) / I0(kappa)`."""
        return 1 - special.i1e(self.concentration) / special.i0e(self.concentration)
