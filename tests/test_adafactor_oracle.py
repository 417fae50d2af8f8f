"""Adafactor: parameters and state after several steps equal PyTorch's (`torch.optim.Adafactor` as the oracle)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

SHAPES = [(5,), (3, 4), (2, 3, 4), ()]  # vector, matrix, 3-d (factored over the last two), scalar
CONFIGS = [
    dict(),
    dict(lr=0.05, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5, weight_decay=0.1),
    dict(lr=0.6, beta2_decay=-1.0, eps=(None, 0.5), d=4.0, maximize=True),  # rho = 1 / sqrt(t) from t = 3
]
RTOL, ATOL = 1e-6, 1e-6


def _grads(shapes, steps, seed=1, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [[rng.normal(size=s).astype(dtype) for s in shapes] for _ in range(steps)]


def _params(lib, shapes, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [lib.nn.Parameter(lib.tensor(rng.normal(size=s).astype(dtype))) for s in shapes]


def _feed(lib, opt, params, grads):
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = None if g is None else lib.tensor(g)
        opt.step()


def _assert_same(mine_opt, mine, their_opt, theirs):
    for p, q in zip(mine, theirs):
        a, b = p.detach().numpy(), q.detach().numpy()
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
    my_sd, their_sd = mine_opt.state_dict(), their_opt.state_dict()
    assert sorted(my_sd["state"]) == sorted(their_sd["state"])
    for i, their_state in their_sd["state"].items():
        my_state = my_sd["state"][i]
        assert sorted(my_state) == sorted(their_state)
        for k, v in their_state.items():
            a, b = my_state[k].numpy(), v.numpy()
            assert a.shape == b.shape and a.dtype == b.dtype, (i, k, a.shape, b.shape, a.dtype, b.dtype)
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"state {i}.{k}")
    assert my_sd["param_groups"] == their_sd["param_groups"]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=[f"config{i}" for i in range(len(CONFIGS))])
def test_steps_equal_pytorch(kwargs):
    grads = _grads(SHAPES, 6)
    mine, theirs = _params(tp, SHAPES), _params(torch, SHAPES)
    my_opt, their_opt = tp.optim.Adafactor(mine, **kwargs), torch.optim.Adafactor(theirs, **kwargs)
    _feed(tp, my_opt, mine, grads)
    _feed(torch, their_opt, theirs, grads)
    _assert_same(my_opt, mine, their_opt, theirs)
    assert float(my_opt.state[mine[1]]["step"]) == 6.0
    assert sorted(my_opt.state[mine[0]]) == ["step", "variance"] == sorted(my_opt.state[mine[3]])
    assert sorted(my_opt.state[mine[2]]) == ["col_var", "row_var", "step"]
    assert tuple(my_opt.state[mine[2]]["row_var"].shape) == (2, 3, 1)
    assert tuple(my_opt.state[mine[2]]["col_var"].shape) == (2, 1, 4)


def test_params_without_grad_are_skipped():
    shapes = [(3, 4), (4,), (2, 2)]
    grads = _grads(shapes, 6, seed=2)
    for i, gs in enumerate(grads):
        gs[2] = None  # never a gradient: no state, no change
        if i % 2:
            gs[1] = None  # every other step: its counter lags
    runs = []
    for lib in (tp, torch):
        params = _params(lib, shapes, seed=3)
        opt = lib.optim.Adafactor(params, lr=0.1, weight_decay=0.05)
        _feed(lib, opt, params, grads)
        runs.append((opt, params))
    (my_opt, mine), (their_opt, theirs) = runs
    _assert_same(my_opt, mine, their_opt, theirs)
    assert mine[2] not in my_opt.state and 2 not in my_opt.state_dict()["state"]
    np.testing.assert_array_equal(mine[2].detach().numpy(), _params(tp, shapes, seed=3)[2].detach().numpy())
    assert float(my_opt.state[mine[1]]["step"]) == 3.0


def test_param_groups_and_tensor_lr_and_float64():
    shapes = [(3, 4), (4,)]
    grads = _grads(shapes, 5, seed=4, dtype=np.float64)
    runs = []
    for lib in (tp, torch):
        a, b = _params(lib, shapes, seed=5, dtype=np.float64)
        # a tensor lr stays a tensor in PyTorch (its float32 enters the step's arithmetic) until 1 / sqrt(t) < lr
        opt = lib.optim.Adafactor([{"params": [a]}, {"params": [b], "lr": lib.tensor(0.05), "weight_decay": 0.1}],
                                  lr=lib.tensor(0.6), weight_decay=0.02)
        _feed(lib, opt, [a, b], grads)
        runs.append((opt, [a, b]))
    (my_opt, mine), (their_opt, theirs) = runs
    for p, q in zip(mine, theirs):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-13)
    for s, t in zip(my_opt.state.values(), their_opt.state.values()):
        for k in t:
            np.testing.assert_allclose(s[k].numpy(), t[k].numpy(), rtol=1e-12, atol=1e-13)


def _to_tp(sd):
    def conv(v):
        return tp.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v
    return {"state": {i: {k: conv(v) for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": [dict(g) for g in sd["param_groups"]]}


def test_state_dict_round_trip_and_pytorch_state_dict_continue_identically():
    kwargs = dict(lr=0.05, weight_decay=0.1, eps=(1e-3, 1e-3))
    grads = _grads(SHAPES, 6, seed=6)
    mine, theirs = _params(tp, SHAPES), _params(torch, SHAPES)
    my_opt, their_opt = tp.optim.Adafactor(mine, **kwargs), torch.optim.Adafactor(theirs, **kwargs)
    _feed(tp, my_opt, mine, grads[:3])
    _feed(torch, their_opt, theirs, grads[:3])

    # tapeflow -> tapeflow: a fresh optimizer over copies of the parameters continues as the original
    copies = [tp.nn.Parameter(p.detach().clone()) for p in mine]
    resumed = tp.optim.Adafactor(copies)
    resumed.load_state_dict(my_opt.state_dict())
    assert resumed.param_groups[0]["lr"] == 0.05
    # PyTorch -> tapeflow: PyTorch's state dict (its tensors as tapeflow tensors) continues as PyTorch does
    from_torch = [tp.nn.Parameter(tp.tensor(q.detach().numpy())) for q in theirs]
    imported = tp.optim.Adafactor(from_torch)
    imported.load_state_dict(_to_tp(their_opt.state_dict()))
    assert imported.state[from_torch[1]]["step"].dtype == tp.float32

    _feed(tp, my_opt, mine, grads[3:])
    _feed(tp, resumed, copies, grads[3:])
    _feed(tp, imported, from_torch, grads[3:])
    _feed(torch, their_opt, theirs, grads[3:])
    for p, q in zip(mine, copies):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    _assert_same(resumed, copies, their_opt, theirs)
    _assert_same(imported, from_torch, their_opt, theirs)


BAD = [dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1.0, 1e-3)), dict(eps=(None, -1e-3)), dict(d=0.5),
       dict(weight_decay=-0.1), dict(lr="tensor2")]


@pytest.mark.parametrize("kwargs", BAD, ids=[next(iter(k)) + str(i) for i, k in enumerate(BAD)])
def test_bad_arguments_raise_as_pytorch(kwargs):
    def make(lib):
        kw = {k: (lib.tensor([0.1, 0.2]) if v == "tensor2" else v) for k, v in kwargs.items()}
        return lib.optim.Adafactor([lib.nn.Parameter(lib.ones(2))], **kw)

    with pytest.raises(Exception) as theirs:
        make(torch)
    with pytest.raises(type(theirs.value)) as mine:
        make(tp)
    assert type(mine.value) is type(theirs.value) and str(mine.value) == str(theirs.value)


def test_complex_parameters_are_refused_as_pytorch():
    def step(lib):
        p = lib.nn.Parameter(lib.tensor([1.0 + 1.0j, 2.0 - 1.0j]))
        p.grad = lib.tensor([1.0 + 0.0j, 0.5 + 0.5j])
        lib.optim.Adafactor([p]).step()

    with pytest.raises(Exception) as theirs:
        step(torch)
    with pytest.raises(type(theirs.value)) as mine:
        step(tp)
    assert str(mine.value) == str(theirs.value)
