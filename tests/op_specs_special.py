"""Op-table entries for `xla_ops/special.py`, `xla_ops/stats.py` and `linalg_slogdet` (format: see `op_specs.py`).

Imported at the end of `op_specs.py`. References are NumPy and SciPy.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sp
from op_specs import GT1, INTS, NOKINK, NONFINITE, POS, PROB, REAL, WELLCOND, A, C, F, binary, spec, unary

import tapeflow as tp

binary("copysign", np.copysign, dom=NOKINK, dom2=NOKINK)
spec("heaviside", [C(F((3, 4), INTS), F((3, 4))), C(F((3, 1), INTS), F((4,)))], np.heaviside, diff=False,
     tf=lambda x, v: tp.heaviside(x, v))
binary("logaddexp", np.logaddexp)
binary("logaddexp2", np.logaddexp2)
binary("ldexp", lambda x, e: x * 2.0 ** e)
unary("sinc", np.sinc, NOKINK)
binary("xlogy", sp.xlogy, dom=REAL, dom2=POS)
spec("xlog1py", [C(F((3, 4)), F((3, 4), POS)), C(F((3, 1)), F((4,), POS))], sp.xlog1py,
     tf=lambda x, y: tp.special.xlog1py(x, y))
unary("entr", sp.entr, POS, tf=lambda x: tp.special.entr(x), node="SpecialEntrBackward0")
unary("deg2rad", np.deg2rad)
unary("rad2deg", np.rad2deg)
spec("signbit", [C(F((3, 4))), C(A([-0.0, 0.0, -1.0, np.nan], np.float64))], np.signbit, diff=False,
     tf=lambda x: tp.signbit(x))
spec("isneginf", [C(F((3, 4), NONFINITE))], np.isneginf, diff=False, tf=lambda x: tp.isneginf(x))
spec("isposinf", [C(F((3, 4), NONFINITE))], np.isposinf, diff=False, tf=lambda x: tp.isposinf(x))
unary("i0", sp.i0)
unary("i0e", sp.i0e, NOKINK, tf=lambda x: tp.special.i0e(x))
unary("i1", sp.i1, tf=lambda x: tp.special.i1(x))
unary("i1e", sp.i1e, NOKINK, tf=lambda x: tp.special.i1e(x))
spec("gcd", [C(A([[12, -18, 0], [7, 5, 9]], np.int64), A([8, 12, 5], np.int64))], np.gcd, diff=False,
     tf=lambda x, y: tp.gcd(x, y))
spec("lcm", [C(A([[4, 6, 0], [7, 5, 9]], np.int64), A([6, 4, 5], np.int64))], np.lcm, diff=False,
     tf=lambda x, y: tp.lcm(x, y))
spec("polygamma", [C(F((3, 4), POS), n=1), C(F((5,), GT1), n=2), C(F(()), n=0)],
     lambda x, n: sp.polygamma(n, x), tf=lambda x: tp.polygamma(1, x))
spec("mvlgamma", [C(F((3, 4), GT1), p=3), C(F((5,), POS), p=1)],
     lambda x, p: sp.multigammaln(x[..., None], p)[..., 0] if x.ndim == 0 else np.vectorize(
         lambda v: sp.multigammaln(v, p))(x), tf=lambda x: tp.mvlgamma(x, 3))
spec("igamma", [C(F((3, 4), GT1, const=True), F((3, 4), POS)), C(F((3, 1), GT1, const=True), F((4,), POS))],
     sp.gammainc, tf=lambda a, x: tp.igamma(a, x))
spec("igammac", [C(F((3, 4), GT1, const=True), F((3, 4), POS)), C(F((3, 1), GT1, const=True), F((4,), POS))],
     sp.gammaincc, tf=lambda a, x: tp.igammac(a, x))
spec("nextafter", [C(F((3, 4)), F((3, 4))), C(F((3, 4)), A(1.0, np.float64))], np.nextafter,
     tf=lambda x, y: tp.nextafter(x, y))
spec("frexp", [C(F((3, 4), NOKINK)), C(F(()))], lambda x: (np.frexp(x)[0], np.frexp(x)[1].astype(np.int32)),
     tf=lambda x: tp.frexp(x))
unary("erfcx", sp.erfcx, tf=lambda x: tp.special.erfcx(x))
unary("ndtr", sp.ndtr, tf=lambda x: tp.special.ndtr(x))
unary("ndtri", sp.ndtri, PROB, tf=lambda x: tp.special.ndtri(x))
unary("log_ndtr", sp.log_ndtr, tf=lambda x: tp.special.log_ndtr(x))
spec("zeta", [C(F((3, 4), GT1, const=True), F((3, 4), POS)), C(F((3, 1), GT1, const=True), F((4,), POS))], sp.zeta,
     tf=lambda x, q: tp.special.zeta(x, q))
spec("bitwise_left_shift", [C(A([[1, 3, -2], [5, 0, 7]], np.int64), A([2, 1, 3], np.int64))], np.left_shift,
     diff=False, tf=lambda x, y: tp.bitwise_left_shift(x, y))
spec("bitwise_right_shift", [C(A([[16, -16, 7], [5, 0, -1]], np.int64), A([2, 1, 3], np.int64))], np.right_shift,
     diff=False, tf=lambda x, y: tp.bitwise_right_shift(x, y))


# -- order statistics ---------------------------------------------------------------------------------------------
def _np_nanmedian(x):
    v = np.sort(x.reshape(-1))
    n = int(np.sum(~np.isnan(v)))
    return v[max(n - 1, 0) // 2]


def _np_nanmedian_dim(x, dim, keepdim=False):
    xm = np.moveaxis(x, dim, -1)
    order = np.argsort(xm, axis=-1, kind="stable")
    vals = np.take_along_axis(xm, order, -1)
    k = np.maximum(np.sum(~np.isnan(xm), -1, keepdims=True) - 1, 0) // 2
    v, i = np.take_along_axis(vals, k, -1)[..., 0], np.take_along_axis(order, k, -1)[..., 0]
    if keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return v, i.astype(np.int64)


def _np_mode(x, dim, keepdim=False):
    xm = np.moveaxis(x, dim, -1)
    flat = xm.reshape(-1, xm.shape[-1])
    vals, idx = [], []
    for row in flat:
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]  # np.unique sorts: the first of the most frequent is the smallest
        vals.append(v)
        idx.append(np.nonzero(row == v)[0][-1])
    v, i = np.asarray(vals).reshape(xm.shape[:-1]), np.asarray(idx, np.int64).reshape(xm.shape[:-1])
    if keepdim:
        v, i = np.expand_dims(v, dim), np.expand_dims(i, dim)
    return v, i


spec("nanmedian", [C(F((3, 4))), C(F((5,))), C(F((3, 4), NONFINITE), grad=False),
                   C(A([1.0, np.nan, 2.0, 2.0], np.float64), grad=False)],
     _np_nanmedian, tf=lambda x: x.nanmedian())
spec("nanmedian_dim", [C(F((3, 4)), dim=1), C(F((3, 5)), dim=0, keepdim=True),
                       C(A([[np.nan, 1.0, 3.0], [np.nan, np.nan, np.nan]], np.float64), dim=1, grad=False)],
     _np_nanmedian_dim, tf=lambda x: x.nanmedian(1), node="NanmedianBackward1")
spec("mode", [C(F((3, 4)), dim=1), C(F((3, 5), INTS), dim=0, keepdim=True, grad=False),
              C(F((2, 6), INTS), dim=1, grad=False)],
     _np_mode, tf=lambda x: x.mode(1))
spec("linalg_slogdet", [C(F((3, 3), WELLCOND)), C(F((2, 3, 3), WELLCOND))],
     lambda a: tuple(np.linalg.slogdet(a)), tf=lambda a: tp.linalg.slogdet(a))
_EIG = ("complex outputs of a real matrix: tests/test_special_ops.py compares values and the gradients of "
        "phase-invariant functions with PyTorch")
spec("linalg_eig", [C(F((3, 3), WELLCOND))], lambda a: tuple(x.astype(complex) for x in np.linalg.eig(a)), tf=None, fd=False, second=False,
     f32=False, why=_EIG)
spec("linalg_eigvals", [C(F((3, 3), WELLCOND))], lambda a: np.linalg.eigvals(a).astype(complex), tf=None, fd=False, second=False, f32=False,
     why=_EIG)
