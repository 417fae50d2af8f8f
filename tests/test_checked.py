"""`tp.interop.checked`: eager mode's value checks (indices, integer divisors) staged into a jitted program."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn.functional as F

# (what, function, bad arguments, good arguments)
CASES = [
    ("getitem", lambda x, i: x[i], (tp.arange(3.0), tp.tensor([3])), (tp.arange(3.0), tp.tensor([2, -3]))),
    ("getitem negative", lambda x, i: x[i], (tp.arange(3.0), tp.tensor([-4])), (tp.arange(3.0), tp.tensor([-1]))),
    ("gather", lambda x, i: x.gather(0, i), (tp.arange(3.0), tp.tensor([1, 5])), (tp.arange(3.0), tp.tensor([1, 2]))),
    ("index_select", lambda x, i: x.index_select(0, i), (tp.arange(3.0), tp.tensor([3])),
     (tp.arange(3.0), tp.tensor([0, 0]))),
    ("scatter", lambda x, i: x.scatter(0, i, tp.ones(1)), (tp.arange(3.0), tp.tensor([7])),
     (tp.arange(3.0), tp.tensor([1]))),
    ("embedding", lambda w, i: F.embedding(i, w), (tp.ones(3, 2), tp.tensor([0, 3])), (tp.ones(3, 2), tp.tensor([2]))),
    ("cross_entropy", lambda x, t: F.cross_entropy(x, t), (tp.ones(2, 3), tp.tensor([0, 5])),
     (tp.ones(2, 3), tp.tensor([0, 2]))),
    ("cross_entropy ignore_index", lambda x, t: F.cross_entropy(x, t, ignore_index=-100),
     (tp.ones(2, 3), tp.tensor([-100, 3])), (tp.ones(2, 3), tp.tensor([-100, 2]))),
    ("take", lambda x, i: x.take(i), (tp.arange(3.0), tp.tensor([5])), (tp.arange(3.0), tp.tensor([2]))),
    ("nll_loss", lambda x, t: F.nll_loss(x, t), (tp.ones(2, 3), tp.tensor([0, 5])), (tp.ones(2, 3), tp.tensor([1, 2]))),
    ("one_hot", lambda t: F.one_hot(t, 3), (tp.tensor([3]),), (tp.tensor([2, 0]),)),
    ("one_hot negative", lambda t: F.one_hot(t, 3), (tp.tensor([-1]),), (tp.tensor([1]),)),
    ("floor_divide", lambda a, b: a // b, (tp.tensor([1, 2]), tp.tensor([1, 0])), (tp.tensor([1, 4]), tp.tensor([1, 3]))),
    ("remainder", lambda a, b: a % b, (tp.tensor([1, 2]), tp.tensor([0, 1])), (tp.tensor([5, 2]), tp.tensor([3, 1]))),
]


def _error(f, args):
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001 - class and message are compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_checked_raises_what_eager_raises(case):
    _, f, bad, good = case
    eager = _error(f, bad)
    assert eager is not None, "eager mode must refuse the bad input"
    assert _error(tp.interop.checked(f), bad) == eager
    np.testing.assert_array_equal(tp.interop.checked(f)(*good).numpy(), f(*good).numpy())


def test_one_program_serves_good_and_bad_calls():
    calls = []

    def f(x, i):
        calls.append(1)  # runs once per trace
        return x[i] * 2

    g = tp.interop.checked(f)
    x = tp.arange(4.0)
    assert g(x, tp.tensor([1])).tolist() == [2.0]
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 4"):
        g(x, tp.tensor([9]))
    assert g(x, tp.tensor([3])).tolist() == [6.0]
    assert len(calls) == 1


def test_unchecked_jit_clamps_as_jax_does():
    """What `checked` exists for: under a plain jit an out-of-range gather returns a clamped value."""
    f = tp.compile(lambda x, i: x.gather(0, i))
    assert f(tp.arange(3.0), tp.tensor([5])).tolist() == [2.0]
