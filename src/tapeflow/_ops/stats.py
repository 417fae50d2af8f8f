"""Order statistics: `nanmedian`, `mode`, `quantile`, `nanquantile`; and `renorm`.

Quantiles are compositions, as in PyTorch: sort, gather the two neighbouring order statistics, `lerp` between
them; so their gradients are those ops' (ties go where the sort put them).
"""

from __future__ import annotations

import numpy as np

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._tensor import Tensor
from ._args import _dim, _t
from .reduce import _nonempty, return_types

__all__ = ["nanmedian", "mode", "quantile", "nanquantile", "renorm"]


def nanmedian(input, dim=None, keepdim=False):
    """`median` ignoring NaN: the lower median of the other elements (NaN only where all are NaN).

    With `dim`, the named tuple `(values, indices)` along it.

    Example:
        >>> tp.nanmedian(tp.tensor([1.0, float("nan"), 3.0, 2.0]))
        tensor(2.)
        >>> tp.tensor([[float("nan"), 1.0], [4.0, 2.0]]).nanmedian(dim=1)
        nanmedian(values=tensor([1., 2.]), indices=tensor([1, 1]))
    """
    input = _t(input)
    if dim is None:  # (NaN for an empty tensor, as PyTorch)
        if input._raw.size == 0:
            from .reduce import _empty_median

            return _empty_median(input)
        return dispatch(X.nanmedian, (input,))
    d = _nonempty("nanmedian", input, dim) if input.ndim else 0
    if input.ndim == 0:
        return return_types.nanmedian(input.clone(), dispatch(X.to_dtype, (input * 0,), (("dtype", np.int64),)))
    return return_types.nanmedian(*dispatch(X.nanmedian_dim, (input,), (("dim", d), ("keepdim", keepdim))))


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along `dim` (the smallest of equally frequent ones) and the last index holding
    it, as the named tuple `(values, indices)`.

    Example:
        >>> tp.mode(tp.tensor([1.0, 2.0, 2.0, 1.0, 3.0]))
        mode(values=tensor(1.), indices=tensor(3))
    """
    input = _t(input)
    if input.ndim == 0:
        _dim(dim, 0)  # (dims 0 / -1 only)
        return return_types.mode(input.clone(), dispatch(X.to_dtype, (input * 0,), (("dtype", np.int64),)))
    d = _nonempty("mode", input, dim)
    return return_types.mode(*dispatch(X.mode, (input,), (("dim", d), ("keepdim", keepdim))))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    from . import elementwise as E
    from . import index as I
    from . import reduce as R
    from . import shape as S

    input = _t(input)
    if input._raw.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input._raw.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")  # (also nanquantile)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qt = Tensor._wrap(np.asarray([q], input._raw.dtype))
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._raw.dtype != input._raw.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qv = np.asarray(q.detach().numpy())
        if not ((qv >= 0) & (qv <= 1)).all():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        scalar_q = q.ndim == 0
        qt = q.detach().reshape(-1)
    ndim = input.ndim
    if dim is None:
        x = input.reshape(-1)
    else:
        d = _dim(dim, ndim)
        x = S.movedim(input, d, -1) if ndim else input.reshape(1)
    values = R.sort(x, -1).values
    n = values.shape[-1]
    lead = tuple(values.shape[:-1])
    qs = qt.reshape((1,) * len(lead) + (-1,))
    with_nan = E.isnan(values)
    if ignore_nan:  # the rank among the non-NaN values (0 where all are NaN: the quantile is then NaN)
        ranks = qs * ((~with_nan).sum(-1, keepdim=True) - 1).clamp(min=0).to(values.dtype)
    else:  # a NaN (sorted last) makes the quantile NaN
        ranks = E.where(with_nan.any(-1, keepdim=True), float(n - 1), qs * float(n - 1))
    if interpolation == "lower":
        pick = ranks.floor()
    elif interpolation == "higher":
        pick = ranks.ceil()
    elif interpolation == "nearest":
        pick = ranks.round()
    else:
        pick = None
    shape_q = lead + (qt.shape[0],)
    if pick is not None:
        out = I.gather(values, -1, pick.to(_dtype.int64).expand(shape_q))
    else:
        below = ranks.floor()
        above = ranks.ceil()
        weights = ranks * 0 + 0.5 if interpolation == "midpoint" else ranks - below
        lo = I.gather(values, -1, below.to(_dtype.int64).expand(shape_q))
        hi = I.gather(values, -1, above.to(_dtype.int64).expand(shape_q))
        out = E.lerp(lo, hi, weights.expand(shape_q).to(values.dtype))
    if keepdim:
        if dim is None:
            out = out.reshape((1,) * ndim + (-1,))
        elif ndim:
            out = S.unsqueeze(out, d)
    out = S.movedim(out, -1, 0)
    return out[0] if scalar_q else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The `q`-th quantiles of `input` (over all elements, or along `dim`); `q` a number or a 1-d tensor,
    whose values then index the result's first dimension. A NaN among the values makes the quantile NaN.

    `interpolation` between the two order statistics around the exact rank `q * (n - 1)`: `linear`, `lower`,
    `higher`, `midpoint` or `nearest` (ties to even).

    Example:
        >>> tp.quantile(tp.tensor([1.0, 2.0, 3.0, 4.0]), 0.4)
        tensor(2.2000)
        >>> tp.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 5.0]]).quantile(tp.tensor([0.5, 1.0]), dim=1)
        tensor([[2., 5.],
                [3., 6.]])
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """`quantile` ignoring NaN (NaN only where every value is NaN).

    Example:
        >>> tp.nanquantile(tp.tensor([1.0, float("nan"), 3.0]), 0.5)
        tensor(2.)
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def renorm(input, p, dim, maxnorm):
    """Each slice along `dim` whose `p`-norm exceeds `maxnorm` scaled down to norm `maxnorm` (`norm + 1e-7`
    in the divisor, as PyTorch); the other slices unchanged.

    Example:
        >>> tp.renorm(tp.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    from .. import linalg
    from . import elementwise as E

    input = _t(input)
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norm = linalg.vector_norm(input, p, others, keepdim=True)
    factor = E.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor
