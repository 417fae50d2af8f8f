"""Shapes, orders and gradients at the edges of ordinary ops, against PyTorch: broadcasting masks and counts,
reductions over no dims, NaN in orderings and medians, losses whose every sample is ignored, and `normal` with
tensor parameters. Each case once gave a silently different result (a lost row, a gradient of the wrong shape,
NaN last instead of first, NaN gradients) before it was fixed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch")

NAN = float("nan")


def _same(a, b) -> None:
    """Equal nested lists, NaN equal to NaN and the sign of zero compared."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def _run(lib, fn, *values, grad=True):
    """`fn(lib, *leaves)`: its shape, dtype, values, node name and the leaves' gradients of a weighted sum."""
    leaves = [lib.tensor(v, requires_grad=grad) if isinstance(v, (list, float)) else v for v in values]
    out = fn(lib, *leaves)
    res = [tuple(out.shape), str(out.dtype).split(".")[-1], out.tolist()]
    if grad and out.requires_grad:
        w = lib.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
        gs = lib.autograd.grad((out * w).sum(), [t for t in leaves if hasattr(t, "requires_grad")], allow_unused=True)
        res += [out.grad_fn.name(), [None if g is None else g.tolist() for g in gs]]
    return res


def _check(fn, *values, grad=True, name=True):
    """`_run` in both libraries; `name=False` where the graph differs in decomposition only."""
    want, got = _run(torch, fn, *values, grad=grad), _run(tp, fn, *values, grad=grad)
    assert want[:2] == got[:2]
    _same(want[2], got[2])
    assert len(want) == len(got)
    if len(want) > 3:
        assert want[3] == got[3] or not name
        for a, b in zip(want[4], got[4]):
            assert (a is None) == (b is None)
            if a is not None:
                _same(a, b)


_MASKS = [[True, False, True], [False, False, True]]


@pytest.mark.parametrize("x", [[1.0, 2.0, 3.0], [[1.0], [2.0]], [[1.0, 2.0, 3.0]], 2.0, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])
def test_masked_fill_by_a_larger_mask_sums_the_inputs_gradient(x):
    _check(lambda L, t: L.masked_fill(t * 1, L.tensor(_MASKS), 0.0), x)


@pytest.mark.parametrize("repeats, dim", [([2, 1, 3], 0), ([2, 1], 1), ([2], None), ([2], 0), ((3,), 1), ([2, 1], 0),
                                          ([2, 1, 0], -1), ([1, 2, 1, 1, 0, 1], None)])
def test_repeat_interleave_by_a_tensor_of_counts(repeats, dim):
    """A one-element count repeats every element (it used to keep one row); a count per element must match."""
    def fn(L, x):
        counts = L.tensor(repeats[0]) if isinstance(repeats, tuple) else L.tensor(repeats)
        return L.repeat_interleave(x, counts) if dim is None else L.repeat_interleave(x, counts, dim=dim)

    try:
        torch.repeat_interleave(torch.zeros(2, 3), torch.tensor(repeats[0] if isinstance(repeats, tuple) else repeats),
                                dim=dim)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            _run(tp, fn, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        assert str(got.value) == str(e)
        return
    # (PyTorch's graph is an index_select: `IndexSelectBackward0`; tapeflow's `RepeatInterleaveBackward0`)
    _check(fn, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], name=False)


@pytest.mark.parametrize("call", ["repeat_interleave(L.tensor([2, 0, 3]))",
                                  "repeat_interleave(L.tensor([2, 0, 3]), output_size=5)",
                                  "repeat_interleave(x, L.tensor([2, 1]), dim=0, output_size=3)",
                                  "repeat_interleave(x, L.tensor([2, 1]), dim=0, output_size=4)",
                                  "repeat_interleave(x, 2, dim=0, output_size=5)",
                                  "repeat_interleave(x, L.tensor([[2]]), dim=0)",
                                  "repeat_interleave(x, L.tensor([-1, 2]), dim=0)"])
def test_repeat_interleave_forms_and_refusals(call):
    got = []
    for L in (torch, tp):
        try:
            got.append(eval(f"L.{call}", {"L": L, "x": L.arange(6.0).reshape(2, 3)}).tolist())
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]


@pytest.mark.parametrize("expr", ["x.sum(dim=(), keepdim=True)", "x.mean(dim=(), keepdim=True)", "x.sum(dim=[])",
                                  "x.any(dim=())", "x.all(dim=())", "x.any(dim=(), keepdim=True)",
                                  "x.argmax(keepdim=True)", "x.argmin(dim=None, keepdim=True)",
                                  "x.sum(dim=None, keepdim=True)", "x.amax(dim=(), keepdim=True)"])
def test_reductions_over_no_dims_as_pytorch(expr):
    """`dim=()` reduces every dim (`keepdim` keeps them as size 1), except in `any`/`all`, which reduce none."""
    got = []
    for L in (torch, tp):
        x = L.tensor([[0.0, 1.5, -2.0], [3.0, 0.0, 0.5]])
        out = eval(expr, {"x": x})
        got.append((tuple(out.shape), str(out.dtype).split(".")[-1], out.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("values", [[1.0, NAN, 3.0, 2.0], [NAN, 1.0, NAN], [1.0, 2.0, 2.0, 3.0], [5.0, 1.0, NAN, NAN],
                                    [4.0]])
def test_median_of_all_elements_is_nan_when_one_is(values):
    _check(lambda L, t: L.median(t), values)


@pytest.mark.parametrize("values, dtype", [([1.0, NAN, 3.0, 2.0, NAN, 3.0], "float32"), ([0, 1, 2, 255, 1], "uint8"),
                                           ([True, False, True], "bool"), ([-2**63, 5, -1, 2**63 - 1], "int64"),
                                           ([0.0, -0.0, 1.0, -0.0], "float64"), ([2, 1, 2, 1, 2], "int32"),
                                           ([math.inf, NAN, -math.inf, 0.0], "float32")])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_orders_nan_as_the_largest_and_keeps_ties_in_order(values, dtype, descending):
    """NaN sorts as the largest value (first when descending), unsigned and extreme integers and bools sort by
    value, and equal elements keep their input order."""
    got = []
    for L in (torch, tp):
        x = L.tensor(values, dtype=getattr(L, dtype))
        s = L.sort(x, descending=descending, stable=True)
        got.append((s.values.tolist(), s.indices.tolist(), L.argsort(x, descending=descending, stable=True).tolist()))
    _same(got[0][0], got[1][0])
    assert got[0][1:] == got[1][1:]


def test_sort_descending_gradient_with_nan():
    _check(lambda L, t: L.sort(t, dim=1, descending=True).values, [[1.0, NAN, 3.0], [2.0, 2.0, NAN]])


_LOGITS = [[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]]


@pytest.mark.parametrize("call", ["cross_entropy(x, L.tensor([-100, -100]))",
                                  "cross_entropy(x, L.tensor([1, 1]), ignore_index=1)",
                                  "cross_entropy(x, L.tensor([-100, -100]), label_smoothing=0.1)",
                                  "cross_entropy(x, L.tensor([-100, -100]), weight=L.ones(3))",
                                  "cross_entropy(x, L.tensor([-100, -100]), reduction='sum')",
                                  "cross_entropy(x, L.tensor([-100, 1]), reduction='none')",
                                  "cross_entropy(x, L.tensor([-100, 2]))", "nll_loss(x, L.tensor([-100, -100]))",
                                  "nll_loss(x, L.tensor([-100, 1]), reduction='none')"])
def test_losses_whose_samples_are_ignored_pass_them_no_gradient(call):
    """An ignored sample's gradient is 0, also when every sample of a batch is ignored (the mean's 0 / 0 loss is
    NaN, as in PyTorch, but the gradient is not: a padding-only batch must not turn the parameters into NaN)."""
    # (with label smoothing PyTorch's node is the `AddBackward0` of its two terms; tapeflow's one NllLossBackward0)
    _check(lambda L, x: eval(f"L.nn.functional.{call}"), _LOGITS, name="smoothing" not in call)


@pytest.mark.parametrize("expr", ["L.normal(m, s)", "L.normal(m, 1.0)", "L.normal(0.5, s)", "L.normal(m.detach(), s)",
                                  "L.normal(m, s.detach())", "L.normal(L.zeros(3), L.ones(2, 3))",
                                  "L.normal(L.zeros(2, 3), L.ones(3))", "L.normal(m, s.double())",
                                  "L.normal(m * 2, 2.0)"])
def test_normal_with_tensor_parameters_as_pytorch(expr):
    """One draw per element of the broadcast shape (not one row repeated), the first parameter's dtype, and
    PyTorch's derivative: zero in `mean` and `std` (a sample, not `rsample`)."""
    got = []
    for L in (torch, tp):
        L.manual_seed(0)
        m = L.tensor([0.5, 1.0, -1.0], requires_grad=True)
        s = L.tensor([1.0, 2.0, 0.5], requires_grad=True)
        out = eval(expr)
        gs = L.autograd.grad(out.sum(), [m, s], allow_unused=True) if out.requires_grad else (None, None)
        got.append((tuple(out.shape), str(out.dtype).split(".")[-1], np.round(out.tolist(), 5).tolist(),
                    out.grad_fn.name() if out.grad_fn is not None else None,
                    [None if g is None else g.tolist() for g in gs]))
    assert got[0] == got[1]


def test_normal_refuses_parameters_that_do_not_broadcast():
    messages = []
    for L in (torch, tp):
        with pytest.raises(RuntimeError) as e:
            L.normal(L.zeros(2, 3), L.ones(4))
        messages.append(str(e.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("expr", ["L.hstack([a, b])", "L.hstack([b, a])", "L.vstack([a, b[:1]])", "L.vstack([b, c])",
                                  "L.vstack([a])", "L.hstack([a, a])", "L.hstack([c, c])", "L.vstack([c, a])",
                                  "L.row_stack([a, b[:1]])", "L.hstack([])", "L.vstack([])"])
def test_hstack_and_vstack_take_zero_dim_tensors_as_pytorch(expr):
    """0-d tensors count as 1-D for `hstack` and as rows for `vstack` (`atleast_1d` / `atleast_2d`)."""
    got = []
    for L in (torch, tp):
        env = {"L": L, "a": L.tensor(1.0), "b": L.tensor([2.0, 3.0]), "c": L.tensor([[4.0, 5.0]])}
        try:
            got.append(eval(expr, env).tolist())
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]
