"""Margin, ranking, embedding and likelihood losses, CTC, and the distance functions: values and the gradients
of every float input equal PyTorch's (float64, at kinks and ties too); bad inputs raise PyTorch's class and
wording."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

R = np.random.default_rng(11)


def _f(lib):
    return lib.nn.functional


def _r(*shape):
    return R.standard_normal(shape)


def _sign(*shape):
    return np.where(R.random(shape) < 0.5, -1.0, 1.0)


def _pos(*shape):
    return R.random(shape) + 0.1


class _Const(np.ndarray):
    """A float input that does not require a gradient (PyTorch has no derivative for it)."""


def _const(a):
    return np.asarray(a, dtype=np.float64).view(_Const)


def _idx(high, *shape):
    return R.integers(0, high, shape)


def _ml_target(n, c):
    """Multi-label targets: a few class indices per row, then -1 and junk after it."""
    t = np.full((n, c), -1)
    for i in range(n):
        k = int(R.integers(0, c))
        t[i, :k] = R.permutation(c)[:k]
        if k + 1 < c:
            t[i, k + 1:] = R.integers(0, c, c - k - 1)
    return t


KINK = np.array([[0.5, 1.5, 0.5, 2.0], [1.0, 0.0, -1.0, 0.0], [0.25, 0.25, 0.25, 0.25]])

RED = ("none", "mean", "sum")
CASES = {}
for red in RED:
    CASES |= {
        f"margin_ranking {red}": (lambda lib, a, b, y, r=red: _f(lib).margin_ranking_loss(a, b, y, 0.3, reduction=r),
                                  [_r(5), _r(5), _sign(5)]),
        f"hinge_embedding {red}": (lambda lib, x, y, r=red: _f(lib).hinge_embedding_loss(x, y, 0.7, reduction=r),
                                   [_r(3, 4), _sign(3, 4)]),
        f"soft_margin {red}": (lambda lib, x, y, r=red: _f(lib).soft_margin_loss(x, y, reduction=r),
                               [_r(3, 4), _const(_sign(3, 4))]),
        f"multilabel_soft_margin {red}": (lambda lib, x, y, w, r=red: _f(lib).multilabel_soft_margin_loss(
            x, y, w, reduction=r), [_r(3, 4), (R.random((3, 4)) < 0.5) * 1.0, _pos(4)]),
        f"multi_margin p1 {red}": (lambda lib, x, y, r=red: _f(lib).multi_margin_loss(x, y, reduction=r),
                                   [_r(4, 5), _idx(5, 4)]),
        f"multi_margin p2 weight {red}": (lambda lib, x, y, w, r=red: _f(lib).multi_margin_loss(
            x, y, p=2, margin=0.6, weight=w, reduction=r), [_r(4, 5), _idx(5, 4), _const(_pos(5))]),
        f"multilabel_margin {red}": (lambda lib, x, y, r=red: _f(lib).multilabel_margin_loss(x, y, reduction=r),
                                     [_r(4, 5), _ml_target(4, 5)]),
        f"cosine_embedding {red}": (lambda lib, a, b, y, r=red: _f(lib).cosine_embedding_loss(
            a, b, y, 0.2, reduction=r), [_r(4, 3), _r(4, 3), _sign(4)]),
        f"triplet {red}": (lambda lib, a, p, n, r=red: _f(lib).triplet_margin_loss(a, p, n, reduction=r),
                           [_r(4, 3), _r(4, 3), _r(4, 3)]),
        f"poisson log {red}": (lambda lib, x, y, r=red: _f(lib).poisson_nll_loss(x, y, reduction=r),
                               [_r(3, 4), R.poisson(2.0, (3, 4)) * 1.0]),
        f"gaussian {red}": (lambda lib, x, y, v, r=red: _f(lib).gaussian_nll_loss(x, y, v, reduction=r),
                            [_r(3, 4), _r(3, 4), _pos(3, 4)]),
    }
CASES |= {
    "margin_ranking kink": (lambda lib, a, b, y: _f(lib).margin_ranking_loss(a, b, y, 1.0, reduction="sum"),
                            [np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 1.0]), np.array([1.0, -1.0, 1.0])]),
    "margin_ranking broadcast legacy": (lambda lib, a, b, y: _f(lib).margin_ranking_loss(a, b, y, size_average=False),
                                        [_r(3, 4), _r(1, 4), _sign(3, 1)]),
    "hinge_embedding kink legacy": (lambda lib, x, y: _f(lib).hinge_embedding_loss(x, y, reduce=False),
                                    [np.array([1.0, 0.5, 1.0, 2.0]), np.array([-1.0, -1.0, 1.0, 3.0])]),
    "soft_margin 0d": (lambda lib, x, y: _f(lib).soft_margin_loss(x, y), [_r(), _const(_sign())]),
    "multilabel_soft_margin 1d": (lambda lib, x, y: _f(lib).multilabel_soft_margin_loss(x, y),
                                  [_r(5), (R.random(5) < 0.5) * 1.0]),
    "multilabel_soft_margin legacy": (lambda lib, x, y: _f(lib).multilabel_soft_margin_loss(x, y, reduce=False),
                                      [_r(2, 3), R.random((2, 3))]),
    "multi_margin kink": (lambda lib, x, y: _f(lib).multi_margin_loss(x, y, reduction="sum"),
                          [KINK, np.array([3, 1, 0])]),
    "multi_margin kink p2": (lambda lib, x, y: _f(lib).multi_margin_loss(x, y, p=2, reduction="sum"),
                             [KINK, np.array([3, 1, 0])]),
    "multi_margin 1d": (lambda lib, x, y: _f(lib).multi_margin_loss(x, y, margin=2.0), [_r(5), np.array(2)]),
    "multi_margin legacy": (lambda lib, x, y: _f(lib).multi_margin_loss(x, y, size_average=False),
                            [_r(3, 4), _idx(4, 3)]),
    "multilabel_margin kink dup": (lambda lib, x, y: _f(lib).multilabel_margin_loss(x, y, reduction="none"),
                                   [KINK, np.array([[3, 3, -1, 0], [1, 0, 2, 3], [0, -1, 2, 2]])]),
    "multilabel_margin 1d": (lambda lib, x, y: _f(lib).multilabel_margin_loss(x, y), [_r(5), np.array([4, 0, -1, 1, 1])]),
    "cosine_embedding 1d": (lambda lib, a, b, y: _f(lib).cosine_embedding_loss(a, b, y, -0.5), [_r(4), _r(4),
                                                                                                np.array(-1.0)]),
    "cosine_embedding zero vector": (lambda lib, a, b, y: _f(lib).cosine_embedding_loss(a, b, y, reduction="sum"),
                                     [np.array([[0.0, 0.0], [1.0, 2.0]]), _r(2, 2), np.array([1.0, -1.0])]),
    "triplet swap p1": (lambda lib, a, p, n: _f(lib).triplet_margin_loss(a, p, n, margin=2.0, p=1, swap=True),
                        [_r(5, 3), _r(5, 3), _r(5, 3)]),
    "triplet swap tie": (lambda lib, a, p, n: _f(lib).triplet_margin_loss(a, p, n, margin=5.0, swap=True, eps=0.0,
                                                                          reduction="none"),
                         [np.array([[0.0, 0.0]]), np.array([[2.0, 0.0]]), np.array([[1.0, 0.0]])]),
    "triplet 1d p3 legacy": (lambda lib, a, p, n: _f(lib).triplet_margin_loss(a, p, n, p=3, reduce=False),
                             [_r(4), _r(4), _r(4)]),
    "triplet_with_distance default": (lambda lib, a, p, n: _f(lib).triplet_margin_with_distance_loss(a, p, n),
                                      [_r(4, 3), _r(4, 3), _r(4, 3)]),
    "triplet_with_distance cosine swap": (lambda lib, a, p, n: _f(lib).triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1 - _f(lib).cosine_similarity(x, y), swap=True, margin=0.8,
        reduction="none"), [_r(4, 3), _r(4, 3), _r(4, 3)]),
    "poisson rate full": (lambda lib, x, y: _f(lib).poisson_nll_loss(x, y, log_input=False, full=True),
                          [_pos(3, 4), R.poisson(2.0, (3, 4)) + 2.0]),
    "poisson log full sum": (lambda lib, x, y: _f(lib).poisson_nll_loss(x, y, full=True, reduction="sum"),
                             [_r(3, 4), R.poisson(2.0, (3, 4)) + 2.0]),
    "poisson full small targets": (lambda lib, x, y: _f(lib).poisson_nll_loss(x, y, full=True, reduction="none"),
                                   [_r(2, 3), _const(np.array([[0.0, 1.0, 0.5], [2.0, 1.0, 3.5]]))]),
    "poisson rate eps legacy": (lambda lib, x, y: _f(lib).poisson_nll_loss(x, y, log_input=False, eps=0.1,
                                                                           reduce=False),
                                [_pos(5), _pos(5)]),
    "gaussian full clamp": (lambda lib, x, y, v: _f(lib).gaussian_nll_loss(x, y, v, full=True, eps=0.3),
                            [_r(3, 4), _r(3, 4), R.random((3, 4))]),
    "gaussian var short": (lambda lib, x, y, v: _f(lib).gaussian_nll_loss(x, y, v, reduction="none"),
                           [_r(3, 4), _r(3, 4), _pos(3)]),
    "gaussian var last 1": (lambda lib, x, y, v: _f(lib).gaussian_nll_loss(x, y, v), [_r(3, 4), _r(3, 4), _pos(3, 1)]),
    "gaussian var first 1": (lambda lib, x, y, v: _f(lib).gaussian_nll_loss(x, y, v, reduction="sum"),
                             [_r(3, 4), _r(3, 4), _pos(1, 4)]),
    "gaussian var float": (lambda lib, x, y: _f(lib).gaussian_nll_loss(x, y, 0.5), [_r(3, 4), _r(3, 4)]),
    "pairwise_distance": (lambda lib, a, b: _f(lib).pairwise_distance(a, b), [_r(4, 3), _r(4, 3)]),
    "pairwise_distance p1 keepdim bcast": (lambda lib, a, b: _f(lib).pairwise_distance(a, b, 1.0, 0.0, True),
                                           [_r(4, 3), _r(3)]),
    "pairwise_distance inf zero": (lambda lib, a, b: _f(lib).pairwise_distance(a, b, float("inf"), eps=0.0),
                                   [np.array([[1.0, 2.0], [0.0, 3.0]]), np.array([[1.0, 2.0], [3.0, 0.0]])]),
    "pairwise_distance p2 zero": (lambda lib, a, b: _f(lib).pairwise_distance(a, b, eps=0.0),
                                  [np.array([[1.0, 2.0], [0.0, 3.0]]), np.array([[1.0, 2.0], [3.0, 0.0]])]),
    "cosine_similarity": (lambda lib, a, b: _f(lib).cosine_similarity(a, b), [_r(4, 3), _r(4, 3)]),
    "cosine_similarity dim0 bcast": (lambda lib, a, b: _f(lib).cosine_similarity(a, b, dim=0), [_r(3, 4), _r(3, 1)]),
    "cosine_similarity small norm": (lambda lib, a, b: _f(lib).cosine_similarity(a, b, dim=-1, eps=0.5),
                                     [np.array([[0.1, 0.2], [3.0, 1.0]]), np.array([[0.3, 0.1], [0.0, 0.0]])]),
    "pdist": (lambda lib, x: _f(lib).pdist(x), [_r(5, 3)]),
    "pdist p1 dup rows": (lambda lib, x: _f(lib).pdist(x, 1.0), [np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])]),
    "pdist p3": (lambda lib, x: _f(lib).pdist(x, 3.0), [_r(4, 2)]),
    "MarginRankingLoss": (lambda lib, a, b, y: lib.nn.MarginRankingLoss(0.2, reduction="sum")(a, b, y),
                          [_r(4), _r(4), _sign(4)]),
    "HingeEmbeddingLoss": (lambda lib, x, y: lib.nn.HingeEmbeddingLoss(2.0)(x, y), [_r(4), _sign(4)]),
    "SoftMarginLoss": (lambda lib, x, y: lib.nn.SoftMarginLoss(reduction="none")(x, y), [_r(4), _const(_sign(4))]),
    "MultiLabelSoftMarginLoss": (lambda lib, x, y: lib.nn.MultiLabelSoftMarginLoss()(x, y),
                                 [_r(2, 4), (R.random((2, 4)) < 0.5) * 1.0]),
    "MultiMarginLoss": (lambda lib, x, y: lib.nn.MultiMarginLoss(p=2, margin=0.5)(x, y), [_r(3, 4), _idx(4, 3)]),
    "MultiLabelMarginLoss": (lambda lib, x, y: lib.nn.MultiLabelMarginLoss(size_average=False)(x, y),
                             [_r(3, 4), _ml_target(3, 4)]),
    "CosineEmbeddingLoss": (lambda lib, a, b, y: lib.nn.CosineEmbeddingLoss(0.1)(a, b, y), [_r(3, 4), _r(3, 4),
                                                                                            _sign(3)]),
    "TripletMarginLoss": (lambda lib, a, p, n: lib.nn.TripletMarginLoss(swap=True)(a, p, n),
                          [_r(3, 4), _r(3, 4), _r(3, 4)]),
    "TripletMarginWithDistanceLoss": (lambda lib, a, p, n: lib.nn.TripletMarginWithDistanceLoss(
        distance_function=lambda x, y: (x - y).abs().sum(-1), margin=3.0)(a, p, n), [_r(3, 4), _r(3, 4), _r(3, 4)]),
    "PoissonNLLLoss": (lambda lib, x, y: lib.nn.PoissonNLLLoss(log_input=False, full=True)(x, y),
                       [_pos(3, 4), R.poisson(3.0, (3, 4)) * 1.0]),
    "GaussianNLLLoss": (lambda lib, x, y, v: lib.nn.GaussianNLLLoss(full=True, reduction="sum")(x, y, v),
                        [_r(3, 4), _r(3, 4), _pos(3, 4)]),
    "CosineSimilarity": (lambda lib, a, b: lib.nn.CosineSimilarity(dim=0, eps=1e-6)(a, b), [_r(3, 4), _r(3, 4)]),
    "PairwiseDistance": (lambda lib, a, b: lib.nn.PairwiseDistance(p=1.5, keepdim=True)(a, b), [_r(3, 4), _r(3, 4)]),
    "tp.cosine_similarity": (lambda lib, a, b: lib.cosine_similarity(a, b), [_r(3, 4), _r(3, 4)]),
    "tp.pairwise_distance": (lambda lib, a, b: lib.pairwise_distance(a, b), [_r(3, 4), _r(3, 4)]),
    "tp.pdist": (lambda lib, x: lib.pdist(x), [_r(4, 3)]),
}


def _inputs(lib, arrays):
    out = []
    for a in arrays:
        a = a if isinstance(a, np.ndarray) else np.asarray(a)
        if a.dtype.kind == "f":
            out.append(lib.tensor(np.asarray(a), dtype=lib.float64, requires_grad=not isinstance(a, _Const)))
        else:
            out.append(lib.tensor(a, dtype=lib.int64))
    return out


def _run(lib, fn, arrays):
    xs = _inputs(lib, arrays)
    out = fn(lib, *xs)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)).sum().backward()
    grads = [None if x.grad is None else np.asarray(x.grad.detach().numpy()) for x in xs if x.requires_grad]
    return np.asarray(out.detach().numpy()), grads


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
            assert g is None or not np.any(g), f"input {i}: torch gives no gradient"
            continue
        rtol = 1e-8 if "zero vector" in name else 1e-9  # gradients of order 1e5 there
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12, err_msg=f"gradient of input {i}")


X34 = np.zeros((3, 4))


def _weighted(lib, weight):
    x, y, w = _inputs(lib, [X34, np.array([0, 1, 2]), weight])
    return _f(lib).multi_margin_loss(x, y, weight=w.detach())
BAD = {
    "margin_ranking dims": (lambda lib: _f(lib).margin_ranking_loss(*_inputs(lib, [X34, X34, np.ones(3)])),
                            "All input tensors should have same dimension"),
    "reduction name": (lambda lib: _f(lib).soft_margin_loss(*_inputs(lib, [X34, X34]), reduction="avg"),
                       "is not a valid value for reduction"),
    "multilabel_soft_margin reduction": (lambda lib: _f(lib).multilabel_soft_margin_loss(
        *_inputs(lib, [X34, X34]), reduction="x"), "x is not valid"),
    "multi_margin p": (lambda lib: _f(lib).multi_margin_loss(*_inputs(lib, [X34, np.array([0, 1, 2])]), p=3),
                       "only p == 1 and p == 2 supported"),
    "multi_margin weight 2d": (lambda lib: _weighted(lib, X34), "weight must be one-dimensional"),
    "multi_margin weight size": (lambda lib: _weighted(lib, np.ones(3)),
                                 "inconsistent weight size, expected 4 but got [3]"),
    "multi_margin target size": (lambda lib: _f(lib).multi_margin_loss(*_inputs(lib, [X34, np.array([0, 1])])),
                                 "Expected target size [3], but got [2]"),
    "multi_margin target range": (lambda lib: _f(lib).multi_margin_loss(*_inputs(lib, [X34, np.array([0, 1, 4])])),
                                  "target out of range"),
    "multi_margin 3d": (lambda lib: _f(lib).multi_margin_loss(*_inputs(lib, [np.zeros((2, 3, 4)), np.array([0, 1])])),
                        "Expected non-empty vector or matrix"),
    "multi_margin float target": (lambda lib: _f(lib).multi_margin_loss(*_inputs(lib, [X34, np.array([0.0, 1, 2])])),
                                  "expected scalar type Long but found"),
    "multilabel_margin size": (lambda lib: _f(lib).multilabel_margin_loss(*_inputs(lib, [X34, np.zeros((2, 4), int)])),
                               "inconsistent target size: [2, 4] for input of size: [3, 4]"),
    "multilabel_margin range": (lambda lib: _f(lib).multilabel_margin_loss(*_inputs(lib, [X34, np.full((3, 4), 4)])),
                                "argument #2 'target' is out of range"),
    "cosine_embedding target 2d": (lambda lib: _f(lib).cosine_embedding_loss(*_inputs(lib, [X34, X34, X34])),
                                   "0D or 1D target tensor expected, multi-target not supported"),
    "cosine_embedding target 0d": (lambda lib: _f(lib).cosine_embedding_loss(*_inputs(lib, [X34, X34, np.ones(())])),
                                   "0D target tensor expects 1D input tensors, but found inputs with sizes [3, 4]"),
    "cosine_embedding target 1d": (lambda lib: _f(lib).cosine_embedding_loss(
        *_inputs(lib, [np.ones(4), np.ones(4), np.ones(3)])), "1D target tensor expects 2D input tensors"),
    "triplet dims": (lambda lib: _f(lib).triplet_margin_loss(*_inputs(lib, [X34, X34, np.ones(4)])),
                     "anchor 2D, positive 2D, and negative 1D inputs"),
    "triplet margin": (lambda lib: _f(lib).triplet_margin_loss(*_inputs(lib, [X34, X34, X34]), margin=0),
                       "margin must be greater than 0, got 0"),
    "triplet_with_distance margin": (lambda lib: _f(lib).triplet_margin_with_distance_loss(
        *_inputs(lib, [X34, X34, X34]), margin=-1.0), "margin must be greater than 0"),
    "triplet_with_distance reduction": (lambda lib: _f(lib).triplet_margin_with_distance_loss(
        *_inputs(lib, [X34, X34, X34]), reduction="avg"), "avg is not a valid value for reduction"),
    "poisson reduction": (lambda lib: _f(lib).poisson_nll_loss(*_inputs(lib, [X34, X34]), reduction="foo"),
                          "foo is not a valid value for reduction"),
    "gaussian var size": (lambda lib: _f(lib).gaussian_nll_loss(*_inputs(lib, [X34, X34, np.ones((3, 2))])),
                          "var is of incorrect size"),
    "gaussian var size 2": (lambda lib: _f(lib).gaussian_nll_loss(*_inputs(lib, [X34, X34, np.ones((2, 4))])),
                            "var is of incorrect size"),
    "gaussian var negative": (lambda lib: _f(lib).gaussian_nll_loss(*_inputs(lib, [X34, X34, -np.ones((3, 4))])),
                              "var has negative entry/entries"),
    "gaussian var negative float": (lambda lib: _f(lib).gaussian_nll_loss(*_inputs(lib, [X34, X34]), -1.0),
                                    "var has negative entry/entries"),
    "gaussian reduction": (lambda lib: _f(lib).gaussian_nll_loss(*_inputs(lib, [X34, X34, X34 + 1]), reduction="x"),
                           "x is not valid"),
    "pdist 3d": (lambda lib: _f(lib).pdist(*_inputs(lib, [np.zeros((2, 3, 4))])), "pdist only supports 2D tensors"),
    "pdist p": (lambda lib: _f(lib).pdist(*_inputs(lib, [X34]), -1.0), "pdist only supports non-negative p values"),
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


def _ctc_case(t, n, c, s, blank=0, seed=0, repeat=False):
    rng = np.random.default_rng(seed)
    labels = [k for k in range(c) if k != blank]
    tl = rng.integers(0, s + 1, n)
    tl[0] = s
    targets = rng.choice(labels, (n, s))
    if repeat:
        targets[:, 1] = targets[:, 0]
    il = rng.integers(max(2 * s, 1), t + 1, n)
    il[-1] = t
    return rng.standard_normal((t, n, c)), targets, il, tl


def _ctc_run(lib, logits, targets, il, tl, kw, concat=False, through_softmax=True, unbatched=False):
    x = lib.tensor(logits, dtype=lib.float64, requires_grad=True)
    lp = x.log_softmax(-1) if through_softmax else x
    tg = lib.tensor(targets)
    if concat:
        tg = lib.tensor(np.concatenate([row[:k] for row, k in zip(targets, tl)]))
    if unbatched:
        lp, tg = lp[:, 0], tg[0]
        il, tl = int(il[0]), int(tl[0])
        out = _f(lib).ctc_loss(lp, tg, (il,), (tl,), **kw)
    else:
        out = _f(lib).ctc_loss(lp, tg, lib.tensor(il), lib.tensor(tl), **kw)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)).sum().backward()
    return np.asarray(out.detach().numpy()), np.asarray(x.grad.numpy())


CTC = {
    "mean": (_ctc_case(8, 3, 5, 3), {}, {}),
    "sum blank 2 repeats": (_ctc_case(9, 4, 4, 3, blank=2, seed=1, repeat=True), {"blank": 2, "reduction": "sum"}, {}),
    "none concatenated": (_ctc_case(7, 3, 6, 2, seed=2), {"reduction": "none"}, {"concat": True}),
    "none log_probs directly": (_ctc_case(6, 2, 4, 2, seed=3), {"reduction": "none"}, {"through_softmax": False}),
    "mean log_probs directly": (_ctc_case(6, 3, 4, 2, seed=4), {}, {"through_softmax": False}),
    "unbatched": (_ctc_case(6, 1, 5, 3, seed=5), {"reduction": "none"}, {"unbatched": True}),
    "unbatched mean": (_ctc_case(6, 1, 5, 2, seed=6), {}, {"unbatched": True}),
    "impossible zero_infinity": ((np.random.default_rng(7).standard_normal((3, 2, 4)), np.array([[1, 1, 1], [2, 3, 0]]),
                                  np.array([3, 3]), np.array([3, 2])), {"zero_infinity": True, "reduction": "none"}, {}),
    "impossible zero_infinity mean": ((np.random.default_rng(8).standard_normal((3, 2, 4)),
                                       np.array([[1, 2, 1, 2], [2, 3, 0, 0]]), np.array([3, 3]), np.array([4, 2])),
                                      {"zero_infinity": True}, {}),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(CTC))
def test_ctc_loss_matches_torch(name):
    (logits, targets, il, tl), kw, how = CTC[name]
    want, want_grad = _ctc_run(torch, logits, targets, il, tl, kw, **how)
    got, got_grad = _ctc_run(tp, logits, targets, il, tl, kw, **how)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-8, atol=1e-12)


def test_ctc_loss_impossible_is_inf():
    lp = tp.zeros(2, 1, 3, dtype=tp.float64).log_softmax(2)
    assert float(_f(tp).ctc_loss(lp, tp.tensor([[1, 1]]), (2,), (2,), reduction="sum")) == float("inf")
    m = tp.nn.CTCLoss(zero_infinity=True)
    assert float(m(lp, tp.tensor([[1, 1]]), (2,), (2,))) == 0.0


def _ctc_bad(lib, lengths=((5, 5), (2, 2)), blank=0, targets=((1, 2), (3, 3))):
    lp = lib.zeros(5, 2, 4).log_softmax(2)
    return _f(lib).ctc_loss(lp, lib.tensor(targets), lengths[0], lengths[1], blank=blank)


CTC_BAD = {
    "blank": (lambda lib: _ctc_bad(lib, blank=4), "blank must be in label range"),
    "input too long": (lambda lib: _ctc_bad(lib, ((5, 6), (2, 2))), "Expected input_lengths to have value at most 5"),
    "input lengths size": (lambda lib: _ctc_bad(lib, ((5,), (2, 2))), "input_lengths must be of size batch_size"),
    "target lengths size": (lambda lib: _ctc_bad(lib, ((5, 5), (2,))), "target_lengths must be of size batch_size"),
    "targets too short": (lambda lib: _ctc_bad(lib, ((5, 5), (2, 3))), "Expected tensor to have size at least 3"),
    "negative target length": (lambda lib: _ctc_bad(lib, ((5, 5), (2, -1))),
                               "Expected target_lengths to have value at least 0"),
    "concatenated too short": (lambda lib: _ctc_bad(lib, targets=(1, 2, 3)), "Expected tensor to have size 4"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(CTC_BAD))
def test_ctc_bad_inputs_raise_like_torch(name):
    fn, phrase = CTC_BAD[name]
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(tp)
    assert phrase in str(want.value), str(want.value)
    assert phrase in str(got.value), str(got.value)


def test_ctc_loss_inside_compile_matches_eager():
    lp0 = tp.randn(6, 2, 4, dtype=tp.float64)
    tg, il, tl = tp.tensor([[1, 2], [3, 3]]), tp.tensor([6, 5]), tp.tensor([2, 1])

    def step(x, targets, input_lengths, target_lengths):
        x = x.detach().requires_grad_()
        loss = _f(tp).ctc_loss(x.log_softmax(2), targets, input_lengths, target_lengths)
        loss.backward()
        return loss.detach(), x.grad

    want = step(lp0, tg, il, tl)
    got = tp.compile(step)(lp0, tg, il, tl)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10)


@pytest.mark.oracle
@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.TripletMarginLoss(margin=0),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-0.5),
    lambda lib: lib.nn.MultiMarginLoss(p=3),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
])
def test_loss_module_arguments_checked_like_torch(make):
    with pytest.raises(ValueError) as want:
        make(torch)
    with pytest.raises(ValueError) as got:
        make(tp)
    assert str(got.value) == str(want.value)


@pytest.mark.oracle
def test_loss_module_reprs_and_legacy_reduction_match_torch():
    for name, kw in [("MarginRankingLoss", {"margin": 0.5}), ("CTCLoss", {"blank": 1}), ("GaussianNLLLoss", {}),
                     ("TripletMarginLoss", {"swap": True}), ("MultiLabelSoftMarginLoss", {"size_average": False}),
                     ("SoftMarginLoss", {"reduce": False})]:
        t_mod, p_mod = getattr(torch.nn, name)(**kw), getattr(tp.nn, name)(**kw)
        assert repr(p_mod) == repr(t_mod)
        assert p_mod.reduction == t_mod.reduction, name
