import numpy as np
import pytest

import tapeflow as tp


@pytest.fixture(autouse=True)
def _seed():
    tp.manual_seed(0)
    np.random.seed(0)
    yield


def pytest_configure(config):
    config.addinivalue_line("markers", "oracle: compares with PyTorch (skipped when torch is absent)")
    config.addinivalue_line("markers", "op_table: the table-driven checks of every xla_ops op (tests/op_specs.py)")
