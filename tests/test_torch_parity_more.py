"""Results PyTorch programs rely on, checked against PyTorch itself: spreads without degrees of freedom,
NaN-skipping means over all-NaN slices, the Hurwitz zeta function's derivative, 0-d indices, vector weights
in `linear`, einsum's sublist form, scatter's legacy reductions, `matrix_rank`'s older `tol` form, the
top-level losses (a reduction given as a number), `nll_loss` gradients with zero weights and `ldexp`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch")


def _np(t):
    return None if t is None else np.asarray(t.detach().numpy())


def _same(a, b, rtol=1e-6, atol=1e-7):
    if a is None or b is None:
        assert a is None and b is None, (a, b)
        return
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True)


def _outcome(fn, lib):
    """`fn(lib)`'s result, or the class and message of what it raised."""
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001 (the error itself is compared)
        return type(e).__name__, str(e)


# -- var / std without degrees of freedom ---------------------------------------------------------------
SPREADS = [(values, dim, correction, fn)
           for values in ([1.0, 2.0], [[1.0, 2.0], [3.0, 5.0]], [[1.0, 2.0], [1.0, 5.0]], [1.0, 2.0, 1.5], [3.0, 3.0])
           for dim in (None, 0)
           for correction in (1, 2, 3, 4)
           for fn in ("var", "std", "var_mean", "std_mean")]


@pytest.mark.parametrize("values,dim,correction,fn", SPREADS)
def test_spreads_divide_by_max_of_zero_and_the_degrees_of_freedom(values, dim, correction, fn):
    """PyTorch divides by max(0, N - correction): inf for a spread input, NaN for a constant one; its gradient
    is its own rule (inf or NaN for a full reduction, (2 / dof) (x - mean) over a dim, finite for dof < 0)."""
    got = []
    for lib in (torch, tp):
        x = lib.tensor(values, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib, fn)(x, dim, correction=correction)
        first = out[0] if fn.endswith("_mean") else out
        first.sum().backward()
        got.append((first, x.grad, [str(w.message).split(" (Triggered internally")[0] for w in caught]))
    (t_out, t_grad, t_warn), (f_out, f_grad, f_warn) = got
    _same(f_out, t_out, rtol=1e-5)
    _same(f_grad, t_grad, rtol=1e-5)
    assert f_warn == t_warn


def test_nanmean_over_an_all_nan_slice_gives_nan_gradients_as_pytorch():
    nan = float("nan")
    for values, dim in (([nan, nan], None), ([[nan, 1.0], [nan, 2.0]], 0), ([[nan, 1.0], [nan, nan]], 1)):
        grads = []
        for lib in (torch, tp):
            x = lib.tensor(values, requires_grad=True)
            lib.nanmean(x, dim).sum().backward()
            grads.append(x.grad)
        _same(grads[1], grads[0])


def test_nansum_passes_an_infinite_gradient_on_as_nan_at_the_nans():
    for lib_grads in [[]]:
        for lib in (torch, tp):
            x = lib.tensor([float("nan"), 1.0], requires_grad=True)
            x.nansum().backward(lib.tensor(float("inf")))
            lib_grads.append(x.grad)
        _same(lib_grads[1], lib_grads[0])


# -- zeta ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["tensors", "number first", "number second"])
def test_zeta_is_differentiable_in_other_and_refuses_input_as_pytorch(case):
    seen = []
    for lib in (torch, tp):
        x = lib.tensor([2.0, 3.0], requires_grad=True)
        q = lib.tensor([1.0, 2.5], requires_grad=True)
        args = {"tensors": (x, q), "number first": (2.0, q), "number second": (x, 2.5)}[case]
        out = lib.special.zeta(*args)
        edges = [None if n is None else type(n).__name__ for n, _ in out.grad_fn.next_functions]
        seen.append((out.grad_fn.name(), edges))
        outcome = _outcome(lambda _, out=out: out.sum().backward(), lib)
        seen.append(outcome)
        if outcome is None:
            _same(q.grad, torch.special.zeta(torch.tensor([3.0, 3.0]), torch.tensor([1.0, 2.5])) * -2.0, rtol=1e-5)
    assert seen[:2] == seen[2:]


# -- indices of one element ---------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "X.index_add(0, torch.tensor(1), torch.ones(1, 2))", "X.index_add(1, torch.tensor(1), torch.ones(3, 1), alpha=2)",
    "torch.arange(3.).index_add(0, torch.tensor(1), torch.ones(1))",
    "torch.arange(3.).index_add(0, torch.tensor([1]), torch.tensor(5.))",
    "torch.tensor(3.).index_add(0, torch.tensor([0]), torch.tensor(5.))",
    "torch.tensor(3.).index_add(0, torch.tensor(0), torch.tensor(5.))",
    "torch.tensor(3.).index_add(0, torch.tensor(0), torch.tensor([5.]))",
    "torch.tensor(3.).index_reduce(0, torch.tensor(0), torch.tensor(5.), 'prod')",
    "torch.arange(3.).index_reduce(0, torch.tensor(1), torch.tensor(5.), 'prod')",
    "torch.arange(3.).index_copy(0, torch.tensor([1]), torch.tensor(5.))"])
def test_one_element_indices_and_sources_as_pytorch(expr):
    def run(lib):
        return eval(expr, {"torch": lib, "X": lib.arange(6.0).reshape(3, 2)}).tolist()
    assert _outcome(run, tp) == _outcome(run, torch)


def test_index_add_of_a_one_element_index_gradients_as_pytorch():
    grads = []
    for lib in (torch, tp):
        x = lib.arange(6.0).reshape(3, 2).requires_grad_()
        s = lib.ones(1, 2, requires_grad=True)
        (x.index_add(0, lib.tensor(1), s, alpha=2.0) * lib.arange(6.0).reshape(3, 2)).sum().backward()
        grads.append((x.grad, s.grad))
    _same(grads[1][0], grads[0][0])
    _same(grads[1][1], grads[0][1])


# -- linear with a vector weight --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 3), (4, 2, 3)])
@pytest.mark.parametrize("bias", [None, (), (1,), (2,)])
def test_linear_with_a_vector_weight_as_pytorch(shape, bias):
    def run(lib):
        x = lib.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        b = None if bias is None else lib.full(bias, 0.25, requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        y.sum().backward()
        return [y.tolist(), x.grad.tolist(), w.grad.tolist(), None if b is None else b.grad.tolist()]
    assert _outcome(run, tp) == _outcome(run, torch)


# -- einsum's sublist form ------------------------------------------------------------------------------------
@pytest.mark.parametrize("form", [
    "torch.einsum(a, [0, 1], b, [1, 2], [0, 2])", "torch.einsum(a, [0, 1], b, [1, 2])",
    "torch.einsum(a, [Ellipsis, 1], [1])", "torch.einsum(a, [Ellipsis, 30], [30, Ellipsis])",
    "torch.einsum(a, [0, 0])", "torch.einsum(a, [0, 60])", "torch.einsum(a, [27, 1], b, [1, 51], [51, 27])"])
def test_einsum_sublist_form_as_pytorch(form):
    def run(lib):
        a = lib.arange(9.0).reshape(3, 3).requires_grad_()
        b = lib.arange(12.0).reshape(3, 4)
        out = eval(form, {"torch": lib, "a": a, "b": b})
        out.sum().backward()
        return out.tolist(), a.grad.tolist()
    assert _outcome(run, tp) == _outcome(run, torch)


# -- scatter's legacy reductions ------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "x.scatter(1, i, s, reduce='multiply')", "x.scatter(1, i, s, reduce='add')", "x.scatter(1, i, 3., reduce='multiply')",
    "x.scatter(1, i, 3., reduce='add')", "x.clone().scatter_(1, i, s, reduce='multiply')",
    "x.clone().scatter_(1, i, 2.0, reduce='multiply')", "x.long().scatter(1, i, s.long(), reduce='multiply')",
    "x.scatter(1, i, s, reduce='mean')"])
def test_scatter_with_a_reduction_as_pytorch(expr):
    def run(lib):
        env = {"x": lib.ones(2, 3) * 2, "i": lib.tensor([[0, 0], [2, 1]]), "s": lib.tensor([[2.0, 3.0, 9.0], [4.0, 5.0, 9.0]])}
        return eval(expr, env).tolist()
    assert _outcome(run, tp) == _outcome(run, torch)


# -- matrix_rank's tolerances ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    "rank(A, 0.01)", "rank(A, tol=0.01)", "rank(A, 0.01, True)", "rank(A, 1e-4)", "rank(A, torch.tensor(0.01))",
    "rank(B, atol=torch.tensor([0.01, 0.01]))", "rank(B, atol=torch.tensor([0.01, 0.0]))",
    "rank(B, rtol=torch.tensor([0.01, 1e-4]))", "rank(B, atol=torch.tensor([0.0, 0.2]), rtol=torch.tensor(0.01))",
    "rank(B, atol=0.2)", "rank(B)"])
def test_matrix_rank_tolerances_as_pytorch(call):
    def run(lib):
        A = lib.tensor([[1.0, 0.0], [0.0, 1e-3]])
        return eval(call, {"torch": lib, "rank": lib.linalg.matrix_rank, "A": A, "B": lib.stack([A, A * 100])}).tolist()
    assert _outcome(run, tp) == _outcome(run, torch)


def test_chain_matmul_as_pytorch():
    for mats in ([(2, 3), (3, 4), (4, 1)], [(2, 3)], [(2, 3), (3, 2)], [], [(3,), (3, 2)]):
        def run(lib, mats=mats):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ts = [lib.arange(float(np.prod(s))).reshape(s) for s in mats]
                return lib.chain_matmul(*ts).tolist()
        assert _outcome(run, tp) == _outcome(run, torch)


# -- the losses at the top level ------------------------------------------------------------------------------
_A = [[0.5, 2.0], [1.0, -1.0]]
_B = [[1.0, -1.0], [0.3, 0.2]]
TOP_LEVEL_LOSSES = {
    "margin_ranking_loss": lambda L, *r: L.margin_ranking_loss(L.tensor(_A[0]), L.tensor(_B[0]), L.tensor([1.0, -1.0]),
                                                               0.1, *r),
    "hinge_embedding_loss": lambda L, *r: L.hinge_embedding_loss(L.tensor(_A), L.tensor([[1.0, -1.0], [-1.0, 1.0]]),
                                                                 1.5, *r),
    "triplet_margin_loss": lambda L, *r: L.triplet_margin_loss(L.tensor(_A), L.tensor(_B), L.tensor(_B) * 2, 1.0, 2,
                                                               1e-6, False, *r),
    "cosine_embedding_loss": lambda L, *r: L.cosine_embedding_loss(L.tensor(_A), L.tensor(_B), L.tensor([1.0, -1.0]),
                                                                   0.1, *r),
    "poisson_nll_loss": lambda L, *r: L.poisson_nll_loss(L.tensor(_A), L.tensor(_B).abs(), True, True, 1e-8,
                                                         *(r or (0,))),
    "ctc_loss": lambda L, *r: L.ctc_loss(L.tensor([[[0.1, 0.5, 0.4]], [[0.3, 0.3, 0.4]], [[0.2, 0.2, 0.6]]]).log(),
                                         L.tensor([[1, 2]]), [3], [2], 0, *r),
}


@pytest.mark.parametrize("reduction", [(), (0,), (1,), (2,), (3,), ("mean",)])
@pytest.mark.parametrize("name", sorted(TOP_LEVEL_LOSSES))
def test_top_level_losses_take_pytorchs_numeric_reduction(name, reduction):
    """`torch.hinge_embedding_loss` and its kin are the underlying ops: unreduced by default, the reduction a
    number, positional after the op's own arguments (not `nn.functional`'s `size_average`)."""
    def run(lib):
        return np.round(np.asarray(TOP_LEVEL_LOSSES[name](lib, *reduction).tolist()), 4).tolist()
    got, want = _outcome(run, tp), _outcome(run, torch)
    if reduction == ("mean",):  # a TypeError (PyTorch lists ctc_loss's overloads in its message)
        assert got[0] == want[0] == "TypeError"
    else:
        assert got == want


# -- nll_loss reads each sample's target entry alone ------------------------------------------------------------
_X = np.random.default_rng(0).standard_normal((4, 3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", [
    dict(target=[0, 2, 1, 2]), dict(target=[0, -100, 1, -100]), dict(target=[-100] * 4),
    dict(target=[0, 2, 1, 2], weight=[0.2, 0.0, 3.0]), dict(target=[0, 2, 1, 2], weight=[0.0, 0.0, 0.0]),
    dict(target=[0, 1, 2, 0], logits=np.where(np.eye(4, 3) > 0, _X, -np.inf)),
    dict(target=[0, 1, 2, 0], logits=np.where(np.eye(4, 3) > 0, _X, np.nan))])
def test_nll_loss_values_and_gradients_as_pytorch(case, reduction):
    got = []
    for lib in (torch, tp):
        x = lib.tensor(case.get("logits", _X), dtype=lib.float32, requires_grad=True)
        weight = case.get("weight")
        out = lib.nn.functional.nll_loss(x, lib.tensor(case["target"]), reduction=reduction,
                                         weight=None if weight is None else lib.tensor(weight))
        out.sum().backward()
        got.append((out, x.grad))
    _same(got[1][0], got[0][0])
    _same(got[1][1], got[0][1])


# -- ldexp ---------------------------------------------------------------------------------------------------------
def test_ldexp_is_one_node_with_pytorchs_gradients():
    seen = []
    for lib in (torch, tp):
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        e = lib.tensor([1.0, 2.0, -3.0], requires_grad=True)
        by_int = lib.ldexp(x, lib.tensor([1, 2, 3]))
        out = lib.ldexp(x, e)
        out.sum().backward()
        seen.append((by_int.grad_fn.name(), [None if n is None else type(n).__name__
                                               for n, _ in by_int.grad_fn.next_functions], str(by_int.dtype)[-7:],
                     out.tolist(), x.grad.tolist(), np.round(e.grad.numpy(), 5).tolist(),
                     lib.ldexp(lib.tensor([1.0, 2.0], dtype=lib.float16), lib.tensor([100, 2])).tolist()))
    assert seen[0] == seen[1]


# -- writes to a position named twice ---------------------------------------------------------------------------
@pytest.mark.parametrize("write", [
    "x.scatter(1, torch.tensor([[0, 0], [2, 2]]), s[:, :2])", "x.scatter(1, torch.tensor([[1, 1, 1], [0, 2, 0]]), s)",
    "x.index_put((torch.tensor([1, 1]),), s[0])", "x.index_put((torch.tensor([1, 1]), torch.tensor([0, 0])), s[0, :2])",
    "x.index_put((torch.tensor([1, 1]), torch.tensor([0, 2])), s[0, 0], accumulate=True)",
    "setitem(x, (torch.tensor([0, 0]),), s)", "setitem(x, (torch.tensor([1, 0, 1]), torch.tensor([2, 2, 2])), s[1])",
    "setitem(x, (x > 0.5,), s[0, 0])", "x.scatter(0, torch.tensor([[1, 1, 0]]), 2.5)"])
def test_every_value_written_to_a_repeated_position_gets_its_gradient_as_pytorch(write):
    """PyTorch's rule reads the gradient at the indices for the written values, so values written to one
    position twice all get it (not only the one that stayed)."""
    def setitem(t, index, value):
        t = t.clone()
        t[index] = value
        return t

    grads = []
    for lib in (torch, tp):
        x = lib.tensor([[0.25, 1.0, -0.5], [2.0, 0.75, 1.5]], requires_grad=True)
        s = lib.tensor([[5.0, 6.0, 7.0], [8.0, 9.0, 10.0]], requires_grad=True)
        out = eval(write, {"torch": lib, "x": x, "s": s, "setitem": setitem})
        (out * lib.arange(1.0, 7.0).reshape(2, 3)).sum().backward()
        grads.append((out, x.grad, s.grad))
    for got, want in zip(grads[1], grads[0]):
        _same(got, want)


# -- PyTorch's underlying ops at the top level ------------------------------------------------------------------
_N = np.random.default_rng(1).standard_normal((2, 3, 4))
TOP_LEVEL_OPS = [
    "torch.kl_div(a, b)", "torch.kl_div(a, b, 1)", "torch.kl_div(a, b, 2, log_target=True)", "torch.kl_div(a, b, 2, True)",
    "torch.binary_cross_entropy_with_logits(a, b)",
    "torch.binary_cross_entropy_with_logits(a, b, torch.tensor([1., 2.]), torch.tensor([3., 1.]), 1)",
    "torch.rms_norm(a, [2])", "torch.rms_norm(a, (2,), torch.tensor([1., 2.]), 1e-5)",
    "torch.frobenius_norm(a, (0, 1))", "torch.frobenius_norm(a, [1], True)", "torch.nuclear_norm(a)",
    "torch.nuclear_norm(a, True)", "torch.nuclear_norm(torch.stack([a, a]), (1, 2))",
    "torch.constant_pad_nd(a, [1, 1], 2.)", "torch.constant_pad_nd(a, [1, 1, 0, 1])",
    "torch.embedding(torch.eye(3), torch.tensor([2, 0]))", "torch.embedding(torch.eye(3), torch.tensor([2, 0]), 0)",
    "torch.dropout(a, 0.5, False)", "torch.alpha_dropout(a, 0.5, False)", "torch.feature_alpha_dropout(a, 0.5, False)",
    "torch.batch_norm(n, None, None, None, None, True, 0.1, 1e-5, False)",
    "torch.batch_norm(n, torch.ones(3), torch.zeros(3), torch.zeros(3), torch.ones(3), False, 0.1, 1e-5, False)",
    "torch.instance_norm(n, None, None, None, None, True, 0.1, 1e-5, False)",
    "torch.slice_copy(a, 1, 0, 1)", "torch.slice_copy(n, -1, 1, None, 2)", "torch.view_copy(a, (4,))",
    "torch.unfold_copy(a, 0, 1, 1)", "torch.t_copy(a)", "torch.permute_copy(n, (2, 0, 1))",
    "torch.transpose_copy(n, 0, 2)", "torch.expand_copy(a[:1], (3, 2))", "torch.diagonal_copy(n, 0, 1, 2)",
    "torch.select_copy(n, 1, 2)", "torch.squeeze_copy(a[None])", "torch.unsqueeze_copy(a, 1)",
    "torch.as_strided_copy(a, (2,), (2,))", "torch.view_as_real_copy(torch.tensor([1 + 2j]))",
    "torch.split_copy(n, 2, 2)", "torch.split_with_sizes_copy(n, [1, 3], 2)", "torch.unbind_copy(a, 1)",
    "torch.range(1, 4)", "torch.range(0, 1, 0.3)", "torch.range(0, 1, -0.3)", "torch.range(4, 1, -1)",
    "torch.range(1, 4, dtype=torch.int64)", "torch.get_device(a)", "torch.is_distributed(a)"]


@pytest.mark.parametrize("expr", TOP_LEVEL_OPS)
def test_top_level_underlying_ops_as_pytorch(expr):
    def run(lib):
        env = {"torch": lib, "a": lib.tensor([[0.5, 2.0], [1.0, -1.0]]), "b": lib.tensor([[0.2, 0.8], [0.3, 0.7]]),
               "n": lib.tensor(_N, dtype=lib.float32)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(expr, env)
        if isinstance(out, tuple):
            return [np.round(np.asarray(t.tolist()), 4).tolist() for t in out]
        return np.round(np.asarray(out.tolist() if hasattr(out, "tolist") else out), 4).tolist()
    assert _outcome(run, tp) == _outcome(run, torch)


def test_range_needs_its_end():
    with pytest.raises(TypeError):
        tp.range(5)


def test_copies_of_views_share_nothing_and_keep_the_graph():
    x = tp.arange(4.0).reshape(2, 2).requires_grad_()
    for copy in (tp.view_copy(x, (4,)), tp.t_copy(x), tp.slice_copy(x, 1, 0, 1), tp.alias_copy(x)):
        assert copy._base is None
        copy.sum().backward()
    assert x.grad.tolist() == [[4.0, 3.0], [4.0, 3.0]]


def test_set_default_tensor_type_sets_the_default_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tp.set_default_tensor_type("torch.DoubleTensor")
            assert tp.ones(1).dtype == tp.float64
            tp.set_default_tensor_type(tp.FloatTensor)
            assert tp.ones(1).dtype == tp.float32
            with pytest.raises(TypeError):
                tp.set_default_tensor_type("torch.LongTensor")
        finally:
            tp.set_default_dtype(tp.float32)


# -- default_collate ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch", [
    "['a', 'b']", "[('a', 1), ('b', 2)]", "[{'s': 'a', 'n': 1.5}, {'s': 'b', 'n': 2.5}]", "[['a', 1], ['b', 2]]",
    "[(torch.ones(2), 1, np.float32(0.5)), (torch.zeros(2), 0, np.float32(1.5))]", "[P('a', 1), P('b', 2)]",
    "[np.ones(2), np.zeros(2)]", "[(1, (2.0, 'x')), (3, (4.0, 'y'))]"])
def test_default_collate_as_pytorch(batch):
    import collections

    P = collections.namedtuple("P", "s n")

    def show(value):
        if hasattr(value, "tolist"):
            return ("tensor", str(value.dtype).split(".")[-1], value.tolist())
        if isinstance(value, dict):
            return {k: show(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value).__name__, [show(v) for v in value]
        return value

    def run(lib):
        return show(lib.utils.data.default_collate(eval(batch, {"torch": lib, "np": np, "P": P})))
    assert _outcome(run, tp) == _outcome(run, torch)


@pytest.mark.parametrize("shapes", [((2, 2, 3), (1, 3, 2)), ((1, 2, 3), (2, 3, 2)), ((2, 2, 3), (2, 4, 2)),
                                    ((2, 3), (2, 3, 2)), ((2, 2, 3), (2, 3, 2))])
def test_bmm_does_not_broadcast_its_batch(shapes):
    def run(lib):
        return list(lib.bmm(lib.ones(shapes[0]), lib.ones(shapes[1])).shape)
    assert _outcome(run, tp) == _outcome(run, torch)


@pytest.mark.parametrize("expr", ["x.pow(3)", "x ** 2.5", "x ** torch.tensor(2.0)", "2 ** x", "x * 3", "x * x"])
def test_saved_values_of_pow_nodes_under_pytorchs_names(expr):
    def run(lib):
        x = lib.tensor([2.0], requires_grad=True)
        fn = eval(expr, {"torch": lib, "x": x}).grad_fn
        seen = []
        for name in ("_saved_self", "_saved_exponent", "_saved_result", "_saved_other"):
            value = _outcome(lambda _, name=name: getattr(fn, name), lib)
            seen.append(value.tolist() if hasattr(value, "tolist") else value)
        return seen
    assert run(tp) == run(torch)


@pytest.mark.parametrize("make", [
    lambda o: tp.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=10),
    lambda o: tp.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="linear", three_phase=True),
    lambda o: tp.optim.lr_scheduler.MultiStepLR(o, [1, 3])])
def test_scheduler_state_goes_through_a_checkpoint(make):
    """A checkpoint holding a scheduler's state loads (with the safe unpickler) and resumes the schedule."""
    import io

    def fresh():
        opt = tp.optim.SGD([tp.nn.Parameter(tp.ones(1))], lr=1.0, momentum=0.9)
        return opt, make(opt)

    opt, sched = fresh()
    for _ in range(3):
        opt.step()
        sched.step()
    buf = io.BytesIO()
    tp.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, buf)
    buf.seek(0)
    loaded = tp.load(buf)
    opt2, sched2 = fresh()
    opt2.load_state_dict(loaded["opt"])
    sched2.load_state_dict(loaded["sched"])
    for _ in range(4):
        opt.step()
        sched.step()
        opt2.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()


# -- from the layers and losses sweep ----------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("lengths", [([3, 5], [4, 2]), ([5, 5], [2, 2]), ([2, 5], [2, 1])])
def test_ctc_loss_of_an_impossible_alignment_has_pytorchs_gradient(reduction, zero_infinity, lengths):
    """An infinite loss (the target cannot fit the input) gives NaN gradients inside its input, as PyTorch's,
    unless `zero_infinity`."""
    log_probs = np.log(np.random.default_rng(0).dirichlet(np.ones(4), size=(5, 2))).astype(np.float32)
    got = []
    for lib in (torch, tp):
        lp = lib.tensor(log_probs, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor([[1, 2, 3, 1], [1, 2, 0, 0]]), lib.tensor(lengths[0]),
                                          lib.tensor(lengths[1]), reduction=reduction, zero_infinity=zero_infinity)
        loss.sum().backward()
        got.append((loss, lp.grad))
    _same(got[1][0], got[0][0], rtol=1e-5, atol=1e-6)
    _same(got[1][1], got[0][1], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (4,)])
def test_cross_entropy_with_probabilities_differentiates_the_class_weights(shape, reduction, label_smoothing):
    rng = np.random.default_rng(0)
    logits, target = rng.standard_normal(shape), rng.random(shape)
    got = []
    for lib in (torch, tp):
        x = lib.tensor(logits, requires_grad=True)
        t = lib.tensor(target, requires_grad=True)
        w = lib.tensor([1.0, 2.0, 3.0, 0.5], dtype=lib.float64, requires_grad=True)
        lib.nn.functional.cross_entropy(x, t, weight=w, reduction=reduction,
                                        label_smoothing=label_smoothing).sum().backward()
        got.append((x.grad, t.grad, w.grad))
    for a, b in zip(got[1], got[0]):
        _same(a, b)


@pytest.mark.parametrize("hx", [False, True])
@pytest.mark.parametrize("batched", [False, True])
def test_lstm_cell_keeps_an_unbatched_input_unbatched(batched, hx):
    cell = tp.nn.LSTMCell(4, 5)
    x = tp.randn(2, 4) if batched else tp.randn(4)
    state = None if not hx else ((tp.zeros(2, 5), tp.zeros(2, 5)) if batched else (tp.zeros(5), tp.zeros(5)))
    h, c = cell(x, state)
    assert tuple(h.shape) == tuple(c.shape) == ((2, 5) if batched else (5,))


def test_adam_with_decoupled_weight_decay_is_adamw():
    got = []
    for lib in (torch, tp):
        runs = []
        for name, extra in (("Adam", {"decoupled_weight_decay": True}), ("AdamW", {}), ("Adam", {})):
            p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
            opt = getattr(lib.optim, name)([p], lr=0.1, weight_decay=0.1, **extra)
            for _ in range(3):
                opt.zero_grad()
                (p * p).sum().backward()
                opt.step()
            runs.append((np.round(p.detach().numpy(), 6).tolist(), opt.param_groups[0]["decoupled_weight_decay"]))
        got.append(runs)
    assert got[1] == got[0]
    assert got[1][0] == got[1][1] != got[1][2]


def test_optimizers_take_named_parameters():
    for lib in (torch, tp):
        m = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(m.named_parameters(), lr=0.1, momentum=0.9)
        m(lib.ones(1, 2)).sum().backward()
        opt.step()
        state = opt.state_dict()
        assert state["param_groups"][0]["param_names"] == ["weight", "bias"]
        lib.optim.SGD(m.named_parameters(), lr=0.1, momentum=0.9).load_state_dict(state)
        with pytest.raises(ValueError, match="with/without names"):
            lib.optim.SGD([("a", m.weight), m.bias], lr=0.1)


@pytest.mark.parametrize("lib", ["torch", "tp"])
def test_container_methods(lib):
    L = torch if lib == "torch" else tp
    nn = L.nn
    s = nn.Sequential(nn.ReLU(), nn.Tanh())
    assert s.insert(1, nn.Sigmoid()) is s
    s.insert(-1, nn.Identity())
    s.extend([nn.ReLU()])
    assert type(s.pop(0)).__name__ == "ReLU"
    assert [type(m).__name__ for m in s] == ["Sigmoid", "Identity", "Tanh", "ReLU"]
    assert len(s + s) == len(s * 2) == len(2 * s) == 8
    s += nn.Sequential(nn.ReLU())
    s *= 2
    assert list(s._modules)[:3] == ["0", "1", "2"] and len(s) == 10
    with pytest.raises(ValueError):
        s + [nn.ReLU()]
    with pytest.raises(ValueError):
        s * 0
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    assert type(ml.pop(0)).__name__ == "ReLU" and len(ml) == 1 and len(ml + [nn.ReLU()]) == 2
    pd = nn.ParameterDict({"a": L.ones(1)})
    assert pd.setdefault("b", L.zeros(2)).shape == (2,)
    assert list(reversed(pd)) == ["b", "a"]
    assert pd.popitem()[0] == "b"
    assert list(pd.copy().keys()) == ["a"] and list(pd.fromkeys(["x", "y"], L.ones(1)).keys()) == ["x", "y"]


def test_forward_hooks_with_always_call_run_when_forward_raises():
    seen = {}
    for name, lib in (("torch", torch), ("tp", tp)):
        class Failing(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m, calls = Failing(), []
        m.register_forward_hook(lambda mod, a, o, calls=calls: calls.append(("always", o)), always_call=True)
        m.register_forward_hook(lambda mod, a, o, calls=calls: calls.append(("plain", o)))
        m.register_forward_hook(lambda mod, a, k, o, calls=calls: calls.append(("kwargs", o, k)), always_call=True,
                                with_kwargs=True)
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        seen[name] = calls
    assert seen["tp"] == seen["torch"] == [("always", None), ("kwargs", None, {})]


@pytest.mark.parametrize("n,stride,output_padding,dilation", [
    (1, 2, 2, 1), (2, 2, 2, 1), (2, 1, 1, 1), (2, 2, 1, 2), (2, 1, 2, 3), (2, (2, 3), (1, 3), 1), (3, 2, (1, 2, 1), 1)])
def test_conv_transpose_refuses_output_padding_as_pytorch(n, stride, output_padding, dilation):
    def run(lib):
        fn = getattr(lib.nn.functional, f"conv_transpose{n}d")
        shape = (1, 1) + (3,) * n
        return list(fn(lib.ones(shape), lib.ones(shape), stride=stride, output_padding=output_padding,
                       dilation=dilation).shape)
    assert _outcome(run, tp) == _outcome(run, torch)


def test_module_reprs_and_copies_as_pytorch():
    import copy

    seen = []
    for lib in (torch, tp):
        nn = lib.nn
        mods = [nn.LayerNorm(4), nn.LayerNorm(4, bias=False), nn.GroupNorm(2, 4), nn.GroupNorm(2, 4, bias=False),
                nn.GroupNorm(2, 4, affine=False), nn.Upsample(scale_factor=2), nn.Upsample(scale_factor=(2, 3))]
        p = nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        t = lib.ones(2, requires_grad=True)
        t.grad = lib.ones(2)
        seen.append(([repr(m) for m in mods], copy.deepcopy(p).grad, copy.deepcopy(t).grad.tolist(),
                     [n for n, _ in nn.GroupNorm(2, 4, bias=False).named_parameters()]))
    assert seen[0] == seen[1]


def test_soft_margin_loss_refuses_a_target_that_requires_grad():
    for lib in (torch, tp):
        with pytest.raises(RuntimeError, match="'soft_margin_loss' is not differentiable with respect to argument "
                                               "'target'"):
            lib.nn.functional.soft_margin_loss(lib.randn(3, requires_grad=True), lib.rand(3, requires_grad=True))


def test_running_statistics_stay_differentiable_for_jax_transforms():
    """PyTorch refuses running statistics that require grad; tapeflow differentiates them, because JAX
    transforms (equinox's filter_grad over a module in eval mode) treat every float array as an input."""
    import equinox
    import jax.numpy as jnp

    model = tp.nn.Sequential(tp.nn.Linear(3, 3), tp.nn.BatchNorm1d(3)).eval()
    grads = equinox.filter_grad(lambda m, x: m(x).sum())(tp.interop.to_equinox(model), jnp.ones((4, 3), jnp.float32))
    assert grads is not None


@pytest.mark.parametrize("theta,size", [((2, 2, 3), (3, 1, 4, 4)), ((2, 3, 4), (1, 1, 4, 4, 2)), ((2, 2, 3), (2, 1, 4, 4))])
def test_affine_grid_batch_mismatch_as_pytorch(theta, size):
    def run(lib):
        return list(lib.nn.functional.affine_grid(lib.ones(theta), size=size, align_corners=False).shape)
    assert _outcome(run, tp) == _outcome(run, torch)


def test_a_load_state_dict_post_hook_returning_a_value_is_refused():
    for lib in (torch, tp):
        m = lib.nn.Linear(1, 1)
        m.register_load_state_dict_post_hook(lambda mod, keys: keys)
        with pytest.raises(AssertionError, match="not expected to return new values"):
            m.load_state_dict(m.state_dict())


def test_full_backward_hook_sees_one_entry_per_positional_argument():
    """Zeros for a tensor input that needs no gradient (when another one needs one), None for a non-tensor."""
    seen = {}
    for name, lib in (("torch", torch), ("tp", tp)):
        class M(lib.nn.Module):
            def forward(self, a, b, c, d=None):
                return a * 2 + b

        m, calls = M(), []
        m.register_full_backward_hook(lambda mod, gi, go, calls=calls: calls.append(
            [None if g is None else (str(g.dtype).split(".")[-1], g.tolist()) for g in gi]))
        m(lib.ones(2, requires_grad=True), lib.ones(2), lib.ones(3, dtype=lib.int64), d=lib.ones(2)).sum().backward()
        m(lib.ones(2), lib.ones(2, requires_grad=True), 3).sum().backward()
        m(3, lib.ones(2, requires_grad=True), 3).sum().backward()
        b = lib.ones(2, requires_grad=True)
        scaled = M()
        scaled.register_full_backward_hook(lambda mod, gi, go: tuple(None if g is None else g * 10 for g in gi))
        scaled(lib.ones(2), b, 7).sum().backward()
        seen[name] = (calls, b.grad.tolist())
    assert seen["tp"] == seen["torch"]


def test_a_custom_backward_returning_a_non_tensor_raises_pytorchs_error():
    for lib in (torch, tp):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return "a"

        with pytest.raises(RuntimeError, match=r"expected Variable or None \(got str\)"):
            F.apply(lib.tensor([3.0], requires_grad=True)).sum().backward()


def test_attention_modules_print_as_pytorch():
    assert repr(tp.nn.MultiheadAttention(4, 2)) == repr(torch.nn.MultiheadAttention(4, 2))
    assert repr(tp.nn.TransformerEncoderLayer(4, 2, 8)) == repr(torch.nn.TransformerEncoderLayer(4, 2, 8))


_NUMBER_FIRST_CALLS = [
    lambda lib, p, g, d: p.add(2, g), lambda lib, p, g, d: lib.add(p, 2, g), lambda lib, p, g, d: p.sub_(0.5, g),
    lambda lib, p, g, d: lib.sub(p, 2, g), lambda lib, p, g, d: p.addcmul(0.1, g, d),
    lambda lib, p, g, d: lib.addcmul(p, 0.1, g, d), lambda lib, p, g, d: p.addcdiv_(-0.5, g, d),
    lambda lib, p, g, d: lib.addcdiv(p, 0.1, g, d), lambda lib, p, g, d: p.add(2, 3),
    lambda lib, p, g, d: p.add_(g, g), lambda lib, p, g, d: lib.add(p, g, g), lambda lib, p, g, d: p.addcmul(g, g, g)]


@pytest.mark.parametrize("call", _NUMBER_FIRST_CALLS)
def test_the_deprecated_number_first_overloads_compute_and_warn_as_pytorch(call):
    # (old optimizer code: `p.data.add_(-lr, grad)`, `p.data.addcdiv_(-step_size, exp_avg, denom)`)
    import warnings

    def run(lib):
        p, g, d = lib.ones(3), lib.tensor([2.0, 3.0, 4.0]), lib.tensor([4.0, 2.0, 1.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = call(lib, p, g, d)
            except TypeError as e:
                return "TypeError", str(e)
        return r.tolist(), p.tolist()

    assert run(tp) == run(torch)


def test_a_deprecated_overload_warns_once_with_pytorchs_text_at_the_callers_line():
    import warnings

    from tapeflow._ops import elementwise

    elementwise._warned_overloads.clear()
    p, g = tp.ones(3), tp.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            p.addcdiv_(-0.5, g, g)
            tp.add(p, 2, g)
    assert [str(w.message) for w in caught] == [
        "This overload of addcdiv_ is deprecated:\n\taddcdiv_(Number value, Tensor tensor1, Tensor tensor2)\n"
        "Consider using one of the following signatures instead:\n\taddcdiv_(Tensor tensor1, Tensor tensor2, *, "
        "Number value = 1)",
        "This overload of add is deprecated:\n\tadd(Tensor input, Number alpha, Tensor other, *, Tensor out = None)\n"
        "Consider using one of the following signatures instead:\n\tadd(Tensor input, Tensor other, *, Number "
        "alpha = 1, Tensor out = None)"]
    assert [w.filename for w in caught] == [__file__] * 2


def test_an_old_style_adam_step_with_number_first_updates_matches_pytorch():
    def train(lib):
        lib.manual_seed(0)
        w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32)))
        m, v = lib.zeros_like(w), lib.zeros_like(w)
        for step in range(1, 4):
            loss = ((w * lib.arange(6.0)) ** 2).sum()
            w.grad = None
            loss.backward()
            with lib.no_grad():
                m.mul_(0.9).add_(1 - 0.9, w.grad)
                v.mul_(0.999).addcmul_(1 - 0.999, w.grad, w.grad)
                w.data.addcdiv_(-0.1 / (1 - 0.9 ** step), m, v.sqrt().add_(1e-8))
        return w.tolist()

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(train(tp), train(torch), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "less_equal_"])
@pytest.mark.parametrize("other", ["tensor", "number"])
def test_a_comparison_written_in_place_stops_the_gradient_as_in_pytorch(name, other):
    def run(lib):
        x = lib.tensor([0.3, 0.5, 0.7], requires_grad=True)
        y = x * 1.0
        r = getattr(y, name)(lib.tensor([0.5, 0.5, 0.5]) if other == "tensor" else 0.5)
        (r * lib.tensor([2.0, 3.0, 4.0])).sum().backward()
        return r.tolist(), r.requires_grad, x.grad.tolist()

    assert run(tp) == run(torch)


@pytest.mark.parametrize("size, stride", [((2, 2), (1, 2)), ((2, 3), (3, 1)), ((2, 3, 4), (1, 2, 6)), ((3,), (2,))])
def test_empty_strided_reports_its_strides_as_pytorch(size, stride):
    def run(lib):
        t = lib.empty_strided(size, stride)
        n = lib.ones(2, dtype=lib.float64).new_empty_strided(size, stride)
        try:
            viewed = tuple(t.view(-1).shape)
        except RuntimeError:
            viewed = "refused"
        return t.stride(), t.is_contiguous(), t.contiguous().stride(), viewed, n.stride(), str(n.dtype)[-7:]

    assert run(tp) == run(torch)


@pytest.mark.parametrize("data", [[[1, 0], [3, 2]], [0.0, 0.0], 5, 0, [[True, False]]])
@pytest.mark.parametrize("size, fill", [(4, -1), (1, 7), (0, -1)])
def test_nonzero_static_pads_and_truncates_as_pytorch(data, size, fill):
    def run(lib):
        r = lib.nonzero_static(lib.tensor(data), size=size, fill_value=fill)
        m = lib.tensor(data).nonzero_static(size=size, fill_value=fill)
        return r.tolist(), tuple(r.shape), str(r.dtype)[-5:], m.tolist()

    assert run(tp) == run(torch)


def test_nonzero_static_traces_under_jit():
    import jax

    f = tp.interop.to_jax(lambda x: tp.nonzero_static(x, size=3))
    assert np.asarray(jax.jit(f)(np.array([0.0, 2.0, 0.0, 5.0]))).tolist() == [[1], [3], [-1]]


@pytest.mark.parametrize("name, call", [
    ("max_pool1d_with_indices", lambda F, x: F.max_pool1d_with_indices(x.view(2, 2, -1), 2)),
    ("max_pool2d_with_indices", lambda F, x: F.max_pool2d_with_indices(x.view(1, 2, 4, 4), 2)),
    ("max_pool3d_with_indices", lambda F, x: F.max_pool3d_with_indices(x.view(1, 2, 2, 2, 4), 2)),
    ("adaptive_max_pool1d_with_indices", lambda F, x: F.adaptive_max_pool1d_with_indices(x.view(2, 2, -1), 3)),
    ("adaptive_max_pool2d_with_indices", lambda F, x: F.adaptive_max_pool2d_with_indices(x.view(1, 2, 4, 4), 3)),
    ("adaptive_max_pool3d_with_indices", lambda F, x: F.adaptive_max_pool3d_with_indices(x.view(1, 2, 2, 2, 4), 2))])
def test_the_with_indices_spellings_of_max_pooling_match_pytorch(name, call):
    x = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    mine = call(tp.nn.functional, tp.tensor(x))
    theirs = call(torch.nn.functional, torch.tensor(x))
    assert mine[0].tolist() == theirs[0].tolist() and mine[1].tolist() == theirs[1].tolist()


@pytest.mark.parametrize("call", [
    lambda lib, t: lib.selu_(t), lambda lib, t: lib.celu_(t, 2.0), lambda lib, t: lib.threshold_(t, 0.5, 9.0),
    lambda lib, t: lib.rrelu_(t, 0.2, 0.4), lambda lib, t: lib.dropout_(t, 0.5, False),
    lambda lib, t: lib.alpha_dropout_(t, 0.5, False), lambda lib, t: lib.feature_alpha_dropout_(t.view(1, 3), 0.5, False)])
def test_the_top_level_in_place_activations_write_their_input_as_pytorch(call):
    def run(lib):
        t = lib.tensor([-1.0, 0.2, 2.0])
        r = call(lib, t)
        x = lib.tensor([-1.0, 0.2, 2.0], requires_grad=True)
        y = x * 1.0
        call(lib, y).sum().backward()
        return np.round(r.tolist(), 6).tolist(), np.round(t.tolist(), 6).tolist(), np.round(x.grad.tolist(), 6).tolist()

    assert run(tp) == run(torch)
