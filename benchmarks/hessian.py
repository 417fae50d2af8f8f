"""Hessian and Jacobian of eager-style code: tapeflow's `autograd.functional` vs a hand-written
`jax.jit(jax.hessian)` / `jax.jit(jax.jacrev)` vs `torch.autograd.functional`.

f(x) = sum(softplus(A x)) + 0.5 * |x|^2 and g(x) = softplus(A x) + x, with A of shape (128, 128), float32.
The JAX baseline computes the same maths as tapeflow (PyTorch's softplus, with its threshold); a second
JAX line uses `jax.nn.softplus` (no threshold branch) for reference. Every case is timed in the same
process, interleaved, blocking on the result (JAX runs asynchronously).

Run: python benchmarks/hessian.py
"""

from __future__ import annotations

import os

# PyTorch's OpenMP workers spin after each call and would steal the cores from whichever case runs
# next in the interleaved loop; let them sleep instead (does not slow PyTorch's own calls here).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _timing import interleaved, report  # noqa: E402

import tapeflow as tp  # noqa: E402
import tapeflow.nn.functional as TF  # noqa: E402
from tapeflow.autograd import functional as AF  # noqa: E402

N = 128


def main() -> None:
    rng = np.random.default_rng(0)
    a_np = (rng.normal(size=(N, N)) / np.sqrt(N)).astype(np.float32)
    x_np = rng.normal(size=N).astype(np.float32)

    a_tp, x_tp = tp.tensor(a_np), tp.tensor(x_np)

    def f_tp(x):
        return TF.softplus(a_tp @ x).sum() + 0.5 * (x * x).sum()

    def g_tp(x):
        return TF.softplus(a_tp @ x) + x

    a_j, x_j = jnp.asarray(a_np), jnp.asarray(x_np)

    def softplus_torch(z):  # PyTorch's definition (beta=1, threshold=20), which tapeflow follows
        return jnp.where(z > 20.0, z, jnp.logaddexp(z, 0.0))

    hess_j = jax.jit(jax.hessian(lambda x: softplus_torch(a_j @ x).sum() + 0.5 * (x * x).sum()))
    hess_jnn = jax.jit(jax.hessian(lambda x: jax.nn.softplus(a_j @ x).sum() + 0.5 * (x * x).sum()))
    jac_j = jax.jit(jax.jacrev(lambda x: softplus_torch(a_j @ x) + x))
    jac_jnn = jax.jit(jax.jacrev(lambda x: jax.nn.softplus(a_j @ x) + x))

    hess = {
        "tapeflow functional.hessian": lambda: AF.hessian(f_tp, x_tp)._data.block_until_ready(),
        "jax.jit(jax.hessian)": lambda: hess_j(x_j).block_until_ready(),
        "  same, jax.nn.softplus": lambda: hess_jnn(x_j).block_until_ready(),
    }
    jac = {
        "tapeflow functional.jacobian": lambda: AF.jacobian(g_tp, x_tp)._data.block_until_ready(),
        "jax.jit(jax.jacrev)": lambda: jac_j(x_j).block_until_ready(),
        "  same, jax.nn.softplus": lambda: jac_jnn(x_j).block_until_ready(),
    }
    try:
        import torch

        a_t, x_t = torch.tensor(a_np), torch.tensor(x_np)

        def f_t(x):
            return torch.nn.functional.softplus(a_t @ x).sum() + 0.5 * (x * x).sum()

        def g_t(x):
            return torch.nn.functional.softplus(a_t @ x) + x

        hess["torch functional.hessian"] = lambda: torch.autograd.functional.hessian(f_t, x_t)
        hess["torch hessian(vectorize=True)"] = lambda: torch.autograd.functional.hessian(f_t, x_t, vectorize=True)
        jac["torch functional.jacobian"] = lambda: torch.autograd.functional.jacobian(g_t, x_t)
        jac["torch jacobian(vectorize=True)"] = lambda: torch.autograd.functional.jacobian(g_t, x_t, vectorize=True)
    except ImportError:
        torch = None

    # Same numbers first.
    np.testing.assert_allclose(np.asarray(AF.hessian(f_tp, x_tp)._data), np.asarray(hess_j(x_j)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(AF.jacobian(g_tp, x_tp)._data), np.asarray(jac_j(x_j)), rtol=1e-4, atol=1e-5)
    if torch:
        np.testing.assert_allclose(np.asarray(AF.hessian(f_tp, x_tp)._data), hess["torch functional.hessian"]().numpy(),
                                   rtol=1e-4, atol=1e-5)

    # JAX cases and PyTorch cases are timed in separate interleaved groups: PyTorch's thread pool
    # disturbs whichever call runs right after it, which would penalise the case that follows.
    for title, cases, base in (("Hessian, n = 128 (median per call)", hess, "jax.jit(jax.hessian)"),
                               ("Jacobian, 128 -> 128 (median per call)", jac, "jax.jit(jax.jacrev)")):
        ours = next(k for k in cases if k.startswith("tapeflow"))
        jax_cases = {k: v for k, v in cases.items() if not k.startswith("torch")}
        report(title + ", vs JAX", interleaved(jax_cases, repeats=60), base)
        if torch:
            torch_cases = {k: v for k, v in cases.items() if k == ours or k.startswith("torch")}
            med = interleaved(torch_cases, repeats=20)
            report(title + ", vs PyTorch", med, ours)
            for k, v in med.items():
                if k.startswith("torch"):
                    print(f"  tapeflow speed-up over {k}: {v / med[ours]:.1f}x")

    # The tape path (what runs for functions with data-dependent Python), for reference.
    slow = {"tapeflow hessian, tape path": lambda: AF.hessian(f_tp, x_tp, create_graph=True)._data.block_until_ready(),
            "jax.jit(jax.hessian)": lambda: hess_j(x_j).block_until_ready()}
    report("Hessian via the tape (create_graph=True), n = 128", interleaved(slow, repeats=3, warmup=1),
           "jax.jit(jax.hessian)")


if __name__ == "__main__":
    main()
