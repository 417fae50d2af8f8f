"""One function, every way of differentiating it, the same numbers.

A small loss with kinks and ties in it (relu and abs at 0, a clamp bound, a
tied max, a detached factor, a no_grad block and a gradient hook) is
differentiated on the tape, with tapeflow.func, with the functional API, with
jax.grad / jax.jit of tp.interop.to_jax, inside tp.compile, and to second
order. Every path gives the tape's gradient, which is
PyTorch's: the op table's derivative rules are the ones JAX uses too. Random
ops under tp.func.vmap follow PyTorch's `randomness` modes, and a compiled
model's output is differentiated like an eager one's.

Run: python examples/one_semantics.py
"""

import jax
import jax.numpy as jnp
import numpy as np

import tapeflow as tp
import tapeflow.nn.functional as F


def loss(x):
    h = F.relu(x) + x.abs() + x.clamp(-1.0, 1.0)  # kinks at 0 and at the clamp bounds
    h.register_hook(lambda g: g * 2)  # a hook: doubles the gradient reaching h
    with tp.no_grad():
        scale = x.max()  # a tie (two elements equal 1) inside no_grad: no gradient through it
    return (h * h).sum() * scale + x.max() * 3 + (x * x.detach()).sum()


def compiled_gradient(x0):
    x = tp.tensor(x0, requires_grad=True)

    @tp.compile
    def step():
        x.grad = None
        loss(x).backward()
        return x.grad

    step()
    return step().numpy()


def main():
    x0 = np.array([0.0, 1.0, -1.0, 1.0, -2.0])
    x = tp.tensor(x0, requires_grad=True)
    loss(x).backward()
    tape = x.grad.numpy()
    paths = {
        "tp.func.grad": tp.func.grad(loss)(tp.tensor(x0)).numpy(),
        "autograd.functional.vjp": tp.autograd.functional.vjp(loss, tp.tensor(x0))[1].numpy(),
        "jax.grad(to_jax(loss))": np.asarray(jax.grad(tp.interop.to_jax(loss))(jnp.asarray(x0))),
        "jax.jit(jax.grad(...))": np.asarray(jax.jit(jax.grad(tp.interop.to_jax(loss)))(jnp.asarray(x0))),
        "tp.compile": compiled_gradient(x0),
    }
    print(f"{'path':<26} gradient")
    print(f"{'tape (.backward())':<26} {np.round(tape, 4)}")
    for name, g in paths.items():
        np.testing.assert_allclose(g, tape, rtol=1e-12, atol=1e-12, err_msg=name)
        print(f"{name:<26} {np.round(g, 4)}")

    # Second order: the hook fires again in the second backward pass, as in PyTorch, on every path.
    hess = tp.autograd.functional.hessian(loss, tp.tensor(x0)).numpy()
    x = tp.tensor(x0, requires_grad=True)
    (g,) = tp.autograd.grad(loss(x), x, create_graph=True)
    rows = np.stack([tp.autograd.grad(g[i], x, retain_graph=True)[0].numpy() for i in range(x0.size)])
    np.testing.assert_allclose(rows, hess, rtol=1e-12, atol=1e-12)
    jax_hess = jax.jacrev(jax.jacrev(tp.interop.to_jax(loss)))(jnp.asarray(x0))
    np.testing.assert_allclose(np.asarray(jax_hess), hess, rtol=1e-12, atol=1e-12)
    print("Hessian diagonal (double backward = functional.hessian = jax.jacrev(jax.jacrev)):",
          np.round(np.diag(hess), 4))
    print("every path agrees with the tape")

    # Random ops under tp.func.vmap follow PyTorch's `randomness`: refused by default, one draw for the
    # batch with "same", one per element with "different" (here: a dropout mask per example).
    batch = tp.ones(4, 6)
    try:
        tp.func.vmap(lambda r: F.dropout(r, 0.5))(batch)
    except RuntimeError as e:
        print("vmap, default randomness:", str(e).split(".")[0])
    per_example = tp.func.vmap(lambda r: F.dropout(r, 0.5), randomness="different")(batch)
    shared = tp.func.vmap(lambda r: F.dropout(r, 0.5), randomness="same")(batch)
    assert bool((shared == shared[0]).all())
    print("distinct dropout masks with 'different':", len({tuple(m.tolist()) for m in per_example}), "of 4")

    # A compiled model (`torch.compile(model)` in a PyTorch program) keeps eager semantics: its loss is
    # differentiated outside it (a forward whose outputs need history runs eagerly, with adaptive eager).
    tp.manual_seed(0)
    net = tp.nn.Sequential(tp.nn.Linear(5, 8), tp.nn.ReLU(), tp.nn.Linear(8, 1)).double()
    compiled = tp.compile(net)
    inputs = tp.tensor(np.stack([x0, -x0, x0 ** 2]))
    compiled(inputs).square().mean().backward()
    outside = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    net(inputs).square().mean().backward()
    for a, p in zip(outside, net.parameters()):
        np.testing.assert_allclose(a.numpy(), p.grad.numpy(), rtol=1e-12)
    print("compiled model:", type(compiled).__name__, "- gradients through its output equal the eager ones;",
          "state_dict keys start with", next(iter(compiled.state_dict())).split(".")[0])


if __name__ == "__main__":
    main()
