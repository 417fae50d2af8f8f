import numpy as np
import pytest

import tapeflow as tp


@pytest.fixture(autouse=True)
def _seed():
    tp.manual_seed(0)
    np.random.seed(0)
    yield


@pytest.fixture
def adaptive():
    """Adaptive eager on for the test (whatever the environment chose), as it was after."""
    was = tp.is_adaptive_eager_enabled()
    tp.set_adaptive_eager(True)
    yield
    tp.set_adaptive_eager(was)


@pytest.fixture
def state_walks(monkeypatch):
    """Counts the staging layer's walks over a function's state (`walks["n"]`) from now on."""
    from tapeflow._staging import state

    walks = {"n": 0}
    collect = state.collect

    def counting(*args, **kwargs):
        walks["n"] += 1
        return collect(*args, **kwargs)

    monkeypatch.setattr(state, "collect", counting)
    return walks


def pytest_configure(config):
    config.addinivalue_line("markers", "oracle: compares with PyTorch (skipped when torch is absent)")
    config.addinivalue_line("markers", "op_table: the table-driven checks of every xla_ops op (tests/op_specs.py)")
