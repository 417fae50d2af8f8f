"""interpolate, pixel shuffling, instance norm and padding layers: values and gradients equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

X3, X4, X5 = (2, 3, 5), (2, 3, 5, 4), (1, 2, 3, 4, 3)
CASES = {
    "nearest x2": (X4, lambda m, x: m.nn.functional.interpolate(x, scale_factor=2)),
    "nearest size": (X4, lambda m, x: m.nn.functional.interpolate(x, size=(7, 3))),
    "nearest-exact": (X4, lambda m, x: m.nn.functional.interpolate(x, size=(8, 6), mode="nearest-exact")),
    "nearest 1.5": (X3, lambda m, x: m.nn.functional.interpolate(x, scale_factor=1.5)),
    "linear": (X3, lambda m, x: m.nn.functional.interpolate(x, scale_factor=2.5, mode="linear")),
    "linear corners": (X3, lambda m, x: m.nn.functional.interpolate(x, size=9, mode="linear", align_corners=True)),
    "bilinear": (X4, lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")),
    "bilinear down": (X4, lambda m, x: m.nn.functional.interpolate(x, size=(3, 2), mode="bilinear")),
    "bilinear corners": (X4, lambda m, x: m.nn.functional.interpolate(x, size=(9, 7), mode="bilinear",
                                                                      align_corners=True)),
    "bicubic": (X4, lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bicubic")),
    "bicubic corners": (X4, lambda m, x: m.nn.functional.interpolate(x, size=(6, 9), mode="bicubic",
                                                                     align_corners=True)),
    "trilinear": (X5, lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="trilinear")),
    "Upsample": (X4, lambda m, x: m.nn.Upsample(scale_factor=3, mode="bilinear")(x)),
    "UpsamplingBilinear2d": (X4, lambda m, x: m.nn.UpsamplingBilinear2d(scale_factor=2)(x)),
    "pixel_shuffle": ((2, 8, 3, 2), lambda m, x: m.nn.PixelShuffle(2)(x)),
    "pixel_unshuffle": ((2, 2, 4, 6), lambda m, x: m.nn.PixelUnshuffle(2)(x)),
    "instance_norm": (X4, lambda m, x: m.nn.functional.instance_norm(x)),
    "InstanceNorm2d affine": (X4, lambda m, x: _affine(m, m.nn.InstanceNorm2d(3, affine=True))(x)),
    "InstanceNorm1d": (X3, lambda m, x: m.nn.InstanceNorm1d(3)(x)),
    "ReflectionPad2d": (X4, lambda m, x: m.nn.ReflectionPad2d((1, 2, 2, 1))(x)),
    "ReplicationPad2d": (X4, lambda m, x: m.nn.ReplicationPad2d(2)(x)),
    "ZeroPad2d": (X4, lambda m, x: m.nn.ZeroPad2d((0, 1, 2, 0))(x)),
    "ConstantPad1d": (X3, lambda m, x: m.nn.ConstantPad1d(2, 3.5)(x)),
    "ReflectionPad1d": (X3, lambda m, x: m.nn.ReflectionPad1d(3)(x)),
}


def _affine(m, layer):
    with m.no_grad():
        layer.weight.copy_(m.tensor([0.5, 1.5, -1.0], dtype=layer.weight.dtype))
        layer.bias.copy_(m.tensor([0.1, -0.2, 0.3], dtype=layer.bias.dtype))
    return layer.double() if hasattr(layer, "double") else layer


def _run(m, shape, fn):
    rng = np.random.default_rng(0)
    x = m.tensor(rng.normal(size=shape), dtype=m.float64, requires_grad=True)
    y = fn(m, x)
    g = m.tensor(np.random.default_rng(1).normal(size=tuple(y.shape)), dtype=m.float64)
    (y * g).sum().backward()
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_equal_pytorch(name):
    shape, fn = CASES[name]
    (y1, g1), (y2, g2) = _run(tp, shape, fn), _run(torch, shape, fn)
    assert y1.shape == y2.shape
    np.testing.assert_allclose(y1, y2, rtol=1e-10, atol=1e-12, err_msg=f"{name}: values")
    np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-12, err_msg=f"{name}: gradients")


def test_instance_norm_running_stats_equal_pytorch():
    def run(m):
        layer = m.nn.InstanceNorm2d(3, track_running_stats=True)
        x = m.tensor(np.random.default_rng(0).normal(size=X4), dtype=m.float32)
        layer(x)
        layer.eval()
        return layer.running_mean.numpy(), layer.running_var.numpy(), layer(x).detach().numpy()

    for a, b in zip(run(tp), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("kw", [dict(size=(5, 7)), dict(size=(20, 30)), dict(size=(4, 17)), dict(size=(1, 1)),
                                dict(scale_factor=0.37), dict(scale_factor=(0.5, 2.3)),
                                dict(scale_factor=0.37, recompute_scale_factor=True)], ids=str)
def test_antialias_is_pytorchs(mode, align_corners, kw):
    x = np.random.default_rng(0).normal(size=(1, 2, 13, 17))
    g = None
    results = []
    for m in (tp, torch):
        t = m.tensor(x, requires_grad=True)
        y = m.nn.functional.interpolate(t, mode=mode, antialias=True, align_corners=align_corners, **kw)
        g = np.random.default_rng(1).normal(size=tuple(y.shape)) if g is None else g
        (y * m.tensor(g)).sum().backward()
        results.append((y.detach().numpy(), t.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_antialias_needs_bilinear_or_bicubic_on_4d():
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, bicubic"):
        tp.nn.functional.interpolate(tp.ones(1, 1, 4), scale_factor=0.5, mode="linear", antialias=True)


@pytest.mark.parametrize("mode,dims", [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 2),
                                       ("linear", 1), ("bilinear", 2), ("trilinear", 3), ("bicubic", 2)])
def test_a_scale_factor_that_leaves_or_doubles_a_size_resamples_as_pytorch(mode, dims):
    """PyTorch's kernels copy an axis whose size does not change (linear modes whatever the scale factor, and
    2-d nearest), and 2-d nearest halves the index where the size doubles; elsewhere the scale factor given
    places the samples (1-d and 3-d nearest, nearest-exact, bicubic)."""
    x = np.arange(4.0 ** dims).reshape((1, 1) + (4,) * dims)
    for factor in (1.2, 2.1, 0.9, 2.0):
        scale = (factor,) + (1.3,) * (dims - 1)
        mine = tp.nn.functional.interpolate(tp.tensor(x), scale_factor=scale, mode=mode)
        theirs = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=scale, mode=mode)
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12, err_msg=f"{scale}")


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_source_indices_are_pytorchs_float32_ones(mode):
    for inp in [*range(1, 40), 97, 131, 255]:
        x = np.arange(inp, dtype=np.float32).reshape(1, 1, inp)
        calls = [dict(size=out) for out in (1, 3, 7, 13, 29, 33, 100, 301)]
        calls += [dict(scale_factor=sf) for sf in (0.3, 0.7, 1.3, 2.5, 3.3, 7.77) if int(inp * sf) >= 1]
        for kw in calls:
            theirs = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kw).numpy()
            mine = tp.nn.functional.interpolate(tp.tensor(x), mode=mode, **kw).numpy()
            np.testing.assert_array_equal(mine, theirs, err_msg=f"{inp} {kw}")
