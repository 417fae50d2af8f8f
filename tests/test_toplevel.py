"""PyTorch's top-level helpers: meshgrid, finfo/iinfo, promote_types, can_cast, result_type, broadcast_shapes,
set_printoptions, the thread/determinism/precision settings, torch-named functional forms — against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3, 2), (3, 2, 4), (1,), (2, 3)])
def test_meshgrid_equals_pytorchs(indexing, sizes):
    mine = tp.meshgrid(*[tp.arange(n) * (k + 1) for k, n in enumerate(sizes)], indexing=indexing)
    theirs = torch.meshgrid(*[torch.arange(n) * (k + 1) for k, n in enumerate(sizes)], indexing=indexing)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_meshgrid_gradients_and_errors():
    x, y = tp.tensor([1.0, 2.0], requires_grad=True), tp.tensor([3.0, 4.0, 5.0], requires_grad=True)
    gx, gy = tp.meshgrid(x, y, indexing="ij")
    (gx * gy).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 12.0])
    np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0, 3.0])
    with pytest.raises(RuntimeError, match="indexing must be one of"):
        tp.meshgrid(x, y, indexing="yx")


def test_dtype_queries_equal_pytorchs():
    for d in ("float16", "bfloat16", "float32", "float64"):
        a, b = tp.finfo(getattr(tp, d)), torch.finfo(getattr(torch, d))
        assert (a.bits, a.eps, a.max, a.min, a.tiny, a.smallest_normal, a.resolution) == \
            (b.bits, b.eps, b.max, b.min, b.tiny, b.smallest_normal, b.resolution), d
    for d in ("uint8", "int8", "int16", "int32", "int64"):
        a, b = tp.iinfo(getattr(tp, d)), torch.iinfo(getattr(torch, d))
        assert (a.bits, a.max, a.min) == (b.bits, b.max, b.min), d
    with pytest.raises(TypeError):
        tp.finfo(tp.int32)
    with pytest.raises(TypeError):
        tp.iinfo(tp.float32)
    for a in DTYPES:
        for b in DTYPES:
            if {a, b} in ({"float16", "complex64"}, {"float16", "complex128"}):
                continue  # PyTorch's complex32 (ComplexHalf), which JAX does not have
            mine = tp.promote_types(getattr(tp, a), getattr(tp, b))
            assert str(mine).split(".")[-1] == str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[-1]
            assert tp.can_cast(getattr(tp, a), getattr(tp, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("other", [2, 2.5, True, 1j, "t", "0d"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64"])
def test_result_type_equals_pytorchs(dtype, other):
    if dtype == "float16" and other == 1j:
        return  # PyTorch's complex32, which JAX does not have

    def make(lib, d, shape):
        return lib.ones(shape, dtype=getattr(lib, d))
    for second in ("int8", "float64"):
        args = {}
        for lib in (tp, torch):
            b = make(lib, second, (3,)) if other == "t" else make(lib, second, ()) if other == "0d" else other
            args[lib] = lib.result_type(make(lib, dtype, (3,)), b)
        assert str(args[tp]).split(".")[-1] == str(args[torch]).split(".")[-1]


def test_broadcast_shapes_and_settings():
    for shapes in [((2, 1), (1, 3), (3,)), ((5,), ()), ((0, 1), (4,))]:
        assert tuple(tp.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(RuntimeError):
        tp.broadcast_shapes((2,), (3,))
    for kw in (dict(precision=2), dict(sci_mode=True), dict(threshold=5, edgeitems=1), dict(profile="short")):
        tp.set_printoptions(**kw)
        torch.set_printoptions(**kw)
        try:
            for x in ([1.23456, 2.5], list(range(10)), [1e-5, 3.0]):
                assert repr(tp.tensor(x)) == repr(torch.tensor(x)), (kw, x)
        finally:
            tp.set_printoptions(profile="default")
            torch.set_printoptions(profile="default")
    tp.set_num_threads(1)
    assert tp.get_num_threads() == 1
    tp.set_num_threads(2)
    tp.use_deterministic_algorithms(True)
    assert tp.are_deterministic_algorithms_enabled()
    tp.use_deterministic_algorithms(False)
    assert float(tp.scalar_tensor(3)) == 3.0 and tp.scalar_tensor(3).dtype is tp.float32
    assert tp.vmap(lambda v: (v * v).sum())(tp.ones(4, 3)).tolist() == [3.0] * 4
    assert tp.conv2d is tp.nn.functional.conv2d and tp.exp_(tp.zeros(1)).tolist() == [1.0]
