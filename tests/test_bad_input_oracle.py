"""Bad input on both libraries: for ~290 calls PyTorch refuses (or accepts), tapeflow raises the same exception
class (or accepts too). Messages are PyTorch's where tests/test_bad_inputs.py and the op tests check them; this
table guards the classes, and that nothing PyTorch refuses runs silently here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

# Deliberate differences: the class is `tp.linalg.LinAlgError` here (PyTorch's `torch._C._LinAlgError`, both
# RuntimeErrors).
SKIP = {"inv singular", "cholesky nonpd", "matrix_power neg singular", "fft"}


def _cases(L):
    F = L.nn.functional
    a = L.ones(2, 3)
    b = L.ones(4)
    i = L.tensor([[0, 1, 5]])
    e = L.ones(0)
    ai = L.ones(2, 3, dtype=L.int64)
    c = L.ones(2, 3, dtype=L.complex64)
    return {
        'sum dim oob': lambda: a.sum(5),
        'mean int': lambda: ai.mean(),
        'softmax int': lambda: F.softmax(ai, 0),
        'max empty': lambda: e.max(),
        'argmax empty': lambda: e.argmax(),
        'add shape': lambda: a + b,
        'matmul shape': lambda: a @ a,
        'mm 1d': lambda: L.mm(b, b),
        'bmm 2d': lambda: L.bmm(a, a.T),
        'cat dims': lambda: L.cat([a, b]),
        'cat empty list': lambda: L.cat([]),
        'stack shapes': lambda: L.stack([a, a.T]),
        'gather oob': lambda: L.gather(a, 1, i),
        'index_select oob': lambda: L.index_select(a, 1, L.tensor([7])),
        'index_select float idx': lambda: L.index_select(a, 1, L.tensor([0.0])),
        'view bad': lambda: a.view(4),
        'view -1 twice': lambda: a.view(-1, -1),
        'reshape bad': lambda: a.reshape(5, -1),
        'permute dup': lambda: a.permute(0, 0),
        'transpose oob': lambda: a.transpose(0, 3),
        'squeeze oob': lambda: a.squeeze(4),
        'unsqueeze oob': lambda: a.unsqueeze(5),
        'expand bad': lambda: a.expand(3, 3),
        'narrow oob': lambda: a.narrow(1, 2, 3),
        'select oob': lambda: a.select(0, 5),
        'index oob': lambda: a[5],
        'index float': lambda: a[L.tensor([0.5])],
        'bool mask shape': lambda: a[L.tensor([True, False, True])],
        'setitem shape': lambda: a.__setitem__(0, L.ones(4)),
        'zeros neg': lambda: L.zeros(-1),
        'randn neg': lambda: L.randn(2, -3),
        'arange zero step': lambda: L.arange(0, 5, 0),
        'arange bad range': lambda: L.arange(5, 0, 1),
        'linspace neg steps': lambda: L.linspace(0, 1, -2),
        'full bad': lambda: L.full((2,), 'x'),
        'tensor ragged': lambda: L.tensor([[1, 2], [3]]),
        'tensor str': lambda: L.tensor('abc'),
        'embedding oob': lambda: F.embedding(L.tensor([10]), L.ones(5, 2)),
        'embedding float idx': lambda: F.embedding(L.tensor([1.0]), L.ones(5, 2)),
        'linear shape': lambda: F.linear(a, L.ones(4, 4)),
        'conv2d 3d weight': lambda: F.conv2d(L.ones(1, 2, 5, 5), L.ones(3, 2, 3)),
        'conv2d channels': lambda: F.conv2d(L.ones(1, 2, 5, 5), L.ones(3, 4, 3, 3)),
        'conv2d too small': lambda: F.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 3, 3)),
        'maxpool too small': lambda: F.max_pool2d(L.ones(1, 1, 2, 2), 3),
        'maxpool pad big': lambda: F.max_pool2d(L.ones(1, 1, 5, 5), 2, padding=2),
        'ce target oob': lambda: F.cross_entropy(a, L.tensor([0, 7])),
        'ce target float 1d': lambda: F.cross_entropy(a, L.tensor([0.0, 1.0])),
        'ce shape': lambda: F.cross_entropy(a, L.tensor([0, 1, 1])),
        'nll 3d bad': lambda: F.nll_loss(L.ones(2, 3, 4), L.tensor([0, 1])),
        'mse shape': lambda: F.mse_loss(a, b),
        'bce range': lambda: F.binary_cross_entropy(a * 2, a),
        'bce shape': lambda: F.binary_cross_entropy(a * 0.5, b),
        'layer_norm shape': lambda: F.layer_norm(a, (4,)),
        'batch_norm channels': lambda: F.batch_norm(a, L.ones(4), L.ones(4)),
        'batch_norm 1 value': lambda: F.batch_norm(L.ones(1, 3), None, None, training=True),
        'dropout p': lambda: F.dropout(a, 1.5),
        'softmax dim oob': lambda: F.softmax(a, 3),
        'one_hot neg': lambda: F.one_hot(L.tensor([-1])),
        'one_hot float': lambda: F.one_hot(L.tensor([1.0])),
        'pad neg too big': lambda: F.pad(a, (-4, 0)),
        'pad reflect big': lambda: F.pad(L.ones(1, 1, 3), (3, 3), mode='reflect'),
        'interpolate no size': lambda: F.interpolate(L.ones(1, 1, 3)),
        'topk k big': lambda: L.topk(b, 6),
        'kthvalue k big': lambda: L.kthvalue(b, 6),
        'sort dim oob': lambda: L.sort(b, 2),
        'cumsum dim oob': lambda: L.cumsum(a, 2),
        'chunk 0': lambda: a.chunk(0),
        'split neg': lambda: a.split(-1),
        'repeat fewer': lambda: a.repeat(2),
        'tile neg': lambda: a.tile(-1),
        'flip dup': lambda: a.flip(0, 0),
        'roll shifts dims': lambda: a.roll((1, 2), (0,)),
        'where shapes': lambda: L.where(a > 0, a, b),
        'where non bool': lambda: L.where(a, a, a),
        'masked_fill non bool': lambda: a.masked_fill(a, 0.0),
        'clamp no args': lambda: a.clamp(),
        'pow int neg': lambda: L.tensor([2]) ** (-1),
        'div int zero floor': lambda: L.tensor([2]) // 0,
        'remainder int zero': lambda: L.tensor([2]) % 0,
        'bitwise float': lambda: a & a,
        'shift float': lambda: a << 1,
        'invert float': lambda: ~a,
        'item multi': lambda: a.item(),
        'bool multi': lambda: bool(a),
        'int multi': lambda: int(a),
        'float tensor cplx': lambda: float(c[0, 0]),
        'tolist ok': lambda: a.tolist(),
        'numpy rg': lambda: L.ones(2, requires_grad=True).numpy(),
        'backward nonscalar': lambda: L.ones(2, requires_grad=True).mul(2).backward(),
        'backward no grad': lambda: a.sum().backward(),
        'grad int rg': lambda: L.ones(2, dtype=L.int64).requires_grad_(),
        'requires_grad nonleaf false': lambda: L.ones(2, requires_grad=True).mul(2).requires_grad_(False),
        'inplace leaf': lambda: L.ones(2, requires_grad=True).add_(1),
        'inplace dtype': lambda: ai.add_(1.5),
        'inplace broadcast': lambda: b.add_(L.ones(2, 4)),
        'copy shape': lambda: a.copy_(b),
        'to bad': lambda: a.to('xyz'),
        'type bad': lambda: a.type('foo'),
        'einsum bad': lambda: L.einsum('ij,jk->ik', a, a),
        'einsum letters': lambda: L.einsum('ij->k', a),
        'det nonsquare': lambda: L.linalg.det(a),
        'inv singular': lambda: L.linalg.inv(L.zeros(2, 2)),
        'cholesky nonpd': lambda: L.linalg.cholesky(-L.eye(2)),
        'solve shape': lambda: L.linalg.solve(L.eye(2), L.ones(3)),
        'norm bad ord': lambda: L.linalg.norm(a, ord='fro', dim=0),
        'svd 1d': lambda: L.linalg.svd(b),
        'eigh nonsquare': lambda: L.linalg.eigh(a),
        'matrix_power neg singular': lambda: L.linalg.matrix_power(L.zeros(2, 2), -1),
        'multinomial neg': lambda: L.multinomial(L.tensor([-1.0, 1.0]), 1),
        'multinomial too many': lambda: L.multinomial(L.tensor([1.0, 1.0]), 3),
        'bernoulli bad p': lambda: L.bernoulli(L.tensor([1.5])),
        'normal neg std': lambda: L.normal(0.0, -1.0, (2,)),
        'randint bad': lambda: L.randint(5, 2, (2,)),
        'randperm neg': lambda: L.randperm(-1),
        'searchsorted dims': lambda: L.searchsorted(a, b),
        'bincount neg': lambda: L.bincount(L.tensor([-1])),
        'histc bad range': lambda: L.histc(b, min=2, max=1),
        'scatter idx oob': lambda: L.zeros(3).scatter(0, L.tensor([5]), 1.0),
        'index_add shape': lambda: L.zeros(3, 2).index_add(0, L.tensor([0]), L.ones(1, 3)),
        'masked_scatter src small': lambda: L.zeros(3).masked_scatter(L.tensor([True, True, True]), L.ones(2)),
        'take oob': lambda: L.take(a, L.tensor([10])),
        'unflatten bad': lambda: a.unflatten(1, (2, 2)),
        'movedim dup': lambda: a.movedim((0, 1), (0, 0)),
        'diag 3d': lambda: L.diag(L.ones(2, 2, 2)),
        'trace 1d': lambda: L.trace(b),
        'cross bad': lambda: L.linalg.cross(a, a),
        'outer 2d': lambda: L.outer(a, a),
        'dot shapes': lambda: L.dot(b, L.ones(3)),
        'dot dtypes': lambda: L.dot(b, L.ones(4, dtype=L.float64)),
        'mm dtypes': lambda: L.mm(a, L.ones(3, 2, dtype=L.float64)),
        'cumsum bool out': lambda: L.ones(2, dtype=L.bool).cumsum(0),
        'lerp dtypes': lambda: L.lerp(a, ai, 0.5),
        'cdist shapes': lambda: L.cdist(L.ones(2, 3), L.ones(2, 4)),
        'unfold big': lambda: b.unfold(0, 5, 1),
        'std dim oob': lambda: a.std(3),
        'var correction big': lambda: a.var(correction=5),
        'logsumexp int': lambda: L.logsumexp(ai, 0),
        'quantile bad q': lambda: L.quantile(b, 1.5),
        'nanquantile int': lambda: L.nanquantile(ai.float().long(), 0.5),
        'grad non-tensor': lambda: L.autograd.grad(L.ones(1, requires_grad=True).sum(), [1.0]),
        'Parameter int': lambda: L.nn.Parameter(ai),
        'Linear bad': lambda: L.nn.Linear(-1, 2),
        'Conv bad groups': lambda: L.nn.Conv2d(3, 4, 3, groups=2),
        'Embedding pad oob': lambda: L.nn.Embedding(5, 2, padding_idx=7),
        'Dropout p': lambda: L.nn.Dropout(2.0),
        'LSTM bad input': lambda: L.nn.LSTM(3, 4)(L.ones(2, 5)),
        'MHA bad heads': lambda: L.nn.MultiheadAttention(7, 2),
        'BN bad input': lambda: L.nn.BatchNorm2d(3)(L.ones(2, 3)),
        'Sequential idx': lambda: L.nn.Sequential(L.nn.ReLU())[3],
        'ModuleList idx': lambda: L.nn.ModuleList()[0],
        'load_state_dict bad': lambda: L.nn.Linear(2, 2).load_state_dict({'weight': L.ones(3, 3)}),
        'SGD neg lr': lambda: L.optim.SGD([L.nn.Parameter(L.ones(1))], lr=-1),
        'Adam bad beta': lambda: L.optim.Adam([L.nn.Parameter(L.ones(1))], betas=(1.5, 0.9)),
        'SGD empty': lambda: L.optim.SGD([], lr=0.1),
        'SGD nesterov bad': lambda: L.optim.SGD([L.nn.Parameter(L.ones(1))], lr=0.1, nesterov=True),
        'optimizer non-leaf': lambda: L.optim.SGD([L.ones(1, requires_grad=True) * 2], lr=0.1),
        'clip_grad nan':
            lambda: L.nn.utils.clip_grad_norm_([L.nn.Parameter(L.ones(1))], float('nan'), error_if_nonfinite=True),
        'addmm shapes': lambda: L.addmm(L.ones(2, 2), a, a),
        'addmv shapes': lambda: L.addmv(L.ones(2), a, b),
        'baddbmm': lambda: L.baddbmm(L.ones(1, 2, 2), a[None], a[None]),
        'bmm batch': lambda: L.bmm(L.ones(2, 2, 3), L.ones(3, 3, 2)),
        'matmul 1d mismatch': lambda: L.matmul(b, L.ones(3)),
        'mv shape': lambda: L.mv(a, b),
        'dot 2d': lambda: L.dot(a, a),
        'kron ok': lambda: L.kron(a, a),
        'tensordot dims': lambda: L.tensordot(a, a, dims=([1], [1])),
        'tensordot bad': lambda: L.tensordot(a, a, dims=([0], [1])),
        'cross dim': lambda: L.linalg.cross(L.ones(2, 3), L.ones(2, 3), dim=0),
        'cross broadcast': lambda: L.linalg.cross(L.ones(2, 3), L.ones(3, 3)),
        'conv1d groups': lambda: F.conv1d(L.ones(1, 4, 5), L.ones(2, 3, 3), groups=2),
        'conv_t bad': lambda: F.conv_transpose2d(L.ones(1, 2, 3, 3), L.ones(3, 2, 3, 3)),
        'conv neg pad': lambda: F.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3), padding=-1),
        'conv stride 0': lambda: F.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3), stride=0),
        'conv bias shape': lambda: F.conv2d(L.ones(1, 1, 5, 5), L.ones(2, 1, 3, 3), L.ones(3)),
        'linear bias shape': lambda: F.linear(a, L.ones(4, 3), L.ones(3)),
        'avgpool neg': lambda: F.avg_pool2d(L.ones(1, 1, 4, 4), 0),
        'adaptive 0': lambda: F.adaptive_avg_pool2d(L.ones(1, 1, 4, 4), (0, 2)),
        'interp bad mode': lambda: F.interpolate(L.ones(1, 1, 4), scale_factor=2, mode='bicubic'),
        'interp both': lambda: F.interpolate(L.ones(1, 1, 4), size=3, scale_factor=2),
        'upsample align nearest':
            lambda: F.interpolate(L.ones(1, 1, 4), scale_factor=2, mode='nearest', align_corners=True),
        'grid_sample shape': lambda: F.grid_sample(L.ones(1, 1, 3, 3), L.ones(1, 2, 2, 3)),
        'pixel_shuffle bad': lambda: F.pixel_shuffle(L.ones(1, 3, 2, 2), 2),
        'unfold 3d': lambda: F.unfold(L.ones(1, 3, 3), 2),
        'fold bad': lambda: F.fold(L.ones(1, 5, 4), (3, 3), 2),
        'embedding_bag offsets': lambda: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(5, 2), L.tensor([1, 2])),
        'embedding_bag 2d offsets': lambda: F.embedding_bag(L.tensor([[1, 2], [3, 4]]), L.ones(5, 2), L.tensor([0])),
        'ctc bad lengths':
            lambda: F.ctc_loss(L.ones(5, 1, 3).log_softmax(2), L.tensor([[1, 1]]), L.tensor([6]), L.tensor([2])),
        'kl shape': lambda: F.kl_div(a, b),
        'l1 shape': lambda: F.l1_loss(a, b),
        'huber delta': lambda: F.huber_loss(a, a, delta=-1),
        'smooth beta': lambda: F.smooth_l1_loss(a, a, beta=-1),
        'nll weight shape': lambda: F.nll_loss(a, L.tensor([0, 1]), weight=L.ones(4)),
        'ce weight shape': lambda: F.cross_entropy(a, L.tensor([0, 1]), weight=L.ones(2)),
        'ce probs shape': lambda: F.cross_entropy(a, L.ones(2, 4)),
        'ce label smoothing': lambda: F.cross_entropy(a, L.tensor([0, 1]), label_smoothing=1.5),
        'margin shape': lambda: F.margin_ranking_loss(b, b, L.ones(3)),
        'triplet dims': lambda: F.triplet_margin_loss(a, a, b),
        'cos emb target': lambda: F.cosine_embedding_loss(a, a, L.ones(3)),
        'hinge': lambda: F.hinge_embedding_loss(a, b),
        'multi_margin p': lambda: F.multi_margin_loss(a, L.tensor([0, 1]), p=3),
        'multilabel margin': lambda: F.multilabel_margin_loss(a, L.ones(2, 2, dtype=L.int64)),
        'gaussian nll var': lambda: F.gaussian_nll_loss(a, a, -a),
        'gaussian var shape': lambda: F.gaussian_nll_loss(a, a, L.ones(3, 3)),
        'poisson shape': lambda: F.poisson_nll_loss(a, b),
        'bce weight shape': lambda: F.binary_cross_entropy(a * 0.5, a * 0.5, weight=L.ones(3, 3)),
        'bcel pos_weight': lambda: F.binary_cross_entropy_with_logits(a, a, pos_weight=L.ones(4)),
        'softmin dim none': lambda: F.softmin(a),
        'log_softmax dtype int': lambda: F.log_softmax(a, 1, dtype=L.int64),
        'gumbel tau': lambda: F.gumbel_softmax(a, tau=0.0),
        'normalize p neg': lambda: F.normalize(a, p=-1),
        'layer_norm weight shape': lambda: F.layer_norm(a, (3,), weight=L.ones(2)),
        'group_norm bad': lambda: F.group_norm(L.ones(2, 4, 3), 3),
        'instance_norm 1 value': lambda: F.instance_norm(L.ones(2, 3, 1)),
        'local_response': lambda: F.local_response_norm(L.ones(2), 2),
        'glu odd': lambda: F.glu(L.ones(2, 3)),
        'prelu weight': lambda: F.prelu(L.ones(2, 3), L.ones(2)),
        'threshold': lambda: F.threshold(a, 0.5, 2.0),
        'hardtanh bad': lambda: F.hardtanh(a, 1.0, 0.0),
        'elu alpha neg': lambda: F.elu(a, -1),
        'dropout2d 1d': lambda: F.dropout2d(L.ones(3)),
        'alpha_dropout p': lambda: F.alpha_dropout(a, 2.0),
        'sdpa shapes': lambda: F.scaled_dot_product_attention(L.ones(2, 3, 4), L.ones(2, 5, 3), L.ones(2, 5, 4)),
        'sdpa mask and causal':
            lambda: F.scaled_dot_product_attention(
                L.ones(2, 3, 4), L.ones(2, 3, 4), L.ones(2, 3, 4), attn_mask=L.ones(3, 3, dtype=L.bool), is_causal=True),
        'mha q dim': lambda: L.nn.MultiheadAttention(4, 2)(L.ones(3, 1, 5), L.ones(3, 1, 4), L.ones(3, 1, 4)),
        'lstm h0 shape': lambda: L.nn.LSTM(3, 4)(L.ones(5, 2, 3), (L.ones(1, 2, 5), L.ones(1, 2, 4))),
        'gru input size': lambda: L.nn.GRU(3, 4)(L.ones(5, 2, 4)),
        'rnncell batch': lambda: L.nn.RNNCell(3, 4)(L.ones(2, 3), L.ones(3, 4)),
        'embedding max_norm neg': lambda: L.nn.Embedding(5, 2, max_norm=-1.0)(L.tensor([1])),
        'bn eval missing stats': lambda: F.batch_norm(a, None, None, training=False),
        'Transformer dims': lambda: L.nn.Transformer(8, 3),
        'conv padding same stride': lambda: L.nn.Conv2d(1, 1, 3, stride=2, padding='same'),
        'pool return idx 3 args':
            lambda: F.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.int64), 2, output_size=(5, 5, 5)),
        'cumprod int': lambda: L.cumprod(ai, 0).dtype,
        'prod dtype': lambda: L.prod(ai).dtype,
        'sum bool': lambda: L.ones(2, dtype=L.bool).sum().dtype,
        'mean dtype arg': lambda: L.mean(ai, dtype=L.float64).dtype,
        'std int': lambda: L.std(ai),
        'var_mean int': lambda: L.var_mean(ai),
        'median empty': lambda: L.median(L.ones(0)),
        'mode empty': lambda: L.mode(L.ones(0)),
        'logcumsumexp int': lambda: L.logcumsumexp(ai, 0),
        'cummax empty dim': lambda: L.cummax(L.ones(0, 3), 0)[0].shape,
        'amax empty': lambda: L.amax(L.ones(0, 3), 0),
        'amax empty ok': lambda: L.amax(L.ones(0, 3), 1).shape,
        'argmax empty dim': lambda: L.argmax(L.ones(0, 3), 1).shape,
        'norm int': lambda: L.norm(ai),
        'dist shapes': lambda: L.dist(a, b),
        'diff n neg': lambda: L.diff(a, n=-1),
        'diff prepend shape': lambda: L.diff(a, prepend=L.ones(3)),
        'clamp min>max': lambda: L.clamp(a, 2, 1).tolist(),
        'clamp tensor shapes': lambda: L.clamp(a, L.ones(4)),
        'lerp weight shape': lambda: L.lerp(a, a, L.ones(4)),
        'where scalar both': lambda: L.where(a > 0, 1.0, 0.0).dtype,
        'polar int': lambda: L.polar(ai, ai),
        'complex mismatch': lambda: L.complex(a, a.double()),
        'view_as_complex bad': lambda: L.view_as_complex(a),
        'view_as_real real': lambda: L.view_as_real(a),
        'fft': lambda: L.fft.fft(a) if hasattr(L, 'fft') else None,
        'bucketize 2d bounds': lambda: L.bucketize(b, a),
        'searchsorted side': lambda: L.searchsorted(b, b, side='middle'),
        'histc int': lambda: L.histc(ai),
        'bincount 2d': lambda: L.bincount(ai),
        'bincount weights shape': lambda: L.bincount(L.tensor([1, 2]), weights=L.ones(3)),
        'unique dim oob': lambda: L.unique(a, dim=3),
        'flatten start>end': lambda: a.flatten(1, 0),
        'squeeze multiple oob': lambda: a.squeeze((0, 5)),
        'expand neg': lambda: a.expand(-2, 3),
        'as_strided oob': lambda: L.as_strided(a, (3, 3), (3, 1)),
        'narrow neg length': lambda: a.narrow(0, 0, -1),
        't 3d': lambda: L.ones(2, 2, 2).t(),
        'swapdims oob': lambda: a.swapdims(0, 2),
        'split sizes sum': lambda: a.split([1, 1], 1),
        'tensor_split 0': lambda: a.tensor_split(0),
        'hsplit uneven': lambda: a.hsplit(2),
        'vsplit 1d': lambda: b.vsplit(2),
        'unbind oob': lambda: a.unbind(2),
        'meshgrid bad indexing': lambda: L.meshgrid(b, b, indexing='xx'),
        'cartesian 2d': lambda: L.cartesian_prod(a),
        'combinations 2d': lambda: L.combinations(a),
        'block_diag 3d': lambda: L.block_diag(L.ones(2, 2, 2)),
        'triu 1d': lambda: L.triu(b),
        'diag_embed': lambda: L.diag_embed(a, dim1=0, dim2=0),
        'diagonal same dims': lambda: a.diagonal(dim1=1, dim2=1),
        'trace 3d': lambda: L.trace(L.ones(2, 2, 2)),
        'rot90 dims': lambda: L.rot90(a, 1, (0, 0)),
        'roll no dims multi': lambda: L.roll(a, (1, 2)),
        'flip oob': lambda: L.flip(a, (3,)),
        'fliplr 1d': lambda: L.fliplr(b),
        # functions whose second operand must be a tensor (a Python number is a TypeError in PyTorch)
        **{f'{n} number': (lambda n=n: getattr(L, n)(a, 2)) for n in (
            'maximum', 'minimum', 'fmax', 'fmin', 'atan2', 'arctan2', 'hypot', 'logaddexp', 'logaddexp2', 'igamma',
            'igammac', 'nextafter', 'ldexp', 'heaviside', 'dist', 'kron')},
        **{f'{n} method number': (lambda n=n: getattr(a, n)(2.5)) for n in ('maximum', 'atan2', 'hypot', 'logaddexp')},
        'gcd number': lambda: L.gcd(ai, 2),
        'dot number': lambda: L.dot(b, 2),
        'outer number': lambda: L.outer(b, 2),
        'lerp number end': lambda: L.lerp(a, 2, 0.5),
        'maximum tensor': lambda: L.maximum(a, L.tensor(2.0)),
        'lerp number weight': lambda: L.lerp(a, a, 0.5),
        # the added tensor of addmm-style products must share the factors' dtype (no promotion)
        'addmm self dtype': lambda: L.addmm(L.ones(2, 2), L.ones(2, 2).double(), L.ones(2, 2).double()),
        'baddbmm self dtype': lambda: L.baddbmm(L.ones(1, 2, 2).double(), L.ones(1, 2, 2), L.ones(1, 2, 2)),
        'addmv self dtype': lambda: L.addmv(L.ones(2).double(), L.ones(2, 2), L.ones(2)),
        'addbmm self dtype': lambda: L.addbmm(L.ones(2, 2), L.ones(1, 2, 2).double(), L.ones(1, 2, 2).double()),
    }


def _outcome(L, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _cases(L)[name]()
            return "ok"
        except Exception as ex:  # noqa: BLE001 - the class is what is compared
            return type(ex).__name__


NAMES = [n for n in _cases(tp) if n not in SKIP]


@pytest.mark.parametrize("name", NAMES)
def test_same_refusal_as_pytorch(name):
    assert _outcome(tp, name) == _outcome(torch, name)


def test_addmm_family_dtype_messages_are_pytorchs():
    """Every mix of float32, float64 and int64 over the added tensor and the two factors: PyTorch's message,
    from the check PyTorch makes first."""
    import itertools

    def outcomes(L):
        out = []
        for dts in itertools.product(("float32", "float64", "int64"), repeat=3):
            a, b, c = (L.ones(2, 2, dtype=getattr(L, d)) for d in dts)
            for call in (lambda a, b, c: L.addmm(a, b, c), lambda a, b, c: L.baddbmm(a[None], b[None], c[None]),
                         lambda a, b, c: L.addmv(a[0], b, c[0]), lambda a, b, c: L.addbmm(a, b[None], c[None]),
                         lambda a, b, c: a.clone().addmm_(b, c)):
                try:
                    call(a, b, c)
                    out.append("ok")
                except RuntimeError as e:
                    out.append(str(e))
        return out

    assert outcomes(tp) == outcomes(torch)


def _messages(L):
    """Calls where PyTorch's checks run in a particular order, or promote first: outcome and message."""
    b3, c = L.ones(3, dtype=L.bool), L.tensor([1 + 1j, 2], dtype=L.complex64)
    calls = {
        "max complex dim": lambda: L.max(c, 0), "min complex dim": lambda: c.min(dim=0),
        "l1 int mean": lambda: L.nn.functional.l1_loss(L.tensor([1, 2]), L.tensor([1, 4])),
        "l1 int sum": lambda: L.nn.functional.l1_loss(L.tensor([1, 2]), L.tensor([1, 4]), reduction="sum"),
        "l1 complex": lambda: L.nn.functional.l1_loss(c, c * 2),
        "l1 complex none": lambda: L.nn.functional.l1_loss(c, c * 2j, reduction="none"),
        "pdist half": lambda: L.nn.functional.pdist(L.ones(3, 2, dtype=L.float16)),
        "pdist int": lambda: L.nn.functional.pdist(L.ones(3, 2, dtype=L.int64)),
        "cosine complex": lambda: L.nn.functional.cosine_similarity(c, c),
        "cosine int int": lambda: L.nn.functional.cosine_similarity(L.ones(3, 2, dtype=L.int64), L.ones(3, 2, dtype=L.int64)),
        "cosine int float": lambda: L.nn.functional.cosine_similarity(L.tensor([[1, 2]]), L.tensor([[2.0, 1.0]])),
        "max complex": lambda: L.max(c), "sort complex": lambda: c.sort(), "argsort complex": lambda: L.argsort(c),
        "dist int float": lambda: L.dist(L.tensor([1, 2]), L.tensor([1.0, 3.0])),
        "dist int complex": lambda: L.dist(L.tensor([1, 2]), c), "dist int int": lambda: L.dist(L.tensor([1]), L.tensor([2])),
        "ldexp half int": lambda: L.ldexp(L.ones(2, dtype=L.float16), L.tensor([1, 2])),
        "ldexp bf16 int8": lambda: L.ldexp(L.ones(2, dtype=L.bfloat16), L.tensor([1, 2], dtype=L.int8)),
        "ldexp float bool": lambda: L.ldexp(L.ones(2), L.tensor([True, False])),
        "ldexp bf16 bool": lambda: L.ldexp(L.ones(2, dtype=L.bfloat16), L.tensor(True)),
        "ldexp bool bool": lambda: L.ldexp(L.tensor([True]), L.tensor([True])),
        "ldexp int int": lambda: L.ldexp(L.tensor([3]), L.tensor([2])),
        "round int decimals": lambda: L.round(L.tensor([1, 2]), decimals=1),
        "round bool decimals": lambda: L.round(L.tensor([True]), decimals=1),
        "round complex": lambda: L.round(c), "round int": lambda: L.round(L.tensor([1, 2])),
        "flip no dims": lambda: L.tensor([1, 2]).flip(), "flip fn no dims": lambda: L.flip(L.tensor([1, 2])),
        "cross bool": lambda: L.cross(b3, b3, dim=0), "cross bool uint8": lambda: L.cross(b3, L.ones(3, dtype=L.uint8), dim=0),
        "cross int bool": lambda: L.cross(L.ones(3, dtype=L.int64), b3, dim=0),
        "cross ndim": lambda: L.linalg.cross(L.ones(2, 3), L.ones(3)),
        "cross bool short": lambda: L.cross(b3, L.ones(2, dtype=L.bool), dim=0),
        "polar half": lambda: L.polar(L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16)),
        "dot bool": lambda: L.dot(b3, b3), "dot bool float": lambda: L.dot(b3, L.ones(3)),
        "dot bool 0d": lambda: L.dot(b3, L.tensor(True)), "inner bool": lambda: L.inner(b3, b3),
        "inner bool float": lambda: L.inner(b3, L.ones(3)), "vdot bool float": lambda: L.vdot(b3, L.ones(3)),
        **_dtype_outcomes(L),
    }
    out = {}
    for name, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = call()
                out[name] = ("ok", str(r.dtype).split(".")[-1], [round(float(v), 4) for v in r.reshape(-1).tolist()])
            except Exception as ex:  # noqa: BLE001 - class and message are what is compared
                out[name] = (type(ex).__name__, str(ex))
    return out


def _dtype_outcomes(L):
    """Dtypes a function keeps, promotes or refuses as PyTorch does (integer losses and dropouts, bool
    products, half-precision special functions, ...)."""
    F = L.nn.functional
    i3, u3, b3 = L.tensor([1, 2, 0]), L.tensor([1, 2, 0], dtype=L.uint8), L.tensor([True, False, True])
    t3 = L.tensor([1, -1, 1])
    B = lambda *shape: L.ones(*shape, dtype=L.bool)  # noqa: E731
    h = L.tensor([[0.0, 1.0], [2.0, 3.0]], dtype=L.float16)
    c = L.tensor([1 + 1j, 2], dtype=L.complex64)
    return {
        # margin losses compute in the input's dtype
        "hinge int none": lambda: F.hinge_embedding_loss(i3, t3, reduction="none"),
        "hinge int sum": lambda: F.hinge_embedding_loss(i3, -t3, reduction="sum"),
        "hinge uint8 wraps": lambda: F.hinge_embedding_loss(u3, -t3, reduction="none"),
        "hinge uint8 sum": lambda: F.hinge_embedding_loss(u3, -t3, reduction="sum"),
        "hinge int margin 1.5": lambda: F.hinge_embedding_loss(i3, -t3, margin=1.5, reduction="none"),
        "hinge int float target": lambda: F.hinge_embedding_loss(i3, t3.float(), reduction="none"),
        "hinge int mean": lambda: F.hinge_embedding_loss(i3, t3),
        "hinge uint8 margin -1": lambda: F.hinge_embedding_loss(u3, t3, margin=-1, reduction="none"),
        "hinge int8 margin 300": lambda: F.hinge_embedding_loss(i3.to(L.int8), t3, margin=300, reduction="none"),
        "hinge bool": lambda: F.hinge_embedding_loss(b3, t3),
        "soft margin int": lambda: F.soft_margin_loss(i3, t3),
        "soft margin uint8 none": lambda: F.soft_margin_loss(u3, t3.to(L.int8), reduction="none"),
        "soft margin int double target": lambda: F.soft_margin_loss(i3, t3.double()),
        "soft margin int complex target": lambda: F.soft_margin_loss(i3, t3 * 1j),
        "soft margin half": lambda: F.soft_margin_loss(h[0], L.tensor([1.0, -1.0]), reduction="none"),
        "soft margin float double target": lambda: F.soft_margin_loss(h[0].float(), L.tensor([1.0, -1.0]).double()),
        # channel dropouts: an integer input keeps its dtype at p=1 and is refused otherwise
        "dropout1d int p1": lambda: F.dropout1d(L.ones(2, 3, 4, dtype=L.int64), 1.0),
        "dropout2d uint8 p1": lambda: F.dropout2d(L.ones(2, 3, 2, 2, dtype=L.uint8), 1.0),
        "dropout3d bool p1": lambda: F.dropout3d(L.ones(1, 2, 1, 2, 2, dtype=L.bool), 1.0),
        "dropout3d int 1-d": lambda: F.dropout3d(L.ones(3, dtype=L.int64)),
        "dropout2d int inplace": lambda: F.dropout2d(L.ones(2, 3, 2, 2, dtype=L.int32), inplace=True),
        "dropout1d complex": lambda: F.dropout1d(L.ones(2, 3, dtype=L.complex64)),
        "alpha dropout bool": lambda: F.alpha_dropout(b3, 0.5, training=True),
        "feature alpha dropout int p1": lambda: F.feature_alpha_dropout(L.ones(2, 3, dtype=L.int64), 1.0, True),
        # mvlgamma: integers computed in the default float dtype, half types step by step
        "mvlgamma int": lambda: L.mvlgamma(L.tensor([2, 3, 5]), 2),
        "mvlgamma uint8 pole": lambda: L.mvlgamma(L.tensor([0, 3], dtype=L.uint8), 2),
        "mvlgamma bf16": lambda: L.mvlgamma(L.tensor([2.0, 3.0, 5.0], dtype=L.bfloat16), 3),
        "mvlgamma half": lambda: L.special.multigammaln(L.tensor([2.0, 3.0, 5.0], dtype=L.float16), 2),
        "mvlgamma bool": lambda: L.mvlgamma(b3, 0), "mvlgamma complex": lambda: L.mvlgamma(c, 1),
        "mvlgamma_ int": lambda: L.tensor([2, 3]).mvlgamma_(1),
        "mvlgamma_ bf16": lambda: L.tensor([2.0, 3.5], dtype=L.bfloat16).mvlgamma_(2),
        # searchsorted runs in the common dtype, which must be neither bool nor complex
        "searchsorted bool": lambda: L.searchsorted(b3.sort()[0], b3),
        "searchsorted bool int": lambda: L.searchsorted(b3.sort()[0], i3),
        "searchsorted bool True": lambda: L.searchsorted(b3.sort()[0], True),
        "searchsorted bool 2": lambda: L.searchsorted(b3.sort()[0], 2),
        "searchsorted complex values": lambda: L.searchsorted(L.tensor([0.0, 1.0]), c),
        "searchsorted int complex": lambda: L.searchsorted(L.tensor([0, 1]), 1j),
        "bucketize complex bounds": lambda: L.bucketize(i3, L.tensor([0.0, 1.0]) * 1j),
        "bucketize bool": lambda: L.bucketize(True, b3.sort()[0], out_int32=True),
        # matrix products of bools: the kernel each shape reaches has no bool version (unless it has nothing to do)
        "matmul bool": lambda: L.matmul(B(2, 3), B(3, 2)), "matmul bool vec": lambda: L.matmul(B(3), B(3)),
        "matmul bool mat vec": lambda: L.matmul(B(2, 3), B(3)), "matmul bool vec mat": lambda: B(3) @ B(3, 2),
        "matmul bool batch": lambda: B(2, 2, 3) @ B(2, 3, 2), "matmul bool batch mat": lambda: B(2, 2, 3) @ B(3, 2),
        "matmul bool batch vec": lambda: B(2, 2, 3) @ B(3), "matmul bool mat batch": lambda: B(2, 3) @ B(2, 3, 2),
        "matmul bool empty": lambda: B(2, 0) @ B(0, 3), "matmul bool vec empty": lambda: B(0) @ B(0),
        "mm bool": lambda: L.mm(B(1, 1), B(1, 1)), "mm bool empty": lambda: L.mm(B(0, 3), B(3, 2)),
        "bmm bool": lambda: L.bmm(B(2, 2, 3), B(2, 3, 2)), "bmm bool float": lambda: L.bmm(B(2, 2, 3), L.ones(2, 3, 2)),
        "bmm bool empty": lambda: L.bmm(B(2, 2, 0), B(2, 0, 2)), "mv bool": lambda: L.mv(B(2, 3), B(3)),
        "mv bool empty": lambda: L.mv(B(0, 3), B(3)),
        "tensordot bool": lambda: L.tensordot(B(2, 3), B(3, 2), dims=1),
        "tensordot bool full": lambda: L.tensordot(B(2, 3), B(2, 3)),
        "tensordot bool outer": lambda: L.tensordot(B(2), B(3), dims=0),
        "tensordot bool strided": lambda: L.tensordot(B(3, 2).t(), B(3, 2), dims=([0, 1], [1, 0])),
        "tensordot bool contiguous": lambda: L.tensordot(B(2, 3), B(3, 2), dims=([0, 1], [1, 0])),
        "tensordot bool empty": lambda: L.tensordot(B(2, 0), B(0, 3), dims=1),
        "einsum bool product": lambda: L.einsum("ij,jk->ik", B(2, 3), B(3, 2)),
        "einsum bool sum": lambda: L.einsum("ij->j", B(2, 3)), "einsum bool trace": lambda: L.einsum("ii", B(3, 3)),
        "einsum bool diagonal": lambda: L.einsum("ii->i", B(3, 3)),
        "einsum bool outer": lambda: L.einsum("i,j->ij", B(2), b3), "einsum bool sums": lambda: L.einsum("i,j->", B(2), b3),
        "einsum bool count then bmm": lambda: L.einsum("ij,jk->k", B(2, 3), B(3, 2)),
        "einsum bool size 1": lambda: L.einsum("ij,jk->ik", B(2, 1), B(1, 2)),
        "einsum bool empty": lambda: L.einsum("ij,jk->k", B(2, 0), B(0, 2)),
        "einsum bool three": lambda: L.einsum("i,i,i->", b3, b3, b3),
        "einsum bool three elementwise": lambda: L.einsum("i,i,i->i", b3, b3, b3),
        # bitwise operators of a bool tensor and a number promote as the functions do
        "bool & 1": lambda: b3 & 1, "1 & bool": lambda: 1 & b3, "bool | 2": lambda: b3 | 2, "0 ^ bool": lambda: 0 ^ b3,
        "bool & True": lambda: b3 & True, "bool ^ int tensor": lambda: b3 ^ i3, "bool | 1.5": lambda: b3 | 1.5,
        "bool &= 1": lambda: b3.clone().__iand__(1),
        # frexp of bfloat16, and of subnormal numbers
        "frexp bf16 mantissa": lambda: L.frexp(L.tensor([3.0, -10.0, 0.001, 0.0, 1e-40], dtype=L.bfloat16))[0],
        "frexp bf16 exponent": lambda: L.frexp(L.tensor([3.0, -10.0, 0.001, 0.0, 1e-40], dtype=L.bfloat16))[1],
        "frexp subnormal exponent": lambda: L.frexp(L.tensor([1e-40, -3e-39, 1e-45]))[1],
        "frexp subnormal mantissa": lambda: L.frexp(L.tensor([1e-40, -3e-39, 1e-45]))[0],
        # trapezoid rules refuse bools, after returning zeros for no samples
        "trapezoid bool": lambda: L.trapezoid(b3), "trapezoid bool x": lambda: L.trapezoid(i3.float(), b3),
        "trapezoid bool dx": lambda: L.trapz(b3, dx=2), "trapezoid bool empty": lambda: L.trapezoid(b3[:0]),
        "trapezoid int empty x": lambda: L.trapezoid(i3[:0], i3[:0]),
        "trapezoid bool x wrong length": lambda: L.trapezoid(b3, L.ones(2)),
        "cumulative_trapezoid bool": lambda: L.cumulative_trapezoid(b3),
        "cumulative_trapezoid bool x": lambda: L.cumulative_trapezoid(b3, i3),
        "cumulative_trapezoid bool 0-d": lambda: L.cumulative_trapezoid(L.tensor(True)),
        "cumulative_trapezoid bool empty": lambda: L.cumulative_trapezoid(b3[:0]),
        # cdist: no complex; no half kernel but the Euclidean one by matrix products
        "cdist half": lambda: L.cdist(h, h), "cdist half p1": lambda: L.cdist(h, h, p=1),
        "cdist half mm": lambda: L.cdist(h, h, compute_mode="use_mm_for_euclid_dist"),
        "cdist half many rows": lambda: L.cdist(L.ones(30, 2, dtype=L.float16), h).sum(),
        "cdist bf16 empty": lambda: L.cdist(h[:0].bfloat16(), h.bfloat16()),
        "cdist complex": lambda: L.cdist(h.to(L.complex64), h.to(L.complex64)),
        "cdist float complex": lambda: L.cdist(h.float(), h.to(L.complex64)),
        "cdist int columns": lambda: L.cdist(L.ones(2, 2, dtype=L.int64), L.ones(2, 3, dtype=L.int64)),
        "cdist half neg p": lambda: L.cdist(h, h, p=-1),
        # polygamma's kernels and in-place abs refuse complex
        "polygamma complex 0": lambda: L.polygamma(0, c), "polygamma complex 1": lambda: c.polygamma(1),
        "polygamma complex 3": lambda: L.special.polygamma(3, c),
        "abs_ complex": lambda: c.clone().abs_(), "absolute_ complex": lambda: c.clone().absolute_(),
        "abs_ int": lambda: (-i3).abs_(),
        # round: an explicit `decimals`, even 0, takes the kernel without an integer version
        "round int decimals 0": lambda: L.round(i3, decimals=0), "round_ int decimals 0": lambda: i3.clone().round_(decimals=0),
        "round uint8 decimals 0": lambda: u3.round(decimals=0), "round int decimals -1": lambda: L.round(i3, decimals=-1),
        # logcumsumexp without dim: the missing argument first
        "logcumsumexp int no dim": lambda: L.logcumsumexp(i3), "logcumsumexp no dim": lambda: L.logcumsumexp(i3.float()),
        "logcumsumexp method bool no dim": lambda: b3.logcumsumexp(),
    }


def test_ordered_checks_and_promotions_give_pytorchs_outcome_and_message():
    mine, theirs = _messages(tp), _messages(torch)
    wrong = {k: (mine[k], theirs[k]) for k in theirs if mine[k] != theirs[k]}
    assert not wrong, wrong


def _functional_call(L, name, a):
    F = L.nn.functional
    f = getattr(F, name)
    two = ("mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "multilabel_soft_margin_loss", "kl_div", "hinge_embedding_loss", "soft_margin_loss")
    special = {
        "layer_norm": lambda: f(a, (4,)), "rms_norm": lambda: f(a, (4,)), "group_norm": lambda: f(a[None], 2),
        "instance_norm": lambda: f(a[None]), "avg_pool1d": lambda: f(a, 2), "max_pool1d": lambda: f(a, 2),
        "lp_pool1d": lambda: f(a, 2, 2), "adaptive_avg_pool1d": lambda: f(a, 2), "local_response_norm": lambda: f(a[None], 2),
        "linear": lambda: f(a, a), "conv1d": lambda: f(a[None], a[:, :, None][:, :2]), "prelu": lambda: f(a, L.ones(1, dtype=a.dtype)),
        "unfold": lambda: f(a[None, None], 1), "dropout": lambda: f(a, 0.5), "threshold": lambda: f(a * 3, 1.5, -7),
        "hardtanh": lambda: f(a * 3, -1.5, 2.5), "relu6": lambda: f(a * 9),
        "dropout1d": lambda: f(a, 0.5), "dropout2d": lambda: f(a[None], 0.5), "dropout3d": lambda: f(a[None, None], 0.5),
    }
    if name in two:
        return f(a, a)
    return special[name]() if name in special else f(a)


FUNCTIONAL = ["elu", "selu", "celu", "leaky_relu", "rrelu", "prelu", "silu", "softshrink", "hardshrink", "hardsigmoid",
              "hardswish", "logsigmoid", "glu", "layer_norm", "group_norm", "instance_norm", "rms_norm", "mse_loss",
              "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
              "multilabel_soft_margin_loss", "avg_pool1d", "local_response_norm", "lp_pool1d", "max_pool1d",
              "adaptive_avg_pool1d", "linear", "conv1d", "unfold", "dropout", "kl_div", "hardtanh", "relu6", "threshold",
              "hinge_embedding_loss", "soft_margin_loss", "dropout1d", "dropout2d", "dropout3d"]


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_refuses_the_dtypes_pytorchs_kernels_lack(name):
    def outcomes(L):
        out = []
        for dt in ("bool", "uint8", "int32", "int64", "complex64", "float32"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    r = _functional_call(L, name, L.ones(2, 4, dtype=getattr(L, dt)))
                    r = r[0] if isinstance(r, tuple) else r
                    exact = not (r.dtype.is_floating_point or r.dtype.is_complex)  # (integer results: their values)
                    out.append(("ok", str(r.dtype).split(".")[-1], r.tolist() if exact else None))
                except Exception as ex:  # noqa: BLE001 - class and message are what is compared
                    out.append((type(ex).__name__, str(ex)))
        return out

    assert outcomes(tp) == outcomes(torch)


def _interpolations(L):
    """`interpolate` over modes, ranks and dtypes: uint8 takes the nearest modes, bilinear and bicubic (PyTorch's
    PIL-like integer path for the last two, antialiased or not); other integers, bools and complex numbers are
    refused by the kernel each mode reaches."""
    F = L.nn.functional
    img = L.tensor([[[[17, 200, 3, 90, 255, 0, 41], [128, 64, 250, 7, 33, 190, 12], [0, 255, 0, 255, 0, 255, 0],
                      [99, 98, 97, 96, 95, 94, 93], [5, 180, 60, 240, 120, 30, 210]]]], dtype=L.uint8)
    img = L.cat([img, img.flip(-1), 255 - img], 1)  # (three channels)
    calls = [lambda: F.interpolate(img, size=(9, 4), mode="bilinear"),
             lambda: F.interpolate(img, size=(3, 11), mode="bilinear", align_corners=True),
             lambda: F.interpolate(img, scale_factor=(1.5, 0.6), mode="bilinear"),
             lambda: F.interpolate(img, size=(2, 3), mode="bilinear", antialias=True),
             lambda: F.interpolate(img, size=(8, 13), mode="bicubic"),
             lambda: F.interpolate(img, size=(4, 5), mode="bicubic", align_corners=True),
             lambda: F.interpolate(img, size=(2, 3), mode="bicubic", antialias=True),
             lambda: F.interpolate(img, size=(5, 2), mode="bicubic", antialias=True, align_corners=True),
             lambda: F.interpolate(img.repeat(1, 2, 1, 1), size=(3, 4), mode="bilinear"),  # (six channels)
             lambda: F.interpolate(img, size=(7, 9), mode="nearest"),
             lambda: F.interpolate(img, scale_factor=2, mode="nearest-exact"),
             lambda: F.interpolate(img[0], size=10, mode="nearest"),
             lambda: F.interpolate(img[:, :, None], size=(2, 3, 3), mode="nearest-exact")]
    for dt in ("int8", "int64", "bool", "complex64", "uint8"):
        x = L.ones(1, 1, 2, 2, dtype=getattr(L, dt))
        calls += [lambda x=x, m=m: F.interpolate(x, scale_factor=2, mode=m)
                  for m in ("nearest", "nearest-exact", "bilinear", "bicubic", "area")]
        calls += [lambda x=x, m=m: F.interpolate(x[0], scale_factor=2, mode=m) for m in ("nearest", "linear", "area")]
        calls += [lambda x=x, m=m: F.interpolate(x[:, :, None], scale_factor=2, mode=m)
                  for m in ("nearest", "trilinear", "area")]
        calls += [lambda x=x, m=m: F.interpolate(x, size=(1, 3), mode=m, antialias=True) for m in ("bilinear", "bicubic")]
    out = []
    for call in calls:
        try:
            r = call()
            out.append((str(r.dtype).split(".")[-1], r.tolist() if r.dtype is L.uint8 else None))
        except Exception as ex:  # noqa: BLE001 - class and message are what is compared
            out.append((type(ex).__name__, str(ex)))
    return out


def test_interpolate_gives_pytorchs_uint8_values_and_refusals():
    mine, theirs = _interpolations(tp), _interpolations(torch)
    wrong = [(i, m, t) for i, (m, t) in enumerate(zip(mine, theirs)) if m != t]
    assert not wrong, wrong


def _bool_einsums(L, count=60):
    """Random einsums of bool operands (seeded): sizes 0, 1 and more, repeated labels, ellipses, implicit and
    explicit outputs, up to four operands (contracted in opt_einsum's order, as PyTorch does)."""
    import random

    rng = random.Random(11)
    out = []
    for _ in range(count):
        size = {c: rng.choice([0, 1, 1, 2, 3]) for c in "ijkl"}
        ell = [rng.choice([1, 2]) for _ in range(rng.randint(0, 2))] if rng.random() < 0.25 else None
        terms, shapes = [], []
        for _ in range(rng.choice([1, 2, 2, 3, 4])):
            term = "".join(rng.choice("ijkl") for _ in range(rng.randint(0, 3)))
            shape = [size[c] for c in term]
            if ell is not None:
                kept = rng.randint(0, len(ell))
                term, shape = "..." + term, ell[len(ell) - kept:] + shape
            terms.append(term)
            shapes.append(shape)
        labels = sorted(set("".join(terms)) - {"."})
        equation = ",".join(terms)
        if rng.random() < 0.5:
            equation += "->" + ("..." if ell is not None and rng.random() < 0.5 else "")
            equation += "".join(rng.sample(labels, rng.randint(0, len(labels))))
        operands = [L.tensor([rng.random() < 0.6 for _ in range(int(np.prod(sh)))], dtype=L.bool).reshape(sh)
                    for sh in shapes]
        try:
            r = L.einsum(equation, *operands)
            out.append((equation, str(r.dtype).split(".")[-1], r.long().tolist()))
        except Exception as ex:  # noqa: BLE001 - class and message are what is compared
            out.append((equation, type(ex).__name__, str(ex)))
    return out


def test_bool_einsum_follows_pytorchs_steps():
    wrong = [(m, t) for m, t in zip(_bool_einsums(tp), _bool_einsums(torch)) if m != t]
    assert not wrong, wrong


def _gradients(L):
    """`gradient` over spacings, dims and edge orders, and its refusals: values (rounded) or class and message."""
    x = L.tensor([1.0, 4.0, 9.0, 16.0, 25.0])
    y = L.arange(12.0).reshape(3, 4) ** 2
    cx, c0, c1 = L.tensor([0.0, 1.0, 1.5, 3.5, 4.0]), L.tensor([0.0, 1.0, 3.0]), L.tensor([0.0, 0.5, 1.0, 3.0])
    calls = [lambda: L.gradient(x), lambda: L.gradient(x, spacing=2.0), lambda: L.gradient(x, spacing=(cx,)),
             lambda: L.gradient(x, edge_order=2), lambda: L.gradient(x, spacing=(cx,), edge_order=2),
             lambda: L.gradient(y), lambda: L.gradient(y, dim=1), lambda: L.gradient(y, spacing=[1.0, 2.0]),
             lambda: L.gradient(y, spacing=[c0, c1], edge_order=2), lambda: L.gradient(y, dim=-1, spacing=[c1]),
             lambda: L.gradient(L.tensor([1, 4, 9])), lambda: L.gradient(L.tensor([1 + 1j, 4, 9j])),
             lambda: L.gradient(L.ones(1)), lambda: L.gradient(L.ones(2), edge_order=2),
             lambda: L.gradient(L.ones(3), edge_order=3), lambda: L.gradient(L.ones(3, dtype=L.uint8)),
             lambda: L.gradient(L.ones(3), spacing=[1.0, 2.0]), lambda: L.gradient(L.ones(3, 3), dim=[0, 0]),
             lambda: L.gradient(L.tensor([True, False, True])), lambda: L.gradient(L.ones(3, 3), dim=0, spacing=[1.0, 2.0])]
    out = []
    for call in calls:
        try:
            r = call()
            out.append([str(t.dtype).split(".")[-1] for t in r] + [t.numpy().round(4).tolist() for t in r])
        except Exception as ex:  # noqa: BLE001 - class and message are what is compared
            out.append((type(ex).__name__, str(ex)))
    return out


def test_gradient_gives_pytorchs_values_and_errors():
    assert _gradients(tp) == _gradients(torch)
