"""PyTorch programs in the style of public examples, run on torch and on tapeflow (`python -m tapeflow.torch`):
same losses, predictions and weights."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

PROGRAMS = pathlib.Path(__file__).parent / "programs"


def _run(args) -> dict:
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _both(name):
    return _run(["-W", "ignore", "-m", "tapeflow.torch", str(PROGRAMS / name)]), _run(["-W", "ignore",
                                                                                        str(PROGRAMS / name)])


def test_transformer_seq2seq_gives_pytorchs_numbers():
    mine, theirs = _both("transformer_seq2seq.py")
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5, atol=1e-6)
    assert mine["pred"] == theirs["pred"]
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=2e-5, err_msg=k)


def test_lbfgs_curve_fit_gives_pytorchs_numbers():
    mine, theirs = _both("lbfgs_fit.py")
    assert (mine["func_evals"], mine["n_iter"]) == (theirs["func_evals"], theirs["n_iter"])
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(mine["sigma"], theirs["sigma"], rtol=1e-6)
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-6, atol=1e-8, err_msg=k)


def test_vae_gives_pytorchs_numbers():
    mine, theirs = _both("vae.py")
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5)
    np.testing.assert_allclose(mine["kls"], theirs["kls"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mine["bce_eval"], theirs["bce_eval"], rtol=1e-5)
    np.testing.assert_allclose(mine["log_prob"], theirs["log_prob"], rtol=1e-5)
    np.testing.assert_allclose(mine["recon"], theirs["recon"], rtol=1e-5, atol=1e-6)
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1e-6, err_msg=k)


def test_dcgan_gives_pytorchs_numbers():
    mine, theirs = _both("dcgan.py")
    for k in ("errD", "errG", "D_x", "D_G_z1", "D_G_z2"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(mine["fake"], theirs["fake"], rtol=1e-4, atol=1e-7)
    assert mine["weights"].keys() == theirs["weights"].keys()
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1e-7, err_msg=k)


def test_super_resolution_gives_pytorchs_numbers():
    mine, theirs = _both("super_resolution.py")
    assert mine["ortho"] == theirs["ortho"] == {"conv1": True, "conv2": True, "conv3": True, "conv4": True}
    assert mine["gain"] == theirs["gain"]
    assert mine["shape"] == theirs["shape"] == [4, 1, 12, 12]
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5)
    np.testing.assert_allclose(mine["psnr"], theirs["psnr"], rtol=1e-5)
    np.testing.assert_allclose(mine["pred"], theirs["pred"], rtol=1e-4, atol=1e-5)
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1e-6, err_msg=k)


def test_style_transfer_net_gives_pytorchs_numbers():
    mine, theirs = _both("style_transfer_net.py")
    for k in ("content", "style", "total"):
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-5, err_msg=k)
    assert mine["shape"] == theirs["shape"] == [1, 3, 16, 16]
    # Adam's first steps are about lr * sign(grad): weights whose gradients are small move by amounts that
    # depend on float32 rounding (torch itself differs by ~3e-6 here between 1 and 2 threads).
    np.testing.assert_allclose(mine["image"], theirs["image"], rtol=1e-3, atol=1e-3)
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1.5e-5, err_msg=k)


def test_model_ensembling_gives_pytorchs_numbers():
    mine, theirs = _both("ensembling.py")
    assert mine["stacked_shapes"] == theirs["stacked_shapes"]
    for k in ("same_vs_loop", "per_vs_loop", "grads_vs_loop", "single_vs_loop"):
        assert mine[k] < 1e-5, k
    np.testing.assert_allclose(mine["same"], theirs["same"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mine["per"], theirs["per"], rtol=1e-5, atol=1e-6)
    for k, v in theirs["grads"].items():
        np.testing.assert_allclose(mine["grads"][k], v, rtol=1e-4, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(mine["new_losses"], theirs["new_losses"], rtol=1e-5)


def test_lstm_language_model_gives_pytorchs_numbers():
    mine, theirs = _both("lstm_language_model.py")
    assert mine["n_steps"] == theirs["n_steps"] == 3
    assert mine["detached"] == theirs["detached"] == [[True, True]] * 3
    assert mine["hidden_has_history"] and theirs["hidden_has_history"]
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5)
    np.testing.assert_allclose(mine["norms"], theirs["norms"], rtol=1e-5)
    np.testing.assert_allclose(mine["val_loss"], theirs["val_loss"], rtol=1e-5)
    np.testing.assert_allclose(mine["ppl"], theirs["ppl"], rtol=1e-5)
    assert mine["generated"] == theirs["generated"]
    np.testing.assert_allclose(mine["hidden"], theirs["hidden"], rtol=1e-4, atol=1e-6)
    assert mine["weights"].keys() == theirs["weights"].keys()
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1e-6, err_msg=k)


def test_gru_seq2seq_attention_gives_pytorchs_numbers():
    mine, theirs = _both("gru_seq2seq_attention.py")
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5)
    assert mine["decoded_shape"] == theirs["decoded_shape"] == [5, 6]
    assert mine["decoded"] == theirs["decoded"]
    np.testing.assert_allclose(mine["log_probs"], theirs["log_probs"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mine["attn"], theirs["attn"], rtol=1e-4, atol=1e-6)
    assert mine["weights"].keys() == theirs["weights"].keys()
    for k, v in theirs["weights"].items():
        if k == "decoder.attention.Va.bias":
            # softmax is shift-invariant, so Va's bias gets a gradient that is zero up to rounding, which Adam
            # turns into steps of up to lr (0.01) of either sign in any two libraries (or thread counts)
            np.testing.assert_allclose(mine["weights"][k], v, atol=2 * 0.01 + 1e-6, err_msg=k)
            continue
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=2e-6, err_msg=k)


def test_char_rnn_classifier_gives_pytorchs_numbers():
    mine, theirs = _both("char_rnn_classifier.py")
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5)
    np.testing.assert_allclose(mine["losses_nn"], theirs["losses_nn"], rtol=1e-5)
    assert mine["preds"] == theirs["preds"]
    assert mine["preds_nn"] == theirs["preds_nn"]
    np.testing.assert_allclose(mine["outputs"], theirs["outputs"], rtol=1e-5, atol=1e-6)
    assert mine["weights"].keys() == theirs["weights"].keys()
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1e-6, err_msg=k)


def test_a_torch_compiled_model_trained_outside_gives_pytorchs_numbers():
    mine, theirs = _both("compiled_lm.py")
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5)
    np.testing.assert_allclose(mine["norms"], theirs["norms"], rtol=1e-4)
    assert mine["sample"] == theirs["sample"] and mine["names"] == theirs["names"] and mine["keys"] == theirs["keys"]
    np.testing.assert_allclose(mine["pmax"], theirs["pmax"], rtol=1e-5)
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1e-6, err_msg=k)
