"""Op-table entries for the writes at indices and the strided views (format: see `op_specs.py`).

Imported at the end of `op_specs.py`, so `SPECS` holds these too. The NumPy references loop over the written
positions one by one. PyTorch's own numbers for these ops (ties, zeros, repeated indices) are checked in
`tests/test_tensor_ops_more.py`.
"""

from __future__ import annotations

import numpy as np
from op_specs import A, B, C, F, spec

import tapeflow as tp

_IDENT = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "amax": -np.inf, "amin": np.inf}
_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _np_reduce_into(x, targets, values, reduce, include_self):
    """`x` with each value reduced into its target position (`targets`: one index tuple per value)."""
    out = x.copy()
    count = np.ones(x.shape) if include_self else np.zeros(x.shape)
    if not include_self:
        for t in set(targets):
            out[t] = _IDENT[reduce]
    for t, v in zip(targets, values):
        out[t] = _UFUNC[reduce](out[t], v)
        count[t] += 1
    if reduce == "mean":
        out = out / np.where(count == 0, 1, count)
    return out


def _np_scatter_reduce(x, index, src, dim, reduce, include_self=True):
    targets, values = [], []
    for pos in np.ndindex(*index.shape):
        t = list(pos)
        t[dim] = index[pos]
        targets.append(tuple(t))
        values.append(src[pos])
    return _np_reduce_into(x, targets, values, reduce, include_self)


def _np_index_reduce(x, index, source, dim, reduce, include_self=True):
    targets, values = [], []
    for pos in np.ndindex(*source.shape):
        t = list(pos)
        t[dim] = index[pos[dim]]
        targets.append(tuple(t))
        values.append(source[pos])
    return _np_reduce_into(x, targets, values, reduce, include_self)


def _np_index_copy(x, index, source, dim):
    out = np.moveaxis(x.copy(), dim, 0)
    for k, i in enumerate(index):
        out[i] = np.moveaxis(source, dim, 0)[k]
    return np.moveaxis(out, 0, dim)


def _np_index_fill(x, index, value, dim):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = value
    return np.moveaxis(out, 0, dim)


def _np_put(x, index, source, accumulate=False):
    out = x.copy().reshape(-1)
    for i, v in zip(index.reshape(-1), source.reshape(-1)):
        out[i] = out[i] + v if accumulate else v
    return out.reshape(x.shape)


def _np_masked_scatter(x, mask, source):
    out = x.copy()
    out[np.broadcast_to(mask, x.shape)] = source.reshape(-1)[:int(np.broadcast_to(mask, x.shape).sum())]
    return out


def _np_slice_scatter(x, src, dim, start, stop, step=1):
    out = x.copy()
    out[(slice(None),) * dim + (slice(start, stop, step),)] = src
    return out


def _np_select_scatter(x, src, dim, index):
    out = x.copy()
    out[(slice(None),) * dim + (index,)] = src
    return out


def _np_diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    out = np.moveaxis(x.copy(), (dim1, dim2), (-2, -1))
    n = np.diagonal(out, offset, -2, -1).shape[-1]
    rows = np.arange(n) + max(-offset, 0)
    out[..., rows, rows + offset] = src
    return np.moveaxis(out, (-2, -1), (dim1, dim2))


def _np_unfold(x, dim, size, step):
    if x.ndim == 0:
        return x.reshape(1)
    starts = range(0, x.shape[dim] - size + 1, step)
    wins = [np.moveaxis(np.take(x, range(s, s + size), axis=dim), dim, -1) for s in starts]
    return np.stack(wins, axis=dim)


def _np_as_strided(x, size, stride, storage_offset=0):
    return np.lib.stride_tricks.as_strided(x.reshape(-1)[storage_offset:], size,
                                           tuple(s * x.itemsize for s in stride)).copy()


_DUP = A([[0, 0, 1, 3], [2, 0, 0, 3], [1, 1, 1, 1]])
spec("scatter_reduce", [
    C(F((3, 4)), _DUP, F((3, 4)), dim=1, reduce="mean", include_self=True),
    C(F((3, 4)), _DUP, F((3, 5)), dim=1, reduce="sum", include_self=False),
    C(F((3, 4)), _DUP, F((3, 4)), dim=1, reduce="amax", include_self=True),
    C(F((3, 4)), _DUP, F((3, 4)), dim=1, reduce="amin", include_self=False),
    C(F((4, 2)), A([[0, 1], [3, 3]]), F((2, 2)), dim=0, reduce="mean", include_self=False),
    # JAX has no derivative for products scattered to repeated indices: forward only (gradients: vs PyTorch)
    C(F((3, 4)), _DUP, F((3, 4)), dim=1, reduce="prod", include_self=True, grad=False),
], _np_scatter_reduce, tf=lambda x, i, s: x.scatter_reduce(1, i, s, "mean"), second=False,
    why="second order: the tie masks of amax/amin and the counts are piecewise constant; first order suffices")
spec("index_reduce", [
    C(F((3, 4)), A([0, 2, 0]), F((3, 4)), dim=0, reduce="mean", include_self=True),
    C(F((3, 4)), A([3, 0, 3, 1, 3]), F((3, 5)), dim=1, reduce="amax", include_self=False),
    C(F((3, 4)), A([1, 1]), F((2, 4)), dim=0, reduce="amin", include_self=True),
    C(F((3, 4)), A([0, 2, 0]), F((3, 4)), dim=0, reduce="prod", include_self=False, grad=False),
], _np_index_reduce, tf=lambda x, i, s: x.index_reduce(0, i, s, "mean"), second=False,
    why="second order: as scatter_reduce")
spec("index_copy", [C(F((4, 3)), A([2, 0]), F((2, 3)), dim=0), C(F((2, 4)), A([3, 0, 1]), F((2, 3)), dim=1)],
     _np_index_copy, tf=lambda x, i, s: x.index_copy(0, i, s))
spec("index_fill", [C(F((4, 3)), A([2, 0]), F(()), dim=0), C(F((2, 4)), A([3, 0, 3]), F(()), dim=1),
                    C(F((2, 4)), A([1]), 1.5, dim=1)],
     _np_index_fill, tf=lambda x, i, v: x.index_fill(0, i, v))
spec("put", [C(F((2, 3)), A([[0, 5], [4, 2]]), F((2, 2))), C(F((2, 3)), A([1, 1, 0]), F((3,)), accumulate=True),
             C(F((2, 3)), A([-1, 2]), F((2,)))],
     _np_put, tf=lambda x, i, s: x.put(i, s))
spec("masked_scatter", [C(F((2, 3)), A([[True, False, True], [False, True, True]], bool), F((6,))),
                        C(F((2, 3)), B((3,)), F((2, 4))), C(F((2, 3)), A(np.zeros((2, 3), bool), bool), F((0,)))],
     _np_masked_scatter, tf=lambda x, k, s: tp.masked_scatter(x, k, s))
spec("slice_scatter", [C(F((3, 5)), F((3, 2)), dim=1, start=1, stop=5, step=2),
                       C(F((3, 2)), F((1, 2)), dim=0, start=2, stop=3, step=1)],
     _np_slice_scatter, tf=lambda x, s: tp.slice_scatter(x, s, 1, 1, None, 2))
spec("select_scatter", [C(F((3, 4)), F((3,)), dim=1, index=2), C(F((2,)), F(()), dim=0, index=1)],
     _np_select_scatter, tf=lambda x, s: tp.select_scatter(x, s, 1, 2))
spec("diagonal_scatter", [C(F((3, 3)), F((3,)), offset=0, dim1=0, dim2=1),
                          C(F((3, 2, 4)), F((2, 2)), offset=2, dim1=0, dim2=2),
                          C(F((3, 4)), F((2,)), offset=-1, dim1=0, dim2=1)],
     _np_diagonal_scatter, tf=lambda x, s: tp.diagonal_scatter(x, s))
spec("unfold", [C(F((3, 7)), dim=1, size=3, step=2), C(F((5, 2)), dim=0, size=2, step=1), C(F(()), dim=0, size=1,
                                                                                              step=1)],
     _np_unfold, tf=lambda x: x.unfold(1, 3, 2))
spec("as_strided", [C(F((3, 4)), size=(2, 3), stride=(1, 2), storage_offset=1),
                    C(F((6,)), size=(3, 3), stride=(1, 1), storage_offset=0)],
     _np_as_strided, tf=lambda x: x.as_strided((2, 3), (1, 2), 1))


# -- searching and counting (not differentiable) --------------------------------------------------------------------
def _np_searchsorted(seq, values, right=False, out_int32=False):
    side = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, values)])
    return np.asarray(out, np.int32 if out_int32 else np.int64)


def _np_histc(x, bins, min, max):
    lo, hi = (min, max) if min != max else (x.min(), x.max())
    lo, hi = (lo - 1, hi + 1) if lo == hi else (lo, hi)
    return np.histogram(x, bins, (lo, hi))[0].astype(x.dtype)


def _np_histogram(x, edges, weight=None, density=False):
    return np.histogram(x, edges, weights=weight, density=density)[0].astype(x.dtype)


_SORTED = A([[1.0, 3.0, 5.0, 7.0], [0.0, 2.0, 2.0, 9.0]], np.float64)
spec("searchsorted", [C(A([1.0, 3.0, 5.0, 7.0], np.float64), A([[3.0, 6.0], [9.0, 0.0]], np.float64)),
                      C(_SORTED, A([[3.0, 7.5], [2.0, -1.0]], np.float64), right=True),
                      C(A([1, 3, 5], np.int64), A([3, 4], np.int64), out_int32=True)],
     _np_searchsorted, diff=False, tf=lambda s, v: tp.searchsorted(s, v))
spec("histc", [C(F((20,)), bins=5, min=-1.0, max=1.0), C(F((3, 4)), bins=3, min=0.0, max=0.0),
               C(A([2.0, 2.0], np.float64), bins=3, min=0.0, max=0.0)],
     _np_histc, diff=False, tf=lambda x: tp.histc(x, 5, -1.0, 1.0))
spec("histogram", [C(F((20,)), A([-2.0, -0.5, 0.0, 1.0, 2.0], np.float64)),
                   C(F((20,)), A([-1.0, 0.0, 1.5], np.float64), density=True)],
     _np_histogram, diff=False, tf=lambda x, e: tp.histogram(x, e)[0])
spec("histogram_weighted", [C(F((20,)), A([-2.0, -0.5, 0.0, 1.0, 2.0], np.float64), F((20,))),
                            C(F((20,)), A([-1.0, 0.0, 1.5], np.float64), F((20,)), density=True)],
     _np_histogram, diff=False, tf=lambda x, e, w: tp.histogram(x, e, weight=w)[0])
spec("isin", [C(A([[1, 2], [3, 4]]), A([4, 2, 9])), C(A([1.0, 2.5, np.nan], np.float64), A([2.5], np.float64),
                                                      invert=True)],
     lambda a, b, invert=False: np.isin(a, b, invert=invert), diff=False, tf=lambda a, b: tp.isin(a, b))
