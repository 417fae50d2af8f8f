"""LBFGS: the parameter trajectory, losses and evaluation counts equal PyTorch's (fixed step and strong-Wolfe line
search, short histories, several step() calls)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

X_NP = np.random.default_rng(0).normal(size=(12, 3))
Y_NP = np.tanh(X_NP @ np.array([1.0, -2.0, 0.5]))[:, None] + 0.1


def _fit(lib, problem, opt_kw, steps, dtype="float64"):
    dt = getattr(lib, dtype)
    if problem == "rosenbrock":
        w = lib.tensor([-1.5, 2.0], dtype=dt, requires_grad=True)
        params = [w]

        def loss_fn():
            return (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2
    else:
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1)).to(dt)
        with lib.no_grad():
            for i, p in enumerate(net.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(i).normal(scale=0.5, size=tuple(p.shape)), dtype=dt))
        params = list(net.parameters())
        x, y = lib.tensor(X_NP, dtype=dt), lib.tensor(Y_NP, dtype=dt)

        def loss_fn():
            return ((net(x) - y) ** 2).mean()

    opt = lib.optim.LBFGS(params, **opt_kw)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    trace = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        trace.append((loss.detach().item(), state["func_evals"], state["n_iter"],
                      np.concatenate([p.detach().numpy().ravel() for p in params])))
    return trace


CASES = {
    "rosenbrock fixed step": ("rosenbrock", dict(lr=0.1, max_iter=15), 2),
    "rosenbrock strong wolfe": ("rosenbrock", dict(line_search_fn="strong_wolfe", max_iter=30), 2),
    "net strong wolfe, short history": ("net", dict(line_search_fn="strong_wolfe", history_size=3, max_iter=8), 3),
    "net fixed step, lr": ("net", dict(lr=0.5, history_size=5, max_iter=6, max_eval=5), 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lbfgs_trajectory_equals_pytorch(name):
    problem, kw, steps = CASES[name]
    mine, theirs = _fit(tp, problem, kw, steps), _fit(torch, problem, kw, steps)
    for (l1, e1, n1, p1), (l2, e2, n2, p2) in zip(mine, theirs):
        assert (e1, n1) == (e2, n2), name
        np.testing.assert_allclose(l1, l2, rtol=1e-9, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(p1, p2, rtol=1e-8, atol=1e-10, err_msg=name)
    assert mine[-1][0] < mine[0][0]


def test_lbfgs_float32_and_errors():
    kw = dict(line_search_fn="strong_wolfe", max_iter=10)
    (_, e1, _, p1), = _fit(tp, "net", kw, 1, "float32")
    (_, e2, _, p2), = _fit(torch, "net", kw, 1, "float32")
    np.testing.assert_allclose(p1, p2, rtol=1e-4, atol=1e-5)
    w = tp.nn.Parameter(tp.ones(2))
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        tp.optim.LBFGS([{"params": [w]}, {"params": [tp.nn.Parameter(tp.ones(1))]}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        tp.optim.LBFGS([w], lr=-1)
    opt = tp.optim.LBFGS([w], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
