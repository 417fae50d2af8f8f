"""Forward-mode AD: JVPs agree with reverse mode on a broad sample of ops (u . Jv == J^T u . v)."""

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.autograd.forward_ad as fwAD


def t(x, **kw):
    return tp.tensor(x, dtype=tp.float64, **kw)


# (name, function of tensors, input shapes); inputs are drawn in (0.5, 1.5) so log/sqrt/div are safe.
OPS = [
    ("exp", lambda x: x.exp(), [(3,)]),
    ("log", lambda x: x.log(), [(3,)]),
    ("sin_cos", lambda x: x.sin() * x.cos(), [(2, 3)]),
    ("tanh_sigmoid", lambda x: x.tanh() + x.sigmoid(), [(3,)]),
    ("sqrt_rsqrt", lambda x: x.sqrt() + x.rsqrt(), [(3,)]),
    ("pow", lambda x, y: x ** y, [(3,), (3,)]),
    ("div_broadcast", lambda x, y: x / y, [(2, 3), (3,)]),
    ("sub_scalar", lambda x: 2.0 - x * 3, [(2,)]),
    ("matmul", lambda a, b: a @ b, [(2, 3), (3, 4)]),
    ("einsum", lambda a, b: tp.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    ("sum_dim", lambda x: x.sum(1, keepdim=True), [(2, 3)]),
    ("mean_var", lambda x: x.mean(0) + x.var(0), [(3, 2)]),
    ("prod", lambda x: x.prod(), [(4,)]),
    ("max_dim", lambda x: x.max(1).values, [(2, 3)]),
    ("amax", lambda x: x.amax(0), [(3, 2)]),
    ("softmax", lambda x: x.softmax(-1), [(2, 3)]),
    ("log_softmax", lambda x: x.log_softmax(0), [(3, 2)]),
    ("logsumexp", lambda x: x.logsumexp(1), [(2, 3)]),
    ("norm", lambda x: x.norm(), [(4,)]),
    ("cumsum_cumprod", lambda x: x.cumsum(0) + x.cumprod(0), [(4,)]),
    ("transpose_reshape", lambda x: x.t().reshape(6) * 2, [(2, 3)]),
    ("permute_flatten", lambda x: x.permute(2, 0, 1).flatten(), [(2, 1, 3)]),
    ("expand_squeeze", lambda x: x.unsqueeze(0).expand(3, 2).squeeze(), [(2,)]),
    ("index_basic", lambda x: x[1:, ::2], [(3, 4)]),
    ("index_advanced", lambda x: x[tp.tensor([2, 0, 2])], [(3, 2)]),
    ("cat_stack", lambda x, y: tp.cat([x, y]) + tp.stack([x, y]).sum(0).repeat(2), [(2,), (2,)]),
    ("where_clamp", lambda x, y: tp.where(x > 1.0, x, y).clamp(0.7, 1.3), [(4,), (4,)]),
    ("minimum_maximum", lambda x, y: tp.minimum(x, y) * tp.maximum(x, y), [(3,), (3,)]),
    ("gather", lambda x: x.gather(1, tp.tensor([[0, 2], [1, 1]])), [(2, 3)]),
    ("sort_topk", lambda x: x.sort().values + x.topk(4).values, [(4,)]),
    ("flip_roll", lambda x: x.flip(0) * x.roll(1, 0), [(3,)]),
    ("abs_neg", lambda x: (-x).abs() - x.neg(), [(3,)]),
    ("atan2_hypot", lambda x, y: tp.atan2(x, y) + tp.hypot(x, y), [(3,), (3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", OPS, ids=[o[0] for o in OPS])
def test_jvp_matches_reverse_mode(name, fn, shapes):
    rng = np.random.default_rng(len(name))
    xs = [rng.uniform(0.5, 1.5, s) for s in shapes]
    vs = [rng.normal(size=s) for s in shapes]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(t(x), t(v)) for x, v in zip(xs, vs)]
        out = fn(*duals)
        primal, tangent = fwAD.unpack_dual(out)
    assert tangent is not None and tangent.shape == primal.shape
    leaves = [t(x, requires_grad=True) for x in xs]
    ref = fn(*leaves)
    np.testing.assert_allclose(primal.numpy(), ref.detach().numpy(), rtol=1e-12)
    u = rng.normal(size=tuple(ref.shape))
    grads = tp.autograd.grad(ref, leaves, grad_outputs=t(u))
    lhs = float(np.sum(u * tangent.numpy()))
    rhs = sum(float(np.sum(g.numpy() * v)) for g, v in zip(grads, vs))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,fn,shapes", OPS, ids=[o[0] for o in OPS])
def test_reverse_over_forward_matches_reverse_over_reverse(name, fn, shapes):
    """Tangents computed in grad mode are on the tape: d/dx (u . J(x) v) and d/dv (u . J v) = J^T u
    agree with the same derivatives taken by double backward."""
    rng = np.random.default_rng(len(name) + 7)
    xs = [rng.uniform(0.5, 1.5, s) for s in shapes]
    vs = [rng.normal(size=s) for s in shapes]
    ps = [t(x, requires_grad=True) for x in xs]
    ts = [t(v, requires_grad=True) for v in vs]
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fn(*(fwAD.make_dual(p, v) for p, v in zip(ps, ts)))).tangent
    assert tangent.requires_grad
    u = t(rng.normal(size=tuple(tangent.shape)))
    got = tp.autograd.grad((tangent * u).sum(), ps + ts, allow_unused=True)

    leaves = [t(x, requires_grad=True) for x in xs]
    vjp = tp.autograd.grad(fn(*leaves), leaves, grad_outputs=u, create_graph=True)
    s = sum((g * t(v)).sum() for g, v in zip(vjp, vs))
    want = list(tp.autograd.grad(s, leaves, allow_unused=True)) if s.requires_grad else [None] * len(xs)
    want += [g.detach() for g in vjp]
    for k, (a, b) in enumerate(zip(got, want)):
        a = np.zeros(shapes[k % len(shapes)]) if a is None else a.numpy()
        b = np.zeros(shapes[k % len(shapes)]) if b is None else b.numpy()
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11, err_msg=f"{name}: gradient {k}")


def test_hessian_vector_product_by_reverse_over_forward():
    a = t(np.random.default_rng(0).normal(size=(4, 5)))

    def f(x):
        return tp.nn.functional.softplus(a @ x).sum() + (x.sin() * x).sum()

    p = t(np.linspace(-1.0, 1.0, 5), requires_grad=True)
    v = t(np.arange(5.0) - 2)
    with fwAD.dual_level():
        y = f(fwAD.make_dual(p, v))
        jvp = fwAD.unpack_dual(y).tangent
    assert type(jvp.grad_fn).__name__ == "AddJvpBackward0"
    (hv,) = tp.autograd.grad(jvp, p, create_graph=True)
    h = tp.autograd.functional.hessian(f, p.detach())
    np.testing.assert_allclose(hv.detach().numpy(), (h @ v).numpy(), rtol=1e-12, atol=1e-12)
    # One order further: d/dp (1 . H(p) v), against the tape's triple backward.
    (third,) = tp.autograd.grad(hv.sum(), p)
    (g,) = tp.autograd.grad(f(p), p, create_graph=True)
    (gv,) = tp.autograd.grad((g * v).sum(), p, create_graph=True)
    (want,) = tp.autograd.grad(gv.sum(), p)
    np.testing.assert_allclose(third.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_tangents_stay_off_the_tape_when_nothing_requires_grad():
    with fwAD.dual_level():
        y = fwAD.make_dual(t([1.0, 2.0]), t([1.0, 1.0])).exp()
        assert fwAD.unpack_dual(y).tangent.grad_fn is None
        x = t([1.0, 2.0], requires_grad=True)
        with tp.no_grad():
            z = fwAD.make_dual(x, t([1.0, 1.0])).exp()
        assert fwAD.unpack_dual(z).tangent.grad_fn is None


def test_unpack_outside_and_without_tangent():
    x = t([1.0])
    assert fwAD.unpack_dual(x).tangent is None
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t([2.0]))
        p, tan = fwAD.unpack_dual(d)
        assert fwAD.unpack_dual(p).tangent is None  # the primal view carries no tangent
        assert fwAD.unpack_dual(d.detach()).tangent is None and fwAD.unpack_dual(x).tangent is None
        y = d * 3
    assert fwAD.unpack_dual(y).tangent is None  # level exited: tangents dropped


def test_inplace_moves_tangent_and_views_follow_their_base():
    with fwAD.dual_level():
        d = fwAD.make_dual(t([1.0, 2.0]), t([1.0, 1.0]))
        z = d * 1.0
        z.mul_(3)
        assert tp.equal(fwAD.unpack_dual(z).tangent, t([3.0, 3.0]))
        z.zero_()
        assert tp.equal(fwAD.unpack_dual(z).tangent, t([0.0, 0.0]))
        w = t([5.0, 5.0])
        w.add_(d)
        assert tp.equal(fwAD.unpack_dual(w).tangent, t([1.0, 1.0]))
        base = d * 2.0
        view = base[:1]
        base.mul_(3.0)  # the view's values and tangent change through its base
        assert tp.equal(fwAD.unpack_dual(view).tangent, t([6.0]))


def test_inplace_on_views_writes_the_base_tangent():
    # PyTorch: a view's tangent is the same view of its base's tangent.
    base = tp.zeros(2, 2)
    view = base.t()  # made before the level, from a tensor without a tangent
    with fwAD.dual_level():
        tan = t([[1.0, 2.0], [3.0, 4.0]])
        view.add_(fwAD.make_dual(tp.ones(2, 2), tan))
        assert tp.equal(fwAD.unpack_dual(base).tangent, tan.t())
        view[0].mul_(10.0)  # a view of the view: the base's tangent follows
        assert tp.equal(fwAD.unpack_dual(base).tangent, t([[10.0, 3.0], [20.0, 4.0]]))
        assert tp.equal(fwAD.unpack_dual(view).tangent, t([[10.0, 20.0], [3.0, 4.0]]))
        # Written from values without a tangent: that region's tangent is zero, the rest is kept.
        base[1] = 5.0
        assert tp.equal(fwAD.unpack_dual(view).tangent, t([[10.0, 0.0], [3.0, 0.0]]))


def test_make_dual_and_unpack_dual_give_no_forward_views():
    foo, bar = t([1.0, 2.0]), t([1.0, 1.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        dual.narrow(0, 0, 1).mul_(2)
        assert tp.equal(fwAD.unpack_dual(dual).tangent, t([2.0, 1.0]))
        assert fwAD.unpack_dual(foo).tangent is None  # its values changed, it has no tangent
        assert tp.equal(foo, t([2.0, 2.0]))
        dual *= 2  # the user's tangent is written in place, as PyTorch's in-place ops do
        assert tp.equal(bar, t([4.0, 2.0])) and fwAD.unpack_dual(dual).tangent is bar
        primal, tangent = fwAD.unpack_dual(dual)
        primal *= 2  # the primal view: the dual's tangent stays
        assert tp.equal(fwAD.unpack_dual(dual).tangent, t([4.0, 2.0]))
        tangent *= 0.5  # the tangent given out is the dual's
        assert tp.equal(fwAD.unpack_dual(dual).tangent, t([2.0, 1.0]))
        other = tp.zeros(2)
        other.detach().add_(dual)  # `detach` gives no forward view either
        assert fwAD.unpack_dual(other).tangent is None and tp.equal(other, t([8.0, 8.0]))


def test_errors():
    with pytest.raises(RuntimeError, match="dual_level"):
        fwAD.make_dual(t([1.0]), t([1.0]))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(t([1.0]), t([1.0, 2.0]))
        # A tangent of another floating dtype is accepted, as in PyTorch (tapeflow casts it to the primal's).
        d = fwAD.make_dual(t([1.0]), tp.tensor([3.0], dtype=tp.float32))
        assert fwAD.unpack_dual(d * 2).tangent.tolist() == [6.0]
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(t([1.0]), tp.tensor([1]))
        with pytest.raises(RuntimeError, match="Nested"):
            with fwAD.dual_level():
                pass


def test_forward_ad_coexists_with_reverse_mode():
    x = t([0.5, 1.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t([1.0, 0.0]))
        y = (d.exp() * d).sum()
        tangent = fwAD.unpack_dual(y).tangent
    y.backward()
    np.testing.assert_allclose(tangent.item(), np.exp(0.5) * 1.5)
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]) * (1 + np.array([0.5, 1.0])))


def test_custom_function_tangents():
    class Identity(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, tx):
            return tx.view_as(tx)  # the output is the input as is: its tangent is a view of the input's

    class NoJvp(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    class Cube(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)  # what jvp reads back as ctx.saved_tensors
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

        @staticmethod
        def jvp(ctx, tx):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * tx

    with fwAD.dual_level():
        d = fwAD.make_dual(t([2.0]), t([1.0]))
        assert fwAD.unpack_dual(Identity.apply(d)).tangent.item() == 1.0
        assert fwAD.unpack_dual(Cube.apply(d)).tangent.item() == 12.0
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            NoJvp.apply(d)


def test_igamma_has_no_forward_derivative():
    """PyTorch gives igamma/igammac no forward derivative: a tangent reaching them raises NotImplementedError
    (a tangent that silently left out the first argument's derivative would be wrong)."""
    import tapeflow.autograd.forward_ad as fwAD

    x = tp.tensor([1.5, 2.0, 3.0], dtype=tp.float64)
    for fn in (tp.igamma, tp.igammac):
        with fwAD.dual_level():
            d = fwAD.make_dual(x, tp.ones(3, dtype=tp.float64))
            for args in ((d, d), (x, d), (d, x)):
                with pytest.raises(NotImplementedError, match="Trying to use forward AD with igamma"):
                    fn(*args)
            assert fwAD.unpack_dual(fn(x, x)).tangent is None


def test_custom_function_gets_a_view_of_its_base_tangent_for_a_view_input():
    """PyTorch: a custom Function's jvp receives, for an input that is a view of a dual tensor, the same view of
    that tensor's tangent; a jvp returning a view of anything else for a view output is refused."""
    seen = []

    class Narrow(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.narrow(0, 0, 2)

        @staticmethod
        def jvp(ctx, gx):
            seen.append(gx)
            return gx.narrow(0, 0, 2)

    class WrongBase(Narrow):
        @staticmethod
        def jvp(ctx, gx):
            out = gx.narrow(0, 0, 2).clone()
            return out.view_as(out)

    with fwAD.dual_level():
        dual = fwAD.make_dual(t([1.0, 2.0, 3.0, 4.0]), t([1.0, 2.0, 3.0, 4.0]))
        tangent = fwAD.unpack_dual(dual).tangent
        out = Narrow.apply(dual.view_as(dual))
        assert seen[0]._base is tangent
        assert tp.equal(fwAD.unpack_dual(out).tangent, t([1.0, 2.0]))
        with pytest.raises(RuntimeError, match="not returning a view of the same base as the given grad input"):
            WrongBase.apply(dual.view_as(dual))


def test_detach_in_place_drops_the_tangent():
    """As PyTorch: `detach()` and `detach_()` both leave a tensor without a forward gradient."""
    with fwAD.dual_level():
        dual = fwAD.make_dual(t([1.0, 2.0]), t([1.0, 1.0]))
        assert fwAD.unpack_dual(dual.detach() * 2).tangent is None
        d = dual * 1.0
        d.detach_()
        assert fwAD.unpack_dual(d).tangent is None and fwAD.unpack_dual(d * 2).tangent is None
        assert fwAD.unpack_dual(dual).tangent is not None
