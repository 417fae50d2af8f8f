"""A tiny GPT training step (4 layers, d=64, 4 heads, T=32, B=8, AdamW): tapeflow eager vs PyTorch eager.

The model is written once against a torch-like namespace and built twice, on tapeflow and on PyTorch
(one thread: XLA runs programs this small on one CPU thread). tapeflow runs with adaptive eager on and
off, beside the same step written directly in JAX under one `jax.jit` (what XLA makes of the whole step
on this machine). Steady-state medians and ratios come from one process, interleaved. `--first` instead times one
fresh process per library from start to the end of its second step, twice: with an empty compilation cache,
then reading what the first run kept (tapeflow's persistent compilation cache).

Run: python benchmarks/gpt_step.py [--first]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from _timing import interleaved, report

LAYERS, D, HEADS, T, B, VOCAB = 4, 64, 4, 32, 8, 96


def build(lib):
    """`(step, sync)` for a tiny GPT on `lib` (`tapeflow` or `torch`)."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.fc, self.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

        def forward(self, x):
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
            q, k, v = (t.view(B, T, HEADS, D // HEADS).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, D))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(T, D)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, VOCAB, bias=False)

        def forward(self, idx, targets):
            x = self.tok(idx) + self.pos(lib.arange(T))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))

    lib.manual_seed(0)
    model = GPT()
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    idx = lib.randint(0, VOCAB, (B, T))
    targets = lib.randint(0, VOCAB, (B, T))

    def step():
        opt.zero_grad()
        loss = model(idx, targets)
        loss.backward()
        opt.step()
        return loss.item()  # a training loop's usual host read; it also waits for the step

    return step


def build_jax():
    """The same model and AdamW step written directly in JAX, one `jax.jit` program per step (the reference:
    what a compiled step costs on this machine)."""
    import jax
    import jax.numpy as jnp
    import optax

    keys = iter(jax.random.split(jax.random.PRNGKey(0), 64))
    f32 = jnp.float32  # (tapeflow turns on JAX's 64-bit mode: say float32 where JAX would default to float64)
    dense = lambda i, o, bias=True: {"w": jax.random.normal(next(keys), (o, i), f32) * i ** -0.5,  # noqa: E731
                                     **({"b": jnp.zeros(o, f32)} if bias else {})}
    norm = lambda: {"w": jnp.ones(D, f32), "b": jnp.zeros(D, f32)}  # noqa: E731
    params = {"tok": jax.random.normal(next(keys), (VOCAB, D), f32), "pos": jax.random.normal(next(keys), (T, D), f32),
              "blocks": [{"ln1": norm(), "ln2": norm(), "qkv": dense(D, 3 * D), "proj": dense(D, D),
                          "fc": dense(D, 4 * D), "out": dense(4 * D, D)} for _ in range(LAYERS)],
              "ln": norm(), "head": dense(D, VOCAB, bias=False)}

    def linear(p, x):
        y = x @ p["w"].T
        return y + p["b"] if "b" in p else y

    def layer_norm(p, x):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * p["w"] + p["b"]

    def block(p, x):
        q, k, v = jnp.split(linear(p["qkv"], layer_norm(p["ln1"], x)), 3, axis=2)
        q, k, v = (t.reshape(B, T, HEADS, D // HEADS).transpose(0, 2, 1, 3) for t in (q, k, v))
        att = q @ k.transpose(0, 1, 3, 2) / (D // HEADS) ** 0.5
        att = jnp.where(jnp.tril(jnp.ones((T, T), bool)), att, -jnp.inf)
        y = (jax.nn.softmax(att, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
        x = x + linear(p["proj"], y)
        return x + linear(p["out"], jax.nn.gelu(linear(p["fc"], layer_norm(p["ln2"], x)), approximate=False))

    def loss_fn(params, idx, targets):
        x = params["tok"][idx] + params["pos"][jnp.arange(T)]
        for p in params["blocks"]:
            x = block(p, x)
        logits = linear(params["head"], layer_norm(params["ln"], x)).reshape(-1, VOCAB)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets.reshape(-1)).mean()

    opt = optax.adamw(1e-3, weight_decay=0.01)
    state = [params, opt.init(params)]

    @jax.jit
    def train(params, opt_state, idx, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, idx, targets)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    idx = jax.random.randint(next(keys), (B, T), 0, VOCAB)
    targets = jax.random.randint(next(keys), (B, T), 0, VOCAB)

    def step():
        state[0], state[1], loss = train(state[0], state[1], idx, targets)
        return float(loss)

    return step


def contenders(tp, torch, torch_name: str) -> dict:
    """The steady-state cases, by name: tapeflow with adaptive eager on and off, PyTorch (on whatever device
    and threads the caller set), and the step written by hand under one `jax.jit`."""
    tp_step, torch_step = build(tp), build(torch)

    def adaptive(on):
        def run():
            tp.set_adaptive_eager(on)
            tp_step()
        return run

    return {"tapeflow adaptive eager": adaptive(True), "tapeflow op by op": adaptive(False), torch_name: torch_step,
            "hand-written jax.jit step": build_jax()}


def steady() -> None:
    import torch

    import tapeflow as tp

    torch.set_num_threads(1)
    med = interleaved(contenders(tp, torch, "torch eager (1 thread)"), repeats=30, warmup=4)
    tp.set_adaptive_eager(True)
    report("tiny GPT training step (median)", med, "torch eager (1 thread)")


def first_steps() -> None:
    code = ("import time; t0 = time.perf_counter(); import sys; sys.path.insert(0, '.'); import gpt_step, {lib}; "
            "{setup}; s = gpt_step.build({lib}); s(); s(); print(time.perf_counter() - t0)")
    with tempfile.TemporaryDirectory() as cache:  # (an empty compilation cache: the first run compiles everything)
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=cache)
        # Imports read compiled bytecode, as after an install: an environment that forbids writing it would
        # time the compilation of tapeflow's sources at every start (PyTorch's come compiled by pip).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([sys.executable, "-c", "import tapeflow"], check=True, env=dict(env, TAPEFLOW_CACHE_DIR="0"))
        for run in ("first run, empty cache", "second run"):
            for name, lib, setup in (("tapeflow", "tapeflow", "pass"),
                                     ("torch (1 thread)", "torch", "torch.set_num_threads(1)")):
                t = time.perf_counter()
                subprocess.run([sys.executable, "-c", code.format(lib=lib, setup=setup)], check=True,
                               capture_output=True, env=env)
                print(f"  {name:16s} ({run}) process start -> end of step 2: {time.perf_counter() - t:6.2f} s")


if __name__ == "__main__":
    first_steps() if "--first" in sys.argv else steady()
