"""Data-parallel training over 8 devices with XLA SPMD, compared with one device.

On a CPU-only machine JAX can pretend to have several devices; the flag must
be set before JAX is imported:

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python examples/data_parallel.py

The parameters are replicated on every device, each batch is split along its
first dimension, and `tp.compile` turns the training step into one SPMD
program: XLA runs the forward and backward on each device's slice and
all-reduces the gradients, because the loss is a mean over the whole batch.
The loss curve equals the single-device one.
"""

import os
import sys

if "jax" not in sys.modules:
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import tapeflow as tp  # noqa: E402
from tapeflow import nn  # noqa: E402


def make_model():
    tp.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


def train(mesh=None, steps=5, batch=64):
    model = make_model()
    opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if mesh is not None:
        tp.distributed.data_parallel(model, mesh)

    @tp.compile
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        x = tp.tensor(rng.standard_normal((batch, 16)).astype(np.float32))
        y = tp.tensor(rng.integers(0, 4, batch))
        if mesh is not None:
            x = tp.distributed.shard_batch(x, mesh, "data")
            y = tp.distributed.shard_batch(y, mesh, "data")
        losses.append(step(x, y).item())
    return losses, model


def main(steps=5):
    n = len(jax.devices())
    mesh = tp.distributed.make_mesh((n,), ("data",))
    single, _ = train(None, steps)
    parallel, model = train(mesh, steps)
    weight = next(iter(model.parameters()))
    print(f"{n} devices; parameters sharded as {weight.sharding}")
    for i, (a, b) in enumerate(zip(single, parallel)):
        print(f"step {i}: single-device loss {a:.6f}   data-parallel loss {b:.6f}")
    np.testing.assert_allclose(parallel, single, rtol=1e-5)
    return single, parallel


if __name__ == "__main__":
    main()
