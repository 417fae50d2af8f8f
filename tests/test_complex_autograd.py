"""Complex autograd in PyTorch's convention (the conjugate Wirtinger derivative) on every path.

For a real loss `L` of a complex `z = x + iy`, PyTorch's `z.grad` is `dL/dx + i dL/dy`. The tape, `tp.func`,
`autograd.functional`, custom Functions and hooks under JAX transforms give that; `jax.grad` of `to_jax(f)`
gives JAX's own convention, its conjugate. Checked against finite differences (gradcheck through real and
imaginary parts, no PyTorch needed) and against PyTorch where it is installed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp

try:
    import torch
except ImportError:  # the oracle tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")

RNG = np.random.default_rng(7)


def _c(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


Z, W = _c(3, 3), _c(3, 3)
V = _c(3)
HERM = (lambda a: a @ a.conj().T + 3 * np.eye(3))(_c(3, 3))

# name -> f(m, a, b): `m` is tapeflow or torch, `a` and `b` complex (3, 3) tensors.
OPS = {
    "add": lambda m, a, b: a + 2 * b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "neg_conj": lambda m, a, b: -a.conj() * b,
    "exp": lambda m, a, b: a.exp(),
    "log": lambda m, a, b: a.log(),
    "sqrt": lambda m, a, b: a.sqrt(),
    "rsqrt": lambda m, a, b: a.rsqrt(),
    "reciprocal": lambda m, a, b: a.reciprocal(),
    "sin": lambda m, a, b: a.sin(),
    "cos": lambda m, a, b: a.cos(),
    "tan": lambda m, a, b: a.tan(),
    "tanh": lambda m, a, b: a.tanh(),
    "sinh": lambda m, a, b: a.sinh(),
    "cosh": lambda m, a, b: a.cosh(),
    # (the inverse functions: PyTorch's derivative of acosh is 1 / (sqrt(z + 1) sqrt(z - 1)), the principal
    # branch's, where 1 / sqrt(z^2 - 1) has the wrong sign for Re z < 0)
    "asin": lambda m, a, b: a.asin(),
    "acos": lambda m, a, b: a.acos(),
    "atan": lambda m, a, b: a.atan(),
    "asinh": lambda m, a, b: a.asinh(),
    "acosh": lambda m, a, b: a.acosh(),
    "atanh": lambda m, a, b: a.atanh(),
    "sigmoid": lambda m, a, b: a.sigmoid(),
    "square": lambda m, a, b: a.square(),
    "pow_scalar": lambda m, a, b: a ** 3,
    "pow_tensor": lambda m, a, b: a ** (b * 0.3),
    "abs": lambda m, a, b: a.abs(),
    "angle": lambda m, a, b: a.angle(),
    "sgn": lambda m, a, b: a.sgn(),
    "real_imag": lambda m, a, b: a.real * b.imag,
    "view_as_real": lambda m, a, b: m.view_as_real(a * b),
    "view_as_complex": lambda m, a, b: m.view_as_complex(m.view_as_real(a).flip(-1).contiguous()),
    "complex": lambda m, a, b: m.complex(a.real, b.imag),
    "polar": lambda m, a, b: m.polar(a.abs(), b.angle()),
    "sum_mean": lambda m, a, b: a.sum(0) * b.mean(),
    "prod": lambda m, a, b: a.prod(1),
    "cumsum": lambda m, a, b: a.cumsum(1),
    "cumprod": lambda m, a, b: a.cumprod(0),
    "matmul": lambda m, a, b: a @ b,
    "mm": lambda m, a, b: m.mm(a, b.T),
    "mv": lambda m, a, b: m.mv(a, b[0]),
    "dot": lambda m, a, b: m.dot(a[0], b[1]),
    "vdot": lambda m, a, b: m.vdot(a[0], b[1]),
    "outer": lambda m, a, b: m.outer(a[0], b[1]),
    "einsum": lambda m, a, b: m.einsum("ij,jk->ik", a, b),
    "norm": lambda m, a, b: a.norm() * b.norm(dim=1),
    "vector_norm_p3": lambda m, a, b: m.linalg.vector_norm(a, ord=3, dim=0),
    "vector_norm_inf": lambda m, a, b: m.linalg.vector_norm(a + b, ord=float("inf")),
    "shape_ops": lambda m, a, b: m.cat([a.T, b.flip(0)], 1).reshape(9, 2)[1:7:2],
    "index": lambda m, a, b: a[m.tensor([2, 0])] * b[:, 1],
    "where": lambda m, a, b: m.where(a.real > 0, a, b),
    "stack": lambda m, a, b: m.stack([a, b * 1j]),
    "inv": lambda m, a, b: m.linalg.inv(a),
    "det": lambda m, a, b: m.linalg.det(a),
    "solve": lambda m, a, b: m.linalg.solve(a, b),
    "trace": lambda m, a, b: m.trace(a @ b),
    "var": lambda m, a, b: a.var(0),
    "softmax_of_abs": lambda m, a, b: m.softmax(a.abs(), 1),
}


def _loss(m, out, weight):
    """A real loss that reads every real and imaginary part of `out` with distinct weights."""
    if out.is_complex():
        w = m.tensor(weight[: out.numel()].reshape(tuple(out.shape)))
        return (m.view_as_real(out) * m.view_as_real(w)).sum()
    w = m.tensor(weight.real[: out.numel()].reshape(tuple(out.shape)))
    return (out * w).sum()


WEIGHT = _c(32)


def _run(m, name, requires=True):
    a = m.tensor(Z, requires_grad=requires)
    b = m.tensor(W, requires_grad=requires)
    return a, b, _loss(m, OPS[name](m, a, b), WEIGHT)


@needs_torch
@pytest.mark.parametrize("name", sorted(OPS))
def test_tape_gradients_are_pytorchs(name):
    a, b, loss = _run(tp, name)
    loss.backward()
    ta, tb, tloss = _run(torch, name)
    tloss.backward()
    np.testing.assert_allclose(float(loss), float(tloss), rtol=1e-10, atol=1e-12)
    for mine, theirs in ((a, ta), (b, tb)):
        if theirs.grad is None:
            assert mine.grad is None or not np.any(mine.grad.numpy())
        else:
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.resolve_conj().numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_and_gradgradcheck(name):
    """Finite differences of the real and imaginary parts: the backward, forward mode and double backward."""
    a = tp.tensor(Z, requires_grad=True)
    b = tp.tensor(W, requires_grad=True)
    fwd = name not in ("vector_norm_inf",)  # max's forward-mode tie rule is not needed here
    assert tp.autograd.gradcheck(lambda x, y: OPS[name](tp, x, y), (a, b), check_forward_ad=fwd)
    if name not in ("vector_norm_inf", "where", "sgn", "angle", "abs"):  # kinks at 0 are fine; nothing near 0
        assert tp.autograd.gradgradcheck(lambda x, y: OPS[name](tp, x, y), (a, b))


@needs_torch
@pytest.mark.parametrize("name", ["mul", "div", "exp", "abs", "sgn", "matmul", "norm", "view_as_real", "angle",
                                  "polar", "inv"])
def test_double_backward_is_pytorchs(name):
    def second(m):
        a, b, loss = _run(m, name)
        ga, gb = m.autograd.grad(loss, (a, b), create_graph=True, allow_unused=True, materialize_grads=True)
        inner = (ga * ga.conj()).real.sum() + (gb * m.tensor(WEIGHT[:9].reshape(3, 3))).imag.sum()
        return [g.detach().resolve_conj().numpy() for g in m.autograd.grad(inner, (a, b), allow_unused=True, materialize_grads=True)]

    for mine, theirs in zip(second(tp), second(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-7, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("name", ["mul", "exp", "abs", "matmul", "angle", "view_as_real", "solve", "norm"])
def test_functional_paths_agree_with_the_tape(name):
    ta, tb, tloss = _run(torch, name)
    tloss.backward()
    expected = ta.grad.numpy()

    def f(x, y):
        return _loss(tp, OPS[name](tp, x, y), WEIGHT)

    a, b = tp.tensor(Z), tp.tensor(W)
    np.testing.assert_allclose(tp.func.grad(f)(a, b).numpy(), expected, rtol=1e-8)
    _, pull = tp.func.vjp(f, a, b)
    np.testing.assert_allclose(pull(tp.tensor(1.0, dtype=tp.float64))[0].numpy(), expected, rtol=1e-8)
    _, g = tp.autograd.functional.vjp(f, (a, b))
    np.testing.assert_allclose(g[0].numpy(), expected, rtol=1e-8)
    np.testing.assert_allclose(tp.compile(tp.func.grad(f))(a, b).numpy(), expected, rtol=1e-8)
    # JAX's own transforms keep JAX's convention: the conjugate.
    jg = jax.grad(tp.interop.to_jax(f))(jnp.asarray(Z), jnp.asarray(W))
    np.testing.assert_allclose(np.conj(np.asarray(jg)), expected, rtol=1e-8)


@needs_torch
def test_vjp_of_a_complex_output_with_a_complex_cotangent():
    ct = _c(3, 3)
    _, pull = tp.func.vjp(lambda x: x * x.sin(), tp.tensor(Z))
    _, tpull = torch.func.vjp(lambda x: x * x.sin(), torch.tensor(Z))
    np.testing.assert_allclose(pull(tp.tensor(ct))[0].numpy(), tpull(torch.tensor(ct))[0].numpy(), rtol=1e-10)
    _, g = tp.autograd.functional.vjp(lambda x: x * x.sin(), tp.tensor(Z), tp.tensor(ct))
    _, tg = torch.autograd.functional.vjp(lambda x: x * x.sin(), torch.tensor(Z), torch.tensor(ct))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10)


@needs_torch
def test_forward_mode_is_pytorchs():
    t = _c(3, 3)
    f = lambda m: lambda x: (x * x.conj()).real + x.abs() * x.exp()  # noqa: E731
    _, mine = tp.func.jvp(f(tp), (tp.tensor(Z),), (tp.tensor(t),))
    _, theirs = torch.func.jvp(f(torch), (torch.tensor(Z),), (torch.tensor(t),))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10)


def _square_function(m):
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):  # PyTorch's convention: the conjugate derivative
            (x,) = ctx.saved_tensors
            return g * 2 * x.conj()

    return Square


@needs_torch
def test_custom_function_and_hooks_on_every_path():
    def f(m):
        square = _square_function(m)

        def g(x):
            h = square.apply(x) * x.sin()
            h.register_hook(lambda gr: gr * (1 + 2j))
            return (h.abs() + h.imag).sum()
        return g

    tz = torch.tensor(Z, requires_grad=True)
    f(torch)(tz).backward()
    z = tp.tensor(Z, requires_grad=True)
    f(tp)(z).backward()
    np.testing.assert_allclose(z.grad.numpy(), tz.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(tp.func.grad(f(tp))(tp.tensor(Z)).numpy(), tz.grad.numpy(), rtol=1e-10)


def test_a_backward_in_the_wrong_convention_fails_gradcheck():
    class JaxConvention(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x  # not conjugated: JAX's convention, wrong here

    z = tp.tensor(Z, requires_grad=True)
    assert tp.autograd.gradcheck(_square_function(tp).apply, (z,))
    # (PyTorch's wording: reverse mode is checked on each part of a complex output, the imaginary one first)
    with pytest.raises(tp.autograd.GradcheckError, match="^While considering the imaginary part of complex outputs "
                       "only, Jacobian mismatch for output 0 with respect to input 0"):
        tp.autograd.gradcheck(JaxConvention.apply, (z,))


def test_parts_are_views_that_write_through():
    z = tp.tensor(Z.copy())
    z.real.mul_(2)
    z.imag[0] = 5.0
    tp.view_as_real(z)[1, :, 1] = -1.0
    expected = Z.copy()
    expected.real *= 2
    expected.imag[0] = 5.0
    expected.imag[1] = -1.0
    np.testing.assert_array_equal(z.numpy(), expected)
    r = tp.tensor(np.arange(6.0).reshape(3, 2))
    c = tp.view_as_complex(r)
    c.mul_(1j)
    np.testing.assert_array_equal(r.numpy(), [[-1.0, 0.0], [-3.0, 2.0], [-5.0, 4.0]])
    assert tp.real(r) is r


@needs_torch
def test_gradient_through_a_write_into_a_part():
    def run(m):
        x = m.tensor(Z, requires_grad=True)
        h = x * 2
        h.imag.mul_(3)
        h.real[0] = 0.5
        (h * h.conj()).real.sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(tp), run(torch), rtol=1e-12)


def test_hermitian_eigh_gradient():
    a = tp.tensor(HERM, requires_grad=True)  # gradients are Hermitian: check along Hermitian perturbations
    assert tp.autograd.gradcheck(lambda x: tp.linalg.eigvalsh(x + x.mH), (a,))


def _message(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        return type(e).__name__, str(e).replace("tapeflow", "torch")
    return None


BAD = [
    lambda m: m.ones(3).imag,
    lambda m: m.view_as_real(m.ones(3)),
    lambda m: m.view_as_complex(m.ones(3)),
    lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int64)),
    lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.vdot(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.vdot(m.ones(2, 2), m.ones(2, 2)),
    lambda m: m.func.jacrev(lambda a: a * 2)(m.tensor([1 + 2j])),
    lambda m: m.func.jacfwd(lambda a: a * 2)(m.tensor([1 + 2j])),
    lambda m: m.func.jacrev(lambda a: (a, a * 1j))(m.tensor([1.0, 2.0])),
    lambda m: m.func.grad(lambda a: (a * a).sum())(m.tensor([1 + 2j])),
    lambda m: m.autograd.functional.jacobian(lambda a: a * a, m.tensor([1 + 2j])),
    lambda m: (m.tensor([1 + 2j], requires_grad=True) * 2).sum().backward(),
]


@needs_torch
@pytest.mark.parametrize("i", range(len(BAD)))
def test_errors_are_pytorchs(i):
    mine, theirs = _message(lambda: BAD[i](tp)), _message(lambda: BAD[i](torch))
    assert theirs is not None and mine is not None
    assert mine[0] == theirs[0]
    assert mine[1].split("\n")[0] == theirs[1].split("\n")[0]


def test_values_of_the_new_functions():
    z = tp.tensor([3 + 4j, 0j, -1 + 0j])
    np.testing.assert_allclose(tp.sgn(z).numpy(), [0.6 + 0.8j, 0, -1])
    np.testing.assert_allclose(tp.angle(z).numpy(), np.angle(z.numpy()), rtol=1e-6)
    assert tp.angle(tp.tensor([-1, 2])).dtype == tp.float32
    assert tp.isreal(z).tolist() == [False, True, True]
    assert tp.isreal(tp.ones(2)).tolist() == [True, True]
    assert tp.abs(z).dtype == tp.float32 and z.real.dtype == tp.float32
    assert tp.complex(tp.ones(2, dtype=tp.float64), tp.zeros(2, dtype=tp.float64)).dtype == tp.complex128
    assert not z.is_conj() and z.is_complex()


def test_complex_samplers_draw_both_parts():
    u = tp.empty(4000, dtype=tp.complex64).uniform_(2, 3)
    assert 2 <= float(u.real.min()) and float(u.real.max()) < 3 and 2 <= float(u.imag.min()) and float(u.imag.max()) < 3
    n = tp.empty(20000, dtype=tp.complex128).normal_(1.0, 2.0)
    assert abs(float(n.real.mean()) - 1) < 0.05 and abs(float(n.imag.mean()) - 1) < 0.05
    assert abs(float(n.real.std()) - 2 ** 0.5) < 0.05  # as PyTorch: each part has variance std**2 / 2
    assert tp.rand(3, dtype=tp.complex64).dtype == tp.complex64


@needs_torch
def test_complex_linear_layer_is_pytorchs():
    w, b, x = _c(3, 2), _c(3), _c(4, 2)

    def run(m):
        lin = m.nn.Linear(2, 3, dtype=m.complex128)
        with m.no_grad():
            lin.weight.copy_(m.tensor(w))
            lin.bias.copy_(m.tensor(b))
        out = lin(m.tensor(x))
        (out.abs() ** 2).sum().backward()
        return out.detach().numpy(), lin.weight.grad.resolve_conj().numpy() if m is torch else lin.weight.grad.numpy()

    for mine, theirs in zip(run(tp), run(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


def test_pow_of_a_real_base_with_a_complex_exponent_differentiates_through_the_complex_log():
    """`pow(x, y)` with a negative real base and a complex exponent: the exponent's gradient uses the base's
    complex logarithm (log(-1) = i pi), as PyTorch's, not NaN; a zero base with a real, non-negative complex
    exponent gets PyTorch's zero."""
    x = tp.tensor([-1.0, -1.0, 0.0, 2.0], dtype=tp.float64)
    y = tp.tensor([0.5 + 0.25j, -1.0 + 0j, 2.0 + 0j, 1.0 + 1j], dtype=tp.complex128, requires_grad=True)
    out = tp.pow(x, y)
    g, = tp.autograd.grad(out.real.sum(), y)
    log_x = np.log(np.array([-1.0, -1.0, 1.0, 2.0], np.complex128))
    want = np.conj(np.asarray(out.detach().tolist()) * log_x)  # PyTorch's conjugate convention
    want[2] = 0
    np.testing.assert_allclose(np.asarray(g.tolist()), want, rtol=1e-12, atol=1e-12)
    # A number as the base (`-1 ** y`, PyTorch's PowBackward2) follows the same rule.
    out = tp.pow(-1, y)
    assert out.grad_fn.name() == "PowBackward2"
    g, = tp.autograd.grad(out.real.sum(), y)
    want = np.conj(np.asarray(out.detach().tolist()) * np.log(np.complex128(-1)))
    np.testing.assert_allclose(np.asarray(g.tolist()), want, rtol=1e-12, atol=1e-12)
    assert tp.autograd.gradcheck(lambda e: tp.pow(-2.5, e), (y.detach().requires_grad_(),))
