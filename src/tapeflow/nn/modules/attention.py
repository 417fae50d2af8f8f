"""`MultiheadAttention`."""

from __future__ import annotations

import math

from ... import _dtype, _ops
from ..._factories import empty, zeros
from ..._tensor import as_tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention: `softmax(Q K^T / sqrt(d)) V` per head, then an output projection.

    Arguments:
        embed_dim: model dimension E (split over the heads).
        num_heads: number of heads; must divide E.
        dropout: dropout on the attention weights (training only).
        bias: biases on the input and output projections.
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
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False, device=None,
                 dtype=None):
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
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **kw)
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

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        """Attend `query` to `key`/`value`; returns `(output, weights or None)`.

        Masks follow PyTorch: in a boolean `attn_mask` (`(L, S)` or `(N*heads, L, S)`) or
        `key_padding_mask` (`(N, S)`), True marks a position that may NOT be attended;
        float masks are added to the scores.
        """
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        L, N, _ = query.shape
        S = key.shape[0]
        h, d = self.num_heads, self.head_dim
        q, k, v = self._project(query, key, value)
        # (L, N, E) -> (N, h, L, d)
        q = q.reshape(L, N, h, d).permute(1, 2, 0, 3)
        k = k.reshape(S, N, h, d).permute(1, 2, 0, 3)
        v = v.reshape(S, N, h, d).permute(1, 2, 0, 3)
        mask = self._merge_masks(attn_mask, key_padding_mask, is_causal, N, L, S, q.dtype)
        scores = _ops.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        if mask is not None:
            scores = scores + mask
        weights = _ops.softmax(scores, -1)
        if self.dropout > 0.0 and self.training:
            weights = F.dropout(weights, self.dropout)
        out = _ops.matmul(weights, v).permute(2, 0, 1, 3).reshape(L, N, self.embed_dim)
        out = self.out_proj(out)
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

    def _merge_masks(self, attn_mask, key_padding_mask, is_causal, N, L, S, dtype):
        mask = None
        if attn_mask is None and is_causal:
            attn_mask = _ops.logical_not(_ops.tril(as_tensor([[True] * S] * L)))
        for m, shape in ((attn_mask, None), (key_padding_mask, (N, 1, 1, S))):
            if m is None:
                continue
            if m.dtype is _dtype.bool:
                m = _ops.masked_fill(zeros(*m.shape, dtype=dtype), m, float("-inf"))
            else:
                m = m.to(dtype)
            if shape is not None:
                m = m.reshape(shape)
            elif m.ndim == 3:
                m = m.reshape(N, self.num_heads, L, S)
            elif m.shape != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(m.shape)}, but should be {(L, S)}.")
            mask = m if mask is None else mask + m
        return mask

    def extra_repr(self) -> str:
        return ""
