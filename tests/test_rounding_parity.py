"""PyTorch's numbers to the last bit where its CPU kernels define them: correctly rounded division on every
execution path, `linspace` value for value, and `affine_grid` / `grid_sample` at the pixel centres where
bilinear interpolation has a kink (a grid one unit in the last place off lands on the other side of it)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn.functional as F
from tapeflow import _adaptive
from tapeflow.interop import to_jax

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - the oracle is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
cpu_only = pytest.mark.skipif(jax.default_backend() != "cpu", reason="the float64 quotient is formed on CPU only")

_RNG = np.random.default_rng(7)
X = _RNG.standard_normal((16, 33)).astype(np.float32) * 40
ROWS = (_RNG.random(16).astype(np.float32) + 0.5) * 3
V = _RNG.random((16, 33)).astype(np.float32) + 0.25

# Each case: a function of tapeflow tensors and the float32 quotient NumPy (one IEEE division) gives.
DIVISIONS = {
    "by a Python number": (lambda x, r, v: x / 28, X / np.float32(28)),
    "by a broadcast row": (lambda x, r, v: x / r[:, None], X / ROWS[:, None]),
    "by a square root": (lambda x, r, v: x / v.sqrt(), X / np.sqrt(V)),
    "by a 0-d tensor": (lambda x, r, v: x / r[3], X / ROWS[3]),
}


def _exact(got, want, what):
    got = np.asarray(got)
    assert got.dtype == want.dtype, what
    bad = np.flatnonzero(got.ravel() != want.ravel())
    assert bad.size == 0, f"{what}: {bad.size} values differ, e.g. {got.ravel()[bad[:3]]} vs {want.ravel()[bad[:3]]}"


@cpu_only
@pytest.mark.parametrize("case", sorted(DIVISIONS))
def test_division_is_correctly_rounded_on_every_path(case):
    f, want = DIVISIONS[case]
    args = [tp.tensor(a) for a in (X, ROWS, V)]
    was = tp.is_adaptive_eager_enabled()
    try:
        tp.set_adaptive_eager(False)
        _exact(f(*args).numpy(), want, f"{case}: op by op")
        tp.set_adaptive_eager(True)
        for i in range(4):  # the structure compiles on its second sighting and runs as one program from then on
            out = f(*args).numpy()
            _adaptive.wait_for_compiles()
            _exact(out, want, f"{case}: adaptive eager, step {i}")
    finally:
        tp.set_adaptive_eager(was)
    compiled = tp.compile(f)
    for i in range(2):
        _exact(compiled(*args).numpy(), want, f"{case}: tp.compile, call {i}")
    _exact(jax.jit(to_jax(f))(*map(jnp.asarray, (X, ROWS, V))), want, f"{case}: jax.jit(to_jax(f))")


@cpu_only
def test_the_gradients_of_division_are_pytorchs_formulas_rounded_once():
    x, y = tp.tensor(X, requires_grad=True), tp.tensor(V, requires_grad=True)
    g = np.full_like(X, 0.37)
    (x / y).backward(tp.tensor(g))
    _exact(x.grad.numpy(), g / V, "d/dx: g / y")
    _exact(y.grad.numpy(), -g * ((X / V) / V), "d/dy: -g * ((x / y) / y)")


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8"])
def test_linspace_gives_pytorchs_values(dtype):
    tdt, mine = getattr(torch, dtype), getattr(tp, dtype)
    for steps in (0, 1, 2, 7, 28, 40, 1001):
        for start, end in ((-1, 1), (0.1, 0.7), (-2.5, 7.1), (10, -3), (2.7, -3.9), (0, 255)):
            if dtype == "uint8" and min(start, end) < 0:
                continue
            want = torch.linspace(start, end, steps, dtype=tdt).float().numpy()
            got = tp.linspace(start, end, steps, dtype=mine).float().numpy()
            _exact(got, want, f"linspace({start}, {end}, {steps}, {dtype})")


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_logspace_gives_pytorchs_values(dtype):
    """Exponents stepped from both ends in double (so a NaN or infinite end gives PyTorch's NaNs, not a finite
    last point), `base ** e` in double, rounded as PyTorch rounds to the dtype."""
    tdt, mine = getattr(torch, dtype), getattr(tp, dtype)
    nan, inf = float("nan"), float("inf")
    ends = [(0, 1), (1.5, -2), (-3.3, 7.1), (6.02, -15.78), (17.36, 17.96), (nan, 1), (0, nan), (inf, 1), (-inf, 1),
            (1, -inf), (-inf, inf)]
    for steps in (1, 2, 3, 4, 57, 267):
        for start, end in ends:
            for base in (10.0, 2.0, 0.5):
                want = torch.logspace(start, end, steps, base=base, dtype=tdt).float().numpy()
                got = tp.logspace(start, end, steps, base=base, dtype=mine)
                assert got.dtype == mine
                np.testing.assert_array_equal(got.float().numpy(), want,  # (NaNs where PyTorch's are)
                                              err_msg=f"logspace({start}, {end}, {steps}, base={base}, {dtype})")


@needs_torch
def test_linspace_refuses_what_pytorch_refuses():
    for dtype, value in (("uint8", 300), ("int8", 200), ("float16", 1e6), ("int32", 3e9)):
        with pytest.raises(RuntimeError) as theirs:
            torch.linspace(0, value, 3, dtype=getattr(torch, dtype))
        with pytest.raises(RuntimeError) as mine:
            tp.linspace(0, value, 3, dtype=getattr(tp, dtype))
        assert str(mine.value) == str(theirs.value)
    with pytest.raises(NotImplementedError, match="linspace_cpu"):
        tp.linspace(0, 1, 3, dtype=tp.bool)
    with pytest.raises(RuntimeError, match="0-dimensional"):
        tp.linspace(tp.zeros(2), 1, 3)
    assert tp.linspace(tp.tensor(0.5), tp.tensor(1.5), 3).tolist() == [0.5, 1.0, 1.5]


@needs_torch
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 1, 28, 28), (2, 3, 5, 7), (2, 1, 2, 3, 4)])
def test_grid_sample_at_pixel_centres_gives_pytorchs_gradients(size, align_corners):
    k = len(size) - 2
    theta = np.zeros((size[0], k, k + 1), np.float32)
    theta[:, np.arange(k), np.arange(k)] = 1.0  # the identity: every sample on a pixel centre, a kink
    theta[1, 0, 1:] = 0.1 * np.arange(k)
    image = (np.linspace(-2, 3, int(np.prod(size)), dtype=np.float32) ** 2).reshape(size)

    def run(lib, fn):
        t = lib.tensor(theta, requires_grad=True)
        x = lib.tensor(image, requires_grad=True)
        grid = fn.affine_grid(t, size, align_corners=align_corners)
        out = fn.grid_sample(x, grid, align_corners=align_corners)
        (out.sum() + (out * out).sum()).backward()
        return grid.detach().numpy(), out.detach().numpy(), x.grad.numpy(), t.grad.numpy()

    mine, theirs = run(tp, F), run(torch, TF)
    _exact(mine[0][0], theirs[0][0], "affine_grid of the identity")  # (the other's matrix product may round apart)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-6, atol=1e-7, err_msg="affine_grid")
    for got, want, what in zip(mine[1:], theirs[1:], ("output", "input gradient", "theta gradient")):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-4, err_msg=what)


def test_nearest_grid_sample_gives_the_grid_a_zero_gradient():
    grid = tp.tensor(np.random.default_rng(0).uniform(-1, 1, (1, 3, 4, 2)).astype(np.float32), requires_grad=True)
    image = tp.randn(1, 2, 5, 6, requires_grad=True)
    out = F.grid_sample(image, grid, mode="nearest", align_corners=False)
    g_grid, g_image = tp.autograd.grad(out.sum(), (grid, image))
    assert g_grid.shape == grid.shape and not g_grid.any()
    assert g_image.sum().item() == out.numel()  # each output reads one pixel, inside the image here


# -- float16 / bfloat16: computed in float32, rounded once per op, as PyTorch's CPU kernels ----------------------
_H = np.random.default_rng(3)
HX, HY, HB = (_H.standard_normal(s).astype(np.float32) for s in ((8, 64), (64, 32), (32,)))
HP, HV = _H.random((8, 64)).astype(np.float32) + 0.5, _H.standard_normal(200).astype(np.float32)

# name -> f(L, F, cast): the op on half-precision copies of the arrays above (`cast(array)`).
HALF_OPS = {
    "mm": lambda L, F, c: c(HX) @ c(HY),
    "addmm": lambda L, F, c: L.addmm(c(HB), c(HX), c(HY)),
    "addmm_scaled": lambda L, F, c: L.addmm(c(HB), c(HX), c(HY), beta=0.5, alpha=2.0),
    "linear": lambda L, F, c: F.linear(c(HX), c(HY.T.copy()), c(HB)),
    "baddbmm": lambda L, F, c: L.baddbmm(c(HB), c(HX).view(2, 4, 64), c(HY).expand(2, 64, 32)),
    "batched matmul": lambda L, F, c: c(HX).view(2, 4, 64) @ c(HY),
    "sum": lambda L, F, c: c(HV).sum(), "mean": lambda L, F, c: c(HX).mean(1),
    "cumsum": lambda L, F, c: c(HV).cumsum(0), "cumprod": lambda L, F, c: c(HP).cumprod(1),
    "var": lambda L, F, c: c(HX).var(1), "norm": lambda L, F, c: c(HX).norm(dim=1),
    "softmax": lambda L, F, c: c(HX).softmax(1), "layer_norm": lambda L, F, c: F.layer_norm(c(HX), (64,)),
    "group_norm": lambda L, F, c: F.group_norm(c(HX).view(8, 8, 8), 4),
    "gelu": lambda L, F, c: F.gelu(c(HX)), "gelu_tanh": lambda L, F, c: F.gelu(c(HX), approximate="tanh"),
    "silu": lambda L, F, c: F.silu(c(HX)), "sigmoid": lambda L, F, c: c(HX).sigmoid(),
    "tanh": lambda L, F, c: c(HX).tanh(), "log": lambda L, F, c: c(HP).log(),
    "times a number": lambda L, F, c: c(HX) * 0.1, "add with alpha": lambda L, F, c: L.sub(c(HX), c(HP), alpha=0.3),
    "addcmul": lambda L, F, c: L.addcmul(c(HX), c(HX), c(HP), value=0.3),
    "lerp": lambda L, F, c: L.lerp(c(HX), c(HP), 0.3),
    "cross_entropy": lambda L, F, c: F.cross_entropy(c(HX), L.arange(8)),
    "normalize": lambda L, F, c: F.normalize(c(HX), dim=1),
}


@needs_torch
@cpu_only
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", list(HALF_OPS))
def test_half_precision_ops_round_as_pytorch(name, dtype):
    """An op on float16/bfloat16 tensors is computed in float32 and rounded once to the half type, as PyTorch's
    CPU kernels compute it; XLA alone rounds some intermediate results and not others (`x * 0.1`, `sigmoid`,
    `addmm`, a cumulative sum drifting). `add`/`sub` take `alpha` in the half type, as PyTorch's kernels do."""
    def run(L, F):
        dt = getattr(L, dtype)
        return np.asarray(HALF_OPS[name](L, F, lambda a: L.tensor(a).to(dt)).float().tolist(), np.float32)

    mine, theirs = run(tp, F), run(torch, TF)
    # `add`'s kernel fuses alpha's multiply and the add in one rounding, which decides a rare tie differently
    assert np.mean(mine == theirs) >= (0.99 if name == "add with alpha" else 1.0), (mine - theirs)
