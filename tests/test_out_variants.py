"""`out=`: results written into a given tensor, as PyTorch's out variants (values, dtype, shape, identity, version,
autograd refusal, resizing, casting rules), against PyTorch where it is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeflow as tp
from tapeflow import _out

try:
    import torch
except ImportError:  # the oracle parts skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")

_RNG = np.random.default_rng(7)
A = _RNG.standard_normal((3, 4)).astype(np.float32)
B = _RNG.standard_normal((3, 4)).astype(np.float32)
SQ = (_RNG.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
IDX = np.array([[0, 2, 1, 0], [2, 1, 0, 1]])
POS = np.abs(A) + 0.5


def _cases(L):
    """name -> (call taking `out=`, the outputs to pass) for library `L` (tapeflow or torch)."""
    t = L.tensor
    a, b, sq, pos = t(A), t(B), t(SQ), t(POS)
    f32 = lambda: L.empty(0)  # noqa: E731
    f64 = lambda: L.empty(0, dtype=L.float64)  # noqa: E731
    i64 = lambda: L.empty(0, dtype=L.int64)  # noqa: E731
    b8 = lambda: L.empty(0, dtype=L.bool)  # noqa: E731
    return {
        "sin": (lambda out: L.sin(a, out=out), f32),
        "exp float64 out (cast)": (lambda out: L.exp(a, out=out), f64),
        "sqrt": (lambda out: L.sqrt(pos, out=out), f32),
        "add alpha": (lambda out: L.add(a, b, alpha=2, out=out), f32),
        "add int into float": (lambda out: L.add(t([1, 2]), 3, out=out), f32),
        "sub": (lambda out: L.sub(a, 1.5, out=out), f32),
        "mul": (lambda out: L.mul(a, b, out=out), f32),
        "div floor": (lambda out: L.div(a, b, rounding_mode="floor", out=out), f32),
        "pow": (lambda out: L.pow(pos, 1.5, out=out), f32),
        "maximum": (lambda out: L.maximum(a, b, out=out), f32),
        "clamp": (lambda out: L.clamp(a, -0.5, 0.5, out=out), f32),
        "where": (lambda out: L.where(a > 0, a, b, out=out), f32),
        "eq into bool": (lambda out: L.eq(a, b, out=out), b8),
        "gt into float": (lambda out: L.gt(a, b, out=out), f32),
        "logical_and": (lambda out: L.logical_and(a > 0, b > 0, out=out), b8),
        "sum dim": (lambda out: L.sum(a, 1, out=out), f32),
        "sum keepdim float64": (lambda out: L.sum(a, 0, keepdim=True, out=out), f64),
        "mean dim": (lambda out: L.mean(a, 0, out=out), f32),
        "prod dim": (lambda out: L.prod(a, 1, out=out), f32),
        "std dim": (lambda out: L.std(a, 1, out=out), f32),
        "logsumexp": (lambda out: L.logsumexp(a, 1, out=out), f32),
        "amax": (lambda out: L.amax(a, 0, out=out), f32),
        "argmax": (lambda out: L.argmax(a, 1, out=out), i64),
        "cumsum": (lambda out: L.cumsum(a, 1, out=out), f32),
        "softmax": (lambda out: L.softmax(a, 1, out=out), f32),
        "cat": (lambda out: L.cat([a, b], 0, out=out), f32),
        "stack": (lambda out: L.stack([a, b], 1, out=out), f32),
        "matmul": (lambda out: L.matmul(a, b.T, out=out), f32),
        "mm": (lambda out: L.mm(a.T, b, out=out), f32),
        "bmm": (lambda out: L.bmm(a[None], b.T[None], out=out), f32),
        "addmm": (lambda out: L.addmm(sq, a[:, :3], sq, beta=0.5, out=out), f32),
        "outer": (lambda out: L.outer(a[0], b[1], out=out), f32),
        "gather": (lambda out: L.gather(a[:2], 1, t(IDX), out=out), f32),
        "index_select": (lambda out: L.index_select(a, 1, t([3, 0]), out=out), f32),
        "masked_select": (lambda out: L.masked_select(a, a > 0, out=out), f32),
        "tril": (lambda out: L.tril(a, out=out), f32),
        "nonzero": (lambda out: L.nonzero(a > 0, out=out), i64),
        "max dim": (lambda out: L.max(a, 1, out=out), lambda: (f32(), i64())),
        "min dim keepdim": (lambda out: L.min(a, 0, keepdim=True, out=out), lambda: (f32(), i64())),
        "max all": (lambda out: L.max(a, out=out), f32),
        "sort": (lambda out: L.sort(a, 1, descending=True, out=out), lambda: (f32(), i64())),
        "topk": (lambda out: L.topk(a, 2, out=out), lambda: (f32(), i64())),
        "kthvalue": (lambda out: L.kthvalue(a, 2, 1, out=out), lambda: (f32(), i64())),
        "cummax": (lambda out: L.cummax(a, 1, out=out), lambda: (f32(), i64())),
        "linalg.inv": (lambda out: L.linalg.inv(sq, out=out), f32),
        "linalg.solve": (lambda out: L.linalg.solve(sq, a[:, :2], out=out), f32),
        "linalg.vector_norm": (lambda out: L.linalg.vector_norm(a, 2, 1, out=out), f32),
        "linalg.qr": (lambda out: L.linalg.qr(sq, out=out), lambda: (f32(), f32())),
        "special.expit": (lambda out: L.special.expit(a, out=out), f32),
        "special.xlogy": (lambda out: L.special.xlogy(pos, pos, out=out), f32),
        "fft.rfft": (lambda out: L.fft.rfft(a, out=out), lambda: L.empty(0, dtype=L.complex64)),
        "zeros": (lambda out: L.zeros(2, 3, out=out), f32),
        "ones float64": (lambda out: L.ones(2, out=out), f64),
        "arange into float": (lambda out: L.arange(5, out=out), f32),
        "arange into int": (lambda out: L.arange(0, 9, 2, out=out), i64),
        "full": (lambda out: L.full((2, 2), 1.5, out=out), f64),
        "linspace": (lambda out: L.linspace(0, 1, 5, out=out), f32),
        "eye": (lambda out: L.eye(3, out=out), f32),
    }


def _np(x):
    return x.detach().numpy()


def _flat(x):
    return tuple(x) if isinstance(x, tuple) else (x,)


@needs_torch
@pytest.mark.parametrize("name", list(_cases(tp)))
def test_out_gives_pytorchs_values_dtype_and_shape(name):
    results = []
    for L in (tp, torch):
        fn, make = _cases(L)[name]
        out = make()
        res = fn(out)
        assert all(r is o for r, o in zip(_flat(res), _flat(out))), "the result is the out tensor(s) itself"
        results.append(_flat(res))
    for mine, theirs in zip(*results):
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(_np(mine), _np(theirs), rtol=2e-5, atol=1e-6)


def test_out_writes_in_place_bumps_the_version_and_reaches_views():
    base = tp.zeros(4)
    view = base[::2]
    before = base._version
    r = tp.add(tp.ones(2), 1, out=view)
    assert r is view
    np.testing.assert_array_equal(base.numpy(), [2, 0, 2, 0])
    assert base._version > before
    x = tp.ones(3)
    assert tp.add(x, x, out=x) is x  # the output may alias an input
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])


def test_out_refuses_autograd_like_pytorch():
    a = tp.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"mul\(\): functions with out=\.\.\. arguments don't support automatic "
                                           "differentiation, but one of the arguments requires grad"):
        tp.mul(a, a, out=tp.empty(2))
    with pytest.raises(RuntimeError, match="out="):
        tp.cat([tp.ones(1), a], out=tp.empty(3))  # (an input inside a list)
    leaf = tp.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out="):
        tp.mul(tp.ones(2), tp.ones(2), out=leaf)  # the output itself requires grad
    with tp.no_grad():
        tp.mul(a, a, out=leaf)  # (no graph is recorded: allowed)
    np.testing.assert_array_equal(leaf.detach().numpy(), [1, 1])
    assert leaf.grad_fn is None and leaf.is_leaf


def test_out_of_the_wrong_shape_is_resized_with_pytorchs_warning():
    out = tp.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.sin(tp.zeros(3), out=out)  # no elements: resized silently
    assert tuple(out.shape) == (3,)
    out = tp.empty(2)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[2\], "
                                         r"which does not match the required output shape \[3\]"):
        tp.sin(tp.zeros(3), out=out)
    assert tuple(out.shape) == (3,)


def test_out_dtype_rules():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tp.add(tp.ones(2), 1, out=tp.empty(2, dtype=tp.int64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        tp.mm(tp.ones(2, 2), tp.ones(2, 2), out=tp.empty(2, 2, dtype=tp.float64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got float instead"):
        tp.sort(tp.ones(3), out=(tp.empty(0), tp.empty(0)))
    out = tp.empty(0, dtype=tp.float64)
    tp.cat([tp.ones(2)], out=out)  # a concatenation casts
    assert out.dtype == tp.float64


def test_out_argument_types():
    with pytest.raises(TypeError, match=r"sin\(\): argument 'out' must be Tensor, not int"):
        tp.sin(tp.ones(2), out=3)
    with pytest.raises(TypeError, match=r"max\(\): argument 'out' must be tuple of Tensors, not Tensor"):
        tp.max(tp.ones(2, 2), 1, out=tp.empty(0))
    with pytest.raises(TypeError, match="must be a tuple of 2 Tensors"):
        tp.sort(tp.ones(2), out=(tp.empty(0),))
    values, indices = tp.empty(0), tp.empty(0, dtype=tp.int64)
    res = tp.max(tp.tensor([[1.0, 3.0], [4.0, 2.0]]), 1, out=(values, indices))
    assert res.values is values and res.indices is indices
    np.testing.assert_array_equal(indices.numpy(), [1, 0])


def test_every_listed_function_takes_out_and_plain_calls_are_unchanged():
    import tapeflow.fft as tf
    import tapeflow.linalg as tl
    import tapeflow.special as ts

    for module, names in ((tp, _out.TOPLEVEL), (tl, _out.LINALG), (ts, _out.SPECIAL), (tf, _out.FFT)):
        for name in names:
            assert getattr(getattr(module, name), "__tapeflow_out__", False), f"{module.__name__}.{name}"
    assert tp.add.__doc__ and tp.add.__wrapped__ is not None  # the documentation is the function's own
    np.testing.assert_array_equal(tp.add(tp.ones(2), 1).numpy(), [2, 2])


def test_out_through_the_torch_alias():
    import subprocess
    import sys

    program = ("import torch\nx = torch.zeros(2, 3)\ntorch.matmul(torch.ones(2, 4), torch.ones(4, 3), out=x)\n"
               "v, i = torch.empty(0), torch.empty(0, dtype=torch.long)\ntorch.max(x, 1, out=(v, i))\n"
               "print(x.sum().item(), v.tolist(), i.tolist())\n")
    out = subprocess.run([sys.executable, "-c", f"import tapeflow.torch as t; t.install(); exec({program!r})"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["24.0", "[4.0,", "4.0]", "[0,", "0]"]


def test_out_refuses_forward_mode_dual_tensors():
    import tapeflow.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        dual = fwAD.make_dual(tp.ones(2), tp.ones(2))
        plain = tp.ones(2)
        for call in (lambda: tp.add(plain, plain, out=dual), lambda: tp.add(dual, plain, out=plain)):
            with pytest.raises(RuntimeError, match="Trying to use forward AD with add_out that does not support it "
                                                   "because it is an out= function"):
                call()
        tp.add(plain, plain, out=tp.empty(2))  # no tangent anywhere: allowed
