"""tapeflow.distributions' newer families (Multinomial, NegativeBinomial, Weibull, Pareto, HalfCauchy, InverseGamma,
Kumaraswamy, LogisticNormal, LowRankMultivariateNormal, the relaxed and straight-through categoricals, VonMises,
ContinuousBernoulli, FisherSnedecor, GeneralizedPareto, LKJCholesky, Wishart), ExponentialFamily, the transforms and
the biject_to/transform_to registries. Against torch.distributions: values and gradients of densities, moments,
entropies, cdf/icdf and KL divergences, expand, argument errors, transforms. Without torch: draws lie in the support
and follow the law, rsample gradients match finite differences, transforms invert and their log-Jacobians match
autograd's."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

R = np.random.default_rng(7)
LOC = R.normal(size=(3,))
POS, POS2 = R.uniform(0.5, 2.5, size=(3,)), R.uniform(0.6, 3.0, size=(3,))
PROBS = np.array([0.2, 0.5002, 0.85])  # the middle one is inside ContinuousBernoulli's Taylor region
CAT = R.uniform(0.1, 1.0, size=(2, 3))
DF = np.array([4.5, 6.0])
_B = R.normal(size=(3, 3))
SPD = _B @ _B.T + 3 * np.eye(3)
XPOS, XUNIT, XREAL = R.uniform(0.2, 3.0, size=(3,)), R.uniform(0.05, 0.95, size=(3,)), R.normal(size=(3,))
COUNTS = np.array([[2.0, 0.0, 3.0], [1.0, 4.0, 0.0]])
NB_COUNTS = np.array([0.0, 3.0, 7.0])
SIMPLEX = CAT[::-1] / CAT[::-1].sum(-1, keepdims=True)
_C = R.normal(size=(3, 3))
XSPD = _C @ _C.T + np.eye(3)
U = np.array([0.1, 0.55, 0.9])
W = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]])
VREAL = np.stack([XREAL, XREAL + 0.5])
CORR_L = np.linalg.cholesky(np.corrcoef(np.random.default_rng(3).normal(size=(3, 6))))


def _params(lib):
    t = lambda a: lib.tensor(a, dtype=lib.float64, requires_grad=True)  # noqa: E731
    return {"loc": t(LOC), "scale": t(POS), "conc": t(POS2), "probs": t(PROBS), "logits": t(LOC),
            "cprobs": t(CAT / CAT.sum(-1, keepdims=True)), "clogits": t(np.log(CAT)), "temp": t(0.7),
            "vloc": t(np.stack([LOC, LOC[::-1]])), "W": t(W), "D": t(POS2),
            "df": t(DF), "spd": t(SPD), "tril": t(np.linalg.cholesky(SPD)), "gloc": t(LOC * 0.1)}


def _values(lib):
    c = lambda a: lib.tensor(a, dtype=lib.float64)  # noqa: E731
    return {"pos": c(XPOS), "unit": c(XUNIT), "real": c(XREAL), "counts": c(COUNTS), "nb": c(NB_COUNTS),
            "simplex": c(SIMPLEX), "pareto": c(POS + XPOS), "u": c(U), "spd": c(XSPD), "vreal": c(VREAL),
            "corr": c(CORR_L), "gp": c(np.array([0.3, 1.5, 0.2])), "onehot": c(np.eye(3)[[2, 0]])}


# name: (make(D, p), quantities(d, v) with gradients, quantities(d, v) compared by value only)
FAMILIES = {
    "Multinomial(probs)": (lambda D, p: D.Multinomial(5, probs=p["cprobs"]),
                           lambda d, v: [d.log_prob(v["counts"]), d.mean, d.variance, d.entropy()], None),
    "Multinomial(logits)": (lambda D, p: D.Multinomial(5, logits=p["clogits"]),
                            lambda d, v: [d.log_prob(v["counts"]), d.probs], None),
    "NegativeBinomial(probs)": (lambda D, p: D.NegativeBinomial(p["conc"], probs=p["probs"]),
                                lambda d, v: [d.log_prob(v["nb"]), d.mean, d.mode, d.variance, d.logits], None),
    "NegativeBinomial(logits)": (lambda D, p: D.NegativeBinomial(p["conc"], logits=p["logits"]),
                                 lambda d, v: [d.log_prob(v["nb"]), d.mean, d.variance, d.probs], None),
    "Weibull": (lambda D, p: D.Weibull(p["scale"], p["conc"]),
                lambda d, v: [d.log_prob(v["pos"]), d.mean, d.mode, d.variance, d.entropy(), d.cdf(v["pos"]),
                              d.icdf(v["u"])], None),
    "Pareto": (lambda D, p: D.Pareto(p["scale"], p["conc"] + 1.0),
               lambda d, v: [d.log_prob(v["pareto"]), d.mean, d.mode, d.variance, d.entropy(), d.cdf(v["pareto"]),
                             d.icdf(v["u"])], None),
    "HalfCauchy": (lambda D, p: D.HalfCauchy(p["scale"]),
                   lambda d, v: [d.log_prob(v["pos"]), d.entropy(), d.cdf(v["pos"]), d.icdf(v["u"]), d.mode],
                   lambda d, v: [d.mean, d.variance]),
    "InverseGamma": (lambda D, p: D.InverseGamma(p["conc"], p["scale"]),
                     lambda d, v: [d.log_prob(v["pos"]), d.mean, d.mode, d.variance, d.entropy()],
                     lambda d, v: [d.cdf(v["pos"])]),  # no gradient of gammainc in its shape parameter
    "Kumaraswamy": (lambda D, p: D.Kumaraswamy(p["scale"], p["conc"]),
                    lambda d, v: [d.log_prob(v["unit"]), d.mean, d.variance, d.entropy(), d.cdf(v["unit"]),
                                  d.icdf(v["u"])], lambda d, v: [d.mode]),
    "LogisticNormal": (lambda D, p: D.LogisticNormal(p["vloc"][:, :2], p["scale"][:2]),
                       lambda d, v: [d.log_prob(v["simplex"])], None),
    "LowRankMultivariateNormal": (lambda D, p: D.LowRankMultivariateNormal(p["vloc"], p["W"], p["D"]),
                                  lambda d, v: [d.log_prob(v["vreal"]), d.entropy(), d.mean, d.variance,
                                                d.covariance_matrix, d.precision_matrix, d.scale_tril], None),
    "RelaxedBernoulli(probs)": (lambda D, p: D.RelaxedBernoulli(p["temp"], probs=p["probs"]),
                                lambda d, v: [d.log_prob(v["unit"]), d.logits], None),
    "RelaxedBernoulli(logits)": (lambda D, p: D.RelaxedBernoulli(p["temp"], logits=p["logits"]),
                                 lambda d, v: [d.log_prob(v["unit"]), d.probs], None),
    "RelaxedOneHotCategorical": (lambda D, p: D.RelaxedOneHotCategorical(p["temp"], probs=p["cprobs"]),
                                 lambda d, v: [d.log_prob(v["simplex"])], None),
    "RelaxedOneHotCategorical(logits)": (lambda D, p: D.RelaxedOneHotCategorical(p["temp"], logits=p["clogits"]),
                                         lambda d, v: [d.log_prob(v["simplex"]), d.probs], None),
    "OneHotCategoricalStraightThrough": (lambda D, p: D.OneHotCategoricalStraightThrough(probs=p["cprobs"]),
                                         lambda d, v: [d.log_prob(v["onehot"]),
                                                       d.entropy(), d.mean, d.variance], None),
    "VonMises": (lambda D, p: D.VonMises(p["loc"], p["scale"]),
                 lambda d, v: [d.log_prob(v["real"]), d.variance, d.mean], None),
    "ContinuousBernoulli(probs)": (lambda D, p: D.ContinuousBernoulli(probs=p["probs"]),
                                   lambda d, v: [d.log_prob(v["unit"]), d.mean, d.variance, d.stddev, d.entropy(),
                                                 d.cdf(v["unit"]), d.icdf(v["u"]), d.logits], None),
    "ContinuousBernoulli(logits)": (lambda D, p: D.ContinuousBernoulli(logits=p["logits"]),
                                    lambda d, v: [d.log_prob(v["unit"]), d.mean, d.variance, d.entropy(),
                                                  d.cdf(v["unit"]), d.icdf(v["u"]), d.probs], None),
    "FisherSnedecor": (lambda D, p: D.FisherSnedecor(p["scale"] * 3, p["conc"] + 4.0),
                       lambda d, v: [d.log_prob(v["pos"]), d.mean, d.variance], lambda d, v: [d.mode]),
    "GeneralizedPareto": (lambda D, p: D.GeneralizedPareto(p["gloc"], p["scale"], p["gloc"] * 2),
                          lambda d, v: [d.log_prob(v["gp"]), d.cdf(v["gp"]), d.icdf(v["u"]), d.entropy(), d.mean,
                                        d.variance, d.log_survival_function(v["gp"])], None),
    "LKJCholesky": (lambda D, p: D.LKJCholesky(3, p["scale"]), lambda d, v: [d.log_prob(v["corr"])], None),
    "Wishart(covariance)": (lambda D, p: D.Wishart(p["df"], covariance_matrix=p["spd"]),
                            lambda d, v: [d.log_prob(v["spd"]), d.entropy(), d.mean, d.mode, d.variance], None),
    "Wishart(precision)": (lambda D, p: D.Wishart(p["df"], precision_matrix=p["spd"]),
                           lambda d, v: [d.log_prob(v["spd"]), d.entropy(), d.precision_matrix], None),
    "Wishart(scale_tril)": (lambda D, p: D.Wishart(p["df"], scale_tril=p["tril"]),
                            lambda d, v: [d.log_prob(v["spd"]), d.covariance_matrix], None),
}
# log I0 of VonMises (PyTorch: a polynomial fit), float32 lgamma(n + 1) in PyTorch's Multinomial entropy;
# GeneralizedPareto runs in float32 because PyTorch's log_prob fails in float64
TOL = {"VonMises": 2e-7, "Multinomial(probs)": 1e-6, "GeneralizedPareto": 2e-5}


def _quantities(lib, name):
    make, graded, valued = FAMILIES[name]
    p, v = _params(lib), _values(lib)
    if name == "GeneralizedPareto":
        p = {k: x.detach().float().requires_grad_() for k, x in p.items()}
        v = {k: x.float() for k, x in v.items()}
    d = make(lib.distributions, p)
    out = graded(d, v)
    total = sum((o * (i + 1)).nan_to_num(0.0, 0.0, 0.0).sum() for i, o in enumerate(out) if o.requires_grad)
    total.backward()
    with lib.no_grad():
        out = out + (valued(d, v) if valued else [])
    grads = [x.grad for _, x in sorted(p.items()) if x.grad is not None]
    return [o.detach().numpy() for o in out] + [g.numpy() for g in grads] + [
        np.array(d.batch_shape), np.array(d.event_shape), np.array([d.has_rsample])]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_values_and_gradients_equal_pytorch(name):
    torch = pytest.importorskip("torch")
    mine, theirs = _quantities(tp, name), _quantities(torch, name)
    assert len(mine) == len(theirs)
    tol = TOL.get(name, 1e-9)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"{name}: {i}")


def _kls(lib):
    D, p = lib.distributions, _params(lib)
    loc, scale, conc, probs = p["loc"], p["scale"], p["conc"], p["probs"]
    lr = lambda s: D.LowRankMultivariateNormal(p["vloc"] * s, p["W"] * s, p["D"] + s)  # noqa: E731
    mvn = D.MultivariateNormal(p["vloc"][0], scale_tril=p["tril"])
    pairs = [
        (D.Pareto(scale, conc + 2), D.Pareto(scale * 0.5, conc + 1)), (D.Pareto(scale, conc + 2), D.Exponential(conc)),
        (D.Pareto(scale, conc + 2), D.Gamma(conc, scale)), (D.Pareto(scale, conc + 2.5), D.Normal(loc, scale)),
        (D.ContinuousBernoulli(probs), D.ContinuousBernoulli(logits=loc)),
        (D.ContinuousBernoulli(probs), D.Exponential(scale)), (D.ContinuousBernoulli(probs), D.Normal(loc, scale)),
        (D.Beta(scale, conc), D.ContinuousBernoulli(probs)), (D.Beta(scale, conc), D.Exponential(conc)),
        (D.Beta(scale, conc), D.Gamma(conc, scale)), (D.Beta(scale, conc), D.Normal(loc, scale)),
        (D.Beta(scale, conc), D.Uniform(loc - 2, loc.detach().abs() + 1.5)),
        (D.Uniform(probs * 0.5, probs * 0.5 + 0.4), D.Beta(scale, conc)),
        (D.Uniform(probs * 0.5, probs * 0.5 + 0.4), D.ContinuousBernoulli(probs)),
        (D.Uniform(scale, scale + conc), D.Exponential(conc)), (D.Uniform(scale, scale + conc), D.Gamma(conc, scale)),
        (D.Uniform(loc, loc + conc), D.Gumbel(loc, scale)), (D.Uniform(loc, loc + conc), D.Normal(loc * 2, scale)),
        (D.Uniform(scale + 1, scale + conc + 1), D.Pareto(scale, conc)),
        (D.Gamma(conc, scale), D.Gumbel(loc, scale)), (D.Bernoulli(probs), D.Poisson(conc)),
        (D.Wishart(p["df"], covariance_matrix=p["spd"]), D.Wishart(p["df"] + 1, scale_tril=p["tril"] * 1.5)),
        (D.Poisson(conc), D.Poisson(scale)), (D.HalfCauchy(scale), D.HalfCauchy(conc)),
        (lr(1.0), lr(0.5)), (mvn, lr(0.5)), (lr(1.0), mvn),
    ]
    out = [D.kl_divergence(a, b) for a, b in pairs]
    sum((o * (i + 1)).sum() for i, o in enumerate(out)).backward()
    infinite = [D.kl_divergence(D.Pareto(scale, conc), D.Pareto(scale + 1, conc)),
                D.kl_divergence(D.Pareto(scale, conc * 0 + 0.5), D.Exponential(conc)),
                D.kl_divergence(D.Normal(loc, scale), D.Pareto(scale, conc)),
                D.kl_divergence(D.ContinuousBernoulli(probs), D.Uniform(loc - 5, loc + 5)),
                D.kl_divergence(D.Poisson(conc), D.Bernoulli(probs))]
    return [o.detach().numpy() for o in out + infinite] + [x.grad.numpy() for _, x in sorted(p.items())
                                                          if x.grad is not None]


def test_kl_divergences_equal_pytorch():
    torch = pytest.importorskip("torch")
    mine, theirs = _kls(tp), _kls(torch)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=str(i))
    D = tp.distributions
    with pytest.raises(NotImplementedError, match="No KL.*different exponential families"):
        D.kl_divergence(D.Poisson(tp.tensor([1.0])), D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Weibull(tp.tensor([1.0]), tp.tensor([1.0])), D.Weibull(tp.tensor([1.0]), tp.tensor([2.0])))


def test_exponential_family_entropy_is_the_bregman_form_of_the_closed_ones():
    D, EF = tp.distributions, tp.distributions.ExponentialFamily
    p = _params(tp)
    for d in [D.Normal(p["loc"], p["scale"]), D.Gamma(p["conc"], p["scale"]), D.Exponential(p["scale"]),
              D.Bernoulli(p["probs"]), D.ContinuousBernoulli(logits=p["loc"]),
              D.Wishart(p["df"], covariance_matrix=p["spd"])]:
        assert isinstance(d, EF)
        np.testing.assert_allclose(EF.entropy(d).detach().numpy(), d.entropy().detach().numpy(), rtol=1e-7,
                                   err_msg=type(d).__name__)


# rsample with a fixed seed is a smooth function of the parameters: its autograd gradient must equal central
# finite differences of the same draw.
REPARAM = {
    "Weibull": (lambda D, p: D.Weibull(p["scale"], p["conc"]), ["scale", "conc"]),
    "Pareto": (lambda D, p: D.Pareto(p["scale"], p["conc"]), ["scale", "conc"]),
    "HalfCauchy": (lambda D, p: D.HalfCauchy(p["scale"]), ["scale"]),
    "Kumaraswamy": (lambda D, p: D.Kumaraswamy(p["scale"], p["conc"]), ["scale", "conc"]),
    "LogisticNormal": (lambda D, p: D.LogisticNormal(p["loc"], p["scale"]), ["loc", "scale"]),
    "LowRankMultivariateNormal": (lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["W"], p["D"]),
                                  ["loc", "W", "D"]),
    "RelaxedBernoulli": (lambda D, p: D.RelaxedBernoulli(p["temp"], logits=p["logits"]), ["temp", "logits"]),
    "RelaxedOneHotCategorical": (lambda D, p: D.RelaxedOneHotCategorical(p["temp"], logits=p["loc"]),
                                 ["temp", "loc"]),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(p["probs"]), ["probs"]),
    "GeneralizedPareto": (lambda D, p: D.GeneralizedPareto(p["loc"], p["scale"], p["gloc"]), ["loc", "scale", "gloc"]),
}


@pytest.mark.parametrize("name", sorted(REPARAM))
def test_rsample_gradients_match_finite_differences(name):
    make, names = REPARAM[name]
    p = _params(tp)
    weights = tp.arange(1, 5, dtype=tp.float64)

    def loss(params):
        tp.manual_seed(11)
        z = make(tp.distributions, params).rsample((4,))
        return (z.tanh() * weights[:z.shape[-1]]).sum(), z

    value, z = loss(p)
    d = make(tp.distributions, p)
    assert d.has_rsample and z.requires_grad and bool(d.support.check(z.detach()).all())
    grads = tp.autograd.grad(value, [p[k] for k in names])
    eps, rng = 1e-6, np.random.default_rng(5)
    for k, g in zip(names, grads):  # the derivative along a random direction, by central differences
        direction = rng.normal(size=tuple(p[k].shape))
        moved = [float(loss(dict(p, **{k: tp.tensor(p[k].detach().numpy() + sign * eps * direction)}))[0])
                 for sign in (1, -1)]
        np.testing.assert_allclose((g.numpy() * direction).sum(), (moved[0] - moved[1]) / (2 * eps), rtol=1e-6,
                                   atol=1e-8, err_msg=f"{name}: {k}")


def test_straight_through_and_gamma_based_rsample_gradients():
    D, t, n = tp.distributions, tp.tensor, 4000
    probs = t([[0.2, 0.3, 0.5]], requires_grad=True)
    z = D.OneHotCategoricalStraightThrough(probs=probs).rsample((5,))
    assert z.shape == (5, 1, 3) and bool(((z == 0) | (z == 1)).all())
    (z * t([1.0, 2.0, 3.0])).sum().backward()
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(probs.grad.numpy(), [5 * (w - w @ [0.2, 0.3, 0.5])], rtol=1e-6)  # through p / sum(p)
    # E[X] = rate / (conc - 1): the mean of many reparameterised draws has about the mean's gradient
    conc, rate = t([4.0, 6.0], requires_grad=True), t([2.0, 1.0], requires_grad=True)
    D.InverseGamma(conc, rate).rsample((n,)).mean(0).sum().backward()
    np.testing.assert_allclose(conc.grad.numpy(), [-2 / 9, -1 / 25], rtol=0.1)
    np.testing.assert_allclose(rate.grad.numpy(), [1 / 3, 1 / 5], rtol=0.1)
    df = t([5.0, 7.0], requires_grad=True)
    W = D.Wishart(df, covariance_matrix=tp.eye(2)).rsample((n,))
    W[..., 0, 0].mean(0).sum().backward()  # E[W_00] = df
    np.testing.assert_allclose(df.grad.numpy(), [1.0, 1.0], rtol=0.1)
    df1 = t([6.0, 8.0], requires_grad=True)
    f = D.FisherSnedecor(df1, t([9.0, 12.0])).rsample((n,))
    f.mean(0).sum().backward()  # E = df2 / (df2 - 2) does not depend on df1
    np.testing.assert_array_less(np.abs(df1.grad.numpy()), 0.05)
    np.testing.assert_allclose(f.detach().mean(0).numpy(), [9 / 7, 1.2], atol=0.06)


def test_samples_follow_the_law():
    D, t, n = tp.distributions, tp.tensor, 4000
    laws = [D.Multinomial(6, probs=t([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
            D.NegativeBinomial(t([3.0, 0.5]), probs=t([0.4, 0.7])), D.Weibull(t([1.5, 0.5]), t([2.0, 3.0])),
            D.ContinuousBernoulli(t([0.2, 0.9])), D.GeneralizedPareto(t([0.5, 0.0]), t([2.0, 1.0]), t([0.2, -0.3])),
            D.LowRankMultivariateNormal(t([1.0, -1.0]), t([[1.0], [0.5]]), t([0.5, 0.2])),
            D.Wishart(t(5.0), covariance_matrix=t([[1.0, 0.3], [0.3, 2.0]]))]
    for d in laws:
        s = d.sample((n,))
        assert s.shape == (n, *d.batch_shape, *d.event_shape) and s.dtype == tp.float32 and not s.requires_grad
        assert bool(d.support.check(s).all()), repr(d)
        tol = 6 * d.stddev.numpy() / np.sqrt(n) + 2e-3
        np.testing.assert_array_less(np.abs(s.mean(0).numpy() - d.mean.numpy()), tol, err_msg=repr(d))
    k = D.NegativeBinomial(t([3.0, 0.5]), probs=t([0.4, 0.7])).sample((10,))
    assert bool((k == k.round()).all())
    v = D.VonMises(t([2.5, -1.0]), t([4.0, 0.5])).sample((n,))
    z = np.exp(1j * v.numpy().astype(np.float64)).mean(0)
    assert bool(((v >= -np.pi) & (v < np.pi)).all())
    np.testing.assert_allclose(np.angle(z), [2.5, -1.0], atol=0.1)
    np.testing.assert_allclose(1 - np.abs(z), D.VonMises(t([2.5, -1.0]), t([4.0, 0.5])).variance.numpy(), atol=0.04)
    L = D.LKJCholesky(3, t([0.5, 3.0])).sample((n,))
    assert L.shape == (n, 2, 3, 3) and bool(D.constraints.corr_cholesky.check(L).all())
    corr = (L @ L.transpose(-1, -2))[..., 1, 0].numpy()  # E[r] = 0; var(r) = 1 / (2 eta + d - 1)
    np.testing.assert_allclose(corr.var(0), [1 / 3, 1 / 8], rtol=0.15)
    for d in (D.RelaxedBernoulli(t(0.5), probs=t([0.3, 0.6])), D.RelaxedOneHotCategorical(t(0.5), probs=t([0.2, 0.8])),
              D.LogisticNormal(t([0.0, 1.0]), t([1.0, 0.5])), D.HalfCauchy(t([2.0, 1.0]))):
        s = d.sample((10,))
        assert s.shape == (10, *d.batch_shape, *d.event_shape) and bool(d.support.check(s).all())


def test_expand_equals_pytorch():
    torch = pytest.importorskip("torch")
    res = []
    for lib in (tp, torch):
        D, p, v = lib.distributions, _params(lib), _values(lib)
        s, c = p["scale"][:1], p["conc"][:1]
        ds = [D.Weibull(s, c), D.Pareto(s, c), D.HalfCauchy(s), D.InverseGamma(s, c), D.Kumaraswamy(s * 0.3, c),
              D.VonMises(s, c), D.FisherSnedecor(s, c), D.ContinuousBernoulli(p["probs"][:1]),
              D.NegativeBinomial(c, probs=p["probs"][:1]), D.RelaxedBernoulli(p["temp"], probs=p["probs"][:1])]
        xs = [v["pos"], v["pos"] + s.detach(), v["pos"], v["pos"], v["unit"], v["real"], v["pos"], v["unit"], v["nb"],
              v["unit"]]
        out = [d.expand((3,)).log_prob(x) for d, x in zip(ds, xs)]
        cat = p["cprobs"][:1]
        out += [D.Multinomial(5, probs=cat).expand((2,)).log_prob(v["counts"]),
                D.RelaxedOneHotCategorical(p["temp"], probs=cat).expand((2,)).log_prob(v["simplex"]),
                D.LogisticNormal(p["loc"][:2], p["scale"][:2]).expand((2,)).log_prob(v["simplex"]),
                D.LowRankMultivariateNormal(p["vloc"][:1], p["W"], p["D"]).expand((2,)).log_prob(v["vreal"]),
                D.LKJCholesky(3, s).expand((2,)).log_prob(v["corr"]),
                D.Wishart(p["df"][:1], scale_tril=p["tril"]).expand((2,)).log_prob(v["spd"]),
                lib.tensor(list(D.Wishart(p["df"][:1], scale_tril=p["tril"]).expand((4, 1)).batch_shape)),
                lib.tensor(list(D.LogisticNormal(p["loc"][:2], p["scale"][:2]).expand((2,)).sample().shape)),
                D.MultivariateNormal(p["vloc"][0], scale_tril=p["tril"]).expand((2,)).log_prob(v["vreal"])]
        res.append([o.detach().numpy() for o in out])
    for i, (a, b) in enumerate(zip(*res)):
        np.testing.assert_allclose(a, b, rtol=2e-7, err_msg=str(i))


@pytest.mark.parametrize("case", [
    (ValueError, lambda D, L: D.Weibull(L.tensor([1.0]), L.tensor([-1.0])), "Expected parameter concentration"),
    (ValueError, lambda D, L: D.Weibull(L.tensor([1.0]), L.tensor([1.0])).log_prob(L.tensor([-1.0])),
     "Expected value argument"),
    (ValueError, lambda D, L: D.Pareto(L.tensor([1.0]), L.tensor([0.0])), "Expected parameter"),
    (ValueError, lambda D, L: D.Pareto(L.tensor([1.0]), L.tensor([2.0])).log_prob(L.tensor([0.5])),
     "Expected value argument"),
    (ValueError, lambda D, L: D.HalfCauchy(L.tensor([-1.0])), "Expected parameter scale"),
    (ValueError, lambda D, L: D.InverseGamma(L.tensor([1.0]), L.tensor([-1.0])), "Expected parameter rate"),
    (ValueError, lambda D, L: D.Kumaraswamy(L.tensor([1.0]), L.tensor([1.0])).log_prob(L.tensor([1.5])),
     "Expected value argument"),
    (ValueError, lambda D, L: D.Multinomial(3, probs=L.tensor([0.5, -0.5])), "Expected parameter probs"),
    (ValueError, lambda D, L: D.Multinomial(3, probs=L.tensor([0.5, 0.5])).log_prob(L.tensor([3.0, 1.0])),
     "Expected value argument"),
    (NotImplementedError, lambda D, L: D.Multinomial(L.tensor(3), probs=L.tensor([0.5, 0.5])),
     "inhomogeneous total_count is not supported"),
    (ValueError, lambda D, L: D.NegativeBinomial(L.tensor([-1.0]), probs=L.tensor([0.5])),
     "Expected parameter total_count"),
    (ValueError, lambda D, L: D.NegativeBinomial(L.tensor([1.0]), probs=L.tensor([1.0])), "Expected parameter probs"),
    (ValueError, lambda D, L: D.NegativeBinomial(1.0, probs=L.tensor([0.5]), logits=L.tensor([0.5])),
     "Either `probs` or `logits` must be specified, but not both."),
    (ValueError, lambda D, L: D.NegativeBinomial(1.0, probs=L.tensor([0.5])).log_prob(L.tensor([0.5])),
     "Expected value argument"),
    (ValueError, lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.tensor([1.0, -1.0])),
     "Expected parameter cov_diag"),
    (ValueError, lambda D, L: D.LowRankMultivariateNormal(L.tensor(0.0), L.ones(2, 1), L.ones(2)),
     "loc must be at least one-dimensional."),
    (ValueError, lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(2), L.ones(2)),
     "cov_factor must be at least two-dimensional, with optional leading batch dimensions"),
    (ValueError, lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
     "cov_factor must be a batch of matrices with shape 2 x m"),
    (ValueError, lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(3)),
     "cov_diag must be a batch of vectors with shape"),
    (ValueError, lambda D, L: D.LowRankMultivariateNormal(L.zeros(3, 2), L.ones(2, 2, 1), L.ones(2)),
     "Incompatible batch shapes"),
    (ValueError, lambda D, L: D.RelaxedBernoulli(L.tensor(1.0), probs=L.tensor([1.5])), "Expected parameter probs"),
    (ValueError, lambda D, L: D.RelaxedBernoulli(L.tensor(1.0), probs=L.tensor([0.5])).log_prob(L.tensor([1.5])),
     "Expected value argument"),
    (ValueError, lambda D, L: D.RelaxedOneHotCategorical(L.tensor(1.0), probs=L.tensor([0.5, -0.5])),
     "Expected parameter probs"),
    (ValueError, lambda D, L: D.OneHotCategoricalStraightThrough(probs=L.tensor([0.5, 0.5])).log_prob(
        L.tensor([1.0, 1.0])), "Expected value argument"),
    (ValueError, lambda D, L: D.VonMises(L.tensor([0.0]), L.tensor([0.0])), "Expected parameter concentration"),
    (ValueError, lambda D, L: D.ContinuousBernoulli(L.tensor([1.5]), validate_args=True),
     "The parameter probs has invalid values"),
    (ValueError, lambda D, L: D.ContinuousBernoulli(L.tensor([0.5])).log_prob(L.tensor([1.5])),
     "Expected value argument"),
    (ValueError, lambda D, L: D.FisherSnedecor(L.tensor([1.0]), L.tensor([-1.0])), "Expected parameter"),
    (ValueError, lambda D, L: D.GeneralizedPareto(L.tensor([0.0]), L.tensor([-1.0]), L.tensor([0.1])),
     "Expected parameter scale"),
    (ValueError, lambda D, L: D.GeneralizedPareto(L.tensor([0.0]), L.tensor([1.0]), L.tensor([-0.5])).log_prob(
        L.tensor([3.0])), "Expected value argument"),
    (ValueError, lambda D, L: D.LogisticNormal(L.zeros(2), L.tensor([1.0, -1.0])), "Expected parameter scale"),
    (ValueError, lambda D, L: D.LKJCholesky(1, L.tensor(1.0)),
     "Expected dim to be an integer greater than or equal to 2. Found dim=1."),
    (ValueError, lambda D, L: D.LKJCholesky(2, L.tensor(-1.0)), "Expected parameter concentration"),
    (ValueError, lambda D, L: D.LKJCholesky(2, L.tensor(1.0)).log_prob(L.eye(2) * 2), "Expected value argument"),
    (AssertionError, lambda D, L: D.Wishart(L.tensor(3.0), covariance_matrix=L.eye(2), scale_tril=L.eye(2)),
     "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."),
    (ValueError, lambda D, L: D.Wishart(L.tensor(3.0), covariance_matrix=L.ones(2)),
     "scale_tril must be at least two-dimensional"),
    (ValueError, lambda D, L: D.Wishart(L.tensor(0.5), covariance_matrix=L.eye(2)),
     r"Value of df=.* expected to be greater than ndim - 1 = 1."),
    (ValueError, lambda D, L: D.Wishart(L.tensor(3.0), covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])),
     "Expected parameter covariance_matrix"),
    (ValueError, lambda D, L: D.Wishart(L.tensor(3.0), scale_tril=L.tensor([[1.0, 1.0], [0.0, 1.0]])),
     "Expected parameter scale_tril"),
    (ValueError, lambda D, L: D.Wishart(L.tensor(3.0), covariance_matrix=L.eye(2)).log_prob(-L.eye(2)),
     "Expected value argument"),
])
def test_invalid_arguments_raise_like_pytorch(case):
    torch = pytest.importorskip("torch")
    exc, make, match = case
    for lib in (tp, torch):
        with pytest.raises(exc, match=match):
            make(lib.distributions, lib)


def test_validation_can_be_turned_off_and_dependent_supports():
    D = tp.distributions
    assert D.Weibull(tp.tensor([-1.0]), tp.tensor([1.0]), validate_args=False).scale.item() == -1.0
    assert D.Multinomial(3, probs=tp.tensor([0.5, 0.5]), validate_args=False).log_prob(tp.tensor([9.0, 1.0])).shape == ()
    assert repr(D.Pareto(tp.tensor([2.0]), tp.tensor([1.0])).support) == "GreaterThanEq(lower_bound=tensor([2.]))"
    gp = D.GeneralizedPareto(tp.tensor([0.0]), tp.tensor([1.0]), tp.tensor([-0.5]))
    assert gp.support.upper_bound.item() == 2.0 and D.Multinomial(4, probs=tp.ones(2)).support.upper_bound == 4
    assert D.constraints.is_dependent(D.constraints.dependent)
    with pytest.raises(ValueError, match="dependent constraint"):
        D.constraints.dependent.check(tp.zeros(1))


# transform: (make(T), input x) for the round trip and Jacobian checks
TRANSFORMS = {
    "Exp": (lambda T: T.ExpTransform(), [0.3, -1.2]),
    "Power": (lambda T: T.PowerTransform(2.0), [0.3, 1.7]),
    "Sigmoid": (lambda T: T.SigmoidTransform(), [0.3, -1.2]),
    "Softplus": (lambda T: T.SoftplusTransform(), [0.3, -1.2]),
    "Tanh": (lambda T: T.TanhTransform(), [0.3, -1.2]),
    "Affine": (lambda T: T.AffineTransform(1.0, -2.0), [0.3, -1.2]),
    "Compose": (lambda T: T.ComposeTransform([T.ExpTransform(), T.AffineTransform(-1.0, 3.0), T.TanhTransform()]),
                [0.3, -1.2]),
    "Inverse": (lambda T: T.ExpTransform().inv, [0.3, 1.2]),
    "Independent": (lambda T: T.IndependentTransform(T.SoftplusTransform(), 1), [0.3, -1.2]),
    "StickBreaking": (lambda T: T.StickBreakingTransform(), [0.3, -1.2, 0.5]),
    "CorrCholesky": (lambda T: T.CorrCholeskyTransform(), [0.3, -1.2, 0.5]),
    "LowerCholesky": (lambda T: T.LowerCholeskyTransform(), [[0.3, 2.0], [-1.2, 0.5]]),
    "PositiveDefinite": (lambda T: T.PositiveDefiniteTransform(), [[0.3, 2.0], [-1.2, 0.5]]),
    "Reshape": (lambda T: T.ReshapeTransform((4,), (2, 2)), [0.3, -1.2, 0.5, 2.0]),
    "Cat": (lambda T: T.CatTransform([T.ExpTransform(), T.TanhTransform()], dim=0, lengths=[1, 2]), [0.3, -1.2, 0.5]),
    "Stack": (lambda T: T.StackTransform([T.ExpTransform(), T.SoftplusTransform()], dim=-1), [[0.3, -1.2]]),
    "Softmax": (lambda T: T.SoftmaxTransform(), [0.3, -1.2, 0.5]),
    "CDF": (lambda T: T.CumulativeDistributionTransform(tp.distributions.Normal(0.5, 2.0)), [0.3, -1.2]),
}


def _jacobian_logdet(t, x):
    """log|det J| of `t` at `x` by autograd, over the coordinates the transform's log-Jacobian describes."""
    n = x.numel()
    f = t
    if isinstance(t, tp.distributions.StickBreakingTransform):
        f = lambda z: t(z)[..., :-1]  # noqa: E731  (the last coordinate is determined by the others)
    elif isinstance(t, tp.distributions.CorrCholeskyTransform):
        f = lambda z: tp.distributions.utils.tril_matrix_to_vec(t(z), diag=-1)  # noqa: E731
    J = tp.autograd.functional.jacobian(lambda z: f(z).reshape(-1), x).reshape(-1, n)
    return np.linalg.slogdet(J.numpy())[1]


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_invert_and_their_log_jacobians_match_autograd(name):
    make, x = TRANSFORMS[name]
    t = make(tp.distributions)
    x = tp.tensor(x, dtype=tp.float64)
    y = t(x)
    assert tuple(t.forward_shape(x.shape)) == tuple(y.shape) and tuple(t.inverse_shape(y.shape)) == tuple(x.shape)
    assert bool(t.codomain.check(y).all()) and t.inv.inv is t
    if name in ("Softmax", "PositiveDefinite", "LowerCholesky"):  # no log-Jacobian (Softmax: not injective)
        back = t.inv(y)
        np.testing.assert_allclose(t(back).numpy(), y.numpy(), rtol=1e-12)
        return
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-10, atol=1e-12)
    ladj = t.log_abs_det_jacobian(x, y)
    np.testing.assert_allclose(ladj.sum().item(), _jacobian_logdet(t, x), rtol=1e-8, atol=1e-10)
    inv_ladj = t.inv.log_abs_det_jacobian(y, x)
    np.testing.assert_allclose(inv_ladj.numpy(), -ladj.numpy(), rtol=1e-12)
    cached = make(tp.distributions).with_cache(1)
    yc = cached(x)
    assert cached.inv(yc) is x


def test_transforms_equal_pytorch():
    torch = pytest.importorskip("torch")
    names = [n for n in sorted(TRANSFORMS) if n != "CDF"]
    out = []
    for lib in (tp, torch):
        T = lib.distributions.transforms
        res = []
        for n in names:
            t = TRANSFORMS[n][0](T)
            x = lib.tensor(TRANSFORMS[n][1], dtype=lib.float64, requires_grad=True)
            y = t(x)
            res += [y, t.inv(y.detach())]
            if n not in ("Softmax", "PositiveDefinite", "LowerCholesky"):
                ladj = t.log_abs_det_jacobian(x, y)
                if ladj.requires_grad:
                    ladj.sum().backward()
                res += [ladj, x.grad if x.grad is not None else lib.zeros(1)]
            res.append(repr(t.codomain) + repr(t.domain) + str(t.bijective))
        cdf = T.CumulativeDistributionTransform(lib.distributions.Normal(0.5, 2.0))
        x = lib.tensor([0.3, -1.2], dtype=lib.float64)
        res += [cdf(x), cdf.log_abs_det_jacobian(x, cdf(x)), cdf.inv(cdf(x))]
        out.append([r if isinstance(r, str) else r.detach().numpy() for r in res])
    for i, (a, b) in enumerate(zip(*out)):
        if isinstance(a, str):
            assert a == b, (i, a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=str(i))


def test_biject_to_and_transform_to_equal_pytorch():
    torch = pytest.importorskip("torch")
    out = []
    for lib in (tp, torch):
        D = lib.distributions
        C = D.constraints
        x1 = lib.tensor([0.3, -1.2, 0.5], dtype=lib.float64)
        x2 = lib.tensor([[0.3, -1.2], [0.5, 2.0]], dtype=lib.float64)
        cases = [(C.real, x1), (C.positive, x1), (C.nonnegative, x1), (C.greater_than(2.0), x1),
                 (C.greater_than_eq(-1.0), x1), (C.less_than(1.5), x1), (C.unit_interval, x1),
                 (C.interval(-2.0, 3.0), x1), (C.half_open_interval(1.0, 2.0), x1), (C.simplex, x1),
                 (C.real_vector, x1), (C.independent(C.positive, 1), x1), (C.corr_cholesky, x1),
                 (C.lower_cholesky, x2), (C.positive_definite, x2), (C.cat([C.positive, C.real], 0, [1, 2]), x1),
                 (C.stack([C.positive, C.unit_interval], -1), x2)]
        res = []
        for c, x in cases:
            for registry in (D.transform_to, D.biject_to):
                try:
                    t = registry(c)
                except NotImplementedError as e:
                    res.append(str(e))
                    continue
                y = t(x)
                res += [y.numpy(), t.inv(y).numpy(), str(t.bijective)]
                assert bool(c.check(y).all())
                if t.bijective:
                    res.append(t.log_abs_det_jacobian(x, y).numpy())
        out.append(res)
    for i, (a, b) in enumerate(zip(*out)):
        if isinstance(a, str):
            assert a == b, (i, a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=str(i))
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        tp.distributions.biject_to(tp.distributions.constraints.boolean)


def test_transformed_distributions_over_events_equal_pytorch():
    torch = pytest.importorskip("torch")
    out = []
    for lib in (tp, torch):
        D, T = lib.distributions, lib.distributions.transforms
        loc = lib.tensor(np.stack([LOC, LOC[::-1]]), dtype=lib.float64, requires_grad=True)
        v = lib.tensor(SIMPLEX, dtype=lib.float64)
        sb = D.TransformedDistribution(D.Normal(loc[:, :2], 1.0), [T.StickBreakingTransform()])
        mvn = D.MultivariateNormal(loc, scale_tril=lib.tensor(np.linalg.cholesky(SPD), dtype=lib.float64))
        cop = D.TransformedDistribution(mvn, [T.CumulativeDistributionTransform(D.Normal(0.0, 1.0))])
        rs = D.TransformedDistribution(D.Normal(loc.reshape(6), 1.0), [T.ReshapeTransform((6,), (2, 3)),
                                                                       T.IndependentTransform(T.ExpTransform(), 2)])
        aff = D.TransformedDistribution(mvn, [T.AffineTransform(loc, 2.0, event_dim=1), T.ExpTransform()])
        dists = [sb, cop, rs, aff]
        vals = [sb.log_prob(v), cop.log_prob(v), rs.log_prob(v * 2), aff.log_prob(v + 1)]
        sum(x.sum() for x in vals).backward()
        out.append([x.detach().numpy() for x in vals] + [loc.grad.numpy()] + [
            np.array(list(d.batch_shape) + [-1] + list(d.event_shape)) for d in dists] + [
            repr(d.support) for d in dists] + [np.array(list(sb.expand((4, 2)).event_shape))])
    for i, (a, b) in enumerate(zip(*out)):
        if isinstance(a, str):
            assert a == b, (i, a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=str(i))
