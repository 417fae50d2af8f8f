"""Tiered compilation: ops run op by op under adaptive eager compile quickly first, fully once they repeat."""

import jax
import numpy as np
import pytest

import tapeflow as tp
import xla_ops
from tapeflow import _adaptive, _dispatch

pytestmark = pytest.mark.skipif(jax.default_backend() != "cpu", reason="the quick tier is the CPU compiler's")


def _compiled_signatures(fn) -> int:
    return fn._cache_size()


def test_an_op_signature_runs_at_the_quick_tier_then_compiles_fully(adaptive):
    x = tp.randn(7, 13, dtype=tp.float64)  # a signature no other test uses
    program = None
    for n in range(1, 9):  # a new structure each time (n multiplications): every segment replays op by op
        y = x
        for _ in range(n):
            y = y * 1.5
        y.sum().item()
        if program is None:
            program = xla_ops.mul._fwd_cache[()]
            key = (program, x._data.aval, _dispatch._scalar(1.5).aval)
            assert _adaptive._runs[key] >= 1 and program in _adaptive._quick
            before = _compiled_signatures(program)
    assert _adaptive._runs[key] == _adaptive.TIER_UP  # it stopped counting at the tier-up
    assert _compiled_signatures(program) == before + 1  # and the fully optimised program was compiled once


def test_a_structure_compiled_as_a_segment_program_is_not_tiered(adaptive):
    x = tp.randn(3, 17)
    w = tp.randn(17, 2, requires_grad=True)
    for _ in range(6):
        w.grad = None
        (x @ w).tanh().sum().backward()
        w.grad.sum().item()
        _adaptive.wait_for_compiles()
    before = dict(_adaptive._runs)
    for _ in range(3):
        w.grad = None
        (x @ w).tanh().sum().backward()
        w.grad.sum().item()
    assert _adaptive._runs == before  # each step ran as the segment's program: nothing ran op by op


OPS = {
    "tanh": lambda x, y: x.tanh(), "exp": lambda x, y: x.exp(), "log1p": lambda x, y: x.abs().log1p(),
    "sigmoid": lambda x, y: x.sigmoid(), "gelu": lambda x, y: tp.nn.functional.gelu(x),
    "gelu_tanh": lambda x, y: tp.nn.functional.gelu(x, approximate="tanh"), "lgamma": lambda x, y: x.abs().lgamma(),
    "erf": lambda x, y: x.erf(), "rsqrt": lambda x, y: x.abs().rsqrt(), "pow": lambda x, y: x.abs() ** y,
    "atan2": lambda x, y: tp.atan2(x, y), "softmax": lambda x, y: x.softmax(-1),
    "logsumexp": lambda x, y: x.logsumexp(-1), "matmul": lambda x, y: x @ y.T, "sin": lambda x, y: (x * 30).sin(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_the_quick_tier_computes_what_the_full_tier_does(adaptive, name, dtype):
    rng = np.random.default_rng(len(name))
    rows = 11 + len(name) + (dtype == "float64")  # a shape of this case's own: its first run is at the quick tier
    a = (rng.standard_normal((rows, 64)) * 4).astype(dtype)
    b = rng.standard_normal((rows, 64)).astype(dtype)
    x, y = tp.tensor(a, requires_grad=True), tp.tensor(b)
    quick = OPS[name](x, y)
    (gq,) = tp.autograd.grad(quick.sum(), x)  # the backward runs node by node: quick-tier VJPs
    with _adaptive.op_by_op():  # every op's program at full optimisation
        full = OPS[name](x, y)
        (gf,) = tp.autograd.grad(full.sum(), x)
    # The quick tier's elemental emitter evaluates some functions (tanh, atan, cbrt) with other polynomials, each
    # within a few ulps of the exact value: a saturated gelu's 1 - tanh(u)^2 can differ by ~1e-5 absolute.
    tol = {"float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(quick.detach().numpy(), full.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(gq.numpy(), gf.numpy(), rtol=tol, atol=tol)
