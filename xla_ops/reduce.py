"""Reductions, scans and normalising maps over an axis.

`dim` is always a canonical tuple of non-negative axes (or `None` for all).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ._op import op
from .elementwise import _sign, conj_phase


def _expand(g, shape, dim, keepdim):
    """Broadcast a reduced gradient back to `shape`."""
    if dim is None:
        return jnp.broadcast_to(g.reshape((1,) * len(shape)) if shape else g, shape)
    if not keepdim:
        g = jnp.expand_dims(g, dim)
    return jnp.broadcast_to(g, shape)


def _count(shape, dim):
    n = 1
    for i in (range(len(shape)) if dim is None else dim):
        n *= shape[i]
    return n


# -- sums and means ------------------------------------------------------------
sum = op("sum", lambda x, dtype=None: jnp.sum(x, dtype=dtype),
         lambda g, ans, x, dtype=None: (_expand(g, x.shape, None, False).astype(x.dtype),))
sum_dim = op("sum_dim", lambda x, dim, keepdim=False, dtype=None: jnp.sum(x, axis=dim, keepdims=keepdim, dtype=dtype),
             lambda g, ans, x, dim, keepdim=False, dtype=None: (_expand(g, x.shape, dim, keepdim).astype(x.dtype),),
             node="SumBackward1")
mean = op("mean", lambda x, dtype=None: jnp.mean(x, dtype=dtype),
          lambda g, ans, x, dtype=None: ((_expand(g, x.shape, None, False) / _count(x.shape, None)).astype(x.dtype),))
mean_dim = op("mean_dim", lambda x, dim, keepdim=False, dtype=None: jnp.mean(x, axis=dim, keepdims=keepdim, dtype=dtype),
              lambda g, ans, x, dim, keepdim=False, dtype=None:
              ((_expand(g, x.shape, dim, keepdim) / _count(x.shape, dim)).astype(x.dtype),),
              node="MeanBackward1")
def _own_dtype(x):
    """`x`'s dtype for a sum or product of integers or bools (NumPy's rules would widen `uint8` to `uint64`, bool
    to `int64`; the caller chose the dtype)."""
    return x.dtype if x.dtype.kind in "iub" else None


def _nansum_vjp(g, ans, x, dim=None, keepdim=False):
    # NOTE: PyTorch multiplies the gradient by the mask of non-NaN elements, so an infinite gradient (nanmean over
    # an all-NaN slice divides by a count of 0) gives NaN at the NaNs, not 0. Written as a select of `0 * g`: XLA
    # folds a product with a converted mask into a select that drops the NaN.
    g = _expand(g, x.shape, dim, keepdim)
    return (jnp.where(jnp.isnan(x), 0 * g, g),)


nansum = op("nansum", lambda x, dim=None, keepdim=False: jnp.nansum(x, axis=dim, keepdims=keepdim, dtype=_own_dtype(x)),
            _nansum_vjp, saves=("x",))
prod = op("prod", lambda x: jnp.prod(x, dtype=_own_dtype(x)))
prod_dim = op("prod_dim", lambda x, dim, keepdim=False: jnp.prod(x, axis=dim, keepdims=keepdim, dtype=_own_dtype(x)),
              node="ProdBackward1")


def _var(x, dim=None, correction=1, keepdim=False):
    if _count(x.shape, dim) - correction > 0:
        return jnp.var(x, axis=dim, ddof=correction, keepdims=keepdim)
    # NOTE: PyTorch divides by max(0, N - correction): inf for a spread input, NaN (0/0) for a constant one, where
    # JAX's `ddof >= N` gives NaN throughout.
    return jnp.var(x, axis=dim, keepdims=keepdim) / 0


def _std(x, dim=None, correction=1, keepdim=False):
    return jnp.sqrt(_var(x, dim, correction, keepdim))


def _var_vjp(g, ans, x, dim=None, correction=1, keepdim=False):
    dof = _count(x.shape, dim) - correction
    if dof > 0:
        return jax.vjp(lambda v: _var(v, dim, correction, keepdim), x)[1](g)
    # NOTE: without degrees of freedom PyTorch's rule is g * (inf where x differs from the mean, else NaN) for a
    # full reduction, and (2 / dof) g (x - mean) over dims, where a negative dof gives finite values.
    centered = x - jnp.mean(x, axis=dim, keepdims=True)
    g = _expand(g, x.shape, dim, keepdim)
    if dim is None:
        return (g * jnp.where(centered == 0, jnp.nan, jnp.inf).astype(g.dtype),)
    scale = jnp.inf if dof == 0 else 2.0 / dof
    return ((scale * g * centered).astype(x.dtype),)


def _std_vjp(g, ans, x, dim=None, correction=1, keepdim=False):
    # NOTE: PyTorch's rule: the gradient reaching the variance is g / (2 std), and 0 where std is 0 (a constant
    # input), not the 0/0 of the chain rule.
    g_var = jnp.where(ans == 0, 0, g / jnp.where(ans == 0, 1, 2 * ans)).astype(g.dtype)
    return _var_vjp(g_var, None, x, dim, correction, keepdim)


var = op("var", _var, _var_vjp, saves=("x",))
std = op("std", _std, _std_vjp, saves=("x", "ans"))


def _moments_vjp(spread, spread_vjp):
    """The VJP of `(spread, mean)`: the spread's own rule plus the mean's, for whichever gradients arrived. The
    spread is recomputed from `x` (a multi-output op's saved results carry no history for higher orders)."""
    def vjp(g, ans, x, dim=None, correction=1, keepdim=False):
        g_spread, g_mean = g
        gx = jnp.zeros(x.shape, x.dtype)
        if g_spread is not None:
            gx = gx + spread_vjp(g_spread, spread(x, dim, correction, keepdim), x, dim, correction, keepdim)[0]
        if g_mean is not None:
            gx = gx + (_expand(g_mean, x.shape, dim, keepdim) / _count(x.shape, dim)).astype(x.dtype)
        return (gx,)

    return vjp


# One node for both results, as PyTorch's VarMeanBackward0 / StdMeanBackward0 (a hook on it sees both gradients).
var_mean = op("var_mean", lambda x, dim=None, correction=1, keepdim=False: (
    _var(x, dim, correction, keepdim), jnp.mean(x, axis=dim, keepdims=keepdim)), _moments_vjp(_var, _var_vjp),
    saves=("x",), node="VarMeanBackward0")
std_mean = op("std_mean", lambda x, dim=None, correction=1, keepdim=False: (
    _std(x, dim, correction, keepdim), jnp.mean(x, axis=dim, keepdims=keepdim)), _moments_vjp(_std, _std_vjp),
    saves=("x",), node="StdMeanBackward0")


# -- extrema ---------------------------------------------------------------------
def _even_vjp(g, ans, x, dim=None, keepdim=False):
    # NOTE: amax/amin (and full max/min) share the gradient evenly among ties.
    a = _expand(ans, x.shape, dim, keepdim)
    mask = (x == a).astype(g.dtype)
    count = jnp.sum(mask, axis=dim, keepdims=True)
    return (_expand(g, x.shape, dim, keepdim) * mask / count,)


amax = op("amax", lambda x, dim=None, keepdim=False: jnp.max(x, axis=dim, keepdims=keepdim), _even_vjp,
          saves=("x", "ans"))
amin = op("amin", lambda x, dim=None, keepdim=False: jnp.min(x, axis=dim, keepdims=keepdim), _even_vjp,
          saves=("x", "ans"))
def _ties_vjp(g, ans, x):
    # NOTE: a full max/min/median shares its gradient evenly among the elements equal to the result, the NaNs
    # when the result is NaN (PyTorch's `evenly_distribute_backward`); amax/amin compare only (NaN gets 0/0).
    mask = ((x == ans) | (jnp.isnan(x) & jnp.isnan(ans))).astype(g.dtype)
    return (g * mask / jnp.sum(mask),)


max = op("max", lambda x: jnp.max(x), _ties_vjp, saves=("x", "ans"), node="MaxBackward1")
min = op("min", lambda x: jnp.min(x), _ties_vjp, saves=("x", "ans"), node="MinBackward1")


def _arg_extreme(x, dim, keepdim, largest):
    idx = jnp.argmax(x, axis=dim, keepdims=True) if largest else jnp.argmin(x, axis=dim, keepdims=True)
    val = jnp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, val = jnp.squeeze(idx, dim), jnp.squeeze(val, dim)
    return val, idx.astype(jnp.int64)


def _indexed_vjp(g, ans, x, dim, keepdim=False, **kw):
    # Gradient flows to the element each index picked.
    gv, idx = g[0], ans[1]
    if not keepdim:
        gv, idx = jnp.expand_dims(gv, dim), jnp.expand_dims(idx, dim)
    return (jnp.zeros(x.shape, gv.dtype).at[_grid(idx, dim)].add(gv),)


def _grid(idx, dim):
    """Index tuple that puts `idx` along `dim` and the identity elsewhere."""
    grids = list(jnp.meshgrid(*(jnp.arange(n) for n in idx.shape), indexing="ij", sparse=True))
    grids[dim] = idx
    return tuple(grids)


max_dim = op("max_dim", lambda x, dim, keepdim=False: _arg_extreme(x, dim, keepdim, True), _indexed_vjp,
             saves=("ans",), node="MaxBackward0")
min_dim = op("min_dim", lambda x, dim, keepdim=False: _arg_extreme(x, dim, keepdim, False), _indexed_vjp,
             saves=("ans",), node="MinBackward0")
argmax = op("argmax", lambda x, dim=None, keepdim=False: jnp.argmax(x, axis=dim, keepdims=keepdim).astype(jnp.int64),
            differentiable=False)
argmin = op("argmin", lambda x, dim=None, keepdim=False: jnp.argmin(x, axis=dim, keepdims=keepdim).astype(jnp.int64),
            differentiable=False)
all = op("all", lambda x, dim=None, keepdim=False: jnp.all(x, axis=dim, keepdims=keepdim), differentiable=False)
any = op("any", lambda x, dim=None, keepdim=False: jnp.any(x, axis=dim, keepdims=keepdim), differentiable=False)
count_nonzero = op("count_nonzero", lambda x, dim=None: jnp.count_nonzero(x, axis=dim).astype(jnp.int64),
                   differentiable=False)


def _nonzero_static(x, size, fill_value):
    """The indices of the first `size` nonzero elements of `x` in row-major order, one row each; rows past the
    last nonzero element hold `fill_value` (a static shape: traceable, no host read)."""
    if x.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    idx = jnp.nonzero(x, size=size, fill_value=fill_value)
    return jnp.stack(idx, axis=1).astype(jnp.int64)


nonzero_static = op("nonzero_static", _nonzero_static, differentiable=False)

# -- smooth reductions -------------------------------------------------------------
logsumexp = op("logsumexp", lambda x, dim, keepdim=False: jax.nn.logsumexp(x, axis=dim, keepdims=keepdim),
               lambda g, ans, x, dim, keepdim=False:
               (_expand(g, x.shape, dim, keepdim) * jnp.exp(x - _expand(ans, x.shape, dim, keepdim)),),
               saves=("x", "ans"))


def _norm(x, p=2.0, dim=None, keepdim=False):
    if jnp.iscomplexobj(x) and p != 0:  # the norm of the magnitudes (their derivative is `abs`'s)
        return _norm(jnp.abs(x), p, dim, keepdim)
    if p == 2.0:
        return jnp.sqrt(jnp.sum(x * x, axis=dim, keepdims=keepdim))
    if p == float("inf"):
        return jnp.max(jnp.abs(x), axis=dim, keepdims=keepdim)
    if p == float("-inf"):
        return jnp.min(jnp.abs(x), axis=dim, keepdims=keepdim)
    if p == 0:
        return jnp.sum(x != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    if p == 1:
        return jnp.sum(jnp.abs(x), axis=dim, keepdims=keepdim)
    return jnp.sum(jnp.abs(x) ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


def _norm_vjp(g, ans, x, p=2.0, dim=None, keepdim=False):
    if jnp.iscomplexobj(x) and p != 0:  # through |x|: JAX's convention, d|x| = conj(x / |x|)
        (ga,) = _norm_vjp(g, ans, jnp.abs(x), p, dim, keepdim)
        return (ga * conj_phase(x),)
    g, ans = _expand(g, x.shape, dim, keepdim), _expand(ans, x.shape, dim, keepdim)
    if p == 2.0:
        # NOTE: the subgradient 0 at x == 0, as in PyTorch (JAX would give NaN).
        return (jnp.where(ans == 0, 0, g * x / jnp.where(ans == 0, 1, ans)),)
    if p == 1:
        return (g * _sign(x),)  # (sign(nan) = 0, as PyTorch's)
    if p == 0:
        return (jnp.zeros_like(x),)
    if p in (float("inf"), float("-inf")):
        mask = (jnp.abs(x) == ans).astype(x.dtype)  # (none where the norm is NaN: a zero gradient, as PyTorch's)
        count = jnp.sum(mask, axis=dim, keepdims=True)
        return (g * _sign(x) * mask / jnp.where(count == 0, 1, count),)
    safe = jnp.where(ans == 0, 1, ans)
    return (jnp.where(ans == 0, 0, g * jnp.sign(x) * jnp.abs(x) ** (p - 1) / safe ** (p - 1)),)


norm = op("norm", _norm, _norm_vjp, saves=("x", "ans"), node="LinalgVectorNormBackward0")

# -- scans ----------------------------------------------------------------------------
cumsum = op("cumsum", lambda x, dim: jnp.cumsum(x, axis=dim),
            lambda g, ans, x, dim: (jnp.flip(jnp.cumsum(jnp.flip(g, dim), axis=dim), dim),))
cumprod = op("cumprod", lambda x, dim: jnp.cumprod(x, axis=dim))


def _cum_extreme(x, dim, largest):
    """Running max/min along `dim` and, as PyTorch gives it, the index of the last element equal to it."""
    val = jax.lax.cummax(x, axis=dim) if largest else jax.lax.cummin(x, axis=dim)
    iota = jax.lax.broadcasted_iota(jnp.int64, x.shape, dim)
    hit = (x == val) | (jnp.isnan(x) if jnp.issubdtype(x.dtype, jnp.inexact) else False)
    return val, jax.lax.cummax(jnp.where(hit, iota, -1), axis=dim)


def _cum_extreme_vjp(g, ans, x, dim, **kw):
    # Each running extreme came from the element its index names.
    return (jnp.zeros(x.shape, g[0].dtype).at[_grid(ans[1], dim)].add(g[0]),)


cummax = op("cummax", lambda x, dim: _cum_extreme(x, dim, True), _cum_extreme_vjp, saves=("ans",),
            node="CummaxBackward0")
cummin = op("cummin", lambda x, dim: _cum_extreme(x, dim, False), _cum_extreme_vjp, saves=("ans",),
            node="CumminBackward0")
def _logcumsumexp_vjp(g, ans, x, dim):
    """`grad_i = sum_{j >= i} g_j exp(x_i - ans_j)`, linear in `g` and stable: `exp(x_i - ans_i) * S_i` with
    `S_i = g_i + exp(ans_i - ans_{i+1}) S_{i+1}` (factors at most 1), a reversed scan of affine maps. Right
    where `x` holds infinities (JAX's derivative of the scan is not): PyTorch's values there."""
    nxt = jnp.concatenate([jax.lax.slice_in_dim(ans, 1, None, axis=dim),
                           jax.lax.slice_in_dim(ans, -1, None, axis=dim)], axis=dim)
    # (where the running value does not change the unused branch is exp(0): no overflow to poison derivatives)
    decay = jnp.where(ans == nxt, 1, jnp.exp(ans - jnp.where(ans == nxt, ans, nxt))).astype(g.dtype)

    def compose(earlier, later):  # S -> b + a S, applied after `earlier`
        return earlier[0] * later[0], later[1] + later[0] * earlier[1]

    flip = functools.partial(jnp.flip, axis=dim)
    # (the map at a position multiplies the next position's sum: shift the decays by one in the flipped order)
    shifted = jnp.concatenate([jnp.zeros_like(jax.lax.slice_in_dim(decay, 0, 1, axis=dim)),
                               jax.lax.slice_in_dim(flip(decay), 1, None, axis=dim)], axis=dim)
    _, sums = jax.lax.associative_scan(compose, (shifted, flip(g)), axis=dim)
    return (jnp.exp(x - ans) * flip(sums),)


def _logcumsumexp(x, dim):
    if not jnp.iscomplexobj(x) or x.shape[dim] == 0:
        return jax.lax.cumlogsumexp(x, axis=dim)
    # Complex numbers, as PyTorch adds them, one after another: `max + log1p(exp(min - max))`, `max` the one with
    # the larger real part, so the sum keeps its branch of the imaginary part (a principal log would wrap it).
    def add(acc, v):
        v_min = jnp.real(v) < jnp.real(acc)
        lo, hi = jnp.where(v_min, v, acc), jnp.where(v_min, acc, v)
        out = hi + jnp.log1p(jnp.exp(lo - hi))
        out = jnp.where(jnp.isneginf(jnp.real(lo)) & (jnp.real(lo) == jnp.real(hi)), lo, out)
        out = jnp.where(jnp.isnan(v) | jnp.isnan(acc), jnp.asarray(complex(jnp.nan, jnp.nan), x.dtype), out)
        return out, out

    xs = jnp.moveaxis(x, dim, 0)
    _, rest = jax.lax.scan(add, xs[0], xs[1:])
    return jnp.moveaxis(jnp.concatenate([xs[:1], rest]), 0, dim)


logcumsumexp = op("logcumsumexp", _logcumsumexp, _logcumsumexp_vjp, saves=("x", "ans"))

# -- softmax family --------------------------------------------------------------------
softmax = op("softmax", lambda x, dim: jax.nn.softmax(x, axis=dim),
             lambda g, ans, x, dim: (ans * (g - jnp.sum(g * ans, axis=dim, keepdims=True)),),
             saves=("ans",), node="SoftmaxBackward0")
log_softmax = op("log_softmax", lambda x, dim: jax.nn.log_softmax(x, axis=dim),
                 lambda g, ans, x, dim: (g - jnp.exp(ans) * jnp.sum(g, axis=dim, keepdims=True),),
                 saves=("ans",), node="LogSoftmaxBackward0")
