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


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adagrad", "RMSprop", "NAdam"])
def test_step_counters_stay_separate_tensors_that_share_one_array(name):
    # Parameters stepped together hold one counter array (one program input and output per group, not one per
    # parameter); each still has its own tensor, so a change to one counter leaves the others alone.
    a, b, c = (tp.ones(2, requires_grad=True) for _ in range(3))
    opt = getattr(tp.optim, name)([a, b, c], lr=0.1)
    for i in range(3):
        opt.zero_grad()
        (a.sum() + b.sum() + (c.sum() if i != 1 else 0)).backward()
        opt.step()
    steps = [opt.state[p]["step"] for p in (a, b, c)]
    assert [float(s) for s in steps] == [3.0, 3.0, 2.0]  # (c had no gradient in the second step)
    assert steps[0] is not steps[1] and steps[0]._raw is steps[1]._raw and steps[2]._raw is not steps[0]._raw
    steps[0].add_(10)
    assert [float(opt.state[p]["step"]) for p in (a, b, c)] == [13.0, 3.0, 2.0]
    opt.state[a]["step"] = tp.tensor(3.0)
    state = opt.state_dict()
    opt2 = getattr(tp.optim, name)([a, b, c], lr=0.1)
    opt2.load_state_dict(state)
    opt.step(), opt2.step()
    assert [float(opt2.state[p]["step"]) for p in (a, b, c)] == [float(opt.state[p]["step"]) for p in (a, b, c)]
    for p in (a, b, c):
        np.testing.assert_array_equal(opt2.state[p]["step"].numpy(), opt.state[p]["step"].numpy())
