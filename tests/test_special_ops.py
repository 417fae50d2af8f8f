"""Special functions, order statistics (quantile, nanquantile, nanmedian, mode), renorm and logdet against
PyTorch: values, dtypes, gradients (float64) and the errors PyTorch raises."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

NAN, INF = float("nan"), float("inf")


def _lib_call(lib, fn, args):
    return fn(lib, *[lib.tensor(a, dtype=lib.float64, requires_grad=True) if isinstance(a, np.ndarray) else a
                     for a in args])


def _both(fn, *args, grad=True):
    """`fn(lib, *tensors)` on both libraries: (values, gradients) of each, gradients of a weighted sum."""
    out = []
    for lib in (tp, torch):
        ts = [lib.tensor(a, dtype=lib.float64, requires_grad=grad) if isinstance(a, np.ndarray) else a for a in args]
        y = fn(lib, *ts)
        y0 = y[0] if isinstance(y, tuple) else y
        grads = []
        if grad and y0.requires_grad:
            w = lib.linspace(1.0, 2.0, y0.numel(), dtype=y0.dtype).reshape(y0.shape)
            tens = [t for t in ts if isinstance(t, lib.Tensor)]
            grads = [None if g is None else g.detach().numpy()
                     for g in lib.autograd.grad((y0 * w).sum(), tens, allow_unused=True)]
        vals = [v.detach().numpy() for v in (y if isinstance(y, tuple) else (y,))]
        out.append((vals, grads))
    return out


def _check(fn, *args, grad=True, rtol=1e-10):
    rtol = RTOL.get(fn, rtol)
    (mine, my_g), (theirs, their_g) = _both(fn, *args, grad=grad)
    for a, b in zip(mine, theirs):
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12, equal_nan=True)
    assert len(my_g) == len(their_g)
    for a, b in zip(my_g, their_g):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12, equal_nan=True)


X = np.array([-2.5, -1.0, -0.0, 0.0, 0.3, 1.0, 2.0, 7.5])
POS = np.array([0.0, 0.2, 1.0, 2.5, 7.0])
Y = np.array([1.0, -2.0, 0.5, -0.5, 3.0, 0.0, -1.0, 2.0])

ELEMENTWISE = {
    "copysign": (lambda lib, x, y: lib.copysign(x, y), X, Y),
    "logaddexp": (lambda lib, x, y: lib.logaddexp(x, y), X, Y),
    "logaddexp_inf": (lambda lib, x: lib.logaddexp(x, lib.full_like(x, -INF)), X),
    "logaddexp2": (lambda lib, x, y: lib.logaddexp2(x, y), X, Y),
    "sinc": (lambda lib, x: lib.sinc(x), X),
    "xlogy": (lambda lib, x, y: lib.xlogy(x, y), POS, np.array([0.0, 1.0, 2.0, 0.5, NAN])),
    "xlog1py": (lambda lib, x, y: lib.special.xlog1py(x, y), POS, np.array([0.0, -1.0, 2.0, 0.5, 1.0])),
    "entr": (lambda lib, x: lib.special.entr(x), np.array([0.2, 1.0, 2.5, 7.0])),
    "deg2rad": (lambda lib, x: lib.deg2rad(x), X),
    "rad2deg": (lambda lib, x: lib.rad2deg(x), X),
    "i0": (lambda lib, x: lib.i0(x), X),
    "i0e": (lambda lib, x: lib.special.i0e(x), X),
    "i1": (lambda lib, x: lib.special.i1(x), X),
    "i1e": (lambda lib, x: lib.special.i1e(x), X),
    "polygamma1": (lambda lib, x: lib.polygamma(1, x), POS[1:]),
    "polygamma3": (lambda lib, x: x.polygamma(3), POS[1:]),
    "mvlgamma": (lambda lib, x: lib.mvlgamma(x, 3), np.array([1.1, 2.5, 4.0])),
    "igamma_x": (lambda lib, x: lib.igamma(lib.tensor([0.5, 1.0, 2.0, 3.0], dtype=lib.float64), x),
                 np.array([0.1, 1.0, 2.5, 0.7])),
    "igammac_x": (lambda lib, x: lib.igammac(lib.tensor([0.5, 1.0, 2.0, 3.0], dtype=lib.float64), x),
                  np.array([0.1, 1.0, 2.5, 0.7])),
    "erfcx": (lambda lib, x: lib.special.erfcx(x), X),
    "ndtr": (lambda lib, x: lib.special.ndtr(x), X),
    "ndtri": (lambda lib, x: lib.special.ndtri(x), np.array([0.01, 0.5, 0.975])),
    "log_ndtr": (lambda lib, x: lib.special.log_ndtr(x), np.array([-30.0, -3.0, 0.0, 4.0])),
    "frexp": (lambda lib, x: lib.frexp(x), np.array([8.0, 0.75, -3.0, 1e-3])),
    # (non-negative exponents: PyTorch's gradient computes 2 ** other in integers, so 2 ** -1 is 0 there)
    "ldexp": (lambda lib, x: lib.ldexp(x, lib.tensor([2, 3, 1, 0])), np.array([1.0, 3.0, -2.0, 0.5])),
    "expit": (lambda lib, x: lib.special.expit(x), X),
    "logit_eps": (lambda lib, x: lib.special.logit(x, eps=0.1), np.array([0.0, 0.05, 0.5, 0.97])),
    "gammaln": (lambda lib, x: lib.special.gammaln(x), POS[1:]),
    "fmax_nan": (lambda lib, x, y: lib.fmax(x, y), np.array([1.0, NAN, 2.0, 3.0]), np.array([1.0, 2.0, NAN, 4.0])),
    "fmin_nan": (lambda lib, x, y: lib.fmin(x, y), np.array([1.0, NAN, 2.0, 3.0]), np.array([1.0, 2.0, NAN, 0.0])),
    "hypot": (lambda lib, x, y: lib.hypot(x, y), X, Y),
    "std_constant_rows": (lambda lib, x: x.reshape(2, 3).std(1), np.array([1.0, 1.0, 1.0, 0.0, 2.0, 5.0])),
    "pow_zero_exponent": (lambda lib, x: x ** 0, X),
    "bce_at_the_ends": (lambda lib, x: lib.nn.functional.binary_cross_entropy(x, lib.tensor([0.0, 1.0, 1.0, 0.0],
                                                                                            dtype=lib.float64)),
                        np.array([0.0, 1.0, 0.5, 1.0])),
    "bce_target_grad": (lambda lib, x, t: lib.nn.functional.binary_cross_entropy(x, t, reduction="sum"),
                        np.array([0.2, 0.7, 0.5]), np.array([0.0, 0.3, 1.0])),
}


# Series and continued fractions: JAX's and PyTorch's implementations agree to a few parts in 1e10.
RTOL = {ELEMENTWISE[n][0]: 1e-8 for n in ("log_ndtr", "polygamma1", "polygamma3", "mvlgamma", "igamma_x",
                                          "igammac_x", "ndtri", "erfcx", "i0", "i0e", "i1", "i1e")}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_equal_pytorch(name):
    fn, *args = ELEMENTWISE[name]
    _check(fn, *args)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.signbit(lib.tensor([-0.0, 0.0, -1.0, NAN])),
    lambda lib: lib.isneginf(lib.tensor([-INF, INF, NAN, 1.0])),
    lambda lib: lib.isposinf(lib.tensor([-INF, INF, NAN, 1.0])),
    lambda lib: lib.gcd(lib.tensor([12, -18, 0, 7]), lib.tensor([8, 12, 5, -21])),
    lambda lib: lib.lcm(lib.tensor([4, -6, 0, 7]), lib.tensor([6, 4, 5, 3])),
    lambda lib: lib.bitwise_left_shift(lib.tensor([1, 3, -2]), 2),
    lambda lib: lib.bitwise_right_shift(lib.tensor([16, -16, 7]), lib.tensor([2, 1, 3])),
    lambda lib: lib.heaviside(lib.tensor([-1.5, 0.0, 2.0]), lib.tensor([0.5])),
    lambda lib: lib.nextafter(lib.tensor([1.0, 2.0]), lib.tensor([2.0, 1.0])) - lib.tensor([1.0, 2.0]),
    lambda lib: lib.copysign(lib.tensor([1, 2, 3]), -1),
    lambda lib: lib.tensor([2, 3, 1, -1, -1, 0, 5]) ** lib.tensor([1, -1, -2, -1, -2, -1, 0]),
    lambda lib: lib.tensor([2, 3], dtype=lib.int32) ** lib.tensor([3, 2], dtype=lib.int32),
    lambda lib: lib.xlogy(lib.tensor([0, 2]), lib.tensor([0, 3])),
    lambda lib: lib.deg2rad(lib.tensor([180, 90])),
    lambda lib: lib.special.zeta(lib.tensor([2.0, 3.0]), lib.tensor([1.0, 2.0])),
    lambda lib: lib.tensor([1.0, 2.0]).copysign_(lib.tensor([-1.0, 1.0])),
    lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]]).logdet(),
    lambda lib: lib.logdet(lib.tensor([[0.0, 1.0], [1.0, 0.0]])),
    lambda lib: lib.logdet(lib.tensor([[1.0, 2.0], [2.0, 4.0]])),
], ids=lambda f: f.__code__.co_firstlineno)
def test_values_and_dtypes_equal_pytorch(fn):
    a, b = fn(tp), fn(torch)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, equal_nan=True)


def _rows(n=4):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (3, n)).astype(np.float64)  # ties
    x[1, 1] = NAN
    return x


QUANTILE = {
    "scalar": (lambda lib, x: lib.quantile(x, 0.3), np.array([4.0, 1.0, 3.0, 2.0, 2.0])),
    "ties": (lambda lib, x: x.quantile(0.5), np.array([1.0, 2.0, 2.0, 3.0])),
    "dim": (lambda lib, x: x.quantile(0.25, dim=1), np.arange(12.0).reshape(3, 4)[:, ::-1].copy()),
    "dim_keepdim": (lambda lib, x: x.quantile(0.7, dim=0, keepdim=True), np.arange(12.0).reshape(3, 4)),
    "q_tensor": (lambda lib, x: x.quantile(lib.tensor([0.0, 0.5, 1.0], dtype=lib.float64), dim=1),
                 np.arange(12.0).reshape(3, 4) % 5),
    "q_tensor_all": (lambda lib, x: x.quantile(lib.tensor([0.1, 0.9], dtype=lib.float64), keepdim=True),
                     np.arange(6.0).reshape(2, 3)),
    "nan_row": (lambda lib, x: x.quantile(0.5, dim=1), _rows()),
    "nanquantile": (lambda lib, x: x.nanquantile(0.4, dim=1), _rows()),
    "nanquantile_all_nan": (lambda lib, x: x.nanquantile(0.5, dim=1), np.array([[NAN, NAN], [1.0, NAN]])),
    "nanmedian": (lambda lib, x: x.nanmedian(), np.array([1.0, NAN, 2.0, 2.0])),
    "nanmedian_dim": (lambda lib, x: x.nanmedian(1), _rows(5)),
    "nanmedian_dim_keepdim": (lambda lib, x: x.nanmedian(0, keepdim=True), _rows(5)),
    "median_ties": (lambda lib, x: x.median(), np.array([1.0, 2.0, 2.0, 3.0, 2.0])),
    "mode": (lambda lib, x: x.mode(), np.array([1.0, 2.0, 2.0, 1.0, 3.0])),
    "mode_dim0": (lambda lib, x: x.mode(0, keepdim=True), np.array([[1.0, 3.0], [2.0, 3.0], [2.0, 1.0]])),
    "mode_rows": (lambda lib, x: x.mode(1), np.array([[1.0, 2.0, 2.0, 1.0], [3.0, 3.0, 0.0, 0.0], [5.0, 5.0, 5.0, 4.0]])),
    "renorm": (lambda lib, x: x.renorm(2, 0, 1.0), np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])),
    "renorm_p1_dim1": (lambda lib, x: lib.renorm(x, 1, 1, 2.0), np.array([[3.0, 0.4], [-1.0, 0.5]])),
    "logdet": (lambda lib, x: x.logdet(), np.array([[4.0, 1.0], [1.0, 3.0]])),
    "slogdet": (lambda lib, x: lib.linalg.slogdet(x), np.array([[0.0, 2.0], [1.0, 3.0]])),
}


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, 1.0])
def test_quantile_interpolations_equal_pytorch(interp, q):
    x = np.array([[4.0, 1.0, 3.0, 2.0, 2.0], [0.5, NAN, 1.5, 7.0, 1.0]])
    _check(lambda lib, t: t.quantile(q, dim=1, interpolation=interp), x)
    _check(lambda lib, t: t.nanquantile(q, dim=1, interpolation=interp), x)


@pytest.mark.parametrize("name", sorted(QUANTILE))
def test_order_statistics_equal_pytorch(name):
    fn, *args = QUANTILE[name]
    _check(fn, *args)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.tensor([1, 2]).quantile(0.5),
    lambda lib: lib.tensor([1.0, 2.0]).quantile(1.5),
    lambda lib: lib.tensor([1.0, 2.0]).quantile(lib.tensor([[0.5]])),
    lambda lib: lib.tensor([1.0, 2.0]).quantile(lib.tensor([0.5, 2.0])),
    lambda lib: lib.tensor([1.0, 2.0]).quantile(lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.tensor([]).quantile(0.5),
    lambda lib: lib.tensor([1.0, 2.0]).quantile(0.5, interpolation="cubic"),
    lambda lib: lib.tensor([1.0]).renorm(2, 0, 1.0),
    lambda lib: lib.ones(2, 2).renorm(0, 0, 1.0),
    lambda lib: lib.ones(2, 2).renorm(2, 0, -1.0),
    lambda lib: lib.logaddexp(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.gcd(lib.tensor([1.0]), lib.tensor([2.0])),
    lambda lib: lib.heaviside(lib.tensor([1.0]), lib.tensor([1])),
    lambda lib: lib.polygamma(-1, lib.tensor([1.0])),
    lambda lib: lib.igamma(lib.tensor([1.0], requires_grad=True), lib.tensor([1.0])).sum().backward(),
    lambda lib: lib.frexp(lib.tensor([1, 2])),
    lambda lib: lib.tensor([]).nanmedian(0),
    lambda lib: lib.ones(2, 0).mode(1),
], ids=lambda f: f.__code__.co_firstlineno)
def test_errors_equal_pytorchs(fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as mine:
        fn(tp)
    want = str(theirs.value).split("\n")[0]
    assert want[:40] in str(mine.value), (str(mine.value), want)


def test_special_namespace_matches_pytorchs_names():
    for name in tp.special.__all__:
        assert hasattr(torch.special, name), name


def _eig_case(lib, a):
    t = lib.tensor(a, requires_grad=True)
    w, v = lib.linalg.eig(t)
    weights = lib.arange(1.0, a.shape[-1] + 1, dtype=lib.float64)
    loss = w.real.sum() + 0.5 * w.imag.abs().sum() + ((v.abs() ** 2) * weights[:, None]).sum()
    loss.backward()
    ev = lib.linalg.eigvals(t.detach())
    return w.detach().numpy(), v.detach().numpy(), t.grad.numpy(), ev.numpy()


@pytest.mark.parametrize("seed", [0, 1])
def test_eig_equals_pytorchs(seed):
    a = np.random.default_rng(seed).standard_normal((4, 4))
    mine, theirs = _eig_case(tp, a), _eig_case(torch, a)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-8, atol=1e-10)
