"""RNN, LSTM, GRU and their cells: outputs, final states and every gradient equal PyTorch's given its weights."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

CASES = {
    "LSTM": ("LSTM", dict(input_size=3, hidden_size=4), (6, 2, 3), False),
    "LSTM 2-layer bidirectional batch_first": ("LSTM", dict(input_size=3, hidden_size=4, num_layers=2,
                                                            bidirectional=True, batch_first=True), (2, 6, 3), True),
    "LSTM proj": ("LSTM", dict(input_size=3, hidden_size=5, proj_size=2, num_layers=2), (4, 2, 3), True),
    "LSTM no bias unbatched": ("LSTM", dict(input_size=3, hidden_size=4, bias=False), (5, 3), False),
    "GRU": ("GRU", dict(input_size=3, hidden_size=4, num_layers=2), (6, 2, 3), True),
    "GRU bidirectional": ("GRU", dict(input_size=3, hidden_size=4, bidirectional=True), (5, 3, 3), False),
    "RNN tanh": ("RNN", dict(input_size=3, hidden_size=4, num_layers=2, batch_first=True), (2, 5, 3), True),
    "RNN relu bidirectional": ("RNN", dict(input_size=3, hidden_size=4, nonlinearity="relu", bidirectional=True),
                               (5, 2, 3), False),
    "LSTMCell": ("LSTMCell", dict(input_size=3, hidden_size=4), (2, 3), True),
    "GRUCell": ("GRUCell", dict(input_size=3, hidden_size=4), (2, 3), True),
    "RNNCell unbatched": ("RNNCell", dict(input_size=3, hidden_size=4), (3,), False),
}


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(lib, kind, kwargs, shape, with_state, weights):
    layer = getattr(lib.nn, kind)(**kwargs).double()
    layer.load_state_dict({k: lib.tensor(v, dtype=lib.float64) for k, v in weights.items()})
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.normal(size=shape), dtype=lib.float64, requires_grad=True)
    state = None
    if with_state:
        probe = layer(x.detach())
        outs = _flat(probe)[1:] if not kind.endswith("Cell") else _flat(probe)
        state = [lib.tensor(rng.normal(size=tuple(o.shape)), dtype=lib.float64, requires_grad=True) for o in outs]
        arg = tuple(state) if len(state) == 2 else state[0]
        out = layer(x, arg)
    else:
        out = layer(x)
    flat = _flat(out)
    total = sum((o * lib.tensor(np.random.default_rng(2 + i).normal(size=tuple(o.shape)), dtype=lib.float64)).sum()
                for i, o in enumerate(flat))
    total.backward()
    grads = [x.grad.numpy()] + [p.grad.numpy() for _, p in sorted(layer.named_parameters())]
    grads += [s.grad.numpy() for s in state or []]
    return [o.detach().numpy() for o in flat], grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_equals_pytorch(name):
    kind, kwargs, shape, with_state = CASES[name]
    torch.manual_seed(0)
    weights = {k: v.double().numpy() for k, v in getattr(torch.nn, kind)(**kwargs).state_dict().items()}
    (o1, g1), (o2, g2) = (_run(lib, kind, kwargs, shape, with_state, weights) for lib in (tp, torch))
    assert len(o1) == len(o2) and len(g1) == len(g2)
    for a, b in zip(o1, o2):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"{name}: outputs")
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11, err_msg=f"{name}: gradients")


def test_parameter_names_shapes_and_init_range_match():
    for kind, kwargs, *_ in CASES.values():
        mine, theirs = getattr(tp.nn, kind)(**kwargs), getattr(torch.nn, kind)(**kwargs)
        assert [(k, tuple(v.shape)) for k, v in mine.named_parameters()] == \
               [(k, tuple(v.shape)) for k, v in theirs.named_parameters()]
        bound = 1 / np.sqrt(kwargs["hidden_size"])
        assert all(np.abs(p.detach().numpy()).max() <= bound for p in mine.parameters())


def test_a_sequence_layer_is_one_node():
    out, _ = tp.nn.LSTM(3, 4)(tp.randn(50, 2, 3))
    assert out.grad_fn.name() == "RnnLayerBackward0"
