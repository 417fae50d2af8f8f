"""Sparse COO tensors: construction, coalescing, printing, conversions and the products graph networks use,
against PyTorch (values, gradients, errors), and the sparse patterns of two public GCN programs."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

_I = [[0, 1, 1, 0], [1, 0, 2, 1]]
_V = [1.0, 2.0, 3.0, 4.0]


def _value(x):
    if isinstance(x, (tp.Tensor, torch.Tensor)):
        dense = x.to_dense() if x.is_sparse else x
        return (str(x.layout).split(".")[-1], np.asarray(dense.detach().tolist()), str(x.dtype).split(".")[-1])
    return x


_CASES = {
    "build": lambda lib, s: s,
    "infer_size": lambda lib, s: lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V)),
    "int_values": lambda lib, s: lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V), (2, 3), dtype=lib.int64),
    "hybrid": lambda lib, s: lib.sparse_coo_tensor(lib.tensor([[0, 2]]), lib.tensor([[1.0, 2.0], [3.0, 4.0]])),
    "nnz": lambda lib, s: s._nnz(),
    "dims": lambda lib, s: (s.sparse_dim(), s.dense_dim(), s.is_sparse, s.is_coalesced(), tuple(s.shape)),
    "raw_indices": lambda lib, s: s._indices(),
    "raw_values": lambda lib, s: s._values(),
    "coalesce": lambda lib, s: s.coalesce(),
    "coalesced_indices": lambda lib, s: s.coalesce().indices(),
    "coalesced_values": lambda lib, s: s.coalesce().values(),
    "to_dense": lambda lib, s: s.to_dense(),
    "double": lambda lib, s: s.double(),
    "to_float64": lambda lib, s: s.to(lib.float64),
    "clone": lambda lib, s: s.clone(),
    "detach": lambda lib, s: s.detach(),
    "to_sparse": lambda lib, s: lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse(),
    "to_sparse_indices": lambda lib, s: lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse().indices(),
    "to_sparse_dim": lambda lib, s: lib.tensor([[0.0, 0.0], [3.0, 0.0]]).to_sparse(1)._values(),
    "mm": lambda lib, s: lib.mm(s, lib.arange(6.0).reshape(3, 2)),
    "spmm": lambda lib, s: lib.spmm(s, lib.arange(6.0).reshape(3, 2)),
    "sparse_mm": lambda lib, s: lib.sparse.mm(s, lib.arange(6.0).reshape(3, 2)),
    "matmul": lambda lib, s: s @ lib.arange(3.0),
    "dense_matmul": lambda lib, s: lib.arange(2.0).reshape(1, 2) @ s,
    "addmm": lambda lib, s: lib.addmm(lib.ones(2, 1), s, lib.ones(3, 1), alpha=2),
    "plus_dense": lambda lib, s: lib.ones(2, 3) + s,
    "sum": lambda lib, s: s.sum(),
    "sparse_sum": lambda lib, s: lib.sparse.sum(s),
    "sparse_sum_dim": lambda lib, s: lib.sparse.sum(s, 1),
    "legacy": lambda lib, s: lib.sparse.FloatTensor(lib.tensor(_I), lib.tensor(_V), lib.Size([2, 3])),
    "softmax": lambda lib, s: lib.sparse.softmax(s.coalesce(), 1),
    "log_softmax": lambda lib, s: lib.sparse.log_softmax(s.coalesce(), 0),
    "dense_layout": lambda lib, s: (str(lib.ones(1).layout), lib.ones(1).is_sparse),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_matches_pytorch(case):
    results = []
    for lib in (tp, torch):
        s = lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V), (2, 3))
        out = _CASES[case](lib, s)
        results.append([_value(o) for o in out] if isinstance(out, tuple) else _value(out))
    mine, theirs = results
    if case == "dense_layout":
        assert mine == [theirs[0].replace("torch", "tapeflow"), theirs[1]]
        return
    _assert_same(mine, theirs)


def _assert_same(mine, theirs):
    if isinstance(theirs, list):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            _assert_same(a, b)
    elif isinstance(theirs, tuple) and len(theirs) == 3 and isinstance(theirs[1], np.ndarray):
        assert (mine[0], mine[2]) == (theirs[0], theirs[2])  # layout, dtype
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-6, atol=1e-7)
    else:
        assert mine == theirs


@pytest.mark.parametrize("call", [
    lambda lib: lib.sparse_coo_tensor(lib.tensor(_I[0]), lib.tensor(_V)),
    lambda lib: lib.sparse_coo_tensor(-lib.tensor(_I), lib.tensor(_V)),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V[:3])),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V), (2, 3)).indices(),
    lambda lib: lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V), (2, 3)).values(),
    lambda lib: lib.ones(2).coalesce(),
    lambda lib: lib.ones(2).values(),
    lambda lib: lib.ones(2)._nnz(),
], ids=["indices_1d", "negative", "nnz_mismatch", "uncoalesced_indices", "uncoalesced_values", "dense_coalesce",
        "dense_values", "dense_nnz"])
def test_errors_match_pytorch(call):
    errors = []
    for lib in (tp, torch):
        with pytest.raises(RuntimeError) as info:
            call(lib)
        errors.append(str(info.value).split("\n")[0])
    assert errors[0][:60] == errors[1][:60]


def test_an_index_outside_the_size_is_refused():
    # (PyTorch builds it unchecked and fails later; tapeflow refuses it with PyTorch's invariant message)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 1 but found index 1"):
        tp.sparse_coo_tensor(tp.tensor(_I), tp.tensor(_V), (1, 3))


def test_printing_matches_pytorch():
    for make in (lambda lib: lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V), (2, 3)),
                 lambda lib: lib.sparse_coo_tensor(lib.tensor(_I), lib.tensor(_V), (2, 3), dtype=lib.float64),
                 lambda lib: lib.tensor([0.0, 1.5, 0.0]).to_sparse()):
        assert repr(make(tp)).replace("tapeflow", "torch") == repr(make(torch))


def test_gradients_through_values_and_the_dense_operand():
    grads = []
    for lib in (tp, torch):
        values = lib.tensor(_V, requires_grad=True)
        dense = lib.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2), requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(_I), values * 2, (2, 3))
        (lib.sparse.mm(s, dense) ** 2).sum().backward()
        grads.append((values.grad.tolist(), dense.grad.tolist()))
    assert grads[0] == grads[1]


def test_an_empty_sparse_leaf_of_a_size_gets_pytorchs_dense_gradient():
    seen = []
    for lib in (tp, torch):
        s = lib.sparse_coo_tensor((3, 3), requires_grad=True)
        dense = lib.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3), requires_grad=True)
        (s.mm(dense) + dense.addmm(s, dense)).sum().backward()
        seen.append((repr(s).replace("tapeflow", "torch"), s.is_leaf, s.grad.layout == lib.strided,
                     s.grad.tolist(), dense.grad.tolist(), repr(lib.sparse_coo_tensor(size=(2, 3)))))
    assert seen[0][:-1] == seen[1][:-1]
    assert seen[0][-1].replace("tapeflow", "torch") == seen[1][-1]


def test_a_dense_gradient_into_a_sparse_grad_replaces_it_with_the_dense_sum():
    seen = []
    for lib in (tp, torch):
        p = lib.tensor([1.5, 1.5], requires_grad=True)
        p.grad = old = lib.sparse_coo_tensor(lib.tensor([[1, 1]]), lib.tensor([1.0, 1.0]))
        (p * 2).sum().backward()
        seen.append((p.grad is old, p.grad.layout == lib.strided, p.grad.tolist()))
    assert seen[0] == seen[1] == (False, True, [2.0, 4.0])


def _pygcn_step(lib):
    """Kipf's pygcn pattern: a scipy-style COO adjacency through the legacy constructor, `torch.spmm`."""
    rng = np.random.default_rng(0)
    n, f = 12, 5
    rows, cols = rng.integers(0, n, 30), rng.integers(0, n, 30)
    adj = lib.sparse.FloatTensor(lib.from_numpy(np.vstack((rows, cols)).astype(np.int64)),
                                 lib.from_numpy(rng.uniform(0.1, 1.0, 30).astype(np.float32)), lib.Size([n, n]))
    features = lib.tensor(rng.normal(size=(n, f)).astype(np.float32))
    labels = lib.tensor(rng.integers(0, 3, n))
    w1 = lib.nn.Parameter(lib.tensor(rng.normal(size=(f, 8)).astype(np.float32)))
    w2 = lib.nn.Parameter(lib.tensor(rng.normal(size=(8, 3)).astype(np.float32)))
    opt = lib.optim.Adam([w1, w2], lr=0.01, weight_decay=5e-4)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        h = lib.relu(lib.spmm(adj, lib.mm(features, w1)))
        out = lib.nn.functional.log_softmax(lib.spmm(adj, lib.mm(h, w2)), dim=1)
        loss = lib.nn.functional.nll_loss(out, labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _examples_gcn_step(lib):
    """pytorch/examples' gcn pattern: `to_sparse()` features, a sparse adjacency with self-loops added densely,
    degree normalisation with sparse diagonal matrices, `sparse @ dense` on both sides."""
    rng = np.random.default_rng(1)
    n, f = 10, 6
    features = lib.tensor((rng.uniform(size=(n, f)) > 0.6).astype(np.float32))
    scale = 1 / lib.sum(features, dim=1)
    scale[scale == float("inf")] = 0
    features = lib.diag(scale).to_sparse() @ features
    edges = rng.integers(0, n, (25, 2)).astype(np.int32)
    adj = lib.sparse_coo_tensor(edges.T, lib.ones(25), (n, n), dtype=lib.int64)
    adj = lib.eye(n) + adj
    degree = lib.sqrt(1 / lib.sum(adj, dim=1))
    degree[degree == float("inf")] = 0
    degree = lib.diag(degree).to_sparse()
    adj = (degree @ adj @ degree).to_sparse()
    features = features.to_sparse()
    kernel = lib.nn.Parameter(lib.tensor(rng.normal(size=(f, 4)).astype(np.float32)))
    out = lib.spmm(adj, lib.mm(features, kernel))
    out.sum().backward()
    return out.tolist(), kernel.grad.tolist(), adj._nnz()


@pytest.mark.parametrize("program", [_pygcn_step, _examples_gcn_step])
def test_gcn_programs_give_pytorchs_numbers(program):
    mine, theirs = program(tp), program(torch)
    np.testing.assert_allclose(np.asarray(mine[0]), np.asarray(theirs[0]), rtol=1e-5, atol=1e-6)
    if program is _examples_gcn_step:
        np.testing.assert_allclose(np.asarray(mine[1]), np.asarray(theirs[1]), rtol=1e-5, atol=1e-6)
        assert mine[2] == theirs[2]


def test_dense_data_cannot_be_swapped_for_sparse_data():
    messages = []
    for lib in (tp, torch):
        x, s = lib.randn(1, 2), lib.sparse_coo_tensor(lib.zeros([1, 1]), lib.ones([1]))
        with pytest.raises(RuntimeError) as info:
            x.data = s
        messages.append(str(info.value))
    assert messages[0] == messages[1]
