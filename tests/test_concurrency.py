"""Backward passes on several threads accumulate into shared leaves exactly (PyTorch's guarantee)."""

from __future__ import annotations

import threading

import numpy as np

import tapeflow as tp


def _run_threads(n, target):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_eight_threads_accumulate_into_one_leaf():
    x = tp.ones(5, requires_grad=True)

    def work(i):
        for _ in range(40):
            (x * (i + 1)).sum().backward()

    _run_threads(8, work)
    np.testing.assert_allclose(x.grad.numpy(), np.full(5, 40 * sum(range(1, 9))))


def test_threads_backpropagating_one_shared_graph():
    x = tp.tensor([0.5, 1.0, 2.0], dtype=tp.float64, requires_grad=True)
    y = (x.exp() * x).sum()

    def work(i):
        for _ in range(20):
            y.backward(retain_graph=True)

    _run_threads(8, work)
    want = 160 * ((1 + x.detach().numpy()) * np.exp(x.detach().numpy()))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_threads_accumulate_through_hooks_and_create_graph():
    x = tp.ones(3, requires_grad=True)
    x.register_hook(lambda g: g * 2)

    def work(i):
        for _ in range(10):
            (x * x).sum().backward(create_graph=i % 2 == 0)

    _run_threads(4, work)
    np.testing.assert_allclose(x.grad.detach().numpy(), np.full(3, 4 * 10 * 4.0))
