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
