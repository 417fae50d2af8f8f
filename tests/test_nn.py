"""tapeflow.nn: Module mechanics, and every layer's forward and gradients against PyTorch."""

from __future__ import annotations

import copy
import io
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn as nn
import tapeflow.nn.functional as F

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _copy_params(tp_mod, th_mod):
    """Give the tapeflow module the PyTorch module's parameters and buffers."""
    sd = {k: tp.tensor(v.detach().numpy()) for k, v in th_mod.state_dict().items()}
    tp_mod.load_state_dict(sd)


# -- layer parity: (name, tapeflow ctor, torch ctor, input shape, input kind) ------------------------
LAYERS = [
    ("linear", lambda: nn.Linear(5, 3), lambda: torch.nn.Linear(5, 3), (4, 5)),
    ("linear_3d_nobias", lambda: nn.Linear(5, 3, bias=False), lambda: torch.nn.Linear(5, 3, bias=False), (2, 4, 5)),
    ("conv1d", lambda: nn.Conv1d(2, 3, 3, padding=1), lambda: torch.nn.Conv1d(2, 3, 3, padding=1), (2, 2, 7)),
    ("conv2d", lambda: nn.Conv2d(2, 4, 3, stride=2, padding=1), lambda: torch.nn.Conv2d(2, 4, 3, stride=2, padding=1),
     (2, 2, 7, 7)),
    ("conv2d_same_dil_groups", lambda: nn.Conv2d(4, 4, (3, 2), padding="same", dilation=2, groups=2),
     lambda: torch.nn.Conv2d(4, 4, (3, 2), padding="same", dilation=2, groups=2), (1, 4, 6, 5)),
    ("conv2d_reflect", lambda: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
     lambda: torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (1, 2, 5, 5)),
    ("conv1d_circular_same", lambda: nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular"),
     lambda: torch.nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular"), (1, 2, 6)),
    ("conv_transpose2d", lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2),
     lambda: torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2), (2, 4, 3, 4)),
    ("conv_transpose2d_dil", lambda: nn.ConvTranspose2d(2, 3, 2, dilation=2, bias=False),
     lambda: torch.nn.ConvTranspose2d(2, 3, 2, dilation=2, bias=False), (1, 2, 3, 3)),
    ("batchnorm1d", lambda: nn.BatchNorm1d(3), lambda: torch.nn.BatchNorm1d(3), (6, 3)),
    ("batchnorm2d", lambda: nn.BatchNorm2d(3), lambda: torch.nn.BatchNorm2d(3), (4, 3, 2, 2)),
    ("layernorm", lambda: nn.LayerNorm((3, 4)), lambda: torch.nn.LayerNorm((3, 4)), (2, 3, 4)),
    ("groupnorm", lambda: nn.GroupNorm(2, 4), lambda: torch.nn.GroupNorm(2, 4), (3, 4, 5)),
    ("maxpool", lambda: nn.MaxPool2d(3, 2, padding=1), lambda: torch.nn.MaxPool2d(3, 2, padding=1), (2, 2, 7, 7)),
    ("maxpool_ceil", lambda: nn.MaxPool2d(2, ceil_mode=True), lambda: torch.nn.MaxPool2d(2, ceil_mode=True),
     (1, 2, 5, 5)),
    ("avgpool", lambda: nn.AvgPool2d(3, 2, padding=1), lambda: torch.nn.AvgPool2d(3, 2, padding=1), (2, 2, 6, 6)),
    ("avgpool_nopad_ceil", lambda: nn.AvgPool2d(2, ceil_mode=True, count_include_pad=False),
     lambda: torch.nn.AvgPool2d(2, ceil_mode=True, count_include_pad=False), (1, 2, 5, 5)),
    ("adaptive", lambda: nn.AdaptiveAvgPool2d((3, 2)), lambda: torch.nn.AdaptiveAvgPool2d((3, 2)), (2, 2, 7, 5)),
    ("flatten", lambda: nn.Flatten(), lambda: torch.nn.Flatten(), (2, 3, 4)),
    ("relu", nn.ReLU, torch.nn.ReLU, (3, 4)),
    ("gelu", nn.GELU, torch.nn.GELU, (3, 4)),
    ("gelu_tanh", lambda: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh"), (3, 4)),
    ("silu", nn.SiLU, torch.nn.SiLU, (3, 4)),
    ("tanh", nn.Tanh, torch.nn.Tanh, (3, 4)),
    ("sigmoid", nn.Sigmoid, torch.nn.Sigmoid, (3, 4)),
    ("softmax", lambda: nn.Softmax(1), lambda: torch.nn.Softmax(1), (3, 4)),
    ("logsoftmax", lambda: nn.LogSoftmax(-1), lambda: torch.nn.LogSoftmax(-1), (3, 4)),
    ("leaky_relu", lambda: nn.LeakyReLU(0.2), lambda: torch.nn.LeakyReLU(0.2), (3, 4)),
    ("elu", lambda: nn.ELU(0.5), lambda: torch.nn.ELU(0.5), (3, 4)),
]


@pytest.mark.parametrize("name,make_tp,make_th,shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(name, make_tp, make_th, shape):
    torch.manual_seed(0)
    th_mod = make_th().double()
    tp_mod = make_tp().double()
    _copy_params(tp_mod, th_mod)
    x_np = np.random.default_rng(1).normal(size=shape)
    xt = torch.tensor(x_np, requires_grad=True)
    xp = tp.tensor(x_np, requires_grad=True)
    yt, yp = th_mod(xt), tp_mod(xp)
    _close(yp, yt, 1e-7, 1e-9)
    g_np = np.random.default_rng(2).normal(size=tuple(yt.shape))
    yt.backward(torch.tensor(g_np))
    yp.backward(tp.tensor(g_np))
    _close(xp.grad, xt.grad, 1e-7, 1e-9)
    th_params = dict(th_mod.named_parameters())
    for k, p in tp_mod.named_parameters():
        _close(p.grad, th_params[k].grad, 1e-7, 1e-9)


def test_embedding_padding_idx_matches_torch():
    th = torch.nn.Embedding(6, 3, padding_idx=1).double()
    mine = nn.Embedding(6, 3, padding_idx=1).double()
    _copy_params(mine, th)
    idx = np.array([[1, 2, 2], [5, 1, 0]])
    yt, yp = th(torch.tensor(idx)), mine(tp.tensor(idx))
    _close(yp, yt)
    assert yp.grad_fn.name() == "EmbeddingBackward0"
    (yt ** 2).sum().backward()
    (yp ** 2).sum().backward()
    _close(mine.weight.grad, th.weight.grad)
    assert float(mine.weight.grad[1].abs().sum()) == 0.0


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_matches_torch(batch_first):
    torch.manual_seed(0)
    th = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
    mine = nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
    _copy_params(mine, th)
    rng = np.random.default_rng(0)
    q_np, kv_np = rng.normal(size=(3, 4, 8)), rng.normal(size=(3, 5, 8))
    if not batch_first:
        q_np, kv_np = q_np.transpose(1, 0, 2), kv_np.transpose(1, 0, 2)
    mask = np.zeros((3, 5), bool)
    mask[0, -1] = True
    qt, kvt = torch.tensor(q_np, requires_grad=True), torch.tensor(kv_np)
    qp, kvp = tp.tensor(q_np, requires_grad=True), tp.tensor(kv_np)
    ot, wt = th(qt, kvt, kvt, key_padding_mask=torch.tensor(mask))
    op, wp = mine(qp, kvp, kvp, key_padding_mask=tp.tensor(mask))
    _close(op, ot)
    _close(wp, wt)
    ot.sum().backward()
    op.sum().backward()
    _close(qp.grad, qt.grad)
    _close(mine.in_proj_weight.grad, th.in_proj_weight.grad)
    out, w = mine(qp, kvp, kvp, need_weights=False)
    assert w is None


# -- losses ------------------------------------------------------------------------------------------------
def _cls_data(shape=(5, 4)):
    rng = np.random.default_rng(3)
    x = rng.normal(size=shape)
    t = rng.integers(0, shape[1], size=(shape[0],) + shape[2:])
    return x, t


LOSSES = [
    ("ce", lambda F_, x, t, w: F_.cross_entropy(x, t)),
    ("ce_sum_weight", lambda F_, x, t, w: F_.cross_entropy(x, t, weight=w, reduction="sum")),
    ("ce_ignore_mean_weight", lambda F_, x, t, w: F_.cross_entropy(x, t, weight=w, ignore_index=2)),
    ("ce_smooth", lambda F_, x, t, w: F_.cross_entropy(x, t, weight=w, label_smoothing=0.2, ignore_index=1)),
    ("ce_none", lambda F_, x, t, w: F_.cross_entropy(x, t, reduction="none")),
    ("nll", lambda F_, x, t, w: F_.nll_loss(F_.log_softmax(x, 1), t, weight=w, ignore_index=0)),
]


@pytest.mark.parametrize("name,fn", LOSSES, ids=[c[0] for c in LOSSES])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2)], ids=["2d", "spatial"])
def test_classification_losses_match_torch(name, fn, shape):
    x_np, t_np = _cls_data(shape)
    w_np = np.array([0.5, 1.0, 2.0, 1.5])
    xt = torch.tensor(x_np, requires_grad=True)
    xp = tp.tensor(x_np, requires_grad=True)
    lt = fn(torch.nn.functional, xt, torch.tensor(t_np), torch.tensor(w_np))
    lp = fn(F, xp, tp.tensor(t_np), tp.tensor(w_np))
    _close(lp, lt, 1e-10, 1e-12)
    lt.sum().backward()
    lp.sum().backward()
    _close(xp.grad, xt.grad, 1e-10, 1e-12)


def test_cross_entropy_probability_targets_and_node():
    rng = np.random.default_rng(4)
    x_np = rng.normal(size=(3, 5))
    p_np = rng.dirichlet(np.ones(5), size=3)
    xt, pt = torch.tensor(x_np, requires_grad=True), torch.tensor(p_np, requires_grad=True)
    xp, pp = tp.tensor(x_np, requires_grad=True), tp.tensor(p_np, requires_grad=True)
    lt = torch.nn.functional.cross_entropy(xt, pt, label_smoothing=0.1)
    lp = F.cross_entropy(xp, pp, label_smoothing=0.1)
    _close(lp, lt, 1e-10, 1e-12)
    lt.backward()
    lp.backward()
    _close(xp.grad, xt.grad, 1e-10, 1e-12)
    _close(pp.grad, pt.grad, 1e-10, 1e-12)
    assert F.cross_entropy(xp, tp.tensor([0, 1, 2])).grad_fn.name() == "NllLossBackward0"


REGRESSION = [
    ("mse", lambda F_, a, b: F_.mse_loss(a, b)),
    ("l1_sum", lambda F_, a, b: F_.l1_loss(a, b, reduction="sum")),
    ("smooth_l1", lambda F_, a, b: F_.smooth_l1_loss(a, b, beta=0.5)),
    ("bce", lambda F_, a, b: F_.binary_cross_entropy(F_.sigmoid(a), b.clamp(0, 1))),
    ("bce_logits", lambda F_, a, b: F_.binary_cross_entropy_with_logits(a, b.clamp(0, 1), reduction="none")),
    ("kl_batchmean", lambda F_, a, b: F_.kl_div(F_.log_softmax(a, 1), F_.softmax(b, 1), reduction="batchmean")),
    ("kl_log_target", lambda F_, a, b: F_.kl_div(a, b, reduction="sum", log_target=True)),
]


@pytest.mark.parametrize("name,fn", REGRESSION, ids=[c[0] for c in REGRESSION])
def test_pointwise_losses_match_torch(name, fn):
    rng = np.random.default_rng(5)
    a_np, b_np = rng.normal(size=(4, 3)), rng.uniform(0, 1, size=(4, 3))
    at = torch.tensor(a_np, requires_grad=True)
    ap = tp.tensor(a_np, requires_grad=True)
    lt, lp = fn(torch.nn.functional, at, torch.tensor(b_np)), fn(F, ap, tp.tensor(b_np))
    _close(lp, lt, 1e-10, 1e-12)
    lt.sum().backward()
    lp.sum().backward()
    _close(ap.grad, at.grad, 1e-10, 1e-12)


def test_loss_modules_and_reduction_errors():
    x, t = tp.zeros(2, 3), tp.tensor([0, 2])
    assert math.isclose(nn.CrossEntropyLoss()(x, t).item(), math.log(3), rel_tol=1e-6)
    assert nn.MSELoss(reduction="none")(tp.zeros(2), tp.ones(2)).shape == (2,)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(tp.zeros(2), tp.ones(2), reduction="avg")
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target batch_size \(3\)"):
        F.cross_entropy(tp.zeros(2, 3), tp.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 5\]"):
        F.cross_entropy(tp.zeros(2, 3, 4), tp.zeros(2, 5, dtype=tp.int64))


# -- functional extras ------------------------------------------------------------------------------------
def test_functional_extras_match_torch():
    rng = np.random.default_rng(6)
    x_np = rng.normal(size=(2, 3, 4))
    xt, xp = torch.tensor(x_np), tp.tensor(x_np)
    tf = torch.nn.functional
    _close(F.softplus(xp, beta=2.0), tf.softplus(xt, beta=2.0))
    _close(F.normalize(xp, dim=-1), tf.normalize(xt, dim=-1))
    for mode in ("constant", "reflect", "replicate", "circular"):
        _close(F.pad(xp, (1, 2, 2, 1), mode=mode), tf.pad(xt, (1, 2, 2, 1), mode=mode))
    _close(F.pad(xp, (-1, 1)), tf.pad(xt, (-1, 1)))
    _close(F.one_hot(tp.tensor([0, 3, 1])), tf.one_hot(torch.tensor([0, 3, 1])))
    q, k, v = (rng.normal(size=(2, 3, 4)) for _ in range(3))
    ref = tf.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)), is_causal=True)
    _close(F.scaled_dot_product_attention(*(tp.tensor(a) for a in (q, k, v)), is_causal=True), ref)


def test_dropout_uses_global_generator_and_eval_is_identity():
    d = nn.Dropout(0.5)
    tp.manual_seed(0)
    a = d(tp.ones(100))
    tp.manual_seed(0)
    b = d(tp.ones(100))
    tp.testing.assert_close(a, b)
    assert set(np.unique(a.numpy()).tolist()) <= {0.0, 2.0}
    assert 20 < int((a == 0).sum()) < 80
    d.eval()
    tp.testing.assert_close(d(tp.ones(5)), tp.ones(5))
    x = tp.ones(4, requires_grad=True)
    F.dropout(x, 1.0).sum().backward()
    assert float(x.grad.sum()) == 0.0


def test_batchnorm_running_stats_match_torch_over_steps():
    th = torch.nn.BatchNorm2d(3, momentum=0.3)
    mine = nn.BatchNorm2d(3, momentum=0.3)
    rng = np.random.default_rng(7)
    for _ in range(4):
        x = rng.normal(2.0, 3.0, size=(4, 3, 2, 2)).astype(np.float32)
        th(torch.tensor(x))
        mine(tp.tensor(x))
    _close(mine.running_mean, th.running_mean)
    _close(mine.running_var, th.running_var)
    assert int(mine.num_batches_tracked) == 4
    th.eval()
    mine.eval()
    x = rng.normal(size=(2, 3, 2, 2)).astype(np.float32)
    _close(mine(tp.tensor(x)), th(torch.tensor(x)))
    cma_th, cma = torch.nn.BatchNorm1d(2, momentum=None), nn.BatchNorm1d(2, momentum=None)
    for _ in range(3):
        x = rng.normal(size=(5, 2)).astype(np.float32)
        cma_th(torch.tensor(x))
        cma(tp.tensor(x))
    _close(cma.running_var, cma_th.running_var)


def test_eval_does_not_touch_grad_mode():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.3)).eval()
    assert not m.training and not m[1].training
    assert tp.is_grad_enabled()
    assert m(tp.ones(1, 2)).requires_grad


# -- Module mechanics -----------------------------------------------------------------------------------------
class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2, 3))
        self.scale = nn.Parameter(tp.ones(1))
        self.register_buffer("steps", tp.zeros(()), persistent=False)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.bn(self.conv(x)), 1)) * self.scale


def test_module_registration_and_iteration():
    net = _Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight", "head.1.bias"]
    assert all(isinstance(p, tp.Tensor) and isinstance(p, nn.Parameter) for p in net.parameters())
    assert [n for n, _ in net.named_buffers()] == ["steps", "bn.running_mean", "bn.running_var",
                                                   "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["conv", "bn", "head"]
    assert len(list(net.modules())) == 6
    assert "steps" not in net.state_dict() and "bn.num_batches_tracked" in net.state_dict()
    del net.scale
    assert "scale" not in dict(net.named_parameters())
    net.scale = None
    with pytest.raises(TypeError, match="cannot assign"):
        nn.Linear(2, 2).weight = tp.ones(2, 2)


def test_state_dict_roundtrip_and_errors():
    a, b = _Net(), _Net()
    sd = a.state_dict()
    assert not sd["conv.weight"].requires_grad
    before = b.conv.weight
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert b.conv.weight is before
    tp.testing.assert_close(b.conv.weight, a.conv.weight)
    bad = dict(sd)
    bad.pop("conv.bias")
    bad["extra"] = tp.zeros(1)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "conv.bias"') as e:
        b.load_state_dict(bad)
    assert 'Unexpected key(s) in state_dict: "extra"' in str(e.value)
    res = b.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["conv.bias"] and res.unexpected_keys == ["extra"]
    bad = dict(sd, **{"head.1.weight": tp.zeros(4, 2)})
    with pytest.raises(RuntimeError, match="size mismatch for head.1.weight"):
        b.load_state_dict(bad)
    blob = pickle.dumps(a.state_dict())
    c = _Net()
    c.load_state_dict(pickle.loads(blob))
    tp.testing.assert_close(c.head[1].bias, a.head[1].bias)
    buf = io.BytesIO()
    tp.save({"model": a.state_dict(), "step": 3}, buf)
    buf.seek(0)
    saved = tp.load(buf)
    assert saved["step"] == 3 and saved["model"]["bn.num_batches_tracked"].dtype == tp.int64
    tp.testing.assert_close(saved["model"]["conv.weight"], a.conv.weight.detach())


def test_train_eval_zero_grad_to_apply_requires_grad():
    net = _Net()
    net(tp.randn(2, 1, 5, 5)).sum().backward()
    assert net.conv.weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert float(net.conv.weight.grad.abs().sum()) == 0.0
    net.zero_grad()
    assert net.conv.weight.grad is None
    assert net.eval() is net and not net.bn.training and net.train().bn.training
    w = net.conv.weight
    net.to(tp.float64)
    assert net.conv.weight is w and w.dtype == tp.float64 and net.bn.num_batches_tracked.dtype == tp.int64
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "_Net" and seen[0] == "Conv2d"
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    clone = copy.deepcopy(net)
    assert clone.conv.weight is not net.conv.weight
    tp.testing.assert_close(clone.conv.weight, net.conv.weight)


def test_hooks_forward_and_full_backward():
    lin = nn.Linear(3, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = lin.register_forward_hook(lambda m, args, out: out + 1)
    seen = {}

    def bhook(m, gi, go):
        seen["gi"], seen["go"] = gi, go
        calls.append(1)
        return (gi[0] * 10,)

    h3 = lin.register_full_backward_hook(bhook)
    x = tp.ones(4, 3, requires_grad=True)
    y = lin(x)
    expected = F.linear(x * 2, lin.weight, lin.bias) + 1
    tp.testing.assert_close(y, expected)
    y.sum().backward()
    assert calls == [1]
    assert seen["go"][0].shape == (4, 2)
    tp.testing.assert_close(seen["gi"][0], tp.ones(4, 2) @ lin.weight.detach())
    tp.testing.assert_close(x.grad, 10 * 2 * (tp.ones(4, 2) @ lin.weight.detach()))
    order = []
    h4 = lin.register_forward_pre_hook(lambda m, args, kwargs: order.append("kw") or (args, kwargs), with_kwargs=True)
    h5 = lin.register_forward_pre_hook(lambda m, args: order.append("first"), prepend=True)
    lin(x)
    assert order == ["first", "kw"]
    for h in (h1, h2, h3, h4, h5):
        h.remove()
    x.grad = None
    lin(x).sum().backward()
    assert calls == [1]
    tp.testing.assert_close(x.grad, tp.ones(4, 2) @ lin.weight.detach())
    # No input needs grad: the hook still sees grad_output, with grad_input all None.
    got = []
    lin.register_full_backward_hook(lambda m, gi, go: got.append((gi, go[0].shape)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect "
                                         "to module outputs since no inputs require gradients"):
        lin(tp.ones(1, 3)).sum().backward()
    assert got == [((None,), (1, 2))]


def test_repr_and_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert repr(seq) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n"
                         "  (2): Linear(in_features=3, out_features=1, bias=True)\n)")
    assert isinstance(seq[0:2], nn.Sequential) and len(seq[0:2]) == 2 and seq[-1] is seq[2]
    assert repr(nn.Parameter(tp.tensor([1.0]))) == "Parameter containing:\ntensor([1.], requires_grad=True)"
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Identity())
    assert len(ml) == 2 and len(list(ml.parameters())) == 2
    md = nn.ModuleDict({"a": nn.Linear(1, 2)})
    md["b"] = nn.Tanh()
    assert list(md.keys()) == ["a", "b"] and "b" in md
    assert "Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))" in repr(_Net())



def test_container_deletion_and_insertion_keep_the_numbering_contiguous():
    a, b, c, d = nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity()
    seq = nn.Sequential(a, b, c, d)
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and list(seq) == [a, c, d]
    del seq[0:2]
    assert list(seq._modules) == ["0"] and seq[0] is d
    named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    del named[0]
    assert list(named._modules) == ["second"]  # named children keep their names
    ml = nn.ModuleList([a, b, c])
    del ml[0]
    assert list(ml._modules) == ["0", "1"] and list(ml) == [b, c]
    ml.insert(1, d)
    assert list(ml._modules) == ["0", "1", "2"] and list(ml) == [b, d, c]
    with pytest.raises(TypeError, match="is not a Module subclass"):
        ml.insert(0, "not a module")

def test_init_defaults_and_functions():
    tp.manual_seed(0)
    lin = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    assert float(lin.weight.abs().max()) <= bound + 1e-6
    assert float(lin.bias.abs().max()) <= bound + 1e-6
    assert float(lin.weight.std()) > bound / 2
    w = tp.empty(40, 60)
    nn.init.xavier_uniform_(w)
    assert float(w.abs().max()) <= math.sqrt(6 / 100) + 1e-6
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(float(w.std()) - math.sqrt(2 / 60)) < 0.03
    nn.init.constant_(w, 0.5)
    assert float(w.sum()) == 0.5 * w.numel()
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / (1 + 0.04))
    assert nn.init.calculate_gain("tanh") == 5 / 3


def test_zero_element_layers_initialise_as_a_no_op():
    with pytest.warns(UserWarning, match="zero-element"):
        lin = nn.Linear(0, 3)
    assert lin.weight.shape == (3, 0) and lin.bias.shape == (3,)
    assert lin(tp.zeros(2, 0)).shape == (2, 3)
    with pytest.warns(UserWarning, match="zero-element"):
        conv = nn.Conv2d(0, 2, 3)
    assert conv.weight.shape == (2, 0, 3, 3)


def test_utils_clip_and_vector():
    p1, p2 = nn.Parameter(tp.zeros(2)), nn.Parameter(tp.zeros(1))
    p1.grad, p2.grad = tp.tensor([3.0, 0.0]), tp.tensor([4.0])
    total = nn.utils.clip_grad_norm_([p1, p2], 1.0)
    assert math.isclose(total.item(), 5.0, rel_tol=1e-6)
    tp.testing.assert_close(p1.grad, tp.tensor([0.6, 0.0]), atol=1e-5, rtol=0)
    nn.utils.clip_grad_value_([p1, p2], 0.5)
    assert float(p2.grad) == 0.5
    vec = nn.utils.parameters_to_vector([p1, p2])
    assert vec.shape == (3,)
    nn.utils.vector_to_parameters(tp.arange(3.0), [p1, p2])
    tp.testing.assert_close(p2, tp.tensor([2.0]), check_dtype=False)


def test_node_names():
    x = tp.randn(2, 1, 4, 4, requires_grad=True)
    assert F.conv2d(x, tp.randn(2, 1, 3, 3)).grad_fn.name() == "ConvolutionBackward0"
    assert F.linear(x.reshape(2, 16), tp.randn(3, 16), tp.zeros(3)).grad_fn.name() == "AddmmBackward0"
    assert F.batch_norm(x, None, None, training=True).grad_fn.name() == "NativeBatchNormBackward0"
    assert F.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"
