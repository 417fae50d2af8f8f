"""Result dtypes (or refusal classes) of mixed-dtype binary ops against PyTorch: every pair of dtypes, as two
dimensioned tensors, a dimensioned tensor and a 0-d one (either side), and a tensor with a Python number.
PyTorch's rules: 0-d tensors and numbers count only when of a higher category, and a complex 0-d tensor or
number keeps a float tensor's width; some functions take no number at all (TypeError)."""

from __future__ import annotations

import warnings

import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
          "complex128"]
NUMBERS = [2, 2.5, True, 1 + 2j]
OPS = {
    "add": lambda L, a, b: L.add(a, b),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "clamp": lambda L, a, b: L.clamp(a, min=b),
    "where": lambda L, a, b: L.where(L.tensor([True, False]), a, b),
}


def _operand(L, dtype, dims):
    values = [1, 0] if dims else 1
    return L.tensor(values, dtype=getattr(L, dtype))


def _outcome(L, op, a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return str(OPS[op](L, a(L), b(L)).dtype).split(".")[-1]
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return type(e).__name__


def _cases():
    for da in DTYPES:
        for db in DTYPES:
            for dims in ((True, True), (True, False), (False, True)):
                yield da, db, dims
        for number in NUMBERS:
            yield da, number, None


def _complex32(da, db) -> bool:
    """float16 meeting a complex 0-d tensor or number: PyTorch's ComplexHalf, which XLA lacks (complex64 here)."""
    return "float16" in (da, db) and any("complex" in str(x) or isinstance(x, complex) for x in (da, db))


@pytest.mark.parametrize("op", list(OPS))
def test_result_dtypes_equal_pytorchs(op):
    wrong = []
    for da, db, dims in _cases():
        if _complex32(da, db):
            continue
        a = lambda L, da=da, dims=dims: _operand(L, da, dims is None or dims[0])  # noqa: E731
        b = (lambda L, db=db, dims=dims: _operand(L, db, dims[1])) if dims is not None else (lambda L, db=db: db)  # noqa: E731
        mine, theirs = _outcome(tp, op, a, b), _outcome(torch, op, a, b)
        if mine != theirs:
            wrong.append((da, db, dims, mine, theirs))
    assert not wrong, f"{len(wrong)} differ, e.g. {wrong[:5]}"
