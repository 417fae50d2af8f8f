"""Reductions (sums, extremes, norms, scans, softmax) and sorting."""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

import jax.numpy as jnp
import numpy as np

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._tensor import Tensor
from ..amp import full_precision
from ._args import _dim, _dims, _to_float, one_element_dims
from ._checks import tensor_arg

__all__ = [
    "all", "amax", "amin", "aminmax", "any", "argmax", "argmin", "argsort", "count_nonzero", "cummax",
    "cummin", "cumprod", "cumsum", "dist", "log_softmax", "logcumsumexp", "logsumexp", "max", "mean", "min",
    "msort", "nanmean", "nansum", "norm", "prod", "return_types", "softmax", "sort", "std", "std_mean", "sum",
    "topk", "var", "var_mean", "median", "kthvalue",
]


# -- reductions ---------------------------------------------------------------------------------------
@one_element_dims(0)
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over `dim` (int or tuple).

    Example:
        >>> tp.sum(tp.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=1)
        tensor([3., 7.])
    """
    d = _dims(dim, input._raw.ndim)
    jd = _dtype.to_jax_dtype(dtype)
    if jd is None and input._raw.dtype.kind in "biu" and input._raw.dtype != jnp.int64:
        jd = jnp.int64  # integer and bool sums accumulate in int64, as in PyTorch
    if d is None and keepdim and input._raw.ndim:  # (every dim reduced, kept as size 1)
        d = tuple(range(input._raw.ndim))
    if d is None:
        return dispatch(X.sum, (input,), (("dtype", jd),) if jd is not None else ())
    return dispatch(X.sum_dim, (input,), (("dim", d), ("keepdim", keepdim), ("dtype", jd)))


def _check_floating(input, name):
    if input._raw.dtype.kind in "iub":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_dtype.SCALAR_NAMES[input.dtype.name]}")


def _check_requested_floating(dtype, name):
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {_dtype.SCALAR_NAMES[dtype.name]}")


@one_element_dims(0)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over `dim`.

    Example:
        >>> tp.mean(tp.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=0)
        tensor([2., 3.])
    """
    if dtype is None:
        _check_floating(input, "mean")
    else:
        _check_requested_floating(dtype, "mean")
    d = _dims(dim, input._raw.ndim)
    jd = _dtype.to_jax_dtype(dtype)
    if d is None and keepdim and input._raw.ndim:  # (every dim reduced, kept as size 1)
        d = tuple(range(input._raw.ndim))
    if d is None:
        return dispatch(X.mean, (input,), (("dtype", jd),) if jd is not None else ())
    return dispatch(X.mean_dim, (input,), (("dim", d), ("keepdim", keepdim), ("dtype", jd)))


@one_element_dims(0)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum that treats NaN as zero (in `dtype`, when given).

    Example:
        >>> tp.nansum(tp.tensor([1.0, float("nan"), 3.0]))
        tensor(4.)
    """
    if dtype is not None:
        input = input.to(dtype)
    elif input._raw.dtype.kind in "biu" and input._raw.dtype != jnp.int64:
        input = input.to(_dtype.int64)
    return dispatch(X.nansum, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


@one_element_dims(0)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean that skips NaN elements (in `dtype`, when given).

    Example:
        >>> tp.nanmean(tp.tensor([1.0, float("nan"), 3.0]))
        tensor(2.)
    """
    if dtype is not None:
        _check_requested_floating(dtype, "nanmean")
        input = input.to(dtype)
    mask = ~isnan(input)
    return nansum(input, dim, keepdim) / sum(mask, dim, keepdim)


@one_element_dims(0)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of the elements, overall or along `dim`.

    Example:
        >>> tp.prod(tp.tensor([[1.0, 2.0], [3.0, 4.0]]), dim=1)
        tensor([ 2., 12.])
    """
    if dtype is not None:
        input = input.to(dtype)
    elif input._raw.dtype.kind in "biu" and input._raw.dtype != jnp.int64:
        input = input.to(_dtype.int64)  # as sums: integer products in int64
    d = _dims(dim, input.ndim)
    if d is None:
        return dispatch(X.prod, (input,))
    return dispatch(X.prod_dim, (input,), (("dim", d), ("keepdim", keepdim)))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _floating_or_complex(input) -> None:
    if input._raw.dtype.kind not in "fcV":
        raise RuntimeError("std and var only support floating point and complex dtypes")


def _moments(op, input, dim, unbiased, keepdim, correction):
    """`var`, `std` and their `_mean` forms: `dim` may be PyTorch's legacy `unbiased` flag."""
    if isinstance(dim, builtins.bool):
        unbiased, dim = dim, None
    _floating_or_complex(input)
    dims, correction = _dims(dim, input.ndim), _correction(unbiased, correction)
    shape = input._raw.shape
    if math.prod(shape if dims is None else (shape[d] for d in dims)) - correction <= 0:
        warnings.warn(f"{op.name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=4)
    return dispatch(op, (input,), (("dim", dims), ("correction", correction), ("keepdim", keepdim)))


@one_element_dims(0)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance (Bessel-corrected by default, `correction=0` for the population variance).

    Example:
        >>> tp.var(tp.tensor([1.0, 2.0, 3.0, 4.0]))
        tensor(1.6667)
    """
    return _moments(X.var, input, dim, unbiased, keepdim, correction)


@one_element_dims(0)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation (Bessel-corrected by default).

    Example:
        >>> tp.std(tp.tensor([1.0, 2.0, 3.0, 4.0]))
        tensor(1.2910)
    """
    return _moments(X.std, input, dim, unbiased, keepdim, correction)


@one_element_dims(0)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance and mean in one call, as a tuple `(var, mean)` (one graph node for both, as PyTorch's).

    Example:
        >>> tp.var_mean(tp.tensor([1.0, 2.0, 3.0, 4.0]))
        (tensor(1.6667), tensor(2.5000))
    """
    return _moments(X.var_mean, input, dim, unbiased, keepdim, correction)


@one_element_dims(0)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation and mean in one call, as a tuple `(std, mean)` (one graph node for both).

    Example:
        >>> tp.std_mean(tp.tensor([1.0, 2.0, 3.0, 4.0]))
        (tensor(1.2910), tensor(2.5000))
    """
    return _moments(X.std_mean, input, dim, unbiased, keepdim, correction)


return_types = type("return_types", (), {"__doc__": """The named tuples ops with two results return, as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> r = tp.tensor([[1.0, 5.0], [4.0, 2.0]]).max(dim=1)
        >>> isinstance(r, tp.return_types.max), r.values, r.indices
        (True, tensor([5., 4.]), tensor([1, 0]))
    """})
for _n in ["max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin"]:
    setattr(return_types, _n, namedtuple(_n, ["values", "indices"]))
return_types.frexp = namedtuple("frexp", ["mantissa", "exponent"])


def _nonempty(name: str, input, dim, whole_error=RuntimeError):
    """The reduced dim(s) of a reduction with no identity (max, argmin, ...), refusing empty ones as PyTorch does."""
    shape = input._raw.shape
    if dim is None:
        if input._raw.size == 0:
            raise whole_error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0." + (
                " Specify the reduction dim with the 'dim' argument." if whole_error is RuntimeError else ""))
        return None
    ds = _dims(dim, len(shape)) if isinstance(dim, (tuple, list)) else (_dim(dim, len(shape)),)
    for d in ds or ():
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return ds[0] if not isinstance(dim, (tuple, list)) else ds


@one_element_dims(0)
def max(input, dim=None, keepdim=False):
    """Largest element; `max(x, dim)` gives `(values, indices)`; `max(x, other)` is `maximum`.

    Example:
        >>> x = tp.tensor([[1.0, 5.0], [3.0, 2.0]])
        >>> tp.max(x)
        tensor(5.)
        >>> tp.max(x, dim=1)
        max(values=tensor([5., 3.]), indices=tensor([1, 0]))
    """
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    d = _nonempty("max", input, dim)
    if dim is None:
        return dispatch(X.max, (input,))
    return return_types.max(*dispatch(X.max_dim, (input,), (("dim", d), ("keepdim", keepdim))))


@one_element_dims(0)
def min(input, dim=None, keepdim=False):
    """Smallest element; `min(x, dim)` gives `(values, indices)`; `min(x, other)` is `minimum`.

    Example:
        >>> x = tp.tensor([[1.0, 5.0], [3.0, 2.0]])
        >>> tp.min(x)
        tensor(1.)
        >>> tp.min(x, dim=1)
        min(values=tensor([1., 2.]), indices=tensor([0, 1]))
    """
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    d = _nonempty("min", input, dim)
    if dim is None:
        return dispatch(X.min, (input,))
    return return_types.min(*dispatch(X.min_dim, (input,), (("dim", d), ("keepdim", keepdim))))


@one_element_dims(0)
def amax(input, dim=(), keepdim=False):
    """Largest values over `dim` (all dims by default); ties share the gradient evenly.

    Example:
        >>> tp.amax(tp.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=0)
        tensor([3., 5.])
    """
    _nonempty("amax", input, dim if dim not in ((), []) else None)
    return dispatch(X.amax, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


@one_element_dims(0)
def amin(input, dim=(), keepdim=False):
    """Smallest element, overall or along `dim`.

    Example:
        >>> tp.amin(tp.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=0)
        tensor([1., 2.])
    """
    _nonempty("amin", input, dim if dim not in ((), []) else None)
    return dispatch(X.amin, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


@one_element_dims(None)
def aminmax(input, *, dim=None, keepdim=False):
    """Smallest and largest element, overall or along `dim`, as the named tuple `(min, max)`.

    Example:
        >>> tp.aminmax(tp.tensor([3.0, 1.0, 2.0]))
        aminmax(min=tensor(1.), max=tensor(3.))
    """
    return namedtuple("aminmax", ["min", "max"])(amin(input, dim if dim is not None else (), keepdim),
                                                 amax(input, dim if dim is not None else (), keepdim))


@one_element_dims(0)
def argmax(input, dim=None, keepdim=False):
    """Index of the largest element, of the flattened tensor or along `dim` (the first one among ties).

    Example:
        >>> tp.argmax(tp.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
        tensor([1, 0])
    """
    d = _nonempty("argmax", input, dim, IndexError)
    if d is None:
        out = dispatch(X.argmax, (input.reshape(-1),), (("dim", 0),))
        return out.reshape((1,) * input.ndim) if keepdim else out
    return dispatch(X.argmax, (input,), (("dim", d), ("keepdim", keepdim)))


@one_element_dims(0)
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element, of the flattened tensor or along `dim` (the first one among ties).

    Example:
        >>> tp.argmin(tp.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=1)
        tensor([0, 1])
    """
    d = _nonempty("argmin", input, dim, IndexError)
    if d is None:
        out = dispatch(X.argmin, (input.reshape(-1),), (("dim", 0),))
        return out.reshape((1,) * input.ndim) if keepdim else out
    return dispatch(X.argmin, (input,), (("dim", d), ("keepdim", keepdim)))


@one_element_dims(0)
def all(input, dim=None, keepdim=False):
    """Whether every element is true (nonzero), overall or along `dim`.

    Example:
        >>> tp.all(tp.tensor([[True, False], [True, True]]), dim=1)
        tensor([False,  True])
    """
    if isinstance(dim, (list, tuple)) and not dim:  # (no dims: PyTorch reduces nothing)
        out = input != 0
    else:
        out = dispatch(X.all, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))
    return out.to(_dtype.uint8) if input._raw.dtype == jnp.uint8 else out  # (PyTorch keeps uint8 here)


@one_element_dims(0)
def any(input, dim=None, keepdim=False):
    """Whether any element is true (nonzero), overall or along `dim`.

    Example:
        >>> tp.any(tp.tensor([[True, False], [False, False]]), dim=1)
        tensor([ True, False])
    """
    if isinstance(dim, (list, tuple)) and not dim:  # (no dims: PyTorch reduces nothing)
        out = input != 0
    else:
        out = dispatch(X.any, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))
    return out.to(_dtype.uint8) if input._raw.dtype == jnp.uint8 else out


@one_element_dims(0)
def count_nonzero(input, dim=None):
    """Number of nonzero elements, overall or along `dim`.

    Example:
        >>> tp.count_nonzero(tp.tensor([[0, 1], [2, 3]]), dim=0)
        tensor([1, 2])
    """
    return dispatch(X.count_nonzero, (input,), (("dim", _dims(dim, input.ndim)),))


@one_element_dims(0)
def logsumexp(input, dim, keepdim=False):
    """`log(sum(exp(input), dim))`, computed stably.

    Example:
        >>> tp.logsumexp(tp.tensor([[0.0, 0.0], [1.0, 2.0]]), dim=1)
        tensor([0.6931, 2.3133])
    """
    return dispatch(X.logsumexp, (_to_float(input),), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


@one_element_dims(1)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector `p`-norm over `dim` (all elements by default). As PyTorch's: `p="fro"` is the 2-norm when
    `dim` names at most two dimensions; other strings ("nuc") and "fro" over more dimensions are
    `tp.linalg.matrix_norm` (over `dim`, or every dimension).

    Example:
        >>> tp.norm(tp.tensor([3.0, 4.0]))
        tensor(5.)
        >>> tp.norm(tp.tensor([[3.0, 0.0], [0.0, 4.0]]), p="nuc")
        tensor(7.)
    """
    if isinstance(p, str):
        if p != "fro" or not (dim is None or isinstance(dim, int) or len(dim) <= 2):
            from ..linalg import matrix_norm

            dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else dim
            return matrix_norm(input, p, dims, keepdim, dtype=dtype)
        p = 2.0
    elif p is None:
        p = 2.0
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(X.norm, (_to_float(input),), (("p", builtins.float(p)), ("dim", _dims(dim, input.ndim)),
                                                  ("keepdim", keepdim)))


@full_precision(devices=("cuda",))
def dist(input, other, p=2):
    """The `p`-norm of `input - other`.

    Example:
        >>> tp.dist(tp.tensor([0.0, 0.0]), tp.tensor([3.0, 4.0]))
        tensor(5.)
    """
    tensor_arg("dist", "other", other)
    diff = input - other
    if diff._raw.dtype.kind in "biu":  # (the dtype both promote to: dist of an integer and a float tensor is fine)
        raise RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                           f"{_dtype.SCALAR_NAMES[diff.dtype.name]} instead.")
    return norm(diff, p)


@one_element_dims(0)
def cumsum(input, dim, *, dtype=None):
    """Running sum along `dim`.

    Example:
        >>> tp.cumsum(tp.tensor([1.0, 2.0, 3.0, 4.0]), dim=0)
        tensor([ 1.,  3.,  6., 10.])
    """
    if dtype is not None:
        input = input.to(dtype)
    elif input._raw.dtype.kind in "biu" and input._raw.dtype != jnp.int64:
        input = input.to(_dtype.int64)  # integer scans accumulate in int64, as in PyTorch
    return dispatch(X.cumsum, (input,), (("dim", _dim(dim, input.ndim)),))


@one_element_dims(0)
def cumprod(input, dim, *, dtype=None):
    """Running product along `dim`.

    Example:
        >>> tp.cumprod(tp.tensor([1.0, 2.0, 3.0, 4.0]), dim=0)
        tensor([ 1.,  2.,  6., 24.])
    """
    if dtype is not None:
        input = input.to(dtype)
    elif input._raw.dtype.kind in "biu" and input._raw.dtype != jnp.int64:
        input = input.to(_dtype.int64)  # integer scans accumulate in int64, as in PyTorch
    return dispatch(X.cumprod, (input,), (("dim", _dim(dim, input.ndim)),))


@one_element_dims(0)
def cummax(input, dim):
    """Running maximum along `dim`: `(values, indices)`, each index naming the last element equal to its value.

    Example:
        >>> tp.cummax(tp.tensor([1.0, 3.0, 2.0, 4.0]), dim=0)
        cummax(values=tensor([1., 3., 3., 4.]), indices=tensor([0, 1, 1, 3]))
    """
    if input._raw.dtype.kind == "b":
        values, indices = cummax(input.to(_dtype.int8), dim)
        return return_types.cummax(values.to(_dtype.bool), indices)
    return return_types.cummax(*dispatch(X.cummax, (input,), (("dim", _dim(dim, input.ndim)),)))


@one_element_dims(0)
def cummin(input, dim):
    """Running minimum along `dim`: `(values, indices)`, like `cummax`.

    Example:
        >>> tp.cummin(tp.tensor([3.0, 1.0, 2.0, 0.0]), dim=0)
        cummin(values=tensor([3., 1., 1., 0.]), indices=tensor([0, 1, 1, 3]))
    """
    if input._raw.dtype.kind == "b":
        values, indices = cummin(input.to(_dtype.int8), dim)
        return return_types.cummin(values.to(_dtype.bool), indices)
    return return_types.cummin(*dispatch(X.cummin, (input,), (("dim", _dim(dim, input.ndim)),)))


@one_element_dims(0)
def logcumsumexp(input, dim=None):
    """Running `log(sum(exp(input)))` along `dim` (required), computed stably.

    Example:
        >>> tp.logcumsumexp(tp.tensor([0.0, 0.0, 0.0]), dim=0)
        tensor([0.0000, 0.6931, 1.0986])
    """
    if dim is None:
        raise TypeError('logcumsumexp() missing 1 required positional arguments: "dim"')
    return dispatch(X.logcumsumexp, (input,), (("dim", _dim(dim, input.ndim)),))


@one_element_dims(0)
def softmax(input, dim, dtype=None):
    """`exp(x) / sum(exp(x), dim)`, computed stably.

    Example:
        >>> tp.softmax(tp.tensor([1.0, 2.0, 3.0]), dim=0)
        tensor([0.0900, 0.2447, 0.6652])
    """
    input, d = _softmax_input("softmax", input, dim, dtype)
    return dispatch(X.softmax, (input,), (("dim", d),))


@one_element_dims(0)
def log_softmax(input, dim, dtype=None):
    """`log(softmax(x, dim))`, computed stably.

    Example:
        >>> tp.log_softmax(tp.tensor([1.0, 2.0, 3.0]), dim=0)
        tensor([-2.4076, -1.4076, -0.4076])
    """
    input, d = _softmax_input("log_softmax", input, dim, dtype)
    return dispatch(X.log_softmax, (input,), (("dim", d),))


def _softmax_input(name, input, dim, dtype):
    """The input (cast to `dtype`) and the normalised dim; integer, bool and complex inputs raise PyTorch's
    error, naming the kernel it would run (the last dimension has its own)."""
    if dtype is not None:
        input = input.to(dtype)
    d = _dim(dim, input.ndim)
    dt = str(input._raw.dtype)
    if input._raw.dtype.kind in "biuc":
        kernel = f"{name}_lastdim_kernel_impl" if input.ndim == 0 or d == input.ndim - 1 else f"{name}_kernel_impl"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.SCALAR_NAMES.get(dt, dt)}\'')
    return input, d


# -- sorting -------------------------------------------------------------------------------------------
@one_element_dims(0, default=-1)
def sort(input, dim=-1, descending=False, stable=False):
    """Sort along `dim` (the last by default); the named tuple `(values, indices)`.

    Example:
        >>> tp.sort(tp.tensor([3.0, 1.0, 2.0]), descending=True)
        sort(values=tensor([3., 2., 1.]), indices=tensor([0, 2, 1]))
    """
    return return_types.sort(*dispatch(X.sort, (input,), (("dim", _dim(dim, input.ndim)), ("descending", descending))))


@one_element_dims(0, default=-1)
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort `input` along `dim`; `stable=True` keeps the order of equal elements.

    Example:
        >>> tp.argsort(tp.tensor([3.0, 1.0, 2.0]))
        tensor([1, 2, 0])
    """
    return dispatch(X.argsort, (input,), (("dim", _dim(dim, input.ndim)), ("descending", descending)))


@one_element_dims(1, default=-1)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The `k` largest (or, with `largest=False`, smallest) elements along `dim`, as the named tuple `(values, indices)`.

    Example:
        >>> tp.topk(tp.tensor([1.0, 5.0, 3.0, 4.0]), 2)
        topk(values=tensor([5., 4.]), indices=tensor([1, 3]))
    """
    d = _dim(dim, input.ndim)
    if not 0 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError("selected index k out of range")
    return return_types.topk(*dispatch(X.topk, (input,), (("k", int(k)), ("dim", _dim(dim, input.ndim)),
                                                          ("largest", largest))))


@one_element_dims(0)
def median(input, dim=None, keepdim=False):
    """The lower median of all elements (ties share the gradient evenly), or `(values, indices)` along `dim`.

    Example:
        >>> import tapeflow as tp
        >>> tp.tensor([1.0, 3.0, 2.0, 4.0]).median()
        tensor(2.)

    Example:
        >>> tp.median(tp.tensor([3.0, 1.0, 4.0, 2.0]))
        tensor(2.)
    """
    if dim is None:
        if input._raw.size == 0:
            return _empty_median(input)
        return dispatch(X.median, (input,))
    d = _nonempty("median", input, dim)
    return return_types.median(*dispatch(X.median_dim, (input,), (("dim", d), ("keepdim", keepdim))))


def _empty_median(input):
    """PyTorch's median of no elements: NaN (the smallest integer for an integer tensor)."""
    from .._factories import full

    dt = input._raw.dtype
    fill = float("nan") if dt.kind in "fc" else int(np.iinfo(dt).min) if dt.kind in "iu" else False
    return full((), fill, dtype=input.dtype)


@one_element_dims(1, default=-1)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The `k`-th smallest element along `dim` and its index: `(values, indices)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.tensor([3.0, 1.0, 2.0]).kthvalue(2)
        kthvalue(values=tensor(2.), indices=tensor(2))

    Example:
        >>> tp.kthvalue(tp.tensor([3.0, 1.0, 4.0, 2.0]), 2)
        kthvalue(values=tensor(2.), indices=tensor(3))
    """
    d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return return_types.kthvalue(*dispatch(X.kthvalue, (input,), (("k", int(k)), ("dim", d), ("keepdim", keepdim))))


def msort(input):
    """`input` sorted along its first dimension.

    Example:
        >>> tp.msort(tp.tensor([[3.0, 1.0], [2.0, 4.0]]))
        tensor([[2., 1.],
                [3., 4.]])
    """
    return sort(input, 0).values


# Sibling modules import each other; importing at the end lets every name above exist first.
from .elementwise import isnan, maximum, minimum  # noqa: E402
