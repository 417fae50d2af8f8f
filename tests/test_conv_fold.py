"""Conv3d, ConvTranspose1d/3d, Fold/Unfold and LocalResponseNorm: outputs and gradients (input and parameters)
equal PyTorch's given its weights."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

CASES = {
    "Conv3d groups stride dilation": (lambda lib: lib.nn.Conv3d(4, 6, (2, 3, 2), stride=(1, 2, 1), padding=1,
                                                                 dilation=(2, 1, 1), groups=2), (2, 4, 5, 5, 4)),
    "ConvTranspose1d": (lambda lib: lib.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                                                           dilation=1), (2, 4, 5)),
    "ConvTranspose3d": (lambda lib: lib.nn.ConvTranspose3d(2, 3, (2, 3, 2), stride=(2, 1, 2), padding=(0, 1, 1),
                                                           dilation=(1, 2, 1)), (1, 2, 3, 3, 2)),
    "Unfold": (lambda lib: lib.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 3, 5, 6)),
    "Unfold unbatched": (lambda lib: lib.nn.Unfold(2), (2, 3, 3)),
    "Fold": (lambda lib: lib.nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 18, 12)),
    "Fold overlapping, unbatched": (lambda lib: lib.nn.Fold((4, 4), 3, padding=1), (9, 16)),
    "LocalResponseNorm even size": (lambda lib: lib.nn.LocalResponseNorm(4, alpha=0.3, beta=0.6, k=2.0),
                                    (2, 5, 3, 2)),
    "LocalResponseNorm 3-d": (lambda lib: lib.nn.LocalResponseNorm(3), (2, 4, 5)),
}


def _run(lib, ctor, shape, weights):
    m = ctor(lib).double()
    m.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    x = lib.tensor(np.random.default_rng(0).normal(size=shape), requires_grad=True)
    y = m(x)
    (y * lib.tensor(np.random.default_rng(1).normal(size=tuple(y.shape)))).sum().backward()
    return [y.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for _, p in sorted(m.named_parameters())]


@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_pytorch(name):
    ctor, shape = CASES[name]
    torch.manual_seed(0)
    weights = {k: v.double().numpy() for k, v in ctor(torch).state_dict().items()}
    mine, theirs = _run(tp, ctor, shape, weights), _run(torch, ctor, shape, weights)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


def test_fold_and_conv_transpose_errors_and_output_size():
    with pytest.raises(RuntimeError, match="to be divisible by the product of kernel_size"):
        tp.nn.functional.fold(tp.ones(1, 5, 4), (3, 3), 2)
    with pytest.raises(RuntimeError, match="expected size of input's dimension 2 to match the calculated number"):
        tp.nn.functional.fold(tp.ones(1, 4, 5), (3, 3), 2)
    m = tp.nn.ConvTranspose3d(2, 1, 3, stride=2)
    assert m(tp.ones(1, 2, 2, 2, 2), output_size=(6, 5, 6)).shape == (1, 1, 6, 5, 6)
    init = [(k, tuple(v.shape)) for k, v in tp.nn.ConvTranspose1d(4, 6, 3, groups=2).state_dict().items()]
    assert init == [(k, tuple(v.shape)) for k, v in torch.nn.ConvTranspose1d(4, 6, 3, groups=2).state_dict().items()]
