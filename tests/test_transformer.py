"""Attention and Transformers: scaled_dot_product_attention, MultiheadAttention and the Transformer layers give
PyTorch's outputs and gradients (inputs, masks and every parameter) given PyTorch's weights."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

RNG = np.random.default_rng(0)


def _t(lib, a, grad=False):
    dt = lib.bool if a.dtype == bool else lib.float64
    return lib.tensor(a, dtype=dt, requires_grad=grad and a.dtype != bool)


def _close(a, b, what, tol=1e-10):
    a, b = (x.detach().numpy() if hasattr(x, "detach") else x for x in (a, b))
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)


# -- scaled_dot_product_attention ------------------------------------------------------------------------------
def _full_row_masked(shape):
    m = RNG.random(shape) > 0.3
    m[..., 1, :] = False  # query 1 may attend nothing
    return m


SDPA = {
    "plain": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 2), {}, None),
    "bool mask with a dead row": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {}, _full_row_masked((4, 6))),
    "float mask": ((2, 4, 5), (2, 6, 5), (2, 6, 3), {}, RNG.normal(size=(2, 4, 6))),
    "causal L<S": ((1, 2, 4, 3), (1, 2, 6, 3), (1, 2, 6, 3), dict(is_causal=True), None),
    "causal with scale": ((2, 5, 3), (2, 5, 3), (2, 5, 3), dict(is_causal=True, scale=0.3), None),
    "gqa": ((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 4), dict(enable_gqa=True), None),
}


def _sdpa(lib, name):
    qs, ks, vs, kw, mask = SDPA[name]
    r = np.random.default_rng(1)
    q, k, v = (_t(lib, r.normal(size=s), True) for s in (qs, ks, vs))
    m = None if mask is None else _t(lib, mask, True)
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
    (out * _t(lib, r.normal(size=tuple(out.shape)))).sum().backward()
    return [out] + [t.grad for t in (q, k, v)] + ([m.grad] if m is not None and m.requires_grad else [])


@pytest.mark.parametrize("name", sorted(SDPA))
def test_scaled_dot_product_attention_equals_pytorch(name):
    mine, theirs = _sdpa(tp, name), _sdpa(torch, name)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        _close(a, b, f"{name}: output/gradient {i}")
    if "dead row" in name:
        assert float(mine[0][:, :, 1].abs().sum()) == 0.0 and np.isfinite(mine[1].numpy()).all()


def test_sdpa_dropout_and_bad_inputs():
    q = tp.ones(2, 3, 4, dtype=tp.float64)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        tp.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=tp.ones(3, 3), is_causal=True)
    assert float(tp.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=1.0).abs().sum()) == 0.0
    tp.manual_seed(0)
    out = tp.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert np.allclose(np.unique(out.numpy()) * 3, np.round(np.unique(out.numpy()) * 3))  # 0, 2/3, 4/3, 2
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide the number of heads in"):
        tp.nn.functional.scaled_dot_product_attention(tp.ones(1, 3, 2, 4), tp.ones(1, 2, 2, 4), tp.ones(1, 2, 2, 4),
                                                      enable_gqa=True)


# -- modules ----------------------------------------------------------------------------------------------------
def _pair(ctor):
    """The module built by `ctor(lib)` in both libraries, tapeflow's loaded with PyTorch's state dict."""
    torch.manual_seed(0)
    theirs = ctor(torch).double()
    mine = ctor(tp).double()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: tp.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


def _compare(ctor, inputs, call=lambda m, *a, **kw: m(*a, **kw), masks=None, what="", train=False):
    mine, theirs = _pair(ctor)
    results = []
    for lib, mod in ((tp, mine), (torch, theirs)):
        mod.train(train)
        xs = [_t(lib, a, True) for a in inputs]
        kw = {k: (None if v is None else _t(lib, v)) for k, v in (masks or {}).items()}
        out = call(mod, *xs, **kw)
        out = out[0] if isinstance(out, tuple) else out
        r = np.random.default_rng(5)
        (out * _t(lib, r.normal(size=tuple(out.shape)))).sum().backward()
        grads = [x.grad for x in xs] + [p.grad for _, p in sorted(mod.named_parameters())]
        results.append([out, *grads])
    for i, (a, b) in enumerate(zip(*results)):
        _close(a, b, f"{what}: output/gradient {i}")
    return mine


def _causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


def _padding(n, s, lengths):
    return np.arange(s)[None, :] >= np.array(lengths)[:, None]


MHA = {
    "kdim vdim, padding, a dead row without weights": (
        dict(embed_dim=8, num_heads=2, kdim=5, vdim=3, batch_first=True), ((2, 4, 8), (2, 5, 5), (2, 5, 3)),
        dict(key_padding_mask=_padding(2, 5, [0, 3])), dict(need_weights=False)),
    "bias_kv zero_attn, 3-d float mask, per-head weights": (
        dict(embed_dim=8, num_heads=2, add_bias_kv=True, add_zero_attn=True), ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
        dict(attn_mask=RNG.normal(size=(4, 4, 5)), key_padding_mask=_padding(2, 5, [2, 5])),
        dict(average_attn_weights=False)),
    "unbatched, no bias, causal hint": (dict(embed_dim=8, num_heads=2, bias=False), ((4, 8), (4, 8), (4, 8)),
                                        dict(attn_mask=_causal(4)), dict(is_causal=True, need_weights=False)),
}


@pytest.mark.parametrize("name", sorted(MHA))
def test_multihead_attention_equals_pytorch(name):
    kwargs, shapes, masks, *extra = MHA[name]
    extra = extra[0] if extra else {}
    inputs = [RNG.normal(size=s) for s in shapes]

    def call(m, q, k, v, **kw):
        out, w = m(q, k, v, **kw, **extra)
        return out if w is None else out.sum() * 0.5 + (w * w).sum() + out.pow(2).sum(-1, keepdim=True)

    _compare(lambda lib: lib.nn.MultiheadAttention(**kwargs), inputs, call, masks, name)


def test_multihead_attention_errors_and_nan_rows():
    mha = tp.nn.MultiheadAttention(8, 2).double()
    x = tp.tensor(RNG.normal(size=(3, 2, 8)))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        mha(x, x, x, attn_mask=tp.zeros(2, 3))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        mha(x, x, x, key_padding_mask=tp.zeros(2, 3, dtype=tp.int64))
    dead = tp.tensor([[True] * 3, [False] * 3])
    out, _ = mha(x, x, x, key_padding_mask=dead)
    out = out.detach().numpy()
    assert np.isnan(out[:, 0]).all() and not np.isnan(out[:, 1]).any()  # as PyTorch's need_weights path


def _mha_functional(lib, name):
    """`F.multi_head_attention_forward` with the weights given directly (sequence-first inputs), its output,
    weights and the gradients of every input and weight."""
    r = np.random.default_rng(7)
    E, h, L, S, N = 8, 2, 4, 5, 3
    separate = "separate" in name
    kv = (S, N, 6) if separate else (S, N, E)
    arrays = {"q": (L, N, E), "k": kv, "v": kv, "out_w": (E, E), "out_b": (E,), "in_b": (3 * E,)}
    arrays.update({"q_w": (E, E), "k_w": (E, 6), "v_w": (E, 6)} if separate else {"in_w": (3 * E, E)})
    if "bias_kv" in name:
        arrays.update(bias_k=(1, 1, E), bias_v=(1, 1, E))
    if "static" in name:
        arrays.update(static_k=(N * h, 7, E // h), static_v=(N * h, 7, E // h))
    t = {k: _t(lib, r.normal(size=s), True) for k, s in arrays.items()}
    q, k, v = t["q"], t["k"], t["v"]
    kw = dict(need_weights="no weights" not in name, average_attn_weights="per head" not in name)
    src = 7 + ("zero" in name) if "static" in name else S + ("bias_kv" in name) + ("zero" in name)
    if "masks" in name:
        kw.update(attn_mask=_t(lib, r.normal(size=(N * h, L, S))), key_padding_mask=_t(lib, _padding(N, S, [5, 2, 4])))
    if "causal" in name:
        kw.update(attn_mask=_t(lib, _causal(L)[:, :S] if S == L else np.triu(np.full((L, S), -np.inf), 1)),
                  is_causal=True)
    if "static" in name:
        kw.update(static_k=t["static_k"], static_v=t["static_v"])
    if "unbatched" in name:
        q, k, v = q[:, 0], k[:, 0], v[:, 0]
    out, w = lib.nn.functional.multi_head_attention_forward(
        q, k, v, E, h, t.get("in_w"), t["in_b"], t.get("bias_k"), t.get("bias_v"), "zero" in name, 0.0, t["out_w"],
        t["out_b"], use_separate_proj_weight=separate, q_proj_weight=t.get("q_w"), k_proj_weight=t.get("k_w"),
        v_proj_weight=t.get("v_w"), **kw)
    loss = (out * out).sum() + (0 if w is None else (w * _t(lib, r.normal(size=tuple(w.shape)))).sum())
    loss.backward()
    assert w is None or w.shape[-1] == src
    return [out, *([] if w is None else [w])] + [t[k].grad for k in sorted(t)]


MHA_FUNCTIONAL = ["packed", "separate projections, masks", "bias_kv zero, per head", "static k v, zero",
                  "unbatched, no weights", "causal, no weights", "packed masks, no weights"]


@pytest.mark.parametrize("name", MHA_FUNCTIONAL)
def test_multi_head_attention_forward_equals_pytorch(name):
    mine, theirs = _mha_functional(tp, name), _mha_functional(torch, name)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if b is None:
            assert a is None or not a.abs().sum().item(), f"{name}: {i}"
        else:
            _close(a, b, f"{name}: output/gradient {i}")


def test_multi_head_attention_forward_refuses_bad_inputs_as_pytorch():
    def call(lib, q=(3, 2, 8), k=(3, 2, 8), v=(3, 2, 8), E=8, h=2, in_w=(24, 8), **kw):
        arr = {n: lib.ones(*s) if isinstance(s, tuple) else s for n, s in dict(q=q, k=k, v=v, in_w=in_w).items()}
        kw = {n: lib.ones(*a) if isinstance(a, tuple) else a for n, a in kw.items()}
        return lib.nn.functional.multi_head_attention_forward(
            arr["q"], arr["k"], arr["v"], E, h, arr["in_w"], None, kw.pop("bias_k", None), kw.pop("bias_v", None),
            False, 0.0, lib.ones(8, 8), None, **kw)

    cases = {
        "embed": dict(E=6), "heads": dict(h=3), "rank": dict(q=(3, 8)), "4-d": dict(q=(1, 3, 2, 8)),
        "kv shapes": dict(v=(4, 2, 8)), "no in_proj": dict(in_w=None), "mask rank": dict(attn_mask=(3,)),
        "2d mask": dict(attn_mask=(3, 4)), "3d mask": dict(attn_mask=(2, 3, 3)), "kpm": dict(key_padding_mask=(2, 4)),
        "kpm rank": dict(key_padding_mask=(2,)), "causal": dict(is_causal=True),
        "bias_k only": dict(bias_k=(1, 1, 8)), "static": dict(static_k=(4, 3, 5)),
        "static heads": dict(static_v=(3, 3, 4)), "static with bias": dict(bias_k=(1, 1, 8), bias_v=(1, 1, 8),
                                                                          static_k=(4, 3, 4)),
        "separate missing": dict(use_separate_proj_weight=True),
    }
    for name, kw in cases.items():
        with pytest.raises(Exception) as theirs:
            call(torch, **kw)
        with pytest.raises(type(theirs.value)) as mine:
            call(tp, **kw)
        expected = str(theirs.value).replace("torch.Size", "tapeflow.Size")
        assert str(mine.value) == expected, name


LAYERS = {
    "encoder layer post-norm, masks": (
        lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), [(4, 2, 8)],
        dict(src_mask=_causal(4), src_key_padding_mask=_padding(2, 4, [4, 2]))),
    "encoder layer norm_first gelu batch_first, no bias": (
        lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", norm_first=True,
                                                   batch_first=True, layer_norm_eps=1e-3, bias=False), [(2, 4, 8)],
        dict(src_key_padding_mask=_padding(2, 4, [3, 4]))),
    "decoder layer with all masks": (
        lambda lib: lib.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), [(4, 2, 8), (5, 2, 8)],
        dict(tgt_mask=_causal(4), memory_mask=RNG.random((4, 5)) > 0.8, tgt_key_padding_mask=_padding(2, 4, [4, 3]),
             memory_key_padding_mask=_padding(2, 5, [5, 4]))),
    "transformer batch_first, padding": (
        lambda lib: lib.nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, batch_first=True), [(2, 5, 8), (2, 4, 8)],
        dict(tgt_mask=_causal(4), src_key_padding_mask=_padding(2, 5, [5, 2]),
             memory_key_padding_mask=_padding(2, 5, [5, 2]))),
    "transformer norm_first, callable activation": (
        lambda lib: lib.nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, activation=lib.nn.Tanh(), norm_first=True),
        [(5, 2, 8), (4, 2, 8)], dict(tgt_mask=_causal(4))),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_transformer_layers_equal_pytorch(name):
    ctor, shapes, masks = LAYERS[name]
    _compare(ctor, [RNG.normal(size=s) for s in shapes], masks=masks, what=name)


def _defaults(cls):
    import inspect

    return {k: getattr(v.default, "__name__", v.default) for k, v in inspect.signature(cls).parameters.items()}


def test_transformer_defaults_init_and_mask():
    for name in ("Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
                 "TransformerDecoder", "MultiheadAttention"):
        assert _defaults(getattr(tp.nn, name)) == _defaults(getattr(torch.nn, name)), name
    mine, theirs = tp.nn.Transformer(8, 2, 2, 1, 16), torch.nn.Transformer(8, 2, 2, 1, 16)
    names = [(k, tuple(v.shape)) for k, v in mine.state_dict().items()]
    assert names == [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()] and len(names) == 46
    layer = mine.encoder.layers[0]
    assert layer.dropout.p == layer.dropout1.p == 0.1 and layer.norm1.eps == 1e-5 and not layer.norm_first
    w = layer.self_attn.in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (8 + 3 * 8))  # Xavier-uniform over every matrix
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert mine.encoder.layers[0].linear1.weight is not mine.encoder.layers[1].linear1.weight
    _close(tp.nn.Transformer.generate_square_subsequent_mask(4), torch.nn.Transformer.generate_square_subsequent_mask(
        4), "mask", 0)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        tp.nn.TransformerEncoderLayer(4, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        mine(tp.zeros(3, 2, 8), tp.zeros(3, 1, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        mine(tp.zeros(3, 2, 8), tp.zeros(3, 2, 5))


def test_dropout_acts_in_training_only():
    layer = tp.nn.TransformerEncoderLayer(8, 2, 16, dropout=1.0).double()
    x = tp.tensor(RNG.normal(size=(4, 2, 8)))
    with tp.no_grad():
        # Every residual branch is dropped: the layer is its two LayerNorms.
        _close(layer(x), layer.norm2(layer.norm1(x)), "training", 1e-12)
        layer.eval()
        assert not np.allclose(layer(x).numpy(), layer.norm2(layer.norm1(x)).numpy())


def test_eval_encoder_zeroes_padding_like_pytorchs_nested_path():
    def ctor(lib):
        return lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)

    mine, theirs = _pair(ctor)
    x, pad = RNG.normal(size=(2, 5, 8)), _padding(2, 5, [5, 3])
    outs = []
    for lib, mod in ((tp, mine), (torch, theirs)):
        mod.eval()
        with lib.no_grad():
            outs.append(mod(_t(lib, x), src_key_padding_mask=_t(lib, pad)))
    _close(outs[0], outs[1], "eval with padding")
    assert float(outs[0][1, 3:].abs().sum()) == 0.0
    with pytest.warns(UserWarning, match="self.use_nested_tensor is False because encoder_layer.norm_first"):
        tp.nn.TransformerEncoder(tp.nn.TransformerEncoderLayer(8, 2, 16, norm_first=True), 1)


def test_mismatched_mask_types_warn_once_as_pytorch():
    """A boolean padding mask with a float attention mask: PyTorch's deprecation warning, once per call, named
    after the outermost module's arguments; same-typed masks do not warn; the output is that of float masks."""
    import warnings

    tp.manual_seed(0)
    enc = tp.nn.TransformerEncoder(tp.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
                                   enable_nested_tensor=False)
    x = tp.randn(2, 3, 8)
    pad = tp.tensor([[False, False, True]] * 2)
    cases = [(enc, lambda m, am, kpm: m(x, mask=am, src_key_padding_mask=kpm), "src_key_padding_mask and mask"),
             (enc.layers[0], lambda m, am, kpm: m(x, src_mask=am, src_key_padding_mask=kpm),
              "src_key_padding_mask and src_mask"),
             (enc.layers[0].self_attn, lambda m, am, kpm: m(x, x, x, attn_mask=am, key_padding_mask=kpm)[0],
              "key_padding_mask and attn_mask")]
    for module, call, names in cases:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = call(module, tp.zeros(3, 3), pad)
        assert [str(w.message) for w in seen] == [
            f"Support for mismatched {names} is deprecated. Use same type for both instead."]
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            same = call(module, tp.zeros(3, 3), tp.zeros(2, 3).masked_fill(pad, float("-inf")))
        assert not seen
        tp.testing.assert_close(out, same)
