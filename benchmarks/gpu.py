"""The step benchmarks on a GPU: tapeflow (on JAX's GPU) vs PyTorch CUDA eager vs the step written by hand
under one `jax.jit`, all in one process, interleaved, medians and ratios.

Cases (each waits for its results, so asynchronous launches are counted in full):
- the 100-op elementwise chain, forward + backward (`chain.py`);
- the tiny GPT AdamW step (`gpt_step.py`), tapeflow with adaptive eager on and off;
- the 784-256-256-10 MLP SGD-with-momentum step (`mlp_step.py`);
- the MLP plain-SGD step under `tp.compile` vs hand-written `jax.jit` (`compile_step.py --plain`);
- `--first`: process start to the end of the GPT's second step, one fresh process per library, twice: first
  with an empty compilation cache (tapeflow compiles every program), then reading what the first run kept;
- `--precision`: float32 matrix products against float64, tapeflow vs PyTorch defaults (PyTorch does not
  use TF32 for float32 products unless asked to).

Run on a machine where JAX sees a GPU and PyTorch has CUDA: python benchmarks/gpu.py [--first] [--precision]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import jax
import numpy as np
from _timing import interleaved, report


def need_gpu():
    import torch

    if jax.default_backend() != "gpu" or not torch.cuda.is_available():
        sys.exit(f"gpu.py needs a GPU for both JAX (it sees {jax.default_backend()}) and PyTorch "
                 f"(cuda available: {torch.cuda.is_available()})")
    print(f"JAX {jax.__version__} on {jax.devices()[0].device_kind}; PyTorch {torch.__version__} on "
          f"{torch.cuda.get_device_name()}")
    torch.set_default_device("cuda")
    return torch


def chain_case(torch, tp):
    import jax.numpy as jnp
    from chain import N_BLOCKS, chain

    x0 = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    xt, xo = tp.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)

    def tapeflow_step():
        xt.grad = None
        chain(xt).backward()
        xt.grad._data.block_until_ready()

    def torch_step():
        xo.grad = None
        chain(xo).backward()
        torch.cuda.synchronize()

    def jax_chain(x):
        for _ in range(N_BLOCKS):
            x = jnp.tanh(x * 1.01 + 0.1) - 0.05
        return jnp.sum(x)

    jitted, xj = jax.jit(jax.grad(jax_chain)), jnp.asarray(x0)
    med = interleaved({"tapeflow eager": tapeflow_step, "torch CUDA eager": torch_step,
                       "jax.jit(grad)": lambda: jitted(xj).block_until_ready()}, repeats=60)
    np.testing.assert_allclose(xt.grad.cpu().numpy(), np.asarray(jitted(xj)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xo.grad.cpu().numpy(), np.asarray(jitted(xj)), rtol=1e-5, atol=1e-6)
    report("100-op elementwise chain, forward + backward (median per step)", med, "torch CUDA eager")


def gpt_case(torch, tp):
    import gpt_step

    # (each step ends in loss.item(), which waits for the GPU)
    med = interleaved(gpt_step.contenders(tp, torch, "torch CUDA eager"), repeats=30, warmup=4)
    tp.set_adaptive_eager(True)
    report("tiny GPT AdamW step (median)", med, "torch CUDA eager")


def mlp_case(torch, tp):
    import mlp_step

    run_tp, _ = mlp_step.tapeflow_step()
    run_torch = mlp_step.torch_step()

    def torch_step():
        run_torch()
        torch.cuda.synchronize()

    med = interleaved({"tapeflow eager": run_tp, "torch CUDA eager": torch_step,
                       "hand-written jax.jit step": mlp_step.jax_step()}, repeats=60, inner=5, warmup=10)
    report("MLP 784-256-256-10 SGD+momentum step, batch 128 (median)", med, "torch CUDA eager")


def compile_case(torch, tp):
    sys.argv.append("--plain")  # compile_step reads its variant at import
    import compile_step as cs

    rng = np.random.default_rng(0)
    x_np, y_np = rng.standard_normal((cs.BATCH, 784)).astype(np.float32), rng.integers(0, 10, cs.BATCH)
    x, y = tp.tensor(x_np), tp.tensor(y_np)
    cases, losses = {}, []
    for name, donate in (("tp.compile", False), ("tp.compile(donate_state)", True)):
        model = cs.make_model()
        compiled = tp.compile(cs.tapeflow_step_fn(model, tp.optim.SGD(model.parameters(), lr=cs.LR)),
                              donate_state=donate)
        losses.append([compiled(x, y).item() for _ in range(3)])
        params = list(model.parameters())
        cases[name] = (lambda c, ps: lambda: jax.block_until_ready([c(x, y)._data, *(p._data for p in ps)]))(
            compiled, params)
        cases[name + ", dispatch only"] = (lambda c: lambda: c(x, y))(compiled)
    xj, yj = jax.numpy.asarray(x_np), jax.numpy.asarray(y_np)
    for name, with_grads in (("jax.jit(value_and_grad)", False), ("jax.jit, grads returned too", True)):
        ref = cs.make_model()
        state = [[(m.weight._data, m.bias._data) for m in ref if isinstance(m, tp.nn.Linear)]]
        jstep = cs.jax_step_fn(with_grads=with_grads)

        def run(jstep=jstep, state=state):
            state[0], _, loss, *_ = jstep(state[0], None, xj, yj)
            return state[0], loss

        losses.append([float(run()[1]) for _ in range(3)])
        cases[name] = (lambda r: lambda: jax.block_until_ready(r()))(run)
        cases[name + ", dispatch only"] = run
    np.testing.assert_allclose(losses[1:], [losses[0]] * (len(losses) - 1), rtol=1e-4)

    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                 torch.nn.ReLU(), torch.nn.Linear(256, 10))
    topt = torch.optim.SGD(tmodel.parameters(), lr=cs.LR)
    xt, yt = torch.tensor(x_np), torch.tensor(y_np)

    def run_torch():
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tmodel(xt), yt).backward()
        topt.step()
        torch.cuda.synchronize()

    cases["torch CUDA eager"] = run_torch
    med = interleaved(cases, repeats=80, warmup=5)
    report("MLP plain-SGD step, batch 128 (median; 'dispatch only': the call returns before the step is done)",
           med, "jax.jit(value_and_grad)")


def first_steps() -> None:
    init = ("import time; t0 = time.perf_counter(); import jax, {lib}; {setup}; {lib}.ones(1).sum().item(); "
            "print(time.perf_counter() - t0)")
    setups = {"tapeflow": "pass", "torch": "torch.set_default_device('cuda')"}
    for lib, setup in setups.items():
        out = subprocess.run([sys.executable, "-c", init.format(lib=lib, setup=setup)], check=True, capture_output=True)
        print(f"  {lib:9s} import and first op on the GPU: {float(out.stdout.decode().split()[-1]):6.2f} s")
    code = ("import time; t0 = time.perf_counter(); import sys; sys.path.insert(0, 'benchmarks'); import gpt_step, {lib}; "
            "{setup}; s = gpt_step.build({lib}); s(); s(); print(time.perf_counter() - t0)")
    with tempfile.TemporaryDirectory() as cache:  # (an empty compilation cache: the first run compiles everything)
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=cache)
        for run in ("first run, empty cache", "second run"):
            for lib, setup in setups.items():
                t = time.perf_counter()
                subprocess.run([sys.executable, "-c", code.format(lib=lib, setup=setup)], check=True,
                               capture_output=True, env=env)
                print(f"  {lib:9s} ({run}) process start -> end of GPT step 2: {time.perf_counter() - t:6.2f} s")


def precision(torch, tp) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((512, 512)).astype(np.float32), rng.standard_normal((512, 512)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    err = lambda r: float(np.abs(r - exact).max() / np.abs(exact).max())  # noqa: E731
    print("float32 512x512 matrix product, max error relative to float64:")
    print(f"  tapeflow   {err((tp.tensor(a) @ tp.tensor(b)).cpu().numpy()):.2e}")
    print(f"  torch CUDA {err((torch.tensor(a) @ torch.tensor(b)).cpu().numpy()):.2e}")
    print(f"  jnp.matmul {err(np.asarray(jax.numpy.asarray(a) @ jax.numpy.asarray(b))):.2e}")


def main() -> None:
    torch = need_gpu()
    import tapeflow as tp

    if "--precision" in sys.argv:
        precision(torch, tp)
    if "--first" in sys.argv:
        first_steps()
        return
    for case in (chain_case, gpt_case, mlp_case, compile_case):
        case(torch, tp)


if __name__ == "__main__":
    main()
