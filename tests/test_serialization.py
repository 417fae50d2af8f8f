"""Checkpoints: loading never runs code from the file, saving is atomic, bad files give clear errors."""

from __future__ import annotations

import os
import pickle
from collections import OrderedDict
from fractions import Fraction

import numpy as np
import pytest

import tapeflow as tp

RAN = []


def _run(msg):
    RAN.append(msg)


class _Exploit:
    """Unpickling this calls `_run` — standing for any code a crafted file could run."""

    def __reduce__(self):
        return (_run, ("code ran",))


def test_round_trip_of_a_training_checkpoint(tmp_path):
    model = tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.BatchNorm1d(4))
    opt = tp.optim.Adam(model.parameters())
    model(tp.randn(5, 3)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3, "lr": 1e-3, "name": "run",
            "dtypes": [tp.float32, tp.bfloat16], "dev": tp.device("cpu"), "ints": tp.arange(4),
            "half": tp.ones(2, dtype=tp.float16), "bf": tp.ones(2, dtype=tp.bfloat16), "mask": tp.tensor([True]),
            "c": tp.ones(1, dtype=tp.complex64), "np_scalar": np.float32(1.5), "s": {1, 2}, "od": OrderedDict(a=1)}
    path = tmp_path / "ckpt.pt"
    tp.save(ckpt, path)
    back = tp.load(path)
    assert back["epoch"] == 3 and back["dtypes"] == [tp.float32, tp.bfloat16] and back["s"] == {1, 2}
    for k, v in ckpt["model"].items():
        np.testing.assert_array_equal(back["model"][k].numpy(), v.numpy())
    assert back["bf"].dtype == tp.bfloat16 and back["mask"].dtype == tp.bool
    restored = tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.BatchNorm1d(4))
    restored.load_state_dict(back["model"])
    tp.optim.Adam(restored.parameters()).load_state_dict(back["opt"])


@pytest.mark.parametrize("hide", [lambda e: e, lambda e: {"model": {"weight": tp.ones(2), "bias": e}},
                                  lambda e: [tp.ones(1), (1, e)]])
def test_a_crafted_file_runs_nothing(tmp_path, hide):
    path = tmp_path / "evil.pt"
    with open(path, "wb") as fh:
        pickle.dump(hide(_Exploit()), fh)
    RAN.clear()
    for kwargs in ({}, {"weights_only": True}):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed.*Unsupported global"):
            tp.load(path, **kwargs)
    assert RAN == []
    with pytest.warns(UserWarning, match="weights_only=False"):
        tp.load(path, weights_only=False)  # the explicit opt-in does unpickle (and so runs the code)
    assert RAN


def test_builtins_that_run_code_are_refused(tmp_path):
    payload = b"cbuiltins\nexec\n(Vimport os\ntR."  # GLOBAL builtins.exec, then REDUCE
    path = tmp_path / "exec.pt"
    path.write_bytes(payload)
    with pytest.raises(pickle.UnpicklingError, match="builtins.exec"):
        tp.load(path)


def test_whole_modules_need_the_explicit_opt_in(tmp_path):
    path = tmp_path / "model.pt"
    tp.save(tp.nn.Linear(2, 1), path)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        tp.load(path)
    with pytest.warns(UserWarning):
        assert isinstance(tp.load(path, weights_only=False), tp.nn.Linear)


def test_safe_globals_allow_a_class(tmp_path):
    path = tmp_path / "f.pt"
    tp.save({"ratio": Fraction(1, 3)}, path)
    with pytest.raises(pickle.UnpicklingError):
        tp.load(path)
    with tp.serialization.safe_globals([Fraction]):
        assert tp.load(path)["ratio"] == Fraction(1, 3)
    assert Fraction not in tp.serialization.get_safe_globals()


def test_an_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    tp.save({"step": 1, "w": tp.ones(3)}, path)

    def crash(obj, fh, protocol=None):
        fh.write(b"\x80\x05partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(pickle, "dump", crash)
    with pytest.raises(KeyboardInterrupt):
        tp.save({"step": 2, "w": tp.zeros(3)}, path)
    monkeypatch.undo()
    assert tp.load(path)["step"] == 1
    assert os.listdir(tmp_path) == ["ckpt.pt"], "the temporary file was left behind"


@pytest.mark.parametrize("damage", [lambda b: b[: len(b) // 2], lambda b: b"not a checkpoint at all", lambda b: b""])
def test_a_truncated_or_corrupt_file_names_itself(tmp_path, damage):
    path = tmp_path / "ckpt.pt"
    tp.save({"w": tp.ones(100)}, path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(RuntimeError, match="ckpt.pt is (truncated or corrupt|corrupt)"):
        tp.load(path)


def test_views_saved_with_their_base_still_alias_it(tmp_path):
    x = tp.arange(6.0)
    path = tmp_path / "views.pt"
    tp.save({"base": x, "slice": x[1:4], "matrix": x.view(2, 3)}, path)
    loaded = tp.load(path)
    with tp.no_grad():
        loaded["base"].mul_(10.0)
    assert loaded["slice"].tolist() == [10.0, 20.0, 30.0]
    assert loaded["matrix"].tolist() == [[0.0, 10.0, 20.0], [30.0, 40.0, 50.0]]
    loaded["slice"].add_(1.0)  # and a write through a view reaches the base
    assert loaded["base"].tolist() == [0.0, 11.0, 21.0, 31.0, 40.0, 50.0]
    assert loaded["slice"]._version == loaded["base"]._version


def test_a_crafted_view_chain_is_refused(tmp_path):
    import pickle

    from tapeflow._tensor import _rebuild_view

    class Crafted:
        def __reduce__(self):
            return (_rebuild_view, (tp.ones(2), (("not_an_op", (), None),), False))

    path = tmp_path / "crafted.pt"
    path.write_bytes(pickle.dumps(Crafted()))
    with pytest.raises(RuntimeError, match="not a tensor and a chain of view ops"):
        tp.load(path)
