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

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


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


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None, need_weights: bool = True,
                                 attn_mask=None, use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
                                 average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention on sequence-first inputs (`(L, N, E)`, or `(L, E)` unbatched), with the weights
    given: what `nn.MultiheadAttention` computes, PyTorch's `F.multi_head_attention_forward` (same arguments,
    checks and messages).

    `in_proj_weight` (`(3E, E)`) projects query, key and value, or, with `use_separate_proj_weight`,
    `q_proj_weight` / `k_proj_weight` / `v_proj_weight` (key and value may then have other feature sizes);
    `in_proj_bias` (`(3E,)`) holds the three biases. `bias_k` / `bias_v` (`(1, 1, E)`) append one learnt key and
    value, `add_zero_attn` a zero one. `static_k` / `static_v` (`(N * heads, S, E / heads)`) replace the
    projected keys / values. Masks as `nn.MultiheadAttention`'s. Returns `(output, weights or None)`, the
    weights averaged over the heads when `average_attn_weights`.

    Example:
        >>> import tapeflow as tp
        >>> import tapeflow.nn.functional as F
        >>> mha = tp.nn.MultiheadAttention(4, 2)
        >>> x = tp.randn(3, 1, 4)
        >>> out, w = F.multi_head_attention_forward(x, x, x, 4, 2, mha.in_proj_weight, mha.in_proj_bias, None, None,
        ...                                         False, 0.0, mha.out_proj.weight, mha.out_proj.bias)
        >>> out.shape, w.shape
        (tapeflow.Size([3, 1, 4]), tapeflow.Size([1, 3, 3]))
    """
    batched = _mha_ranks(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    dtype = query.dtype
    key_padding_mask, attn_mask = mismatched_masks(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask",
                                                   dtype)
    kpm = module_mask(key_padding_mask, "key_padding_mask", dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    causal = is_causal and kpm is None and not need_weights  # PyTorch trusts the hint on this path only
    mask = None if causal else module_mask(attn_mask, "attn_mask", dtype)
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    h = num_heads
    d = E // h
    if d * h != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {h}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        weights = (in_proj_weight[:E], in_proj_weight[E:2 * E], in_proj_weight[2 * E:])
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    from .functional import linear, pad

    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))
    S = key.shape[0]
    if mask is not None:
        if mask.ndim == 2 and tuple(mask.shape) != (L, S):
            raise RuntimeError(f"The shape of the 2D attn_mask is {mask.shape}, but should be {(L, S)}.")
        if mask.ndim == 3 and tuple(mask.shape) != (N * h, L, S):
            raise RuntimeError(f"The shape of the 3D attn_mask is {mask.shape}, but should be {(N * h, L, S)}.")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")
        k, v = _ops.cat([k, bias_k.expand(1, N, E)]), _ops.cat([v, bias_v.expand(1, N, E)])
        mask, kpm = _pad_key(mask, pad), _pad_key(kpm, pad)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    q = q.reshape(L, N, h, d).permute(1, 2, 0, 3)  # (N, h, L, d)
    k, v = (_heads(t, static, name, N, h, d) for t, static, name in ((k, static_k, "static_k"),
                                                                   (v, static_v, "static_v")))
    if add_zero_attn:
        k = _ops.cat([k, zeros(N, h, 1, d, dtype=k.dtype)], 2)
        v = _ops.cat([v, zeros(N, h, 1, d, dtype=v.dtype)], 2)
        mask, kpm = _pad_key(mask, pad), _pad_key(kpm, pad)
    S = k.shape[2]
    if causal:
        mask = causal_mask(L, S, dtype)
    elif mask is not None and mask.ndim == 3:
        mask = mask.reshape(N, h, L, S)
    if kpm is not None:
        if kpm.shape[0] != N:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {N}, but got {kpm.shape[0]}")
        if kpm.shape[1] != S:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {S}, but got {kpm.shape[1]}")
        kpm = kpm.reshape(N, 1, 1, S)
        mask = kpm if mask is None else mask + kpm
    out, attn = attend(q, k, v, mask, dropout_p if training else 0.0, 1.0 / math.sqrt(d), safe=not need_weights)
    out = linear(out.permute(2, 0, 1, 3).reshape(L, N, E), out_proj_weight, out_proj_bias)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    if average_attn_weights:
        attn = attn.mean(1)
    return out, attn if batched else attn.squeeze(0)


def _mha_ranks(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """PyTorch's checks of the ranks of multi-head attention's inputs (AssertionError); whether it is batched."""
    rank = query.ndim
    if rank not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {rank}-D query tensor")
    kind = "batched (3-D)" if rank == 3 else "unbatched (2-D)"
    if key.ndim != rank or value.ndim != rank:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {rank}-D but found {key.ndim}-D "
                             f"and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != rank - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {rank - 1}-D but "
                             f"found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if rank == 2 and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return rank == 3


def _heads(t, static, name: str, N: int, h: int, d: int):
    """Projected keys or values `(S, N, E)` split into heads `(N, h, S, d)`, or the `static_k` / `static_v` given
    (`(N * h, S, d)`) in their place."""
    if static is None:
        return t.reshape(t.shape[0], N, h, d).permute(1, 2, 0, 3)
    if static.shape[0] != N * h:
        raise AssertionError(f"expecting {name}.size(0) of {N * h}, but got {static.shape[0]}")
    if static.shape[2] != d:
        raise AssertionError(f"expecting {name}.size(2) of {d}, but got {static.shape[2]}")
    return static.reshape(N, h, static.shape[1], d)


def _pad_key(mask, pad):
    """One more key to attend (an added bias or zero key): a zero column at the end of the mask."""
    return None if mask is None else pad(mask, (0, 1))
