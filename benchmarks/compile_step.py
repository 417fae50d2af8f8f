"""A whole SGD training step of a 784-256-256-10 MLP (batch 128): tp.compile vs hand-written jax.jit vs eager.

- tapeflow eager: `opt.zero_grad(); loss.backward(); opt.step()` op by op.
- tp.compile: the same Python function compiled into one XLA program (parameters, grads
  and momentum buffers lifted and written back).
- jax.jit(value_and_grad): the same model and update written by hand in JAX, as a
  pure function of a parameter pytree (the lower bound tp.compile aims for).
- the same, also returning the gradients: what keeping `.grad`s (eager semantics) costs
  any step, since XLA must then write them to buffers of their own.
- torch eager, when PyTorch is installed.

Also checks that the three tapeflow/JAX variants produce the same losses.

Run: python benchmarks/compile_step.py [--plain]   (--plain: SGD without momentum, the step with the
least XLA work, where tp.compile's fixed per-call cost shows most)
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
from _timing import interleaved, report

import tapeflow as tp
from tapeflow import nn

SIZES = (784, 256, 256, 10)
BATCH = 128
LR, MOMENTUM = 0.05, 0.0 if "--plain" in sys.argv else 0.9


def make_model():
    tp.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def tapeflow_step_fn(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def jax_step_fn(with_grads=False):
    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w.T + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def step(params, bufs, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        if MOMENTUM:
            bufs = jax.tree.map(lambda b, g: MOMENTUM * b + g, bufs, grads)
        params = jax.tree.map(lambda p, b: p - LR * b, params, bufs if MOMENTUM else grads)
        return (params, bufs, loss, grads) if with_grads else (params, bufs, loss)

    return step


def main() -> None:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, 784)).astype(np.float32)
    y_np = rng.integers(0, 10, BATCH)
    x, y = tp.tensor(x_np), tp.tensor(y_np)

    eager_model = make_model()
    eager_opt = tp.optim.SGD(eager_model.parameters(), lr=LR, momentum=MOMENTUM)
    eager = tapeflow_step_fn(eager_model, eager_opt)

    comp_model = make_model()
    comp_opt = tp.optim.SGD(comp_model.parameters(), lr=LR, momentum=MOMENTUM)
    compiled = tp.compile(tapeflow_step_fn(comp_model, comp_opt))

    don_model = make_model()
    don_opt = tp.optim.SGD(don_model.parameters(), lr=LR, momentum=MOMENTUM)
    donated = tp.compile(tapeflow_step_fn(don_model, don_opt), donate_state=True)

    ref_model = make_model()
    state = {"params": [(m.weight._data, m.bias._data) for m in ref_model if isinstance(m, nn.Linear)]}
    state["bufs"] = jax.tree.map(jnp.zeros_like, state["params"]) if MOMENTUM else None
    jstep = jax_step_fn()
    gstate = dict(state, grads=None)
    gstep = jax_step_fn(with_grads=True)
    xj, yj = jnp.asarray(x_np), jnp.asarray(y_np)

    # Same numbers from all three for the first steps.
    losses = [[], [], []]
    for _ in range(3):
        losses[0].append(eager(x, y).item())
        losses[1].append(compiled(x, y).item())
        state["params"], state["bufs"], loss = jstep(state["params"], state["bufs"], xj, yj)
        losses[2].append(float(loss))
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-4)
    np.testing.assert_allclose(losses[2], losses[0], rtol=1e-4)
    print("first losses (eager, tp.compile, jax.jit):", *(np.round(v, 5).tolist() for v in losses))

    def run_jax():
        state["params"], state["bufs"], loss = jstep(state["params"], state["bufs"], xj, yj)
        jax.block_until_ready((state["params"], loss))

    def run_jax_grads():
        gstate["params"], gstate["bufs"], loss, gstate["grads"] = gstep(gstate["params"], gstate["bufs"], xj, yj)
        jax.block_until_ready((gstate["params"], loss))

    def settled(params):
        # Wait for the loss and the updated parameters: the optimizer's writes are part of the step.
        # The same Parameter objects hold the new values after every step, so the list is made once.
        params = list(params)
        return lambda loss: jax.block_until_ready([loss._data, *(p._data for p in params)])

    comp_wait, don_wait, eager_wait = (settled(m.parameters()) for m in (comp_model, don_model, eager_model))
    cases = {
        "jax.jit(value_and_grad)": run_jax,
        "jax.jit, grads returned too": run_jax_grads,
        "tp.compile": lambda: comp_wait(compiled(x, y)),
        "tp.compile(donate_state)": lambda: don_wait(donated(x, y)),
        "tapeflow eager": lambda: eager_wait(eager(x, y)),
    }
    try:
        import torch

        # One thread: on a small shared CPU, torch's spinning worker threads would otherwise slow
        # down whichever case runs after it in the interleaved loop.
        torch.set_num_threads(1)
        torch.manual_seed(0)
        tmodel = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                     torch.nn.ReLU(), torch.nn.Linear(256, 10))
        topt = torch.optim.SGD(tmodel.parameters(), lr=LR, momentum=MOMENTUM)
        xt, yt = torch.tensor(x_np), torch.tensor(y_np)

        def run_torch():
            topt.zero_grad()
            loss = torch.nn.functional.cross_entropy(tmodel(xt), yt)
            loss.backward()
            topt.step()

        cases["torch eager"] = run_torch
    except ImportError:
        pass
    med = interleaved(cases, repeats=80, warmup=5)
    report(f"MLP {'-'.join(map(str, SIZES))} {'plain SGD' if not MOMENTUM else 'SGD+momentum'} step, batch {BATCH} (median per step)",
           med, "jax.jit(value_and_grad)")
    base = med["jax.jit(value_and_grad)"]
    print(f"\ntp.compile / jax.jit = {med['tp.compile'] / base:.2f}x   "
          f"with donate_state: {med['tp.compile(donate_state)'] / base:.2f}x   "
          f"jax.jit returning grads: {med['jax.jit, grads returned too'] / base:.2f}x   "
          f"eager / tp.compile = {med['tapeflow eager'] / med['tp.compile']:.1f}x   (traces: {compiled.traces})")


if __name__ == "__main__":
    main()
