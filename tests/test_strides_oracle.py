"""Strides, storage offsets and contiguity as PyTorch reports them, for random chains of view ops (transpose,
permute, slices, select, unsqueeze, squeeze, unfold, diagonal, chunk, expand, view); `view` refusing layouts
PyTorch cannot view; `as_strided` on a view reading its base's storage; `contiguous` copying only when needed."""

from __future__ import annotations

import random

import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _chain(L, seed: int) -> list:
    rng = random.Random(seed)
    x = L.arange(120.0).reshape(2, 3, 4, 5)
    steps = []
    for _ in range(rng.randint(1, 4)):
        nd = x.ndim
        if nd == 0:
            break
        r, d = rng.random(), rng.randrange(nd)
        if r < 0.15:
            x = x.transpose(d, rng.randrange(nd))
        elif r < 0.25:
            x = x.permute(*rng.sample(range(nd), nd))
        elif r < 0.4:
            n = x.shape[d]
            a = rng.randrange(n) if n else 0
            b = rng.randrange(a, n + 1) if n else 0
            x = x[(slice(None),) * d + (slice(a, b, rng.choice([1, 1, 2])),)]
        elif r < 0.5 and x.shape[d]:
            x = x.select(d, rng.randrange(x.shape[d]))
        elif r < 0.6:
            x = x.unsqueeze(rng.randrange(nd + 1))
        elif r < 0.65:
            x = x.squeeze()
        elif r < 0.72 and x.shape[d] >= 2:
            x = x.unfold(d, 2, rng.choice([1, 2]))
        elif r < 0.8 and nd >= 2:
            x = x.diagonal(rng.choice([0, 1, -1]), 0, 1)
        elif r < 0.87:
            try:
                x = x.view(-1)
            except RuntimeError as e:
                return steps + ["view refused", str(e)]
        elif r < 0.93 and x.shape[d] >= 2:
            x = x.chunk(2, d)[1]
        else:
            x = x.expand(2, *x.shape)
        steps.append((list(x.shape), list(x.stride()), x.storage_offset(), x.is_contiguous()))
    return steps + [x.flatten()[:6].tolist() if x.numel() else []]


@pytest.mark.parametrize("seed", range(80))
def test_layout_of_random_views_matches_pytorch(seed):
    assert _chain(tp, seed) == _chain(torch, seed)


def test_as_strided_on_a_view_reads_the_base_storage_and_gradients_reach_it():
    results = []
    for L in (tp, torch):
        leaf = L.arange(12.0, requires_grad=True)
        v = (leaf * 1).reshape(3, 4).t()
        same = v.as_strided(v.size(), v.stride(), v.storage_offset())
        y = v.as_strided((2, 2), (1, 4), 1)
        y.sum().backward()
        results.append((same.tolist() == v.tolist(), y.tolist(), leaf.grad.tolist()))
    assert results[0] == results[1]
    assert results[0][0]


def test_contiguous_copies_only_a_non_contiguous_layout():
    x = tp.ones(2, 3)
    assert x.contiguous() is x
    t = x.t()
    c = t.contiguous()
    assert c is not t and c.is_contiguous() and c.stride() == (2, 1) and not t.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        t.view(-1)
    assert t.reshape(-1).tolist() == c.view(-1).tolist()


@pytest.mark.parametrize("name", ["t_", "transpose_", "swapdims_", "as_strided_"])
def test_a_tensor_rearranged_in_place_has_pytorchs_strides(name):
    """After an in-place view op a tensor that views nothing has the strides of its rearranged storage, so it
    is not contiguous, `view` refuses what PyTorch refuses, and its own views start from that layout."""
    ops = {"t_": lambda v: v.t_(), "transpose_": lambda v: v.transpose_(0, 1),
           "swapdims_": lambda v: v.swapdims_(0, 1), "as_strided_": lambda v: v.as_strided_((4, 3), (1, 4))}

    def run(lib):
        v = ops[name](lib.arange(12.0).reshape(3, 4).clone())
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            v.view(-1)
        w = v[1:, ::2]
        return v.stride(), v.is_contiguous(), w.stride(), w.storage_offset(), v.contiguous().view(-1).tolist()

    assert run(tp) == run(torch)


def test_reshape_copies_a_layout_no_view_can_give_so_writes_stay_apart():
    """`reshape` of a transposed tensor is a copy in PyTorch: an in-place write into the result neither
    reaches the source nor bumps its version (a saved tensor stays valid for backward)."""
    def run(lib):
        x = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
        a = x.exp()  # (exp saves its result)
        b = a.transpose(1, 2).reshape(2, 12)
        b += 1.0
        b.sum().backward()
        c = lib.zeros(3, 4).t()
        flat = c.reshape(-1)
        flat[0] = 7.0
        d = lib.zeros(3, 4)
        kept = d.reshape(4, 3)  # (a contiguous tensor: a view, writes do reach it)
        kept[0, 0] = 5.0
        return x.grad.sum().item(), c.sum().item(), d[0, 0].item(), b._base is None, kept._base is d

    mine, theirs = run(tp), run(torch)
    assert mine[1:] == theirs[1:]
    assert abs(mine[0] - theirs[0]) < 1e-3 * abs(theirs[0])
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        tp.zeros(3, 4).t().view_as(tp.zeros(12))
