"""`autocast`: PyTorch's CPU policy (which ops compute in the autocast dtype, which in float32, which as their
inputs are) over ~80 calls, a training step's numbers, nesting and queries, against PyTorch."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
# The oracle is PyTorch's CPU autocast, which applies to tensors on the CPU backend.
pytestmark = pytest.mark.skipif(jax.default_backend() != "cpu", reason="compares with PyTorch's CPU autocast")


def _calls(L):
    F = L.nn.functional
    f = L.ones(4, 4) * 0.5
    t = L.tensor([0, 1, 2, 3])
    return {
        "linear": lambda x: F.linear(x, L.ones(3, 4), L.ones(3)), "matmul": lambda x: x @ f,
        "mm": lambda x: L.mm(x, f), "bmm": lambda x: L.bmm(x[None], f[None]), "mv": lambda x: L.mv(x, f[0]),
        "dot": lambda x: L.dot(x[0], f[0]), "einsum": lambda x: L.einsum("ij,jk->ik", x, f),
        "addmm": lambda x: L.addmm(f, x, f), "baddbmm": lambda x: L.baddbmm(f[None], x[None], f[None]),
        "conv1d": lambda x: F.conv1d(x[None], L.ones(2, 4, 2)),
        "conv2d": lambda x: F.conv2d(x[None, None], L.ones(2, 1, 2, 2)),
        "conv_transpose2d": lambda x: F.conv_transpose2d(x[None, None], L.ones(1, 2, 2, 2)),
        "prelu": lambda x: F.prelu(x, L.ones(1)), "sdpa": lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None]),
        "softmax": lambda x: F.softmax(x, -1), "log_softmax": lambda x: F.log_softmax(x, -1),
        "layer_norm": lambda x: F.layer_norm(x, (4,)), "group_norm": lambda x: F.group_norm(x[None], 2),
        "gelu": F.gelu, "exp": lambda x: x.exp(), "pow": lambda x: x.pow(2), "sum": lambda x: x.sum(),
        "mean": lambda x: x.mean(), "prod": lambda x: x.prod(), "prod_dim": lambda x: x.prod(0),
        "cumsum": lambda x: x.cumsum(0), "norm": lambda x: x.norm(), "logsumexp": lambda x: x.logsumexp(0),
        "mse": lambda x: F.mse_loss(x, x), "l1": lambda x: F.l1_loss(x, x), "smooth_l1": lambda x: F.smooth_l1_loss(x, x),
        "huber": lambda x: F.huber_loss(x, x), "kl_div": lambda x: F.kl_div(x, x, reduction="batchmean"),
        "cross_entropy": lambda x: F.cross_entropy(x, t), "nll": lambda x: F.nll_loss(x, t),
        "bce_logits": lambda x: F.binary_cross_entropy_with_logits(x, x),
        "bce": lambda x: F.binary_cross_entropy(x * 0.5, x * 0.5), "cdist": lambda x: L.cdist(x, x),
        "inv": lambda x: L.linalg.inv(x + L.eye(4, dtype=x.dtype)), "add_f32": lambda x: x + f,
        "cat_f32": lambda x: L.cat([x, f]), "embedding": lambda x: F.embedding(t, x),
        "batch_norm": lambda x: F.batch_norm(x, None, None, training=True),
        "max_pool2d": lambda x: F.max_pool2d(x[None, None], 2),
        "interpolate": lambda x: F.interpolate(x[None, None], scale_factor=2, mode="bilinear"),
        "margin_ranking": lambda x: F.margin_ranking_loss(x[0], x[1], L.ones(4)),
        "cosine_embedding": lambda x: F.cosine_embedding_loss(x, x, L.ones(4)),
        "soft_margin": lambda x: F.soft_margin_loss(x, L.ones(4, 4)), "triplet": lambda x: F.triplet_margin_loss(x, x, x),
        "multi_margin": lambda x: F.multi_margin_loss(x, t), "hinge": lambda x: F.hinge_embedding_loss(x, L.ones(4, 4)),
        "poisson_nll": lambda x: F.poisson_nll_loss(x, x), "cosine_similarity": lambda x: F.cosine_similarity(x, x),
        "lstm": lambda x: L.nn.LSTM(4, 3)(x[None])[0],
        "mha": lambda x: L.nn.MultiheadAttention(4, 1)(x[None], x[None], x[None])[0],
        "where": lambda x: L.where(x > 0, x, f), "index_put": lambda x: f.clone().index_put((t,), x),
        "addcmul": lambda x: L.addcmul(f, x, f), "trace": lambda x: L.trace(x), "polar": lambda x: L.polar(x, x),
        "fft": lambda x: L.fft.fft(x), "solve": lambda x: L.linalg.solve(x + L.eye(4, dtype=x.dtype), x),
    }


def _outcomes(L, name):
    out = []
    for dtype in (L.float32, L.bfloat16):
        x = (L.ones(4, 4) * 0.5).to(dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with L.autocast("cpu", dtype=L.bfloat16):
                    out.append(str(_calls(L)[name](x).dtype).split(".")[-1])
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            if "could not create a primitive" in str(e):  # (PyTorch's oneDNN lacks a kernel for this CPU)
                pytest.skip(f"PyTorch has no oneDNN kernel for {name} on this CPU: {e}")
            out.append(type(e).__name__)
    return out


@pytest.mark.parametrize("name", list(_calls(tp)))
def test_cpu_policy_matches_pytorch(name):
    assert _outcomes(tp, name) == _outcomes(torch, name)


def _train(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.ln = nn.Conv2d(1, 4, 3, padding=1), nn.LayerNorm(16)
            self.attn, self.fc, self.out = nn.MultiheadAttention(16, 2, batch_first=True), nn.Linear(64, 16), nn.Linear(16, 5)

        def forward(self, x):
            h = self.ln(F.relu(self.conv(x)).flatten(2))
            a, _ = self.attn(h, h, h)
            return self.out(F.gelu(self.fc(a.flatten(1))))

    net = Net()
    opt = lib.optim.AdamW(net.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    x, y = lib.tensor(rng.normal(size=(8, 1, 4, 4)).astype(np.float32)), lib.tensor(rng.integers(0, 5, 8))
    losses, dtypes = [], set()
    for _ in range(4):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            logits = net(x)
            loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        dtypes |= {str(t.dtype).split(".")[-1] for t in (logits, loss, net.fc.weight.grad)}
    return losses, sorted(dtypes)


def test_a_training_step_under_autocast_matches_pytorch():
    (mine, my_dtypes), (theirs, their_dtypes) = _train(tp), _train(torch)
    assert my_dtypes == their_dtypes == ["bfloat16", "float32"]
    np.testing.assert_allclose(mine, theirs, rtol=5e-3)  # (bfloat16 products: rounding-level differences)


def test_nesting_queries_and_unsupported_devices():
    a = tp.ones(2, 2)
    assert not tp.is_autocast_enabled("cpu") and tp.get_autocast_dtype("cpu") == tp.bfloat16
    with tp.autocast("cpu"):
        assert tp.is_autocast_enabled("cpu") and not tp.is_autocast_enabled()
        with tp.autocast("cpu", enabled=False):
            assert (a @ a).dtype == tp.float32 and not tp.is_autocast_enabled("cpu")
        assert (a @ a).dtype == tp.bfloat16
        with tp.autocast("cpu", dtype=tp.float16):
            assert (a @ a).dtype == tp.float16 and tp.get_autocast_dtype("cpu") == tp.float16
        assert (a @ a).dtype == tp.bfloat16
    assert (a @ a).dtype == tp.float32 and not tp.is_autocast_enabled("cpu")
    assert tp.get_autocast_dtype("cpu") == tp.bfloat16  # (the region's dtype ends with it)

    @tp.autocast("cpu")
    def product(x):
        return x @ x

    assert product(a).dtype == tp.bfloat16 and (a @ a).dtype == tp.float32
    if tp.cuda.is_available():
        return
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with tp.autocast("cuda"):
            assert (a @ a).dtype == tp.float32


def test_gradients_reach_float32_parameters_through_the_casts():
    grads = []
    for lib in (tp, torch):
        w = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = (lib.ones(3, 2) @ w).float().pow(2).sum()
        y.backward()
        grads.append((str(w.grad.dtype).split(".")[-1], w.grad.tolist()))
    assert grads[0] == grads[1]


def test_a_compiled_step_with_an_autocast_region_equals_eager():
    w = tp.nn.Parameter(tp.tensor([[0.5, -1.0], [2.0, 0.25]]))
    x = tp.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])

    def step(x):
        with tp.autocast("cpu"):
            y = x @ w
        return y, y.float().pow(2).sum()

    eager = step(x)
    compiled = tp.compile(step)
    for _ in range(3):
        y, loss = compiled(x)
        assert y.dtype == eager[0].dtype == tp.bfloat16 and loss.item() == eager[1].item()
    assert not tp.is_autocast_enabled("cpu")


def test_a_cuda_grad_scaler_without_cuda_warns_and_disables_itself():
    if tp.cuda.is_available():
        pytest.skip("a GPU is present: the scaler stays on")
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        scaler = tp.amp.GradScaler("cuda")
    assert not scaler.is_enabled()
    loss = tp.tensor(2.0, requires_grad=True)
    assert scaler.scale(loss) is loss  # (a disabled scaler passes values through, as PyTorch's)
    assert tp.amp.GradScaler("cpu").is_enabled()
