"""Adaptive max pooling with indices (1-3 d), power-average pooling (`lp_pool*`, `LPPool*`) and fractional max
pooling (2-3 d): values, indices and input gradients equal PyTorch's; errors use PyTorch's classes and wording."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

S2 = np.random.default_rng(5).random((3, 3, 2))
S3 = np.random.default_rng(6).random((2, 3, 3))


def _f(lib):
    return lib.nn.functional


def _samples(lib, s, x):
    return lib.tensor(s, dtype=x.dtype)


CASES = {
    # name: (fn(lib, x), input shape, round the input to create ties)
    "adaptive_max_pool1d indices": (lambda lib, x: _f(lib).adaptive_max_pool1d(x, 3, return_indices=True),
                                    (2, 3, 7), False),
    "adaptive_max_pool1d unbatched ties": (lambda lib, x: _f(lib).adaptive_max_pool1d(x, 4, True), (3, 7), True),
    "adaptive_max_pool1d upsampling": (lambda lib, x: _f(lib).adaptive_max_pool1d(x, 9, True), (2, 2, 5), True),
    "adaptive_max_pool2d indices ties": (lambda lib, x: _f(lib).adaptive_max_pool2d(x, (3, 4), return_indices=True),
                                         (2, 3, 7, 5), True),
    "adaptive_max_pool2d unbatched larger": (lambda lib, x: _f(lib).adaptive_max_pool2d(x, (9, 2), True),
                                             (3, 7, 5), True),
    "adaptive_max_pool2d None": (lambda lib, x: _f(lib).adaptive_max_pool2d(x, (None, 2)), (2, 3, 7, 5), True),
    "adaptive_max_pool2d divisible": (lambda lib, x: _f(lib).adaptive_max_pool2d(x, 2, True), (1, 2, 8, 6), False),
    "adaptive_max_pool3d indices ties": (lambda lib, x: _f(lib).adaptive_max_pool3d(x, (2, 3, 4), True),
                                         (2, 2, 5, 7, 6), True),
    "adaptive_max_pool3d unbatched": (lambda lib, x: _f(lib).adaptive_max_pool3d(x, 2, True), (3, 5, 4, 3), False),
    "AdaptiveMaxPool1d module": (lambda lib, x: lib.nn.AdaptiveMaxPool1d(2, return_indices=True)(x), (2, 3, 5),
                                 True),
    "AdaptiveMaxPool2d module": (lambda lib, x: lib.nn.AdaptiveMaxPool2d((3, 2), return_indices=True)(x),
                                 (2, 3, 5, 7), True),
    "AdaptiveMaxPool3d module": (lambda lib, x: lib.nn.AdaptiveMaxPool3d((1, 3, 2))(x), (2, 3, 4, 5, 7), True),
    "AdaptiveAvgPool3d module": (lambda lib, x: lib.nn.AdaptiveAvgPool3d((2, 3, 2))(x), (2, 3, 4, 5, 7), False),
    "lp_pool1d p2": (lambda lib, x: _f(lib).lp_pool1d(x, 2, 3), (2, 3, 8), False),
    "lp_pool1d unbatched stride ceil": (lambda lib, x: _f(lib).lp_pool1d(x, 2.5, 3, stride=2, ceil_mode=True),
                                        (3, 8), False),
    "lp_pool2d p3 ceil": (lambda lib, x: _f(lib).lp_pool2d(x, 3, (2, 3), stride=(2, 2), ceil_mode=True),
                          (2, 3, 7, 8), False),
    "lp_pool2d unbatched": (lambda lib, x: _f(lib).lp_pool2d(x, 2, 2), (3, 5, 5), False),
    "lp_pool2d inf": (lambda lib, x: _f(lib).lp_pool2d(x, float("inf"), 2), (2, 3, 5, 5), False),
    "lp_pool3d p1.5 ceil": (lambda lib, x: _f(lib).lp_pool3d(x, 1.5, 2, ceil_mode=True), (2, 3, 5, 5, 5), False),
    "LPPool1d module": (lambda lib, x: lib.nn.LPPool1d(2, 2)(x), (2, 3, 9), False),
    "LPPool2d module": (lambda lib, x: lib.nn.LPPool2d(2, (3, 2), stride=1)(x), (2, 3, 6, 5), False),
    "LPPool3d module": (lambda lib, x: lib.nn.LPPool3d(4, (1, 2, 3), stride=(1, 2, 1), ceil_mode=True)(x),
                        (1, 2, 3, 5, 7), False),
    "fractional_max_pool2d size": (lambda lib, x: _f(lib).fractional_max_pool2d(
        x, 2, output_size=(4, 5), return_indices=True, _random_samples=_samples(lib, S2[:2], x)), (2, 3, 9, 11), True),
    "fractional_max_pool2d ratio unbatched": (lambda lib, x: _f(lib).fractional_max_pool2d(
        x, (3, 2), output_ratio=(0.5, 0.7), return_indices=True, _random_samples=_samples(lib, S2[:1], x)),
        (3, 13, 11), True),
    "fractional_max_pool2d more samples": (lambda lib, x: _f(lib).fractional_max_pool2d(
        x, 3, output_size=1, _random_samples=_samples(lib, S2, x)), (2, 3, 5, 6), False),
    "fractional_max_pool2d dense": (lambda lib, x: _f(lib).fractional_max_pool2d(
        x, 2, output_size=6, _random_samples=_samples(lib, S2[:2], x)), (2, 3, 7, 7), True),
    "fractional_max_pool3d size": (lambda lib, x: _f(lib).fractional_max_pool3d(
        x, (2, 3, 2), output_size=(3, 4, 2), return_indices=True, _random_samples=_samples(lib, S3, x)),
        (2, 3, 7, 9, 6), True),
    "fractional_max_pool3d unbatched ratio": (lambda lib, x: _f(lib).fractional_max_pool3d(
        x, 2, output_ratio=0.5, return_indices=True, _random_samples=_samples(lib, S3[:1], x)), (3, 6, 7, 8), True),
    "FractionalMaxPool2d module": (lambda lib, x: lib.nn.FractionalMaxPool2d(
        2, output_ratio=0.6, return_indices=True, _random_samples=_samples(lib, S2[:2], x))(x), (2, 3, 10, 9), False),
    "FractionalMaxPool3d module": (lambda lib, x: lib.nn.FractionalMaxPool3d(
        (1, 2, 2), output_size=3, _random_samples=_samples(lib, S3, x))(x), (2, 3, 5, 6, 7), True),
}


def _run(lib, fn, shape, ties, dtype):
    x = np.random.default_rng(0).normal(size=shape)
    if ties:
        x = np.round(x)
    x = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    out = fn(lib, x)
    y, extra = (out[0], [out[1].numpy()]) if isinstance(out, tuple) else (out, [])
    g = lib.tensor(np.random.default_rng(1).normal(size=tuple(y.shape)), dtype=getattr(lib, dtype))
    (y * g).sum().backward()
    return [y.detach().numpy(), x.grad.numpy(), *extra]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_pytorch(name, dtype):
    fn, shape, ties = CASES[name]
    mine, theirs = _run(tp, fn, shape, ties, dtype), _run(torch, fn, shape, ties, dtype)
    assert len(mine) == len(theirs)
    tol = 1e-12 if dtype == "float64" else 2e-6
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape, name
        assert a.dtype == b.dtype, name
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=name)


def test_indices_pick_pytorchs_element_with_nan_and_inf():
    data = [[[1.0, float("nan"), 3.0, float("nan"), 2.0, -float("inf"), -float("inf")]]]
    for size in (1, 3, 5):
        mine = tp.nn.functional.adaptive_max_pool1d(tp.tensor(data), size, return_indices=True)
        theirs = torch.nn.functional.adaptive_max_pool1d(torch.tensor(data), size, return_indices=True)
        np.testing.assert_array_equal(mine[1].numpy(), theirs[1].numpy())
        np.testing.assert_array_equal(mine[0].numpy(), theirs[0].numpy())
    plane = [[[[float("nan"), 1.0, 2.0, float("nan"), 3.0]] * 5]]
    s = [[[0.3, 0.6]]]
    mine = tp.nn.functional.fractional_max_pool2d(tp.tensor(plane), 2, 3, return_indices=True,
                                                  _random_samples=tp.tensor(s))
    theirs = torch.nn.functional.fractional_max_pool2d(torch.tensor(plane), 2, 3, return_indices=True,
                                                       _random_samples=torch.tensor(s))
    np.testing.assert_array_equal(mine[1].numpy(), theirs[1].numpy())


def test_lp_pool_zero_window_gradient():
    data = [[[0.0, 0.0, 1.0, 2.0, -1.0, 1.0]]]
    grads = []
    for lib in (tp, torch):
        x = lib.tensor(data, requires_grad=True)
        lib.nn.functional.lp_pool1d(x, 2, 2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("n", [1, 2])
def test_adaptive_indices_feed_max_unpool(n):
    shape = (2, 3, 7) if n == 1 else (2, 3, 7, 6)
    out = []
    for lib in (tp, torch):
        F = lib.nn.functional
        x = lib.tensor(np.random.default_rng(2).normal(size=shape))
        pool, unpool = (F.adaptive_max_pool1d, F.max_unpool1d) if n == 1 else (F.adaptive_max_pool2d, F.max_unpool2d)
        y, i = pool(x, 3, return_indices=True)
        out.append(unpool(y, i, 2, output_size=shape[2:]).numpy())
    np.testing.assert_array_equal(out[0], out[1])


def test_gradcheck_float64():
    rng = np.random.default_rng(3)
    F = tp.nn.functional

    def x(*shape):
        return tp.tensor(rng.normal(size=shape), dtype=tp.float64, requires_grad=True)

    s2 = tp.tensor(S2[:2], dtype=tp.float64)
    s3 = tp.tensor(S3, dtype=tp.float64)
    assert tp.autograd.gradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 2)), (x(2, 3, 5, 7),))
    assert tp.autograd.gradcheck(lambda t: F.adaptive_max_pool3d(t, 2), (x(1, 2, 3, 5, 4),))
    assert tp.autograd.gradcheck(lambda t: F.adaptive_max_pool1d(t, 4, return_indices=True)[0], (x(2, 7),))
    pos = tp.tensor(rng.random((2, 3, 7, 6)) + 0.5, dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradcheck(lambda t: F.lp_pool2d(t, 2.5, 3, stride=2, ceil_mode=True), (pos,))
    assert tp.autograd.gradcheck(lambda t: F.lp_pool1d(t, 2, 2), (x(2, 3, 6),))
    assert tp.autograd.gradcheck(lambda t: F.fractional_max_pool2d(t, 2, (3, 4), _random_samples=s2),
                                 (x(2, 3, 7, 8),))
    assert tp.autograd.gradcheck(lambda t: F.fractional_max_pool3d(t, 2, output_ratio=0.5, _random_samples=s3),
                                 (x(2, 3, 4, 5, 6),))


def test_fractional_samples_come_from_tapeflows_generator():
    x = tp.randn(2, 3, 9, 9)
    tp.manual_seed(7)
    a, ia = tp.nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True)
    tp.manual_seed(7)
    s = tp.rand(2, 3, 2)
    b, ib = tp.nn.functional.fractional_max_pool2d(x, 2, output_size=4, return_indices=True, _random_samples=s)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    theirs = torch.nn.functional.fractional_max_pool2d(torch.tensor(x.numpy()), 2, output_size=4,
                                                       _random_samples=torch.tensor(s.numpy()))
    np.testing.assert_array_equal(a.numpy(), theirs.numpy())
    pool = tp.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0.5))
    assert tuple(pool(tp.randn(4, 6, 6, 6)).shape) == (4, 3, 3, 3)
    assert tp.nn.FractionalMaxPool2d(2, 3)(tp.randn(3, 5, 5)).shape == (3, 3, 3)


def test_modules_repr_and_exports():
    assert repr(tp.nn.LPPool2d(2, 3)) == repr(torch.nn.LPPool2d(2, 3))
    assert repr(tp.nn.AdaptiveMaxPool3d(2, True)) == repr(torch.nn.AdaptiveMaxPool3d(2, True))
    for name in ("adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d",
                 "fractional_max_pool3d"):
        assert name in tp.nn.functional.__all__
    for name in ("AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d",
                 "FractionalMaxPool3d"):
        assert name in tp.nn.__all__


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split("\n")[0]
    return None


BAD = {
    "amp2 ndim": lambda lib: _f(lib).adaptive_max_pool2d(lib.ones(2, 3), 2, return_indices=True),
    "amp2 5d": lambda lib: _f(lib).adaptive_max_pool2d(lib.ones(2, 3, 4, 5, 6), 2),
    "amp1 ndim": lambda lib: _f(lib).adaptive_max_pool1d(lib.ones(2, 3, 4, 5), 2),
    "amp3 ndim": lambda lib: _f(lib).adaptive_max_pool3d(lib.ones(3, 4, 5), 2),
    "amp2 size len": lambda lib: _f(lib).adaptive_max_pool2d(lib.ones(1, 3, 4, 5), (2, 2, 2)),
    "amp1 size len": lambda lib: _f(lib).adaptive_max_pool1d(lib.ones(1, 3, 4), (2, 3)),
    "amp3 size len": lambda lib: _f(lib).adaptive_max_pool3d(lib.ones(1, 3, 4, 5, 6), (2, 3)),
    "amp2 empty": lambda lib: _f(lib).adaptive_max_pool2d(lib.ones(1, 3, 0, 5), 2),
    "amp2 long": lambda lib: _f(lib).adaptive_max_pool2d(lib.ones(1, 3, 4, 5, dtype=lib.int64), 2),
    "fmp2 no size": lambda lib: _f(lib).fractional_max_pool2d(lib.ones(1, 3, 4, 5), 2),
    "fmp2 too large": lambda lib: _f(lib).fractional_max_pool2d(lib.ones(1, 3, 4, 5), 2, output_size=4),
    "fmp2 too wide": lambda lib: _f(lib).fractional_max_pool2d(lib.ones(1, 3, 8, 3), 2, output_size=3),
    "fmp2 ndim": lambda lib: _f(lib).fractional_max_pool2d(lib.ones(2, 3, 4, 5, 6), 2, output_size=2),
    "fmp2 ratio len": lambda lib: _f(lib).fractional_max_pool2d(lib.ones(1, 3, 4, 5), 2, output_ratio=(.5, .5, .5)),
    "fmp2 kernel len": lambda lib: _f(lib).fractional_max_pool2d(lib.ones(1, 3, 4, 5), (2, 2, 2), output_size=2),
    "fmp2 samples channels": lambda lib: _f(lib).fractional_max_pool2d(
        lib.ones(3, 4, 5), 2, output_size=2, _random_samples=lib.ones(1, 2, 2)),
    "fmp2 samples batch": lambda lib: _f(lib).fractional_max_pool2d(
        lib.ones(2, 3, 4, 5), 2, output_size=2, _random_samples=lib.ones(1, 3, 2)),
    "fmp2 samples last": lambda lib: _f(lib).fractional_max_pool2d(
        lib.ones(2, 3, 4, 5), 2, output_size=2, _random_samples=lib.ones(2, 3, 3)),
    "fmp2 samples dtype": lambda lib: _f(lib).fractional_max_pool2d(
        lib.ones(2, 3, 4, 5), 2, output_size=2, _random_samples=lib.ones(2, 3, 2, dtype=lib.float64)),
    "fmp3 too large": lambda lib: _f(lib).fractional_max_pool3d(lib.ones(2, 3, 8, 3, 8), 2, output_size=3),
    "fmp3 ndim": lambda lib: _f(lib).fractional_max_pool3d(lib.ones(2, 3, 4, 5, 6, 7), 2, output_size=2),
    "fmp3 kernel len": lambda lib: _f(lib).fractional_max_pool3d(lib.ones(2, 3, 4, 5, 6), (2, 2), output_size=2),
    "FMP2 bad ratio": lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    "FMP2 nothing": lambda lib: lib.nn.FractionalMaxPool2d(2),
    "FMP2 both": lambda lib: lib.nn.FractionalMaxPool2d(2, 3, 0.5),
    "FMP3 kernel": lambda lib: lib.nn.FractionalMaxPool3d(0, 3),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_pytorch(name):
    theirs = _error(torch, BAD[name])
    assert theirs is not None
    assert _error(tp, BAD[name]) == theirs


@pytest.mark.parametrize("unbatched", [False, True])
def test_max_unpool3d_is_pytorchs(unbatched):
    data = np.random.default_rng(3).normal(size=(2, 3, 5, 4, 6)).astype(np.float32)
    if unbatched:
        data = data[0]

    def run(m):
        x = m.tensor(data, requires_grad=True)
        y, i = m.nn.functional.max_pool3d(x, 2, return_indices=True)
        u = m.nn.MaxUnpool3d(2)(y, i, output_size=x.shape[-3:])
        (u * m.arange(u.numel(), dtype=m.float32).reshape(u.shape)).sum().backward()
        return u.detach().numpy(), x.grad.numpy()

    for mine, theirs in zip(run(tp), run(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)
