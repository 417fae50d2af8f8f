"""`python -m tapeflow.torch`: a PyTorch program runs unchanged on tapeflow and gives PyTorch's numbers."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.torch as tt

PROGRAMS = pathlib.Path(__file__).parent / "programs"

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:  # pragma: no cover
    HAVE_TORCH = False


def _run(args) -> dict:
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_runner_runs_a_training_script_with_arguments():
    res = _run(["-m", "tapeflow.torch", str(PROGRAMS / "mlp_dataloader.py"), "--epochs", "2"])
    assert res["argv"] == ["--epochs", "2"] and len(res["losses"]) == 10 and res["grad_fn"] == "NllLossBackward0"


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch (the oracle) is not installed")
def test_the_same_script_gives_pytorchs_numbers():
    mine = _run(["-m", "tapeflow.torch", str(PROGRAMS / "mlp_dataloader.py")])
    theirs = _run([str(PROGRAMS / "mlp_dataloader.py")])
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=1e-5, atol=1e-6)
    for k, v in theirs["weights"].items():
        np.testing.assert_allclose(mine["weights"][k], v, rtol=1e-4, atol=1e-5, err_msg=k)
    assert mine["acc"] == theirs["acc"] and mine["grad_fn"] == theirs["grad_fn"]


def test_install_aliases_torch_and_names_what_is_missing():
    tt.install()
    try:
        import torch as alias
        import torch.nn.functional as F

        assert alias.Tensor is tp.Tensor and F.relu is tp.nn.functional.relu
        assert isinstance(alias.ones(2), alias.FloatTensor) and alias.__version__.startswith("2.")
        assert not hasattr(alias, "surely_not_an_api")
        with pytest.raises(tt.UnsupportedTorchAPI, match="torch.surely_not_an_api is not supported by tapeflow"):
            alias.surely_not_an_api  # noqa: B018
        with pytest.raises(ModuleNotFoundError, match="torch.surely_not_a_module is not supported"):
            import torch.surely_not_a_module  # noqa: F401
        # What programs print and compare reads as under PyTorch.
        assert str(alias.ones(2).dtype) == "torch.float32" and repr(alias.ones(2, 3).shape) == "torch.Size([2, 3])"
        assert repr(alias.channels_last) == "torch.channels_last"
    finally:
        tt.uninstall()
    assert str(tp.float32) == "tapeflow.float32" and repr(tp.ones(2).shape) == "tapeflow.Size([2])"
    assert "torch" not in sys.modules or sys.modules["torch"].__name__ == "torch" and not isinstance(
        sys.modules["torch"], tt._Alias)
    # tapeflow's own namespace is untouched: importing `torch.nn` bound nothing on tapeflow.
    assert not isinstance(tp.nn, tt._Alias) and tp.nn.init.orthogonal_.__module__ == "tapeflow.nn.init"
    assert tp.nn.functional.__name__ == "tapeflow.nn.functional"


def test_the_api_page_is_current():
    from tapeflow.torch._surface import surface_markdown

    page = (pathlib.Path(__file__).parent.parent / "docs" / "torch_api.md").read_text()
    assert page == surface_markdown(), "regenerate with: python -m tapeflow.torch --api > docs/torch_api.md"
