"""tapeflow.distributions: log_prob, entropy, moments, cdf/icdf and KL equal torch.distributions' with gradients;
rsample is reparameterised; samples follow the distribution; bad arguments raise PyTorch's ValueError."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

R = np.random.default_rng(0)
LOC, SCALE = R.normal(size=(3, 2)), R.uniform(0.5, 2.0, size=(2,))
PROBS = R.uniform(0.05, 0.95, size=(3,))
CAT = R.uniform(0.1, 1.0, size=(2, 4))


def _params(lib):
    t = lambda a: lib.tensor(a, dtype=lib.float64, requires_grad=True)  # noqa: E731
    return {"loc": t(LOC), "scale": t(SCALE), "low": t(LOC - 1), "high": t(LOC + SCALE), "probs": t(PROBS),
            "logits": t(np.log(CAT)), "cprobs": t(CAT)}


def _quantities(lib, name):
    D, p = lib.distributions, _params(lib)
    x = lib.tensor(np.linspace(-0.9, 0.9, 6).reshape(3, 2), dtype=lib.float64)
    if name == "Normal":
        d = D.Normal(p["loc"], p["scale"])
        out = [d.log_prob(x), d.entropy(), d.mean, d.variance, d.stddev, d.cdf(x),
               d.icdf(lib.tensor(np.full((3, 2), 0.3), dtype=lib.float64))]
    elif name == "Uniform":
        d = D.Uniform(p["low"], p["high"])
        out = [d.log_prob(x * 0.1 + p["low"].detach() + 0.2), d.entropy(), d.mean, d.variance, d.stddev]
    elif name == "Bernoulli(probs)":
        d = D.Bernoulli(probs=p["probs"])
        out = [d.log_prob(lib.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], dtype=lib.float64)), d.entropy(), d.mean,
               d.variance, d.logits]
    elif name == "Bernoulli(logits)":
        d = D.Bernoulli(logits=p["logits"][0])
        out = [d.log_prob(lib.tensor([1.0, 0.0, 1.0, 1.0], dtype=lib.float64)), d.entropy(), d.probs]
    elif name == "Categorical(probs)":
        d = D.Categorical(probs=p["cprobs"])
        out = [d.log_prob(lib.tensor([[3, 0], [1, 2], [0, 0]])), d.entropy(), d.probs, d.logits]
    elif name == "Categorical(logits)":
        d = D.Categorical(logits=p["logits"])
        out = [d.log_prob(lib.tensor([2, 1])), d.entropy(), d.probs, d.enumerate_support().double()]
    else:  # Independent Normal
        d = D.Independent(D.Normal(p["loc"], p["scale"]), 1)
        out = [d.log_prob(x), d.entropy(), d.mean]
    assert tuple(d.batch_shape) and isinstance(d.batch_shape, tuple)
    total = sum((o * (i + 1)).sum() for i, o in enumerate(out) if o.requires_grad)
    total.backward()
    grads = [v.grad for k, v in sorted(p.items()) if v.grad is not None]
    return [o.detach().numpy() for o in out] + [g.numpy() for g in grads] + [
        np.array(d.batch_shape), np.array(d.event_shape)]


NAMES = ["Normal", "Uniform", "Bernoulli(probs)", "Bernoulli(logits)", "Categorical(probs)", "Categorical(logits)",
         "Independent"]


@pytest.mark.parametrize("name", NAMES)
def test_densities_and_gradients_equal_pytorch(name):
    mine, theirs = _quantities(tp, name), _quantities(torch, name)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"{name}: {i}")


def _kls(lib):
    D, p = lib.distributions, _params(lib)
    n1, n2 = D.Normal(p["loc"], p["scale"]), D.Normal(p["loc"] * 0.5, p["scale"] * 2)
    out = [D.kl_divergence(n1, n2), D.kl_divergence(D.Independent(n1, 1), D.Independent(n2, 1)),
           D.kl_divergence(D.Bernoulli(probs=p["probs"]), D.Bernoulli(logits=p["logits"][0, :3])),
           D.kl_divergence(D.Categorical(probs=p["cprobs"]), D.Categorical(logits=p["logits"])),
           D.kl_divergence(D.Uniform(p["low"], p["high"]), D.Uniform(p["low"] - 1, p["high"] + 1)),
           D.kl_divergence(D.Uniform(p["low"] - 1, p["high"]), D.Uniform(p["low"], p["high"]))]  # inf
    sum((o * (i + 1)).sum() for i, o in enumerate(out[:-1])).backward()
    return [o.detach().numpy() for o in out] + [v.grad.numpy() for _, v in sorted(p.items())]


def test_kl_divergence_equals_pytorch():
    for i, (a, b) in enumerate(zip(_kls(tp), _kls(torch))):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=str(i))
    with pytest.raises(NotImplementedError, match="No KL"):
        tp.distributions.kl_divergence(tp.distributions.Normal(0.0, 1.0), tp.distributions.Bernoulli(0.5))


def test_rsample_is_reparameterised_and_samples_follow_the_law():
    D = tp.distributions
    tp.manual_seed(0)
    loc, scale = tp.tensor([1.0, -2.0], requires_grad=True), tp.tensor([0.5, 3.0], requires_grad=True)
    z = D.Normal(loc, scale).rsample((4000,))
    assert z.shape == (4000, 2) and D.Normal(0.0, 1.0).sample().shape == ()
    z.sum().backward()
    eps = ((z - loc) / scale).detach()
    np.testing.assert_allclose(loc.grad.numpy(), [4000, 4000])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-4)
    np.testing.assert_allclose(z.detach().mean(0).numpy(), [1.0, -2.0], atol=0.15)
    np.testing.assert_allclose(z.detach().std(0).numpy(), [0.5, 3.0], rtol=0.06)
    u = D.Uniform(tp.tensor([2.0]), tp.tensor([5.0])).sample((2000,))
    assert float(u.min()) >= 2.0 and float(u.max()) < 5.0 and abs(float(u.mean()) - 3.5) < 0.1
    b = D.Bernoulli(probs=tp.tensor([0.2, 0.9])).sample((3000,))
    np.testing.assert_allclose(b.mean(0).numpy(), [0.2, 0.9], atol=0.04)
    c = D.Categorical(probs=tp.tensor([[0.1, 0.6, 0.3]])).sample((3000,))
    assert c.shape == (3000, 1) and c.dtype == tp.int64
    np.testing.assert_allclose(np.bincount(c.numpy().ravel(), minlength=3) / 3000, [0.1, 0.6, 0.3], atol=0.04)
    assert not D.Normal(loc, scale).sample((2,)).requires_grad


def test_bad_arguments_raise_like_pytorch():
    D = tp.distributions
    for lib in (tp, torch):
        with pytest.raises(ValueError, match="Expected parameter scale"):
            lib.distributions.Normal(lib.zeros(2), lib.tensor([1.0, -1.0]))
        with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both"):
            lib.distributions.Bernoulli(probs=lib.tensor(0.5), logits=lib.tensor(0.0))
        with pytest.raises(ValueError, match="Expected value argument"):
            lib.distributions.Bernoulli(probs=lib.tensor(0.5)).log_prob(lib.tensor(0.5))
        with pytest.raises(ValueError, match="Expected parameter probs"):
            lib.distributions.Bernoulli(probs=lib.tensor(1.5))
    assert D.Normal(tp.zeros(1), tp.tensor([-1.0]), validate_args=False).scale.item() == -1.0


def _mvn(lib):
    D = lib.distributions
    r = np.random.default_rng(5)
    A = r.normal(size=(2, 3, 3))
    cov = lib.tensor(A @ A.transpose(0, 2, 1) + 3 * np.eye(3), requires_grad=True)
    loc = lib.tensor(r.normal(size=(3,)), requires_grad=True)
    tril = lib.tensor(np.tril(r.normal(size=(3, 3))) + 3 * np.eye(3), requires_grad=True)
    x = lib.tensor(r.normal(size=(4, 2, 3)))
    d1 = D.MultivariateNormal(loc, covariance_matrix=cov)
    d2 = D.MultivariateNormal(loc * 2, scale_tril=tril)
    d3 = D.MultivariateNormal(loc, precision_matrix=cov)
    out = [d1.log_prob(x), d1.entropy(), d1.variance, d2.log_prob(x[:, 0]), d2.entropy(), d3.log_prob(x),
           d3.scale_tril, d3.covariance_matrix, d2.precision_matrix, D.kl_divergence(d1, d2), D.kl_divergence(d3, d1)]
    assert tuple(d1.batch_shape) == (2,) and tuple(d1.event_shape) == (3,) and tuple(d1.rsample((5,)).shape) == (
        5, 2, 3)
    sum((o * (i + 1)).sum() for i, o in enumerate(out)).backward()
    return [o.detach().numpy() for o in out] + [t.grad.numpy() for t in (cov, loc, tril)]


def test_multivariate_normal_equals_pytorch():
    for i, (a, b) in enumerate(zip(_mvn(tp), _mvn(torch))):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11, err_msg=str(i))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        tp.distributions.MultivariateNormal(tp.zeros(2))
    tp.manual_seed(0)
    L = tp.tensor([[1.0, 0.0], [0.8, 0.6]])
    z = tp.distributions.MultivariateNormal(tp.tensor([1.0, -1.0]), scale_tril=L).sample((4000,))
    np.testing.assert_allclose(np.cov(z.numpy().T), [[1.0, 0.8], [0.8, 1.0]], atol=0.08)


def _gamma_family(lib):
    D = lib.distributions
    r = np.random.default_rng(6)
    conc = lib.tensor(r.uniform(0.5, 3.0, size=(2, 3)), requires_grad=True)
    rate = lib.tensor(r.uniform(0.5, 2.0, size=(3,)), requires_grad=True)
    g1, g2 = D.Gamma(conc, rate), D.Gamma(conc * 1.5, rate * 0.5)
    di1, di2 = D.Dirichlet(conc), D.Dirichlet(conc.flip(-1))
    b1, b2 = D.Beta(conc[0], rate), D.Beta(rate, conc[1])
    x = lib.tensor(r.uniform(0.1, 3.0, size=(2, 3)))
    s = lib.tensor(r.dirichlet([1.0, 2.0, 3.0], size=2))
    p = lib.tensor(r.uniform(0.05, 0.95, size=(3,)))
    out = [g1.log_prob(x), g1.entropy(), g1.mean, g1.variance, di1.log_prob(s), di1.entropy(), di1.mean, di1.variance,
           b1.log_prob(p), b1.entropy(), b1.mean, b1.variance, D.kl_divergence(g1, g2), D.kl_divergence(di1, di2),
           D.kl_divergence(b1, b2)]
    sum((o * (i + 1)).sum() for i, o in enumerate(out)).backward()
    return [o.detach().numpy() for o in out] + [conc.grad.numpy(), rate.grad.numpy()]


def test_gamma_dirichlet_beta_equal_pytorch():
    for i, (a, b) in enumerate(zip(_gamma_family(tp), _gamma_family(torch))):
        # trigamma (the derivative of digamma) differs between the libraries in the ninth digit
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=str(i))


def test_gamma_family_rsample_gradients_are_unbiased():
    D = tp.distributions
    tp.manual_seed(0)
    alpha = tp.tensor([0.7, 2.5], dtype=tp.float64, requires_grad=True)
    z = D.Gamma(alpha, 2.0).rsample((20000,))
    z.mean(0).sum().backward()  # d E[z] / d alpha = 1 / rate
    np.testing.assert_allclose(alpha.grad.numpy(), [0.5, 0.5], rtol=0.05)
    np.testing.assert_allclose(z.detach().mean(0).numpy(), [0.35, 1.25], rtol=0.05)
    a, b = tp.tensor(2.0, dtype=tp.float64, requires_grad=True), tp.tensor(3.0, dtype=tp.float64, requires_grad=True)
    x = D.Beta(a, b).rsample((20000,))
    assert float(x.min()) > 0 and float(x.max()) < 1
    x.mean().backward()  # d/da a/(a+b) = b/(a+b)^2, d/db = -a/(a+b)^2
    np.testing.assert_allclose([a.grad.item(), b.grad.item()], [3 / 25, -2 / 25], rtol=0.08)
    s = D.Dirichlet(tp.tensor([1.0, 2.0, 3.0])).sample((5000,))
    np.testing.assert_allclose(s.sum(-1).numpy(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(s.mean(0).numpy(), [1 / 6, 2 / 6, 3 / 6], atol=0.02)


def test_families_without_a_cdf_raise_not_implemented_like_pytorch():
    d = tp.distributions.Beta(tp.tensor(2.0), tp.tensor(3.0))
    for method in (d.cdf, d.icdf):
        with pytest.raises(NotImplementedError):
            method(tp.tensor(0.5))
    with pytest.raises(NotImplementedError):
        tp.distributions.Normal(tp.tensor(0.0), tp.tensor(1.0)).enumerate_support()
