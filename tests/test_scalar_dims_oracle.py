"""Calls found by a differential sweep against PyTorch, kept as a table: dims 0 / -1 of 0-d tensors (PyTorch reads
them as the one element's) in reductions, scans, sorting and views; the 0-d refusals of views that need a
dimension; a 0-d index in `index_select`; a Python number where a function's first argument must be a Tensor;
add/sub's `alpha` checks; the `dtype` of `mean`/`nanmean`/`nansum`; `angle` of 0-d integers; a complex value
tensor in `masked_fill`. Each case compares the result (type, shape, dtype, values, requires_grad) or the
error (class and message) with PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _summary(m, r):
    if isinstance(r, m.Tensor):
        return ("tensor", tuple(r.shape), str(r.dtype).split(".")[-1], r.requires_grad,
                np.asarray(r.detach().tolist(), dtype=complex if r.dtype.is_complex else float))
    if isinstance(r, tuple):
        return ("tuple", [_summary(m, e) for e in r])
    return ("other", r)


def _run(case, m):
    try:
        return "ok", _summary(m, case(m))
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return "raise", (type(e).__name__, str(e).replace("tapeflow", "torch"))


def _same(a, b, where="result"):
    assert a[0] == b[0], f"{where}: {a} vs {b}"
    if a[0] == "tensor":
        assert a[1:4] == b[1:4], f"{where}: {a[1:4]} vs {b[1:4]}"
        np.testing.assert_allclose(a[4], b[4], rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=where)
    elif a[0] == "tuple":
        assert len(a[1]) == len(b[1]), where
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def check(case):
    (kind, ours), (their_kind, theirs) = _run(case, tp), _run(case, torch)
    assert kind == their_kind, f"tapeflow {kind} {ours} vs PyTorch {their_kind} {theirs}"
    if kind == "raise":
        assert ours == theirs
    else:
        _same(ours, theirs)


def _s(m, v=2.0, **kw):
    return m.tensor(v, **kw)


ZERO_D = {
    "sum(0)": lambda m: m.sum(_s(m), 0), "sum((0,))": lambda m: m.sum(_s(m), (0,)),
    "sum((0, -1))": lambda m: m.sum(_s(m), (0, -1)), "sum(1)": lambda m: m.sum(_s(m), 1),
    "mean(-1, keepdim)": lambda m: _s(m).mean(-1, keepdim=True), "prod(0)": lambda m: m.prod(_s(m), 0),
    "nansum(0)": lambda m: m.nansum(_s(m), 0), "nanmean(0)": lambda m: m.nanmean(_s(m), 0),
    "var(0, correction=0)": lambda m: m.var(_s(m), dim=0, correction=0),
    "var_mean(0, correction=0)": lambda m: m.var_mean(_s(m), dim=0, correction=0),
    "amax(0)": lambda m: m.amax(_s(m), 0), "amin(-1)": lambda m: m.amin(_s(m), -1),
    "aminmax(dim=0)": lambda m: tuple(m.aminmax(_s(m), dim=0)), "max(0)": lambda m: tuple(m.max(_s(m), 0)),
    "min(-1, keepdim)": lambda m: tuple(_s(m).min(-1, keepdim=True)), "argmax(0)": lambda m: _s(m).argmax(dim=0),
    "argmin(-1, keepdim)": lambda m: m.argmin(_s(m), dim=-1, keepdim=True),
    "all(-1, keepdim) uint8": lambda m: _s(m, 0, dtype=m.uint8).all(dim=-1, keepdim=True),
    "any(0)": lambda m: m.any(_s(m), 0), "count_nonzero(0)": lambda m: m.count_nonzero(_s(m), 0),
    "logsumexp(0)": lambda m: m.logsumexp(_s(m, 4.0), 0), "norm(dim=0)": lambda m: m.norm(_s(m, -3.0), dim=0),
    "cumsum(0)": lambda m: m.cumsum(_s(m, -1.0), 0), "cumprod(-1)": lambda m: m.cumprod(_s(m), -1),
    "cummax(0)": lambda m: tuple(m.cummax(_s(m), 0)), "cummin(0)": lambda m: tuple(_s(m).cummin(0)),
    "logcumsumexp(0)": lambda m: m.logcumsumexp(_s(m), 0), "softmax(0)": lambda m: m.softmax(_s(m), 0),
    "log_softmax(-1)": lambda m: _s(m).log_softmax(-1),
    "F.softmax(-1)": lambda m: m.nn.functional.softmax(_s(m), -1),
    "sort(0)": lambda m: tuple(m.sort(_s(m, -1.0), dim=0)), "sort()": lambda m: tuple(_s(m, -1.0).sort()),
    "argsort()": lambda m: _s(m, -1.0).argsort(), "msort": lambda m: m.msort(_s(m, 0)),
    "topk(1)": lambda m: tuple(m.topk(_s(m), 1)), "kthvalue(1)": lambda m: tuple(m.kthvalue(_s(m), 1)),
    "median(0)": lambda m: tuple(m.median(_s(m), 0)), "mode(-2)": lambda m: tuple(m.mode(_s(m), -2)),
    "flip(0)": lambda m: _s(m).flip(0), "flip([-1])": lambda m: _s(m).flip([-1]),
    "transpose(0, -1)": lambda m: _s(m).transpose(0, -1), "squeeze(0)": lambda m: _s(m).squeeze(0),
    "movedim(0, -1)": lambda m: _s(m).movedim(0, -1),
    "roll(1, 0)": lambda m: m.roll(_s(m), 1, 0), "roll(1, -1)": lambda m: m.roll(_s(m), 1, -1),
    "unbind(0)": lambda m: _s(m).unbind(0), "unbind(-1)": lambda m: _s(m).unbind(-1),
    "narrow": lambda m: _s(m).narrow(0, 0, 1), "select": lambda m: _s(m).select(0, 0),
    "chunk": lambda m: _s(m).chunk(1), "split": lambda m: _s(m).split(1),
    "grad of sum(0)": lambda m: (lambda x: m.autograd.grad(x.sum(0) * 3, x)[0])(_s(m, requires_grad=True)),
    "grad of log_softmax(0)": lambda m: (lambda x: m.autograd.grad(x.log_softmax(0) + x * 2, x)[0])(
        _s(m, requires_grad=True)),
    "grad of max(0)": lambda m: (lambda x: m.autograd.grad(x.max(0).values * 5, x)[0])(_s(m, requires_grad=True)),
}

INDEXING = {
    "index_select, 0-d index": lambda m: m.index_select(m.zeros(3, 1, 2), 0, m.tensor(1)),
    "index_select, 0-d index, dim 1": lambda m: m.index_select(m.arange(6.0).view(2, 3), 1, m.tensor(2)),
    "index_select of 0-d": lambda m: m.index_select(_s(m, 5.0), 0, m.tensor([0])),
    "index_select of 0-d, 0-d index": lambda m: m.index_select(_s(m, 5.0), 0, m.tensor(0)),
    "index_select of 0-d, two indices": lambda m: m.index_select(_s(m, 5.0), 0, m.tensor([0, 0])),
    "index_select of 0-d, grad": lambda m: (lambda x: m.autograd.grad(
        m.index_select(x, 0, m.tensor([0])).sum() * 2, x)[0])(_s(m, requires_grad=True)),
}

def _number_first(fn):
    return lambda m: getattr(m, fn)(2, m.tensor([1.0, 2.0]))


FIRST_ARG = {name: _number_first(name) for name in (
    "maximum minimum fmax fmin atan2 hypot logaddexp nextafter ldexp dist kron matmul dot inner outer isclose "
    "allclose logical_and logical_xor gcd heaviside eq ne lt ge greater_equal fmod copysign rsub clamp_min "
    "clamp_max").split()}
FIRST_ARG["eq, keyword"] = lambda m: m.eq(input=m.tensor([1.0, 2.0]), other=2)
FIRST_ARG["maximum of tensors"] = lambda m: m.maximum(m.tensor([1.0, 3.0]), m.tensor([2.0, 2.0]))

ALPHA = {
    "int, float alpha": lambda m: m.add(m.tensor([3]), 3, alpha=1.5),
    "int, alpha 2.0": lambda m: m.add(m.tensor([3]), 3, alpha=2.0),
    "int, tensor alpha": lambda m: m.add(m.tensor([3]), 3, alpha=m.tensor(2)),
    "bool, alpha 2": lambda m: m.add(m.tensor([True, False]), m.tensor([True, False]), alpha=2),
    "bool, alpha 0, broadcast": lambda m: m.add(m.tensor([False]), m.tensor([True, True]), alpha=0),
    "bool, float alpha": lambda m: m.add(m.tensor([True]), True, alpha=1.5),
    "float, bool alpha": lambda m: m.add(m.tensor([1.0]), 1.0, alpha=True),
    "float, complex alpha": lambda m: m.add(m.tensor([3.0]), 3, alpha=1j),
    "complex, complex alpha": lambda m: m.add(m.tensor([3.0]), 3j, alpha=1j),
    "float, alpha 1.0": lambda m: m.add(m.tensor([3.0]), 1, alpha=1.0),
    "sub int from float": lambda m: m.sub(m.tensor([3]), m.tensor([1.5]), alpha=0.5),
    "in place, int": lambda m: m.tensor([3]).add_(1, alpha=0.5),
    "rsub, int": lambda m: m.rsub(m.tensor([3]), 1, alpha=0.5),
    "rsub, float": lambda m: m.rsub(m.tensor([3.0]), 1, alpha=0.5),
}

DTYPES = {
    "mean(int32, dtype=uint8)": lambda m: m.mean(m.tensor([2, -2, -3], dtype=m.int32), dtype=m.uint8),
    "mean(float, dtype=int32)": lambda m: m.mean(m.tensor([1.0]), dtype=m.int32),
    "mean(int, dtype=float64)": lambda m: m.mean(m.tensor([2, -2, -3]), dtype=m.float64),
    "nanmean(dtype=int32)": lambda m: m.nanmean(m.tensor([1.0, 2.0]), dtype=m.int32),
    "nanmean(dtype=float64)": lambda m: m.nanmean(m.tensor([1.0, float("nan")]), dtype=m.float64),
    "nansum(dtype=float16)": lambda m: m.nansum(m.tensor([1, 2]), dtype=m.float16),
    "nansum(dtype=int32)": lambda m: m.nansum(m.tensor([1.0, float("nan")]), dtype=m.int32),
    "nansum(bool, dtype=uint8)": lambda m: m.nansum(m.tensor([True, True]), dtype=m.uint8),
    "angle(0-d int32)": lambda m: m.angle(m.tensor(4, dtype=m.int32)),
    "angle(0-d float64)": lambda m: m.angle(m.tensor(-4.0, dtype=m.float64)),
    "masked_fill, complex tensor value": lambda m: m.tensor([1.0]).masked_fill(m.tensor(True), m.tensor(1 + 1j)),
    "masked_fill, real complex tensor value": lambda m: m.tensor([1.0]).masked_fill(m.tensor(True), m.tensor(2 + 0j)),
}

MORE = {
    "nonzero of 0-d": lambda m: m.nonzero(m.tensor(1)), "nonzero of 0-d zero": lambda m: m.nonzero(m.tensor(0)),
    "nonzero of 0-d, as_tuple": lambda m: m.nonzero(m.tensor(3.0), as_tuple=True),
    "argwhere of 0-d": lambda m: m.argwhere(m.tensor(1 + 1j)),
    "prod(uint8, dtype=uint8)": lambda m: m.prod(m.tensor([2, 4, 2], dtype=m.uint8), dtype=m.uint8),
    "prod(dim, dtype=uint8)": lambda m: m.prod(m.tensor([[20, 40]], dtype=m.uint8), 1, dtype=m.uint8),
    "prod(dtype=bool)": lambda m: m.prod(m.tensor([1.0, -1.0]), dtype=m.bool),
    "nansum(dtype=bool)": lambda m: m.nansum(m.tensor([1.0, -1.0]), dtype=m.bool),
    "igamma at a = 0, inf": lambda m: m.igamma(m.tensor([0.0, 0.0, 0.0, float("inf"), float("inf"), 2.0]),
                                               m.tensor([0.5, 0.0, -1.0, 1.0, float("inf"), 0.7])),
    "igammac at a = 0, inf": lambda m: m.igammac(m.tensor([0.0, 0.0, 0.0, float("inf"), float("inf"), 2.0]),
                                                 m.tensor([0.5, 0.0, -1.0, 1.0, float("inf"), 0.7])),
    "logcumsumexp complex, one row": lambda m: m.logcumsumexp(m.tensor([[-2.2 - 1.38j, -2.67 + 4.79j]]), 0),
    "logcumsumexp complex": lambda m: m.logcumsumexp(m.tensor([-2.2 - 1.38j, -2.67 + 4.79j, 1 + 7j, -3 - 9j]), 0),
    "logcumsumexp complex, -inf": lambda m: m.logcumsumexp(
        m.tensor([1 + 1j, complex(float("-inf"), 0), 2 - 1j]), 0),
}
MORE.update({
    "uint8 mask index": lambda m: m.tensor([4, 3, 2])[m.tensor([1, 0, 1], dtype=m.uint8)],
    "uint8 mask index of 2": lambda m: m.tensor([4, 3, 2])[m.tensor([2, 0, 1], dtype=m.uint8)],
    "uint8 mask of the wrong shape": lambda m: m.zeros(2, 3)[m.tensor([1, 0, 1], dtype=m.uint8)],
    "uint8 mask write": lambda m: m.zeros(3).__setitem__(m.tensor([1, 0, 1], dtype=m.uint8), 5.0),
    "arange(0.5, 5, 1.5, int64)": lambda m: m.arange(0.5, 5, 1.5, dtype=m.int64),
    "arange(-2.7, 3, 1.9, int32)": lambda m: m.arange(-2.7, 3, 1.9, dtype=m.int32),
    "arange(-1.5, 3, uint8)": lambda m: m.arange(-1.5, 3, dtype=m.uint8),
    "arange(0, 2, 0.5, int64)": lambda m: m.arange(0, 2, 0.5, dtype=m.int64),
    "arange(0, 2, 0.3, int32)": lambda m: m.arange(0, 2, 0.3, dtype=m.int32),
    "arange(3, bool)": lambda m: m.arange(3, dtype=m.bool),
    "mse_loss(int, float)": lambda m: m.nn.functional.mse_loss(m.tensor([1, 2]), m.tensor([1.5, 2.0])),
    "mse_loss(int, int)": lambda m: m.nn.functional.mse_loss(m.tensor([1, 2]), m.tensor([1, 3])),
    "smooth_l1_loss(int, float)": lambda m: m.nn.functional.smooth_l1_loss(m.tensor([1, 2]), m.tensor([1.5, 2.0])),
})


# A dtype or value refusal comes after PyTorch's broadcast check (it finds the shapes first).
def _mismatched(name, a, b):
    return lambda m: getattr(m, name)(m.ones(3, 1, 2, dtype=getattr(m, a)), m.zeros(1, 3, dtype=getattr(m, b)))


BROADCAST_FIRST = {name: _mismatched(name, a, b) for name, a, b in (
    ("bitwise_and", "float32", "int32"), ("bitwise_left_shift", "bool", "complex64"), ("lt", "complex64", "float32"),
    ("gcd", "float64", "int32"), ("copysign", "complex64", "float32"), ("floor_divide", "complex64", "float32"),
    ("remainder", "int32", "int32"), ("fmod", "int64", "int64"))}

CASES = {**{f"0-d {k}": v for k, v in ZERO_D.items()}, **INDEXING, **{f"first argument {k}": v for k, v in
                                                                    FIRST_ARG.items()},
         **{f"alpha {k}": v for k, v in ALPHA.items()}, **DTYPES, **MORE,
         **{f"broadcast before dtype {k}": v for k, v in BROADCAST_FIRST.items()}}


@pytest.mark.parametrize("name", list(CASES))
def test_against_pytorch(name):
    check(CASES[name])
