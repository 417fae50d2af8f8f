"""A training loop whose batches change shape at every step: tapeflow vs PyTorch eager vs hand-written `jax.jit`.

Each step takes a batch of a new row count (drawn from 20..399), runs `Linear(16, 64) -> ReLU ->
Linear(64, 8)`, pools the rows into 10 segments with `index_add_`, and takes an Adam step on the pooled
mean square. XLA compiles a program per new input shape, so this is the workload where per-step
compilation, not dispatch, decides the time. Each library runs in a fresh process:

- `torch`: PyTorch eager;
- `tapeflow (empty cache)`: tapeflow with an empty persistent compilation cache (a program's first run);
- `tapeflow (warm cache)`: the same run again (the programs now load from the cache);
- `jax.jit`: the same step written in JAX, one jitted value-and-grad + update, with JAX's defaults (no
  persistent cache: a jitted step compiles once per new shape).

Printed: milliseconds per step (median over the steps after the first, which also pays for imports),
the number of programs lowered per step (compiled or loaded from the cache) and ratios to PyTorch.

Run: python benchmarks/varying_shapes.py [--steps 40]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CHILD = r"""
import json, statistics, sys, time
import numpy as np
lib, steps = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
sizes = [int(n) for n in rng.integers(20, 400, steps)]
lowered = [0]
times = []
if lib == "jax":
    import jax, jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    jax.monitoring.register_event_duration_secs_listener(
        lambda name, _s, **_: lowered.__setitem__(0, lowered[0] + (name == "/jax/core/compile/jaxpr_to_mlir_module_duration")))
    k = jax.random.split(jax.random.PRNGKey(0), 2)
    params = [jax.random.normal(k[0], (16, 64), jnp.float32) * 0.25, jnp.zeros(64, jnp.float32),
              jax.random.normal(k[1], (64, 8), jnp.float32) * 0.125, jnp.zeros(8, jnp.float32)]
    state = [[jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params], 0]

    def loss_fn(p, x, seg):
        h = jnp.maximum(x @ p[0] + p[1], 0) @ p[2] + p[3]
        pooled = jnp.zeros((10, 8), jnp.float32).at[seg].add(h)
        return (pooled ** 2).mean()

    @jax.jit
    def step(p, m, v, t, x, seg):
        loss, g = jax.value_and_grad(loss_fn)(p, x, seg)
        t = t + 1
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
        p = [w - 1e-3 * (a / (1 - 0.9 ** t)) / (jnp.sqrt(b / (1 - 0.999 ** t)) + 1e-8) for w, a, b in zip(p, m, v)]
        return loss, p, m, v, t

    for n in sizes:
        t0 = time.perf_counter()
        x = jnp.asarray(rng.normal(size=(n, 16)).astype(np.float32))
        seg = jnp.asarray(rng.integers(0, 10, n))
        loss, params, state[0], state[1], state[2] = step(params, state[0], state[1], state[2], x, seg)
        float(loss)
        times.append(time.perf_counter() - t0)
else:
    if lib == "torch":
        import torch as tp
    else:
        import jax
        import tapeflow as tp
        jax.monitoring.register_event_duration_secs_listener(
            lambda name, _s, **_: lowered.__setitem__(0, lowered[0] + (name == "/jax/core/compile/jaxpr_to_mlir_module_duration")))
    nn = tp.nn
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 8))
    opt = tp.optim.Adam(model.parameters(), lr=1e-3)
    for n in sizes:
        t0 = time.perf_counter()
        x = tp.tensor(rng.normal(size=(n, 16)).astype(np.float32))
        seg = tp.tensor(rng.integers(0, 10, n))
        pooled = tp.zeros(10, 8).index_add_(0, seg, model(x))
        loss = (pooled ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
        times.append(time.perf_counter() - t0)
print(json.dumps({"ms": statistics.median(times[1:]) * 1e3, "lowered": lowered[0] / steps}))
"""


def run(lib: str, steps: int, env: dict | None = None) -> dict:
    import os

    out = subprocess.run([sys.executable, "-c", CHILD, lib, str(steps)], capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        results = {
            "torch": run("torch", args.steps),
            "tapeflow (empty cache)": run("tapeflow", args.steps, {"TAPEFLOW_CACHE_DIR": cache}),
            "tapeflow (warm cache)": run("tapeflow", args.steps, {"TAPEFLOW_CACHE_DIR": cache}),
            "jax.jit": run("jax", args.steps),
        }
    base = results["torch"]["ms"]
    print(f"\nA step with a new batch shape every step, {args.steps} steps (median ms per step)")
    for name, r in results.items():
        print(f"  {name:24s} {r['ms']:9.2f} ms   {r['ms'] / base:7.1f}x torch   {r['lowered']:5.1f} programs lowered per step")


if __name__ == "__main__":
    main()
