"""nn.utils.parametrizations.orthogonal: for each map, with and without the trivialization, on square, tall, wide
and batched weights, the registered weight, its original, its `base`, assignment through `right_inverse`, a few
optimizer steps and the errors equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

MAPS = [None, "matrix_exp", "cayley", "householder"]
SHAPES = {"square": (4, 4), "tall": (6, 3), "wide": (3, 6)}


def _np(t):
    return t.detach().numpy()


def _linear(lib, shape, w):
    m = lib.nn.Linear(shape[1], shape[0]).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w))
        m.bias.copy_(lib.tensor(np.linspace(-0.5, 0.5, shape[0])))
    return m


def _pair(shape, orthogonal_map, use_trivialization, seed=0):
    w = np.random.default_rng(seed).normal(size=shape)
    mods = []
    for lib in (torch, tp):
        m = _linear(lib, shape, w)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map,
                                                 use_trivialization=use_trivialization)
        mods.append(m)
    return mods


def _gram(q):
    q = _np(q)
    q = q if q.shape[-2] >= q.shape[-1] else np.swapaxes(q, -1, -2)
    return np.swapaxes(q, -1, -2).conj() @ q


def _copy_base(mt, mp, name="weight"):
    """A tall or wide `base` is completed with random columns; give tapeflow PyTorch's."""
    with tp.no_grad():
        getattr(mp.parametrizations, name)[0].base.copy_(tp.tensor(_np(getattr(mt.parametrizations, name)[0].base)))


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_linear_equals_pytorch(kind, orthogonal_map, use_trivialization):
    shape = SHAPES[kind]
    mt, mp = _pair(shape, orthogonal_map, use_trivialization)
    assert type(mp).__name__ == type(mt).__name__ == "ParametrizedLinear"
    assert list(mp.state_dict()) == list(mt.state_dict())
    np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-14)
    np.testing.assert_allclose(_np(mp.parametrizations.weight.original), _np(mt.parametrizations.weight.original),
                               atol=1e-14)
    k = min(shape)
    np.testing.assert_allclose(_gram(mp.weight), np.eye(k), atol=1e-14)
    if use_trivialization:  # the first min(m, n) columns of base are the orthogonalised weight
        bt, bp = _np(mt.parametrizations.weight[0].base), _np(mp.parametrizations.weight[0].base)
        np.testing.assert_allclose(bp[:, :k], bt[:, :k], atol=1e-14)
        np.testing.assert_allclose(bp.T @ bp, np.eye(max(shape)), atol=1e-14)
        _copy_base(mt, mp)
    x = np.random.default_rng(1).normal(size=(5, shape[1]))
    for opt_t, opt_p in ((torch.optim.SGD(mt.parameters(), lr=0.1, momentum=0.9),
                          tp.optim.SGD(mp.parameters(), lr=0.1, momentum=0.9)),
                         (torch.optim.Adam(mt.parameters(), lr=0.05), tp.optim.Adam(mp.parameters(), lr=0.05))):
        for _ in range(3):
            for m, opt, lib in ((mt, opt_t, torch), (mp, opt_p, tp)):
                opt.zero_grad()
                y = m(lib.tensor(x))
                (y.sin() * y).sum().backward()
                opt.step()
            np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-12)
            np.testing.assert_allclose(_np(mp.parametrizations.weight.original),
                                       _np(mt.parametrizations.weight.original), atol=1e-12)
            np.testing.assert_allclose(_gram(mp.weight), np.eye(k), atol=1e-12)


@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_assignment(kind, orthogonal_map):
    shape = SHAPES[kind]
    q = np.linalg.qr(np.random.default_rng(2).normal(size=(max(shape), min(shape))))[0]
    q = q if shape[0] >= shape[1] else q.T
    mt, mp = _pair(shape, orthogonal_map, True)
    mt.weight, mp.weight = torch.tensor(q), tp.tensor(q)
    np.testing.assert_allclose(_np(mp.weight), q, atol=1e-14)
    np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-14)
    np.testing.assert_allclose(_np(mp.parametrizations.weight.original), _np(mt.parametrizations.weight.original))
    if shape[0] == shape[1]:
        np.testing.assert_allclose(_np(mp.parametrizations.weight[0].base), _np(mt.parametrizations.weight[0].base),
                                   atol=1e-14)
    if orthogonal_map == "householder" or (orthogonal_map is None and shape[0] != shape[1]):
        mt, mp = _pair(shape, orthogonal_map, False)  # the reflectors of q's QR decomposition
        mt.weight, mp.weight = torch.tensor(q), tp.tensor(q)
        np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-14)
        np.testing.assert_allclose(_np(mp.weight), q, atol=1e-14)
        np.testing.assert_allclose(_np(mp.parametrizations.weight.original), _np(mt.parametrizations.weight.original),
                                   atol=1e-14)
    else:
        mt, mp = _pair(shape, orthogonal_map, False)
        with pytest.raises(NotImplementedError) as et:
            mt.weight = torch.tensor(q)
        with pytest.raises(NotImplementedError) as ep:
            mp.weight = tp.tensor(q)
        assert str(ep.value) == str(et.value)


def test_square_weights():
    """An orthogonal weight is kept as it is; a non-orthogonal one assigned later is orthogonalised by QR."""
    q = np.linalg.qr(np.random.default_rng(3).normal(size=(4, 4)))[0]
    mt, mp = _linear(torch, (4, 4), q), _linear(tp, (4, 4), q)
    torch.nn.utils.parametrizations.orthogonal(mt)
    tp.nn.utils.parametrizations.orthogonal(mp)
    np.testing.assert_array_equal(_np(mp.weight), q)
    np.testing.assert_array_equal(_np(mp.parametrizations.weight[0].base), _np(mt.parametrizations.weight[0].base))
    a = np.random.default_rng(4).normal(size=(4, 4))
    mt.weight, mp.weight = torch.tensor(a), tp.tensor(a)
    np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-14)
    np.testing.assert_allclose(_gram(mp.weight), np.eye(4), atol=1e-14)


class _Holder:
    """A module holding one parameter `weight` of any shape and dtype."""

    @staticmethod
    def make(lib, value):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.tensor(value))
        return m


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("shape", [(2, 3, 3), (2, 5, 2), (3, 2, 4)])
def test_batches_of_matrices(shape, orthogonal_map, use_trivialization):
    w = np.random.default_rng(5).normal(size=shape)
    mt, mp = _Holder.make(torch, w), _Holder.make(tp, w)
    for m, lib in ((mt, torch), (mp, tp)):
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map,
                                                 use_trivialization=use_trivialization)
    np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-14)
    np.testing.assert_allclose(_np(mp.parametrizations.weight.original), _np(mt.parametrizations.weight.original),
                               atol=1e-14)
    np.testing.assert_allclose(_gram(mp.weight), np.broadcast_to(np.eye(min(shape[1:])), (shape[0],) + (min(shape[1:]),) * 2),
                               atol=1e-14)
    if use_trivialization:
        _copy_base(mt, mp)
    t = np.random.default_rng(6).normal(size=shape)
    ot, op = torch.optim.Adam(mt.parameters(), lr=0.05), tp.optim.Adam(mp.parameters(), lr=0.05)
    for _ in range(3):
        for m, opt, lib in ((mt, ot, torch), (mp, op, tp)):
            opt.zero_grad()
            ((m.weight - lib.tensor(t)) ** 2).sum().backward()
            opt.step()
        np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-12)


@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_complex_weights(shape, orthogonal_map):
    rng = np.random.default_rng(7)
    w = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    mt, mp = _Holder.make(torch, w), _Holder.make(tp, w)
    for m, lib in ((mt, torch), (mp, tp)):
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
    np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-14)
    np.testing.assert_allclose(_gram(mp.weight), np.eye(min(shape)), atol=1e-14)
    _copy_base(mt, mp)
    t = rng.normal(size=shape)
    ot, op = torch.optim.SGD(mt.parameters(), lr=0.1), tp.optim.SGD(mp.parameters(), lr=0.1)
    for _ in range(2):
        for m, opt, lib in ((mt, ot, torch), (mp, op, tp)):
            opt.zero_grad()
            (m.weight - lib.tensor(t)).abs().pow(2).sum().backward()
            opt.step()
        np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-12)


def test_float32():
    mt, mp = (_linear(lib, (5, 5), np.random.default_rng(8).normal(size=(5, 5))).float() for lib in (torch, tp))
    for m, lib in ((mt, torch), (mp, tp)):
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="cayley")
    assert mp.weight.dtype == tp.float32
    np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-6)


def _raises(fn_t, fn_p):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as ep:
        fn_p()
    assert type(ep.value) is type(et.value)
    assert str(ep.value).replace("tapeflow", "torch") == str(et.value)


def test_errors():
    def orth(lib):
        return lib.nn.utils.parametrizations.orthogonal

    _raises(lambda: orth(torch)(torch.nn.Linear(3, 3), orthogonal_map="qr"),
            lambda: orth(tp)(tp.nn.Linear(3, 3), orthogonal_map="qr"))
    _raises(lambda: orth(torch)(torch.nn.Linear(3, 3), orthogonal_map=3),
            lambda: orth(tp)(tp.nn.Linear(3, 3), orthogonal_map=3))
    _raises(lambda: orth(torch)(torch.nn.LayerNorm(3)), lambda: orth(tp)(tp.nn.LayerNorm(3)))  # 1-D weight
    _raises(lambda: orth(torch)(torch.nn.Linear(3, 3), "bias"), lambda: orth(tp)(tp.nn.Linear(3, 3), "bias"))
    _raises(lambda: orth(torch)(torch.nn.ReLU()), lambda: orth(tp)(tp.nn.ReLU()))
    wc = np.ones((3, 3), dtype=np.complex128)
    _raises(lambda: orth(torch)(_Holder.make(torch, wc), orthogonal_map="householder"),
            lambda: orth(tp)(_Holder.make(tp, wc), orthogonal_map="householder"))
    mt, mp = _pair((3, 3), None, True)
    a = np.eye(4)

    def assign(m, v):
        m.weight = v

    _raises(lambda: assign(mt, torch.tensor(a)), lambda: assign(mp, tp.tensor(a)))


def test_remove_parametrizations():
    mt, mp = _pair((6, 3), None, True)
    for m, lib in ((mt, torch), (mp, tp)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    assert type(mp).__name__ == "Linear" and list(mp.state_dict()) == list(mt.state_dict())
    np.testing.assert_allclose(_np(mp.weight), _np(mt.weight), atol=1e-14)
