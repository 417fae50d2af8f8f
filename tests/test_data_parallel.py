"""`nn.DataParallel`: PyTorch's wrapper (`.module`, `module.`-prefixed state dicts, device ids), whose calls
give the wrapped module's outputs and gradients, as PyTorch's do on one device."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _run(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
    dp = lib.nn.DataParallel(net)
    opt = lib.optim.SGD(dp.parameters(), lr=0.1)
    x, y = lib.randn(8, 3), lib.randn(8, 1)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = ((dp(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    state = {k: np.asarray(v.tolist()) for k, v in dp.state_dict().items()}
    return dp, losses, state


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="compares with PyTorch's wrapper on a machine without GPUs")
def test_wraps_and_trains_as_pytorchs_on_one_device():
    (mine, my_losses, my_state), (theirs, their_losses, their_state) = _run(tp), _run(torch)
    assert mine.device_ids == theirs.device_ids == []
    assert list(my_state) == list(their_state) and list(my_state)[0] == "module.0.weight"
    np.testing.assert_allclose(my_losses, their_losses, rtol=1e-5)
    for k in my_state:
        np.testing.assert_allclose(my_state[k], their_state[k], rtol=1e-5, atol=1e-6, err_msg=k)
    # a checkpoint saved from a wrapped PyTorch model loads into a wrapped tapeflow model
    fresh = tp.nn.DataParallel(tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.BatchNorm1d(4), tp.nn.ReLU(),
                                                tp.nn.Linear(4, 1)))
    fresh.load_state_dict({k: tp.tensor(v) for k, v in their_state.items()})
    assert isinstance(fresh.module, tp.nn.Sequential) and tp.nn.parallel.DataParallel is tp.nn.DataParallel
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        tp.nn.parallel.data_parallel(mine.module, tp.ones(2, 3))
