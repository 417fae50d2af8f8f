"""More PyTorch programs in the style of public examples (nanoGPT, REINFORCE, regression, LSTMCell
sequence prediction), run on torch and on tapeflow (`python -m tapeflow.torch`), plus focused checks of
the API they rely on."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

import tapeflow as tp  # noqa: E402

PROGRAMS = pathlib.Path(__file__).parent / "programs"


def _run(args) -> dict:
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _both(name):
    return (_run(["-W", "ignore", "-m", "tapeflow.torch", str(PROGRAMS / name)]),
            _run(["-W", "ignore", str(PROGRAMS / name)]))


def test_nanogpt_style_gives_pytorchs_numbers():
    mine, theirs = _both("nanogpt_style.py")
    assert mine["lrs"] == theirs["lrs"]
    for flash in ("True", "False"):
        for k in ("tied", "n_params", "cproj_std_small", "groups", "grad_none", "ck_iter", "opt_steps", "crop",
                  "gen", "gen_crop"):
            assert mine[f"{k}_{flash}"] == theirs[f"{k}_{flash}"], k
        for k in ("losses", "norms", "crop_logits"):
            np.testing.assert_allclose(mine[f"{k}_{flash}"], theirs[f"{k}_{flash}"], rtol=1e-5, atol=2e-6, err_msg=k)
        for split in ("train", "val"):
            np.testing.assert_allclose(mine[f"eval_{flash}"][split], theirs[f"eval_{flash}"][split], rtol=1e-5)
        for k, v in theirs[f"weights_{flash}"].items():
            np.testing.assert_allclose(mine[f"weights_{flash}"][k], v, rtol=1e-4, atol=2e-6, err_msg=k)
    assert mine["tied_True"] is True and mine["groups_True"][-1] is True



def test_reinforce_policy_gives_pytorchs_numbers():
    mine, theirs = _both("reinforce_policy.py")
    assert mine["empty"] == theirs["empty"] == [0, 0]
    np.testing.assert_allclose(mine["running"], theirs["running"], rtol=1e-12)
    for k in ("losses", "value_losses", "entropy", "probs"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-5, atol=2e-6, err_msg=k)
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-5, atol=1e-6, err_msg=k)


def test_poly_regression_gives_pytorchs_numbers():
    mine, theirs = _both("poly_regression.py")
    assert (mine["desc"], mine["target"], mine["batches"]) == (theirs["desc"], theirs["target"], theirs["batches"])
    for k in ("losses", "weight", "bias", "grad"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_time_sequence_lstmcell_gives_pytorchs_numbers():
    mine, theirs = _both("time_sequence_lstmcell.py")
    assert mine["shape"] == theirs["shape"] == [2, 34]
    assert mine["dtype"].rsplit(".", 1)[-1] == theirs["dtype"].rsplit(".", 1)[-1] == "float64"
    assert len(mine["losses"]) == len(theirs["losses"])
    for k in ("losses", "test_losses", "pred", "lin"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-9, atol=1e-12, err_msg=k)


def test_forward_forward_and_hessian_power_iteration_give_pytorchs_numbers():
    mine, theirs = _both("forward_forward_hessian.py")
    assert mine["pred"] == theirs["pred"]
    assert mine["err"] == theirs["err"]
    for k in ("losses", "w"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)
    for k in ("eig", "history", "trace"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=2e-5, atol=1e-5, err_msg=k)

def test_clip_grad_norm_clips_parameters_given_as_a_generator():
    lin = tp.nn.Linear(3, 2)
    lin.weight.grad = tp.full((2, 3), 3.0)
    lin.bias.grad = tp.full((2,), 4.0)
    total = tp.nn.utils.clip_grad_norm_(lin.parameters(), 1.0)
    ref = torch.nn.Linear(3, 2)
    ref.weight.grad = torch.full((2, 3), 3.0)
    ref.bias.grad = torch.full((2,), 4.0)
    total_ref = torch.nn.utils.clip_grad_norm_(ref.parameters(), 1.0)
    np.testing.assert_allclose(float(total), float(total_ref), rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(lin.bias.grad.numpy(), ref.bias.grad.numpy(), rtol=1e-6)


def _scaler_run(lib, scaler_kwargs, grads_inf_at):
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5]))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **scaler_kwargs)
    scales, weights = [], []
    for it in range(5):
        with lib.amp.autocast(device_type="cpu", dtype=lib.bfloat16, enabled=False):
            loss = (w * w * lib.tensor([1.0, 2.0, 3.0])).sum()
        if it == grads_inf_at:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        scales.append(scaler.get_scale())
        weights.append(w.detach().tolist())
    return scales, weights, scaler.state_dict()


@pytest.mark.parametrize("kwargs", [dict(enabled=False), dict(init_scale=8.0, growth_interval=2),
                                    dict(init_scale=2.0 ** 10, growth_factor=3.0, backoff_factor=0.25,
                                         growth_interval=1)])
def test_grad_scaler_matches_pytorch(kwargs):
    mine = _scaler_run(tp, kwargs, grads_inf_at=2)
    theirs = _scaler_run(torch, kwargs, grads_inf_at=2)
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-6)
    assert mine[2].keys() == theirs[2].keys()
    for k in theirs[2]:
        assert float(mine[2][k]) == float(theirs[2][k]), k


def test_grad_scaler_errors_and_autocast_decorator():
    w = tp.nn.Parameter(tp.tensor([1.0]))
    opt = tp.optim.SGD([w], lr=0.1)
    scaler = tp.amp.GradScaler("cpu")
    scaler.scale((w * 2).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)

    @tp.amp.autocast(device_type="cpu", enabled=False)
    def f(x):
        return x * 2

    assert f(tp.tensor([1.0])).tolist() == [2.0]
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        with tp.amp.autocast(device_type="cpu", dtype=tp.float32):
            assert (tp.ones(2, 2) @ tp.ones(2, 2)).dtype == tp.float32 and not tp.is_autocast_enabled("cpu")
    with tp.amp.autocast(device_type="cpu", dtype=tp.bfloat16):
        assert (tp.ones(2, 2) @ tp.ones(2, 2)).dtype == tp.bfloat16


def test_autocast_spellings_and_custom_fwd_bwd():
    assert tp.autocast is tp.amp.autocast
    with tp.autocast("cpu", enabled=False):
        y = tp.ones(2) * 3

    class Double(tp.autograd.Function):
        @staticmethod
        @tp.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @tp.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g * 2

    x = tp.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and y.tolist() == [3.0, 3.0]
    cast = tp.amp.custom_fwd(lambda x: (x @ x, x.dtype), device_type="cpu", cast_inputs=tp.float32)
    with tp.autocast("cpu"):
        out, seen = cast(tp.ones(2, 2, dtype=tp.bfloat16))
    assert seen == out.dtype == tp.float32  # (inputs cast, and the body runs with autocast off)


def test_sdp_backend_switches_are_recorded():
    assert tp.backends.cuda.flash_sdp_enabled() is torch.backends.cuda.flash_sdp_enabled() is True
    tp.backends.cuda.enable_flash_sdp(False)
    tp.backends.cuda.enable_math_sdp(True)
    try:
        assert tp.backends.cuda.flash_sdp_enabled() is False
        assert tp.backends.cuda.math_sdp_enabled() is True
        assert tp.backends.cuda.mem_efficient_sdp_enabled() is True
    finally:
        tp.backends.cuda.enable_flash_sdp(True)
