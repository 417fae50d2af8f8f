"""Gated, parametric and randomized activations, softmin, RMS norm, bilinear, channel shuffle, channel-wise and
alpha dropout, gumbel-softmax, the in-place activation forms and the new modules: deterministic ones equal
PyTorch's values and gradients (float64, kinks included); random ones have PyTorch's structure and statistics;
bad inputs raise PyTorch's class and wording."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

R = np.random.default_rng(21)


def _f(lib):
    return lib.nn.functional


def _r(*shape):
    return R.standard_normal(shape)


KINKS = np.array([[-1.0, 0.0, 2.0, -0.5], [0.0, 3.0, -2.0, 0.0]])


def _inplace(fn):
    """Apply an in-place function to a clone (so the leaf can require grad)."""
    return lambda lib, x: fn(lib, x.clone() * 1.0)


CASES = {
    "glu": (lambda lib, x: _f(lib).glu(x), [_r(3, 4)]),
    "glu dim0": (lambda lib, x: _f(lib).glu(x, 0), [_r(4, 3)]),
    "GLU module": (lambda lib, x: lib.nn.GLU(1)(x), [_r(2, 6, 2)]),
    "prelu shared kinks": (lambda lib, x, w: _f(lib).prelu(x, w), [KINKS, np.array([0.3])]),
    "prelu channels": (lambda lib, x, w: _f(lib).prelu(x, w), [_r(2, 3, 4), _r(3)]),
    "prelu 1d": (lambda lib, x, w: _f(lib).prelu(x, w), [_r(5), np.array([0.2])]),
    "rrelu eval kinks": (lambda lib, x: _f(lib).rrelu(x, 0.1, 0.4), [KINKS]),
    "RReLU eval": (lambda lib, x: lib.nn.RReLU().eval()(x), [_r(3, 4)]),
    "softmin": (lambda lib, x: _f(lib).softmin(x, dim=1), [_r(3, 4)]),
    "softmin legacy dim": (lambda lib, x: _f(lib).softmin(x), [_r(3, 4)]),
    "Softmin module": (lambda lib, x: lib.nn.Softmin(0)(x), [_r(3, 4)]),
    "Softmax2d": (lambda lib, x: lib.nn.Softmax2d()(x), [_r(2, 3, 2, 2)]),
    "Softmax2d unbatched": (lambda lib, x: lib.nn.Softmax2d()(x), [_r(3, 2, 2)]),
    "rms_norm": (lambda lib, x: _f(lib).rms_norm(x, (4,)), [_r(3, 4)]),
    "rms_norm weight eps 2d": (lambda lib, x, w: _f(lib).rms_norm(x, (3, 4), w, 1e-3), [_r(2, 3, 4), _r(3, 4)]),
    "rms_norm zero row": (lambda lib, x, w: _f(lib).rms_norm(x, [2], w), [np.array([[0.0, 0.0], [1.0, -2.0]]), _r(2)]),
    "bilinear": (lambda lib, a, b, w, c: _f(lib).bilinear(a, b, w, c), [_r(4, 3), _r(4, 2), _r(5, 3, 2), _r(5)]),
    "bilinear batch dims no bias": (lambda lib, a, b, w: _f(lib).bilinear(a, b, w), [_r(2, 3, 3), _r(2, 3, 2),
                                                                                     _r(4, 3, 2)]),
    "bilinear 1d": (lambda lib, a, b, w: _f(lib).bilinear(a, b, w), [_r(3), _r(2), _r(4, 3, 2)]),
    "channel_shuffle": (lambda lib, x: _f(lib).channel_shuffle(x, 3), [_r(2, 6, 2, 2)]),
    "ChannelShuffle": (lambda lib, x: lib.nn.ChannelShuffle(2)(x), [_r(2, 4, 3)]),
    "relu_ kinks": (_inplace(lambda lib, x: _f(lib).relu_(x)), [KINKS]),
    "elu_": (_inplace(lambda lib, x: _f(lib).elu_(x, 0.7)), [KINKS]),
    "leaky_relu_": (_inplace(lambda lib, x: _f(lib).leaky_relu_(x, 0.2)), [KINKS]),
    "hardtanh_ bounds": (_inplace(lambda lib, x: _f(lib).hardtanh_(x, -0.5, 2.0)), [KINKS]),
    "threshold_": (_inplace(lambda lib, x: _f(lib).threshold_(x, 0.0, -3.0)), [KINKS]),
    "selu_": (_inplace(lambda lib, x: _f(lib).selu_(x)), [KINKS]),
    "celu_": (_inplace(lambda lib, x: _f(lib).celu_(x, 2.0)), [KINKS]),
    "rrelu_ eval": (_inplace(lambda lib, x: _f(lib).rrelu_(x, 0.2, 0.3)), [KINKS]),
    "dropout2d eval": (lambda lib, x: _f(lib).dropout2d(x, 0.5, training=False), [_r(2, 3, 2, 2)]),
    "dropout1d p0": (lambda lib, x: _f(lib).dropout1d(x, 0.0), [_r(2, 3, 4)]),
    "dropout3d p1": (lambda lib, x: _f(lib).dropout3d(x, 1.0), [_r(1, 2, 2, 2, 2)]),
    "alpha_dropout p1": (lambda lib, x: _f(lib).alpha_dropout(x, 1.0, training=True), [_r(3, 4)]),
    "feature_alpha_dropout eval": (lambda lib, x: _f(lib).feature_alpha_dropout(x, 0.3), [_r(3, 4)]),
    "Unflatten": (lambda lib, x: lib.nn.Unflatten(1, (2, 3))(x), [_r(4, 6)]),
}


def _inputs(lib, arrays):
    return [lib.tensor(np.asarray(a), dtype=lib.float64, requires_grad=True) for a in arrays]


def _run(lib, fn, arrays):
    xs = _inputs(lib, arrays)
    out = fn(lib, *xs)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)).sum().backward()
    return np.asarray(out.detach().numpy()), [None if x.grad is None else np.asarray(x.grad.numpy()) for x in xs]


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    fn, arrays = CASES[name]
    want, want_grads = _run(torch, fn, arrays)
    got, got_grads = _run(tp, fn, arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for i, (g, w) in enumerate(zip(got_grads, want_grads)):
        if w is None:
            assert g is None or not np.any(g)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=f"gradient of input {i}")


@pytest.mark.oracle
def test_modules_with_parameters_match_torch():
    for make in (lambda lib: lib.nn.PReLU(3, init=0.1), lambda lib: lib.nn.RMSNorm([2, 3], eps=1e-4),
                 lambda lib: lib.nn.Bilinear(3, 2, 4)):
        t_mod, p_mod = make(torch).double(), make(tp).double()
        p_mod.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()})
        assert list(p_mod.state_dict()) == list(t_mod.state_dict())
        assert repr(p_mod) == repr(t_mod)
        if isinstance(t_mod, torch.nn.Bilinear):
            a, b = _r(5, 3), _r(5, 2)
            want = t_mod(torch.tensor(a), torch.tensor(b))
            got = p_mod(tp.tensor(a), tp.tensor(b))
        else:
            x = _r(4, 3) if isinstance(t_mod, torch.nn.PReLU) else _r(4, 2, 3)
            want, got = t_mod(torch.tensor(x)), p_mod(tp.tensor(x))
        want.sum().backward()
        got.sum().backward()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)
        for (name, tp_param), (_, t_param) in zip(p_mod.named_parameters(), t_mod.named_parameters()):
            np.testing.assert_allclose(tp_param.grad.numpy(), t_param.grad.numpy(), rtol=1e-9, err_msg=name)


@pytest.mark.oracle
def test_batchnorm3d_matches_torch():
    x = _r(2, 3, 2, 3, 2)
    t_bn, p_bn = torch.nn.BatchNorm3d(3).double(), tp.nn.BatchNorm3d(3).double()
    np.testing.assert_allclose(p_bn(tp.tensor(x)).detach().numpy(), t_bn(torch.tensor(x)).detach().numpy(),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(p_bn.running_var.numpy(), t_bn.running_var.numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="expected 5D input"):
        p_bn(tp.ones(2, 3, 4, 4))


def test_bilinear_init_bound():
    m = tp.nn.Bilinear(16, 3, 50)
    bound = 1 / math.sqrt(16)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound


def test_channel_dropout_zeroes_whole_channels():
    x = tp.ones(40, 10, 3, 3, dtype=tp.float64)
    y = _f(tp).dropout2d(x, 0.4).numpy()
    per_channel = y.reshape(40, 10, 9)
    assert set(np.unique(per_channel)) <= {0.0, 1 / 0.6}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()
    assert 0.3 < (per_channel[..., 0] == 0).mean() < 0.5
    y1 = _f(tp).dropout1d(tp.ones(6, 4, dtype=tp.float64), 0.5).numpy()  # unbatched (C, L)
    assert (y1.min(-1) == y1.max(-1)).all()
    y3 = tp.nn.Dropout3d(0.5)(tp.ones(8, 2, 2, 2, dtype=tp.float64)).numpy()  # unbatched (C, D, H, W)
    assert (y3.reshape(8, 8).min(-1) == y3.reshape(8, 8).max(-1)).all()


def test_alpha_dropout_values_and_statistics():
    p = 0.3
    x = tp.randn(200, 50, dtype=tp.float64)
    y = _f(tp).alpha_dropout(x, p, training=True)
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    xn, yn = x.numpy(), y.numpy()
    kept = np.isclose(yn, a * xn + alpha * a * p)
    dropped = np.isclose(yn, -alpha * a * (1 - p))
    assert (kept | dropped).all()
    assert abs(dropped.mean() - p) < 0.03
    assert abs(yn.mean()) < 0.05 and abs(yn.std() - 1) < 0.05  # SELU's fixed point is kept
    f = _f(tp).feature_alpha_dropout(tp.ones(30, 20, 4, dtype=tp.float64), 0.5, training=True).numpy()
    assert (f.min(-1) == f.max(-1)).all()


def test_rrelu_training_draws_slopes():
    x = tp.tensor(np.concatenate([-np.abs(_r(1000)), [0.0], np.abs(_r(10))]), requires_grad=True)
    y = _f(tp).rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    slope = (y / x).detach().numpy()[:1000]
    assert (slope >= 0.1).all() and (slope <= 0.3).all() and slope.std() > 0.03
    np.testing.assert_allclose(x.grad.numpy()[:1000], slope)
    assert x.grad.numpy()[1000] >= 0.1  # x == 0 takes the random negative slope, as in PyTorch
    np.testing.assert_array_equal(x.grad.numpy()[1001:], 1.0)
    m = tp.nn.RReLU(0.1, 0.3)
    assert m.training and float((m(tp.tensor([-1.0])) + 1).abs()) > 0.69


def test_gumbel_softmax():
    tp.manual_seed(3)
    logits = tp.tensor([[2.0, 0.0, -1.0]] * 2000, dtype=tp.float64, requires_grad=True)
    soft = _f(tp).gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0)
    hard = _f(tp).gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    freq = h.mean(0)
    want = np.exp([2.0, 0.0, -1.0]) / np.exp([2.0, 0.0, -1.0]).sum()
    np.testing.assert_allclose(freq, want, atol=0.04)  # Gumbel-max samples the softmax
    (hard * tp.tensor([1.0, 2.0, 3.0], dtype=tp.float64)).sum().backward()
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all()
    np.testing.assert_allclose(logits.grad.numpy().sum(-1), 0.0, atol=1e-12)


X = np.zeros((3, 4))
BAD = {
    "glu odd": (lambda lib: _f(lib).glu(lib.zeros(3, 5)), "Halving dimension must be even, but dimension 1 is size 5"),
    "glu scalar": (lambda lib: _f(lib).glu(lib.tensor(1.0)), "glu does not support scalars"),
    "glu dim": (lambda lib: _f(lib).glu(lib.zeros(4, 2), dim=2), "Dimension out of range"),
    "prelu size": (lambda lib: _f(lib).prelu(lib.zeros(2, 4), lib.ones(3)),
                   "Found parameter numbers = 3 and channel size = 4."),
    "prelu 2d weight": (lambda lib: _f(lib).prelu(lib.zeros(2, 4), lib.ones(1, 4)),
                        "Expected `weight` to be a scalar or 1D tensor"),
    "Softmax2d 2d": (lambda lib: lib.nn.Softmax2d()(lib.zeros(2, 3)), "Softmax2d: expected input to be 3D or 4D"),
    "bilinear dims": (lambda lib: _f(lib).bilinear(lib.zeros(2, 3), lib.zeros(2, 4, 1), lib.zeros(5, 3, 4)),
                      "input dimensions do not match: got 2 and 3"),
    "bilinear batch": (lambda lib: _f(lib).bilinear(lib.zeros(2, 3), lib.zeros(3, 4), lib.zeros(5, 3, 4)),
                       "input batch dimensions do not match at dim 0: got 2 and 3"),
    "bilinear in1": (lambda lib: _f(lib).bilinear(lib.zeros(2, 3), lib.zeros(2, 4), lib.zeros(5, 2, 4)),
                     "input1 size does not match weight size: got 3 but expected 2"),
    "bilinear in2": (lambda lib: _f(lib).bilinear(lib.zeros(2, 3), lib.zeros(2, 4), lib.zeros(5, 3, 3)),
                     "input2 size does not match weight size: got 4 but expected 3"),
    "bilinear bias": (lambda lib: _f(lib).bilinear(lib.zeros(2, 3), lib.zeros(2, 4), lib.zeros(5, 3, 4),
                                                   lib.zeros(4)), "bias size does not match weight size"),
    "channel_shuffle divisible": (lambda lib: _f(lib).channel_shuffle(lib.zeros(2, 5, 3), 2),
                                  "Number of channels must be divisible by groups. Got 5 channels and 2 groups."),
    "channel_shuffle groups": (lambda lib: _f(lib).channel_shuffle(lib.zeros(2, 6, 3), 0),
                               "must be positive. Value of groups:0"),
    "channel_shuffle dims": (lambda lib: _f(lib).channel_shuffle(lib.zeros(2, 6), 2),
                             "channel_shuffle expects input with > 2 dims"),
    "rms_norm shape": (lambda lib: _f(lib).rms_norm(lib.zeros(3, 5), (4,)), "Given normalized_shape=[4]"),
    "rms_norm weight": (lambda lib: _f(lib).rms_norm(lib.zeros(3, 5), (5,), lib.ones(4)),
                        "Expected weight to be of same shape as normalized_shape"),
    "dropout1d dims": (lambda lib: _f(lib).dropout1d(lib.zeros(3, 5, 6, 7)), "dropout1d: Expected 2D or 3D input"),
    "dropout2d p": (lambda lib: _f(lib).dropout2d(lib.zeros(3, 5, 6), p=2), "dropout probability has to be between"),
    "alpha_dropout p": (lambda lib: _f(lib).alpha_dropout(lib.zeros(3), p=-1), "but got -1"),
    "feature_alpha_dropout 1d": (lambda lib: _f(lib).feature_alpha_dropout(lib.zeros(3), training=True),
                                 "Feature dropout requires at least 2 dimensions in the input"),
    "rrelu bounds": (lambda lib: _f(lib).rrelu(lib.zeros(3), 0.5, 0.1), "Lower bound should be less than or equal"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(BAD))
def test_bad_inputs_raise_like_torch(name):
    fn, phrase = BAD[name]
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(tp)
    assert phrase in str(want.value), str(want.value)
    assert phrase in str(got.value), str(got.value)


@pytest.mark.oracle
def test_parameter_containers_register_like_torch():
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(2)])
                self.pdict = lib.nn.ParameterDict({"scale": lib.ones(2), "bias": lib.zeros(2)})
                self.plist.append(lib.ones(1))
                self.pdict["extra"] = lib.nn.Parameter(lib.zeros(4))

        return Net()

    t_net, p_net = build(torch), build(tp)
    assert list(p_net.state_dict()) == list(t_net.state_dict())
    assert [n for n, _ in p_net.named_parameters()] == [n for n, _ in t_net.named_parameters()]
    assert repr(p_net.plist).replace("tapeflow", "torch") == repr(t_net.plist)
    assert repr(p_net.pdict).replace("tapeflow", "torch") == repr(t_net.pdict)
    assert len(p_net.plist) == 3 and isinstance(p_net.plist[1], tp.nn.Parameter) and p_net.plist[-1].shape == (1,)
    assert list(p_net.pdict) == ["bias", "scale", "extra"] and "scale" in p_net.pdict
    loss = sum(p.sum() for p in p_net.plist) + p_net.pdict["scale"].sum()
    loss.backward()
    opt = tp.optim.SGD(p_net.parameters(), lr=1.0)
    opt.step()
    np.testing.assert_allclose(p_net.pdict["scale"].detach().numpy(), 0.0)
    del p_net.pdict["extra"]
    assert "pdict.extra" not in p_net.state_dict()


def _bag_case(lib, weight, idx, kw, psw=None):
    w = lib.tensor(weight, dtype=lib.float64, requires_grad=True)
    extra = {k: (lib.tensor(v) if k == "offsets" else v) for k, v in kw.items()}
    p = None if psw is None else lib.tensor(psw, dtype=lib.float64, requires_grad=True)
    out = _f(lib).embedding_bag(lib.tensor(idx), w, per_sample_weights=p, **extra)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)).sum().backward()
    return [out.detach().numpy(), w.grad.numpy()] + ([] if p is None else [p.grad.numpy()])


FLAT = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
BAGS = {
    "mean offsets": (FLAT, {"offsets": np.array([0, 3, 3, 7])}, None),
    "sum offsets psw": (FLAT, {"offsets": np.array([0, 3, 7]), "mode": "sum"}, "psw"),
    "max offsets empty bag": (FLAT, {"offsets": np.array([0, 4, 4, 6]), "mode": "max"}, None),
    "max 2d": (np.array([[1, 2, 3], [4, 4, 0]]), {"mode": "max"}, None),
    "mean 2d padding": (np.array([[1, 2, 3], [4, 2, 2]]), {"padding_idx": 2}, None),
    "sum include_last_offset padding": (FLAT, {"offsets": np.array([0, 2, 5, 10]), "mode": "sum",
                                               "include_last_offset": True, "padding_idx": 0}, None),
    "max padding": (FLAT, {"offsets": np.array([0, 5]), "mode": "max", "padding_idx": 4}, None),
    "sum 2d psw": (np.array([[1, 2], [3, 3]]), {"mode": "sum"}, "psw"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(BAGS))
def test_embedding_bag_matches_torch(name):
    idx, kw, psw = BAGS[name]
    weight = _r(10, 3)
    p = _r(*idx.shape) if psw else None
    for got, want in zip(_bag_case(tp, weight, idx, kw, p), _bag_case(torch, weight, idx, kw, p)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.oracle
def test_embedding_bag_module_matches_torch():
    t_bag = torch.nn.EmbeddingBag(8, 3, mode="sum", padding_idx=1).double()
    p_bag = tp.nn.EmbeddingBag(8, 3, mode="sum", padding_idx=1).double()
    assert repr(p_bag) == repr(t_bag)
    assert float(p_bag.weight[1].abs().sum()) == 0.0
    p_bag.load_state_dict({"weight": tp.tensor(t_bag.weight.detach().numpy())})
    idx, off = [1, 2, 4, 5, 4, 3, 2], [0, 2, 5]
    np.testing.assert_allclose(p_bag(tp.tensor(idx), tp.tensor(off)).detach().numpy(),
                               t_bag(torch.tensor(idx), torch.tensor(off)).detach().numpy(), rtol=1e-12)


def _bag_bad(lib, idx, offsets=None, **kw):
    return _f(lib).embedding_bag(lib.tensor(idx), lib.zeros(6, 3), None if offsets is None else lib.tensor(offsets),
                                 **kw)


BAG_BAD = {
    "embedding_bag 2d offsets": (lambda lib: _bag_bad(lib, [[1, 2], [3, 4]], [0, 1]),
                                 "if input is 2D, then offsets has to be None"),
    "embedding_bag no offsets": (lambda lib: _bag_bad(lib, [1, 2, 3]), "offsets has to be a 1D Tensor but got None"),
    "embedding_bag 3d": (lambda lib: _bag_bad(lib, [[[1]]]), "input has to be 1D or 2D Tensor"),
    "embedding_bag mode": (lambda lib: _bag_bad(lib, [1, 2, 3], [0, 1], mode="foo"),
                           "mode has to be one of sum, mean or max"),
    "embedding_bag psw mode": (lambda lib: _bag_bad(lib, [1, 2, 3], [0, 1], per_sample_weights=lib.ones(3)),
                               "per_sample_weights is only supported for mode='sum'"),
    "embedding_bag range": (lambda lib: _bag_bad(lib, [1, 2, 7], [0, 1]), "Index 1 of input takes value 7"),
    "embedding_bag offsets0": (lambda lib: _bag_bad(lib, [1, 2, 3], [1, 2]), "offsets[0] has to be 0"),
    "embedding_bag max freq": (lambda lib: _bag_bad(lib, [1, 2, 3], [0, 1], mode="max", scale_grad_by_freq=True),
                               "max mode does not support scaling the gradient by the frequency"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(BAG_BAD))
def test_embedding_bag_bad_inputs_raise_like_torch(name):
    fn, phrase = BAG_BAD[name]
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(tp)
    assert phrase in str(want.value), str(want.value)
    assert phrase in str(got.value), str(got.value)


# -- affine_grid and grid_sample ------------------------------------------------------------------------------------
def _grid_points(n, ho, wo, spread=1.3):
    g = R.uniform(-spread, spread, (n, ho, wo, 2))
    g[0, 0, 0] = [-1.0, 1.0]  # corners and the image's edges, where the clipping and reflection rules bite
    g[0, 0, 1] = [1.0, -1.0]
    g[-1, -1, -1] = [0.0, 0.0]
    g[0, -1, 0] = [-1.0 - 1 / 3, 2.0]
    return g


GRIDS = {}
for _mode in ("bilinear", "nearest", "bicubic"):
    for _pad in ("zeros", "border", "reflection"):
        for _ac in (False, True):
            GRIDS[f"{_mode} {_pad} align={_ac}"] = (_mode, _pad, _ac)


def _grid_points3(n, do, ho, wo, spread=1.3):
    g = R.uniform(-spread, spread, (n, do, ho, wo, 3))
    g[0, 0, 0, 0] = [-1.0, 1.0, -1.0]
    g[0, 0, 0, 1] = [1.0, 0.5, 1.0]
    g[-1, -1, -1, -1] = [0.0, 0.0, 0.0]
    return g


def _sample(lib, image, grid, mode, pad, ac):
    x = lib.tensor(image, dtype=lib.float64, requires_grad=True)
    g = lib.tensor(grid, dtype=lib.float64, requires_grad=True)
    out = _f(lib).grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)).sum().backward()
    # (nearest sampling: PyTorch gives the grid a zero gradient, tapeflow none)
    return out.detach().numpy(), x.grad.numpy(), np.zeros(grid.shape) if g.grad is None else g.grad.numpy()


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(GRIDS))
def test_grid_sample_matches_torch(name):
    image, grid = _r(2, 3, 4, 5), _grid_points(2, 3, 4)
    for got, want in zip(_sample(tp, image, grid, *GRIDS[name]), _sample(torch, image, grid, *GRIDS[name])):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("name", [n for n in GRIDS if ("align=True" in n or "reflection" in n) and "bicubic" not in n])
def test_grid_sample_3d_matches_torch(name):
    image, grid = _r(2, 2, 3, 4, 5), _grid_points3(2, 2, 3, 2)
    for got, want in zip(_sample(tp, image, grid, *GRIDS[name]), _sample(torch, image, grid, *GRIDS[name])):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 3, 3), (2, 1, 2, 3, 4)])
@pytest.mark.parametrize("ac", [False, True])
def test_affine_grid_matches_torch(size, ac):
    theta = _r(size[0], len(size) - 2, len(size) - 1)
    grads = []
    outs = []
    for lib in (tp, torch):
        th = lib.tensor(theta, dtype=lib.float64, requires_grad=True)
        out = _f(lib).affine_grid(th, size, align_corners=ac)
        (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                          dtype=out.dtype)).sum().backward()
        outs.append(out.detach().numpy())
        grads.append(th.grad.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


@pytest.mark.oracle
def test_affine_grid_then_grid_sample_rotation():
    a = 0.3
    theta = np.array([[[np.cos(a), -np.sin(a), 0.1], [np.sin(a), np.cos(a), -0.2]]])
    image = _r(1, 2, 6, 7)
    res = []
    for lib in (tp, torch):
        grid = _f(lib).affine_grid(lib.tensor(theta), (1, 2, 5, 5), align_corners=False)
        res.append(_f(lib).grid_sample(lib.tensor(image), grid, align_corners=False).numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-12)


GRID_BAD = {
    "mode": (lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode="area"),
             "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
    "padding": (lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), padding_mode="wrap"),
                "expected padding_mode to be 'zeros', 'border', or 'reflection'"),
    "batch": (lambda lib: _f(lib).grid_sample(lib.zeros(2, 1, 2, 2), lib.zeros(1, 1, 1, 2), align_corners=False),
              "expected grid and input to have same batch size"),
    "last dim": (lambda lib: _f(lib).grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 3), align_corners=False),
                 "expected grid to have size 2 in last dimension"),
    "dims": (lambda lib: _f(lib).grid_sample(lib.zeros(1, 2, 2), lib.zeros(1, 1, 1, 2), align_corners=False),
             "expected grid to have size 1 in last dimension"),
    "theta shape": (lambda lib: _f(lib).affine_grid(lib.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False),
                    "Expected a batch of 2D affine matrices of shape Nx2x3"),
    "theta 3d shape": (lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 2, 2), align_corners=False),
                       "Expected a batch of 3D affine matrices of shape Nx3x4"),
    "size rank": (lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3), (1, 1, 2), align_corners=False),
                  "affine_grid only supports 4D and 5D sizes"),
    "size zero": (lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3), (1, 1, 0, 2), align_corners=False),
                  "Expected non-zero, positive output size"),
    "theta int": (lambda lib: _f(lib).affine_grid(lib.zeros(1, 2, 3, dtype=lib.int64), (1, 1, 2, 2),
                                                  align_corners=False), "Expected theta to have floating point type"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(GRID_BAD))
def test_grid_bad_inputs_raise_like_torch(name):
    fn, phrase = GRID_BAD[name]
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(tp)
    assert phrase in str(want.value), str(want.value)
    assert phrase in str(got.value), str(got.value)


@pytest.mark.oracle
def test_lazy_linear_materialises_like_torch():
    t_m, p_m = torch.nn.LazyLinear(3), tp.nn.LazyLinear(3)
    assert repr(p_m) == repr(t_m)
    weight = p_m.weight
    opt = tp.optim.SGD(p_m.parameters(), lr=0.1)
    t_m(torch.ones(2, 4))
    out = p_m(tp.ones(2, 4))
    assert type(p_m) is tp.nn.Linear and repr(p_m) == repr(t_m) and out.shape == (2, 3)
    assert p_m.weight is weight and weight.shape == (3, 4)
    assert list(p_m.state_dict()) == list(t_m.state_dict())
    bound = 1 / math.sqrt(4)
    assert float(p_m.weight.abs().max()) <= bound and float(p_m.bias.abs().max()) <= bound
    out.sum().backward()
    before = p_m.weight.detach().clone()
    opt.step()
    np.testing.assert_allclose(p_m.weight.detach().numpy(), before.numpy() - 0.1 * 2, rtol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_inside_compile_matches_eager(mode):
    w, bags = tp.randn(6, 3, dtype=tp.float64), tp.tensor([[1, 2, 3], [0, 0, 5], [4, 4, 4]])
    fn = lambda w, b: _f(tp).embedding_bag(b, w, mode=mode, padding_idx=0)  # noqa: E731
    np.testing.assert_allclose(tp.compile(fn)(w, bags).numpy(), fn(w, bags).numpy(), rtol=1e-12)


def test_unbatched_channel_dropout_in_place():
    x = tp.ones(8, 5, dtype=tp.float64)
    out = _f(tp).dropout1d(x, 0.5, inplace=True)
    assert out is x
    rows = x.numpy()
    assert (rows.min(-1) == rows.max(-1)).all() and set(np.unique(rows)) <= {0.0, 2.0}
    y = tp.ones(6, 2, 2, 2, dtype=tp.float64)
    _f(tp).dropout3d(y, 0.5, inplace=True)
    assert (y.numpy().reshape(6, 8).min(-1) == y.numpy().reshape(6, 8).max(-1)).all()


@pytest.mark.parametrize("name, args, shape", [
    ("LazyConv1d", (4, 3), (2, 3, 7)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)), ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), (2, 3, 5)), ("LazyConvTranspose2d", (2, 3), (3, 5, 5)),
    ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 4, 4)), ("LazyInstanceNorm1d", (), (2, 3, 5)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4))])
def test_lazy_modules_become_their_full_class_like_pytorch(name, args, shape):
    torch = pytest.importorskip("torch")
    m, tm = getattr(tp.nn, name)(*args), getattr(torch.nn, name)(*args)
    params_before = list(m.parameters())
    y, ty = m(tp.ones(*shape)), tm(torch.ones(*shape))
    assert type(m).__name__ == type(tm).__name__
    assert tuple(y.shape) == tuple(ty.shape)
    assert {n: tuple(p.shape) for n, p in m.named_parameters()} == {n: tuple(p.shape) for n, p in tm.named_parameters()}
    assert {n: tuple(b.shape) for n, b in m.named_buffers()} == {n: tuple(b.shape) for n, b in tm.named_buffers()}
    assert all(any(p is q for q in m.parameters()) for p in params_before)  # (an optimizer built before keeps them)


def test_sync_batchnorm_converts_and_normalises_as_pytorch():
    def run(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 1), lib.nn.BatchNorm2d(4),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(4, affine=False)))
        with lib.no_grad():
            net[1].weight.fill_(2.0)
        net.eval()
        s = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        seen = [repr(s).replace("tapeflow", "torch"), s[1].weight is net[1].weight, s.training]
        s.train()
        x = lib.arange(72, dtype=lib.float32).view(2, 4, 3, 3) / 10
        y = s[1](x)
        seen += [np.round(y.detach().numpy(), 5).tolist(), s[1].running_mean.tolist(), int(s[1].num_batches_tracked)]
        for bad in (lib.ones(3), lib.ones(2, 0, 3)):
            with pytest.raises(ValueError) as info:
                s[1](bad)
            seen.append(str(info.value))
        seen.append(list(lib.nn.SyncBatchNorm(4).state_dict()))
        return seen

    assert run(tp) == run(torch)


def test_rnn_cells_share_pytorchs_base_class_parameters_and_reprs():
    def run(lib):
        lib.manual_seed(0)
        cells = [lib.nn.LSTMCell(3, 4, bias=False), lib.nn.RNNCell(3, 4, nonlinearity="relu"), lib.nn.GRUCell(2, 3),
                 lib.nn.RNNCellBase(3, 4, True, 2)]
        return [(repr(c), isinstance(c, lib.nn.RNNCellBase), list(c.state_dict()),
                 [np.round(p.detach().numpy(), 6).tolist() for p in c.parameters()]) for c in cells]

    assert run(tp) == run(torch)
