"""Seeded PyTorch programs (initialisation, data, dropout, shuffling and sampling all drawn from
`torch.manual_seed`) give PyTorch's numbers on tapeflow: same losses, same sampled tokens."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest

pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

PROGRAMS = pathlib.Path(__file__).parent / "programs"


def _run(args) -> dict:
    out = subprocess.run([sys.executable, "-W", "ignore", *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="on an accelerator, dropout draws from the device's generator")
@pytest.mark.parametrize("name", ["seeded_word_lm.py", "seeded_mingpt.py", "seeded_mnist_cnn.py", "seeded_vae.py"])
def test_seeded_program_gives_pytorchs_numbers(name):
    mine = _run(["-m", "tapeflow.torch", str(PROGRAMS / name)])
    theirs = _run([str(PROGRAMS / name)])
    assert mine.keys() == theirs.keys()
    for key, expected in theirs.items():
        got = np.asarray(mine[key], dtype=np.float64)
        expected = np.asarray(expected, dtype=np.float64)
        assert got.shape == expected.shape, key
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=key)
