"""Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop: parameters after several steps equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

CONFIGS = [
    ("Adagrad", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict()), ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.05, maximize=True)),
    ("Adamax", dict(lr=0.05)), ("Adamax", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1)),
    ("NAdam", dict(lr=0.05)), ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05)), ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Rprop", dict()), ("Rprop", dict(lr=0.05, etas=(0.3, 1.4), step_sizes=(1e-3, 0.2), maximize=True)),
]


def _run(lib, name, kwargs, steps=8):
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.normal(size=(3, 4)), dtype=lib.float64, requires_grad=True)
    x = lib.tensor(rng.normal(size=(5, 4)), dtype=lib.float64)
    opt = getattr(lib.optim, name)([w], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        ((x @ w.T).tanh() ** 2).sum().backward()
        opt.step()
    return w.detach().numpy(), opt.state_dict()["state"][0]


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_steps_equal_pytorch(name, kwargs):
    mine, my_state = _run(tp, name, kwargs)
    theirs, their_state = _run(torch, name, kwargs)
    np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    assert set(my_state) == set(their_state), (sorted(my_state), sorted(their_state))
    assert float(my_state["step"]) == float(their_state["step"]) == 8
