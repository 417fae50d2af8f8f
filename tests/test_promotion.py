"""Type promotion is PyTorch's: dimensioned tensors, then 0-d tensors, then Python scalars, by category.

10 dtypes x {tensor, 0-d tensor, Python scalar} for arithmetic, division, comparison and `where`. The
expected result dtypes (or exception classes) come from PyTorch when it is installed, otherwise from the
checked-in table `tests/data/promotion_table.json` (written by running this file: `python tests/test_promotion.py`).
"""

from __future__ import annotations

import json
import pathlib

import jax
import pytest

import tapeflow as tp

try:
    import torch
except ImportError:  # pragma: no cover - the checked-in table stands in
    torch = None

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
SCALARS = {"True": True, "2": 2, "2.5": 2.5}
OPS = ["add", "sub", "mul", "div", "lt", "where"]
TABLE = pathlib.Path(__file__).parent / "data" / "promotion_table.json"


def _operands():
    """Operand descriptions: ('D', dtype) a dimensioned tensor, ('Z', dtype) a 0-d tensor, ('S', text) a scalar."""
    ts = [(kind, d) for d in DTYPES for kind in ("D", "Z")]
    return ts, ts + [("S", s) for s in SCALARS]


def _make(lib, operand):
    kind, what = operand
    if kind == "S":
        return SCALARS[what]
    dt = getattr(lib, what)
    return lib.ones(2, dtype=dt) if kind == "D" else lib.ones((), dtype=dt)


def _apply(lib, op, a, b):
    if op == "where":
        return lib.where(lib.ones(2, dtype=lib.bool), a, b)
    return getattr(lib, op)(a, b)


def _outcome(lib, op, left, right) -> str:
    try:
        if lib is tp:
            return _tapeflow_dtype(op, left, right)
        out = _apply(lib, op, _make(lib, left), _make(lib, right))
    except Exception as e:  # the class is what must agree
        return "raises " + ("RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__)
    return str(out.dtype).split(".")[-1]


def _tapeflow_dtype(op, left, right) -> str:
    """The result dtype of the same tapeflow code run abstractly (`jax.eval_shape`: no compilation)."""
    a, b = _make(tp, left), _make(tp, right)
    arrays = [x._data for x in (a, b) if isinstance(x, tp.Tensor)]

    def f(*ts):
        it = iter(ts)
        return _apply(tp, op, *(next(it) if isinstance(x, tp.Tensor) else x for x in (a, b)))

    return str(jax.eval_shape(tp.interop.to_jax(f), *arrays).dtype)


def _cases():
    lefts, rights = _operands()
    return [(op, l, r) for op in OPS for l in lefts for r in rights]


def _key(op, left, right) -> str:
    return f"{op} {left[0]}:{left[1]} {right[0]}:{right[1]}"


def _expected() -> dict:
    if torch is not None:
        return {_key(*c): _outcome(torch, *c) for c in _cases()}
    return json.loads(TABLE.read_text())


@pytest.fixture(scope="module")
def expected():
    return _expected()


@pytest.mark.parametrize("op", OPS)
def test_result_dtypes_match_pytorch(op, expected):
    wrong = []
    for case in _cases():
        if case[0] != op:
            continue
        want, got = expected[_key(*case)], _outcome(tp, *case)
        if want != got:
            wrong.append(f"{_key(*case)}: PyTorch {want}, tapeflow {got}")
    assert not wrong, f"{len(wrong)} promotion cases differ:\n" + "\n".join(wrong[:40])


def test_checked_in_table_is_current():
    if torch is None:
        pytest.skip("PyTorch (the oracle) is not installed")
    assert json.loads(TABLE.read_text()) == _expected(), "regenerate with: python tests/test_promotion.py"


if __name__ == "__main__":
    TABLE.write_text(json.dumps(_expected(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {TABLE}")
