"""Mixing tapeflow and JAX.

1. Per-example gradients: a tapeflow loss turned into a JAX function with
   `tp.interop.to_jax`, differentiated with `jax.grad` and vectorised over the
   batch with `jax.vmap` (checked against a Python loop of `.backward()` calls).
2. A JAX function used as a differentiable op inside eager tapeflow code.
3. An optax optimizer training a tapeflow model through `to_equinox`.

Run: python examples/mix_with_jax.py
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import tapeflow as tp
from tapeflow import nn


def per_example_gradients():
    tp.manual_seed(0)
    model = nn.Linear(5, 1)
    x, y = tp.randn(8, 5), tp.randn(8, 1)

    def loss(w, b, xi, yi):  # tapeflow code: ops on Tensors
        return ((xi @ w.t() + b - yi) ** 2).mean()

    grad_fn = jax.vmap(jax.grad(tp.interop.to_jax(loss)), in_axes=(None, None, 0, 0))
    w, b = tp.interop.to_jax([model.weight, model.bias])
    per_example = grad_fn(w, b, x._data[:, None, :], y._data[:, None, :])

    # The same, one example at a time with the tape.
    for i in range(8):
        model.zero_grad()
        loss(model.weight, model.bias, x[i:i + 1], y[i:i + 1]).backward()
        np.testing.assert_allclose(np.asarray(per_example[i]), model.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    norms = jnp.linalg.norm(per_example.reshape(8, -1), axis=1)
    print("per-example gradient norms:", np.round(np.asarray(norms), 3))


def jax_op_in_eager_code():
    @tp.interop.from_jax
    def gelu_tanh(x):
        return jax.nn.gelu(x, approximate=True)

    x = tp.linspace(-2, 2, 5, requires_grad=True)
    y = gelu_tanh(x)
    y.sum().backward()
    print("JAX op in eager code:", y.grad_fn.name(), "grad", x.grad)


def optax_training():
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    x = tp.randn(256, 2)
    y = (x[:, :1] * x[:, 1:]).sin()

    net = tp.interop.to_equinox(model)
    tx = optax.adam(1e-2)
    opt_state = tx.init(eqx.filter(net, eqx.is_array))

    @eqx.filter_jit
    def step(net, opt_state, xb, yb):
        loss, grads = eqx.filter_value_and_grad(lambda n: jnp.mean((n(xb) - yb) ** 2))(net)
        updates, opt_state = tx.update(grads, opt_state, eqx.filter(net, eqx.is_array))
        return eqx.apply_updates(net, updates), opt_state, loss

    for i in range(301):
        net, opt_state, loss = step(net, opt_state, x._data, y._data)
        if i % 100 == 0:
            print(f"optax step {i}: loss {float(loss):.4f}")
    net.to_tapeflow()  # write the trained arrays back into the tapeflow model
    final = nn.functional.mse_loss(model(x), y).item()
    print(f"tapeflow model after optax training: loss {final:.4f}")
    return final


if __name__ == "__main__":
    per_example_gradients()
    jax_op_in_eager_code()
    optax_training()
