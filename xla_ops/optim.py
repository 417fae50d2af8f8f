"""Fused optimizer updates: one XLA call per parameter and step.

Each update takes the parameter, its gradient and its state (buffers and the
step counter) and returns their new values; the caller writes them back in
place. Learning rates and step counters are traced (a scheduler changing the
rate does not recompile, and no step reads a value back to the host); the
other hyper-parameters are static.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._op import op

__all__ = ["sgd_update", "sgd_update_many", "adam_update", "rmsprop_update"]


def _sgd(p, g, buf, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
         first=False):
    d = -g if maximize else g
    if weight_decay:
        d = d + weight_decay * p
    if momentum:
        buf = d if first else momentum * buf + (1 - dampening) * d
        d = d + momentum * buf if nesterov else buf
    return p - lr * d, buf


def _adam(p, g, m, v, vmax, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, decoupled=False,
          amsgrad=False, maximize=False):
    step = step + 1
    # Bias corrections in double precision, then used as scalars of the parameter's dtype (as PyTorch does).
    t = step.astype(jnp.float64)
    step_size = (lr / (1 - beta1 ** t)).astype(p.dtype)
    bias2_sqrt = jnp.sqrt(1 - beta2 ** t).astype(p.dtype)
    g = -g if maximize else g
    if weight_decay:
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    m = m + (g - m) * (1 - beta1)
    v = v * beta2 + (1 - beta2) * g * g
    if amsgrad:
        vmax = jnp.maximum(vmax, v)
        denom = jnp.sqrt(vmax) / bias2_sqrt + eps
    else:
        denom = jnp.sqrt(v) / bias2_sqrt + eps
    return p - step_size * (m / denom), m, v, vmax, step


def _rmsprop(p, g, sq, gavg, buf, step, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
             maximize=False):
    step = step + 1
    g = -g if maximize else g
    if weight_decay:
        g = g + weight_decay * p
    sq = alpha * sq + (1 - alpha) * g * g
    if centered:
        gavg = gavg + (g - gavg) * (1 - alpha)
        avg = jnp.sqrt(sq - gavg * gavg) + eps
    else:
        avg = jnp.sqrt(sq) + eps
    if momentum:
        buf = momentum * buf + g / avg
        return p - lr * buf, sq, gavg, buf, step
    return p - lr * (g / avg), sq, gavg, buf, step


def _sgd_many(*arrays, n, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
              first=None):
    """`n` SGD updates in one program: `arrays` = n params, n grads, n buffers, lr.

    Returns the n new params followed by the n new buffers.
    """
    ps, gs, bufs, lr = arrays[:n], arrays[n:2 * n], arrays[2 * n:3 * n], arrays[3 * n]
    first = first or (False,) * n
    outs = [_sgd(p, g, b, lr, momentum, dampening, weight_decay, nesterov, maximize, f)
            for p, g, b, f in zip(ps, gs, bufs, first)]
    return tuple(o[0] for o in outs) + tuple(o[1] for o in outs)


sgd_update = op("sgd_update", _sgd, differentiable=False)
# One XLA call for a whole parameter group (PyTorch's "foreach" path): fewer dispatches per step.
sgd_update_many = op("sgd_update_many", _sgd_many, differentiable=False)
adam_update = op("adam_update", _adam, differentiable=False)
rmsprop_update = op("rmsprop_update", _rmsprop, differentiable=False)
