"""Bad input gets PyTorch's exception class and wording, never silently wrong data.

Each case is written once against the torch-like API; the expected class and key phrase are listed here
(so the test runs without PyTorch) and, where PyTorch is installed, checked against PyTorch itself.
"""

from __future__ import annotations

import pickle

import pytest

import tapeflow as tp

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _setitem(m):
    t = m.zeros(3)
    t[5] = 1.0


CASES = {
    # indices
    "basic index": (lambda m: m.ones(3, 2)[:, 2], IndexError, "index 2 is out of bounds for dimension 1 with size 2"),
    "int index": (lambda m: m.ones(3)[-4], IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    "too many indices": (lambda m: m.ones(3)[1, 2], IndexError, "too many indices for tensor of dimension 1"),
    "setitem": (_setitem, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    "tensor index": (lambda m: m.ones(3)[m.tensor([0, 3])], IndexError,
                     "index 3 is out of bounds for dimension 0 with size 3"),
    "gather": (lambda m: m.gather(m.ones(2, 2), 1, m.tensor([[0, 5], [1, 0]])), RuntimeError,
               "index 5 is out of bounds for dimension 1 with size 2"),
    "scatter": (lambda m: m.zeros(3).scatter(0, m.tensor([5]), 1.0), RuntimeError,
                "index 5 is out of bounds for dimension 0 with size 3"),
    "index_select": (lambda m: m.index_select(m.ones(3), 0, m.tensor([3])), IndexError, "index out of range in self"),
    "take": (lambda m: m.take(m.ones(3), m.tensor([7])), IndexError,
             "out of range: tried to access index 7 on a tensor of 3 elements"),
    "narrow": (lambda m: m.ones(3).narrow(0, 2, 3), RuntimeError, "start (2) + length (3) exceeds dimension size (3)"),
    "embedding": (lambda m: m.nn.functional.embedding(m.tensor([4]), m.ones(3, 2)), IndexError,
                  "index out of range in self"),
    "one_hot": (lambda m: m.nn.functional.one_hot(m.tensor([3]), 3), RuntimeError,
                "Class values must be smaller than num_classes"),
    "cross_entropy target": (lambda m: m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 5])), IndexError,
                             "Target 5 is out of bounds"),
    "nll_loss target": (lambda m: m.nn.functional.nll_loss(m.ones(2, 3), m.tensor([0, -1])), IndexError,
                        "Target -1 is out of bounds"),
    # shapes and arguments
    "in-place broadcast": (lambda m: m.ones(3).mul_(m.ones(2, 3)), RuntimeError,
                           "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    "broadcast": (lambda m: m.ones(2) + m.ones(4), RuntimeError,
                  "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"),
    "matmul": (lambda m: m.ones(2, 3) @ m.ones(4, 5), RuntimeError,
               "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    "bmm": (lambda m: m.ones(5, 2, 3) @ m.ones(5, 4, 5), RuntimeError,
            "Expected size for first two dimensions of batch2 tensor to be: [5, 3] but got: [5, 4]"),
    "flatten": (lambda m: m.ones(2, 3, 4).flatten(2, 1), RuntimeError, "start_dim cannot come after end_dim"),
    "chunk": (lambda m: m.ones(3).chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    "randint": (lambda m: m.randint(5, 2, (3,)), RuntimeError, "random_ expects 'from' to be less than 'to'"),
    "arange": (lambda m: m.arange(0, 10, 0), RuntimeError, "step must be nonzero"),
    "tensor of str": (lambda m: m.tensor("abc"), TypeError, "invalid data type 'str'"),
    "conv stride": (lambda m: m.nn.functional.conv2d(m.ones(1, 1, 3, 3), m.ones(1, 1, 2, 2), stride=0), RuntimeError,
                    "non-positive stride is not supported"),
    "dim": (lambda m: m.ones(2).sum(3), IndexError, "Dimension out of range"),
    # values
    "int // 0": (lambda m: m.tensor([1, 2]) // 0, RuntimeError, "ZeroDivisionError"),
    "int % 0-tensor": (lambda m: m.tensor([1, 2]) % m.tensor([1, 0]), RuntimeError, "ZeroDivisionError"),
    "bool - bool": (lambda m: m.ones(2, dtype=m.bool) - m.ones(2, dtype=m.bool), RuntimeError,
                    "with two bool tensors is not supported"),
    "inv singular": (lambda m: m.linalg.inv(m.zeros(2, 2)), RuntimeError,
                     "The diagonal element 1 is zero, the inversion could not be completed"),
    "solve singular": (lambda m: m.linalg.solve(m.zeros(2, 2), m.ones(2)), RuntimeError,
                       "The solver failed because the input matrix is singular"),
    "cholesky": (lambda m: m.linalg.cholesky(-m.eye(2)), RuntimeError,
                 "the input is not positive-definite (the leading minor of order 1 is not positive-definite)"),
    # autograd misuse
    "backward of non-scalar": (lambda m: m.ones(2, requires_grad=True).mul(2).backward(), RuntimeError,
                               "grad can be implicitly created only for scalar outputs"),
    "backward twice": (lambda m: [y.backward() for y in [m.ones(2, requires_grad=True).exp().sum()] * 2],
                       RuntimeError, "Trying to backward through the graph a second time"),
    "leaf in-place": (lambda m: m.ones(2, requires_grad=True).add_(1), RuntimeError,
                      "a leaf Variable that requires grad is being used in an in-place operation"),
    "int requires grad": (lambda m: m.ones(2, dtype=m.int64, requires_grad=True), RuntimeError,
                          "Only Tensors of floating point"),
}


def _check(lib, name: str) -> None:
    fn, cls, phrase = CASES[name]
    with pytest.raises(cls) as info:
        fn(lib)
    assert phrase in str(info.value), f"{name} ({lib.__name__}): {info.value}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_tapeflow_raises_pytorchs_error(name):
    _check(tp, name)


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_listed_error_is_pytorchs(name):
    _check(torch, name)


def test_linalg_errors_are_linalg_errors():
    with pytest.raises(tp.linalg.LinAlgError):
        tp.linalg.inv(tp.zeros(3, 3))
    assert tp.linalg.inv_ex(tp.zeros(2, 2)).info.item() == 1  # the _ex variants report instead of raising


def test_index_checks_are_skipped_under_jit():
    """Inside a JAX program indices are traced: no host check there (JAX's clamping applies)."""
    import jax

    out = jax.jit(tp.interop.to_jax(lambda x, i: x[i]))(tp.ones(3)._data, tp.tensor([0, 1])._data)
    assert out.shape == (2,)


def test_pickle_of_an_error_free_path():
    assert pickle.loads(pickle.dumps(tp.ones(2)))._data.shape == (2,)
