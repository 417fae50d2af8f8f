"""float32 matrix products follow PyTorch's `float32_matmul_precision` on every execution path.

PyTorch computes float32 products in full float32 unless a program allows TensorFloat-32 (`"high"`,
`backends.cuda.matmul.allow_tf32 = True`) or bfloat16 (`"medium"`). JAX's default on GPUs is TensorFloat-32
(one bfloat16 pass on TPUs), so every op traces its products under the table's precision. A CPU computes
float32 in full whatever the setting, so these tests read the precision each product is traced under.
"""

import warnings

import jax
import jax._src.lax.lax as lax_impl
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
from tapeflow import _adaptive

try:
    import torch
except ImportError:
    torch = None


@pytest.fixture
def traced_precisions(monkeypatch):
    """The JAX matmul-precision setting in force at each matrix product traced from now on (caches cleared,
    so every program is traced again)."""
    seen = []
    dot_general = lax_impl.dot_general
    names = {jax.lax.Precision.HIGHEST: "float32", jax.lax.Precision.HIGH: "tensorfloat32",
             jax.lax.Precision.DEFAULT: "bfloat16"}

    def recording(lhs, rhs, dimension_numbers, precision=None, *args, **kwargs):
        # A product traced by an op reads the setting; one made by transposing another (reverse mode of a
        # JAX transform) carries that product's precision explicitly.
        if precision is None:
            seen.append(jax.config.jax_default_matmul_precision)
        else:
            seen.extend(names[p] for p in (precision if isinstance(precision, tuple) else (precision,)))
        return dot_general(lhs, rhs, dimension_numbers, precision, *args, **kwargs)

    _adaptive.wait_for_compiles()
    jax.clear_caches()
    monkeypatch.setattr(lax_impl, "dot_general", recording)
    yield seen
    _adaptive.wait_for_compiles()


def _model():
    tp.manual_seed(0)
    return tp.nn.Sequential(tp.nn.Linear(11, 7), tp.nn.Tanh(), tp.nn.Linear(7, 3))


def _x():
    return tp.tensor(np.random.default_rng(0).standard_normal((5, 11)), dtype=tp.float32)


def _op_by_op():
    with_adaptive = tp.is_adaptive_eager_enabled()
    tp.set_adaptive_eager(False)
    try:
        _model()(_x()).sum().backward()
    finally:
        tp.set_adaptive_eager(with_adaptive)


def _adaptive_segments():
    model, x = _model(), _x()
    for _ in range(4):  # a structure seen again is compiled into one program on the compiler thread
        model(x).sum().backward()
        _adaptive.wait_for_compiles()


def _compiled_step():
    model, x = _model(), _x()
    opt = tp.optim.SGD(model.parameters(), lr=0.1)

    @tp.compile
    def step(x):
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        return loss

    step(x).item()


def _to_jax_under_jit_and_grad():
    model = _model()
    f = tp.interop.to_jax(lambda x: model(x).sum())
    jax.jit(jax.grad(f))(jnp.ones((5, 11), jnp.float32)).block_until_ready()


def _double_backward():
    w = tp.randn(11, 7, requires_grad=True)
    (g,) = tp.autograd.grad((_x() @ w).tanh().sum(), w, create_graph=True)
    g.pow(2).sum().backward()


def _hessian():
    tp.autograd.functional.hessian(lambda w: (_x() @ w).tanh().sum(), tp.randn(11, 2))


def _forward_mode():
    import tapeflow.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        w = fwAD.make_dual(tp.randn(11, 7), tp.randn(11, 7))
        fwAD.unpack_dual((_x() @ w).tanh()).tangent.sum().item()


PATHS = [_op_by_op, _adaptive_segments, _compiled_step, _to_jax_under_jit_and_grad, _double_backward, _hessian,
         _forward_mode]


@pytest.mark.parametrize("path", PATHS, ids=lambda f: f.__name__.strip("_"))
def test_products_are_full_float32_by_default_on_every_path(path, traced_precisions):
    assert tp.get_float32_matmul_precision() == "highest"
    path()
    assert traced_precisions, "no matrix product was traced"
    assert set(traced_precisions) == {"float32"}


@pytest.mark.parametrize("path", [_op_by_op, _compiled_step, _to_jax_under_jit_and_grad],
                         ids=lambda f: f.__name__.strip("_"))
def test_allowing_tensorfloat32_recompiles_under_it(path, traced_precisions):
    path()  # compiled at full precision first: the setting must reach programs already compiled
    try:
        tp.set_float32_matmul_precision("high")
        del traced_precisions[:]
        path()
        assert traced_precisions and set(traced_precisions) == {"tensorfloat32"}
        tp.set_float32_matmul_precision("medium")
        del traced_precisions[:]
        path()
        assert traced_precisions and set(traced_precisions) == {"bfloat16"}
    finally:
        tp.set_float32_matmul_precision("highest")
    del traced_precisions[:]
    path()
    assert set(traced_precisions) == {"float32"}


def test_results_are_unchanged_on_this_device():
    x, w = _x(), tp.randn(11, 7)
    exact = x.double().numpy() @ w.double().numpy()
    np.testing.assert_allclose((x @ w).numpy(), exact, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not tp.cuda.is_available(), reason="needs a GPU (TensorFloat-32 is a GPU format)")
def test_gpu_products_are_float32_unless_tensorfloat32_is_allowed():
    a, b = tp.randn(512, 512, device="cuda"), tp.randn(512, 512, device="cuda")
    exact = a.cpu().double().numpy() @ b.cpu().double().numpy()

    def error():
        x = a @ b
        g = tp.autograd.grad((a.requires_grad_() @ b).sum(), a)[0]  # the backward's products too
        a.requires_grad_(False)
        g_exact = np.ones((512, 512)) @ b.cpu().double().numpy().T
        return max(np.abs(x.cpu().numpy() - exact).max() / np.abs(exact).max(),
                   np.abs(g.cpu().numpy() - g_exact).max() / np.abs(g_exact).max())

    assert error() < 2e-6  # float32 rounding (TensorFloat-32 gives ~3e-4)
    try:
        tp.backends.cuda.matmul.allow_tf32 = True
        assert error() > 2e-5
    finally:
        tp.backends.cuda.matmul.allow_tf32 = False
    assert error() < 2e-6


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("actions", [["tf32 on"], ["tf32 off"], ["medium"], ["high"], ["tf32 on", "medium"],
                                     ["high", "highest"], ["tf32 on", "tf32 off"], ["medium", "highest"]])
def test_allow_tf32_and_the_precision_are_one_setting_as_in_pytorch(actions):
    states = []
    for lib in (tp, torch):
        try:
            for action in actions:
                if action.startswith("tf32"):
                    lib.backends.cuda.matmul.allow_tf32 = action == "tf32 on"
                else:
                    lib.set_float32_matmul_precision(action)
            states.append((lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32))
        finally:
            lib.set_float32_matmul_precision("highest")
    assert states[0] == states[1]


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
def test_an_unknown_precision_warns_and_changes_nothing_as_in_pytorch():
    messages = []
    for lib in (tp, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_float32_matmul_precision("low")
        messages.append([str(w.message) for w in caught if issubclass(w.category, UserWarning)])
        assert lib.get_float32_matmul_precision() == "highest"
    assert len(messages[0]) == 1 and messages[1][0].startswith(messages[0][0])  # (PyTorch adds where in C++)
