"""The whole op table, driven by `tests/op_specs.py`.

For every op: the forward against NumPy (float64, and float32 on the main
case); the VJP (`Op.backward`, hand-written or derived) against `jax.vjp` on
every case and against float64 central finite differences on the main case;
the VJP of the VJP (`Op.grad_op`, as `create_graph=True` runs it) against
finite differences of the first-order VJP and a JAX forward-mode product; and
a representative tapeflow call whose `.backward()` and double backward must
give the same numbers. Inputs are passed exactly as the dispatcher passes them
(unsaved inputs as `None` plus their shape/dtype), so the rules are tested the
way the tape runs them.
"""

from __future__ import annotations

import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from op_specs import KEY, SPECS, A, B, F, I, make_args

import tapeflow as tp
import xla_ops

pytestmark = pytest.mark.op_table

NAMES = sorted(SPECS)
DIFF = [n for n in NAMES if SPECS[n].diff]
TF = [n for n in NAMES if SPECS[n].tf is not None]
EPS = 1e-6


def _rng(name: str, i: int) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{name}/{i}".encode()))


def _is_float(a) -> bool:
    return hasattr(a, "dtype") and jnp.issubdtype(a.dtype, jnp.floating)


def _outs(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _case(name: str, i: int):
    s = SPECS[name]
    case = s.cases[i]
    args = make_args(case, s.dom, _rng(name, i))
    return s, case, xla_ops.TABLE[name], args


def _close(actual, expected, rtol, atol, what):
    if actual is None or expected is None:  # (an output an op has only for some inputs: both must lack it)
        assert actual is expected, f"{what}: {actual!r}, expected {expected!r}"
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != expected {expected.shape}"
    if actual.dtype.kind in "biu" or expected.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


# -- the table is complete ----------------------------------------------------------------------------
def test_every_op_has_an_entry():
    missing = sorted(set(xla_ops.TABLE) - set(SPECS))
    assert not missing, f"ops without an entry in tests/op_specs.py (add one per op): {missing}"
    stale = sorted(set(SPECS) - set(xla_ops.TABLE))
    assert not stale, f"tests/op_specs.py has entries for ops that do not exist: {stale}"


@pytest.mark.parametrize("name", NAMES)
def test_differentiable_flag_matches(name):
    assert SPECS[name].diff == xla_ops.TABLE[name].differentiable


# -- forward --------------------------------------------------------------------------------------------
def _eigh_holds(got, args, params, tol):
    """`(w, V)` of the Hermitian matrix the named triangle gives: `A V = V diag(w)`, `V^H V = I`."""
    (a,), (w, v) = args, (np.asarray(got[0]), np.asarray(got[1]))
    tri = np.triu(a) if params.get("UPLO", "L") == "U" else np.tril(a)
    h = tri + np.swapaxes(tri.conj(), -1, -2) - np.eye(a.shape[-1]) * np.diagonal(tri, axis1=-2, axis2=-1)[..., None, :]
    np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=tol * max(1.0, np.abs(a).max(initial=0.0)))
    np.testing.assert_allclose(np.swapaxes(v.conj(), -1, -2) @ v, np.broadcast_to(np.eye(a.shape[-1]), v.shape),
                               atol=tol)


def _svd_holds(got, args, params, tol):
    """`(U, S, Vh)`: `U[:, :k] diag(S) Vh[:k] = A` with orthonormal `U` and `Vh`."""
    (a,), (u, sv, vh) = args, (np.asarray(g) for g in got)
    k = sv.shape[-1]
    np.testing.assert_allclose((u[..., :k] * sv[..., None, :]) @ vh[..., :k, :], a, atol=tol * max(1.0, np.abs(a).max(initial=0.0)))
    for q in (u, np.swapaxes(vh, -1, -2)):
        np.testing.assert_allclose(np.swapaxes(q.conj(), -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2]
                                   + (q.shape[-1], q.shape[-1])), atol=tol)


# Where the backend's solver may pick other signs of eigen- and singular vectors than LAPACK (cuSOLVER on a GPU:
# PyTorch's CUDA results differ from its CPU ones alike), the vectors are checked by what defines them and only
# the values are compared.
_SIGN_FREE = {"linalg_eigh": (_eigh_holds, (0,)), "linalg_svd": (_svd_holds, (1,))}


def _compared(name, got, want, args, params, tol):
    """The outputs to compare with the reference, after checking the sign-free ones off the CPU."""
    if name not in _SIGN_FREE or jax.default_backend() == "cpu":
        return got, want
    holds, values = _SIGN_FREE[name]
    holds(got, args, params, tol)
    return [got[i] for i in values], [want[i] for i in values]


def _reference(s, case, args):
    if s.ref is not None:
        return _outs(s.ref(*args, **case.params))
    return _outs(s.jax_ref(*[jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args], **case.params))


@pytest.mark.parametrize("name", NAMES)
def test_forward_float64(name):
    s = SPECS[name]
    for i, case in enumerate(s.cases):
        _, _, op, args = _case(name, i)
        got = _outs(op.compiled(tuple(case.params.items()))(*args))
        want = _reference(s, case, args)
        assert len(got) == len(want), f"{name} case {i}: {len(got)} outputs, expected {len(want)}"
        got, want = _compared(name, got, want, args, case.params, 1e-10)
        for j, (g, w) in enumerate(zip(got, want)):
            what = f"{name} case {i} output {j}"
            single = np.asarray(w).dtype == np.float32  # float32 results: rounding order may differ by an ulp
            _close(g, w, 1e-6 if single else 1e-10, 1e-7 if single else 1e-12, what)
            if s.ref is not None:
                assert np.asarray(g).dtype == np.asarray(w).dtype, f"{what}: dtype {g.dtype}, NumPy gives {w.dtype}"


@pytest.mark.parametrize("name", [n for n in NAMES if SPECS[n].f32 and any(isinstance(a, F) for a in
                                                                            SPECS[n].cases[0].args)])
def test_forward_float32(name):
    s, case, op, args = _case(name, 0)
    args32 = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a for a in args]
    got = _outs(op.compiled(tuple(case.params.items()))(*args32))
    want = _reference(s, case, [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a
                                for a in args32])
    got, want = _compared(name, got, want, args32, case.params, 1e-4)
    for j, (g, w) in enumerate(zip(got, want)):
        if w is None:
            _close(g, w, 0, 0, f"{name} float32 output {j}")
            continue
        w = np.asarray(w)
        if w.dtype == np.float64 and "dtype" not in case.params:
            assert g.dtype == jnp.float32, f"{name} output {j}: float32 inputs gave {g.dtype}"
        _close(np.asarray(g).astype(w.dtype), w, max(1e-4, s.rtol), max(1e-5, s.atol), f"{name} float32 output {j}")


# -- first order ------------------------------------------------------------------------------------------
def _tape_inputs(op, args):
    """What the dispatcher hands the VJP: saved inputs, `None` (plus shape/dtype) for the others."""
    saved, metas = [], []
    for i, a in enumerate(args):
        if op.saves is None or i in op.saves:
            saved.append(a)
            metas.append(None)
        else:
            saved.append(None)
            metas.append((np.shape(a), getattr(a, "dtype", None)) if hasattr(a, "dtype") else ((), None))
    return saved, (tuple(metas) if any(m is not None for m in metas) else ())


def _float_positions(case, args):
    return [i for i, (d, a) in enumerate(zip(case.args, args))
            if isinstance(d, (F, A)) and isinstance(a, np.ndarray) and a.dtype == np.float64
            and not getattr(d, "const", False)]


def _cotangents(outs, rng):
    return [jnp.asarray(rng.standard_normal(np.shape(o)), o.dtype) if _is_float(o) else None for o in outs]


class _Call:
    """One case of one op, set up the way the tape runs it."""

    def __init__(self, name, i):
        self.s, self.case, self.op, args = _case(name, i)
        self.args = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        self.params = tuple(self.case.params.items())
        self.fwd = self.op.compiled(self.params)
        self.fpos = _float_positions(self.case, args)
        self.needs = tuple(i in self.fpos for i in range(len(args)))
        out = self.fwd(*self.args)
        self.nout = len(out) if isinstance(out, tuple) else 1
        self.out = out
        rng = _rng(name, 1000 + i)
        self.gs = _cotangents(_outs(out), rng)
        self.hs = [jnp.asarray(rng.standard_normal(np.shape(self.args[p]))) for p in self.fpos]

    def float_fwd(self, *fargs):
        """The forward as a function of the float inputs only, float outputs only."""
        full = list(self.args)
        for p, v in zip(self.fpos, fargs):
            full[p] = v
        outs = _outs(self.op.fwd(*full, **self.case.params))
        return tuple(o for o in outs if _is_float(o))

    def vjp(self, args=None, gs=None):
        args = self.args if args is None else args
        gs = self.gs if gs is None else gs
        ans = self.fwd(*args) if self.op.save_ans else None
        saved, metas = _tape_inputs(self.op, args)
        res = self.op.backward(self.params, self.needs, metas, self.nout)(*gs, ans, *saved)
        return [res[p] for p in self.fpos]

    def reference_vjp(self):
        # One compiled program: op-by-op JAX would compile every primitive of the op on its own.
        @jax.jit
        def ref(fargs, gs):
            _, pullback = jax.vjp(self.float_fwd, *fargs)
            return pullback(gs)

        return ref([self.args[p] for p in self.fpos], tuple(g for g in self.gs if g is not None))


def _fd_vjp(call: _Call) -> list:
    """`g . dF/dx` for each float input by central differences, all perturbations at once (vmap)."""
    res = []
    gflat = jnp.concatenate([g.reshape(-1) for g in call.gs if g is not None])
    for k, p in enumerate(call.fpos):
        x = call.args[p]
        n = x.size
        basis = jnp.eye(n, dtype=x.dtype).reshape((n, *x.shape)) * EPS

        def f(d, k=k):
            fargs = [call.args[q] for q in call.fpos]
            fargs[k] = fargs[k] + d
            return jnp.concatenate([o.reshape(-1) for o in call.float_fwd(*fargs)])

        diffs = jax.jit(lambda b, f=f: (jax.vmap(f)(b) - jax.vmap(f)(-b)) / (2 * EPS))  # one program
        res.append((diffs(basis) @ gflat).reshape(x.shape))
    return res


@pytest.mark.parametrize("name", DIFF)
def test_vjp_matches_jax_and_finite_differences(name):
    s = SPECS[name]
    for i, case in enumerate(s.cases):
        if not case.grad:
            continue
        call = _Call(name, i)
        if not call.fpos or all(g is None for g in call.gs):  # nothing differentiable flows (a cast to int, say)
            continue
        got = call.vjp()
        for k, (g, w) in enumerate(zip(got, call.reference_vjp())):
            assert g is not None, f"{name} case {i}: no gradient for input {call.fpos[k]}"
            assert g.dtype == w.dtype, f"{name} case {i} input {call.fpos[k]}: gradient dtype {g.dtype}"
            _close(g, w, 1e-9, 1e-10, f"{name} case {i}: VJP vs jax.vjp for input {call.fpos[k]}")
        if i == 0 and s.fd and all(a.size for a in call.args if hasattr(a, "size")):
            for k, (g, w) in enumerate(zip(got, _fd_vjp(call))):
                _close(g, w, max(1e-5, s.rtol), max(1e-6, s.atol),
                       f"{name}: VJP vs finite differences for input {call.fpos[k]}")


# -- second order --------------------------------------------------------------------------------------------
def _second_order(call: _Call):
    """d/dx and d/dg of `S = sum_k <h_k, vjp_k(g, x)>`, through `grad_op` as `create_graph=True` records it."""
    op = call.op
    ans = call.out if op.save_ans else None
    saved, metas = _tape_inputs(op, call.args)
    gop = op.grad_op(call.params, call.needs, metas, call.nout)
    single_float = call.nout == 1 and _is_float(call.out)
    needs2 = ([g is not None for g in call.gs] + [ans is not None and single_float]
              + [n and s is not None for n, s in zip(call.needs, saved)])
    inputs2 = [*call.gs, ans, *saved]
    cts = [None] * len(call.args)
    for p, h in zip(call.fpos, call.hs):
        cts[p] = h
    res = gop.backward((), tuple(needs2), (), len(call.args))(*cts, None, *inputs2)
    ng = len(call.gs)
    dg = [r for r, g in zip(res[:ng], call.gs) if g is not None]
    dx = [res[ng + 1 + p] if res[ng + 1 + p] is not None else jnp.zeros_like(call.args[p]) for p in call.fpos]
    if res[ng] is not None:  # the rule reads the forward output: chain through the forward
        _, pullback = jax.vjp(call.float_fwd, *(call.args[p] for p in call.fpos))
        dx = [a + b for a, b in zip(dx, pullback((res[ng],)))]
    return dg, dx


def _fd_second(call: _Call) -> list:
    """Central differences of `S(x)` (the first-order VJP contracted with `h`), vmapped over perturbations."""
    res = []
    for p in call.fpos:
        x = call.args[p]
        n = x.size
        basis = jnp.eye(n, dtype=x.dtype).reshape((n, *x.shape)) * EPS

        def S(d, p=p):
            args = list(call.args)
            args[p] = args[p] + d
            return sum(jnp.sum(h * v) for h, v in zip(call.hs, call.vjp(args)))

        diffs = jax.jit(lambda b, S=S: (jax.vmap(S)(b) - jax.vmap(S)(-b)) / (2 * EPS))
        res.append(diffs(basis).reshape(x.shape))
    return res


@pytest.mark.parametrize("name", [n for n in DIFF if SPECS[n].second])
def test_vjp_of_vjp(name):
    s = SPECS[name]
    call = _Call(name, 0)
    dg, dx = _second_order(call)
    # d/dg S = J h: a forward-mode product of the forward.
    _, tangents = jax.jit(lambda xs, hs: jax.jvp(call.float_fwd, xs, hs))(tuple(call.args[p] for p in call.fpos),
                                                                           tuple(call.hs))
    for k, (a, b) in enumerate(zip(dg, tangents)):
        _close(a, b, 1e-9, 1e-10, f"{name}: d/dg of the VJP vs jax.jvp (output {k})")
    if s.fd:
        for k, (a, b) in enumerate(zip(dx, _fd_second(call))):
            _close(a, b, max(1e-5, s.rtol), max(1e-6, s.atol),
                   f"{name}: VJP of the VJP vs finite differences for input {call.fpos[k]}")


# -- what JAX sees: the table's rule -------------------------------------------------------------------------
def _rule_float_fwd(call: _Call):
    """`call.float_fwd` through `Op.rule`, the forward every JAX transform differentiates."""
    rule = call.op.rule(call.params)

    def f(*fargs):
        full = list(call.args)
        for p, v in zip(call.fpos, fargs):
            full[p] = v
        return tuple(o for o in _outs(rule(*full)) if _is_float(o))

    return f


def _rule_paths(call: _Call):
    """One compiled program: `jax.vjp` and `jax.jvp` through the op's rule, JAX's own `jax.jvp` of the raw
    forward, forward over reverse through the rule, and the forward-mode derivative of the table VJP."""
    f = _rule_float_fwd(call)
    xs = tuple(call.args[p] for p in call.fpos)
    gs = tuple(g for g in call.gs if g is not None)

    def table_vjp(*fargs):
        args = list(call.args)
        for p, v in zip(call.fpos, fargs):
            args[p] = v
        return tuple(call.vjp(args))

    @jax.jit
    def paths(xs, hs):
        return (jax.vjp(f, *xs)[1](gs), jax.jvp(f, xs, hs)[1], jax.jvp(call.float_fwd, xs, hs)[1],
                jax.jvp(lambda *x: jax.vjp(f, *x)[1](gs), xs, hs)[1], jax.jvp(table_vjp, xs, hs)[1])

    return paths(xs, tuple(call.hs))


@pytest.mark.parametrize("name", [n for n in DIFF if not xla_ops.TABLE[n].derived])
def test_jax_transforms_use_the_table_rule(name):
    """For every hand-written rule: `jax.vjp` through the op is its table VJP exactly (main and broadcasting
    cases); `jax.jvp` is that VJP's transpose (checked against JAX's own rule away from kinks); forward over
    reverse is the derivative of the table VJP, which is what `create_graph=True` differentiates on the tape.
    (A derived op's rule is its forward, differentiated by JAX: `test_vjp_matches_jax_and_finite_differences`.)"""
    s = SPECS[name]
    for i, case in enumerate(s.cases[:2]):
        if not case.grad:
            continue
        call = _Call(name, i)
        if not call.fpos or all(g is None for g in call.gs):
            continue
        pulled, tangent, own, fwd_rev, tape2 = _rule_paths(call)
        for k, (a, b) in enumerate(zip(pulled, call.vjp())):
            _close(a, b, 1e-12, 1e-13, f"{name} case {i}: jax.vjp through the op vs its table VJP (input {k})")
        if i != 0:
            continue
        for k, (a, b) in enumerate(zip(tangent, own)):
            _close(a, b, 1e-9, 1e-10, f"{name}: jax.jvp through the op vs JAX's own rule (output {k})")
        if s.second:
            for k, (a, b) in enumerate(zip(fwd_rev, tape2)):
                _close(a, b, 1e-9, 1e-10, f"{name}: forward over reverse vs the derivative of the table VJP ({k})")


# Ops whose VJP the table derives with `jax.vjp` of the forward: JAX's rule is the table's rule for them, on the
# tape as on every JAX path. A forward with a kink must be written so that JAX's rule picks PyTorch's subgradient
# (see `_abs0` in xla_ops/nn.py), and `tests/test_one_semantics.py` checks those points against PyTorch.
DERIVED = [
    # elementwise
    "acos", "asin", "asinh", "atanh", "erf", "erfc", "erfinv", "fmod", "lerp",
    "polar", "remainder", "sgn",
    # reductions and scans
    "cumprod", "prod", "prod_dim", "sort", "topk",
    # shapes, indexing, views
    "einsum", "gather", "index", "index_add", "index_select", "pad", "repeat", "repeat_interleave",
    "scatter_add", "take", "masked_select", "to_device", "view_apply", "view_scatter", "matmul",
    # Fourier transforms (linear: JAX's transposes, in PyTorch's complex convention)
    "fft_c2c", "fft_c2r", "fft_r2c",
    # nn
    "adaptive_avg_pool", "avg_pool", "batch_norm", "batch_norm_eval", "conv", "conv_transpose", "dropout", "gelu",
    "group_norm", "layer_norm", "leaky_relu", "max_pool", "max_pool_with_indices", "silu", "softplus", "rnn_layer",
    "standard_gamma",
    # losses
    "binary_cross_entropy_with_logits", "huber_loss", "kl_div", "l1_loss", "mse_loss",
    "nll_loss", "smooth_l1_loss",
    # linalg
    "cholesky", "linalg_det", "linalg_slogdet", "linalg_eig", "linalg_eigvals",
    "linalg_eigvalsh", "linalg_lstsq", "linalg_lu", "linalg_lu_factor", "linalg_lu_solve",
    "linalg_matrix_exp", "linalg_pinv", "linalg_qr", "linalg_solve", "linalg_solve_triangular", "linalg_svdvals",
]


def test_derived_ops_are_listed():
    """Ops whose VJP the table derives with `jax.vjp` (JAX's rule on every path, the tape included)."""
    derived = sorted(n for n, op in xla_ops.TABLE.items() if op.derived and not n.endswith(("_backward", "_jvp")))
    assert derived == sorted(DERIVED), f"derived ops changed: {sorted(set(derived) ^ set(DERIVED))}"


# -- through tapeflow ------------------------------------------------------------------------------------------
def _tensors(s, case, args):
    ts = []
    for d, a in zip(case.args, args):
        if isinstance(d, (F, A)) and a.dtype == np.float64:
            ts.append(tp.tensor(a, dtype=tp.float64, requires_grad=s.diff and not getattr(d, "const", False)))
        elif isinstance(d, (F, I, B, A)) or d is KEY:
            ts.append(tp.tensor(a))
    return ts


def _tf_reference(s, case, op):
    if s.tf_ref is not None:
        return lambda *arrays: _outs(s.tf_ref(*arrays))
    fwd = op.compiled(tuple(case.params.items()))
    arr_pos = [i for i, d in enumerate(case.args) if isinstance(d, (F, I, B, A)) or d is KEY]

    def ref(*arrays):
        full = list(case.args)
        for i, a in zip(arr_pos, arrays):
            full[i] = a
        return _outs(fwd(*full))
    return ref


@pytest.mark.parametrize("name", TF)
def test_through_tapeflow(name):
    s, case, op, args = _case(name, 0)
    ts = _tensors(s, case, args)
    arrays = [jnp.asarray(t.detach().numpy()) for t in ts]
    ref = _tf_reference(s, case, op)
    out = s.tf(*ts)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    want = ref(*arrays)
    assert len(outs) == len(want)
    for j, (o, w) in enumerate(zip(outs, want)):
        _close(o.detach().numpy(), w, 1e-10, 1e-12, f"{name}: tapeflow output {j}")
    fouts = [o for o in outs if o.dtype.is_floating_point]
    if not s.diff or not fouts:
        assert all(o.grad_fn is None and not o.requires_grad for o in outs), f"{name}: result records a graph"
        return
    node = op.node if s.node is None else s.node
    if node:
        got = type(fouts[0].grad_fn).__name__  # (the class: `name()` of engine nodes carries torch::autograd::)
        assert got == node, f"{name}: grad_fn {got}, expected {node}"
    leaves = [t for t in ts if t.requires_grad]
    fidx = [k for k, t in enumerate(ts) if t.requires_grad]
    rng = _rng(name, 2000)
    gs = [jnp.asarray(rng.standard_normal(tuple(o.shape)), o.dtype.jax) for o in fouts]
    hs = [jnp.asarray(rng.standard_normal(tuple(t.shape))) for t in leaves]

    def float_ref(*fl):
        full = list(arrays)
        for k, v in zip(fidx, fl):
            full[k] = v
        return tuple(o for o in ref(*full) if _is_float(o))

    def vjp_ref(*fl):
        _, pullback = jax.vjp(float_ref, *fl)
        return pullback(tuple(gs))

    fl = [arrays[k] for k in fidx]
    want = jax.jit(vjp_ref)(*fl)  # one compiled program, not op-by-op JAX
    g_tf = tp.autograd.grad(fouts, leaves, [tp.tensor(np.asarray(g)) for g in gs], create_graph=True,
                            allow_unused=True)
    for g, w in zip(g_tf, want):
        _close(np.zeros(w.shape) if g is None else g.detach().numpy(), w, 1e-9, 1e-10, f"{name}: tapeflow gradient")
    tp.autograd.backward(fouts, [tp.tensor(np.asarray(g)) for g in gs], retain_graph=True)
    for t, w in zip(leaves, want):
        _close(np.zeros(w.shape) if t.grad is None else t.grad.numpy(), w, 1e-9, 1e-10, f"{name}: .backward() grad")
    if not s.second:
        return
    used = [(g, h) for g, h in zip(g_tf, hs) if g is not None and g.requires_grad]
    if not used:
        return
    total = sum((g * tp.tensor(np.asarray(h))).sum() for g, h in used)
    d2 = tp.autograd.grad(total, leaves, allow_unused=True)
    want2 = jax.jit(jax.grad(lambda *f: sum(jnp.sum(h * v) for h, v in zip(hs, vjp_ref(*f))),
                             argnums=tuple(range(len(fl)))))(*fl)
    for d, w in zip(d2, want2):
        _close(np.zeros(w.shape) if d is None else d.numpy(), w, 1e-8, 1e-9, f"{name}: tapeflow double backward")


def test_dropout_through_tapeflow():
    x = tp.tensor(np.linspace(0.5, 2.0, 24).reshape(4, 6), dtype=tp.float64, requires_grad=True)
    y = tp.nn.functional.dropout(x, 0.25, training=True)
    kept = y.detach().numpy() != 0
    assert 0 < kept.sum() < 24
    np.testing.assert_allclose(y.detach().numpy(), np.where(kept, x.detach().numpy() / 0.75, 0.0))
    g = np.arange(24.0).reshape(4, 6)
    y.backward(tp.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, g / 0.75, 0.0))
