"""Attention of `tapeflow.nn.functional`: `scaled_dot_product_attention` and the mask conventions that
`MultiheadAttention` and the Transformer layers share with it."""

from __future__ import annotations

import functools
import math
import warnings

import jax
import jax.numpy as jnp

from .. import _adaptive, _dtype, _ops
from .. import backends as _backends
from .._factories import zeros
from .._tensor import Tensor
from ..amp import lower_precision

__all__ = ["scaled_dot_product_attention"]


@lower_precision
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False) -> Tensor:
    """`softmax(q @ k^T * scale + mask) @ v`, as PyTorch's math path computes it.

    Arguments:
        query: `(*, Hq, L, E)`; key: `(*, H, S, E)`; value: `(*, H, S, Ev)`.
        attn_mask: boolean (True = may attend) or additive float mask broadcastable to `(*, L, S)`.
        dropout_p: dropout on the attention weights (applied whenever `dropout_p > 0`).
        is_causal: query `i` attends keys `j <= i` (top-left aligned); not together with `attn_mask`.
        scale: default `1 / sqrt(E)`.
        enable_gqa: grouped-query attention: `H` divides `Hq` and each key/value head serves `Hq // H`
            consecutive query heads.

    Returns:
        `(*, Hq, L, Ev)`. A query row that may attend nothing gives zeros (and zero gradients), as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> q = tp.randn(2, 3, 4)
        >>> tp.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
        tapeflow.Size([2, 3, 4])
    """
    if enable_gqa:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        key = _ops.repeat_interleave(key, hq // hk, -3)
        value = _ops.repeat_interleave(value, hq // hv, -3)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    _check_backends(query, key, value, dropout_p)
    if not (query.dtype == key.dtype == value.dtype):
        c = _dtype.CPP_NAMES
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{c[query.dtype.name]} key.dtype: {c[key.dtype.name]} and value.dtype: "
                           f"{c[value.dtype.name]} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dtype.bool, _dtype.float32, query.dtype):
        c = _dtype.CPP_NAMES
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {c[attn_mask.dtype.name]} and  query.dtype: {c[query.dtype.name]} "
                           "instead.")
    mask = float_mask(attn_mask, "attn_mask", query.dtype)
    if is_causal:
        mask = causal_mask(query.shape[-2], key.shape[-2], query.dtype)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    # A causal mask (top-left aligned) lets every query row attend key 0, so no row is fully masked unless
    # there are no keys: the guard against such rows is needed with a mask of the caller's only.
    safe = not is_causal or key.shape[-2] == 0
    return attend(query, key, value, mask, dropout_p, scale, safe=safe)[0]


_NO_KERNEL = "No available kernel.  Aborting execution."
_NO_BACKEND = ("No viable backend for scaled_dot_product_attention was found. This is likely due to turning off "
               "both the math kernel and the fused kernels.")


def _check_backends(query, key, value, dropout_p) -> None:
    """Refuse, as PyTorch does, inputs that no backend left on by `sdpa_kernel` / `torch.backends.cuda.enable_*_sdp`
    can take (see `tapeflow.nn.attention`); on the CPU only the math and flash backends exist."""
    on = _backends._sdp
    if on["math"]:
        return
    if jax.default_backend() != "cpu":
        if not (on["flash"] or on["mem_efficient"] or on["cudnn"]):
            raise RuntimeError(_NO_BACKEND)
        return
    if not on["flash"]:
        raise RuntimeError(_NO_BACKEND)
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        why = (f"All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: "
               f"{query.dim()}, Key dim: {key.dim()}, Value dim: {value.dim()} instead.")
    elif dropout_p > 0:
        why = "Both fused kernels do not support non-zero dropout."
    elif not query.shape[-1] == key.shape[-1] == value.shape[-1]:
        why = (f"Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): "
               f"{query.shape[-1]}, Key.size(-1): {key.shape[-1]}, Value.size(-1): {value.shape[-1]} instead.")
    else:
        return
    warnings.warn("Flash attention kernel not used because:", stacklevel=4)  # (the caller of the function)
    warnings.warn(why, stacklevel=4)
    raise RuntimeError(_NO_KERNEL)


def attend(q, k, v, mask, dropout_p, scale, safe):
    """`(softmax(q k^T * scale + mask) @ v, weights)`; `safe` gives rows with nothing to attend zero weights
    (PyTorch's scaled_dot_product_attention) instead of NaN (its `need_weights=True` attention path)."""
    scores = _ops.matmul(q, k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores + mask
    if safe:
        # NOTE: a fully masked row is zeroed before the softmax too, so its gradient is 0 and not NaN.
        dead = (scores == float("-inf")).all(-1, keepdim=True)
        weights = _ops.softmax(scores.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
    else:
        weights = _ops.softmax(scores, -1)
    if dropout_p > 0.0:
        from .functional import dropout

        weights = dropout(weights, dropout_p)
    return _ops.matmul(weights, v), weights


def float_mask(mask, name: str, dtype):
    """A boolean mask (True = masked out, except for `attn_mask` of SDPA, see below) or a float mask as the
    additive float mask PyTorch's attention works with; `None` stays `None`."""
    if mask is None:
        return None
    if mask.dtype is _dtype.bool:
        # scaled_dot_product_attention's boolean mask says where to attend; the modules' masks say where not to.
        blocked = _ops.logical_not(mask) if name == "attn_mask" else mask
        return zeros(*mask.shape, dtype=dtype).masked_fill(blocked, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


def mismatched_masks(mask, name: str, other, other_name: str, dtype) -> tuple:
    """`(mask, other)` of a module's call, warning as PyTorch does when one is boolean and the other float
    (both are then given as float masks, so that the layers inside do not warn again)."""
    if mask is None or other is None or mask.dtype == other.dtype:
        return mask, other
    warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                  "instead.", UserWarning, stacklevel=3)
    return module_mask(mask, name, dtype), module_mask(other, other_name, dtype)


def module_mask(mask, name: str, dtype):
    """`nn.MultiheadAttention` / Transformer masks: boolean True marks a position that may NOT be attended."""
    if mask is None:
        return None
    if mask.dtype is _dtype.bool:
        return zeros(*mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    return float_mask(mask, name, dtype)


def causal_mask(L: int, S: int, dtype) -> Tensor:
    """`(L, S)` float mask, `-inf` above the diagonal (a new tensor each call, made by one compiled program
    that adaptive eager records like an op)."""
    return _adaptive.constant(_causal_program(L, S, _dtype.to_jax_dtype(dtype)))


@functools.lru_cache(maxsize=64)
def _causal_program(L: int, S: int, dtype):
    return jax.jit(lambda: jnp.where(jnp.tril(jnp.ones((L, S), bool)), jnp.zeros((), dtype), jnp.array(-jnp.inf, dtype)))
