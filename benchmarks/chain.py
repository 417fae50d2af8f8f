"""A 100-op chain of small elementwise ops, forward + backward: tapeflow vs PyTorch eager vs jax.jit.

Also times backward through a 100,000-op chain (linear time, no recursion), and the chain with each library alone
in a fresh process: in one process, XLA's threads and PyTorch's compete for a small machine's cores, which slows
PyTorch's steps and flatters the in-process ratio.

Run: python benchmarks/chain.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from _timing import interleaved, report

import tapeflow as tp

N_BLOCKS = 25  # 4 ops each: 100 ops


def chain(y):
    for _ in range(N_BLOCKS):
        y = y * 1.01
        y = y + 0.1
        y = y.tanh()
        y = y - 0.05
    return y.sum()


def main() -> None:
    x0 = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    xt = tp.tensor(x0, requires_grad=True)

    def tapeflow_step():
        xt.grad = None
        chain(xt).backward()
        return xt.grad._data.block_until_ready()  # JAX dispatches asynchronously: wait for the gradient

    cases = {"tapeflow eager": tapeflow_step}

    def jax_chain(x):
        for _ in range(N_BLOCKS):
            x = jnp.tanh(x * 1.01 + 0.1) - 0.05
        return jnp.sum(x)

    jitted = jax.jit(jax.grad(jax_chain))
    xj = jnp.asarray(x0)
    cases["jax.jit(grad) (compiled)"] = lambda: jitted(xj).block_until_ready()
    try:
        import torch

        xo = torch.tensor(x0, requires_grad=True)

        def torch_step():
            xo.grad = None
            chain(xo).backward()
            return xo.grad

        cases["torch eager"] = torch_step
    except ImportError:
        torch = None
    med = interleaved(cases, repeats=60)
    tapeflow_step()
    tp.testing.assert_close(xt.grad, tp.tensor(np.asarray(jitted(xj))), rtol=1e-5, atol=1e-6)
    report("100-op elementwise chain, forward + backward (median per step)",
           med, "torch eager" if torch else "tapeflow eager")

    # Forward alone, to separate the costs.
    fwd = {"tapeflow forward": lambda: chain(xt)._data.block_until_ready()}
    if torch:
        fwd["torch forward"] = lambda: chain(xo)
    report("100-op chain, forward only", interleaved(fwd, repeats=40), "torch forward" if torch else "tapeflow forward")

    # 100,000-op chain: backward time is linear in length.
    for n in (10_000, 100_000):
        x = tp.tensor([1.0], requires_grad=True)
        y = x
        for _ in range(n):
            y = y + 1.0
        t = time.perf_counter()
        y.sum().backward()
        x.grad._data.block_until_ready()
        dt = time.perf_counter() - t
        assert x.grad.item() == 1.0
        print(f"\nbackward through a {n:,}-op chain: {dt:.2f} s ({dt / n * 1e6:.1f} us per node)")


# Each library alone in a fresh process: in one process, XLA's CPU threads and PyTorch's compete for this
# machine's two cores and slow PyTorch's steps down by up to 3x, which flatters the in-process ratio above.
CHILD = r"""
import statistics, sys, time
import numpy as np
lib = sys.argv[1]
if lib == "torch":
    import torch as m
else:
    import tapeflow as m
x = m.tensor(np.random.default_rng(0).standard_normal(16).astype(np.float32), requires_grad=True)

def step():
    x.grad = None
    y = x
    for _ in range(25):
        y = y * 1.01
        y = y + 0.1
        y = y.tanh()
        y = y - 0.05
    y.sum().backward()
    if lib != "torch":
        x.grad._data.block_until_ready()

for _ in range(50):
    step()
times = []
for _ in range(300):
    t = time.perf_counter()
    step()
    times.append(time.perf_counter() - t)
print(statistics.median(times))
"""


def separate_processes(rounds: int = 3) -> None:
    medians = {"tapeflow": [], "torch": []}
    for _ in range(rounds):  # alternating, so that both see the same machine
        for lib in medians:
            out = subprocess.run([sys.executable, "-c", CHILD, lib], capture_output=True, text=True, check=True)
            medians[lib].append(float(out.stdout.strip().splitlines()[-1]))
    mine, theirs = statistics.median(medians["tapeflow"]), statistics.median(medians["torch"])
    print(f"\n100-op chain, forward + backward, each library alone in its own process (median of {rounds} runs)")
    print(f"  tapeflow eager  {mine * 1e3:9.3f} ms   {mine / theirs:6.2f}x torch eager")
    print(f"  torch eager     {theirs * 1e3:9.3f} ms   {1.0:6.2f}x torch eager")


if __name__ == "__main__":
    main()
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        separate_processes()
