"""`assert_close` and `make_tensor`, as in `torch.testing`."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ._tensor import Tensor
from ._tensor import as_tensor as _as_tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

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


def assert_allclose(actual, expected, rtol: float | None = None, atol: float | None = None, equal_nan: bool = True,
                    msg: str = "") -> None:
    """Deprecated form of `assert_close` (no dtype check, NaNs equal by default), kept for old test code.

    Example:
        >>> import warnings
        >>> import tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     tp.testing.assert_allclose(tp.tensor([1.0, float("nan")]), [1.0, float("nan")])
    """
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead.", FutureWarning, stacklevel=2)
    if not isinstance(expected, Tensor):
        expected = _as_tensor(expected, dtype=actual.dtype if isinstance(actual, Tensor) else None)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)


def _bounds(dtype, low, high, lowest, highest, default_low, default_high):
    """`[low, high)` for `make_tensor`: the defaults filled in, checked, and clamped to what `dtype` holds."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and (dtype.is_floating_point or dtype.is_complex):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not (dtype.is_floating_point or dtype.is_complex):
        return math.ceil(low), math.ceil(high)  # randint's upper end is exclusive: ceil both
    return low, high


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False, memory_format=None) -> Tensor:
    """A tensor of `shape` and `dtype` with values drawn uniformly from `[low, high)`, for tests.

    Defaults: `[-9, 9)` for floating and complex dtypes, `[-9, 10)` for signed integers (clamped to what
    the dtype holds, so `[0, 10)` for `uint8`), `[0, 2)` for `bool`. `exclude_zero` replaces zeros by 1
    (integers, bool) or the dtype's smallest normal number (floats). `noncontiguous` and `memory_format`
    are accepted; tapeflow tensors have no strides, so the values are what matters.

    Example:
        >>> import tapeflow as tp
        >>> t = tp.testing.make_tensor((2, 3), dtype=tp.float32, low=-1, high=1)
        >>> tuple(t.shape), t.dtype, bool(((t >= -1) & (t < 1)).all())
        ((2, 3), tapeflow.float32, True)
    """
    from . import _dtype, _factories
    from ._ops.complex_numbers import complex as _complex

    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    dtype = _dtype.to_dtype(dtype)
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    if dtype == _dtype.bool:
        low, high = _bounds(dtype, low, high, 0, 2, 0, 2)
        out = _factories.randint(low, high, shape, dtype=_dtype.int64).to(dtype)
    elif not (dtype.is_floating_point or dtype.is_complex):
        info = np.iinfo(dtype.jax)
        low, high = _bounds(dtype, low, high, int(info.min), int(info.max) + (dtype != _dtype.int64), -9, 10)
        out = _factories.randint(low, high, shape, dtype=dtype)
    else:
        info = np.finfo(dtype.jax)
        low, high = _bounds(dtype, low, high, float(info.min), float(info.max), -9, 9)
        real = _dtype.float64 if dtype == _dtype.complex128 else _dtype.float32 if dtype.is_complex else dtype
        parts = 2 if dtype.is_complex else 1
        draws = [_factories.rand(*shape, dtype=_dtype.float64) * (high - low) + low for _ in range(parts)]
        out = draws[0].to(real) if parts == 1 else _complex(draws[0].to(real), draws[1].to(real))
    if exclude_zero:
        tiny = 1 if not (dtype.is_floating_point or dtype.is_complex) else float(np.finfo(dtype.jax).tiny)
        out = out.masked_fill(out == 0, tiny)
    if device is not None:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out
