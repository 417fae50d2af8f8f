"""`optim.swa_utils` (AveragedModel, SWALR, update_bn, the averaging rules) and `optim.SparseAdam`, against
PyTorch given the same weights."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _sparse_adam(m, maximize=False):
    rng = np.random.default_rng(0)
    emb = m.nn.Embedding(6, 3, sparse=True)
    with m.no_grad():
        emb.weight.copy_(m.tensor(rng.normal(size=(6, 3)), dtype=m.float32))
    opt = m.optim.SparseAdam(emb.parameters(), lr=0.05, betas=(0.8, 0.99), maximize=maximize)
    for idx in ([0, 2], [2, 3], [5, 5, 1], [0]):
        opt.zero_grad()
        (emb(m.tensor(idx)) ** 2).sum().backward()
        opt.step()
    return emb.weight.detach().numpy(), opt.state[emb.weight]["exp_avg_sq"].numpy()


@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_updates_the_rows_it_is_given(maximize):
    for mine, theirs in zip(_sparse_adam(tp, maximize), _sparse_adam(torch, maximize)):
        if theirs.dtype == object or not hasattr(theirs, "shape"):
            continue
        np.testing.assert_allclose(mine, theirs.to_dense() if hasattr(theirs, "to_dense") else theirs,
                                   rtol=1e-5, atol=1e-6)


def _swa(m, strategy):
    rng = np.random.default_rng(1)
    model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.ReLU(), m.nn.Linear(4, 1))
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rng.normal(size=tuple(p.shape)), dtype=m.float32))
    swa = m.optim.swa_utils.AveragedModel(model)
    ema = m.optim.swa_utils.AveragedModel(model, multi_avg_fn=m.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    ema_one = m.optim.swa_utils.AveragedModel(model, avg_fn=m.optim.swa_utils.get_ema_avg_fn(0.8), use_buffers=True)
    sgd = m.optim.SGD(model.parameters(), lr=0.5)
    sched = m.optim.swa_utils.SWALR(sgd, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy)
    lrs = []
    x = m.tensor(rng.normal(size=(8, 3)), dtype=m.float32)
    for _ in range(5):
        sgd.zero_grad()
        model(x).pow(2).mean().backward()
        sgd.step()
        for avg in (swa, ema, ema_one):
            avg.update_parameters(model)
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    m.optim.swa_utils.update_bn([x[:4], (x[4:], None)], swa)
    bn = swa.module[1]
    return [np.array(lrs), swa(x).detach().numpy(), ema(x).detach().numpy(), ema_one(x).detach().numpy(),
            bn.running_mean.numpy(), bn.running_var.numpy(), np.array(int(swa.n_averaged))]


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swa_ema_swalr_and_update_bn_are_pytorchs(strategy):
    for mine, theirs in zip(_swa(tp, strategy), _swa(torch, strategy)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_bad_arguments():
    opt = tp.optim.SGD([tp.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear'"):
        tp.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        tp.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="Invalid decay value"):
        tp.optim.swa_utils.get_ema_avg_fn(2.0)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        tp.optim.SparseAdam([tp.zeros(1, requires_grad=True)], lr=-1)
