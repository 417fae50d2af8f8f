"""`nn.AdaptiveLogSoftmaxWithLoss` against PyTorch: construction, forward, gradients, log_prob, predict, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

RTOL, ATOL = 1e-5, 1e-6


def _pair(seed=0, *args, **kwargs):
    tp.manual_seed(seed)
    ours = tp.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    torch.manual_seed(seed)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    return ours, theirs


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(a, b):
    np.testing.assert_allclose(_np(a), _np(b), rtol=RTOL, atol=ATOL)


def _inputs(shape, seed=1):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tp.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("kwargs", [
    dict(in_features=64, n_classes=20, cutoffs=[5, 10, 15]),
    dict(in_features=16, n_classes=20, cutoffs=[5, 10], head_bias=True),
    dict(in_features=10, n_classes=12, cutoffs=[3], div_value=2.0),
])
def test_same_seed_same_parameters_and_state_dict_keys(kwargs):
    ours, theirs = _pair(3, **kwargs)
    ours_sd, theirs_sd = ours.state_dict(), theirs.state_dict()
    assert list(ours_sd) == list(theirs_sd)
    for k in theirs_sd:
        assert tuple(ours_sd[k].shape) == tuple(theirs_sd[k].shape), k
        np.testing.assert_array_equal(_np(ours_sd[k]), _np(theirs_sd[k]), err_msg=k)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert (ours.shortlist_size, ours.n_clusters, ours.head_size, ours.cutoffs) == (
        theirs.shortlist_size, theirs.n_clusters, theirs.head_size, theirs.cutoffs)


def test_reset_parameters_draws_like_pytorch():
    ours, theirs = _pair(0, 16, 12, [4, 8])
    tp.manual_seed(5)
    ours.reset_parameters()
    torch.manual_seed(5)
    theirs.reset_parameters()
    for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(_np(a), _np(b), err_msg=n)


def test_pytorch_checkpoint_loads():
    _, theirs = _pair(7, 16, 12, [4, 8], head_bias=True)
    tp.manual_seed(0)
    ours = tp.nn.AdaptiveLogSoftmaxWithLoss(16, 12, [4, 8], head_bias=True)
    ours.load_state_dict({k: tp.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    _close(ours.log_prob(tp.tensor(x)), theirs.log_prob(torch.tensor(x)))


CASES = {
    # (module kwargs, targets)
    "head only": (dict(in_features=64, n_classes=20, cutoffs=[5, 10, 15]), [0, 4, 2, 2, 1, 3]),
    "some clusters": (dict(in_features=64, n_classes=20, cutoffs=[5, 10, 15]), [0, 7, 12, 9, 1, 6]),
    "every cluster": (dict(in_features=64, n_classes=20, cutoffs=[5, 10, 15]), [19, 7, 12, 3, 15, 5, 10, 0]),
    "batch of one": (dict(in_features=64, n_classes=20, cutoffs=[5, 10, 15]), [17]),
    "head_bias": (dict(in_features=64, n_classes=20, cutoffs=[5, 10, 15], head_bias=True), [19, 7, 12, 3, 15, 5, 10, 0]),
    "div_value 1.5": (dict(in_features=9, n_classes=14, cutoffs=[6, 9, 12], div_value=1.5), [13, 6, 9, 0, 12]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_forward_and_gradients_match(case):
    kwargs, targets = CASES[case]
    ours, theirs = _pair(11, **kwargs)
    x_ours, x_theirs = _inputs((len(targets), kwargs["in_features"]))
    out_ours = ours(x_ours, tp.tensor(targets))
    out_theirs = theirs(x_theirs, torch.tensor(targets))
    assert type(out_ours).__name__ == "_ASMoutput" and out_ours._fields == ("output", "loss")
    assert tuple(out_ours.output.shape) == tuple(out_theirs.output.shape)
    assert tuple(out_ours.loss.shape) == ()
    _close(out_ours.output, out_theirs.output)
    _close(out_ours.loss, out_theirs.loss)
    out_ours.loss.backward()
    out_theirs.loss.backward()
    _close(x_ours.grad, x_theirs.grad)
    for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert (a.grad is None) == (b.grad is None), n
        if b.grad is not None:
            _close(a.grad, b.grad)


def test_unbatched_input():
    ours, theirs = _pair(2, 16, 12, [4, 8])
    for target in [2, 11]:
        x_ours, x_theirs = _inputs((16,), seed=target)
        out_ours = ours(x_ours, tp.tensor(target))
        out_theirs = theirs(x_theirs, torch.tensor(target))
        assert tuple(out_ours.output.shape) == () == tuple(out_theirs.output.shape)
        _close(out_ours.output, out_theirs.output)
        _close(out_ours.loss, out_theirs.loss)
        out_ours.loss.backward()
        out_theirs.loss.backward()
        _close(x_ours.grad, x_theirs.grad)


def test_output_gradient_weighted():
    """A gradient through `output` (not only the mean loss) reaches the same places."""
    ours, theirs = _pair(4, 16, 12, [4, 8])
    targets = [0, 5, 9, 11, 3]
    x_ours, x_theirs = _inputs((5, 16))
    w = np.arange(1, 6, dtype=np.float32)
    (ours(x_ours, tp.tensor(targets)).output * tp.tensor(w)).sum().backward()
    (theirs(x_theirs, torch.tensor(targets)).output * torch.tensor(w)).sum().backward()
    _close(x_ours.grad, x_theirs.grad)
    for (_n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        _close(a.grad, b.grad)


@pytest.mark.parametrize("head_bias", [False, True])
def test_log_prob_matches(head_bias):
    ours, theirs = _pair(5, 64, 20, [5, 10, 15], head_bias=head_bias)
    x_ours, x_theirs = _inputs((8, 64))
    lp_ours, lp_theirs = ours.log_prob(x_ours), theirs.log_prob(x_theirs)
    assert tuple(lp_ours.shape) == (8, 20)
    _close(lp_ours, lp_theirs)
    g = np.random.default_rng(9).standard_normal((8, 20)).astype(np.float32)
    (lp_ours * tp.tensor(g)).sum().backward()
    (lp_theirs * torch.tensor(g)).sum().backward()
    _close(x_ours.grad, x_theirs.grad)
    for (_n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        _close(a.grad, b.grad)


def _predict_pair(bias_to):
    """A module whose head prefers the shortlist ("head"), the clusters ("tail") or each for some rows ("mixed")."""
    ours, theirs = _pair(6, 16, 12, [4, 8], head_bias=True)
    bias = np.zeros(6, dtype=np.float32)
    if bias_to == "tail":
        bias[4:] = 50.0
    elif bias_to == "head":
        bias[:4] = 50.0
    with torch.no_grad():
        theirs.head.bias.copy_(torch.tensor(bias))
    with tp.no_grad():
        ours.head.bias.copy_(tp.tensor(bias))
    return ours, theirs


@pytest.mark.parametrize("bias_to", ["head", "tail", "mixed"])
def test_predict_matches(bias_to):
    ours, theirs = _predict_pair(bias_to)
    x = np.random.default_rng(3).standard_normal((40, 16)).astype(np.float32) * 4
    if bias_to == "mixed":
        # rows whose best head column is a cluster, and rows whose best is a shortlist class
        head_best = theirs.head(torch.tensor(x)).argmax(1)
        assert (head_best >= 4).any() and (head_best < 4).any()
    p_ours, p_theirs = ours.predict(tp.tensor(x)), theirs.predict(torch.tensor(x))
    assert p_ours.dtype == tp.int64
    np.testing.assert_array_equal(_np(p_ours), _np(p_theirs))
    np.testing.assert_array_equal(_np(p_ours), _np(ours.log_prob(tp.tensor(x)).argmax(1)))


def test_repr_matches():
    ours, theirs = _pair(0, 16, 12, [4, 8])
    assert repr(ours) == repr(theirs)


def _raised(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value).replace("torch.Size", "tapeflow.Size")


@pytest.mark.parametrize("args", [
    (8, 10, []),
    (8, 10, [5, 3]),
    (8, 10, [0, 5]),
    (8, 10, [-1, 5]),
    (8, 10, [5, 10]),
    (8, 10, [3, 3, 5]),
    (8, 10, [2.5, 5]),
])
def test_bad_cutoffs_raise_like_pytorch(args):
    expected = _raised(lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(*args))
    assert _raised(lambda: tp.nn.AdaptiveLogSoftmaxWithLoss(*args)) == expected


def test_integral_float_cutoffs_pass_the_check_then_fail_like_pytorch():
    """`2.0` passes the cutoffs check; the float cluster size then fails building a `Linear`, a TypeError."""
    assert _raised(lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.0, 5]))[0] is TypeError
    assert _raised(lambda: tp.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.0, 5]))[0] is TypeError


BAD_CALLS = {
    "target too large": ((4, 16), [0, 5, 12, 3]),
    "target negative": ((3, 16), [0, -1, 2]),
    "batch mismatch": ((4, 16), [0, 1, 2]),
    "1d target with 3d input": ((2, 3, 16), [0, 1]),
    "1d target with 1d input": ((16,), [0] * 16),
    "0d target with 2d input": ((2, 16), 1),
    "2d target": ((2, 16), [[0], [1]]),
    "0d target too large": ((16,), 12),
}


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_inputs_raise_like_pytorch(case):
    shape, target = BAD_CALLS[case]
    ours, theirs = _pair(0, 16, 12, [4, 8])
    x = np.zeros(shape, dtype=np.float32)
    expected = _raised(lambda: theirs(torch.tensor(x), torch.tensor(target)))
    assert _raised(lambda: ours(tp.tensor(x), tp.tensor(target))) == expected


def test_adaptive_eager_mode_matches():
    was = tp.is_adaptive_eager_enabled()
    tp.set_adaptive_eager(True)
    try:
        ours, theirs = _pair(8, 64, 20, [5, 10, 15])
        targets = [19, 7, 12, 3, 15, 5, 10, 0]
        x_ours, x_theirs = _inputs((8, 64))
        out_ours = ours(x_ours, tp.tensor(targets))
        out_theirs = theirs(x_theirs, torch.tensor(targets))
        out_ours.loss.backward()
        out_theirs.loss.backward()
        _close(out_ours.loss, out_theirs.loss)
        _close(x_ours.grad, x_theirs.grad)
        _close(ours.tail[2][0].weight.grad, theirs.tail[2][0].weight.grad)
    finally:
        tp.set_adaptive_eager(was)
