"""Printing: PyTorch's layout for a table of tensors, compared string for string."""

import numpy as np
import pytest

import tapeflow as tp


def _hidden_small():
    a = np.ones((40, 40), dtype=np.float32)
    a[20, 20] = 1e-6  # not among the shown elements, so it must not switch on scientific notation
    return a


def _hidden_small_1d():
    a = np.full(1500, 0.5, dtype=np.float32)
    a[700] = 1e9
    return a


# name: (array, the string PyTorch 2.13 prints, with "torch." written "tapeflow.")
CASES = {
    "sci, signs aligned": (np.array([0.0, 1.0, -7.24e-06], np.float32),
                           "tensor([ 0.0000e+00,  1.0000e+00, -7.2400e-06])"),
    "sci, large": (np.array([1e10, 1.0, -3.0], np.float32), "tensor([ 1.0000e+10,  1.0000e+00, -3.0000e+00])"),
    "integral floats": (np.array([1.0, 2.0, -30.0], np.float32), "tensor([  1.,   2., -30.])"),
    "integral floats, sci": (np.array([1.0, 20000.0], np.float32), "tensor([1.0000e+00, 2.0000e+04])"),
    "fixed": (np.array([0.5, -1.25, 100.125], np.float32), "tensor([  0.5000,  -1.2500, 100.1250])"),
    "nan and inf": (np.array([np.nan, np.inf, 1.5, -2.0], np.float32), "tensor([    nan,     inf,  1.5000, -2.0000])"),
    "nan and inf, integral": (np.array([np.nan, np.inf, 1.0], np.float32), "tensor([nan, inf, 1.])"),
    "zeros": (np.zeros(2, np.float32), "tensor([0., 0.])"),
    "scalar": (np.array(3.14159, np.float32), "tensor(3.1416)"),
    "scalar, tiny": (np.array(1e-8, np.float32), "tensor(1.0000e-08)"),
    "ints": (np.array([1, -200, 3]), "tensor([   1, -200,    3])"),
    "bools": (np.array([True, False]), "tensor([ True, False])"),
    "2-d, sci": (np.array([[1e-5, 1.0], [250.0, -3.0]], np.float32),
                 "tensor([[ 1.0000e-05,  1.0000e+00],\n        [ 2.5000e+02, -3.0000e+00]])"),
    "3-d": (np.array([[[1.0, 2.5], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], np.float32),
            "tensor([[[1.0000, 2.5000],\n         [3.0000, 4.0000]],\n\n        [[5.0000, 6.0000],\n         [7.0000, 8.0000]]])"),
    "a row that wraps": (np.arange(12, dtype=np.float32) * 1e4 + 1,
                         "tensor([1.0000e+00, 1.0001e+04, 2.0001e+04, 3.0001e+04, 4.0001e+04, 5.0001e+04,\n"
                         "        6.0001e+04, 7.0001e+04, 8.0001e+04, 9.0001e+04, 1.0000e+05, 1.1000e+05])"),
    "summarized, hidden small value": (_hidden_small(),
                                       "tensor([[1., 1., 1.,  ..., 1., 1., 1.],\n"
                                       "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
                                       "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
                                       "        ...,\n"
                                       "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
                                       "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
                                       "        [1., 1., 1.,  ..., 1., 1., 1.]])"),
    "summarized 1-d, hidden large value": (_hidden_small_1d(),
                                           "tensor([0.5000, 0.5000, 0.5000,  ..., 0.5000, 0.5000, 0.5000])"),
    "summarized ints": (np.arange(1200), "tensor([   0,    1,    2,  ..., 1197, 1198, 1199])"),
    "float16": (np.array([0.1, 1.5, 1e-5], np.float16),
                "tensor([9.9976e-02, 1.5000e+00, 1.0014e-05], dtype=tapeflow.float16)"),
    "float64": (np.array([1 / 3, 2.0]), "tensor([0.3333, 2.0000], dtype=tapeflow.float64)"),
    "empty": (np.zeros(0, np.float32), "tensor([])"),
    "empty int64": (np.zeros(0, np.int64), "tensor([], dtype=tapeflow.int64)"),
    "empty bool": (np.zeros(0, bool), "tensor([], dtype=tapeflow.bool)"),
    "empty 2-d int64": (np.zeros((0, 3), np.int64), "tensor([], size=(0, 3), dtype=tapeflow.int64)"),
    "empty 2-d": (np.zeros((2, 0), np.float32), "tensor([], size=(2, 0))"),
}


@pytest.mark.parametrize("name", CASES)
def test_repr_layout(name):
    array, expected = CASES[name]
    assert repr(tp.tensor(array)) == expected


@pytest.mark.oracle
@pytest.mark.parametrize("name", CASES)
def test_repr_layout_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    array, expected = CASES[name]
    assert repr(torch.from_numpy(array.copy())).replace("torch.", "tapeflow.") == expected


def test_suffixes_follow_the_layout():
    x = tp.tensor([1e-5, -1.0], requires_grad=True)
    assert repr(x) == "tensor([ 1.0000e-05, -1.0000e+00], requires_grad=True)"
    assert repr(x * 2) == "tensor([ 2.0000e-05, -2.0000e+00], grad_fn=<MulBackward0>)"
    assert repr(tp.zeros(0, 3)) == "tensor([], size=(0, 3))"
