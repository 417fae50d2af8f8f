"""Distribution parameters derived on first use (`probs` from `logits`, `covariance_matrix` from `scale_tril`,
...) keep their graph even when first read under `no_grad` (as `sample()` reads them), as PyTorch's
`lazy_property` does: gradients through them match PyTorch's instead of silently vanishing."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch")

# name: (make the distribution from a parameter, the derived property, a scalar loss of it)
CASES = {
    "Categorical logits->probs": (lambda D, w: D.Categorical(logits=w), "probs", lambda v: (v * v).sum()),
    "Categorical probs->logits": (lambda D, w: D.Categorical(probs=w.softmax(0)), "logits", lambda v: v.sum()),
    "Bernoulli logits->probs": (lambda D, w: D.Bernoulli(logits=w), "probs", lambda v: (v * v).sum()),
    "Bernoulli probs->logits": (lambda D, w: D.Bernoulli(probs=w.sigmoid()), "logits", lambda v: (v * v).sum()),
    "Binomial logits->probs": (lambda D, w: D.Binomial(5, logits=w), "probs", lambda v: v.sum()),
    "Geometric probs->logits": (lambda D, w: D.Geometric(probs=w.sigmoid()), "logits", lambda v: v.sum()),
    "ContinuousBernoulli logits->probs": (lambda D, w: D.ContinuousBernoulli(logits=w), "probs", lambda v: v.sum()),
    "RelaxedBernoulli logits->probs": (lambda D, w: D.RelaxedBernoulli(tp_or(D, 0.5), logits=w), "probs",
                                       lambda v: (v * v).sum()),
    "RelaxedOneHotCategorical probs": (lambda D, w: D.RelaxedOneHotCategorical(tp_or(D, 0.5), logits=w), "probs",
                                       lambda v: (v * v).sum()),
    "MultivariateNormal covariance": (lambda D, w: D.MultivariateNormal(w[:2] * 0, scale_tril=_tril(w)),
                                      "covariance_matrix", lambda v: v.sum()),
    "MultivariateNormal precision": (lambda D, w: D.MultivariateNormal(w[:2] * 0, scale_tril=_tril(w)),
                                     "precision_matrix", lambda v: v.sum()),
    "LowRankMultivariateNormal scale_tril": (lambda D, w: D.LowRankMultivariateNormal(
        w[:2] * 0, w[:2].reshape(2, 1), w[1:].exp()), "scale_tril", lambda v: v.sum()),
    "Wishart covariance": (lambda D, w: D.Wishart(df=3.0, scale_tril=_tril(w)), "covariance_matrix", lambda v: v.sum()),
    "VonMises variance": (lambda D, w: D.VonMises(w[0], w[1].exp()), "variance", lambda v: v),
}


def tp_or(D, v):
    """A temperature tensor of the library `D` belongs to."""
    lib = torch if D.__name__.startswith("torch") else tp
    return lib.tensor(v)


def _tril(w):
    """A 2x2 lower-triangular scale from the first three entries of `w` (positive diagonal)."""
    lib = torch if isinstance(w, torch.Tensor) else tp
    a, b, c = w[0].exp(), w[1], w[2].exp()
    zero = w[0] * 0
    return lib.stack([lib.stack([a, zero]), lib.stack([b, c])])


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("first_read", ["no_grad", "sample", "grad"])
def test_derived_parameters_keep_their_graph(name, first_read):
    make, prop, loss = CASES[name]
    grads = []
    for lib in (torch, tp):
        w = lib.tensor([0.3, -0.7, 0.2], requires_grad=True)
        d = make(lib.distributions, w)
        if first_read == "no_grad":
            with lib.no_grad():
                getattr(d, prop)
        elif first_read == "sample":
            lib.manual_seed(0)
            d.sample()
        value = getattr(d, prop)
        assert value.requires_grad
        loss(value).backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=2e-5, atol=1e-6)


def test_entropy_after_sampling_as_pytorch():
    """The case a policy-gradient loop meets: sample actions, then an entropy bonus on the same distribution."""
    grads = []
    for lib in (torch, tp):
        logits = lib.tensor([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]], requires_grad=True)
        d = lib.distributions.Categorical(logits=logits)
        lib.manual_seed(0)
        actions = d.sample()
        (-(d.log_prob(actions).sum()) - 0.01 * d.entropy().sum()).backward()
        grads.append(logits.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=2e-5, atol=1e-7)
