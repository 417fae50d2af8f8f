"""tapeflow.distributions beyond the Gaussian/Bernoulli families (Exponential, Laplace, LogNormal, Cauchy, Gumbel,
StudentT, Poisson, Binomial, Geometric, OneHotCategorical, HalfNormal, Chi2, MixtureSameFamily): densities,
moments, entropies, cdf/icdf and KL divergences equal torch.distributions' with their gradients; rsample is the
same reparameterisation as PyTorch's; samples follow the law; bad arguments raise PyTorch's ValueErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

R = np.random.default_rng(1)
LOC, SCALE = R.normal(size=(3, 2)), R.uniform(0.5, 2.0, size=(3, 2))
RATE = R.uniform(0.3, 3.0, size=(3, 2))
DF = np.array([[0.7, 1.5], [2.5, 4.0], [1.0, 7.0]])  # hits StudentT's NaN/inf mean and variance branches
PROBS = R.uniform(0.05, 0.95, size=(3, 2))
CAT = R.uniform(0.1, 1.0, size=(3, 4))
X = R.normal(size=(3, 2))
XPOS = R.uniform(0.1, 3.0, size=(3, 2))
U = R.uniform(0.05, 0.95, size=(3, 2))
COUNTS = np.array([[0.0, 3.0], [1.0, 7.0], [2.0, 0.0]])
ONEHOT = np.eye(4)[[2, 0, 3]]


def _params(lib):
    t = lambda a: lib.tensor(a, dtype=lib.float64, requires_grad=True)  # noqa: E731
    return {"loc": t(LOC), "scale": t(SCALE), "rate": t(RATE), "df": t(DF), "probs": t(PROBS),
            "logits": t(np.log(CAT)), "cprobs": t(CAT / CAT.sum(-1, keepdims=True)), "plogits": t(LOC)}


def _quantities(lib, name):
    D, p = lib.distributions, _params(lib)
    c = lambda a: lib.tensor(a, dtype=lib.float64)  # noqa: E731
    x, xpos, u, k = c(X), c(XPOS), c(U), c(COUNTS)
    if name == "Exponential":
        d = D.Exponential(p["rate"])
        out = [d.log_prob(xpos), d.entropy(), d.mean, d.mode, d.variance, d.stddev, d.cdf(xpos), d.icdf(u)]
    elif name == "Laplace":
        d = D.Laplace(p["loc"], p["scale"])
        out = [d.log_prob(x), d.entropy(), d.mean, d.variance, d.stddev, d.cdf(x), d.icdf(u)]
    elif name == "LogNormal":
        d = D.LogNormal(p["loc"], p["scale"])
        out = [d.log_prob(xpos), d.entropy(), d.mean, d.mode, d.variance, d.stddev, d.cdf(xpos), d.icdf(u)]
    elif name == "Cauchy":
        d = D.Cauchy(p["loc"], p["scale"])
        out = [d.log_prob(x), d.entropy(), d.mean, d.variance, d.cdf(x), d.icdf(u)]
    elif name == "Gumbel":
        d = D.Gumbel(p["loc"], p["scale"])
        out = [d.log_prob(x), d.entropy(), d.mean, d.variance, d.stddev, d.cdf(x), d.icdf(u)]
    elif name == "StudentT":
        d = D.StudentT(p["df"], p["loc"], p["scale"])
        out = [d.log_prob(x), d.entropy(), d.mean, d.variance]
    elif name == "StudentT(df)":
        d = D.StudentT(p["df"])
        out = [d.log_prob(x), d.entropy()]
    elif name == "Poisson":
        d = D.Poisson(p["rate"])
        out = [d.log_prob(k), d.mean, d.mode, d.variance]
    elif name == "Binomial(probs)":
        d = D.Binomial(c(np.full((3, 2), 7.0)), probs=p["probs"])
        out = [d.log_prob(k), d.entropy(), d.mean, d.mode, d.variance, d.logits, d.enumerate_support()]
    elif name == "Binomial(logits)":
        d = D.Binomial(c([[3.0, 7.0], [9.0, 8.0], [2.0, 1.0]]), logits=p["plogits"])
        out = [d.log_prob(k.clamp(max=1.0)), d.mean, d.variance, d.probs]
    elif name == "Geometric(probs)":
        d = D.Geometric(probs=p["probs"])
        out = [d.log_prob(k), d.entropy(), d.mean, d.variance, d.logits]
    elif name == "Geometric(logits)":
        d = D.Geometric(logits=p["plogits"])
        out = [d.log_prob(k), d.entropy(), d.mean, d.variance, d.probs]
    elif name == "OneHotCategorical(probs)":
        d = D.OneHotCategorical(probs=p["cprobs"])
        out = [d.log_prob(c(ONEHOT)), d.entropy(), d.mean, d.mode, d.variance, d.enumerate_support()]
    elif name == "OneHotCategorical(logits)":
        d = D.OneHotCategorical(logits=p["logits"])
        out = [d.log_prob(c(ONEHOT)), d.entropy(), d.probs]
    elif name == "HalfNormal":
        d = D.HalfNormal(p["scale"])
        out = [d.log_prob(xpos), D.HalfNormal(p["scale"], validate_args=False).log_prob(x), d.entropy(),
               d.mean, d.variance, d.cdf(xpos), d.icdf(u)]
    elif name == "Chi2":
        d = D.Chi2(p["df"])
        out = [d.log_prob(xpos), d.entropy(), d.mean, d.variance, d.df]
    else:  # MixtureSameFamily of Normals (batch (3,), 4 components) and of diagonal Gaussians (event (2,))
        comp = D.Normal(p["loc"][:, :1] + p["logits"], p["scale"][:, :1].expand(3, 4))
        d = D.MixtureSameFamily(D.Categorical(logits=p["logits"]), comp)
        comp2 = D.Independent(D.Normal(p["loc"].unsqueeze(1).expand(3, 4, 2), p["scale"].unsqueeze(1)), 1)
        d2 = D.MixtureSameFamily(D.Categorical(probs=p["cprobs"]), comp2)
        out = [d.log_prob(x[:, 0]), d.mean, d.variance, d.cdf(x[:, 1]), d2.log_prob(x), d2.mean, d2.variance]
    total = sum((o * (i + 1)).nan_to_num(0.0, 0.0, 0.0).sum() for i, o in enumerate(out) if o.requires_grad)
    total.backward()
    grads = [v.grad for _, v in sorted(p.items()) if v.grad is not None]
    return [o.detach().numpy() for o in out] + [g.numpy() for g in grads] + [
        np.array(d.batch_shape), np.array(d.event_shape)]


NAMES = ["Exponential", "Laplace", "LogNormal", "Cauchy", "Gumbel", "StudentT", "StudentT(df)", "Poisson",
         "Binomial(probs)", "Binomial(logits)", "Geometric(probs)", "Geometric(logits)", "OneHotCategorical(probs)",
         "OneHotCategorical(logits)", "HalfNormal", "Chi2", "MixtureSameFamily"]


@pytest.mark.parametrize("name", NAMES)
def test_densities_moments_and_gradients_equal_pytorch(name):
    mine, theirs = _quantities(tp, name), _quantities(torch, name)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"{name}: {i}")  # digamma and
        # polygamma of JAX and PyTorch differ in the 9th digit


def _kls(lib):
    D, p = lib.distributions, _params(lib)
    loc, scale, rate, probs, df = p["loc"], p["scale"], p["rate"], p["probs"], p["df"]
    n7 = lib.full((3, 2), 7.0, dtype=lib.float64)
    pairs = [
        (D.Exponential(rate), D.Exponential(scale)),
        (D.Laplace(loc, scale), D.Laplace(loc * 0.3, rate)),
        (D.Cauchy(loc, scale), D.Cauchy(-loc, rate)),
        (D.Gumbel(loc, scale), D.Gumbel(loc * 0.5, rate)),
        (D.HalfNormal(scale), D.HalfNormal(rate)),
        (D.LogNormal(loc, scale), D.LogNormal(loc.flip(0), rate)),
        (D.Poisson(rate), D.Poisson(scale)),
        (D.Binomial(n7, probs=probs), D.Binomial(n7, logits=loc)),
        (D.Geometric(probs=probs), D.Geometric(logits=loc)),
        (D.OneHotCategorical(probs=p["cprobs"]), D.OneHotCategorical(logits=p["logits"])),
        (D.Chi2(df), D.Chi2(rate)),
        (D.Exponential(rate), D.Gamma(df, scale)),
        (D.Gamma(df, scale), D.Exponential(rate)),
        (D.Chi2(df), D.Exponential(rate)),
        (D.Exponential(rate), D.Gumbel(loc, scale)),
        (D.Exponential(rate), D.Normal(loc, scale)),
        (D.Gamma(df, rate), D.Normal(loc, scale)),
        (D.Gumbel(loc, scale), D.Normal(loc * 2, rate)),
        (D.Laplace(loc, scale), D.Normal(loc * 2, rate)),
        (D.Normal(loc, scale), D.Gumbel(loc * 2, rate)),
        (D.Normal(loc, scale), D.Laplace(loc * 2, rate)),
    ]
    out = [D.kl_divergence(a, b) for a, b in pairs]
    sum((o * (i + 1)).sum() for i, o in enumerate(out)).backward()
    infinite = [D.kl_divergence(D.Normal(loc, scale), D.Exponential(rate)),
                D.kl_divergence(D.Laplace(loc, scale), D.Uniform(loc - 1, loc + 1)),
                D.kl_divergence(D.Binomial(n7 + 1, probs=probs), D.Binomial(n7, probs=probs))]
    return [o.detach().numpy() for o in out + infinite] + [v.grad.numpy() for _, v in sorted(p.items())
                                                          if v.grad is not None]


def test_kl_divergence_values_and_gradients_equal_pytorch():
    mine, theirs = _kls(tp), _kls(torch)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=str(i))
    B = tp.distributions.Binomial
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        tp.distributions.kl_divergence(B(2, probs=tp.tensor(0.5)), B(3, probs=tp.tensor(0.5)))


# The reparameterised draw of a continuous law is `icdf(v)` for uniform `v`: the gradient of a loss of the draws,
# with the draws' CDF values held fixed, must equal PyTorch's gradient through its own icdf.
REPARAM = {
    "Exponential": (lambda D, p: D.Exponential(p["rate"]), ["rate"]),
    "Laplace": (lambda D, p: D.Laplace(p["loc"], p["scale"]), ["loc", "scale"]),
    "LogNormal": (lambda D, p: D.LogNormal(p["loc"], p["scale"]), ["loc", "scale"]),
    "Cauchy": (lambda D, p: D.Cauchy(p["loc"], p["scale"]), ["loc", "scale"]),
    "Gumbel": (lambda D, p: D.Gumbel(p["loc"], p["scale"]), ["loc", "scale"]),
    "HalfNormal": (lambda D, p: D.HalfNormal(p["scale"]), ["scale"]),
}


@pytest.mark.parametrize("name", sorted(REPARAM))
def test_rsample_gradients_equal_pytorch_for_the_same_noise(name):
    make, names = REPARAM[name]
    tp.manual_seed(3)
    p = _params(tp)
    d = make(tp.distributions, p)
    assert d.has_rsample
    z = d.rsample((5,))
    assert z.shape == (5, 3, 2) and z.requires_grad
    (z.tanh() * tp.arange(6, dtype=tp.float64).reshape(3, 2)).sum().backward()
    pt = _params(torch)
    dt = make(torch.distributions, pt)
    assert dt.has_rsample
    v = dt.cdf(torch.tensor(z.detach().numpy())).detach()
    zt = dt.icdf(v)
    np.testing.assert_allclose(zt.detach().numpy(), z.detach().numpy(), rtol=1e-7, atol=1e-9)
    (zt.tanh() * torch.arange(6, dtype=torch.float64).reshape(3, 2)).sum().backward()
    for k in names:
        np.testing.assert_allclose(p[k].grad.numpy(), pt[k].grad.numpy(), rtol=1e-6, atol=1e-9, err_msg=k)


def test_studentt_and_chi2_rsample_are_reparameterised():
    D = tp.distributions
    tp.manual_seed(0)
    df = tp.tensor([3.0, 8.0], dtype=tp.float64, requires_grad=True)
    loc = tp.tensor([1.0, -2.0], dtype=tp.float64, requires_grad=True)
    scale = tp.tensor([0.5, 2.0], dtype=tp.float64, requires_grad=True)
    z = D.StudentT(df, loc, scale).rsample((20000,))
    z.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [20000, 20000])
    np.testing.assert_allclose(scale.grad.numpy(), ((z - loc) / scale).detach().sum(0).numpy(), rtol=1e-8)
    assert np.all(np.isfinite(df.grad.numpy()))
    np.testing.assert_allclose(z.detach().mean(0).numpy(), [1.0, -2.0], atol=0.08)
    np.testing.assert_allclose(z.detach().var(0).numpy(), (scale ** 2 * df / (df - 2)).detach().numpy(), rtol=0.25)
    # E[chi2(df)] = df, so d mean(draws) / d df is about 1
    df2 = tp.tensor([2.0, 5.0], dtype=tp.float64, requires_grad=True)
    c = D.Chi2(df2).rsample((20000,))
    c.mean(0).sum().backward()
    np.testing.assert_allclose(c.detach().mean(0).numpy(), [2.0, 5.0], rtol=0.05)
    np.testing.assert_allclose(df2.grad.numpy(), [1.0, 1.0], atol=0.05)


def test_samples_follow_the_law():
    D = tp.distributions
    tp.manual_seed(0)
    n = 20000
    laws = [D.Exponential(tp.tensor([0.5, 2.0])), D.Laplace(tp.tensor([1.0, -1.0]), tp.tensor([0.5, 2.0])),
            D.LogNormal(tp.tensor([0.0, 0.5]), tp.tensor([0.3, 0.5])), D.Gumbel(tp.tensor([1.0]), tp.tensor([2.0])),
            D.HalfNormal(tp.tensor([1.0, 3.0])), D.Chi2(tp.tensor([1.0, 4.0])), D.Poisson(tp.tensor([0.5, 7.0])),
            D.Binomial(tp.tensor([10.0, 3.0]), probs=tp.tensor([0.3, 0.8])), D.Geometric(tp.tensor([0.2, 0.7])),
            D.OneHotCategorical(tp.tensor([0.2, 0.5, 0.3])), D.StudentT(tp.tensor([5.0]), 1.0, 2.0),
            D.MixtureSameFamily(D.Categorical(tp.tensor([0.3, 0.7])), D.Normal(tp.tensor([-2.0, 3.0]), 1.0))]
    for d in laws:
        s = d.sample((n,))
        assert s.shape == (n, *d.batch_shape, *d.event_shape) and not s.requires_grad
        tol = 5 * d.stddev.numpy() / np.sqrt(n) + 1e-3
        np.testing.assert_array_less(np.abs(s.mean(0).numpy() - d.mean.numpy()), tol, err_msg=repr(d))
        if not isinstance(d, D.MixtureSameFamily):
            assert bool(d.support.check(s).all()), repr(d)
    for d in laws[6:9]:  # counts are integers
        s = d.sample((100,))
        assert bool((s == s.round()).all()) and s.dtype == tp.float32
    c = D.Cauchy(tp.tensor([1.0]), tp.tensor([2.0])).sample((n,))
    assert abs(float(c.median()) - 1.0) < 0.1
    b = D.Binomial(tp.tensor([4.0]), probs=tp.tensor([0.5])).sample((n,))
    np.testing.assert_allclose(np.bincount(b.numpy().astype(int).ravel(), minlength=5) / n,
                               [1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16], atol=0.015)


def test_expand_equals_pytorch():
    for lib in (tp, torch):
        lib.manual_seed(0)
    res = []
    for lib in (tp, torch):
        D, p = lib.distributions, _params(lib)
        x = lib.tensor(np.abs(X[:, :1]), dtype=lib.float64)
        k = lib.tensor(COUNTS[:, :1], dtype=lib.float64)
        r = p["rate"][0, :1]
        ds = [D.Exponential(r), D.Laplace(r, r), D.LogNormal(r, r), D.Cauchy(r, r), D.Gumbel(r, r),
              D.StudentT(r + 2, r, r), D.HalfNormal(r), D.Chi2(r)]
        out = [d.expand((4, 3, 1)).log_prob(x) for d in ds]
        out += [D.Poisson(r).expand((3, 1)).log_prob(k), D.Geometric(probs=p["probs"][0, :1]).expand((3, 1)).log_prob(k),
                D.Binomial(7, probs=p["probs"][0, :1]).expand((3, 1)).log_prob(k)]
        oh = D.OneHotCategorical(probs=p["cprobs"][0]).expand((2,))
        out += [oh.log_prob(lib.tensor(ONEHOT[:2], dtype=lib.float64)), oh.sample().sum(-1)]
        mix = D.MixtureSameFamily(D.Categorical(logits=p["logits"][0]), D.Normal(p["loc"][0, 0] + p["logits"][0], 1.0))
        out += [mix.expand((3,)).log_prob(x[:, 0]), lib.tensor(list(mix.expand((3,)).batch_shape))]
        out += [lib.tensor(list(ds[0].expand((4, 1)).batch_shape)), lib.tensor(float(ds[5].expand((2, 1)).mean[1, 0].detach()))]
        res.append([o.detach().numpy() for o in out])
    for i, (a, b) in enumerate(zip(*res)):
        np.testing.assert_allclose(a, b, rtol=1e-10, err_msg=str(i))


def _raise_same(make, match):
    for lib in (tp, torch):
        with pytest.raises(ValueError, match=match):
            make(lib.distributions, lib)


@pytest.mark.parametrize("case", [
    (lambda D, L: D.Exponential(L.tensor([1.0, -1.0])), "Expected parameter rate"),
    (lambda D, L: D.Exponential(L.tensor([1.0])).log_prob(L.tensor([-1.0])), "Expected value argument"),
    (lambda D, L: D.Laplace(L.tensor([0.0]), L.tensor([0.0])), "Expected parameter scale"),
    (lambda D, L: D.LogNormal(L.tensor([0.0]), L.tensor([-1.0])), "Expected parameter scale"),
    (lambda D, L: D.LogNormal(L.tensor([0.0]), L.tensor([1.0])).log_prob(L.tensor([-1.0])),
     "Expected value argument"),
    (lambda D, L: D.Cauchy(L.tensor([float("nan")]), L.tensor([1.0])), "Expected parameter loc"),
    (lambda D, L: D.Gumbel(L.tensor([0.0]), L.tensor([-2.0])), "Expected parameter scale"),
    (lambda D, L: D.StudentT(L.tensor([-1.0])), "Expected parameter df"),
    (lambda D, L: D.StudentT(L.tensor([1.0]), 0.0, L.tensor([-1.0])), "Expected parameter scale"),
    (lambda D, L: D.Poisson(L.tensor([-1.0])), "Expected parameter rate"),
    (lambda D, L: D.Poisson(L.tensor([1.0])).log_prob(L.tensor([1.5])), "Expected value argument"),
    (lambda D, L: D.Binomial(L.tensor([2.5]), probs=L.tensor([0.5])), "Expected parameter total_count"),
    (lambda D, L: D.Binomial(3, probs=L.tensor([1.5])), "Expected parameter probs"),
    (lambda D, L: D.Binomial(3, probs=L.tensor([0.5])).log_prob(L.tensor([4.0])), "Expected value argument"),
    (lambda D, L: D.Binomial(3, probs=L.tensor([0.5]), logits=L.tensor([0.0])), "Either `probs` or `logits`"),
    (lambda D, L: D.Geometric(probs=L.tensor([-0.5])), "Expected parameter probs"),
    (lambda D, L: D.Geometric(probs=L.tensor([0.5])).log_prob(L.tensor([-1.0])), "Expected value argument"),
    (lambda D, L: D.OneHotCategorical(probs=L.tensor([0.5, 0.5])).log_prob(L.tensor([1.0, 1.0])),
     "Expected value argument"),
    (lambda D, L: D.HalfNormal(L.tensor([0.0])), "Expected parameter scale"),
    (lambda D, L: D.HalfNormal(L.tensor([1.0])).log_prob(L.tensor([-1.0])), "Expected value argument"),
    (lambda D, L: D.Chi2(L.tensor([0.0])), "Expected parameter df"),
    (lambda D, L: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(L.zeros(2), 1.0)),
     "The Mixture distribution needs to be an  instance of torch.distributions.Categorical"),
    (lambda D, L: D.MixtureSameFamily(D.Categorical(L.ones(2)), 3.0),
     "The Component distribution needs to be an instance of torch.distributions.Distribution"),
    (lambda D, L: D.MixtureSameFamily(D.Categorical(L.ones(3)), D.Normal(L.zeros(2), 1.0)),
     r"`mixture_distribution component` \(3\) does not equal `component_distribution.batch_shape\[-1\]` \(2\)"),
    (lambda D, L: D.MixtureSameFamily(D.Categorical(L.ones(3, 2)), D.Normal(L.zeros(4, 2), 1.0)),
     r"`mixture_distribution.batch_shape` \(.*\) is not compatible with `component_distribution.batch_shape`"),
])
def test_invalid_arguments_raise_like_pytorch(case):
    _raise_same(*case)


def test_validation_can_be_turned_off():
    D = tp.distributions
    assert D.Exponential(tp.tensor([-1.0]), validate_args=False).rate.item() == -1.0
    assert D.Poisson(tp.tensor([1.0]), validate_args=False).log_prob(tp.tensor([1.5])).shape == (1,)
    assert D.Exponential(1.0).batch_shape == () and D.Binomial(5, probs=0.5).batch_shape == ()
    assert D.Exponential.support is not None and D.Binomial(tp.tensor([3.0]), probs=0.5).support.check(
        tp.tensor([3.0])).item()
    assert D.Poisson(2.0).arg_constraints["rate"].check(tp.tensor(0.0)).item()


def test_binomial_entropy_needs_a_homogeneous_count():
    d = tp.distributions.Binomial(tp.tensor([2.0, 3.0]), probs=tp.tensor([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        d.entropy()


def test_transformed_distribution_equals_pytorch():
    out = []
    for lib in (tp, torch):
        D, T = lib.distributions, lib.distributions.transforms
        loc = lib.tensor(LOC, dtype=lib.float64, requires_grad=True)
        d = D.TransformedDistribution(D.Normal(loc, 1.0), [T.AffineTransform(0.5, -2.0), T.SigmoidTransform()])
        u = lib.tensor(U, dtype=lib.float64)
        vals = [d.log_prob(u), d.cdf(u), d.icdf(u)]
        sum(v.sum() for v in vals).backward()
        out.append([v.detach().numpy() for v in vals] + [loc.grad.numpy()])
    for i, (a, b) in enumerate(zip(*out)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=str(i))
