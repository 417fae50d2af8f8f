"""First-contact errors: PyTorch's exception class, one clear sentence, and the fix."""

import pytest

import tapeflow as tp
from tapeflow.nn import functional as F


@pytest.mark.parametrize("input_shape, target", [((2, 4), [1.0, 3.0]), ((4, 4), [1.0, 3.0, 0.0, 2.0]), ((4,), 1.0)])
def test_cross_entropy_float_class_indices(input_shape, target):
    with pytest.raises(RuntimeError) as err:
        F.cross_entropy(tp.zeros(*input_shape), tp.tensor(target))
    msg = str(err.value)
    assert msg.startswith("expected target dtype to be Long or Byte, but got Float")  # PyTorch's words
    assert "as class probabilities only when it has the input's shape" in msg and "target.long()" in msg
    assert str(list(input_shape)) in msg
    # the suggested fix works
    assert F.cross_entropy(tp.zeros(*input_shape), tp.tensor(target).long()).shape == ()


def test_cross_entropy_float_probabilities_still_work():
    probs = tp.tensor([[0.25, 0.75], [1.0, 0.0]])
    assert abs(F.cross_entropy(tp.zeros(2, 2), probs).item() - 0.6931) < 1e-4


def test_broadcast_error_says_it_once():
    with pytest.raises(RuntimeError) as err:
        tp.ones(2, 3) + tp.ones(4)
    assert str(err.value) == ("The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                              "dimension 1 (add of shapes [2, 3] and [4])")
