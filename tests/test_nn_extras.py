"""tapeflow.nn against PyTorch: max pooling with indices and max-unpooling, Embedding's max_norm,
and modules' backward pre-hooks (local and global)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn as nn
import tapeflow.nn.functional as F
from tapeflow.nn.modules import module as module_mod


def _torch():
    return pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _pair(x_np, requires_grad=True):
    torch = _torch()
    return tp.tensor(x_np, requires_grad=requires_grad), torch.tensor(x_np, requires_grad=requires_grad)


# -- max pooling with indices ----------------------------------------------------------------------------------
POOL2D = [  # (input shape, kwargs)
    ((2, 3, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 5, 6), dict(kernel_size=2, ceil_mode=True)),
    ((1, 2, 8, 7), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1))),
    ((3, 6, 5), dict(kernel_size=2, stride=1)),  # unbatched
]


@pytest.mark.parametrize("shape,kw", POOL2D, ids=[str(s) for s, _ in POOL2D])
def test_max_pool2d_return_indices_matches_torch(shape, kw):
    torch = _torch()
    rng = np.random.default_rng(0)
    # Integer-valued data: ties inside windows, where the chosen index matters.
    x_np = rng.integers(-2, 3, shape).astype(np.float64)
    xp, xt = _pair(x_np)
    yp, ip = F.max_pool2d(xp, **kw, return_indices=True)
    yt, it = torch.nn.functional.max_pool2d(xt, **kw, return_indices=True)
    _close(yp, yt)
    np.testing.assert_array_equal(ip.numpy(), it.numpy())
    assert ip.dtype == tp.int64 and not ip.requires_grad and ip.grad_fn is None
    if len(shape) == 4:  # an unbatched input ends in a squeeze here
        assert yp.grad_fn.name() == yt.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    # Gradient: the same as without indices, and PyTorch's (one cell per window, even with ties).
    g = rng.normal(size=tuple(yt.shape))
    yp.backward(tp.tensor(g))
    yt.backward(torch.tensor(g))
    _close(xp.grad, xt.grad)
    xq = tp.tensor(x_np, requires_grad=True)
    F.max_pool2d(xq, **kw).backward(tp.tensor(g))
    _close(xp.grad, xq.grad, 0, 0)


POOL_SPECIAL = [  # (functional, input shape, kwargs)
    ("max_pool1d", (2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", (2, 3, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", (1, 2, 6, 7), dict(kernel_size=2, ceil_mode=True)),
    ("max_pool2d", (1, 2, 8, 7), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1))),
    ("max_pool3d", (1, 2, 5, 4, 5), dict(kernel_size=2, stride=1, padding=1)),
]


@pytest.mark.parametrize("fn,shape,kw", POOL_SPECIAL, ids=[f"{f}{s}" for f, s, _ in POOL_SPECIAL])
def test_max_pool_picks_as_pytorch_among_nans_infs_and_ties(fn, shape, kw):
    """Windows with NaNs (PyTorch's kernels take the last one), ties (the first maximum) and `-inf` only
    (the first cell inside the input): the indices, the gradient, the forward-mode tangent and the gradient
    under `jax.jit(jax.grad)` all pick PyTorch's cell."""
    import jax

    from tapeflow.autograd import forward_ad as fwAD
    from tapeflow.interop import to_jax

    torch = _torch()
    rng = np.random.default_rng(1)
    x_np = rng.integers(-2, 3, shape).astype(np.float64)
    x_np[rng.random(shape) < 0.15] = np.nan
    x_np[rng.random(shape) < 0.3] = -np.inf
    x_np.reshape(-1)[:4] = -np.inf  # (the first window: -inf, or padding, only)
    xp, xt = _pair(x_np)
    yp, ip = getattr(F, fn)(xp, **kw, return_indices=True)
    yt, it = getattr(torch.nn.functional, fn)(xt, **kw, return_indices=True)
    _close(yp, yt)
    np.testing.assert_array_equal(ip.numpy(), it.numpy())
    g = rng.normal(size=tuple(yt.shape))
    yp.backward(tp.tensor(g))
    yt.backward(torch.tensor(g))
    _close(xp.grad, xt.grad)
    f = to_jax(lambda x: (getattr(F, fn)(x, **kw) * tp.tensor(g)).sum())
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(f))(x_np)), xt.grad.numpy())
    t = rng.normal(size=shape)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(getattr(F, fn)(fwAD.make_dual(tp.tensor(x_np), tp.tensor(t)), **kw)).tangent
    _close(tangent, np.take_along_axis(t.reshape(*shape[:2], -1), it.numpy().reshape(*shape[:2], -1), 2)
           .reshape(it.shape))


def test_max_pool_modules_and_1d_match_torch():
    torch = _torch()
    rng = np.random.default_rng(1)
    x_np = rng.integers(-2, 3, (2, 3, 9)).astype(np.float64)
    for kw in (dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, dilation=2, ceil_mode=True)):
        xp, xt = _pair(x_np)
        yp, ip = nn.MaxPool1d(**kw, return_indices=True)(xp)
        yt, it = torch.nn.MaxPool1d(**kw, return_indices=True)(xt)
        _close(yp, yt)
        np.testing.assert_array_equal(ip.numpy(), it.numpy())
        assert yp.grad_fn.name() == yt.grad_fn.name() == "SqueezeBackward1"
        g = rng.normal(size=tuple(yt.shape))
        yp.backward(tp.tensor(g))
        yt.backward(torch.tensor(g))
        _close(xp.grad, xt.grad)
        _close(F.max_pool1d(tp.tensor(x_np[0]), **kw), torch.nn.functional.max_pool1d(torch.tensor(x_np[0]), **kw))
    # Positional order as in PyTorch: (kernel_size, stride, padding, dilation, return_indices, ceil_mode).
    out = nn.MaxPool2d(2, 2, 0, 1, True, True)(tp.tensor(rng.normal(size=(1, 1, 5, 5))))
    assert isinstance(out, tuple) and out[0].shape == (1, 1, 3, 3)
    assert repr(nn.MaxPool1d(3)) == repr(torch.nn.MaxPool1d(3))
    assert repr(nn.MaxUnpool2d(2)) == repr(torch.nn.MaxUnpool2d(2))


# -- max unpooling -----------------------------------------------------------------------------------------------
def test_max_unpool_matches_torch():
    torch = _torch()
    rng = np.random.default_rng(2)
    x_np = rng.normal(size=(2, 3, 7, 7))
    yt, it = torch.nn.functional.max_pool2d(torch.tensor(x_np), 3, 2, 1, return_indices=True)
    ip = tp.tensor(it.numpy())
    for size in (None, (8, 7), [2, 3, 7, 8]):
        vp, vt = _pair(yt.numpy())
        up = F.max_unpool2d(vp, ip, 3, 2, 1, output_size=size)
        ut = torch.nn.functional.max_unpool2d(vt, it, 3, 2, 1, output_size=size)
        _close(up, ut)
        assert up.grad_fn.name() == ut.grad_fn.name() == "MaxUnpool2DBackward0"
        g = rng.normal(size=tuple(ut.shape))
        up.backward(tp.tensor(g))
        ut.backward(torch.tensor(g))
        _close(vp.grad, vt.grad)
    # Module, round trip through MaxPool2d, unbatched input.
    pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
    out, idx = pool(tp.tensor(x_np[0]))
    back = unpool(out, idx, output_size=(7, 7))
    ref = torch.nn.MaxUnpool2d(2)(*torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x_np[0])),
                                  output_size=(7, 7))
    _close(back, ref)
    # 1-d.
    x1 = rng.normal(size=(2, 2, 9))
    y1, i1 = torch.nn.functional.max_pool1d(torch.tensor(x1), 2, return_indices=True)
    vp, vt = _pair(y1.numpy())
    up = nn.MaxUnpool1d(2)(vp, tp.tensor(i1.numpy()), output_size=(9,))
    ut = torch.nn.MaxUnpool1d(2)(vt, i1, output_size=(9,))
    _close(up, ut)
    assert up.grad_fn.name() == ut.grad_fn.name() == "SqueezeBackward1"
    up.sum().backward()
    ut.sum().backward()
    _close(vp.grad, vt.grad)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(tp.tensor(yt.numpy()), ip, 3, 2, 1, output_size=(20, 7))
    with pytest.raises(RuntimeError, match="Expected shape of indices"):
        F.max_unpool2d(tp.tensor(yt.numpy()), ip[:, :1], 3, 2, 1)


# -- Embedding: max_norm, padding_idx, scale_grad_by_freq -----------------------------------------------------
EMB = [dict(max_norm=1.0), dict(max_norm=1.5, norm_type=1.0), dict(max_norm=0.8, norm_type=float("inf")),
       dict(max_norm=1.2, padding_idx=1, scale_grad_by_freq=True), dict(padding_idx=-2, scale_grad_by_freq=True)]


@pytest.mark.parametrize("kw", EMB, ids=[str(k) for k in EMB])
def test_embedding_max_norm_matches_torch(kw):
    torch = _torch()
    th = torch.nn.Embedding(7, 4, **kw).double()
    mine = nn.Embedding(7, 4, **kw).double()
    with torch.no_grad():
        th.weight.mul_(torch.linspace(0.2, 2.0, 7, dtype=torch.float64)[:, None])  # some rows under max_norm
    mine.load_state_dict({"weight": tp.tensor(th.weight.detach().numpy())})
    assert repr(mine) == repr(th)
    idx = np.array([[1, 2, 2, 6], [5, 1, 0, 2]])
    v0 = mine.weight._version
    yp, yt = mine(tp.tensor(idx)), th(torch.tensor(idx))
    _close(yp, yt, 1e-12, 1e-12)
    _close(mine.weight, th.weight, 1e-12, 1e-12)  # rows 3 and 4 untouched; looked-up rows renormalised
    if "max_norm" in kw:
        assert mine.weight._version > v0
        assert not mine.weight.grad_fn and mine.weight.is_leaf
    assert yp.grad_fn.name() == "EmbeddingBackward0"
    g = np.random.default_rng(3).normal(size=tuple(yt.shape))
    yp.backward(tp.tensor(g))
    yt.backward(torch.tensor(g))
    _close(mine.weight.grad, th.weight.grad)
    # Functional form on a plain tensor.
    w_np = np.random.default_rng(4).normal(size=(5, 3)) * 2
    wp, wt = _pair(w_np, requires_grad=False)
    fkw = {k: v for k, v in kw.items() if k != "padding_idx"}
    _close(F.embedding(tp.tensor(idx % 5), wp, **fkw), torch.nn.functional.embedding(torch.tensor(idx % 5), wt, **fkw))
    _close(wp, wt, 1e-12, 1e-12)


def test_embedding_max_norm_compiles_without_host_sync():
    emb = nn.Embedding(6, 3, max_norm=1.0)
    with tp.no_grad():  # every row's norm above max_norm
        emb.weight.copy_(tp.arange(18.0).reshape(6, 3) / 10 + 1.0)

    @tp.compile
    def lookup(idx):
        return emb(idx)

    out = lookup(tp.tensor([0, 3, 3]))
    norms = emb.weight.detach().norm(dim=1).numpy()
    assert np.all(norms[[0, 3]] <= 1.0 + 1e-6) and np.all(norms[[1, 2, 4, 5]] > 1.0)
    _close(out.norm(dim=1), np.ones(3), 1e-5, 1e-5)


def test_full_backward_hooks_do_not_run_in_a_double_backward_that_skips_the_outputs():
    torch = _torch()

    def calls(m):
        x, y = m.tensor([0.3], requires_grad=True), m.tensor([0.9])
        loss, count = m.nn.MSELoss(), []
        loss.register_full_backward_hook(lambda mod, gi, go: count.append(len(gi)))
        (gx,) = m.autograd.grad(loss(x, y), x, create_graph=True)
        first = len(count)
        (ggx,) = m.autograd.grad(gx, x)  # reaches the module's input node, not its output
        out = loss(x, y)
        out.backward(retain_graph=True)
        out.backward()  # each full pass runs the hooks again
        return first, len(count), float(ggx)

    assert calls(tp) == calls(torch) == (1, 3, 2.0)


# -- backward pre-hooks -------------------------------------------------------------------------------------------
def test_full_backward_pre_hook_matches_torch():
    torch = _torch()
    th = torch.nn.Linear(3, 2).double()
    mine = nn.Linear(3, 2).double()
    mine.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in th.state_dict().items()})
    logs = {"tp": [], "th": []}

    def make(log, scale):
        def pre(mod, go):
            log.append(("pre", _np(go[0]).copy()))
            return (go[0] * scale,)

        def full(mod, gi, go):
            log.append(("full", _np(gi[0]).copy(), _np(go[0]).copy()))
        return pre, full

    handles = []
    for mod, key in ((mine, "tp"), (th, "th")):
        pre, full = make(logs[key], 3.0)
        handles.append(mod.register_full_backward_pre_hook(pre))
        handles.append(mod.register_full_backward_hook(full))
        handles.append(mod.register_full_backward_pre_hook(lambda m, go, log=logs[key]: log.append(("first",)),
                                                           prepend=True))
    x_np = np.random.default_rng(5).normal(size=(4, 3))
    xp, xt = _pair(x_np)
    mine(xp).sum().backward()
    th(xt).sum().backward()
    assert [e[0] for e in logs["tp"]] == [e[0] for e in logs["th"]] == ["first", "pre", "full"]
    for a, b in zip(logs["tp"], logs["th"]):
        for u, v in zip(a[1:], b[1:]):
            _close(u, v)
    _close(xp.grad, xt.grad)
    _close(mine.weight.grad, th.weight.grad)
    # Removing the handles removes the hooks.
    for h in handles:
        h.remove()
    assert not mine._backward_pre_hooks and not mine._backward_hooks
    xp.grad = None
    mine.zero_grad()
    mine(xp).sum().backward()
    assert len(logs["tp"]) == 3
    _close(xp.grad, xt.grad / 3.0)


def test_backward_pre_hook_output_packing_and_errors():
    torch = _torch()

    class Two:
        def forward(self, a):
            return a * 2, a.detach(), 3

    seen = {}
    mods = {}
    for key, base in (("tp", nn.Module), ("th", torch.nn.Module)):
        mods[key] = type("Two", (Two, base), {})()
        mods[key].register_full_backward_pre_hook(lambda m, go, key=key: seen.__setitem__(key, go))
    a_p, a_t = _pair(np.ones(2))
    mods["tp"](a_p)[0].sum().backward()
    mods["th"](a_t)[0].sum().backward()
    assert [g is None for g in seen["tp"]] == [g is None for g in seen["th"]] == [False, True, True]
    _close(seen["tp"][0], seen["th"][0])
    # A wrong number of gradients is an error.
    mods["tp"].register_full_backward_pre_hook(lambda m, go: (go[0],))
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 1, but expected 3"):
        mods["tp"](a_p)[0].sum().backward()
    # No input needs a gradient: the pre-hook still runs and its replacement reaches the parameters.
    lin = nn.Linear(2, 1)
    h = lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
    lin(tp.ones(3, 2)).sum().backward()
    assert float(lin.weight.grad.abs().sum()) == 0.0
    h.remove()


def test_global_backward_hooks():
    calls = []
    lin = nn.Linear(2, 2)
    h1 = module_mod.register_module_full_backward_pre_hook(lambda m, go: calls.append("gpre") or (go[0] * 2,))
    h2 = module_mod.register_module_full_backward_hook(lambda m, gi, go: calls.append("gfull"))
    h3 = lin.register_full_backward_pre_hook(lambda m, go: calls.append("pre"))
    try:
        x = tp.ones(1, 2, requires_grad=True)
        lin(x).sum().backward()
        assert calls == ["gpre", "pre", "gfull"]
        tp.testing.assert_close(x.grad, 2 * tp.ones(1, 2) @ lin.weight.detach())
    finally:
        h1.remove()
        h2.remove()
    h3.remove()
    calls.clear()
    x.grad = None
    lin(x).sum().backward()
    assert calls == []
    tp.testing.assert_close(x.grad, tp.ones(1, 2) @ lin.weight.detach())


def test_global_forward_hooks_run_before_the_modules_own_and_can_be_removed():
    calls = []
    lin = nn.Linear(2, 2)
    h1 = module_mod.register_module_forward_pre_hook(lambda m, args: calls.append("gpre") or (args[0] * 0,))
    h2 = module_mod.register_module_forward_hook(lambda m, args, out: calls.append("gpost") or out + 1)
    h3 = lin.register_forward_hook(lambda m, args, out: calls.append("post"))
    try:
        out = lin(tp.ones(1, 2))
        assert calls == ["gpre", "gpost", "post"]
        tp.testing.assert_close(out, lin.bias.detach()[None] + 1)
    finally:
        h1.remove()
        h2.remove()
    h3.remove()
    calls.clear()
    tp.testing.assert_close(lin(tp.ones(1, 2)), tp.ones(1, 2) @ lin.weight.detach().T + lin.bias.detach())
    assert calls == []


def test_init_and_func_helpers_work_when_reached_as_torch_modules():
    """Under `python -m tapeflow.torch`, importing `torch.nn.init` or `torch.func` rewrites the tapeflow module's
    `__package__` to the torch name, so a relative import deferred into a function body resolved against
    `torch.nn` / `torch.func` and failed (orthogonal_, eye_, sparse_, stack_module_state)."""
    import subprocess
    import sys

    code = (
        "import tapeflow.torch as tt\n"
        "tt.install()\n"
        "import torch, torch.nn as nn, torch.nn.init as init, torch.func\n"
        "w = init.orthogonal_(torch.empty(3, 5), init.calculate_gain('relu'))\n"
        "assert torch.allclose(w @ w.T, 2 * torch.eye(3), atol=1e-5)\n"
        "assert torch.equal(init.eye_(torch.empty(2, 3)), torch.eye(2, 3))\n"
        "assert int((init.sparse_(torch.empty(4, 3), 0.5) == 0).sum()) == 6\n"
        "p, b = torch.func.stack_module_state([nn.Linear(3, 2) for _ in range(4)])\n"
        "assert tuple(p['weight'].shape) == (4, 2, 3) and p['weight'].requires_grad and b == {}\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_rnn_flatten_parameters_and_all_weights_match_torch():
    """The word_language_model example calls `model.rnn.flatten_parameters()` after `torch.load`: it was missing
    (AttributeError). It is a no-op here; `all_weights` lists the parameters per layer and direction."""
    torch = pytest.importorskip("torch")
    for cls, kw in ((nn.LSTM, {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
                    (nn.GRU, {"num_layers": 2, "bias": False}), (nn.RNN, {})):
        mine = cls(3, 4, **kw)
        theirs = getattr(torch.nn, cls.__name__)(3, 4, **kw)
        theirs.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in mine.state_dict().items()})
        x = tp.ones(2, 1, 3)
        before = mine(x)[0].detach().numpy()
        assert mine.flatten_parameters() is None
        np.testing.assert_array_equal(mine(x)[0].detach().numpy(), before)
        assert [[tuple(w.shape) for w in ws] for ws in mine.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
        named = dict(mine.named_parameters())
        assert [[n for w in ws for n, p in named.items() if p is w] for ws in mine.all_weights] == \
            [[n for w in ws for n, p in theirs.named_parameters() if p is w] for ws in theirs.all_weights]


@pytest.mark.parametrize("features", [(4, 0), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_without_inputs_or_outputs_backpropagates(features, bias):
    """A layer of zero width (an adaptive softmax's tiny cluster): empty gradients of the right shapes."""
    torch = _torch()
    x_np = np.random.default_rng(0).standard_normal((2, 5, features[0])).astype(np.float32)
    x, tx = _pair(x_np)
    layer, tlayer = nn.Linear(*features, bias=bias), torch.nn.Linear(*features, bias=bias)
    (layer(x) * 2).sum().backward()
    (tlayer(tx) * 2).sum().backward()
    assert x.grad.shape == tuple(tx.grad.shape) and layer.weight.grad.shape == tuple(tlayer.weight.grad.shape)
    _close(x.grad, tx.grad)
    if bias:
        _close(layer.bias.grad, tlayer.bias.grad)


def _convolutions(lib):
    F = lib.nn.functional
    return {
        "conv1d": lambda d: F.conv1d(lib.ones(1, 1, 4, dtype=d), lib.ones(1, 1, 3, dtype=d)),
        "conv2d": lambda d: F.conv2d(lib.ones(1, 2, 5, 5, dtype=d), lib.ones(2, 1, 3, 3, dtype=d), stride=2, groups=2),
        "conv3d": lambda d: F.conv3d(lib.ones(1, 1, 4, 4, 4, dtype=d), lib.ones(1, 1, 3, 3, 3, dtype=d)),
        "conv1d dilated": lambda d: F.conv1d(lib.ones(1, 1, 5, dtype=d), lib.ones(1, 1, 3, dtype=d), dilation=2),
        "conv2d dilated": lambda d: F.conv2d(lib.ones(1, 1, 5, 5, dtype=d), lib.ones(1, 1, 3, 3, dtype=d), dilation=2),
        "conv_transpose1d": lambda d: F.conv_transpose1d(lib.ones(1, 1, 4, dtype=d), lib.ones(1, 1, 3, dtype=d)),
        "conv_transpose2d": lambda d: F.conv_transpose2d(lib.ones(1, 1, 3, 3, dtype=d), lib.ones(1, 1, 2, 2, dtype=d),
                                                         dilation=2),
        "conv_transpose3d": lambda d: F.conv_transpose3d(lib.ones(1, 1, 2, 2, 2, dtype=d),
                                                         lib.ones(1, 1, 2, 2, 2, dtype=d)),
        "fold": lambda d: F.fold(lib.ones(1, 4, 4, dtype=d), (3, 3), 2),
        "unfold": lambda d: F.unfold(lib.ones(1, 1, 3, 3, dtype=d), 2),
    }


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("name", list(_convolutions(tp)))
def test_integer_convolutions_are_pytorchs(name, dtype):
    """Which integer convolutions (and fold/unfold) PyTorch's CPU kernels have: the same values, or the same
    NotImplementedError."""
    torch = _torch()
    results = []
    for lib in (torch, tp):
        try:
            results.append(("ok", _convolutions(lib)[name](getattr(lib, dtype)).tolist()))
        except Exception as e:  # noqa: BLE001 - class and message are compared
            results.append((type(e).__name__, str(e)))
    assert results[1] == results[0]
