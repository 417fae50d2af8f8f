"""Mixed dtypes (float32 with float64, integer targets, float masks) across ~90 calls: tapeflow accepts what
PyTorch accepts, with PyTorch's result dtype, and refuses what PyTorch refuses, with its exception class and
message (PyTorch promotes only where its kernels do: many ops take one dtype and say so)."""

from __future__ import annotations

import warnings

import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

# An embedding given float indices says how to fix it rather than naming PyTorch's legacy tensor type.
KNOWN = {"embedding module float idx"}


def cases(L):
    f, d, h = L.ones(3, 4), L.ones(3, 4, dtype=L.float64), L.ones(3, 4, dtype=L.float16)
    i, ii = L.tensor([0, 2]), L.zeros(3, 4, dtype=L.int64)
    m, w = L.ones(3, 4, dtype=L.bool), L.tensor(0.5, dtype=L.float64)
    F = L.nn.functional
    return {
        'index_add': lambda: f.index_add(0, i, d[:2]),
        'index_add_': lambda: f.clone().index_add_(0, i, d[:2]),
        'index_copy': lambda: f.index_copy(0, i, d[:2]),
        'index_fill tensor': lambda: f.index_fill(0, i, L.tensor(1.0, dtype=L.float64)),
        'scatter': lambda: f.scatter(0, ii, d),
        'scatter_add': lambda: f.scatter_add(0, ii, d),
        'scatter_reduce': lambda: f.scatter_reduce(0, ii, d, 'sum'),
        'masked_scatter': lambda: f.masked_scatter(m, d),
        'masked_fill tensor': lambda: f.masked_fill(m, L.tensor(2.0, dtype=L.float64)),
        'index_put': lambda: f.index_put((i,), d[:2]),
        'setitem': lambda: f.clone().__setitem__((i,), d[:2]),
        'put': lambda: f.put(i, d[0, :2]),
        'lerp end': lambda: L.lerp(f, d, 0.5),
        'lerp weight': lambda: L.lerp(f, f, L.full((3, 4), 0.5, dtype=L.float64)),
        'lerp weight 0d': lambda: L.lerp(f, f, w),
        'addcmul': lambda: L.addcmul(f, d, f),
        'addcdiv': lambda: L.addcdiv(f, d, f),
        'where': lambda: L.where(m, f, d),
        'clamp tensor': lambda: L.clamp(f, d, d),
        'cross': lambda: L.linalg.cross(L.ones(3), L.ones(3, dtype=L.float64)),
        'cdist': lambda: L.cdist(f, d),
        'linear w': lambda: F.linear(f, d),
        'linear b': lambda: F.linear(f, f, L.ones(3, dtype=L.float64)),
        'conv1d': lambda: F.conv1d(L.ones(1, 2, 5), L.ones(3, 2, 2, dtype=L.float64)),
        'conv2d bias': lambda: F.conv2d(L.ones(1, 2, 5, 5), L.ones(3, 2, 2, 2), L.ones(3, dtype=L.float64)),
        'layer_norm w': lambda: F.layer_norm(f, (4,), L.ones(4, dtype=L.float64)),
        'batch_norm w': lambda: F.batch_norm(f, L.zeros(4), L.ones(4), L.ones(4, dtype=L.float64)),
        'group_norm w': lambda: F.group_norm(L.ones(2, 4, 3), 2, L.ones(4, dtype=L.float64)),
        'layer_norm bf16 mixed': lambda: F.layer_norm(L.ones(3, 4, dtype=L.bfloat16), (4,), L.ones(4), L.zeros(4)),
        'group_norm f16 mixed': lambda: F.group_norm(L.ones(2, 4, 3, dtype=L.float16), 2, L.ones(4)),
        'batch_norm bf16 mixed': lambda: F.batch_norm(L.ones(3, 4, dtype=L.bfloat16), L.zeros(4), L.ones(4), L.ones(4)),
        'batch_norm f16 train': lambda: F.batch_norm(h, None, None, L.ones(4), L.zeros(4), training=True),
        'layer_norm f64 f32': lambda: F.layer_norm(d, (4,), L.ones(4)),
        'embedding': lambda: F.embedding(L.tensor([0, 1]), d),
        'mse': lambda: F.mse_loss(f, d),
        'l1': lambda: F.l1_loss(f, d),
        'bce': lambda: F.binary_cross_entropy(f * 0.5, d * 0.5),
        'bce logits': lambda: F.binary_cross_entropy_with_logits(f, d),
        'cross_entropy probs': lambda: F.cross_entropy(f, d),
        'kl_div': lambda: F.kl_div(f, d),
        'nll weight': lambda: F.nll_loss(f, L.tensor([0, 1, 2]), weight=L.ones(4, dtype=L.float64)),
        'smooth_l1': lambda: F.smooth_l1_loss(f, d),
        'huber': lambda: F.huber_loss(f, d),
        'cosine_similarity': lambda: F.cosine_similarity(f, d),
        'pairwise': lambda: F.pairwise_distance(f, d),
        'prelu': lambda: F.prelu(f, L.ones(1, dtype=L.float64)),
        'matmul half': lambda: f @ h.T,
        'dot int': lambda: L.dot(L.ones(2), L.ones(2, dtype=L.int64)),
        'copy_': lambda: f.clone().copy_(d),
        'polar': lambda: L.polar(L.ones(2), L.ones(2, dtype=L.float64)),
        'complex': lambda: L.complex(L.ones(2), L.ones(2, dtype=L.float64)),
        'bucketize': lambda: L.bucketize(f, L.tensor([0.5, 1.5], dtype=L.float64)),
        'searchsorted': lambda: L.searchsorted(L.tensor([0.5, 1.5], dtype=L.float64), f),
        'histc': lambda: L.histc(ii),
        'take_along_dim': lambda: L.take_along_dim(f, ii, 0),
        'gather': lambda: f.gather(0, ii.int()),
        'index_select int32': lambda: f.index_select(0, i.int()),
        'embedding int32': lambda: F.embedding(L.tensor([0, 1], dtype=L.int32), f),
        'one_hot int32': lambda: F.one_hot(L.tensor([0, 1], dtype=L.int32)),
        'cross_entropy int32': lambda: F.cross_entropy(f, L.tensor([0, 1, 2], dtype=L.int32)),
        'nll int32': lambda: F.nll_loss(f, L.tensor([0, 1, 2], dtype=L.int32)),
        'bincount float': lambda: L.bincount(L.tensor([0., 1.])),
        'repeat_interleave float': lambda: L.repeat_interleave(L.tensor([1., 2.]), L.tensor([1., 2.])),
        'multinomial int': lambda: L.multinomial(L.tensor([1, 2]), 1),
        'masked_select float mask': lambda: f.masked_select(f),
        'where float cond': lambda: L.where(f, f, f),
        'index bool float': lambda: f[f > 0.5],
        'index float': lambda: f[L.tensor([0.0])],
        'addmm half': lambda: L.addmm(h[:, :3], h, h.T[:4, :3]),
        'trapz': lambda: L.trapezoid(f, d),
        'lstsq': lambda: L.linalg.lstsq(L.ones(3, 3), L.ones(3, 2, dtype=L.float64)),
        'solve': lambda: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.float64)),
        'tensordot': lambda: L.tensordot(f, d.T, 1),
        'einsum': lambda: L.einsum('ij,jk->ik', f, d.T),
        'kron': lambda: L.kron(f, d),
        'inner': lambda: L.inner(f, d),
        'vdot': lambda: L.vdot(L.ones(2), L.ones(2, dtype=L.float64)),
        'ger': lambda: L.outer(L.ones(2), L.ones(2, dtype=L.float64)),
        'chain_matmul': lambda: L.linalg.multi_dot([f, d.T]),
        'bilinear': lambda: F.bilinear(L.ones(2, 3), L.ones(2, 3), L.ones(4, 3, 3, dtype=L.float64)),
        'grid_sample': lambda: F.grid_sample(L.ones(1, 1, 3, 3), L.zeros(1, 2, 2, 2, dtype=L.float64), align_corners=False),
        'interpolate int': lambda: F.interpolate(L.ones(1, 1, 3, dtype=L.int64), scale_factor=2),
        'avg_pool int': lambda: F.avg_pool1d(L.ones(1, 1, 4, dtype=L.int64), 2),
        'avg_pool2d int truncates': lambda: F.avg_pool2d(-L.arange(16).reshape(1, 1, 4, 4), 2),
        'adaptive_avg_pool int': lambda: F.adaptive_avg_pool2d(L.arange(16).reshape(1, 1, 4, 4), 2),
        'interpolate area int': lambda: F.interpolate(L.arange(16).reshape(1, 1, 4, 4), size=2, mode='area'),
        'lp_pool int': lambda: F.lp_pool1d(L.tensor([[[1, 2, 3, 4]]]), 2, 2),
        'max_pool2d int': lambda: F.max_pool2d(L.arange(16).reshape(1, 1, 4, 4), 2),
        'bool pow True': lambda: m ** True, 'bool pow False': lambda: L.pow(m, False),
        'True pow bool': lambda: L.pow(True, m), 'int pow True': lambda: ii ** True,
        'max_pool int': lambda: F.max_pool1d(L.ones(1, 1, 4, dtype=L.int64), 2),
        'softmax half': lambda: F.softmax(h, 0, dtype=L.float64),
        'ctc': lambda: F.ctc_loss(L.ones(5, 1, 3).log_softmax(2), L.tensor([[1, 1]]), L.tensor([5]), L.tensor([2]), ),
        'sdpa': lambda: F.scaled_dot_product_attention(L.ones(1, 2, 4), L.ones(1, 2, 4, dtype=L.float64), L.ones(1, 2, 4)),
        'sdpa mask': lambda: F.scaled_dot_product_attention(L.ones(1, 2, 4), L.ones(1, 2, 4), L.ones(1, 2, 4),
                                                            attn_mask=L.ones(2, 2, dtype=L.float64)),
        'mha': lambda: L.nn.MultiheadAttention(4, 1)(*(L.ones(2, 1, 4, dtype=L.float64),) * 3),
        'linear module double input': lambda: L.nn.Linear(4, 2)(d),
        'conv module double': lambda: L.nn.Conv1d(2, 2, 2)(L.ones(1, 2, 4, dtype=L.float64)),
        'lstm double': lambda: L.nn.LSTM(4, 2)(L.ones(2, 1, 4, dtype=L.float64)),
        'embedding module float idx': lambda: L.nn.Embedding(4, 2)(L.tensor([0.0])),
    }

def _outcome(L, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = cases(L)[name]()
            return "ok " + str(getattr(out, "dtype", "")).split(".")[-1]
        except Exception as e:  # noqa: BLE001 - the class and message are what is compared
            return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".replace("tapeflow.", "torch.")


@pytest.mark.parametrize("name", [n for n in cases(tp) if n not in KNOWN])
def test_same_outcome_as_pytorch(name):
    assert _outcome(tp, name) == _outcome(torch, name)
