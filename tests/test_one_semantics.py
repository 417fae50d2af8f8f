"""One semantics on every path: at kinks and ties, through `detach` / `.data` / `no_grad`, and with hooks.

Each case is a scalar function written once against the torch-like API (`lib` is `tapeflow` or
`torch`, `F` its `nn.functional`) and a point where PyTorch picks a subgradient. Every tapeflow path
must give the tape's gradient: `tp.func.grad` (first and compiled call), `autograd.functional.vjp`
(default and `create_graph=True`), `jax.grad` / `jax.jit(jax.grad)` of `to_jax(f)`, `tp.compile`,
`tp.func.jacfwd` and the tape's own forward mode (`forward_ad`). The tape must equal PyTorch where
torch is installed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn.functional as TF
from tapeflow.autograd import forward_ad as fwAD
from tapeflow.interop import to_jax

try:
    import torch
    import torch.nn.functional as TORCH_F
except ImportError:  # pragma: no cover - the oracle is optional
    torch = None


def _w(lib, x):
    """Distinct weights per element, so every entry of the gradient is visible."""
    return lib.linspace(1.0, 2.0, x.numel(), dtype=x.dtype).reshape(x.shape)


def _v(lib, x, values):
    """A constant tensor in `x`'s dtype."""
    return lib.tensor(values, dtype=x.dtype)


def _ew(g):
    """A weighted sum of an elementwise function."""
    return lambda lib, F, x: (g(lib, F, x) * _w(lib, x)).sum()


def _no_grad_block(lib, F, x):
    with lib.no_grad():
        y = x * 3
    return (x * y).sum()


def _detached_write(lib, F, x):
    y = x * 1
    y.detach().mul_(2)
    return (y * x).sum()


def _data_read(lib, F, x):
    return (x * x.data * _w(lib, x)).sum()


def _hooked(lib, F, x):
    y = x * 2
    y.register_hook(lambda g: g * 10)
    return (y * y).sum()


Z3, T3 = [0.0, 1.0, -2.0], [1.0, 3.0, 3.0, -1.0]

CASES = {
    # kinks at 0
    "abs": (_ew(lambda lib, F, x: x.abs()), Z3),
    "relu": (_ew(lambda lib, F, x: F.relu(x)), Z3),
    "sign": (_ew(lambda lib, F, x: x.sign() * x), Z3),
    "leaky_relu": (_ew(lambda lib, F, x: F.leaky_relu(x, 0.1)), Z3),
    "elu": (_ew(lambda lib, F, x: F.elu(x, alpha=0.5)), Z3),
    "celu": (_ew(lambda lib, F, x: F.celu(x, alpha=0.5)), Z3),
    "selu": (_ew(lambda lib, F, x: F.selu(x)), Z3),
    "l1_loss": (lambda lib, F, x: F.l1_loss(x, lib.zeros_like(x)), Z3),
    "smooth_l1_loss": (lambda lib, F, x: F.smooth_l1_loss(x, lib.zeros_like(x), beta=1.0), [0.0, 1.0, -1.0, 2.0]),
    "huber_loss": (lambda lib, F, x: F.huber_loss(x, lib.zeros_like(x), delta=1.0), [0.0, 1.0, -1.0, 2.0]),
    # bounds
    "clamp": (_ew(lambda lib, F, x: x.clamp(0.0, 1.0)), [0.0, 1.0, 0.5, 2.0]),
    "clamp_min": (_ew(lambda lib, F, x: x.clamp(min=0.0)), Z3),
    "clamp_max": (_ew(lambda lib, F, x: x.clamp(max=1.0)), [1.0, 0.0, 2.0]),
    "hardtanh": (_ew(lambda lib, F, x: F.hardtanh(x)), [-1.0, 1.0, 0.0, 2.0]),
    "relu6": (_ew(lambda lib, F, x: F.relu6(x)), [0.0, 6.0, 3.0, 7.0]),
    "hardsigmoid": (_ew(lambda lib, F, x: F.hardsigmoid(x)), [-3.0, 3.0, 0.0, 4.0]),
    "hardswish": (_ew(lambda lib, F, x: F.hardswish(x)), [-3.0, 3.0, 0.0, 4.0]),
    "softshrink": (_ew(lambda lib, F, x: F.softshrink(x, 0.5)), [0.5, -0.5, 0.0, 1.0]),
    "hardshrink": (_ew(lambda lib, F, x: F.hardshrink(x, 0.5)), [0.5, -0.5, 0.0, 1.0]),
    "threshold": (_ew(lambda lib, F, x: F.threshold(x, 1.0, -2.0)), [1.0, 0.0, 2.0]),
    # ties
    "max": (lambda lib, F, x: x.max() * 2, T3),
    "min": (lambda lib, F, x: x.min() * 2, [1.0, -1.0, 3.0, -1.0]),
    "max_dim": (lambda lib, F, x: (x.reshape(2, 2).max(dim=1).values * lib.tensor([1.0, 2.0], dtype=x.dtype)).sum(),
                [3.0, 3.0, 1.0, 1.0]),
    "amax": (lambda lib, F, x: x.amax() * 2, T3),
    "amin": (lambda lib, F, x: x.amin() * 2, [1.0, -1.0, 3.0, -1.0]),
    "maximum": (lambda lib, F, x: (lib.maximum(x, lib.ones_like(x)) * _w(lib, x)).sum(), [1.0, 0.0, 2.0]),
    "minimum": (lambda lib, F, x: (lib.minimum(x, lib.ones_like(x)) * _w(lib, x)).sum(), [1.0, 0.0, 2.0]),
    "sort": (lambda lib, F, x: (x.sort().values * _w(lib, x)).sum(), [2.0, 1.0, 2.0, 1.0]),
    "topk": (lambda lib, F, x: (x.topk(2).values * lib.tensor([1.0, 2.0], dtype=x.dtype)).sum(), T3),
    "median": (lambda lib, F, x: x.median() * 2, [1.0, 2.0, 2.0, 3.0, 2.0]),
    "median_dim": (lambda lib, F, x: (x.reshape(2, 3).median(dim=1).values * lib.tensor([1.0, 2.0], dtype=x.dtype))
                   .sum(), [1.0, 2.0, 2.0, 5.0, 5.0, 4.0]),
    "kthvalue": (lambda lib, F, x: x.kthvalue(2).values * 2, [1.0, 2.0, 2.0, 3.0]),
    "cummax": (lambda lib, F, x: (x.cummax(0).values * _w(lib, x)).sum(), [1.0, 1.0, 0.0, 2.0]),
    "cummin": (lambda lib, F, x: (x.cummin(0).values * _w(lib, x)).sum(), [1.0, 1.0, 2.0, 0.0]),
    "max_pool": (lambda lib, F, x: (F.max_pool1d(x.reshape(1, 1, 4), 2) * 3).sum(), [1.0, 1.0, 2.0, 2.0]),
    # norms and square roots at 0
    "norm": (lambda lib, F, x: x.norm(), [0.0, 0.0, 0.0]),
    "norm_1": (lambda lib, F, x: lib.linalg.vector_norm(x, 1), [0.0, 1.0, -2.0]),
    "norm_inf": (lambda lib, F, x: lib.linalg.vector_norm(x, float("inf")), [0.0, 2.0, -2.0]),
    "sqrt_sum_sq": (lambda lib, F, x: (x * x).sum().sqrt(), [0.0, 0.0]),
    "normalize": (lambda lib, F, x: (F.normalize(x, dim=0) * _w(lib, x)).sum(), [0.0, 0.0, 0.0]),
    # what the tape does not differentiate
    "detach": (lambda lib, F, x: (x * x.detach() * _w(lib, x)).sum(), Z3),
    "data": (_data_read, Z3),
    "no_grad": (_no_grad_block, Z3),
    "detached_write": (_detached_write, Z3),
    "hook": (_hooked, Z3),
    # more kinks, ties, zeros and infinities: PyTorch's formulas where the chain rule would give 0 * inf
    "prod_zero": (lambda lib, F, x: x.prod() * 2, [0.0, 2.0, 3.0]),
    "prod_two_zeros": (lambda lib, F, x: x.prod() * 2, [0.0, 2.0, 0.0]),
    "prod_dim_zero": (lambda lib, F, x: (x.reshape(2, 2).prod(1) * _v(lib, x, [1.0, 2.0])).sum(), [0.0, 2.0, 3.0, 0.0]),
    "cumprod_zero": (lambda lib, F, x: (x.cumprod(0) * _w(lib, x)).sum(), [2.0, 0.0, 3.0, 0.0]),
    "pow_zero_base": (lambda lib, F, x: (x ** 2.0 * _w(lib, x)).sum() + (x ** 0.5).sum() * 0 , [0.0, 1.0, 4.0]),
    "pow_zero_exp": (lambda lib, F, x: (x ** 0 * _w(lib, x)).sum() + x.sum(), [0.0, 1.0, -2.0]),
    "pow_tensor_exp": (lambda lib, F, x: (lib.pow(lib.zeros_like(x), x) * _w(lib, x)).sum(), [0.0, 1.0, 2.0]),
    "atan2_zero": (lambda lib, F, x: (lib.atan2(x, lib.zeros_like(x) + 1) * _w(lib, x)).sum(), [0.0, 1.0, -2.0]),
    "logsumexp_neg_inf": (lambda lib, F, x: lib.logsumexp(x * 1, 0), [float("-inf"), 1.0, 2.0]),
    "logsumexp_all_inf": (lambda lib, F, x: lib.logsumexp(x - float("inf"), 0) .exp(), [0.0, 1.0]),
    "softmax_inf": (lambda lib, F, x: (F.softmax(x.masked_fill(x < 0, float("-inf")), 0) * _w(lib, x)).sum(), [0.0, 1.0, -2.0]),
    "floor": (_ew(lambda lib, F, x: x.floor() + x), [0.5, 1.0, -2.0]),
    "round": (_ew(lambda lib, F, x: x.round() + x), [0.5, 1.5, -2.0]),
    "trunc": (_ew(lambda lib, F, x: x.trunc() + x), [0.5, 1.0, -2.0]),
    "frac": (_ew(lambda lib, F, x: x.frac()), [0.5, 1.0, -2.5]),
    "fmod": (_ew(lambda lib, F, x: lib.fmod(x, 1.5)), [0.5, 1.5, -2.0]),
    "remainder": (_ew(lambda lib, F, x: lib.remainder(x, 1.5)), [0.5, 1.5, -2.0]),
    "std_const": (lambda lib, F, x: x.std(), [1.0, 1.0, 1.0]),
    "var_const": (lambda lib, F, x: x.var(), [1.0, 1.0, 1.0]),
    "dist_zero": (lambda lib, F, x: lib.dist(x, lib.zeros_like(x)), [0.0, 0.0]),
    "gelu_tanh": (_ew(lambda lib, F, x: F.gelu(x, approximate="tanh")), [0.0, 1.0, -2.0]),
    "gelu": (_ew(lambda lib, F, x: F.gelu(x)), [0.0, 1.0, -2.0]),
    "softplus_thr": (_ew(lambda lib, F, x: F.softplus(x, beta=2.0, threshold=1.0)), [0.5, 1.0, -2.0]),
    "logsigmoid": (_ew(lambda lib, F, x: F.logsigmoid(x)), [0.0, 50.0, -50.0]),
    "silu": (_ew(lambda lib, F, x: F.silu(x)), [0.0, 1.0, -2.0]),
    "mish": (_ew(lambda lib, F, x: F.mish(x)), [0.0, 1.0, -2.0]),
    "where_nan": (lambda lib, F, x: lib.where(x > 0, x.sqrt(), lib.zeros_like(x)).sum(), [0.0, 1.0, 4.0]),
    "masked_fill": (lambda lib, F, x: (x.masked_fill(x == 0, 5.0) * _w(lib, x)).sum(), [0.0, 1.0, -2.0]),
    "clamp_tensor": (lambda lib, F, x: (x.clamp(lib.zeros_like(x), lib.ones_like(x)) * _w(lib, x)).sum(), [0.0, 1.0, 0.5, 2.0]),
    "clamp_inverted": (_ew(lambda lib, F, x: x.clamp(1.0, 0.0)), [0.0, 1.0, 0.5]),
    "max_binary_self": (lambda lib, F, x: (lib.max(x, x.flip(0)) * _w(lib, x)).sum(), [1.0, 2.0, 1.0]),
    "fmax": (lambda lib, F, x: (lib.fmax(x, lib.ones_like(x)) * _w(lib, x)).sum(), [1.0, 0.0, 2.0]),
    "fmin": (lambda lib, F, x: (lib.fmin(x, lib.ones_like(x)) * _w(lib, x)).sum(), [1.0, 0.0, 2.0]),
    "max_dim_keep": (lambda lib, F, x: (x.reshape(2, 2).max(dim=0, keepdim=True)[0] * _v(lib, x, [[1.0, 2.0]])).sum(),
                     [3.0, 1.0, 3.0, 1.0]),
    "logcumsumexp": (lambda lib, F, x: (lib.logcumsumexp(x, 0) * _w(lib, x)).sum(), [0.0, 0.0, 1.0]),
    "nan_to_num": (_ew(lambda lib, F, x: (x.log()).nan_to_num(0.0, 1.0, -1.0)), [0.0, 1.0, -2.0]),
    "sinc": (_ew(lambda lib, F, x: lib.sinc(x)), [0.0, 1.0, -2.0]),
    "xlogy": (_ew(lambda lib, F, x: lib.xlogy(x, x)), [0.0, 1.0, 2.0]),
    "special_xlog1py": (_ew(lambda lib, F, x: lib.special.xlog1py(x, x)), [0.0, 1.0, 2.0]),
    "xlogy_positive_y": (_ew(lambda lib, F, x: lib.xlogy(x, lib.full_like(x, 0.5))
                             + lib.special.xlog1py(x, lib.full_like(x, 2.0))), [0.0, 1.0, -2.0]),
    "logit_eps": (_ew(lambda lib, F, x: lib.logit(x, eps=0.25)), [0.0, 0.25, 0.5, 0.9]),
    "entr": (_ew(lambda lib, F, x: lib.special.entr(x)), [0.0, 1.0, 2.0]),
    "log1p_m1": (_ew(lambda lib, F, x: (x - 1).log1p()), [1.0, 2.0, 3.0]),
    "sqrt_zero": (_ew(lambda lib, F, x: x.sqrt()), [0.0, 1.0, 4.0]),
    "rsqrt_zero": (_ew(lambda lib, F, x: x.rsqrt()), [0.0, 1.0, 4.0]),
    "cbrt": (_ew(lambda lib, F, x: x.sign() * x.abs().pow(1/3)), [0.0, 1.0, -8.0]),
    "div_zero": (_ew(lambda lib, F, x: x / (x * 0 + 2)), [0.0, 1.0, -2.0]),
    "reciprocal0": (_ew(lambda lib, F, x: 1 / x), [0.0, 1.0, -2.0]),
    "acos_edge": (_ew(lambda lib, F, x: x.acos()), [1.0, 0.0, -0.5]),
    "asin_edge": (_ew(lambda lib, F, x: x.asin()), [1.0, 0.0, -0.5]),
    "atanh_edge": (_ew(lambda lib, F, x: x.atanh()), [1.0, 0.0, -0.5]),
    "erfinv_edge": (_ew(lambda lib, F, x: lib.erfinv(x)), [1.0, 0.0, -0.5]),
    "log_zero": (_ew(lambda lib, F, x: x.log()), [0.0, 1.0, 2.0]),
    "linalg_norm_fro0": (lambda lib, F, x: lib.linalg.norm(x.reshape(2, 2)), [0.0, 0.0, 0.0, 0.0]),
    "matrix_norm_nuc": (lambda lib, F, x: lib.linalg.matrix_norm(x.reshape(2, 2), "nuc"), [1.0, 0.0, 0.0, 2.0]),
    "vector_norm_0": (lambda lib, F, x: lib.linalg.vector_norm(x, 0) + x.sum(), [0.0, 1.0, -2.0]),
    "vector_norm_3": (lambda lib, F, x: lib.linalg.vector_norm(x, 3), [0.0, 1.0, -2.0]),
    "vector_norm_ninf": (lambda lib, F, x: lib.linalg.vector_norm(x, float("-inf")), [1.0, -1.0, 2.0]),
    "renorm": (lambda lib, F, x: (x.reshape(2, 2).renorm(2, 0, 1.0) * _v(lib, x, [[1.0, 2.0], [3.0, 4.0]])).sum(),
               [3.0, 4.0, 0.1, 0.2]),
    "layer_norm_const": (lambda lib, F, x: (F.layer_norm(x, (3,)) * _w(lib, x)).sum(), [1.0, 1.0, 1.0]),
    "mse": (lambda lib, F, x: F.mse_loss(x, lib.zeros_like(x)), [0.0, 1.0, -2.0]),
    "kl_div": (lambda lib, F, x: F.kl_div(x, _v(lib, x, [0.0, 0.5, 0.5]), reduction="sum"), [0.0, 1.0, -2.0]),
    "bce": (lambda lib, F, x: F.binary_cross_entropy(x, _v(lib, x, [0.0, 1.0, 1.0])), [0.0, 1.0, 0.5]),
    "bce_logits_pw": (lambda lib, F, x:
                          F.binary_cross_entropy_with_logits(x, _v(lib, x, [0.0, 1.0, 1.0]), pos_weight=_v(lib, x, [2.0, 2.0, 2.0])),
                      [0.0, 100.0, -100.0]),
    "ce_label_smooth": (lambda lib, F, x: F.cross_entropy(x.reshape(1, 3), lib.tensor([1]), label_smoothing=0.1), [0.0, 0.0, 0.0]),
    "ce_ignore": (lambda lib, F, x: F.cross_entropy(x.reshape(2, 2), lib.tensor([1, -100])), [0.0, 1.0, 0.0, 0.0]),
    "ce_prob_target": (lambda lib, F, x: F.cross_entropy(x.reshape(1, 3), _v(lib, x, [[0.2, 0.3, 0.5]])), [0.0, 0.0, 0.0]),
    "nll_weight": (lambda lib, F, x: F.nll_loss(x.reshape(2, 2), lib.tensor([1, 0]), weight=_v(lib, x, [1.0, 3.0])), [0.0, 1.0, 0.0, 0.0]),
    "adaptive_max_pool_ties": (lambda lib, F, x: (F.adaptive_max_pool1d(x.reshape(1, 1, 4), 2) * 3).sum(), [1.0, 1.0, 2.0, 2.0]),
    "max_pool_overlap": (lambda lib, F, x: (F.max_pool1d(x.reshape(1, 1, 5), 3, stride=1) * _v(lib, x, [1.0, 2.0, 3.0])).sum(),
                         [1.0, 3.0, 3.0, 1.0, 3.0]),
    "max_pool2d_ties": (lambda lib, F, x: (F.max_pool2d(x.reshape(1, 1, 2, 2), 2)).sum(), [1.0, 1.0, 1.0, 1.0]),
    # PyTorch's kernels take a NaN over any number, and a later NaN over an earlier one
    "max_pool2d_nan": (lambda lib, F, x: (F.max_pool2d(x.reshape(1, 1, 2, 2), 2)).sum(), [1.0, float("nan"), 2.0, 1.0]),
    "max_pool2d_two_nans": (lambda lib, F, x: (F.max_pool2d(x.reshape(1, 1, 2, 3), 2, 1) * _v(lib, x, [2.0, 3.0])).sum(),
                            [float("nan"), 1.0, 0.0, 5.0, float("nan"), 4.0]),
    "max_pool1d_dilated_nan": (lambda lib, F, x: (F.max_pool1d(x.reshape(1, 1, 5), 2, 1, dilation=2) * _v(lib, x, [1.0, 2.0, 3.0])).sum(),
                               [float("nan"), 4.0, 3.0, float("nan"), 1.0]),
    # a window of -inf only: its first cell inside the input gets the gradient, not the padding
    "max_pool2d_neg_inf_padded": (lambda lib, F, x: (F.max_pool2d(x.reshape(1, 1, 3, 3), 2, 2, 1)).sum(),
                                  [-float("inf")] * 4 + [1.0] + [-float("inf")] * 4),
    "max_pool3d_ties": (lambda lib, F, x: (F.max_pool3d(x.reshape(1, 1, 2, 2, 2), 2) * 3).sum(), [1.0, 2.0, 2.0, 0.0] * 2),
    "avg_pool_ceil": (lambda lib, F, x: (F.avg_pool1d(x.reshape(1, 1, 5), 2, ceil_mode=True) * _v(lib, x, [1.0, 2.0, 3.0])).sum(),
                      [1.0, 3.0, 3.0, 1.0, 3.0]),
    "lp_pool": (lambda lib, F, x: F.lp_pool1d(x.reshape(1, 1, 4), 2, 2).sum(), [0.0, 0.0, 1.0, 2.0]),
    "interp_bilinear": (lambda lib, F, x:
                            (F.interpolate(x.reshape(1, 1, 2, 2), scale_factor=2, mode="bilinear", align_corners=False)
                             * _w(lib, lib.zeros(1, 1, 4, 4, dtype=x.dtype))).sum(),
                        [0.0, 1.0, 2.0, 3.0]),
    "interp_nearest": (lambda lib, F, x: (F.interpolate(x.reshape(1, 1, 4), size=3, mode="nearest") * _v(lib, x, [1.0, 2.0, 3.0])).sum(),
                       [0.0, 1.0, 2.0, 3.0]),
    "embedding_max_norm": (lambda lib, F, x:
                               F.embedding(lib.tensor([0, 1, 0]), x.reshape(2, 2)).mul(_v(lib, x, [[1.0], [2.0], [3.0]])).sum(),
                           [0.0, 1.0, 2.0, 3.0]),
    "index_put_acc": (lambda lib, F, x:
                          (lib.zeros(3, dtype=x.dtype).index_put((lib.tensor([0, 0, 2]),), x, accumulate=True)
                           * _v(lib, x, [1.0, 2.0, 3.0])).sum(),
                      [1.0, 2.0, 3.0]),
    "index_put_dup": (lambda lib, F, x:
                          (lib.zeros(3, dtype=x.dtype).index_put((lib.tensor([0, 2]),), x[:2]) * _v(lib, x, [1.0, 2.0, 3.0])).sum() + x[2],
                      [1.0, 2.0, 3.0]),
    "msort": (lambda lib, F, x: (lib.msort(x) * _w(lib, x)).sum(), [2.0, 1.0, 2.0]),
    "nanmedian": (lambda lib, F, x: x.nanmedian() * 2, [1.0, float("nan"), 2.0, 2.0]),
    "quantile": (lambda lib, F, x: x.quantile(0.5) * 2, [1.0, 2.0, 2.0, 3.0]),
    "quantile_nearest": (lambda lib, F, x: x.quantile(0.4, interpolation="nearest") * 2, [1.0, 2.0, 2.0, 3.0]),
    "mode": (lambda lib, F, x: x.mode().values * 2, [1.0, 2.0, 2.0, 1.0]),
    "det_singular": (lambda lib, F, x: lib.linalg.det(x.reshape(2, 2)), [1.0, 2.0, 2.0, 4.0]),
    "slogdet": (lambda lib, F, x: lib.linalg.slogdet(x.reshape(2, 2))[1], [2.0, 1.0, 1.0, 3.0]),
    "eigh_deg": (lambda lib, F, x: (lib.linalg.eigh(x.reshape(2, 2) + x.reshape(2, 2).T)[0] * _v(lib, x, [1.0, 2.0])).sum(),
                 [1.0, 0.5, 0.5, 2.0]),
    "svdvals": (lambda lib, F, x: lib.linalg.svdvals(x.reshape(2, 2)).sum(), [1.0, 0.0, 0.0, 2.0]),
    "matrix_exp": (lambda lib, F, x: lib.linalg.matrix_exp(x.reshape(2, 2)).sum(), [0.0, 1.0, 0.0, 0.0]),
    "pinv": (lambda lib, F, x: lib.linalg.pinv(x.reshape(2, 2)).sum(), [1.0, 0.0, 0.0, 2.0]),
    "trace_diag": (lambda lib, F, x: lib.diag(x.reshape(2, 2)).prod() + x.reshape(2, 2).trace(), [0.0, 1.0, 2.0, 0.0]),
    "polar": (lambda lib, F, x: lib.view_as_real(lib.polar(x[:2].abs() + 0, x[2:])).sum(), [1.0, 2.0, 0.0, 1.0]),
    "angle_real": (_ew(lambda lib, F, x: x.angle() + x), [0.0, 1.0, -2.0]),
    "copysign": (_ew(lambda lib, F, x: lib.copysign(x, -lib.ones_like(x))), [0.0, 1.0, -2.0]),
    "copysign_other": (lambda lib, F, x: (lib.copysign(lib.ones_like(x) * 2, x) * x * _w(lib, x)).sum(), [0.0, 1.0, -2.0]),
    "hypot": (_ew(lambda lib, F, x: lib.hypot(x, lib.zeros_like(x))), [0.0, 1.0, -2.0]),
    "lerp": (_ew(lambda lib, F, x: lib.lerp(x, lib.ones_like(x), 0.3)), [0.0, 1.0, -2.0]),
    "addcdiv": (_ew(lambda lib, F, x: lib.addcdiv(x, x, x + 3, value=0.5)), [0.0, 1.0, -2.0]),
    "logaddexp_eq": (_ew(lambda lib, F, x: lib.logaddexp(x, x * 1)), [0.0, 1.0, -2.0]),
    "logaddexp_inf": (lambda lib, F, x: lib.logaddexp(x, lib.full_like(x, float("-inf"))).sum(), [0.0, 1.0, -2.0]),
    "dropout_eval": (_ew(lambda lib, F, x: F.dropout(x, 0.5, training=False)), [0.0, 1.0, -2.0]),
    "normalize_p1": (lambda lib, F, x: (F.normalize(x, p=1.0, dim=0) * _w(lib, x)).sum(), [0.0, 0.0, 0.0]),
}

# Not checked in forward mode: hooks are backward-only (as in PyTorch) and JAX's forward mode refuses them;
# forward AD refuses a write through a detached alias of a dual tensor (its tangent would go stale); the tape's
# forward AD, like PyTorch's, ignores grad mode (see test_forward_ad_ignores_no_grad_as_pytorch_does).
NO_FORWARD = {"hook", "detached_write", "no_grad"}
# Forward mode differs from reverse mode, in PyTorch too, where a derivative is infinite: a zero tangent times
# an infinite derivative is NaN (forward), while reverse mode multiplies each input's own cotangent. These are
# compared with PyTorch's forward mode instead (test_forward_mode_equals_pytorchs).
FORWARD_DIFFERS = {"sqrt_zero", "rsqrt_zero", "reciprocal0", "acos_edge", "asin_edge", "atanh_edge", "erfinv_edge",
                   "log_zero", "cbrt", "lp_pool", "pow_zero_base", "xlogy", "entr", "hypot", "where_nan",
                   "nan_to_num"}
# PyTorch 2.13 returns a zero gradient for det at an exactly singular 2x2 matrix (and fails its own gradcheck
# there); the cofactor matrix, which tapeflow returns, is the derivative.
TORCH_DIFFERS = {"det_singular"}
# PyTorch's forward mode at an fmax tie takes the other input's tangent, unlike its own reverse mode; and its
# nan_to_num passes a NaN tangent through at a replaced infinity (NaN * 0), where XLA's compiled mask gives 0.
TORCH_FORWARD_DIFFERS = {"fmax", "fmin", "nan_to_num"}


def _tp(name):
    fn, x = CASES[name]
    return (lambda x: fn(tp, TF, x)), np.asarray(x, np.float64)


def _tape_grad(f, x):
    xt = tp.tensor(x, requires_grad=True)
    f(xt).backward()
    return xt.grad.numpy()


def _close(a, b, what, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=1e-12,
                               equal_nan=True, err_msg=what)


def _compiled_grad(f, x):
    leaf = tp.tensor(x, requires_grad=True)

    @tp.compile
    def step():
        leaf.grad = None
        f(leaf).backward()
        return leaf.grad

    step()
    return step().numpy()


def _forward_mode(f, x):
    """The gradient of scalar `f` from one forward-mode product per input element (on the tape)."""
    out = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = 1.0
        with fwAD.dual_level():
            dual = fwAD.make_dual(tp.tensor(x), tp.tensor(e))
            t = fwAD.unpack_dual(f(dual)).tangent
        out.append(0.0 if t is None else float(t))
    return np.asarray(out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_path_gives_the_tapes_gradient(name):
    f, x = _tp(name)
    want = _tape_grad(f, x)
    got = {
        "tp.func.grad, first call": tp.func.grad(f)(tp.tensor(x)).numpy(),
        "autograd.functional.vjp": tp.autograd.functional.vjp(f, tp.tensor(x))[1].numpy(),
        "autograd.functional.vjp(create_graph=True)":
            tp.autograd.functional.vjp(f, tp.tensor(x), create_graph=True)[1].detach().numpy(),
        "jax.grad(to_jax(f))": jax.grad(to_jax(f))(jnp.asarray(x)),
        "jax.jit(jax.grad(to_jax(f)))": jax.jit(jax.grad(to_jax(f)))(jnp.asarray(x)),
        "tp.compile": _compiled_grad(f, x),
    }
    for _ in range(2):  # compiled from the second call with the same key
        got["tp.func.grad, compiled"] = tp.func.grad(f)(tp.tensor(x)).numpy()
    if name not in NO_FORWARD | FORWARD_DIFFERS:
        got["tp.func.jacfwd"] = tp.func.jacfwd(f)(tp.tensor(x)).numpy()
        got["forward_ad"] = _forward_mode(f, x)
    for path, g in got.items():
        _close(g, want, f"{name}: {path} vs the tape")


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_tape_equals_pytorch(name):
    if name in TORCH_DIFFERS:
        pytest.skip("PyTorch's gradient is not the derivative here (see TORCH_DIFFERS)")
    fn, x = CASES[name]
    f, _ = _tp(name)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    fn(torch, TORCH_F, xt).backward()
    # PyTorch's hardsigmoid kernel scales by a float32 1/6, hence the tolerance.
    _close(_tape_grad(f, np.asarray(x, np.float64)), xt.grad.numpy(), f"{name}: tape vs PyTorch", rtol=1e-7)


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(set(CASES) - NO_FORWARD - TORCH_DIFFERS - TORCH_FORWARD_DIFFERS))
def test_forward_mode_equals_pytorchs(name):
    """`tp.func.jacfwd` and the tape's forward AD give what `torch.func.jacfwd` gives, NaNs included."""
    fn, x = CASES[name]
    f, x = _tp(name)
    try:
        want = torch.func.jacfwd(lambda t: fn(torch, TORCH_F, t))(torch.tensor(x)).numpy()
    except (NotImplementedError, RuntimeError) as e:
        pytest.skip(f"PyTorch has no forward mode here: {str(e)[:80]}")
    _close(tp.func.jacfwd(f)(tp.tensor(x)).numpy(), want, f"{name}: tp.func.jacfwd vs torch.func.jacfwd", rtol=1e-7)
    _close(_forward_mode(f, x), want, f"{name}: forward_ad vs torch.func.jacfwd", rtol=1e-7)


def test_hessian_paths_agree_at_a_kink():
    """Second order through the table rule: the tape's double backward, `tp.func.hessian` and
    `autograd.functional.hessian` agree where JAX's own rules would differ (relu at 0 under a square)."""
    def f(x):
        return (TF.relu(x) ** 2 * x).sum() + x.abs().sum() * x.sum()

    x = np.asarray([0.0, 1.0, -2.0])
    want = tp.autograd.functional.hessian(f, tp.tensor(x)).numpy()
    xt = tp.tensor(x, requires_grad=True)
    (g,) = tp.autograd.grad(f(xt), xt, create_graph=True)
    rows = [tp.autograd.grad(g[i], xt, retain_graph=True)[0].numpy() for i in range(3)]
    _close(np.stack(rows), want, "tape double backward vs functional.hessian")
    _close(tp.func.hessian(f)(tp.tensor(x)).numpy(), want, "tp.func.hessian vs functional.hessian")
    _close(jax.hessian(to_jax(f))(jnp.asarray(x)), want, "jax.hessian(to_jax(f)) vs functional.hessian")


def test_a_power_of_zero_adds_no_curvature_at_zero_on_any_path():
    """`x ** 0` is constant: PyTorch's gradient of it is a constant zero with no graph, so a second derivative
    of `x ** 0 + x ** 2` at x == 0 is 2 (not the NaN of `0 * 0 ** -1`), on the tape and on every traced path."""
    def f(x):
        return (x ** 0 + x ** 2 * 3 + x ** 0.0).sum()

    x = np.asarray([0.0, 1.5])
    want = np.diag([6.0, 6.0])
    xt = tp.tensor(x, requires_grad=True)
    (g,) = tp.autograd.grad(f(xt), xt, create_graph=True)
    _close(np.stack([tp.autograd.grad(g[i], xt, retain_graph=True)[0].numpy() for i in range(2)]), want, "tape")
    _close(tp.autograd.functional.hessian(f, tp.tensor(x)).numpy(), want, "functional.hessian")
    _close(tp.func.hessian(f)(tp.tensor(x)).numpy(), want, "tp.func.hessian")
    _close(jax.hessian(to_jax(f))(jnp.asarray(x)), want, "jax.hessian(to_jax(f))")
    if torch is not None:
        xo = torch.tensor(x, requires_grad=True)
        (go,) = torch.autograd.grad(f(xo), xo, create_graph=True)
        _close(torch.autograd.functional.hessian(f, torch.tensor(x)).numpy(), want, "PyTorch")
        _close(go.detach().numpy(), g.detach().numpy(), "first derivative vs PyTorch")


def test_a_hook_that_reads_values_raises_under_jit():
    def f(x):
        y = x * 2
        y.register_hook(lambda g: g * float(g.sum()))
        return (y * y).sum()

    with pytest.raises(RuntimeError, match="hook .* reads the gradient's values on the host"):
        jax.jit(jax.grad(to_jax(f)))(jnp.ones(3))


def test_outer_no_grad_does_not_reach_into_a_transform():
    """As `torch.func.grad` ignores an enclosing `no_grad`, so do tapeflow's transforms."""
    with tp.no_grad():
        g = tp.func.grad(lambda x: (x * x).sum())(tp.tensor([1.0, 2.0]))
    _close(g.numpy(), [2.0, 4.0], "tp.func.grad under an outer no_grad")


def test_hook_removed_before_the_transform_runs():
    def f(x):
        y = x * 2
        h = y.register_hook(lambda g: g * 10)
        h.remove()
        return (y * y).sum()

    _close(jax.grad(to_jax(f))(jnp.ones(2)), [8.0, 8.0], "a removed hook")


def test_forward_ad_ignores_no_grad_as_pytorch_does():
    """PyTorch's forward AD is not affected by grad mode: a tangent flows through a `no_grad` block."""
    x = np.asarray([0.0, 1.0, -2.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(tp.tensor(x), tp.ones(3, dtype=tp.float64))
        with tp.no_grad():
            y = dual * 3
        _close(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 3.0, 3.0], "tangent through no_grad")


def test_extension_points_are_per_thread():
    """A profiler (an op interceptor) on one thread does not see ops run by another, as grad mode is per thread."""
    import threading

    from tapeflow._state import state

    seen = []
    with tp.autograd.profiler.profile() as prof:
        t = threading.Thread(target=lambda: seen.append((len(state.interceptors), float((tp.ones(3) * 2).sum()))))
        t.start()
        t.join()
        tp.ones(2).exp()
    assert seen == [(0, 6.0)], "the other thread ran with this thread's interceptors"
    names = {e.key for e in prof.key_averages()}
    assert any("exp" in n for n in names) and not any("mul" in n for n in names), names


def test_a_hook_fires_again_in_the_second_backward_as_in_pytorch():
    f, x = _tp("hook")
    want = tp.autograd.functional.hessian(f, tp.tensor(x)).numpy()
    xt = tp.tensor(x, requires_grad=True)
    (g,) = tp.autograd.grad(f(xt), xt, create_graph=True)
    rows = np.stack([tp.autograd.grad(g[i], xt, retain_graph=True)[0].numpy() for i in range(x.size)])
    _close(rows, want, "double backward vs functional.hessian")
    _close(jax.jacrev(jax.jacrev(to_jax(f)))(jnp.asarray(x)), want, "jax.jacrev(jax.jacrev(to_jax(f)))")
    if torch is not None:
        fn, _ = CASES["hook"]
        ref = torch.autograd.functional.hessian(lambda t: fn(torch, TORCH_F, t), torch.tensor(x))
        _close(want, ref.numpy(), "functional.hessian vs PyTorch")
    with pytest.raises(RuntimeError, match="forward mode"):
        tp.func.hessian(f)(tp.tensor(x))


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_refuses_its_first_arguments_derivative_on_every_path(name):
    """PyTorch: `igamma(a, x)` with `a` requiring grad runs; only a gradient or tangent for `a` raises
    NotImplementedError ("the derivative for 'igamma: input' is not implemented."), whatever the path, while
    the gradient for `x` alone is computed."""
    fn, sign = getattr(tp, name), (1.0 if name == "igamma" else -1.0)
    a0, x0 = np.array([1.5, 2.0]), np.array([0.5, 1.0])
    want_x = sign * np.exp(-x0) * x0 ** (a0 - 1) / np.array([0.886226925452758, 1.0])  # / Gamma(a)
    a = tp.tensor(a0, dtype=tp.float64, requires_grad=True)
    x = tp.tensor(x0, dtype=tp.float64, requires_grad=True)
    y = fn(a, x)  # the forward runs
    assert y.grad_fn.name() == name.capitalize() + "Backward0"
    (gx,) = tp.autograd.grad(y.sum(), x, retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), want_x, rtol=1e-12)
    refused = f"the derivative for '{name}: input' is not implemented"
    with pytest.raises(NotImplementedError, match=refused):
        y.sum().backward()
    f = to_jax(lambda a, x: fn(a, x).sum())
    aj, xj = jnp.asarray(a0), jnp.asarray(x0)
    np.testing.assert_allclose(np.asarray(jax.grad(f, 1)(aj, xj)), want_x, rtol=1e-12)
    with pytest.raises(NotImplementedError, match=refused):
        jax.grad(f, 0)(aj, xj)
    with pytest.raises(NotImplementedError, match=refused):
        jax.jvp(lambda v: f(v, xj), (aj,), (jnp.ones(2),))
    with pytest.raises(NotImplementedError, match=refused):
        tp.func.grad(lambda v: fn(v, tp.tensor(x0, dtype=tp.float64)).sum())(a.detach())
