"""One eager SGD training step of a 784-256-256-10 MLP, batch 128: tapeflow vs PyTorch.

A step is `zero_grad(); loss = cross_entropy(model(x), y); loss.backward(); opt.step()`.
Both run in this process, interleaved; medians and the tapeflow/PyTorch ratio are
printed, against PyTorch with its default thread count and with one thread (XLA
runs programs this small on one CPU thread), beside the same step written directly in JAX under one
`jax.jit`. `--profile` also prints the
top of a cProfile of the tapeflow step (where the Python overhead goes).

Run: python benchmarks/mlp_step.py [--profile]
"""

from __future__ import annotations

import cProfile
import pstats
import sys

import jax
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

    params = list(model.parameters())

    def run():
        # Wait for the loss and the updated parameters, as PyTorch's CPU step is synchronous.
        loss = step()
        jax.block_until_ready([loss._data, *(p._data for p in params)])

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


def jax_step():
    """The same step written directly in JAX (optax SGD with momentum, which updates as PyTorch's does), one
    `jax.jit` program per step: what XLA makes of the whole step on this machine."""
    import jax.numpy as jnp
    import optax

    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    f32 = jnp.float32  # (tapeflow turns on JAX's 64-bit mode: say float32 where JAX would default to float64)
    params = [(jax.random.normal(keys[i], (o, n), f32) * n ** -0.5, jnp.zeros(o, f32))
              for i, (n, o) in enumerate(zip(SIZES, SIZES[1:]))]
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(BATCH, SIZES[0])).astype(np.float32))
    y = jnp.asarray(rng.integers(0, SIZES[-1], BATCH))

    def loss_fn(params):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            h = jax.nn.relu(h) if i < len(params) - 1 else h
        return optax.softmax_cross_entropy_with_integer_labels(h, y).mean()

    opt = optax.sgd(LR, momentum=MOMENTUM)
    state = [params, opt.init(params)]

    @jax.jit
    def train(params, opt_state):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = opt.update(grads, opt_state)
        return optax.apply_updates(params, updates), opt_state, loss

    def run():
        state[0], state[1], loss = train(*state)
        jax.block_until_ready((loss, state[0]))

    return run


def main(profile: bool) -> None:
    run_tp, step = tapeflow_step()
    try:
        import torch

        run_th = torch_step()
    except ImportError:
        print("PyTorch is not installed: timing tapeflow alone.")
        report(f"SGD step, MLP {'-'.join(map(str, SIZES))}, batch {BATCH}",
               interleaved({"tapeflow eager": run_tp}, repeats=60, inner=5, warmup=10), "tapeflow eager")
        return
    title = f"SGD step, MLP {'-'.join(map(str, SIZES))}, batch {BATCH} (median per step)"
    threads = torch.get_num_threads()
    both = interleaved({"tapeflow eager": run_tp, f"torch eager ({threads} threads)": run_th,
                        "hand-written jax.jit step": jax_step()}, repeats=60, inner=5, warmup=10)
    report(title, both, f"torch eager ({threads} threads)")
    # XLA runs CPU programs this small on one thread: PyTorch on one thread is the like-for-like row.
    torch.set_num_threads(1)
    one = interleaved({"tapeflow eager": run_tp, "torch eager (1 thread)": run_th}, repeats=60, inner=5, warmup=10)
    torch.set_num_threads(threads)
    report(title, one, "torch eager (1 thread)")
    print(f"\n  ratio tapeflow / torch = {both['tapeflow eager'] / both[f'torch eager ({threads} threads)']:.2f}"
          f"   (torch on 1 thread: {one['tapeflow eager'] / one['torch eager (1 thread)']:.2f})")
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
