"""Structural, indexing and counting ops against PyTorch: values, dtypes, shapes, gradients (float64, with ties
and repeated indices) and the errors bad arguments raise.

Each case is one function of a module `m` (`torch` or `tapeflow`) and NumPy arguments: float arrays become
tensors that require grad, integer and bool arrays plain tensors. Both libraries run it; the results must agree,
and so must the gradients of a random weighted sum of the float results.
"""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)


def _f(*shape):
    return R.standard_normal(shape)


def _ints(*values):
    return np.asarray(values, np.int64)


def _tensors(m, args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            t = m.tensor(a)
            if a.dtype == np.float64:
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(a)
    return out


def _outs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def check(fn, *args, grad=True, atol=1e-12):
    """`fn(torch, *args)` and `fn(tp, *args)` agree in values, dtypes, and gradients."""
    ta, pa = _tensors(torch, args), _tensors(tp, args)
    tout, pout = _outs(fn(torch, *ta)), _outs(fn(tp, *pa))
    assert len(tout) == len(pout)
    for t, p in zip(tout, pout):
        if not hasattr(t, "dtype"):
            assert t == p
            continue
        assert tuple(t.shape) == tuple(p.shape), (t.shape, p.shape)
        assert _dtype_name(t) == _dtype_name(p), (t.dtype, p.dtype)
        np.testing.assert_allclose(_np(p), _np(t), rtol=1e-12, atol=atol, equal_nan=True)
    tin = [t for t in ta if isinstance(t, torch.Tensor) and t.requires_grad]
    pin = [p for p in pa if isinstance(p, tp.Tensor) and p.requires_grad]
    touts = [(i, t) for i, t in enumerate(tout) if hasattr(t, "dtype") and t.dtype.is_floating_point and t.requires_grad]
    if not grad or not tin or not touts:
        return
    weights = [R.standard_normal(tuple(t.shape)) for _, t in touts]
    tg = torch.autograd.grad(sum((t * torch.tensor(w)).sum() for (_, t), w in zip(touts, weights)), tin,
                             allow_unused=True)
    pg = tp.autograd.grad(sum((pout[i] * tp.tensor(w)).sum() for (i, _), w in zip(touts, weights)), pin,
                          allow_unused=True)
    for a, b in zip(tg, pg):
        if a is None:
            assert b is None or not np.any(_np(b))
            continue
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-10, atol=1e-12)


def check_error(fn, *args, phrase=None):
    """Both raise the same class; the message is PyTorch's (its first line), or contains `phrase`."""
    with pytest.raises(Exception) as te:
        fn(torch, *_tensors(torch, args))
    with pytest.raises(Exception) as pe:
        fn(tp, *_tensors(tp, args))
    assert type(pe.value) is type(te.value), (te.value, pe.value)
    if phrase is None:
        assert str(pe.value) == str(te.value).split("\n")[0]
    else:
        assert phrase in str(te.value) and phrase in str(pe.value), (te.value, pe.value)


# == 1. writes at indices ===========================================================================================
TIES = np.array([[3.0, 1.0, 0.0, 2.0], [1.0, 1.0, 5.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
SRC_TIES = np.array([[3.0, 3.0, 2.0, 0.0], [5.0, 1.0, 0.0, 0.0], [2.0, 2.0, 7.0, 2.0]])
IDX = _ints([0, 0, 1, 3], [2, 0, 0, 3], [1, 1, 1, 1])
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    def f(m, x, i, s):
        return m.scatter_reduce(x, 1, i, s, reduce, include_self=include_self)

    check(f, TIES.copy(), IDX, SRC_TIES.copy())  # ties, zeros, repeated indices
    check(f, _f(3, 4), IDX, _f(3, 5), grad=False)  # src larger than index (PyTorch's backward fails there)
    check(lambda m, x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
          _f(4, 2), _ints([0, 1], [0, 1], [3, 3]), _f(3, 2))
    check(lambda m, x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
          np.arange(6).reshape(3, 2) - 2, _ints([0, 1], [0, 1], [2, 2]), np.arange(6).reshape(3, 2) * 3 - 7)


def test_scatter_reduce_prod_zeros():
    x, s, i = np.array([0.0, 2.0, 3.0, 0.0]), np.array([0.0, 4.0, 0.0, 0.0, 5.0, 2.0]), _ints(0, 1, 1, 2, 2, 3)
    for inc in (True, False):
        check(lambda m, x, i, s, inc=inc: m.scatter_reduce(x, 0, i, s, "prod", include_self=inc), x, i, s)


def test_scatter_reduce_in_place():
    check(lambda m, x, i, s: (x * 1).scatter_reduce_(1, i, s, "amax"), TIES.copy(), IDX, SRC_TIES.copy())


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    def f(m, x, i, s):
        return x.index_reduce(0, i, s, reduce, include_self=include_self)

    check(f, TIES.copy(), _ints(0, 2, 0), SRC_TIES.copy())
    check(lambda m, x, i, s: m.index_reduce(x, 1, i, s, reduce, include_self=include_self),
          _f(2, 3), _ints(2, 0, 2, 2, 1), _f(2, 5))
    check(lambda m, x, i, s: (x * 1).index_reduce_(1, i, s, reduce, include_self=include_self),
          TIES.copy(), _ints(3, 3, 0, 1), SRC_TIES.copy())
    check(f, np.arange(6).reshape(3, 2) - 2, _ints(0, 0, 2), np.arange(6).reshape(3, 2) * 3 - 7)


@pytest.mark.parametrize("fn", [
    lambda m, x, i, s: m.index_copy(x, 0, i, s),
    lambda m, x, i, s: (x * 1).index_copy_(0, i, s),
])
def test_index_copy(fn):
    check(fn, _f(4, 3), _ints(2, 0), _f(2, 3))
    check(fn, _f(4, 3), _ints(1, 1, 3), _f(3, 3))  # repeated: every copied row gets its gradient
    check(lambda m, x, i, s: x.index_copy(1, i, s), _f(2, 4), _ints(3, 0), _f(2, 2))
    check(lambda m, x, i, s: x.index_copy(0, i, s), _f(3), np.asarray(1), np.asarray(2.5))


def test_index_fill():
    check(lambda m, x, i: m.index_fill(x, 1, i, -2.0), _f(2, 4), _ints(0, 3, 3, -1))
    check(lambda m, x, i, v: x.index_fill(0, i, v), _f(3, 2), _ints(2, 0, 2), np.asarray(1.5))
    check(lambda m, x, i, v: (x * 1).index_fill_(0, i, v), _f(3, 2), _ints(1, 1), np.asarray(1.5))
    check(lambda m, x, i: x.index_fill(0, i, 7), np.arange(6).reshape(3, 2), _ints(1))
    check(lambda m, x, i: m.index_fill(x, 0, i, 7.0), _f(), np.asarray(0))


def test_masked_scatter():
    mask = np.array([[True, False, True], [False, True, True]])
    check(lambda m, x, k, s: m.masked_scatter(x, k, s), _f(2, 3), mask, _f(6))
    check(lambda m, x, k, s: x.masked_scatter(k, s), _f(2, 3), mask, _f(2, 5))  # source larger
    check(lambda m, x, k, s: (x * 1).masked_scatter_(k, s), _f(2, 3), np.array([True, False, True]), _f(4))
    check(lambda m, x, k, s: m.masked_scatter(x, k, s), _f(3), mask, _f(5))  # self broadcasts to the mask
    check(lambda m, x, k, s: x.masked_scatter(k, s), _f(2, 3), np.zeros((2, 3), bool), _f(0))


def test_put():
    check(lambda m, x, i, s: x.put(i, s), _f(2, 3), _ints([0, -1], [4, 2]), _f(2, 2))
    check(lambda m, x, i, s: m.put(x, i, s, accumulate=True), _f(2, 3), _ints(1, 1, -5, 0), _f(4))
    check(lambda m, x, i, s: x.put(i, s), _f(2, 3), _ints(1, 1), np.array([3.0, 3.0]))
    check(lambda m, x, i, s: (x * 1).put_(i, s, accumulate=True), _f(3), _ints(2, 2), _f(2))


def test_index_put_function():
    def f(m, x, i, v):
        y = x * 1
        return m.index_put_(y, (i,), v, accumulate=True)

    check(f, _f(4), _ints(0, 0, 3), _f(3))


def test_view_scatters():
    check(lambda m, x, s: m.slice_scatter(x, s, 1, 1, None, 2), _f(3, 5), _f(3, 2))
    check(lambda m, x, s: m.slice_scatter(x, s), _f(2, 2), _f(2, 2))
    check(lambda m, x, s: x.slice_scatter(s, dim=0, start=-2, end=10), _f(3, 2), _f(2, 2))
    check(lambda m, x, s: m.select_scatter(x, s, -1, -2), _f(3, 4), _f(3))
    check(lambda m, x, s: x.select_scatter(s, 0, 1), _f(2), _f())
    check(lambda m, x, s: m.diagonal_scatter(x, s), _f(3, 3), _f(3))
    check(lambda m, x, s: m.diagonal_scatter(x, s, -1), _f(3, 4), _f(2))
    check(lambda m, x, s: x.diagonal_scatter(s, 2, 0, 2), _f(3, 2, 4), _f(2, 2))


def test_traced_paths_give_the_tape_numbers():
    """Under `jax.jit` and `jax.grad` (through `to_jax`) the new ops give the tape's values and gradients."""
    import jax

    def f(x, i, s):
        y = tp.scatter_reduce(x, 1, i, s, "amax") + x.index_fill(0, i[0, :2], 0.0)
        z = x.unfold(1, 2, 1).sum(-1).diff(dim=1) * tp.histc(x, 3, -1.0, 4.0)[0]
        return (y * y).sum() + z.sum() + tp.cov(s).sum() + tp.bucketize(s, tp.tensor([1.0, 2.5])).sum()

    x, i, s = tp.tensor(TIES, requires_grad=True), tp.tensor(IDX), tp.tensor(SRC_TIES, requires_grad=True)
    out = f(x, i, s)
    gx, gs = tp.autograd.grad(out, (x, s))
    g = tp.interop.to_jax(f)
    val, (jx, js) = jax.jit(jax.value_and_grad(g, argnums=(0, 2)))(x.detach().jax, i.jax, s.detach().jax)
    np.testing.assert_allclose(float(val), out.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jx), gx.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(js), gs.numpy(), rtol=1e-12, atol=1e-12)


BAD_WRITES = [
    (lambda m, x, i: x.scatter_reduce(0, i, x, "foo"), (_f(3, 2), _ints([0, 1]))),
    (lambda m, x, i: x.scatter_reduce(0, i, x, "add"), (_f(3, 2), _ints([0, 1]))),
    (lambda m, x, i: x.scatter_reduce(0, i.float(), x, "sum"), (_f(3, 2), _ints([0, 1]))),
    (lambda m, x, i: x.scatter_reduce(0, i, x, "sum"), (_f(3, 2), _ints(0, 1))),
    (lambda m, x, i: x.scatter_reduce(0, i, x.float(), "sum"), (_f(3, 2), _ints([0, 1]))),
    (lambda m, x, i: x.scatter_reduce(0, i, x, "sum"), (_f(3, 2), _ints([0, 3]))),
    (lambda m, x, i: x.scatter_reduce(0, i, x, "sum"), (_f(3, 2), _ints([-1, 0]))),
    (lambda m, x, i: x.scatter_reduce(0, i, x, "sum"), (_f(3, 2), np.zeros((2, 3), np.int64))),
    (lambda m, x, i: x.scatter_reduce(2, i, x, "sum"), (_f(3, 2), _ints([0, 1]))),
    (lambda m, x, i: x.index_reduce(0, i, x[:1], "sum"), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_reduce(0, i.float(), x[:1], "prod"), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_reduce(0, i, x[:1], "prod"), (_f(3, 2), _ints(3))),
    (lambda m, x, i: x.index_reduce(0, i, x[:1], "prod"), (_f(3, 2), _ints(-1))),
    (lambda m, x, i: x.index_reduce(0, i, x[:1], "prod"), (_f(3, 2), _ints(0, 1))),
    (lambda m, x, i: x.index_reduce(0, i, x[:1].float(), "prod"), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_reduce(0, i, x[:1], "prod"), (_f(3, 2), _ints([0]))),
    (lambda m, x, i: x.index_reduce(0, i, x[:1, :1], "prod"), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_copy(0, i, x[:1]), (_f(3, 2), _ints(3))),
    (lambda m, x, i: x.index_copy(0, i, x[:1]), (_f(3, 2), _ints(-1))),
    (lambda m, x, i: x.index_copy(0, i, x[:1]), (_f(3, 2), _ints(0, 1))),
    (lambda m, x, i: x.index_copy(0, i, x[:1].float()), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_copy(0, i.float(), x[:1]), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_copy(0, i.int(), x[:1]), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_copy(1, i, m.zeros(2, 1, 4, dtype=m.float64)), (_f(3, 5, 2), _ints(0))),
    (lambda m, x, i: x.index_copy(0, i, x[:1]), (_f(3, 2), _ints([0]))),
    (lambda m, x, i: x.index_fill(0, i, 1.0), (_f(3, 2), _ints(3))),
    (lambda m, x, i: x.index_fill(0, i.float(), 1.0), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_fill(0, i, m.ones(2)), (_f(3, 2), _ints(0))),
    (lambda m, x, i: x.index_fill(0, i, 1.0), (_f(3, 2), _ints([0]))),
    (lambda m, x, k: x.masked_scatter(k.float(), x), (_f(3, 2), np.ones((3, 2), bool))),
    (lambda m, x, k: x.masked_scatter(k, x[:2]), (_f(3, 2), np.ones((3, 2), bool))),
    (lambda m, x, k: x.masked_scatter(k, x.float()), (_f(3, 2), np.ones((3, 2), bool))),
    (lambda m, x, i: x.put(i, m.ones(1, dtype=m.float64)), (_f(3, 2), _ints(6))),
    (lambda m, x, i: x.put(i, m.ones(1, dtype=m.float64)), (_f(3, 2), _ints(-7))),
    (lambda m, x, i: x.put(i, m.ones(1, dtype=m.float64)), (_f(3, 2), _ints(1, 2))),
    (lambda m, x, i: x.put(i, m.ones(2)), (_f(3, 2), _ints(1, 2))),
    (lambda m, x, i: x.put(i.float(), m.ones(2, dtype=m.float64)), (_f(3, 2), _ints(1, 2))),
    (lambda m, x: m.slice_scatter(x, m.zeros(2, 2, dtype=m.float64), 0, 0, 1), (_f(3, 2),)),
    (lambda m, x: m.slice_scatter(x, m.zeros(1, 2, dtype=m.float64), 0, 0, 1, 0), (_f(3, 2),)),
    (lambda m, x: m.select_scatter(x, m.zeros(3, dtype=m.float64), 0, 0), (_f(3, 2),)),
    (lambda m, x: m.select_scatter(x, m.zeros(2, dtype=m.float64), 0, 3), (_f(3, 2),)),
    (lambda m, x: m.diagonal_scatter(x, m.zeros(3, dtype=m.float64)), (_f(3, 2),)),
]


@pytest.mark.parametrize("case", range(len(BAD_WRITES)))
def test_bad_writes(case):
    fn, args = BAD_WRITES[case]
    check_error(fn, *args)


# == 2. counting and searching =======================================================================================
DUPS = np.array([[3.0, 1.0, 3.0, np.nan], [1.0, 2.0, 3.0, np.nan]])
ROWS = np.array([[1, 2, 1], [0, 5, 0], [1, 2, 1], [0, 5, 0], [0, 4, 9]])


@pytest.mark.parametrize("flags", [(False, False), (True, False), (False, True), (True, True)])
def test_unique(flags):
    inv, cnt = flags
    check(lambda m, x: m.unique(x, return_inverse=inv, return_counts=cnt), DUPS, grad=False)
    check(lambda m, x: x.unique(sorted=False, return_inverse=inv, return_counts=cnt), ROWS)
    for dim in (0, 1, -1):
        check(lambda m, x, d=dim: m.unique(x, return_inverse=inv, return_counts=cnt, dim=d), ROWS)
    check(lambda m, x: m.unique(x, return_inverse=inv, return_counts=cnt), np.asarray(3))
    check(lambda m, x: m.unique(x, return_inverse=inv, return_counts=cnt, dim=0), np.zeros((0, 3)), grad=False)
    check(lambda m, x: m.unique_consecutive(x, return_inverse=inv, return_counts=cnt), _ints(1, 1, 2, 2, 3, 1, 1))
    check(lambda m, x: x.unique_consecutive(return_inverse=inv, return_counts=cnt, dim=0), ROWS[[0, 2, 1, 3, 3, 4]])
    check(lambda m, x: m.unique_consecutive(x, return_inverse=inv, return_counts=cnt, dim=1), ROWS.T.copy())
    check(lambda m, x: m.unique_consecutive(x, return_inverse=inv, return_counts=cnt), DUPS, grad=False)
    check(lambda m, x: m.unique(x, return_inverse=inv, return_counts=cnt), np.array([True, False, True]))


def test_bincount():
    check(lambda m, x: m.bincount(x), _ints(1, 1, 3, 0))
    check(lambda m, x: x.bincount(minlength=7), _ints(1, 1, 3))
    check(lambda m, x: m.bincount(x), _ints())
    check(lambda m, x, w: m.bincount(x, w), _ints(1, 1, 3), np.array([0.5, 0.25, 2.0]), grad=False)
    check(lambda m, x, w: m.bincount(x, w.float(), 6), _ints(1, 1, 3), np.array([0.5, 0.25, 2.0]), grad=False)
    check(lambda m, x, w: m.bincount(x, w), _ints(1, 1, 3), _ints(1, 2, 3))


def test_histc_and_histogram():
    x = np.array([1.0, 2.0, 1.0, 4.0, 2.5, 0.0, np.nan, 7.0, -1.0])
    check(lambda m, x: m.histc(x, bins=4, min=0, max=4), x)
    check(lambda m, x: x.float().histc(bins=3, min=-0.5, max=2.5), x)
    check(lambda m, x: m.histc(x, bins=5), x[:6])
    check(lambda m, x: m.histc(x.float(), bins=7), _f(50))
    check(lambda m, x: m.histc(x, bins=3), np.array([2.0, 2.0]))
    check(lambda m, x: m.histogram(x, bins=3), x[:6], grad=False)
    check(lambda m, x: x.float().histogram(bins=6), _f(40), grad=False)
    check(lambda m, x: m.histogram(x, bins=3, range=(0.0, 2.0), density=True), x, grad=False)
    check(lambda m, x: m.histogram(x, bins=2), np.array([2.0, 2.0]), grad=False)
    check(lambda m, x, b, w: m.histogram(x, bins=b, weight=w, density=True), x[:6], np.array([0.0, 1.0, 3.0, 4.0]),
          np.arange(6.0), grad=False)
    check(lambda m, x, b, w: m.histogram(x, b, weight=w), x, np.array([-1.0, 1.0, 3.0, 7.0]), np.arange(9.0),
          grad=False)


def test_isin_searchsorted_bucketize():
    check(lambda m, a, b: m.isin(a, b), _ints([1, 2], [3, 4]), _ints(4, 2, 9))
    check(lambda m, a, b: m.isin(a, b, invert=True), _ints(1, 2, 3), np.array([2.0, 3.5]))
    check(lambda m, a: m.isin(a, 2), _ints(1, 2, 3))
    check(lambda m, b: m.isin(2, b), _ints(1, 2))
    check(lambda m, a, b: m.isin(a, b), np.array([1.0, np.nan, 2.0]), np.array([np.nan, 2.0]), grad=False)
    s, v = np.array([1.0, 3.0, 5.0, 7.0]), np.array([[3.0, 6.0, 9.0], [0.0, 1.0, 7.0]])
    for kw in ({}, {"right": True}, {"side": "right"}, {"side": "left"}, {"out_int32": True}):
        check(lambda m, s, v, kw=kw: m.searchsorted(s, v, **kw), s, v)
        check(lambda m, s, v, kw=kw: m.searchsorted(s, v, **kw), _ints([1, 3, 5], [2, 4, 6]), _ints([3, 6], [1, 7]))
        check(lambda m, b, kw=kw: m.bucketize(b, m.tensor([1, 3, 5, 7]), **{k: a for k, a in kw.items()
                                                                         if k != "side"}), _ints(1, 3, 6, 9, 0))
    check(lambda m, s: m.searchsorted(s, 3.0), s)
    check(lambda m, s, v: m.searchsorted(s, v), s, _ints(3, 4))
    check(lambda m, s, v, k: m.searchsorted(s, v, sorter=k), np.array([5.0, 1.0, 3.0]), np.array([2.0, 4.0]),
          _ints(1, 2, 0))
    check(lambda m: m.bucketize(3, m.tensor([1, 3, 5]), right=True))


BAD_COUNTING = [
    (lambda m, x: m.unique(x, dim=2), (_f(2, 3),)),
    (lambda m, x: m.unique(x, dim=1), (np.zeros((0, 3)),)),
    (lambda m, x: m.bincount(x), (_ints(-1, 2),)),
    (lambda m, x: m.bincount(x), (_ints([1]),)),
    (lambda m, x: m.bincount(x.float()), (_ints(1),)),
    (lambda m, x: m.bincount(x, minlength=-1), (_ints(1),)),
    (lambda m, x: m.bincount(x, m.ones(1)), (_ints(1, 2),)),
    (lambda m, x: m.histc(x, bins=3), (_ints(1, 2),)),
    (lambda m, x: m.histc(x, bins=0), (_f(3),)),
    (lambda m, x: m.histc(x, bins=3, min=3, max=1), (_f(3),)),
    (lambda m, x: m.histc(x, bins=3), (np.array([1.0, np.inf]),)),
    (lambda m, x: m.histogram(x, bins=3), (_ints(1, 2),)),
    (lambda m, x: m.histogram(x, bins=3, range=(2.0, 1.0)), (_f(3),)),
    (lambda m, x: m.histogram(x, bins=-1), (_f(3),)),
    (lambda m, x: m.histogram(x, bins=3, weight=m.ones(2, dtype=m.float64)), (_f(6),)),
    (lambda m, x: m.histogram(x, bins=m.tensor([1.0, 3.0])), (_f(6),)),
    (lambda m, x: m.histogram(x, bins=3), (np.array([1.0, np.inf]),)),
    (lambda m, s, v: m.searchsorted(s, v, side="foo"), (_f(3), _f(2))),
    (lambda m, s, v: m.searchsorted(s, v, side="left", right=True), (_f(3), _f(2))),
    (lambda m, s, v: m.searchsorted(s, v), (_f(2, 3), _f(3, 1))),
    (lambda m, s, v: m.searchsorted(s, v, sorter=m.tensor([0, 1])), (_f(3), _f(2))),
    (lambda m, s, v: m.searchsorted(s, v, sorter=m.tensor([0, 1, 2], dtype=m.int32)), (_f(3), _f(2))),
    (lambda m, s, v: m.searchsorted(s, v, sorter=m.tensor([0, 1, 3])), (_f(3), _f(2))),
    (lambda m, s, v: m.searchsorted(s[0], v), (_f(3), _f(2))),
    (lambda m, b, v: m.bucketize(v, b), (_f(2, 2), _f(2))),
    (lambda m, a, b: m.isin(a, b.bool()), (_f(2), _ints(1))),
]


@pytest.mark.parametrize("case", range(len(BAD_COUNTING)))
def test_bad_counting(case):
    fn, args = BAD_COUNTING[case]
    check_error(fn, *args)


def test_data_dependent_shapes_refuse_tracing():
    import jax

    for fn in (tp.unique, tp.unique_consecutive, tp.bincount):
        with pytest.raises(Exception, match="needs a concrete value"):
            jax.jit(tp.interop.to_jax(fn))(jax.numpy.array([1, 1, 2]))


# == 3. structure ====================================================================================================
def test_diff():
    check(lambda m, x: m.diff(x), _f(3, 5))
    check(lambda m, x: x.diff(n=2, dim=0), _f(4, 3))
    check(lambda m, x, p, a: m.diff(x, n=3, dim=1, prepend=p, append=a), _f(2, 3), _f(2, 1), _f(2, 2))
    check(lambda m, x: m.diff(x, n=5), _f(3))
    check(lambda m, x: m.diff(x, n=0), _f(3))
    check(lambda m, x: m.diff(x, n=2, append=m.tensor([16])), _ints(1, 4, 9))
    check(lambda m, x: m.diff(x), np.array([True, False, False, True]))


def test_kron_rot90_vander():
    check(lambda m, a, b: m.kron(a, b), _f(2, 3), _f(3, 2))
    check(lambda m, a, b: a.kron(b), _f(2), _f(2, 3, 2))
    check(lambda m, a, b: m.kron(a, b), _ints([1, 2]), np.array([[1.0], [10.0]]))
    for k in (-1, 0, 2, 5):
        check(lambda m, x, k=k: m.rot90(x, k), _f(2, 3))
        check(lambda m, x, k=k: x.rot90(k, [2, 0]), _f(2, 3, 4))
    # PyTorch's vander cannot be differentiated (an in-place cumprod on a saved view): values only
    check(lambda m, x: m.vander(x), np.array([0.5, 0.0, -2.0]), grad=False)
    check(lambda m, x: m.vander(x, N=5, increasing=True), np.array([0.5, 0.0, -2.0]), grad=False)
    check(lambda m, x: m.vander(x, 0), _f(2))
    check(lambda m, x: m.vander(x.int()), _ints(1, 2, 3))
    check(lambda m, x: m.vander(x), np.array([True, False]))


def test_cov_corrcoef():
    check(lambda m, x: m.cov(x), _f(3, 5))
    check(lambda m, x: x.cov(correction=0), _f(5))
    check(lambda m, x, f, a: m.cov(x, fweights=f, aweights=a), _f(2, 4), _ints(1, 2, 0, 3), np.array([0.5, 1, 2, 1]))
    check(lambda m, x, f, a: m.cov(x, correction=2, fweights=f, aweights=a), _f(2, 4), _ints(1, 2, 1, 3),
          np.array([0.5, 1, 2, 1]))
    check(lambda m, x, f: m.cov(x, correction=0, fweights=f), _f(2, 4), _ints(1, 2, 1, 3))
    check(lambda m, x, a: m.cov(x, aweights=a), _f(2, 4), np.array([0.5, 1, 2, 1]))
    check(lambda m, x: m.cov(x), np.array([[1, 2, 4], [3, 1, 0]]), atol=1e-6)  # float32: matmul rounding
    check(lambda m, x: m.cov(x.to(m.complex128)), _f(2, 3), atol=1e-12)
    check(lambda m, x: m.corrcoef(x), _f(3, 6))
    check(lambda m, x: x.corrcoef(), _f(4))
    check(lambda m, x: m.corrcoef(x), np.array([[1, 2, 4], [3, 1, 0]]), atol=1e-6)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert tp.cov(tp.tensor([1.0, 2.0]), correction=3).item() == float("inf")


def test_trapezoid():
    check(lambda m, y: m.trapezoid(y), _f(3, 5))
    check(lambda m, y: m.trapezoid(y, dx=0.5, dim=0), _f(3, 5))
    check(lambda m, y, x: m.trapezoid(y, x), _f(3, 5), np.array([0.0, 0.5, 2.0, 2.5, 4.0]))
    check(lambda m, y, x: m.trapezoid(y, x, dim=0), _f(3, 5), _f(3, 5))
    check(lambda m, y: m.trapz(y, dx=2.0), _f(4))
    check(lambda m, y, x: m.trapz(y, x), _f(4), _f(4))
    check(lambda m, y: m.trapezoid(y), _ints(1, 2, 4))
    check(lambda m, y: m.trapezoid(y), np.zeros((3, 0)))
    check(lambda m, y: m.cumulative_trapezoid(y), _f(3, 5))
    check(lambda m, y: m.cumulative_trapezoid(y, dx=0.25, dim=0), _f(3, 5))
    check(lambda m, y, x: m.cumulative_trapezoid(y, x), _f(2, 4), np.array([0.0, 1.0, 1.5, 4.0]))
    check(lambda m, y: m.cumulative_trapezoid(y), _ints(1, 2, 4))


def test_index_grids_and_products():
    for args in ((3, 3), (3, 4, 1), (4, 3, -1), (0, 0), (3, 3, -5), (2, 5, 10)):
        check(lambda m, a=args: m.tril_indices(*a))
        check(lambda m, a=args: m.triu_indices(*a))
    check(lambda m: m.tril_indices(3, 3, dtype=m.int32))
    check(lambda m, a: m.cartesian_prod(a), _f(3))
    check(lambda m, a, b, c: m.cartesian_prod(a, b, c), _f(2), _f(3), _f(2))
    for r, rep in ((2, False), (3, False), (2, True), (0, False), (5, False), (3, True)):
        check(lambda m, x, r=r, rep=rep: m.combinations(x, r, with_replacement=rep), _f(4))
    check(lambda m, x: m.combinations(x), np.array([1.0]))
    check(lambda m, a, b, c: m.block_diag(a, b, c), _f(), _f(2), _f(2, 3))
    check(lambda m, a, b: m.block_diag(a, b), _ints([1, 2]), np.array([[3.0]]))
    check(lambda m, a, b: m.block_diag(a, b), np.zeros((0, 2)), _f(1, 1))
    check(lambda m: m.block_diag())


def test_stacking_and_splitting():
    for fn in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for shape in ((), (3,), (2, 3, 1)):
            check(lambda m, x, fn=fn: getattr(m, fn)(x), _f(*shape))
        check(lambda m, x, y, fn=fn: getattr(m, fn)(x, y), _f(), _f(2))
        check(lambda m, x, y, fn=fn: getattr(m, fn)([x, y]), _f(), _f(2))
    check(lambda m, a, b, c: m.column_stack([a, b, c]), _f(), _f(1), _f(1, 2))
    check(lambda m, a, b: m.column_stack((a, b)), _f(3), _f(3, 2))
    check(lambda m, a, b: m.row_stack([a, b]), _f(3), _f(2, 3))
    check(lambda m, a, b, c: m.dstack([a, b, c]), _f(2), _f(1, 2), _f(1, 2, 3))
    for sections in (2, [3, 1], [-1, 0, 9]):
        check(lambda m, x, s=sections: m.hsplit(x, s), _f(4, 4, 2))
        check(lambda m, x, s=sections: x.vsplit(s), _f(4, 3))
        check(lambda m, x, s=sections: m.dsplit(x, s), _f(1, 2, 4))
        check(lambda m, x, s=sections: m.tensor_split(x, s, dim=1), _f(2, 4))
    check(lambda m, x, s: m.tensor_split(x, s), _f(7), _ints(1, 3))
    check(lambda m, x, s: m.tensor_split(x, s), _f(7), np.asarray(3))
    check(lambda m, x: m.hsplit(x, 3), _f(6))
    check(lambda m, x: x.split_with_sizes([1, 0, 3], dim=1), _f(2, 4))


def test_diagonals():
    check(lambda m, x: m.diag_embed(x), _f(2, 3))
    check(lambda m, x: m.diag_embed(x, 1, 0, 2), _f(2, 3))
    check(lambda m, x: x.diag_embed(-2, -1, 0), _f(3))
    check(lambda m, x: m.diagflat(x), _f(2, 2))
    check(lambda m, x: x.diagflat(-1), _f(3))


def test_views_and_shapes():
    check(lambda m, x: x.unfold(1, 3, 2), _f(2, 7))
    check(lambda m, x: x.unfold(0, 2, 1) * 1, _f(4, 2))  # overlapping windows: gradients add up
    check(lambda m, x: x.unfold(0, 1, 1), _f())
    check(lambda m, x: x.unfold(-1, 4, 1).unfold(0, 2, 2), _f(5, 6))
    check(lambda m, x: m.as_strided(x, (3, 3), (1, 1)), _f(6))
    check(lambda m, x: x.as_strided((2, 2), (1, 2), 1), _f(2, 3))
    check(lambda m, x: x.as_strided((0, 3), (1, 2), 10), _f(6), grad=False)  # PyTorch's backward fails here
    check(lambda m, x: m.unravel_index(x, (3, 4)), _ints(12, -1, 5, 0))
    check(lambda m, x: m.unravel_index(x, (2, 3, 2)), _ints([1, 5], [11, 7]))
    check(lambda m, x: m.unravel_index(x, m.Size([3, 4])), np.asarray(7))
    check(lambda m, x: x.sum_to_size(1, 3), _f(2, 3))
    check(lambda m, x: x.sum_to_size((3, 1, 1)), _f(2, 3, 4, 1))
    check(lambda m, x: x.sum_to_size(4), _f(3, 4))
    check(lambda m, x, y: x.reshape_as(y), _f(6), _f(2, 3))
    check(lambda m, x: m.narrow_copy(x, 1, 1, 2), _f(2, 4))
    check(lambda m, x: x.narrow_copy(0, -2, 2), _f(3), grad=False)  # PyTorch's backward fails for start < 0
    check(lambda m, x: x.positive(), _f(3))
    assert tp.zeros(2, 3).is_same_size(tp.ones(2, 3)) and not tp.zeros(2, 3).is_same_size(tp.ones(3, 2))


def test_in_place_reshapes_and_scans():
    for fn in (lambda m, x: (x * 1).t_(), lambda m, x: (x * 1).transpose_(0, 1), lambda m, x: (x * 1).swapaxes_(1, 0),
               lambda m, x: (x * 1).swapdims_(-1, 0), lambda m, x: (x * 1).tril_(), lambda m, x: (x * 1).triu_(1),
               lambda m, x: (x * 1).cumsum_(1), lambda m, x: (x * 1).cumprod_(0), lambda m, x: (x * 1).tril_(-1)):
        check(fn, _f(3, 3))
    check(lambda m, x: x.clone().cumsum_(0), _ints(1, 2, 3))
    check(lambda m, x: (x * 1).t_(), _f(3))
    check(lambda m, x: m.as_strided_(x * 1, (2, 2), (1, 2), 1), _f(2, 3))
    y = tp.zeros(2, 3)
    assert y.t_() is y and tuple(y.shape) == (3, 2)


BAD_STRUCTURE = [
    (lambda m, x: m.diff(x[0, 0]), (_f(3, 4),)),
    (lambda m, x: m.diff(x, n=-1), (_f(3, 4),)),
    (lambda m, x: m.diff(x, prepend=m.zeros(2, 3, dtype=m.float64)), (_f(3, 4),)),
    (lambda m, x: m.diff(x, prepend=m.zeros(3, dtype=m.float64)), (_f(3, 4),)),
    (lambda m, x: m.rot90(x, 1, [0, 1, 2]), (_f(3, 4),)),
    (lambda m, x: m.rot90(x[0], 1, [0, 0]), (_f(3, 4),)),
    (lambda m, x: m.rot90(x, 1, [0, -2]), (_f(3, 4),)),
    (lambda m, x: m.cov(x), (_f(2, 2, 2),)),
    (lambda m, x, w: m.cov(x, fweights=w), (_f(3, 4), np.ones((2, 2), np.int64))),
    (lambda m, x, w: m.cov(x, fweights=w), (_f(3, 4), _ints(1, 1, 1))),
    (lambda m, x, w: m.cov(x, fweights=w.float()), (_f(3, 4), _ints(1, 1, 1, 1))),
    (lambda m, x, w: m.cov(x, fweights=-w), (_f(3, 4), _ints(1, 1, 1, 1))),
    (lambda m, x, w: m.cov(x, aweights=w), (_f(3, 4), _ints(1, 1, 1, 1))),
    (lambda m, x, w: m.cov(x, aweights=-w.double()), (_f(3, 4), _ints(1, 1, 1, 1))),
    (lambda m, x: m.corrcoef(x), (_f(2, 2, 2),)),
    (lambda m, x: m.trapezoid(x[0, 0]), (_f(3, 4),)),
    (lambda m, x: m.trapezoid(x, m.zeros(3)), (_f(3, 4),)),
    (lambda m, x: m.cumulative_trapezoid(x[0, 0]), (_f(3, 4),)),
    (lambda m, x: m.vander(x), (_f(2, 2),)),
    (lambda m, x: m.vander(x, N=-1), (_f(2),)),
    (lambda m: m.tril_indices(-1, 3), ()),
    (lambda m: m.triu_indices(3, -3), ()),
    (lambda m: m.tril_indices(3, 3, dtype=m.float32), ()),
    (lambda m, x: m.cartesian_prod(x), (_f(2, 2),)),
    (lambda m, x: m.cartesian_prod(x, x.float()), (_f(2),)),
    (lambda m, x: m.combinations(x), (_f(2, 2),)),
    (lambda m, x: m.combinations(x, -1), (_f(3),)),
    (lambda m, x: m.block_diag(x), (_f(2, 2, 2),)),
    (lambda m, x: m.hsplit(x[0, 0], 1), (_f(3, 4),)),
    (lambda m, x: m.hsplit(x, 3), (_f(3, 4),)),
    (lambda m, x: m.vsplit(x[0], 2), (_f(3, 4),)),
    (lambda m, x: m.dsplit(x, 2), (_f(3, 4),)),
    (lambda m, x: m.dsplit(x, 2), (_f(4, 2, 3),)),
    (lambda m, x: m.tensor_split(x, 0), (_f(4),)),
    (lambda m, x: m.tensor_split(x, m.zeros(2, 2, dtype=m.int64)), (_f(4),)),
    (lambda m, x: m.tensor_split(x, m.zeros(2)), (_f(4),)),
    (lambda m, x: m.split_with_sizes(x, [1, 2]), (_f(4),)),
    (lambda m, x: m.column_stack([]), ()),
    (lambda m, x: m.diag_embed(x, 0, 1, 1), (_f(2, 3),)),
    (lambda m, x: m.diag_embed(x, 0, 0, 3), (_f(2, 3),)),
    (lambda m, x: m.unravel_index(x.float(), (3, 4)), (_ints(1),), "expected 'indices' to be integer dtype"),
    (lambda m, x: m.unravel_index(x, (3, -4)), (_ints(1),)),
    (lambda m, x: x.sum_to_size(2, 4), (_f(3, 4),)),
    (lambda m, x: x.sum_to_size(1, 1, 4), (_f(3, 4),)),
    (lambda m, x: m.narrow_copy(x, 0, 2, 2), (_f(3, 4),)),
    (lambda m, x: x.t_(), (_f(2, 3, 4),)),
    (lambda m, x: x.t_(), (_f(2, 3),)),
    (lambda m, x: x.unfold(0, 7, 1), (_f(6),)),
    (lambda m, x: x.unfold(0, 2, 0), (_f(6),)),
    (lambda m, x: x.unfold(0, -1, 1), (_f(6),)),
    (lambda m, x: x.unfold(1, 2, 1), (_f(6),)),
    (lambda m, x: x.as_strided((2, 3), (1,)), (_f(6),)),
    (lambda m, x: x.as_strided((2, 3), (1, -2)), (_f(6),)),
    (lambda m, x: x.as_strided((2, 3), (1, 2), -1), (_f(6),)),
    (lambda m, x: x.as_strided((3, 3), (1, 2)), (_f(6),)),
]


@pytest.mark.parametrize("case", range(len(BAD_STRUCTURE)))
def test_bad_structure(case):
    fn, args, *phrase = BAD_STRUCTURE[case]
    check_error(fn, *args, phrase=phrase[0] if phrase else None)


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "amax"])
def test_scatter_reduce_second_order(reduce):
    """Double backward (create_graph=True) as PyTorch's, ties and one zero per product included."""
    x, s = np.array([[3.0, 0.5, -1.0, 2.0]]), np.array([[3.0, 0.0, 2.0, 1.5, -0.5]])
    i = _ints([0, 1, 1, 3, 3])
    results = []
    for m in (torch, tp):
        xt, st, it = _tensors(m, (x, s, i))
        y = m.scatter_reduce(xt, 1, it, st, reduce)
        w = m.tensor(np.array([[0.3, -1.2, 0.7, 2.0]]))
        gx, gs = (torch.autograd.grad if m is torch else tp.autograd.grad)((y * w * y).sum(), (xt, st),
                                                                         create_graph=True)
        results.append([_np(g) for g in (*(torch.autograd.grad if m is torch else tp.autograd.grad)(
            (gx * gx).sum() + (gs * gs.exp()).sum(), (xt, st)),)])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


EDGES = [  # 0-d tensors, empty indices, bools and complex numbers
    (lambda m, x, i, s: m.scatter_reduce(x, 0, i, s, "amax", include_self=False), (_f(), np.asarray(0), _f())),
    (lambda m, x, i, s: m.index_reduce(x, 0, i, s, "prod"), (_f(), _ints(0), _f())),
    (lambda m, x, i, s: m.index_copy(x, 0, i, s), (_f(), np.asarray(0), _f())),
    (lambda m, x, i, s: m.put(x, i, s), (_f(), _ints(0), _f(1))),
    (lambda m, x, k, s: m.masked_scatter(x, k, s), (_f(), np.asarray(True), _f(2))),
    (lambda m, x, i, s: m.index_reduce(x, 0, i, s, "amax"), (_f(3, 2), _ints(), _f(0, 2))),
    (lambda m, x, i, s: m.scatter_reduce(x, 0, i, s, "mean"), (_f(3, 2), np.zeros((0, 2), np.int64), _f(1, 2))),
    (lambda m, x, i, s: m.index_copy(x, 0, i, s), (np.array([True, False]), _ints(1), np.array([True]))),
    (lambda m, x: m.diff(x, prepend=m.tensor([True])), (np.array([True, False]),)),
    (lambda m, x: m.cov(x), (np.zeros((2, 0)),)),
    (lambda m, a, b: m.block_diag(a, b), (np.array([True]), np.array([[False, True]]))),
    (lambda m, x: m.unravel_index(x, (2, 0)), (_ints(),)),
    (lambda m, x: m.vander(x.to(m.complex128), 3), (_f(2),)),
]


@pytest.mark.parametrize("case", range(len(EDGES)))
def test_edge_cases(case):
    fn, args = EDGES[case]
    check(fn, *args)


def test_where_method_takes_the_condition_first():
    """`x.where(condition, y)` is `where(condition, x, y)`: values and both gradients."""
    check(lambda m, x, y: x.where(x > 0, y), _f(3, 4), _f(3, 4))
    check(lambda m, x: x.where(x < 0.5, 0.0), _f(5))
    check_error(lambda m, x: x.where(x, 0.0), _f(2))


_LEGACY_CATS = [
    lambda lib: lib.cat([lib.zeros(0), lib.tensor(1.0)]), lambda lib: lib.cat([lib.tensor(1.0), lib.zeros(0)]),
    lambda lib: lib.cat([lib.zeros(0), lib.zeros(0, dtype=lib.int64)]),
    lambda lib: lib.cat([lib.zeros(0, dtype=lib.int32), lib.ones(2, 2, dtype=lib.int64)], 1),
    lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(0), lib.ones(1, 3)], -1),
    lambda lib: lib.cat([lib.zeros(2, 3), lib.zeros(0, dtype=lib.float64), lib.ones(2, 1)], -1),
    lambda lib: lib.cat([lib.zeros(0), lib.zeros(2, 3), lib.ones(2, 2)], 3)]


@pytest.mark.parametrize("make", _LEGACY_CATS)
def test_a_1d_empty_tensor_joins_a_concatenation_of_any_rank_as_in_pytorch(make):
    def run(lib):
        try:
            r = make(lib)
        except (RuntimeError, IndexError) as e:
            return type(e).__name__, str(e)
        return tuple(r.shape), str(r.dtype).split(".")[-1], r.tolist()

    assert run(tp) == run(torch)


def test_a_1d_empty_tensor_in_a_concatenation_gets_an_empty_gradient():
    def run(lib):
        a, b = lib.zeros(0, requires_grad=True), lib.ones(2, 2, requires_grad=True)
        (lib.cat([b, a, b * 2]) * lib.arange(8.0).view(4, 2)).sum().backward()
        return tuple(a.grad.shape), b.grad.tolist()

    assert run(tp) == run(torch)
