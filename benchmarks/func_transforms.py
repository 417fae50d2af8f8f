"""`tp.func` transforms called repeatedly vs hand-written `jax.jit` of the same JAX transform.

f(x) = sum(softplus(A x)) + 0.5 * |x|^2 with A of shape (128, 128), float32 (as in hessian.py), and a
small two-layer network for per-example gradients (`vmap(grad)`, batch 64). The tapeflow lines call the
transform the way `torch.func` code does: `tp.func.hessian(f)(x)` builds the wrapper anew each call;
"(wrapper kept)" builds it once. The JAX baselines compute the same maths (PyTorch's softplus, with its
threshold). Every case is timed in the same process, interleaved, blocking on the result.

Run: python benchmarks/func_transforms.py
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _timing import interleaved, report

import tapeflow as tp
import tapeflow.nn.functional as TF

N = 128
B, D, H = 64, 32, 64


def softplus_torch(z):  # PyTorch's definition (beta=1, threshold=20), which tapeflow follows
    return jnp.where(z > 20.0, z, jnp.logaddexp(z, 0.0))


def main() -> None:
    rng = np.random.default_rng(0)
    a_np = (rng.normal(size=(N, N)) / np.sqrt(N)).astype(np.float32)
    x_np = rng.normal(size=N).astype(np.float32)
    a_tp, x_tp = tp.tensor(a_np), tp.tensor(x_np)
    a_j, x_j = jnp.asarray(a_np), jnp.asarray(x_np)

    def f_tp(x):
        return TF.softplus(a_tp @ x).sum() + 0.5 * (x * x).sum()

    def f_j(x):
        return softplus_torch(a_j @ x).sum() + 0.5 * (x * x).sum()

    hess_j = jax.jit(jax.hessian(f_j))
    grad_j = jax.jit(jax.grad(f_j))
    hess_kept = tp.func.hessian(f_tp)
    np.testing.assert_allclose(tp.func.hessian(f_tp)(x_tp).numpy(), np.asarray(hess_j(x_j)), rtol=1e-4, atol=1e-5)

    hess = {
        "tp.func.hessian(f)(x)": lambda: tp.func.hessian(f_tp)(x_tp)._data.block_until_ready(),
        "  (wrapper kept)": lambda: hess_kept(x_tp)._data.block_until_ready(),
        "jax.jit(jax.hessian)": lambda: hess_j(x_j).block_until_ready(),
    }
    grad = {
        "tp.func.grad(f)(x)": lambda: tp.func.grad(f_tp)(x_tp)._data.block_until_ready(),
        "jax.jit(jax.grad)": lambda: grad_j(x_j).block_until_ready(),
    }

    # Per-example gradients of a small network with respect to its parameters.
    w1_np = (rng.normal(size=(H, D)) / np.sqrt(D)).astype(np.float32)
    w2_np = (rng.normal(size=(1, H)) / np.sqrt(H)).astype(np.float32)
    xb_np = rng.normal(size=(B, D)).astype(np.float32)
    yb_np = rng.normal(size=(B, 1)).astype(np.float32)
    params_tp = {"w1": tp.tensor(w1_np), "w2": tp.tensor(w2_np)}
    xb_tp, yb_tp = tp.tensor(xb_np), tp.tensor(yb_np)

    def loss_tp(p, x, y):
        return ((p["w2"] @ (p["w1"] @ x).tanh() - y) ** 2).sum()

    def loss_j(p, x, y):
        return ((p["w2"] @ jnp.tanh(p["w1"] @ x) - y) ** 2).sum()

    params_j = {"w1": jnp.asarray(w1_np), "w2": jnp.asarray(w2_np)}
    xb_j, yb_j = jnp.asarray(xb_np), jnp.asarray(yb_np)
    per_ex_j = jax.jit(jax.vmap(jax.grad(loss_j), in_axes=(None, 0, 0)))
    got = tp.func.vmap(tp.func.grad(loss_tp), in_dims=(None, 0, 0))(params_tp, xb_tp, yb_tp)
    np.testing.assert_allclose(got["w1"].numpy(), np.asarray(per_ex_j(params_j, xb_j, yb_j)["w1"]), rtol=1e-4, atol=1e-5)
    per_ex = {
        "tp.func.vmap(grad(loss))": lambda: tp.func.vmap(tp.func.grad(loss_tp), in_dims=(None, 0, 0))(
            params_tp, xb_tp, yb_tp)["w1"]._data.block_until_ready(),
        "jax.jit(vmap(grad))": lambda: per_ex_j(params_j, xb_j, yb_j)["w1"].block_until_ready(),
    }

    report("Hessian, n = 128 (median per call)", interleaved(hess, repeats=40), "jax.jit(jax.hessian)")
    report("Gradient, n = 128 (median per call)", interleaved(grad, repeats=40), "jax.jit(jax.grad)")
    report(f"Per-example gradients, batch {B}, {D} -> {H} -> 1 (median per call)", interleaved(per_ex, repeats=40),
           "jax.jit(vmap(grad))")


if __name__ == "__main__":
    main()
