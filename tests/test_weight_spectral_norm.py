"""nn.utils.weight_norm and spectral_norm (PyTorch's hook-based forms): parameter and buffer names, outputs,
gradients and the power-iteration buffers equal PyTorch's given its state; removal restores a plain weight."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

CASES = {
    "weight_norm Linear": (lambda lib: lib.nn.utils.weight_norm(lib.nn.Linear(4, 3)), (5, 4)),
    "weight_norm Conv1d dim=None": (lambda lib: lib.nn.utils.weight_norm(lib.nn.Conv1d(2, 3, 3), dim=None), (2, 2, 6)),
    "weight_norm Conv2d dim=1": (lambda lib: lib.nn.utils.weight_norm(lib.nn.Conv2d(2, 3, 2), dim=1), (1, 2, 4, 4)),
    "spectral_norm Linear, 2 iterations": (lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3),
                                                                                  n_power_iterations=2), (5, 4)),
    "spectral_norm ConvTranspose2d": (lambda lib: lib.nn.utils.spectral_norm(lib.nn.ConvTranspose2d(2, 3, 2)),
                                      (1, 2, 3, 3)),
}


def _run(lib, ctor, shape, state):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        m = ctor(lib).double()
    m.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    outs = []
    for train in (True, True, False):  # two power-iteration steps, then eval (no iteration)
        m.train(train)
        x = lib.tensor(np.random.default_rng(len(outs)).normal(size=shape), requires_grad=True)
        y = m(x)
        (y * y).sum().backward()
        outs += [y.detach().numpy(), x.grad.numpy()]
    outs += [p.grad.numpy() for _, p in sorted(m.named_parameters())]
    outs += [v.numpy() for _, v in sorted(m.state_dict().items())]
    return outs, list(m.state_dict())


@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_pytorch(name):
    ctor, shape = CASES[name]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        state = {k: v.double().numpy() for k, v in ctor(torch).state_dict().items()}
    (mine, keys1), (theirs, keys2) = _run(tp, ctor, shape, state), _run(torch, ctor, shape, state)
    assert keys1 == keys2 and len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"{name}: {i}")


def test_remove_and_errors():
    U = tp.nn.utils
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        m = U.weight_norm(tp.nn.Linear(3, 2))
    w = m(tp.ones(1, 3)).detach()
    U.remove_weight_norm(m)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"] and tp.equal(m(tp.ones(1, 3)), w)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        U.remove_weight_norm(m)
    s = U.spectral_norm(tp.nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter weight"):
        U.spectral_norm(s)
    s.eval()
    y = s(tp.ones(1, 3))
    U.remove_spectral_norm(s)
    assert [n for n, _ in s.named_buffers()] == [] and np.allclose(s(tp.ones(1, 3)).detach().numpy(), y.detach().numpy())
    # the normalised weight has spectral norm ~1 after some power iterations
    s2 = U.spectral_norm(tp.nn.Linear(6, 5), n_power_iterations=30)
    s2(tp.ones(1, 6))
    assert abs(float(tp.linalg.matrix_norm(s2.weight.detach(), ord=2)) - 1.0) < 1e-3
