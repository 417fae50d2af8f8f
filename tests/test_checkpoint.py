"""utils.checkpoint: the block keeps no intermediates on the tape, and outputs, input gradients and parameter
gradients equal an unchecked run's (dropout replayed) and PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeflow as tp
from tapeflow.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _block(lib, p_drop=0.0):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Dropout(p_drop), lib.nn.Linear(5, 2)).double()
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.tensor(np.random.default_rng(i).normal(size=tuple(p.shape))))
    return net


def _run(lib, reentrant, checkpointed, x_grad=True, p_drop=0.0):
    net = _block(lib, p_drop)
    x = lib.tensor(np.random.default_rng(7).normal(size=(4, 3)), requires_grad=x_grad)

    def f(inp, scale):
        h = net(inp)
        return h * scale, h.sum()

    lib.manual_seed(1)
    out, total = checkpoint(f, x, 2.0, use_reentrant=reentrant) if checkpointed else f(x, 2.0)
    (out.pow(2).sum() + total).backward()
    grads = [None if p.grad is None else p.grad.numpy() for p in net.parameters()]
    return out, [out.detach().numpy(), None if x.grad is None else x.grad.numpy(), *grads]


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_equals_plain_and_pytorch(reentrant):
    out, mine = _run(tp, reentrant, True)
    _, plain = _run(tp, reentrant, False)
    for a, b in zip(mine, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    import torch.utils.checkpoint as tc

    net = _block(torch)
    x = torch.tensor(np.random.default_rng(7).normal(size=(4, 3)), requires_grad=True)
    o, t = tc.checkpoint(lambda i, s: (net(i) * s, net(i).sum()), x, 2.0, use_reentrant=reentrant)
    (o.pow(2).sum() + t).backward()
    theirs = [o.detach().numpy(), x.grad.numpy(), *(p.grad.numpy() for p in net.parameters())]
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # The block is one node whose edges lead straight to leaves: its Linear/Tanh nodes were not kept.
    assert out.grad_fn.name() == "_CheckpointBackward"
    assert {type(n).__name__ for n, _ in out.grad_fn.next_functions if n is not None} == {"AccumulateGrad"}


def test_dropout_is_replayed_in_the_recomputation():
    _, mine = _run(tp, False, True, p_drop=0.5)
    _, plain = _run(tp, False, False, p_drop=0.5)
    for a, b in zip(mine, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_inputs_without_grad_and_argument_errors():
    _, mine = _run(tp, False, True, x_grad=False)  # non-reentrant: parameters still get gradients
    assert mine[1] is None and all(g is not None for g in mine[2:])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(_block(tp), tp.ones(2, 3, dtype=tp.float64), use_reentrant=True)
    assert not out.requires_grad  # reentrant, as PyTorch: nothing reaches the parameters
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda x, scale: x, tp.ones(1), use_reentrant=True, scale=2)
    assert float(checkpoint(lambda x, scale: x * scale, tp.ones(1), use_reentrant=False, scale=2.0)) == 2.0
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda x: x * 2, tp.ones(1, requires_grad=True))


def test_checkpoint_sequential_equals_plain():
    net = _block(tp)
    x = tp.tensor(np.random.default_rng(7).normal(size=(4, 3)), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = checkpoint_sequential(net, 2, x, use_reentrant=False)
    y.pow(2).sum().backward()
    g = [x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]
    x.grad = None
    net.zero_grad()
    net(x).pow(2).sum().backward()
    for a, b in zip(g, [x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
