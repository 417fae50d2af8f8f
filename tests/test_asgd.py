"""ASGD: parameters, the averaged iterate `ax` and the step state (eta, mu) equal PyTorch's over many steps."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

CASES = {
    "defaults": dict(),
    "averaging from step 3, decay, maximize": dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=3, weight_decay=0.1,
                                                   maximize=True),
    "float64, fast decay": dict(lr=0.2, lambd=0.5, alpha=1.0, t0=0),
}


def _run(lib, kw, dtype):
    dt = getattr(lib, dtype)
    w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=dt, requires_grad=True)
    b = lib.tensor(np.array([0.3, -0.2]), dtype=dt, requires_grad=True)
    opt = lib.optim.ASGD([w, b], **kw)
    x = lib.tensor(np.random.default_rng(0).normal(size=(5, 3)), dtype=dt)
    for _ in range(8):
        opt.zero_grad()
        (((x @ w.T + b).sin()) ** 2).sum().backward()
        opt.step()
    st = opt.state[w]
    return [w.detach().numpy(), b.detach().numpy(), st["ax"].numpy(), opt.state[b]["ax"].numpy(),
            np.array([float(st["eta"]), float(st["mu"]), float(st["step"])])]


@pytest.mark.parametrize("name", sorted(CASES))
def test_asgd_equals_pytorch(name):
    dtype = "float64" if "float64" in name else "float32"
    mine, theirs = _run(tp, CASES[name], dtype), _run(torch, CASES[name], dtype)
    tol = 1e-12 if dtype == "float64" else 1e-6
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=f"{name}: {i}")
    assert sorted(tp.optim.ASGD([tp.nn.Parameter(tp.ones(1))]).defaults) == sorted(
        torch.optim.ASGD([torch.nn.Parameter(torch.ones(1))]).defaults)


def test_asgd_bad_arguments():
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        tp.optim.ASGD([tp.nn.Parameter(tp.ones(1))], lr=-0.1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -1"):
        tp.optim.ASGD([tp.nn.Parameter(tp.ones(1))], weight_decay=-1)
