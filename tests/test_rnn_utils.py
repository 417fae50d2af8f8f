"""nn.utils.rnn: padding and packing equal PyTorch's (values, indices, gradients), and the recurrent layers
given a PackedSequence give PyTorch's outputs, final states and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

LENGTHS = [3, 5, 1, 5]  # unsorted, with a tie


def _seqs(lib, feat=(2,)):
    r = np.random.default_rng(0)
    return [lib.tensor(r.normal(size=(n, *feat)), dtype=lib.float64, requires_grad=True) for n in LENGTHS]


def _np(x):
    return x.detach().numpy()


@pytest.mark.parametrize("batch_first,side", [(False, "right"), (True, "left")])
def test_pad_sequence(batch_first, side):
    outs = []
    for lib in (tp, torch):
        seqs = _seqs(lib)
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.0, padding_side=side)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        outs.append([_np(out)] + [_np(s.grad) for s in seqs])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_round_trip(batch_first):
    results = []
    for lib in (tp, torch):
        R = lib.nn.utils.rnn
        padded = R.pad_sequence(_seqs(lib), batch_first=batch_first).detach().requires_grad_()
        packed = R.pack_padded_sequence(padded, lib.tensor(LENGTHS), batch_first=batch_first, enforce_sorted=False)
        back, lengths = R.pad_packed_sequence(packed, batch_first=batch_first, padding_value=7.0, total_length=6)
        (back * lib.arange(back.numel(), dtype=lib.float64).reshape(back.shape)).sum().backward()
        results.append([_np(packed.data), packed.batch_sizes.numpy(), packed.sorted_indices.numpy(),
                        packed.unsorted_indices.numpy(), _np(back), lengths.numpy(), _np(padded.grad)])
        results[-1] += [_np(s) for s in R.unpack_sequence(packed)]
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    assert results[0][5].tolist() == LENGTHS


def test_pack_sequence_sorted_and_errors():
    R = tp.nn.utils.rnn
    p = R.pack_sequence([tp.tensor([1, 2, 3]), tp.tensor([4, 5]), tp.tensor([6])])
    assert p.data.tolist() == [1, 4, 6, 2, 5, 3] and p.batch_sizes.tolist() == [3, 2, 1] and p.sorted_indices is None
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order when `enforce_sorted` is True"):
        R.pack_sequence([tp.tensor([1]), tp.tensor([2, 3])])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        R.pack_padded_sequence(tp.zeros(3, 2), [2, 0])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest"):
        R.pad_packed_sequence(p, total_length=2)


CASES = {
    "LSTM bidirectional, initial state": ("LSTM", dict(input_size=2, hidden_size=3, bidirectional=True), True),
    "GRU 2-layer, batch_first (ignored when packed)": ("GRU", dict(input_size=2, hidden_size=3, num_layers=2,
                                                                   batch_first=True), False),
}


def _packed_run(lib, kind, kwargs, with_state, weights):
    layer = getattr(lib.nn, kind)(**kwargs).double()
    layer.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    seqs = _seqs(lib)
    packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    r = np.random.default_rng(3)
    n = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    state = None
    if with_state:
        state = [lib.tensor(r.normal(size=(n, len(LENGTHS), 3)), dtype=lib.float64, requires_grad=True)
                 for _ in range(2 if kind == "LSTM" else 1)]
    out, h = layer(packed, None if state is None else tuple(state) if len(state) == 2 else state[0])
    assert isinstance(out, lib.nn.utils.rnn.PackedSequence)
    flat = [out.data] + (list(h) if isinstance(h, tuple) else [h])
    sum((f * lib.tensor(np.random.default_rng(9 + i).normal(size=tuple(f.shape)))).sum()
        for i, f in enumerate(flat)).backward()
    grads = [s.grad for s in seqs] + [p.grad for _, p in sorted(layer.named_parameters())] + (state or [])
    return [_np(f) for f in flat], [_np(g if not getattr(g, "requires_grad", False) else g.grad) for g in grads]


@pytest.mark.parametrize("name", sorted(CASES))
def test_recurrent_layers_take_packed_sequences_like_pytorch(name):
    kind, kwargs, with_state = CASES[name]
    torch.manual_seed(0)
    weights = {k: v.double().numpy() for k, v in getattr(torch.nn, kind)(**kwargs).state_dict().items()}
    (o1, g1), (o2, g2) = (_packed_run(lib, kind, kwargs, with_state, weights) for lib in (tp, torch))
    assert len(g1) == len(g2)
    for a, b in zip(o1 + g1, o2 + g2):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)
