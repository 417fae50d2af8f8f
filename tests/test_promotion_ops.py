"""Result dtypes of the binary maths ops beyond arithmetic (division modes, powers, atan2, hypot, extrema, special
functions, bit shifts) equal PyTorch's over dtype pairs and operand kinds, and PyTorch's refusals are tapeflow's
(the same exception class). tapeflow runs on meta tensors here: dtypes come from abstract evaluation, so the
table costs no compilation."""

from __future__ import annotations

import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
          "complex128"]
OPS = {
    "floor_divide": lambda L, a, b: L.floor_divide(a, b),
    "div_trunc": lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
    "remainder": lambda L, a, b: L.remainder(a, b),
    "fmod": lambda L, a, b: L.fmod(a, b),
    "pow": lambda L, a, b: L.pow(a, b),
    "float_power": lambda L, a, b: L.float_power(a, b),
    "atan2": lambda L, a, b: L.atan2(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "fmin": lambda L, a, b: L.fmin(a, b),
    "lt": lambda L, a, b: L.lt(a, b),
    "copysign": lambda L, a, b: L.copysign(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b),
    "logaddexp": lambda L, a, b: L.logaddexp(a, b),
    "nextafter": lambda L, a, b: L.nextafter(a, b),
    "gcd": lambda L, a, b: L.gcd(a, b),
    "bitwise_left_shift": lambda L, a, b: L.bitwise_left_shift(a, b),
    "bitwise_and": lambda L, a, b: L.bitwise_and(a, b),
    "igamma": lambda L, a, b: L.igamma(a, b),
}
# Not compared: float16 meeting complex (PyTorch's ComplexHalf, which JAX does not have); and, for pow and
# logaddexp, a 0-d complex128 meeting a float32/bfloat16 tensor, where those two PyTorch kernels compute in
# complex64 although PyTorch's promotion (and its add, mul, where) gives complex128.
SKIP = {("float16", "complex64"), ("float16", "complex128"), ("complex64", "float16"), ("complex128", "float16")}
OP_SKIP = {"pow": {("float32", "complex128"), ("bfloat16", "complex128"), ("complex128", "float32"),
                   ("complex128", "bfloat16")}}
OP_SKIP["logaddexp"] = OP_SKIP["pow"]


def _outcome(lib, name, d1, k1, d2, k2):
    def make(d, kind):
        dtype = getattr(lib, d)
        shape = (2,) if kind == "t" else ()
        return tp.ones(shape, dtype=dtype, device="meta") if lib is tp else torch.ones(shape, dtype=dtype)
    try:
        out = OPS[name](lib, make(d1, k1), make(d2, k2))
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("name", sorted(OPS))
def test_result_dtypes_and_refusals_equal_pytorchs(name):
    wrong = []
    for d1 in DTYPES:
        for d2 in DTYPES:
            if (d1, d2) in SKIP or (d1, d2) in OP_SKIP.get(name, ()):
                continue
            for k1, k2 in (("t", "t"), ("t", "0d"), ("0d", "t")):
                mine, theirs = _outcome(tp, name, d1, k1, d2, k2), _outcome(torch, name, d1, k1, d2, k2)
                if mine != theirs:
                    wrong.append(f"{d1}[{k1}] {d2}[{k2}]: {mine} (PyTorch: {theirs})")
    assert not wrong, f"{name}: {len(wrong)} differences:\n" + "\n".join(wrong[:20])


@pytest.mark.parametrize("scalar", [True, 3, 2.5, 1j])
@pytest.mark.parametrize("dtype", DTYPES)
def test_python_scalars_promote_as_in_pytorch(dtype, scalar):
    if dtype == "float16" and type(scalar) is complex:
        return
    for op in (lambda L, a: a + scalar, lambda L, a: a * scalar, lambda L, a: L.where(a != a, a, scalar)):
        mine = op(tp, tp.ones(2, dtype=getattr(tp, dtype), device="meta"))
        theirs = op(torch, torch.ones(2, dtype=getattr(torch, dtype)))
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (dtype, scalar)
