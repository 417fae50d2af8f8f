"""tapeflow.optim: every optimizer step for step against PyTorch; groups, state dicts, schedulers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn as nn

torch = pytest.importorskip("torch")

CASES = [
    ("sgd", "SGD", dict(lr=0.1)),
    ("sgd_momentum", "SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("sgd_nesterov_max", "SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("adam", "Adam", dict(lr=0.01)),
    ("adam_amsgrad_wd", "Adam", dict(lr=0.02, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("adamw", "AdamW", dict(lr=0.01)),
    ("adamw_amsgrad_max", "AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("rmsprop", "RMSprop", dict(lr=0.01)),
    ("rmsprop_centered_momentum", "RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.01)),
]


def _pair_params():
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=(2,)).astype(np.float32)]
    return [nn.Parameter(tp.tensor(a)) for a in arrays], [torch.nn.Parameter(torch.tensor(a)) for a in arrays]


def _loss(ps, x):
    w, b = ps
    return ((x @ w + b).tanh() ** 2).sum()


@pytest.mark.parametrize("name,cls,kw", CASES, ids=[c[0] for c in CASES])
def test_optimizer_matches_torch_over_steps(name, cls, kw):
    mine, ref = _pair_params()
    opt = getattr(tp.optim, cls)(mine, **kw)
    topt = getattr(torch.optim, cls)(ref, **kw)
    x_np = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    x, xt = tp.tensor(x_np), torch.tensor(x_np)
    ids = [id(p) for p in mine]
    for _ in range(5):
        opt.zero_grad()
        topt.zero_grad()
        _loss(mine, x).backward()
        _loss(ref, xt).backward()
        opt.step()
        topt.step()
    for p, q in zip(mine, ref):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert [id(p) for p in mine] == ids and isinstance(mine[0], nn.Parameter)
    assert mine[0]._version == 5
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for i, st in tsd["state"].items():
        assert sorted(sd["state"][i]) == sorted(st)
        for k, v in st.items():
            np.testing.assert_allclose(np.asarray(sd["state"][i][k]), v.numpy(), rtol=1e-5, atol=1e-6)


def test_param_groups_and_per_group_options():
    mine, ref = _pair_params()
    opt = tp.optim.SGD([{"params": [mine[0]]}, {"params": [mine[1]], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    topt = torch.optim.SGD([{"params": [ref[0]]}, {"params": [ref[1]], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    x_np = np.ones((2, 3), np.float32)
    for _ in range(3):
        for o, ps, x in ((opt, mine, tp.tensor(x_np)), (topt, ref, torch.tensor(x_np))):
            o.zero_grad()
            _loss(ps, x).backward()
            o.step()
    for p, q in zip(mine, ref):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert opt.param_groups[0]["momentum"] == 0.0
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [mine[0]]})
    extra = nn.Parameter(tp.zeros(1))
    opt.add_param_group({"params": extra, "lr": 1.0})
    assert opt.param_groups[2]["lr"] == 1.0 and opt.param_groups[2]["dampening"] == 0.0
    with pytest.raises(ValueError, match="empty parameter list"):
        tp.optim.Adam([])
    with pytest.raises(ValueError, match="non-leaf"):
        tp.optim.SGD([mine[0] * 2], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov"):
        tp.optim.SGD(mine, lr=0.1, nesterov=True)


def test_zero_grad_and_no_grad_param_skipped():
    p, q = nn.Parameter(tp.ones(2)), nn.Parameter(tp.ones(2))
    opt = tp.optim.Adam([p, q], lr=0.1)
    (p * 3).sum().backward()
    opt.step()
    assert q.grad is None and len(opt.state) == 1
    tp.testing.assert_close(q, tp.ones(2))
    opt.zero_grad(set_to_none=False)
    tp.testing.assert_close(p.grad, tp.zeros(2))
    opt.zero_grad()
    assert p.grad is None


def test_state_dict_roundtrip_resumes_identically():
    def run(opt_params, opt, steps):
        x = tp.ones(2, 3)
        for _ in range(steps):
            opt.zero_grad()
            _loss(opt_params, x).backward()
            opt.step()

    a, _ = _pair_params()
    b, _ = _pair_params()
    opt_a = tp.optim.Adam(a, lr=0.05, amsgrad=True)
    run(a, opt_a, 3)
    for pa, pb in zip(a, b):
        with tp.no_grad():
            pb.copy_(pa)
    opt_b = tp.optim.Adam(b, lr=0.9)
    opt_b.load_state_dict(opt_a.state_dict())
    assert opt_b.param_groups[0]["lr"] == 0.05
    run(a, opt_a, 2)
    run(b, opt_b, 2)
    for pa, pb in zip(a, b):
        tp.testing.assert_close(pa, pb)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt_b.load_state_dict({"state": {}, "param_groups": []})


SCHEDULES = [
    ("step", lambda m, o: m.StepLR(o, step_size=3, gamma=0.5)),
    ("cosine", lambda m, o: m.CosineAnnealingLR(o, T_max=4, eta_min=0.01)),
    ("lambda", lambda m, o: m.LambdaLR(o, lambda e: 1.0 / (1 + e))),
]


@pytest.mark.parametrize("name,make", SCHEDULES, ids=[c[0] for c in SCHEDULES])
def test_lr_schedulers_match_torch(name, make):
    opt = tp.optim.SGD([nn.Parameter(tp.zeros(1))], lr=0.2)
    topt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.2)
    s, ts = make(tp.optim.lr_scheduler, opt), make(torch.optim.lr_scheduler, topt)
    for _ in range(11):
        opt.step()
        topt.step()
        s.step()
        ts.step()
        assert math.isclose(s.get_last_lr()[0], ts.get_last_lr()[0], rel_tol=1e-9, abs_tol=1e-12)
    assert opt.param_groups[0]["lr"] == s.get_last_lr()[0]
    state = s.state_dict()
    assert state["last_epoch"] == 11 and "optimizer" not in state


def test_training_reduces_loss_and_versions_bump_under_no_grad():
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = tp.randn(32, 3)
    y = x.sum(1, keepdim=True)
    losses = []
    v0 = model[0].weight._version
    for _ in range(30):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]
    assert model[0].weight._version == v0 + 30 and model[0].weight.requires_grad


_COMPLEX_OPTIMIZERS = {
    "Adam": {"lr": 0.1, "amsgrad": True}, "AdamW": {"lr": 0.1}, "RMSprop": {"lr": 0.05, "centered": True},
    "Adagrad": {"lr": 0.1}, "Adadelta": {"lr": 1.0}, "Adamax": {"lr": 0.1}, "NAdam": {"lr": 0.1},
    "RAdam": {"lr": 0.1}, "ASGD": {"lr": 0.1}, "Rprop": {"lr": 0.1}, "SGD": {"lr": 0.1, "momentum": 0.9},
}


@pytest.mark.parametrize("name", sorted(_COMPLEX_OPTIMIZERS))
def test_a_complex_parameter_steps_as_pytorchs_real_view(name):
    """PyTorch's adaptive optimizers update a complex parameter through `view_as_real`: real and imaginary parts
    are independent reals (a squared gradient is |re|^2 and |im|^2, never a complex square)."""
    w0 = np.array([[0.5 - 1.0j, -0.25 + 0.75j], [2.0 + 0.1j, -1.5 - 0.5j]], np.complex64)
    x = np.array([[1.0 + 0.5j, -0.3 + 1.0j], [0.2 - 0.7j, 1.1 + 0.0j]], np.complex64)

    def run(lib):
        w = lib.tensor(w0, requires_grad=True)
        opt = getattr(lib.optim, name)([w], **_COMPLEX_OPTIMIZERS[name])
        for _ in range(4):
            opt.zero_grad()
            (lib.tensor(x) @ w).abs().pow(2).sum().backward()
            opt.step()
        return w.detach().numpy()

    np.testing.assert_allclose(run(tp), run(torch), rtol=2e-5, atol=2e-6)
