"""Fused optimizer updates: one XLA call per parameter and step.

Each update takes the parameter, its gradient and its state (buffers and the
step counter) and returns their new values; the caller writes them back in
place. Learning rates and step counters are traced (a scheduler changing the
rate does not recompile, and no step reads a value back to the host); the
other hyper-parameters are static.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ._op import op

__all__ = ["sgd_update", "sgd_update_many", "adam_update", "rmsprop_update", "adagrad_update", "adadelta_update",
           "adamax_update", "nadam_update", "radam_update", "asgd_update", "rprop_update",
           "adafactor_update"]


def _as_real(update):
    """`update` applied to a complex parameter as PyTorch's adaptive optimizers apply it: on the real view
    (`view_as_real`: real and imaginary parts as independent reals, so squares are never complex), its state
    likewise; the results are complex again."""
    @functools.wraps(update)
    def on_real_view(p, *rest, **params):
        if not jnp.iscomplexobj(p):
            return update(p, *rest, **params)
        view = tuple(p.shape) + (2,)
        outs = update(*(_real_view(a) for a in (p, *rest)), **params)
        return tuple(jax.lax.complex(o[..., 0], o[..., 1]) if o is not None and tuple(o.shape) == view else o
                     for o in outs)
    return on_real_view


def _real_view(a):
    return jnp.stack([a.real, a.imag], -1) if jnp.iscomplexobj(a) else a


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
    p, g = _decay(p, g, lr, weight_decay, decoupled, maximize)
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


sgd_update = op("sgd_update", _sgd, differentiable=False, opmath=False)
# One XLA call for a whole parameter group (PyTorch's "foreach" path): fewer dispatches per step.
sgd_update_many = op("sgd_update_many", _sgd_many, differentiable=False, opmath=False)
adam_update = op("adam_update", _as_real(_adam), differentiable=False, opmath=False)
rmsprop_update = op("rmsprop_update", _as_real(_rmsprop), differentiable=False, opmath=False)


# The updates below follow PyTorch's single-tensor algorithms; `step` counts on the device and the
# bias corrections are computed in double precision, then used in the parameter's dtype.
def _decay(p, g, lr, weight_decay, decoupled, maximize):
    g = -g if maximize else g
    if weight_decay:
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    return p, g


def _adagrad(p, g, acc, step, lr, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False):
    step = step + 1
    p, g = _decay(p, g, lr, weight_decay, False, maximize)
    clr = (lr / (1 + (step.astype(jnp.float64) - 1) * lr_decay)).astype(p.dtype)
    acc = acc + g * g
    return p - clr * (g / (jnp.sqrt(acc) + eps)), acc, step


def _adadelta(p, g, sq, acc_delta, step, lr, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    step = step + 1
    p, g = _decay(p, g, lr, weight_decay, False, maximize)
    sq = sq * rho + (1 - rho) * g * g
    delta = jnp.sqrt(acc_delta + eps) / jnp.sqrt(sq + eps) * g
    acc_delta = acc_delta * rho + (1 - rho) * delta * delta
    return p - lr * delta, sq, acc_delta, step


def _adamax(p, g, m, u, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, maximize=False):
    step = step + 1
    p, g = _decay(p, g, lr, weight_decay, False, maximize)
    m = m + (g - m) * (1 - beta1)
    u = jnp.maximum(u * beta2, jnp.abs(g) + eps)
    clr = (lr / (1 - beta1 ** step.astype(jnp.float64))).astype(p.dtype)
    return p - clr * (m / u), m, u, step


def _nadam(p, g, m, v, mu_product, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
           momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    step = step + 1
    t = step.astype(jnp.float64)
    p, g = _decay(p, g, lr, weight_decay, decoupled_weight_decay, maximize)
    mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    mu_product = mu_product * mu.astype(mu_product.dtype)  # kept in float32, as PyTorch keeps it
    prod = mu_product.astype(jnp.float64)
    m = m + (g - m) * (1 - beta1)
    v = v * beta2 + (1 - beta2) * g * g
    denom = jnp.sqrt(v / (1 - beta2 ** t).astype(p.dtype)) + eps
    p = p - (lr * (1 - mu) / (1 - prod)).astype(p.dtype) * (g / denom)
    p = p - (lr * mu_next / (1 - prod * mu_next)).astype(p.dtype) * (m / denom)
    return p, m, v, mu_product, step


def _radam(p, g, m, v, step, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
           maximize=False):
    step = step + 1
    t = step.astype(jnp.float64)
    p, g = _decay(p, g, lr, weight_decay, decoupled_weight_decay, maximize)
    m = m + (g - m) * (1 - beta1)
    v = v * beta2 + (1 - beta2) * g * g
    bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * t * beta2 ** t / bc2
    # The rectified step once the variance estimate is tractable (rho_t > 5), plain momentum before.
    rect = jnp.sqrt(jnp.maximum((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0))
    adaptive = (jnp.sqrt(bc2) / 1).astype(p.dtype) / (jnp.sqrt(v) + eps)
    scale = (lr / bc1).astype(p.dtype)
    upd = jnp.where(rho_t > 5, m * scale * adaptive * rect.astype(p.dtype), m * scale)
    return p - upd, m, v, step


adagrad_update = op("adagrad_update", _as_real(_adagrad), differentiable=False, opmath=False)
adadelta_update = op("adadelta_update", _as_real(_adadelta), differentiable=False, opmath=False)
adamax_update = op("adamax_update", _as_real(_adamax), differentiable=False, opmath=False)
nadam_update = op("nadam_update", _as_real(_nadam), differentiable=False, opmath=False)
radam_update = op("radam_update", _as_real(_radam), differentiable=False, opmath=False)


def _asgd(p, g, ax, eta, mu, step, lr, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    step = step + 1
    p, g = _decay(p, g, lr, weight_decay, False, maximize)
    e = eta.astype(jnp.float64)
    p = p * (1 - lambd * e).astype(p.dtype) - e.astype(p.dtype) * g
    # NOTE: PyTorch copies the iterate while mu is 1 (before t0) rather than averaging with weight 1.
    ax = jnp.where(mu == 1, p, ax + (p - ax) * mu.astype(p.dtype))
    t = step.astype(jnp.float64)
    eta = (lr / (1 + lambd * lr * t) ** alpha).astype(eta.dtype)
    mu = (1 / jnp.maximum(1.0, t - t0)).astype(mu.dtype)
    return p, ax, eta, mu, step


asgd_update = op("asgd_update", _as_real(_asgd), differentiable=False, opmath=False)


def _rprop(p, g, prev, step_size, step, lr, etaminus=0.5, etaplus=1.2, step_size_min=1e-6, step_size_max=50.0,
           maximize=False):
    """Rprop: per-coordinate step sizes grown while the gradient keeps its sign, shrunk (and the step skipped)
    when it flips; `step_size` starts at `lr` on the first step."""
    if maximize:
        g = -g
    step_size = jnp.where(step == 0, jnp.asarray(lr, p.dtype), step_size)
    s = jnp.sign(g * prev)
    factor = jnp.where(s > 0, etaplus, jnp.where(s < 0, etaminus, 1.0)).astype(p.dtype)
    step_size = jnp.clip(step_size * factor, step_size_min, step_size_max)
    g = jnp.where(s < 0, 0, g)
    return p - jnp.sign(g) * step_size, g, step_size, step + 1


rprop_update = op("rprop_update", _as_real(_rprop), differentiable=False, opmath=False)


# -- Adafactor ---------------------------------------------------------------------------------------------
# Each tensor operation of PyTorch's algorithm is rounded to the parameter's dtype here as PyTorch rounds it; a
# float16/bfloat16 parameter's arithmetic is computed in float32 first (PyTorch's CPU "opmath" type), and
# `_in(x, ct)` / `.astype(dt)` mark those conversions (no-ops for float32 and float64).


def _af_opmath(dtype):
    return jnp.float32 if dtype in (jnp.float16, jnp.bfloat16) else dtype


def _in(x, ct):
    return x.astype(ct)


def _lerp(start, end, weight):
    # PyTorch's lerp with a scalar weight: `start + w * (end - start)` for |w| < 0.5, else measured from `end`.
    s, e = _in(start, weight.dtype), _in(end, weight.dtype)
    small = jnp.abs(weight) < 0.5
    return (jnp.where(small, s, e) + jnp.where(small, weight, weight - 1) * (e - s)).astype(start.dtype)


def _rsqrt(x, ct):
    # `1 / sqrt(x)`, both results rounded, as PyTorch's `rsqrt` (XLA would fuse the pair into its own `rsqrt`,
    # whose last bit differs in about a third of float32 values)
    return (1 / jax.lax.optimization_barrier(jnp.sqrt(_in(x, ct)))).astype(x.dtype)


def _norm(a, ct, axis=None):
    # `torch.norm`: accumulated in the opmath type, the result rounded to `a`'s dtype
    return jnp.sqrt(jnp.sum(jnp.square(_in(a, ct)), axis=axis, keepdims=axis is not None)).astype(a.dtype)


def _rms(a, ct):
    # `a.norm(2).item() / sqrt(numel)`: the quotient in double precision (a host float in PyTorch)
    return _norm(a, ct).astype(jnp.float64) / (a.size ** 0.5)


def _mean_square(g, ct, axis):
    # `norm(g, dim=axis, keepdim=True).square_().div_(g.size(axis))`
    n = _in(_norm(g, ct, axis), ct)
    return (_in((n * n).astype(g.dtype), ct) / g.shape[axis]).astype(g.dtype)


def _adafactor(p, g, row_var, col_var, variance, step, lr, beta2_decay=-0.8, eps1=1e-3, eps2=1e-3, d=1.0,
               weight_decay=0.0, maximize=False, tensor_lr=False):
    dt, ct = p.dtype, _af_opmath(p.dtype)
    step = step + 1
    t = step.astype(jnp.float64)
    g = -g if maximize else g
    weight = (t ** beta2_decay).astype(ct)  # 1 - beta2_t
    limit = 1 / jnp.sqrt(t)
    scale = jnp.maximum(eps2, _rms(p, ct))  # (the parameter before its weight decay)
    if tensor_lr:
        # PyTorch keeps a tensor `lr` a tensor: `rho = min(lr, 1 / sqrt(t))` is then `lr` itself unless the bound
        # is smaller, and `alpha`, the decay factor and the step's scale are computed in `lr`'s dtype.
        lr = jnp.reshape(lr, ())
        use_limit = limit < lr.astype(jnp.float64)
        alpha = jnp.where(use_limit, scale * limit, 0.0)
        alpha_in_lr = scale.astype(lr.dtype) * lr
        decay = (1 - lr * jnp.asarray(weight_decay, lr.dtype)).astype(ct)
    else:
        lr = jnp.asarray(lr, jnp.float64)
        alpha = scale * jnp.minimum(lr, limit)
        decay = (1 - lr * weight_decay).astype(ct)
    if weight_decay:
        p = (_in(p, ct) * decay).astype(dt)
    if g.ndim > 1:
        row_var = _lerp(row_var, _mean_square(g, ct, -1), weight)
        col_var = _lerp(col_var, _mean_square(g, ct, -2), weight)
        row_mean = jnp.mean(_in(row_var, ct), axis=-2, keepdims=True).astype(dt)
        row_mean = jnp.maximum(row_mean, jnp.asarray(eps1, dt))
        outer = (_in(row_var, ct) * _in(col_var, ct)).astype(dt)
        estimate = (_in(outer, ct) / _in(row_mean, ct)).astype(dt)
    else:
        variance = _lerp(variance, (_in(g, ct) * _in(g, ct)).astype(dt), weight)
        estimate = variance
    update = _rsqrt(jnp.maximum(estimate, jnp.asarray(eps1 * eps1, dt)), ct)
    update = (_in(update, ct) * _in(g, ct)).astype(dt)
    denom = jnp.maximum(1.0, _rms(update, ct) / d)
    step_size = -alpha / denom
    if tensor_lr:
        step_size = jnp.where(use_limit, step_size, (-alpha_in_lr / denom.astype(lr.dtype)).astype(jnp.float64))
    # (`add_(update, alpha=...)`: PyTorch rounds the scalar `alpha` to the parameter's dtype)
    new_p = (_in(p, ct) + _in(step_size.astype(dt), ct) * _in(update, ct)).astype(dt)
    return new_p, row_var, col_var, variance, step


adafactor_update = op("adafactor_update", _adafactor, differentiable=False, opmath=False)
