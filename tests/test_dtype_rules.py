"""Result dtypes of unary maths, reductions and activations, and PyTorch's refusals of input dtypes (bool floor,
complex sort, integer softmax, ...), equal PyTorch's over 11 dtypes. tapeflow runs on meta tensors (abstract
evaluation: no compilation); ops that read values on the host (unique, bincount, histc) are checked on CPU."""

from __future__ import annotations

import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

DT = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
U = ["exp", "exp2", "expm1", "log", "log2", "log1p", "sin", "tan", "tanh", "sqrt", "rsqrt", "sigmoid", "abs", "sign", "sgn", "floor",
     "ceil",
     "round", "trunc", "frac", "neg", "reciprocal", "erf", "erfinv", "lgamma", "digamma", "logit", "relu", "square", "angle",
     "isnan", "isfinite", "signbit", "nan_to_num", "asin", "acosh", "atanh", "sinc", "deg2rad", "i0", "positive", "conj", "real",
     "bitwise_not", "logical_not", "isreal", "isinf", "isneginf", "fix", "absolute"]
R = {"sum": lambda L, x: x.sum(), "mean": lambda L, x: x.mean(), "prod": lambda L, x: x.prod(), "cumsum": lambda L, x: x.cumsum(0),
     "cumprod": lambda L, x: x.cumprod(0), "var": lambda L, x: x.var(), "max": lambda L, x: x.max(), "amax": lambda L, x: x.amax(0),
     "argmax": lambda L, x: x.argmax(), "softmax": lambda L, x: x.softmax(0), "log_softmax": lambda L, x: x.log_softmax(0),
     "norm": lambda L, x: x.norm(), "logsumexp": lambda L, x: x.logsumexp(0), "all": lambda L, x: x.all(), "any": lambda L, x: x.any(),
     "count_nonzero": lambda L, x: x.count_nonzero(), "sort": lambda L, x: x.sort()[0], "topk": lambda L, x: x.topk(2)[0],
     "median": lambda L, x: x.median(), "mode": lambda L, x: x.mode()[0], "nanmedian": lambda L, x: x.nanmedian(),
     "nansum": lambda L, x: x.nansum(), "nanmean": lambda L, x: x.nanmean(), "cummax": lambda L, x: x.cummax(0)[0],
     "logcumsumexp": lambda L, x: x.logcumsumexp(0), "std_mean": lambda L, x: L.std_mean(x)[0], "aminmax": lambda L, x: L.aminmax(x)[0],
     "kthvalue": lambda L, x: x.kthvalue(1)[0], "msort": lambda L, x: L.msort(x), "argsort": lambda L, x: x.argsort(),
     "clamp": lambda L, x: x.clamp(0, 1), "clamp_min": lambda L, x: x.clamp(min=0.5), "sum_dtype": lambda L, x: x.sum(dtype=L.float64),
     "mean_int_dtype": lambda L, x: x.mean(dtype=L.float32), "diff": lambda L, x: L.diff(x), "trace": lambda L, x: x.reshape(1, 3).trace(),
     "dist": lambda L, x: L.dist(x, x), "outer": lambda L, x: L.outer(x, x), "dot": lambda L, x: L.dot(x, x), "matmul": lambda L, x: x @ x,
     "cross": lambda L, x: L.linalg.cross(x, x), "inner": lambda L, x: L.inner(x, x),
     "cumsum_dt": lambda L, x: x.cumsum(0, dtype=L.float64),
          "pow2": lambda L, x: x ** 2, "pow_half": lambda L, x: x ** 0.5, "rpow": lambda L, x: 2 ** x, "neg_op": lambda L, x: -x,
     "invert": lambda L, x: ~x,
     "div_scalar": lambda L, x: x / 2, "floordiv_scalar": lambda L, x: x // 2, "mod_scalar": lambda L, x: x % 2,
     "sub_bool": lambda L, x: x - True,
     "mul_bool": lambda L, x: x * True, "float": lambda L, x: x.float(), "where_scalar": lambda L, x: L.where(x == x, x, 0),
     "masked_fill_float": lambda L, x: x.masked_fill(x == x, 0.5), "fill_complex": lambda L, x: L.full_like(x, 2.5),
     "zeros_like": lambda L, x: L.zeros_like(x), "rand_like": lambda L, x: L.rand_like(x), "randn_like": lambda L, x: L.randn_like(x),
     "linalg_vector_norm": lambda L, x: L.linalg.vector_norm(x), "softplus": lambda L, x: L.nn.functional.softplus(x),
     "gelu": lambda L, x: L.nn.functional.gelu(x), "relu_F": lambda L, x: L.nn.functional.relu(x),
     "sigmoid_F": lambda L, x: L.nn.functional.sigmoid(x),
     "normalize": lambda L, x: L.nn.functional.normalize(x, dim=0), "dropout_eval": lambda L, x: L.nn.functional.dropout(x, training=False),
     "one_hot": lambda L, x: L.nn.functional.one_hot(x, 3),
}
HOST = {"histc": lambda L, x: L.histc(x, 3), "unique": lambda L, x: L.unique(x), "bincount": lambda L, x: L.bincount(x)}
# PyTorch kernels tapeflow computes anyway: bool matrix products and cross products (PyTorch refuses them).
KNOWN = {("matmul", "bool"), ("cross", "bool")}
def _unary(name):
    return lambda L, x: getattr(L, name)(x)


FNS = {u: _unary(u) for u in U}
FNS.update(R)


def _outcome(lib, fn, d, meta):
    x = lib.ones(3, dtype=getattr(lib, d), device="meta") if meta else lib.ones(3, dtype=getattr(lib, d))
    try:
        return str(fn(lib, x).dtype).split(".")[-1]
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__


@pytest.mark.parametrize("name", sorted(FNS) + sorted(HOST))
def test_dtypes_and_refusals_equal_pytorchs(name):
    fn = FNS.get(name) or HOST[name]
    wrong = []
    for d in DT:
        if (name, d) in KNOWN:
            continue
        mine, theirs = _outcome(tp, fn, d, name not in HOST), _outcome(torch, fn, d, False)
        if mine != theirs:
            wrong.append(f"{d}: {mine} (PyTorch: {theirs})")
    assert not wrong, f"{name}: " + "; ".join(wrong)
