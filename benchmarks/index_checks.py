"""What the eager checks of index values cost (out-of-range indices raise instead of returning wrong data).

A tensor of indices lives on the device, so checking it means reading it: on the CPU NumPy reads it in
place, on an accelerator one compiled call reduces it to two numbers; an index array checked before is not
read again. Measured on the ops that check, with the check and with it switched off, beside PyTorch eager
(which checks too): advanced indexing (with the same index tensor, and with a new one each call), gather,
an embedding lookup and a cross-entropy loss with class-index targets; then the MLP training step (its
cross-entropy checks its targets).

Run: python benchmarks/index_checks.py
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch
from _timing import interleaved, report

import tapeflow as tp
import tapeflow._ops._checks as checks
from tapeflow import nn


@contextlib.contextmanager
def unchecked():
    """Switch the value checks off (what tapeflow did before they existed)."""
    saved = checks.index_bounds
    checks.index_bounds = lambda index, ignore=None: None
    checks._seen.clear()
    try:
        yield
    finally:
        checks.index_bounds = saved


def ops(lib, rng):
    x = lib.tensor(rng.normal(size=(256, 64)).astype(np.float32))
    idx = lib.tensor(rng.integers(0, 256, 128))
    gidx = lib.tensor(rng.integers(0, 64, (256, 8)))
    emb = lib.tensor(rng.normal(size=(1000, 32)).astype(np.float32))
    tokens = lib.tensor(rng.integers(0, 1000, (32, 16)))
    logits = lib.tensor(rng.normal(size=(128, 10)).astype(np.float32))
    target = lib.tensor(rng.integers(0, 10, 128))
    F = lib.nn.functional
    pool = [lib.tensor(rng.integers(0, 256, 128)) for _ in range(300)]  # more than the check's cache holds
    turn = iter(range(10**9))
    return {
        "x[idx]": lambda: x[idx],
        "x[idx], a new idx each call": lambda: x[pool[next(turn) % 300]],
        "gather": lambda: lib.gather(x, 1, gidx),
        "embedding": lambda: F.embedding(tokens, emb),
        "cross_entropy": lambda: F.cross_entropy(logits, target),
    }


def block(out):
    if isinstance(out, tp.Tensor):
        out._data.block_until_ready()


def mlp_step():
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = tp.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(0)
    x = tp.tensor(rng.normal(size=(128, 784)).astype(np.float32))
    y = tp.tensor(rng.integers(0, 10, 128))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        model[0].weight._data.block_until_ready()

    return step


def main():
    rng = np.random.default_rng(0)
    mine, theirs = ops(tp, rng), ops(torch, np.random.default_rng(0))
    for name in mine:
        f, g = mine[name], theirs[name]

        def off(f=f):
            with unchecked():
                block(f())

        medians = interleaved({"tapeflow (checked)": lambda f=f: block(f()), "tapeflow (unchecked)": off,
                               "torch eager": g}, repeats=60, inner=20)
        report(f"{name} (median per call)", medians, "tapeflow (unchecked)")
    step = mlp_step()

    def step_off():
        with unchecked():
            step()

    medians = interleaved({"checked": step, "unchecked": step_off}, repeats=40, inner=3)
    report("MLP 784-256-256-10 SGD step, batch 128 (median per step)", medians, "unchecked")


if __name__ == "__main__":
    main()
