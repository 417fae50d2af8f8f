"""Every learning-rate schedule gives PyTorch's sequence of learning rates (and momenta, for the cyclic ones)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

S = "optim.lr_scheduler"
CASES = {
    "MultiStepLR": ("SGD", lambda L, o: L.MultiStepLR(o, milestones=[3, 7, 7], gamma=0.5)),
    "ConstantLR": ("SGD", lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=4)),
    "LinearLR": ("SGD", lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6)),
    "ExponentialLR": ("SGD", lambda L, o: L.ExponentialLR(o, gamma=0.9)),
    "PolynomialLR": ("SGD", lambda L, o: L.PolynomialLR(o, total_iters=8, power=2.0)),
    "MultiplicativeLR": ("SGD", lambda L, o: L.MultiplicativeLR(o, lambda e: 0.95)),
    "SequentialLR": ("SGD", lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=4),
                                                            L.CosineAnnealingLR(o, T_max=10)], milestones=[4])),
    "SequentialLR-step": ("SGD", lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=3),
                                                                 L.StepLR(o, 3, 0.5)], milestones=[5])),
    "ChainedScheduler": ("SGD", lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, total_iters=3),
                                                                 L.ExponentialLR(o, gamma=0.9)])),
    "OneCycleLR": ("SGD", lambda L, o: L.OneCycleLR(o, max_lr=1.0, total_steps=20)),
    "OneCycleLR-adam-3phase": ("Adam", lambda L, o: L.OneCycleLR(o, max_lr=0.5, epochs=4, steps_per_epoch=5,
                                                                 three_phase=True, anneal_strategy="linear")),
    "CyclicLR": ("SGD", lambda L, o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=2)),
    "CyclicLR-exp": ("SGD", lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.9)),
    "CyclicLR-tri2": ("Adam", lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="triangular2")),
    "CosineAnnealingWarmRestarts": ("SGD", lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                                       eta_min=0.01)),
}
METRICS = [1.0, 0.9, 0.9, 0.95, 0.91, 0.9, 0.89, 0.89, 0.89, 0.89, 0.5, 0.5, 0.5, 0.5]


def _trace(lib, opt_name, build, steps=20):
    w = lib.zeros(2, requires_grad=True)
    kw = dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.1)
    opt = getattr(lib.optim, opt_name)([w], **kw)
    sched = build(lib.optim.lr_scheduler, opt)
    out = []
    for _ in range(steps - 1):
        opt.step()
        sched.step()
        g = opt.param_groups[0]
        out.append((sched.get_last_lr()[0], g.get("momentum", g.get("betas", (0,))[0])))
    return np.array(out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_equals_pytorch(name):
    opt_name, build = CASES[name]
    np.testing.assert_allclose(_trace(tp, opt_name, build), _trace(torch, opt_name, build), rtol=1e-12, atol=1e-15)


def test_reduce_on_plateau_equals_pytorch():
    def run(lib):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, cooldown=1, factor=0.5, min_lr=0.1)
        lrs = []
        for m in METRICS:
            sched.step(m)
            lrs.append(opt.param_groups[0]["lr"])
        return lrs

    assert run(tp) == run(torch)


def _resume_run(L, make_sched, steps=10, resume_at=4):
    """lrs of a run whose optimizer and scheduler are rebuilt from their state dicts (through save/load) midway."""
    import io

    p = [L.nn.Parameter(L.zeros(1))]
    opt = L.optim.AdamW(p, lr=0.01)
    sched = make_sched(L, opt)
    lrs = []
    for i in range(steps):
        opt.step()
        sched.step()
        lrs.append(round(opt.param_groups[0]["lr"], 8))
        if i == resume_at:
            buf = io.BytesIO()
            L.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, buf)
            buf.seek(0)
            ck = L.load(buf, weights_only=False)
            opt = L.optim.AdamW(p, lr=0.01)
            opt.load_state_dict(ck["opt"])
            sched = make_sched(L, opt)
            sched.load_state_dict(ck["sched"])
    return lrs


_RESUMED = {
    "sequential": lambda L, o: L.optim.lr_scheduler.SequentialLR(
        o, [L.optim.lr_scheduler.LinearLR(o, 0.1, 1.0, total_iters=3), L.optim.lr_scheduler.ExponentialLR(o, 0.9)],
        milestones=[3]),
    "chained": lambda L, o: L.optim.lr_scheduler.ChainedScheduler(
        [L.optim.lr_scheduler.ConstantLR(o, 0.5, total_iters=6), L.optim.lr_scheduler.ExponentialLR(o, 0.9)]),
    "cyclic": lambda L, o: L.optim.lr_scheduler.CyclicLR(o, 0.001, 0.01, step_size_up=2, mode="triangular2",
                                                         cycle_momentum=False),
}


@pytest.mark.parametrize("name", list(_RESUMED))
def test_composite_and_cyclic_schedulers_resume_from_their_state_dicts(name):
    lrs = _resume_run(tp, _RESUMED[name])
    assert len(set(lrs[5:])) > 1, "after resuming, the scheduler must keep changing the new optimizer's lr"
    np.testing.assert_allclose(lrs, _resume_run(torch, _RESUMED[name]), rtol=1e-6)


def _trained(lib, make_opt, make_sched, closure=False):
    """A few steps of `make_opt` (and `make_sched`) on a small quadratic: the parameters, the learning rates,
    and the keys of the optimizer's and scheduler's state dicts."""
    w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3)))
    b = lib.nn.Parameter(lib.tensor(np.array([0.3, -0.2])))
    opt = make_opt(lib, [w, b])
    sched = make_sched(lib, opt) if make_sched else None
    lrs = []
    for _ in range(6):
        def loss():
            opt.zero_grad()
            out = ((w @ lib.tensor(np.array([1.0, 2.0, -1.0])) + b) ** 2).sum() + (w ** 4).sum()
            out.backward()
            return out
        opt.step(loss) if closure else (loss(), opt.step())
        if sched is not None:
            sched.step(1.0) if isinstance(sched, lib.optim.lr_scheduler.ReduceLROnPlateau) else sched.step()
            lrs.append(opt.param_groups[0]["lr"])
    sd = opt.state_dict()
    return (w.detach().numpy(), b.detach().numpy(), lrs, sorted(sd["state"].get(0, {})), sorted(sd["param_groups"][0]),
            sorted(sched.state_dict()) if sched is not None else [])


_S = "lr_scheduler"
STATE_KEYS = {
    "LBFGS": (lambda L, p: L.optim.LBFGS(p, lr=0.5, history_size=3, max_iter=5), None, True),
    "OneCycleLR": (lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9),
                   lambda L, o: getattr(L.optim, _S).OneCycleLR(o, 1.0, total_steps=10), False),
    "OneCycleLR three-phase Adam": (lambda L, p: L.optim.Adam(p, lr=0.1),
                                    lambda L, o: getattr(L.optim, _S).OneCycleLR(o, 0.5, total_steps=8,
                                                                                 three_phase=True), False),
    "CyclicLR": (lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9),
                 lambda L, o: getattr(L.optim, _S).CyclicLR(o, 0.01, 0.1, step_size_up=2), False),
    "CyclicLR without momentum": (lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda L, o: getattr(L.optim, _S).CyclicLR(o, 0.01, 0.1, cycle_momentum=False),
                                  False),
    "ReduceLROnPlateau": (lambda L, p: L.optim.SGD(p, lr=0.1),
                          lambda L, o: getattr(L.optim, _S).ReduceLROnPlateau(o, patience=1), False),
    "CosineAnnealingWarmRestarts": (lambda L, p: L.optim.SGD(p, lr=0.1),
                                    lambda L, o: getattr(L.optim, _S).CosineAnnealingWarmRestarts(o, 2, 2), False),
    "StepLR": (lambda L, p: L.optim.SGD(p, lr=0.1), lambda L, o: getattr(L.optim, _S).StepLR(o, 2, 0.5), False),
}


@pytest.mark.parametrize("name", list(STATE_KEYS))
def test_state_dict_keys_and_steps_match_pytorch(name):
    """The same parameters and learning rates as PyTorch's, and state dicts with PyTorch's keys (a checkpoint's
    structure, including the schedulers' private flags and LBFGS's kept coefficients)."""
    make_opt, make_sched, closure = STATE_KEYS[name]
    mine, theirs = _trained(tp, make_opt, make_sched, closure), _trained(torch, make_opt, make_sched, closure)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-10)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-10)
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-12)
    assert mine[3:] == theirs[3:]


def test_get_lr_outside_step_warns_as_pytorch():
    opt = tp.optim.SGD([tp.zeros(1, requires_grad=True)], lr=1.0)
    sched = tp.optim.lr_scheduler.StepLR(opt, 1)
    with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
        sched.get_lr()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
        tp.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 2).step()
