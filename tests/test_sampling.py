"""Sampling ops, the remaining nn.init functions and func.stack_module_state."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def test_multinomial_frequencies_with_and_without_replacement():
    tp.manual_seed(0)
    w = tp.tensor([1.0, 2.0, 7.0, 0.0])
    draws = tp.multinomial(w, 20000, replacement=True).numpy()
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / 20000, [0.1, 0.2, 0.7, 0.0], atol=0.015)
    rows = tp.multinomial(tp.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 5.0, 1.0, 1.0]]), 3).numpy()
    assert rows.shape == (2, 3) and all(len(set(r)) == 3 for r in rows) and 0 not in rows[1]
    firsts = np.array([tp.multinomial(w, 2)[0].item() for _ in range(400)])
    assert abs((firsts == 2).mean() - 0.7) < 0.08  # the first draw without replacement follows the weights
    assert tp.multinomial(tp.tensor([1.0, 0.0]), 2).tolist() == [0, 1]  # as PyTorch: zero weights come last


def test_bernoulli_poisson_and_inplace_samplers():
    tp.manual_seed(1)
    assert abs(tp.bernoulli(tp.full((20000,), 0.3)).mean().item() - 0.3) < 0.015
    assert abs(tp.poisson(tp.full((20000,), 4.0)).mean().item() - 4.0) < 0.06
    assert abs(tp.empty(20000).exponential_(2.0).mean().item() - 0.5) < 0.02
    assert abs(tp.empty(20000).log_normal_(0.0, 0.5).log().std().item() - 0.5) < 0.02
    geo = tp.empty(20000).geometric_(0.25)
    assert geo.min().item() >= 1 and abs(geo.mean().item() - 4.0) < 0.15
    c = tp.empty(20001).cauchy_(1.0, 2.0)
    assert abs(c.median().item() - 1.0) < 0.1


@pytest.mark.parametrize("bad", [
    (lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 1), "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda m: m.multinomial(m.tensor([1.0, 1.0]), 3), "cannot sample n_sample > prob_dist.size(-1) samples"),
    (lambda m: m.multinomial(m.zeros(2), 1, True), "invalid multinomial distribution (sum of probabilities <= 0)"),
])
def test_multinomial_errors_are_pytorchs(bad):
    fn, phrase = bad
    for lib in (tp, torch) if torch is not None else (tp,):
        with pytest.raises(RuntimeError, match=phrase.replace("(", r"\(").replace(")", r"\)").replace("`", ".")):
            fn(lib)


def test_init_orthogonal_dirac_eye_sparse():
    w = tp.nn.init.orthogonal_(tp.empty(3, 2, 4), gain=2.0).reshape(3, 8)
    np.testing.assert_allclose((w @ w.t()).numpy(), 4 * np.eye(3), atol=1e-5)
    kernel = tp.nn.init.dirac_(tp.empty(4, 4, 3, 3))
    x = tp.randn(1, 4, 5, 5)
    np.testing.assert_allclose(tp.nn.functional.conv2d(x, kernel, padding=1).numpy(), x.numpy(), atol=1e-6)
    np.testing.assert_array_equal(tp.nn.init.eye_(tp.empty(2, 3)).numpy(), np.eye(2, 3))
    s = tp.nn.init.sparse_(tp.empty(10, 4), sparsity=0.3)
    assert ((s == 0).sum(0) >= 3).all()


def test_stack_module_state_runs_an_ensemble_with_vmap():
    tp.manual_seed(0)
    models = [tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.BatchNorm1d(4)) for _ in range(3)]
    params, buffers = tp.func.stack_module_state(models)
    assert params["0.weight"].shape == (3, 4, 3) and params["0.weight"].requires_grad and params["0.weight"].is_leaf
    assert not buffers["1.running_mean"].requires_grad
    base = tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.BatchNorm1d(4)).eval()
    for m in models:
        m.eval()
    x = tp.randn(5, 3)
    out = tp.func.vmap(lambda p, b: tp.func.functional_call(base, (p, b), (x,)))(params, buffers)
    for i, m in enumerate(models):
        tp.testing.assert_close(out[i], m(x).detach())
