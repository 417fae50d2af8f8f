"""`Transformer`, `TransformerEncoder(Layer)` and `TransformerDecoder(Layer)`, with PyTorch's defaults,
parameter names (state dicts load both ways) and mask conventions."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

from ... import _dtype
from ...autograd.grad_mode import is_grad_enabled
from .. import functional as F
from .. import init
from .._functional_attention import causal_mask, mismatched_masks
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _activation(activation):
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual and LayerNorm
    (after the residual by default; before the block with `norm_first=True`).

    Arguments:
        d_model: model width; nhead: attention heads; dim_feedforward: hidden width of the feed-forward block.
        dropout: dropout after attention, inside and after the feed-forward block.
        activation: "relu", "gelu" or a callable (a Module is registered as a submodule).
        layer_norm_eps, batch_first, norm_first, bias: as PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> layer = tp.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
        >>> layer(tp.randn(3, 5, 8)).shape
        tapeflow.Size([3, 5, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)
        act = self.activation
        self.activation_relu_or_gelu = (1 if act is F.relu or isinstance(act, ReLU) else
                                        2 if act is F.gelu or isinstance(act, GELU) else 0)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        """`src`: `(S, N, E)` (`(N, S, E)` with batch_first, or unbatched `(S, E)`); masks as in
        `MultiheadAttention` (`src_mask` `(S, S)`, `src_key_padding_mask` `(N, S)`, True = not attended)."""
        src_key_padding_mask, src_mask = mismatched_masks(src_key_padding_mask, "src_key_padding_mask", src_mask,
                                                          "src_mask", src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's `memory`, then a feed-forward block (each with dropout,
    a residual and LayerNorm, placed as `norm_first` says).

    Arguments: as `TransformerEncoderLayer`.

    Example:
        >>> import tapeflow as tp
        >>> layer = tp.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> layer(tp.randn(4, 2, 8), tp.randn(6, 2, 8)).shape
        tapeflow.Size([4, 2, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False):
        """`tgt`: `(T, N, E)`, `memory`: `(S, N, E)` (batch first with batch_first); masks as in
        `MultiheadAttention`."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _why_no_nested(layer) -> str:
    """PyTorch's reasons not to take its padded-batch fast path (see `TransformerEncoder`); "" if it may."""
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    attn = layer.self_attn
    for reason, failed in (("encoder_layer.norm_first was True", layer.norm_first),
                           ("encoder_layer.self_attn.batch_first was not True(use batch_first for better "
                            "inference performance)", not attn.batch_first),
                           ("encoder_layer.self_attn._qkv_same_embed_dim was not True", not attn._qkv_same_embed_dim),
                           ("encoder_layer.self_attn was passed bias=False", attn.in_proj_bias is None),
                           ("encoder_layer.activation_relu_or_gelu was not True", not layer.activation_relu_or_gelu),
                           ("encoder_layer.norm1.eps was not equal to encoder_layer.norm2.eps",
                            layer.norm1.eps != layer.norm2.eps),
                           ("encoder_layer.self_attn.num_heads is odd", attn.num_heads % 2 == 1)):
        if failed:
            return reason
    return ""


class TransformerEncoder(Module):
    """A stack of `num_layers` copies of `encoder_layer` (then `norm`, if given).

    Like PyTorch, in eval mode without gradients, with batch_first layers and a `src_key_padding_mask`
    (padding at the end), padded positions come out as zeros (PyTorch drops them in a nested tensor).

    Example:
        >>> import tapeflow as tp
        >>> layer = tp.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
        >>> tp.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)(tp.randn(5, 3, 8)).shape
        tapeflow.Size([5, 3, 8])
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check
        why = _why_no_nested(encoder_layer)
        self.use_nested_tensor = enable_nested_tensor and not why
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          stacklevel=2)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool | None = None):
        """`src` `(S, N, E)` (batch first as the layers); `mask` `(S, S)`; `src_key_padding_mask` `(N, S)`."""
        src_key_padding_mask, mask = mismatched_masks(src_key_padding_mask, "src_key_padding_mask", mask, "mask",
                                                      src.dtype)
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        if self._drops_padding(src, mask, src_key_padding_mask):
            keep = _padding_as_bool(src_key_padding_mask)
            x = x.masked_fill(keep.unsqueeze(-1), 0.0)
        return x if self.norm is None else self.norm(x)

    def _drops_padding(self, src, mask, kpm) -> bool:
        if not self.use_nested_tensor or self.layers[0].training or src.ndim != 3 or kpm is None or mask is not None:
            return False
        if is_grad_enabled() and (src.requires_grad or any(p.requires_grad for p in self.parameters())):
            return False
        # NOTE: PyTorch only takes that path for padding at the end of each row (a host check, as in PyTorch).
        pad = _padding_as_bool(kpm).numpy()
        return not self.mask_check or bool((pad[:, 1:] >= pad[:, :-1]).all())


def _padding_as_bool(kpm):
    return kpm if kpm.dtype is _dtype.bool else kpm == float("-inf")


class TransformerDecoder(Module):
    """A stack of `num_layers` copies of `decoder_layer` (then `norm`, if given).

    Example:
        >>> import tapeflow as tp
        >>> layer = tp.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
        >>> tp.nn.TransformerDecoder(layer, num_layers=2)(tp.randn(4, 3, 8), tp.randn(5, 3, 8)).shape
        tapeflow.Size([4, 3, 8])
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        if isinstance(getattr(decoder_layer, "activation", None), Module):
            # NOTE: PyTorch's copies of a decoder layer whose activation is a Module compute with ReLU (its
            # unpickling restores a missing `activation` attribute as F.relu, shadowing the submodule). We
            # give the same numbers; the submodule stays registered, as there.
            for layer in self.layers:
                object.__setattr__(layer, "activation", F.relu)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need", with PyTorch's defaults (d_model 512,
    8 heads, 6 + 6 layers, feed-forward 2048, dropout 0.1, final LayerNorms; every matrix Xavier-uniform).

    Example:
        >>> import tapeflow as tp
        >>> model = tp.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
        ...                           dim_feedforward=16, batch_first=True)
        >>> src, tgt = tp.randn(2, 5, 8), tp.randn(2, 4, 8)
        >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(4)).shape
        tapeflow.Size([2, 4, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable = F.relu, custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*args, **kw), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*args, **kw), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False):
        """Encode `src`, decode `tgt` against it; shapes `(S, N, E)` / `(T, N, E)` (or batch first)."""
        batched = src.ndim == 3
        if not self.batch_first and src.shape[1] != tgt.shape[1] and batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.shape[0] != tgt.shape[0] and batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """`(sz, sz)` float mask: `-inf` above the diagonal (a position may not attend later ones), 0 elsewhere.

        Example:
            >>> import tapeflow as tp
            >>> tp.nn.Transformer.generate_square_subsequent_mask(2)
            tensor([[0., -inf],
                    [0., 0.]])
        """
        mask = causal_mask(sz, sz, dtype or _dtype.get_default_dtype())
        return mask if device is None else mask.to(device)
