"""Random indexing against PyTorch: integers, slices, integer and boolean tensor indices, `None` and `...` mixed
(PyTorch applies integers first, so `x[0, :, idx]` is `x[0][:, idx]`), read with gradients and written with
`x[idx] = v`; errors compared by class."""

from __future__ import annotations

import random

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

BASE = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
WEIGHTS = np.arange(BASE.size, dtype=np.float64).reshape(BASE.shape)


def _entry(rng: random.Random, n: int):
    """One index entry for a dimension of size `n`, as a recipe `(kind, value)` both libraries can build."""
    r = rng.random()
    if r < 0.25:
        return "int", rng.randrange(-n, n)
    if r < 0.45:
        return "slice", slice(rng.choice([None, 0, 1]), rng.choice([None, n, n - 1]), rng.choice([None, 1, 2]))
    if r < 0.65:
        return "long", [rng.randrange(n) for _ in range(rng.choice([1, 2, 3]))]
    if r < 0.75:
        return "long", [[rng.randrange(n)] * 2] * 2
    if r < 0.85:
        return "bool", [rng.random() < 0.5 for _ in range(n)]
    if r < 0.9:
        return "none", None
    return "slice", slice(None)


def _recipe(seed: int) -> list:
    rng = random.Random(seed)
    entries, d = [], 0
    for _ in range(rng.randint(1, 4)):
        if d >= 4:
            break
        kind, value = _entry(rng, BASE.shape[d])
        entries.append((kind, value))
        d += kind != "none"
    if rng.random() < 0.2 and d < 4:
        entries.insert(rng.randrange(len(entries) + 1), ("ellipsis", None))
    return entries


def _build(L, recipe) -> tuple:
    out = []
    for kind, value in recipe:
        out.append({"int": lambda v: v, "slice": lambda v: v, "none": lambda v: None, "ellipsis": lambda v: Ellipsis,
                    "long": lambda v: L.tensor(v), "bool": lambda v: L.tensor(v)}[kind](value))
    return tuple(out)


def _observe(L, recipe) -> dict:
    idx = _build(L, recipe)
    x = L.tensor(BASE, requires_grad=True)
    try:
        y = x[idx]
        shape = tuple(y.shape)
        (y * L.tensor(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))).sum().backward()
        z = L.tensor(BASE.copy())
        z[idx] = L.tensor(np.full(shape, -1.0))
        return {"shape": list(shape), "values": y.detach().numpy().ravel().tolist(),
                "grad": float((x.grad * L.tensor(WEIGHTS)).sum()), "set": float((z * L.tensor(WEIGHTS)).sum())}
    except (IndexError, RuntimeError, ValueError, TypeError) as e:
        return {"error": type(e).__name__}


@pytest.mark.parametrize("seed", range(60))
def test_random_index_matches_pytorch(seed):
    recipe = _recipe(seed)
    assert _observe(tp, recipe) == _observe(torch, recipe), recipe


def test_integers_are_applied_before_tensor_indices():
    x = np.arange(24.0).reshape(2, 3, 4)
    for L in (tp, torch):
        t = L.tensor(x)
        assert tuple(t[0, :, L.tensor([0, 2])].shape) == (3, 2)  # (NumPy: (2, 3))
        assert tuple(t[1, ..., L.tensor([True, False, True, False])].shape) == (3, 2)
        t[0, :, L.tensor([0, 2])] = L.tensor(np.full((3, 2), -1.0))
        assert float(t[0, 1, 2]) == -1.0 and float(t[1, 1, 2]) == 18.0


@pytest.mark.parametrize("index", [lambda L: L.tensor([True, False, True]), lambda L: (slice(None), L.tensor([True, False])),
                                   lambda L: L.tensor([[True, False, True, False]])])
def test_masks_of_the_wrong_shape_raise_pytorchs_index_error(index):
    messages = []
    for L in (tp, torch):
        with pytest.raises(IndexError) as e:
            L.zeros(2, 3, 4)[index(L)]
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "The shape of the mask" in messages[0]


def test_a_python_bool_index_adds_a_dimension():
    for L in (tp, torch):
        t = L.zeros(2, 3)
        assert tuple(t[True].shape) == (1, 2, 3) and tuple(t[False].shape) == (0, 2, 3)


@pytest.mark.parametrize("x_shape,index_shape,dim", [((10,), (), 0), ((), (2,), 0), ((), (), 0), ((3,), (), -1)])
def test_gather_and_scatter_read_zero_d_operands_as_vectors(x_shape, index_shape, dim):
    """PyTorch's gather/scatter/scatter_add treat a 0-d input or index as a vector of one element (the result
    has the index's shape for gather, the input's for scatters); gradients flow as for vectors."""
    results = []
    for lib in (torch, tp):
        x = lib.arange(float(np.prod(x_shape))).reshape(x_shape).requires_grad_()
        index = lib.zeros(index_shape, dtype=lib.int64)
        src = lib.full(index_shape, 5.0)
        out = lib.gather(x, dim, index)
        out.backward(lib.full(out.shape, 2.0))
        scattered = lib.zeros(x_shape).scatter(dim, index, src)
        added = lib.zeros(x_shape).scatter_add(dim, index, src)
        results.append([(tuple(t.shape), t.tolist()) for t in (out, x.grad, scattered, added)]
                       + [out.grad_fn.name()])
    assert results[1] == results[0]


_TAKE_ALONG = [((2, 3), (2, 2), 1), ((1, 3), (4, 2), 1), ((4, 3), (1, 2), 1), ((2, 3), (2, 2), None), ((3,), (2,), 0),
               ((2, 3, 4), (2, 1, 4), 1), ((2, 3, 4), (1, 3, 2), 2), ((2, 3), (2, 2), -1), ((2, 3, 1), (2, 1, 5), 2),
               ((2, 3), (3, 2), 1), ((2, 3), (2,), 1), ((), (), 0)]


@pytest.mark.parametrize("xs, ishape, dim", _TAKE_ALONG)
def test_take_along_dim_broadcasts_input_and_indices_as_pytorch(xs, ishape, dim):
    """`take_along_dim` broadcasts the input and the indices against each other outside `dim` (a (4, 3) input
    with (1, 2) indices gives (4, 2)); without a dim it gathers from the flattened input, a 1-D result."""
    rng = np.random.default_rng(len(xs) + len(ishape))
    xv = rng.normal(size=xs)
    n = xs[dim] if dim is not None and xs else int(np.prod(xs))
    iv = rng.integers(0, max(n, 1), ishape)
    got = []
    for lib in (torch, tp):
        x = lib.tensor(xv, requires_grad=True)
        try:
            out = lib.take_along_dim(x, lib.tensor(iv), dim) if dim is not None else lib.take_along_dim(x, lib.tensor(iv))
        except (RuntimeError, IndexError) as e:
            got.append((type(e).__name__, str(e)))
            continue
        (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        chain, fn = [], out.grad_fn
        while fn is not None and "AccumulateGrad" not in fn.name():
            chain.append(fn.name())
            fn = fn.next_functions[0][0]
        got.append((tuple(out.shape), out.tolist(), x.grad.tolist(), chain))
    assert got[0] == got[1]


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_take_along_dim_refuses_indices_that_are_not_long_as_pytorch(dtype):
    messages = []
    for lib in (torch, tp):
        with pytest.raises(RuntimeError) as e:
            lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0, 1]], dtype=getattr(lib, dtype)), 1)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_a_list_of_indices_warns_at_the_users_line_when_reading_and_writing():
    import warnings

    x = tp.zeros(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x[[[0, 1], slice(None)]] = 1.0
        y = x[[[0, 1], slice(None)]]
    assert [(w.category, w.filename) for w in caught] == [(UserWarning, __file__)] * 2
    assert "non-tuple sequence for multidimensional indexing" in str(caught[0].message)
    assert y.tolist() == [[1.0] * 3] * 2
