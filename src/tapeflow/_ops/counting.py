"""Counting and searching: `unique`, `unique_consecutive`, `bincount`, `histc`, `histogram`, `isin`,
`searchsorted`, `bucketize`. None is differentiable (their results are counts, positions or flags; `histogram`'s
edges are computed without history).

`unique`, `unique_consecutive` and `bincount` return tensors whose shapes depend on the values, so they read the
values on the host (as PyTorch synchronises for them) and cannot run under a JAX trace.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np

import xla_ops as X

from .. import _dtype
from .._device import host_array
from .._dispatch import dispatch
from .._state import state
from .._tensor import Tensor, as_tensor
from ._args import _dim, _t
from ._dtype_rules import _kernel
from .reduce import return_types

__all__ = ["bincount", "bucketize", "histc", "histogram", "isin", "searchsorted", "unique", "unique_consecutive"]

return_types.histogram = namedtuple("histogram", ["hist", "bin_edges"])


def _host(input: Tensor, what: str) -> np.ndarray:
    return np.asarray(input._concrete(what))


def _wrap(a: np.ndarray, dtype=None) -> Tensor:
    return Tensor._wrap(host_array(a, dtype))


def _name(t: Tensor) -> str:
    return _dtype.SCALAR_NAMES[t.dtype.name]


def _traced(t: Tensor) -> bool:
    return not isinstance(t._data, jax.Array) or isinstance(t._data, jax.core.Tracer)


# -- unique -------------------------------------------------------------------------------------------------------
def _results(values, inverse, counts, return_inverse, return_counts, input=None, node=("", "")):
    if input is not None and input.requires_grad and state.grad_enabled:
        # PyTorch records the values with a backward that says its derivative is not implemented
        from ..autograd.graph import not_implemented_node

        values = Tensor._make(values._raw, not_implemented_node(*node, (input,)), 0, True)
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


def _rows(input: Tensor, dim, what: str):
    """The values as a 2-D array with one row per entry along `dim` (all elements as rows of one when None)."""
    a = _host(input, what)
    if dim is None:
        return a.reshape(-1, 1), None
    d = _dim(dim, input.ndim)
    if a.size == 0 and a.shape[d] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    rest = int(np.prod([n for j, n in enumerate(a.shape) if j != d], dtype=np.int64))
    return np.moveaxis(a, d, 0).reshape(a.shape[d] if a.ndim else 1, rest), d


def _from_rows(rows: np.ndarray, input: Tensor, d) -> Tensor:
    if d is None:
        return _wrap(rows.reshape(-1), input._raw.dtype)
    shape = list(input.shape)
    shape[d] = rows.shape[0]
    moved = [shape[d]] + [n for j, n in enumerate(shape) if j != d]
    return _wrap(np.moveaxis(rows.reshape(moved), 0, d), input._raw.dtype)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of `input` (along `dim`: the distinct slices), sorted; optionally the index of each
    element's value in them (`return_inverse`) and how often each occurs (`return_counts`).

    NaNs are all distinct, as in PyTorch. Reads the values on the host (the result's size depends on them).

    Example:
        >>> tp.unique(tp.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
        (tensor([1, 2, 3]), tensor([2, 0, 2, 1]), tensor([1, 1, 2]))
    """
    rows, d = _rows(input, dim, "unique()")
    if d is None:
        flat = rows.reshape(-1)
        values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True, equal_nan=False)
        inverse = inverse.reshape(tuple(input.shape))
    elif rows.shape[0] == 0:
        values, inverse, counts = rows, np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        values, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True, axis=0)
        inverse = inverse.reshape(-1)
    return _results(_from_rows(values.reshape(-1, rows.shape[1]) if d is not None else values, input, d),
                    _wrap(inverse, jnp.int64), _wrap(counts, jnp.int64), return_inverse, return_counts, input,
                    ("Unique2Backward0", "_unique2") if d is None else ("UniqueDimBackward0", "unique_dim"))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """`input` with each run of equal consecutive values (slices along `dim`) collapsed to one; optionally the
    index of each element's run (`return_inverse`) and the run lengths (`return_counts`).

    Example:
        >>> tp.unique_consecutive(tp.tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
        (tensor([1, 2, 3, 1]), tensor([2, 2, 1, 1]))
    """
    rows, d = _rows(input, dim, "unique_consecutive()")
    n = rows.shape[0]
    starts = np.ones(n, bool)
    if n > 1:
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    if d is None:
        inverse = inverse.reshape(tuple(input.shape))
    return _results(_from_rows(rows[starts], input, d), _wrap(inverse, jnp.int64), _wrap(counts, jnp.int64),
                    return_inverse, return_counts, input, ("UniqueConsecutiveBackward0", "unique_consecutive"))


# -- counting -----------------------------------------------------------------------------------------------------
def bincount(input, weights=None, minlength=0):
    """How often each value `0 ... max(input)` occurs in the 1-D non-negative integer `input` (at least `minlength`
    bins); with `weights`, the sum of the weights of its occurrences. Reads the values on the host.

    Example:
        >>> tp.bincount(tp.tensor([1, 1, 3]), minlength=5)
        tensor([0, 2, 0, 1, 0])
    """
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise _kernel("bincount_cpu")(input.dtype.name)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = _host(input, "bincount()")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _wrap(np.bincount(a, minlength=minlength), jnp.int64)
    weights = _t(weights)
    if weights.ndim != 1 or weights.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    w = _host(weights, "bincount()")
    dtype = w.dtype if w.dtype in (np.float32, np.float64) else np.float64
    return _wrap(np.bincount(a, w.astype(np.float64), minlength=minlength).astype(dtype))


_C_NAMES = {"float64": "double", "float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _check_histogram_input(input, name: str) -> None:
    if not (input.dtype.is_floating_point and input.dtype.itemsize >= 4):
        raise _kernel(name)(input.dtype.name)


def histc(input, bins=100, min=0, max=0):
    """Counts of `input`'s elements in `bins` equal-width bins over `[min, max]` (the data's range when `min` and
    `max` are equal); elements outside are left out.

    Example:
        >>> tp.histc(tp.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=4)
        tensor([0., 2., 1., 1.])
    """
    if not input.dtype.is_floating_point:  # (float16 and bfloat16 too, unlike histogram)
        _check_histogram_input(input, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    lo, hi = float(min), float(max)
    if lo == hi and not _traced(input) and input.numel():
        a = _host(input, "histc()")
        lo, hi = float(a.min()), float(a.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    return dispatch(X.histc, (input,), (("bins", int(bins)), ("min", float(min)), ("max", float(max))))


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """Histogram of `input`: `(hist, bin_edges)`. `bins` is a count of equal bins (100 by default) over `range`
    (the data's range by default) or a 1-D tensor of increasing edges; `weight` sums weights instead of counting; `density`
    normalises to a density.

    Example:
        >>> tp.histogram(tp.tensor([1.0, 2.0, 1.0]), bins=2, range=(0.0, 2.0))
        histogram(hist=tensor([0., 3.]), bin_edges=tensor([0., 1., 2.]))
    """
    _check_histogram_input(input, "histogramdd")
    if isinstance(bins, Tensor):
        if bins.dtype != input.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_C_NAMES.get(input.dtype.name, input.dtype.name)} and bins for "
                               f"dimension 0 with dtype {_C_NAMES.get(bins.dtype.name, bins.dtype.name)}")
        edges = bins.detach()
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        edges = _edges(input, int(bins), range)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the input "
                           "tensor excluding its innermost dimension, but got input with shape "
                           f"{[input.numel(), 1]} and weight with shape {list(weight.shape)}")
    flat = input.reshape(-1)  # (not detached: PyTorch's histogram joins the graph, on a node that cannot go back)
    if weight is None:
        hist = dispatch(X.histogram, (flat, edges), (("density", builtins.bool(density)),))
    else:
        hist = dispatch(X.histogram_weighted, (flat, edges, weight.detach().reshape(-1)),
                        (("density", builtins.bool(density)),))
    return return_types.histogram(hist, edges)


def _edges(input, bins: int, range) -> Tensor:
    """`bins + 1` equally spaced edges over `range`, or over the data's range (widened by 1/2 each way when all
    values are equal)."""
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               "dimension 0")
    elif input.numel() and not _traced(input):
        a = _host(input, "histogram()")
        lo, hi = float(a.min()), float(a.max())
    else:
        lo, hi = 0.0, 0.0
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    # PyTorch's linspace in the input's precision, each edge one fused multiply-add (emulated in a wider type):
    # from the start up to half way, from the end after.
    dt = np.dtype(input._raw.dtype)
    wide = np.longdouble if dt == np.float64 else np.float64
    start, end = dt.type(lo), dt.type(hi)
    step = wide((end - start) / dt.type(bins))
    i = np.arange(bins + 1)
    edges = np.where(i < (bins + 1) // 2, step * i + wide(start), wide(end) - step * (bins - i))
    return _wrap(edges.astype(dt))


# -- searching ----------------------------------------------------------------------------------------------------
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value of `input` would go in the last dimension of `sorted_sequence` to keep it sorted: the
    first such position, or the last with `right=True` (`side="right"`). `sorter` sorts an unsorted sequence.

    Example:
        >>> tp.searchsorted(tp.tensor([1, 3, 5, 7]), tp.tensor([3, 6]))
        tensor([1, 3])
        >>> tp.searchsorted(tp.tensor([1, 3, 5, 7]), tp.tensor([3, 6]), right=True)
        tensor([2, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = _t(sorted_sequence)
    scalar = not isinstance(input, Tensor)
    values = as_tensor(input) if scalar else input
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if seq.ndim > 1 and (values.ndim != seq.ndim or tuple(values.shape[:-1]) != tuple(seq.shape[:-1])):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    if sorter is not None:
        seq = _sorted_by(seq, sorter)
    values = values.detach()
    if values.dtype != seq.dtype:
        common = _common(values, seq)
        values, seq = values.to(common), seq.to(common)
    if seq._raw.dtype.kind in "bc":  # (PyTorch's kernel, run in the common dtype, has no bool or complex version)
        raise _kernel("searchsorted_out_cpu")(seq.dtype.name)
    return dispatch(X.searchsorted, (seq.detach(), values),
                    (("right", builtins.bool(right)), ("out_int32", builtins.bool(out_int32))))


def _common(a: Tensor, b: Tensor):
    return _dtype.from_jax_dtype(jnp.promote_types(a._raw.dtype, b._raw.dtype))


def _sorted_by(seq: Tensor, sorter) -> Tensor:
    if tuple(sorter.shape) != tuple(seq.shape):
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
    if sorter.dtype.name != "int64":
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {_name(sorter)}")
    from ._checks import index_bounds

    b = index_bounds(sorter)
    if b is not None and (b[0] < 0 or b[1] >= seq.shape[-1]):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")
    return seq.detach().gather(-1, sorter)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of `input` among the sorted 1-D `boundaries`: `i` with `boundaries[i-1] < x <=
    boundaries[i]` (`right=True`: `boundaries[i-1] <= x < boundaries[i]`).

    Example:
        >>> tp.bucketize(tp.tensor([1, 5, 9]), tp.tensor([1, 3, 5, 7]))
        tensor([0, 2, 4])
    """
    boundaries = _t(boundaries)
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` occurs in `test_elements` (either may be a number); `invert` negates.

    Example:
        >>> tp.isin(tp.tensor([1, 2, 3, 4]), tp.tensor([2, 4]))
        tensor([False,  True, False,  True])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__}), but expected one of: (Tensor elements, Tensor "
                        "test_elements), (Number element, Tensor test_elements), (Tensor elements, Number "
                        "test_element)")
    a, b = _t(elements), _t(test_elements)
    for t in (a, b):
        if t.dtype is _dtype.bool or t.dtype.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_name(t)}")
    return dispatch(X.isin, (a.detach(), b.detach()), (("invert", builtins.bool(invert)),))
