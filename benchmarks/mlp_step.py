"""One eager SGD training step of a 784-256-256-10 MLP, batch 128: tapeflow vs PyTorch.

A step is `zero_grad(); loss = cross_entropy(model(x), y); loss.backward(); opt.step()`.
Both run in this process, interleaved, single-threaded intra-op where possible;
medians and the tapeflow/PyTorch ratio are printed. `--profile` also prints the
top of a cProfile of the tapeflow step (where the Python overhead goes).

Run: python benchmarks/mlp_step.py [--profile]
"""

from __future__ import annotations

import cProfile
import pstats
import sys

import numpy as np
from _timing import interleaved, report

import tapeflow as tp
from tapeflow import nn

SIZES = (784, 256, 256, 10)
BATCH = 128
LR, MOMENTUM = 0.05, 0.9


def tapeflow_step():
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = tp.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    rng = np.random.default_rng(0)
    x = tp.tensor(rng.normal(size=(BATCH, SIZES[0])).astype(np.float32))
    y = tp.tensor(rng.integers(0, SIZES[-1], BATCH))

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def run():
        # Wait for the result, as PyTorch's CPU step is synchronous.
        step()._data.block_until_ready()

    return run, step


def torch_step():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(BATCH, SIZES[0])).astype(np.float32))
    y = torch.tensor(rng.integers(0, SIZES[-1], BATCH))

    def run():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return run


def main(profile: bool) -> None:
    run_tp, step = tapeflow_step()
    cases = {"tapeflow eager": run_tp}
    try:
        cases["torch eager"] = torch_step()
    except ImportError:
        print("PyTorch is not installed: timing tapeflow alone.")
    medians = interleaved(cases, repeats=60, inner=5, warmup=10)
    baseline = "torch eager" if "torch eager" in medians else "tapeflow eager"
    report(f"SGD step, MLP {'-'.join(map(str, SIZES))}, batch {BATCH} (median per step)", medians, baseline)
    if "torch eager" in medians:
        print(f"\n  ratio tapeflow / torch = {medians['tapeflow eager'] / medians['torch eager']:.2f}")
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            step()
        step()._data.block_until_ready()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main("--profile" in sys.argv)
