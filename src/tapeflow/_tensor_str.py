"""How a tensor prints: PyTorch's layout, element by element.

One formatter per tensor picks the style from the elements that are shown (all of
them, or the edges of a summarised tensor): integers print as they are; floats
print with 4 decimals, as `1.` when every shown value is integral, and in
scientific notation when the shown magnitudes span more than 1000x, exceed 1e8
or (for non-integral values) fall below 1e-4. Every element is right-aligned to
the widest, and rows wrap at 80 columns.
"""

from __future__ import annotations

import math

import numpy as np

PRECISION = 4
THRESHOLD = 1000  # more elements than this are summarised
EDGEITEMS = 3  # elements shown at each end of a summarised dimension
LINEWIDTH = 80
SCI_MODE = None  # None: chosen per tensor; True/False: forced (set_printoptions(sci_mode=...))


class _Formatter:
    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        if not self.floating:
            self.width = max([len(str(v)) for v in values.tolist()] + [1])
            return
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size == 0:
            return
        mags = np.abs(finite)
        lo, hi = mags.min(), mags.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        if SCI_MODE is not None:
            self.sci_mode = SCI_MODE
        if self.sci_mode:
            self.width = max(len(f"{v:.{PRECISION}e}") for v in finite.tolist())
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())  # + 1 for the trailing "."
        else:
            self.width = max(len(f"{v:.{PRECISION}f}") for v in finite.tolist())

    def format(self, value) -> str:
        if not self.floating:
            s = str(value)
        elif self.sci_mode:
            s = f"{value:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            s = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            s = f"{value:.{PRECISION}f}"
        return s.rjust(self.width)


class _ComplexFormatter:
    """Real and imaginary parts formatted separately, each with its own style (as PyTorch prints them)."""

    def __init__(self, values: np.ndarray):
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.width = self.real.width + self.imag.width + 1

    def format(self, value) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows: the first and last EDGEITEMS along every dimension."""
    if arr.ndim == 0:
        return arr
    if arr.shape[0] > 2 * EDGEITEMS:
        arr = np.concatenate([arr[:EDGEITEMS], arr[-EDGEITEMS:]])
    if arr.ndim == 1:
        return arr
    return np.stack([_summarized(row) for row in arr]) if arr.shape[0] else arr


def _vector(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
    values = arr.tolist()
    if summarize and len(values) > 2 * EDGEITEMS:
        items = [fmt.format(v) for v in values[:EDGEITEMS]] + [" ..."] + [fmt.format(v) for v in values[-EDGEITEMS:]]
    else:
        items = [fmt.format(v) for v in values]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 1:
        return _vector(arr, indent, summarize, fmt)
    rows = range(arr.shape[0])
    if summarize and arr.shape[0] > 2 * EDGEITEMS:
        rows = [*range(EDGEITEMS), None, *range(arr.shape[0] - EDGEITEMS, arr.shape[0])]
    parts = ["..." if i is None else _nested(arr[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_array(arr: np.ndarray, indent: int) -> str:
    """The body of a tensor's repr, `indent` columns in from the left margin.

    Example:
        >>> import numpy as np
        >>> from tapeflow._tensor_str import format_array
        >>> print(format_array(np.array([1e-5, 1.0, -250.0], dtype=np.float32), indent=7))
        [ 1.0000e-05,  1.0000e+00, -2.5000e+02]
    """
    if arr.ndim and arr.size == 0:
        return "[]"
    if arr.dtype.kind not in "fiubc":  # bfloat16 (and any other narrow float type) prints as float32
        arr = arr.astype(np.float32)
    elif arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    summarize = arr.size > THRESHOLD
    shown = (_summarized(arr) if summarize else arr).reshape(-1)
    fmt = _ComplexFormatter(shown) if arr.dtype.kind == "c" else _Formatter(shown)
    if arr.ndim == 0:
        return fmt.format(arr.item())
    return _nested(arr, indent, summarize, fmt)
