"""Tensor odds and ends run on tapeflow and PyTorch side by side: the older linear-algebra spellings (lu,
lu_unpack, lu_solve, triangular_solve, cholesky), addmv/addr/addbmm (beta=0 ignores the input), fill_diagonal_,
resize_, apply_/map_, the legacy new, sizes and layouts, memory formats."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
A = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, 1.0], [0.0, 2.0, 5.0]])


def _run(lib):
    out = []
    LU, piv = lib.lu(lib.tensor(A))
    P, L, U = lib.lu_unpack(LU, piv)
    b = lib.tensor([[1.0], [2.0], [3.0]], dtype=lib.float64)
    out += [P.tolist(), L.tolist(), U.tolist(), lib.lu_solve(b, LU, piv).tolist()]
    for upper, transpose, unit in ((True, False, False), (True, True, False), (False, False, True)):
        M = lib.tensor(np.triu(A) if upper else np.tril(A))
        out.append(lib.triangular_solve(b, M, upper=upper, transpose=transpose, unitriangular=unit).solution.tolist())
    out.append(lib.cholesky(lib.tensor(A @ A.T + np.eye(3))).tolist())
    r = np.random.default_rng(0)
    i, m, v = [lib.tensor(r.standard_normal(s), requires_grad=True) for s in ((3,), (3, 4), (4,))]
    y = lib.addmv(i, m, v, beta=0.5, alpha=2.0)
    y.sum().backward()
    out += [y.tolist(), i.grad.tolist(), m.grad.tolist()]
    out.append(lib.addmv(lib.full((3,), float("nan"), dtype=lib.float64), m.detach(), v.detach(), beta=0).tolist())
    out.append(lib.addr(lib.ones(2, 2), lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), beta=2, alpha=0.5).tolist())
    out.append(lib.addbmm(lib.ones(2, 2), lib.ones(3, 2, 4), lib.ones(3, 4, 2), alpha=0.5).tolist())
    x = lib.zeros(3, 4)
    x.fill_diagonal_(2.0)
    y = lib.zeros(7, 3)
    y.fill_diagonal_(1.0, wrap=True)
    z = lib.arange(6.0)
    z.resize_(2, 2)
    w = lib.tensor([1.0, 2.0])
    w.apply_(lambda e: e * 10)
    w.map_(lib.tensor([1.0, 3.0]), lambda a, c: a + c)
    out += [x.tolist(), y.tolist(), z.tolist(), w.tolist(), w.itemsize, w.nbytes, w.get_device(), str(w.layout)[-7:],
            lib.typename(w), w.new(2, 3).shape[1], str(w.new([1, 2]).dtype)[-7:], w.is_signed(),
            tuple(lib.ones(1, 3, 2, 2).contiguous(memory_format=lib.channels_last).shape), str(w.char().dtype)[-4:]]
    return out


def test_extras_equal_pytorch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = _run(tp), _run(torch)
    assert len(mine) == len(theirs)
    for k, (a, b) in enumerate(zip(mine, theirs)):
        if isinstance(a, list):
            np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-10, atol=1e-12,
                                       err_msg=str(k), equal_nan=True)
        else:
            assert a == b, (k, a, b)


_NEW_CASES = [((), {}), ((2, 3), {}), ("size", {}), (((2, 3),), {}), (([2, 3],), {}), ((np.array([1.0, 2.0]),), {}),
              ((3,), {}), ((np.int64(2), 3), {}), ((0,), {}), ("empty size", {}), ((2, 3), {"device": "cpu"}),
              ((2.5,), {}), ((2, 3), {"dtype": "int32"}), ((2, 3), {"requires_grad": True}), ("size and int", {})]


@pytest.mark.parametrize("case", range(len(_NEW_CASES)))
def test_legacy_new_takes_sizes_data_and_refusals_as_pytorch(case):
    # `x.new(torch.Size)` is a size, `x.new(tuple or list)` data: the size of `x[i]` taken as data built a
    # one-element tensor, and `y[i] = value` broadcast it silently.
    def run(lib):
        args, kw = _NEW_CASES[case]
        if isinstance(args, str):
            args = {"size": (lib.Size([2, 3]),), "empty size": (lib.Size([]),), "size and int": (lib.Size([2]), 3)}[args]
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kw.items()}
        try:
            r = lib.ones(2, dtype=lib.float64).new(*args, **kw)
        except TypeError as e:
            return "TypeError", str(e).split(" - ")[0].split(" (got")[0]
        data = len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and not isinstance(args[0], lib.Size)
        return tuple(r.shape), str(r.dtype).split(".")[-1], r.tolist() if data else None

    assert run(tp) == run(torch)


_LEGACY_SIZES = [lambda lib: lib.Tensor(lib.Size([4, 4])), lambda lib: lib.Tensor(2, 3), lambda lib: lib.Tensor(),
                 lambda lib: lib.Tensor(lib.Size([])),
                 lambda lib: lib.Tensor(lib.zeros(2, 5).size()), lambda lib: lib.FloatTensor(lib.Size([2])),
                 lambda lib: lib.LongTensor(lib.Size([2, 1]))]
_LEGACY_DATA = [lambda lib: lib.Tensor((4, 4)), lambda lib: lib.DoubleTensor([[1, 2]]), lambda lib: lib.Tensor([])]


@pytest.mark.parametrize("make", _LEGACY_SIZES + _LEGACY_DATA)
def test_the_legacy_constructors_read_a_size_as_a_shape_and_a_tuple_as_data(make):
    # (PyTorch's autograd tests build expected gradients with `torch.Tensor(x.size()).fill_(0)`)
    def run(lib):
        r = make(lib)  # (a shape's values are uninitialised in PyTorch: only data is compared)
        return tuple(r.shape), str(r.dtype).split(".")[-1], r.tolist() if make in _LEGACY_DATA else None

    assert run(tp) == run(torch)


def test_setitem_of_a_value_made_by_new_gets_its_gradient():
    def grads(lib):
        x = lib.ones(5, 5, requires_grad=True)
        y = x + 2
        value = x.new(x[3].size()).fill_(7)
        value.requires_grad = True
        y[3] = value
        y.backward(lib.ones(5, 5))
        return x.grad.tolist(), value.grad.tolist()

    assert grads(tp) == grads(torch)


def test_float_of_a_tensor_that_requires_grad_warns_once(monkeypatch):
    """PyTorch warns, once per process, that `float()` of a tensor that requires grad leaves the graph; `item()`,
    `int()` and tensors that need no grad do not warn."""
    from tapeflow import _tensor

    monkeypatch.setattr(_tensor, "_warned_float", False)
    x = tp.tensor(2.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert x.item() == 2.0 and int(x) == 2 and float(tp.tensor(3.0)) == 3.0
        assert not caught
        assert float(x) == 2.0
        assert float(x * 2) == 4.0
    assert [str(w.message) for w in caught] == [
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
        "Consider using tensor.detach() first."]
    assert caught[0].category is UserWarning and caught[0].filename == __file__


def test_frombuffer_reads_as_pytorch_and_refuses_what_it_refuses():
    """`frombuffer` (an MNIST file's header skipped by `offset`, say): the same values and dtype as PyTorch's, and
    its ValueErrors word for word; the tensor is a copy, so a later write to the buffer does not show."""
    data = bytearray(np.arange(12, dtype=np.int16).tobytes())
    for kw in (dict(), dict(offset=4), dict(count=3, offset=2)):
        for dt in ("int16", "uint8", "float16"):
            mine = tp.frombuffer(data, dtype=getattr(tp, dt), **kw)
            theirs = torch.frombuffer(bytearray(data), dtype=getattr(torch, dt), **kw)
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
            assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    t = tp.frombuffer(data, dtype=tp.int16)
    data[0] = 7
    assert t[0].item() == 0
    assert tp.frombuffer(data, dtype=tp.float32, requires_grad=True).requires_grad
    for kw in (dict(count=0), dict(offset=30), dict(offset=-1), dict(offset=1), dict(count=20)):
        with pytest.raises(ValueError) as theirs:
            torch.frombuffer(bytearray(data), dtype=torch.int16, **kw)
        with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
            tp.frombuffer(data, dtype=tp.int16, **kw)
    with pytest.raises(ValueError, match="does not implement Python buffer protocol"):
        tp.frombuffer([1, 2], dtype=tp.int16)


def test_the_deprecated_out_of_place_resize_warns_keeps_the_gradient_and_refuses_a_new_count():
    import warnings

    def run(lib):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = x.resize(3, 2)
            z = x.resize_as(lib.zeros(6))
        (y * lib.arange(6.0).reshape(3, 2)).sum().backward()
        with pytest.raises(RuntimeError) as info:
            x.resize(4, 2)
        return ([str(w.message) for w in caught], tuple(y.shape), tuple(z.shape), y.tolist(), x.grad.tolist(),
                str(info.value))

    assert run(tp) == run(torch)
