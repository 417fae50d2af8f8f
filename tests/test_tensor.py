"""The Tensor API: factories, attributes, conversions, operators, indexing, iteration, repr."""

import numpy as np
import pytest

import tapeflow as tp


def test_factories_shapes_and_dtypes():
    assert tp.zeros(2, 3).shape == (2, 3) and tp.zeros((2, 3)).dtype is tp.float32
    assert tp.ones(4, dtype=tp.float64).dtype is tp.float64
    assert tp.full((2,), 7).dtype is tp.int64 and tp.full((2,), 7.0).dtype is tp.float32
    assert tp.arange(5).tolist() == [0, 1, 2, 3, 4] and tp.arange(5).dtype is tp.int64
    np.testing.assert_allclose(tp.arange(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(tp.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5), rtol=1e-6)
    np.testing.assert_allclose(tp.eye(3).numpy(), np.eye(3))
    assert tp.empty(2, 2).shape == (2, 2)
    x = tp.randn(3, 2, dtype=tp.float64)
    for f in (tp.zeros_like, tp.ones_like, tp.randn_like, tp.rand_like, tp.empty_like):
        y = f(x)
        assert y.shape == x.shape and y.dtype is tp.float64
    assert tp.randint(0, 10, (5,)).dtype is tp.int64
    assert tp.randperm(6).sort().values.tolist() == list(range(6))


def test_randint_floating_dtypes_and_requires_grad():
    # PyTorch draws integers into any dtype: randint_like keeps a float input's dtype.
    x = tp.zeros(200, dtype=tp.float64)
    r = tp.randint_like(x, 3, 7, requires_grad=True)
    assert r.dtype is tp.float64 and r.requires_grad and r.is_leaf
    assert set(r.tolist()) <= {3.0, 4.0, 5.0, 6.0} and len(set(r.tolist())) == 4
    assert tp.randint(5, (3,), dtype=tp.float32).dtype is tp.float32
    with pytest.raises(RuntimeError, match="floating point"):
        tp.randint_like(tp.zeros(3, dtype=tp.int64), 5, requires_grad=True)


def test_manual_seed_repeats():
    tp.manual_seed(3)
    a = tp.rand(4)
    tp.manual_seed(3)
    b = tp.rand(4)
    assert a.tolist() == b.tolist()
    r = tp.rand(10000)
    assert 0.0 <= r.min().item() and r.max().item() < 1.0 and abs(r.mean().item() - 0.5) < 0.02


def test_attributes_and_conversions():
    x = tp.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert (x.ndim, x.dim(), x.numel(), x.size(), x.size(1)) == (2, 2, 4, (2, 2), 2)
    assert x.device == tp.device("cpu") and str(x.device) == "cpu"
    assert x.detach().numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="requires grad"):
        x.numpy()
    assert x[0, 1].item() == 2.0 and x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert x.double().dtype is tp.float64 and x.long().dtype is tp.int64 and x.to(tp.float64).dtype is tp.float64
    assert x.to("cpu").dtype is tp.float32 and x.cpu() is x
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        x.item()
    assert float(tp.tensor(2.5)) == 2.5 and int(tp.tensor(3)) == 3
    assert np.asarray(tp.tensor([1, 2])).tolist() == [1, 2]


def test_operators_including_reflected():
    x = tp.tensor([1.0, 2.0, 4.0])
    np.testing.assert_allclose((2 + x).numpy(), [3, 4, 6])
    np.testing.assert_allclose((2 - x).numpy(), [1, 0, -2])
    np.testing.assert_allclose((2 * x).numpy(), [2, 4, 8])
    np.testing.assert_allclose((2 / x).numpy(), [2, 1, 0.5])
    np.testing.assert_allclose((2 ** x).numpy(), [2, 4, 16])
    np.testing.assert_allclose((x ** 2).numpy(), [1, 4, 16])
    np.testing.assert_allclose((7 // x).numpy(), [7, 3, 1])
    np.testing.assert_allclose((x % 3).numpy(), [1, 2, 1])
    np.testing.assert_allclose((-x).numpy(), [-1, -2, -4])
    np.testing.assert_allclose(abs(-x).numpy(), [1, 2, 4])
    assert (x > 1.5).tolist() == [False, True, True] and (x == 2).tolist() == [False, True, False]
    m = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose((m @ m).numpy(), np.array([[7, 10], [15, 22]]))
    b = tp.tensor([True, False])
    assert (~b).tolist() == [False, True] and (b & tp.tensor([True, True])).tolist() == [True, False]
    assert (np.float64(2.0) * tp.tensor([1.0])).dtype is tp.float32
    assert (tp.tensor([1.0]) + np.int64(1)).dtype is tp.float32


def test_indexing_basic_advanced_boolean():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = tp.tensor(a)
    for idx in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (slice(0, 2), slice(1, None, 2)),
                ([0, 1], [2, 0]), (slice(None), [0, 2]), (0, [1, 1], slice(None))]:
        np.testing.assert_allclose(x[idx].numpy(), a[idx])
    mask = a > 10
    np.testing.assert_allclose(x[tp.tensor(mask)].numpy(), a[mask])
    np.testing.assert_allclose(x[tp.tensor([1, 0])].numpy(), a[[1, 0]])


def test_indexing_gradients():
    x = tp.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    (x[0, 1:] * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 2, 2], [0, 0, 0]])
    x.grad = None
    x[tp.tensor([1, 1]), tp.tensor([0, 0])].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0], [2, 0, 0]])


def test_iteration_and_len():
    x = tp.tensor([[1, 2], [3, 4]])
    rows = [r.tolist() for r in x]
    assert rows == [[1, 2], [3, 4]] and len(x) == 2
    with pytest.raises(TypeError):
        iter(tp.tensor(1.0))


def test_repr():
    assert repr(tp.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(tp.tensor([0.5, -1.0])) == "tensor([ 0.5000, -1.0000])"
    assert repr(tp.tensor([1.0], dtype=tp.float64)) == "tensor([1.], dtype=tapeflow.float64)"
    assert repr(tp.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(tp.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(tp.tensor([1.0], requires_grad=True) * 2) == "tensor([2.], grad_fn=<MulBackward0>)"


def test_views_report_their_nodes():
    x = tp.randn(2, 3, requires_grad=True)
    assert x.view(3, 2).grad_fn.name() == "ViewBackward0"
    assert x.t().grad_fn.name() == "TBackward0"
    assert x.permute(1, 0).grad_fn.name() == "PermuteBackward0"
    assert x.transpose(0, 1).grad_fn.name() == "TransposeBackward0"
    # (PyTorch names a node after the overload called)
    s = (x * 1).unsqueeze(0)
    assert [s.squeeze().grad_fn.name(), s.squeeze(0).grad_fn.name(), s.squeeze((0,)).grad_fn.name()] == \
        ["SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2"]
    names = []
    for inplace in (lambda t: t.transpose_(0, 1), lambda t: t.t_(), lambda t: t.squeeze_(), lambda t: t.squeeze_(0),
                    lambda t: t.unsqueeze_(0), lambda t: t.as_strided_((2,), (1,))):
        y = (x * 1).unsqueeze(0)[0]
        names.append(inplace(y).grad_fn.name())
    assert names == ["TransposeBackward1", "TBackward1", "SqueezeBackward3", "SqueezeBackward4",
                     "UnsqueezeBackward1", "AsStridedBackward1"]
    assert x.unsqueeze(0).grad_fn.name() == "UnsqueezeBackward0"
    assert x[0].grad_fn.name() == "SelectBackward0"
    assert x.sum(1).grad_fn.name() == "SumBackward1" and x.mean().grad_fn.name() == "MeanBackward0"
    assert (x @ x.t()).grad_fn.name() == "MmBackward0"


def test_view_shape_errors():
    x = tp.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        x.view(4, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(dim=2)
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        tp.mm(tp.zeros(2, 3), tp.zeros(2, 3))


def test_conjugation_and_hermitian_transposes():
    z = tp.tensor([[1 + 2j, 3j], [2.0 + 0j, -1j]], requires_grad=True)
    np.testing.assert_allclose(z.conj().detach().numpy(), np.conj(z.detach().numpy()))
    np.testing.assert_allclose(z.H.detach().numpy(), np.conj(z.detach().numpy()).T)
    np.testing.assert_allclose(z.mH.detach().numpy(), np.conj(z.detach().numpy()).T)
    assert z.conj().grad_fn.name() == "ConjBackward0"
    x = tp.ones(2, 3, 4)
    assert x.conj() is x and tp.resolve_conj(x) is x and x.mH.shape == (2, 4, 3)
    with pytest.raises(RuntimeError, match="tensor.mH for batches of matrices"):
        _ = x.H
    (g,) = tp.autograd.grad(z.conj(), z, tp.tensor([[1j, 1.0], [2.0, 1 - 1j]]))  # conj is its own transpose
    np.testing.assert_allclose(g.numpy(), [[-1j, 1.0], [2.0, 1 + 1j]])


@pytest.mark.parametrize("data, dtype", [
    ([np.float64(1.0), 2.0], "float64"), ([1.0, 2.0], "float32"), ([np.float32(1.0)], "float32"),
    ([[np.complex128(1j)]], "complex128"), ([1j], "complex64"), ([np.int32(1), 2], "int64"), (3.5, "float32"),
])
def test_dtype_inferred_from_numpy_scalars_in_lists(data, dtype):
    """NumPy scalars inside nested lists keep their precision, Python numbers take the defaults (as in PyTorch)."""
    assert tp.tensor(data).dtype == getattr(tp, dtype)
