"""`assert_close`, as `torch.testing.assert_close`."""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor

__all__ = ["assert_close"]

_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
        "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _arr(x):
    if isinstance(x, Tensor):
        return np.asarray(x._concrete("assert_close")), x.dtype.name
    a = np.asarray(x)
    return a, str(a.dtype)


def assert_close(actual, expected, *, rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_dtype: bool = True, msg: str | None = None) -> None:
    """Assert `actual` and `expected` are close: `|a - e| <= atol + rtol * |e|` elementwise.

    Default tolerances depend on the dtype (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7, 1e-7).

    Example:
        >>> import tapeflow as tp
        >>> tp.testing.assert_close(tp.tensor([1.0]), tp.tensor([1.0 + 1e-7]))
    """
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"sequence lengths differ: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, msg=msg)
        return
    a, adt = _arr(actual)
    e, edt = _arr(expected)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) and check_dtype and adt != edt:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {adt} != {edt}.")
    if a.shape != e.shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted")
    if rtol is None:
        rtol, atol = _TOL.get(adt, (0.0, 0.0))
    if a.dtype.kind in "fc" or e.dtype.kind in "fc":
        ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    else:
        ok = a == e
    if not np.all(ok):
        bad = np.argwhere(~np.asarray(ok))
        first = tuple(bad[0]) if a.ndim else ()
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64)) if a.dtype.kind != "b" else (a != e)
        text = (f"Tensor-likes are not close!\n\nMismatched elements: {len(bad)} / {max(a.size, 1)}\n"
                f"Greatest absolute difference: {np.nanmax(diff)} \nFirst mismatch at index {first}: "
                f"{a[first] if a.ndim else a} vs {e[first] if e.ndim else e} (up to {atol} allowed, rtol {rtol})")
        raise AssertionError(msg or text)
