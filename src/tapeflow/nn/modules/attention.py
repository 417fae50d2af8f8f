"""`MultiheadAttention`."""

from __future__ import annotations

import math

from ... import _ops
from ..._factories import empty, zeros
from .. import functional as F
from .. import init
from .._functional_attention import attend, causal_mask, mismatched_masks, module_mask
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention: `softmax(Q K^T / sqrt(d)) V` per head, then an output projection.

    Arguments:
        embed_dim: model dimension E (split over the heads).
        num_heads: number of heads; must divide E.
        dropout: dropout on the attention weights (training only).
        bias: biases on the input and output projections.
        add_bias_kv: learn one more key and value (`bias_k`, `bias_v`) appended to every sequence.
        add_zero_attn: append a zero key and value to every sequence.
        kdim, vdim: feature sizes of key and value (default E).
        batch_first: inputs are `(N, L, E)` instead of `(L, N, E)`.

    Example:
        >>> import tapeflow as tp
        >>> mha = tp.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = tp.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (tapeflow.Size([3, 5, 8]), tapeflow.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.head_dim = embed_dim // num_heads
        self.add_zero_attn = add_zero_attn
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        kw = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _project(self, query, key, value):
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def _check_shapes(self, query, key, value) -> None:
        """PyTorch's checks of the inputs' ranks and sizes (it raises AssertionError)."""
        if query.ndim == 3 and (key.ndim != 3 or value.ndim != 3):
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if query.ndim == 2 and (key.ndim != 2 or value.ndim != 2):
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if query.ndim not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
                                 "query tensor")
        if query.shape[-1] != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {query.shape[-1]}")
        if self._qkv_same_embed_dim and tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        """Attend `query` to `key`/`value`; returns `(output, weights or None)`.

        Masks follow PyTorch: in a boolean `attn_mask` (`(L, S)` or `(N*heads, L, S)`) or
        `key_padding_mask` (`(N, S)`), True marks a position that may NOT be attended; float masks are
        added to the scores. `is_causal` is a hint that `attn_mask` is the causal mask (which it needs).
        """
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                               "module method `generate_square_subsequent_mask` to create this mask.")
        self._check_shapes(query, key, value)
        key_padding_mask, attn_mask = mismatched_masks(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask",
                                                       query.dtype)
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        L, N, _ = query.shape
        dtype = query.dtype
        kpm = module_mask(key_padding_mask, "key_padding_mask", dtype)
        if is_causal and kpm is None and not need_weights:
            mask = causal_mask(L, key.shape[0], dtype)  # PyTorch trusts the hint on this path
        else:
            mask = self._check_attn_mask(module_mask(attn_mask, "attn_mask", dtype), L, key.shape[0], N)
        q, k, v = self._project(query, key, value)
        if self.bias_k is not None:
            k, v = _ops.cat([k, self.bias_k.expand(1, N, -1)]), _ops.cat([v, self.bias_v.expand(1, N, -1)])
            mask, kpm = _pad_last(mask), _pad_last(kpm)
        h, d = self.num_heads, self.head_dim
        q, k, v = (t.reshape(t.shape[0], N, h, d).permute(1, 2, 0, 3) for t in (q, k, v))  # (N, h, len, d)
        if self.add_zero_attn:
            k = _ops.cat([k, zeros(N, h, 1, d, dtype=k.dtype)], 2)
            v = _ops.cat([v, zeros(N, h, 1, d, dtype=v.dtype)], 2)
            mask, kpm = _pad_last(mask), _pad_last(kpm)
        S = k.shape[2]
        if mask is not None and mask.ndim == 3:
            mask = mask.reshape(N, h, L, S)
        if kpm is not None:
            kpm = kpm.reshape(N, 1, 1, S)
            mask = kpm if mask is None else mask + kpm
        p = self.dropout if self.training else 0.0
        out, weights = attend(q, k, v, mask, p, 1.0 / math.sqrt(d), safe=not need_weights)
        out = self.out_proj(out.permute(2, 0, 1, 3).reshape(L, N, self.embed_dim))
        if unbatched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        if unbatched:
            weights = weights.squeeze(0)
        return out, weights

    def _check_attn_mask(self, mask, L, S, N):
        if mask is None:
            return None
        if mask.ndim == 2 and tuple(mask.shape) != (L, S):
            raise RuntimeError(f"The shape of the 2D attn_mask is {mask.shape}, but should be {(L, S)}.")
        if mask.ndim == 3 and tuple(mask.shape) != (N * self.num_heads, L, S):
            raise RuntimeError(f"The shape of the 3D attn_mask is {mask.shape}, but should be "
                               f"{(N * self.num_heads, L, S)}.")
        if mask.ndim not in (2, 3):
            raise RuntimeError(f"attn_mask's dimension {mask.ndim} is not supported")
        return mask

    def extra_repr(self) -> str:
        return ""


def _pad_last(mask):
    """One more key to attend (an added bias or zero key): a zero column at the end of the mask."""
    return None if mask is None else F.pad(mask, (0, 1))
