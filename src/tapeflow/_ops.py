"""The `tapeflow` op namespace (`tp.exp`, `tp.sum`, `tp.matmul`, ...).

Every function takes Tensors first and is also attached to `Tensor` as a
method (see `_methods.py`). Functions here normalise arguments (dims,
scalars, dtypes) into static parameters and call the dispatcher; the maths
is in `xla_ops`.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import jax.numpy as jnp
import numpy as np

import xla_ops as X

from . import _dtype
from ._dispatch import dispatch, inplace, view
from ._tensor import Tensor, as_tensor

# -- argument normalisation ------------------------------------------------------------------


def _dim(d: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def _dims(dim, ndim: int):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        return tuple(sorted({_dim(d, ndim) for d in dim}))
    return (_dim(dim, ndim),)


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


_FLOAT_SCALAR = (builtins.float,)


def _operand(x: Tensor, y):
    """A Python float meeting an integer tensor becomes a default-dtype float (PyTorch promotion)."""
    if type(y) is builtins.float and x._data.dtype.kind in "iub":
        return np.asarray(y, _dtype.get_default_dtype().jax)
    if isinstance(y, (np.ndarray, list)):
        return as_tensor(y)
    return y


def _to_float(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float dtype for floating-point maths."""
    if x._data.dtype.kind in "iub":
        return dispatch(X.to_dtype, (x,), (("dtype", _dtype.get_default_dtype().jax),))
    return x


# -- arithmetic ---------------------------------------------------------------------------------
def add(input, other, *, alpha=1):
    """`input + alpha * other`, broadcasting."""
    if not isinstance(input, Tensor):
        input, other = _t(input), other
    return dispatch(X.add, (input, _operand(input, other)), (("alpha", alpha),) if alpha != 1 else ())


def sub(input, other, *, alpha=1):
    """`input - alpha * other`, broadcasting."""
    input = _t(input)
    return dispatch(X.sub, (input, _operand(input, other)), (("alpha", alpha),) if alpha != 1 else ())


subtract = sub


def rsub(input, other, *, alpha=1):
    input = _t(input)
    if alpha != 1:
        return sub(other, input * alpha)
    return dispatch(X.rsub, (input, _operand(input, other)))


def mul(input, other):
    """Elementwise product, broadcasting."""
    input = _t(input)
    return dispatch(X.mul, (input, _operand(input, other)))


multiply = mul


def div(input, other, *, rounding_mode=None):
    """True division (integer inputs give floats); `rounding_mode="trunc"|"floor"` rounds."""
    input = _t(input)
    if rounding_mode is not None:
        if rounding_mode == "floor":
            return floor_divide(input, other)
        if rounding_mode == "trunc":
            return trunc(div(input, other)).to(_result_dtype(input, other))  # noqa: F821
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")
    if input._data.dtype.kind in "iub" and (not isinstance(other, Tensor) or other._data.dtype.kind in "iub") \
            and type(other) is not builtins.float:
        input = _to_float(input)
    return dispatch(X.div, (input, _operand(input, other)))


divide = true_divide = div


def _result_dtype(a, b):
    return _dtype.from_jax_dtype(jnp.result_type(a._data if isinstance(a, Tensor) else a,
                                                 b._data if isinstance(b, Tensor) else b))


def floor_divide(input, other):
    input = _t(input)
    return dispatch(X.floor_divide, (input, _operand(input, other)))


def rdiv(input, other):
    input = _t(input)
    return div(as_tensor(other, dtype=input.dtype if input.dtype.is_floating_point else None), input)


def pow(input, exponent):
    """`input ** exponent`; a Python-number exponent records `PowBackward0`."""
    if not isinstance(input, Tensor):
        exponent = _t(exponent)
        return dispatch(X.rpow, (exponent, _operand(exponent, input)))
    if isinstance(exponent, Tensor):
        return dispatch(X.pow, (input, exponent))
    if exponent == 2 and input._data.dtype.kind in "fc":
        return dispatch(X.square, (input,))
    return dispatch(X.pow_scalar, (input, _operand(input, exponent)))


def float_power(input, exponent):
    return pow(_t(input).double(), exponent)


def remainder(input, other):
    input = _t(input)
    return dispatch(X.remainder, (input, _operand(input, other)))


def fmod(input, other):
    input = _t(input)
    return dispatch(X.fmod, (input, _operand(input, other)))


def atan2(input, other):
    return dispatch(X.atan2, (_to_float(_t(input)), _t(other)))


arctan2 = atan2


def hypot(input, other):
    return dispatch(X.hypot, (_t(input), _t(other)))


def maximum(input, other):
    return dispatch(X.maximum, (_t(input), _t(other)))


def minimum(input, other):
    return dispatch(X.minimum, (_t(input), _t(other)))


fmax, fmin = maximum, minimum


def neg(input):
    return dispatch(X.neg, (input,))


negative = neg


def positive(input):
    return input


def lerp(input, end, weight):
    return dispatch(X.lerp, (input, end, weight))


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * tensor1 / tensor2


# -- unary maths (integer inputs promote to float where the result is fractional) -----------------
def _unary(op, floating: bool, name: str):
    if floating:
        def f(input):
            return dispatch(op, (_to_float(input),))
    else:
        def f(input):
            return dispatch(op, (input,))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise `{name}`. Example: `tp.{name}(tp.tensor([0.5]))`."
    return f


_FLOATING = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
             "tan", "tanh", "sigmoid", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf",
             "erfc", "erfinv", "lgamma", "digamma", "logit"]
_KEEP = ["abs", "sign", "floor", "ceil", "trunc", "frac", "relu", "square"]
for _name in _FLOATING + _KEEP:
    globals()[_name] = _unary(getattr(X, _name), _name in _FLOATING, _name)
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821
absolute = abs  # noqa: F821
fix = trunc  # noqa: F821


def round(input, *, decimals: int = 0):
    return dispatch(X.round, (input,), (("decimals", decimals),) if decimals else ())


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return dispatch(X.nan_to_num, (input,), (("nan", nan), ("posinf", posinf), ("neginf", neginf)))


def clamp(input, min=None, max=None):
    """Clamp into [min, max]; bounds may be numbers or tensors. The gradient passes where min <= x <= max."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return dispatch(X.clamp, (input, _operand(input, min), _operand(input, max)))


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def where(condition, input=None, other=None):
    """`input` where `condition` holds, else `other` (broadcasting). One argument: `nonzero(as_tuple=True)`."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = _t(condition)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = as_tensor(input)
    ref = input if isinstance(input, Tensor) else other
    return dispatch(X.where, (cond, _operand(ref, input), _operand(ref, other)))


def masked_fill(input, mask, value):
    """`value` where `mask` is true."""
    return dispatch(X.masked_fill, (input, _t(mask), value))


# -- comparisons and logic (never differentiable) -------------------------------------------------
def _cmp(op, name):
    def f(input, other):
        input = _t(input)
        return dispatch(op, (input, _operand(input, other)))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise `{name}`, a bool tensor."
    return f


for _name in ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and",
              "bitwise_or", "bitwise_xor"]:
    globals()[_name] = _cmp(getattr(X, _name), _name)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne  # noqa: F821


def logical_not(input):
    return dispatch(X.logical_not, (input,))


def bitwise_not(input):
    return dispatch(X.bitwise_not, (input,))


def isnan(input):
    return dispatch(X.isnan, (input,))


def isinf(input):
    return dispatch(X.isinf, (input,))


def isfinite(input):
    return dispatch(X.isfinite, (input,))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return dispatch(X.isclose, (input, _t(other)), (("rtol", rtol), ("atol", atol), ("equal_nan", equal_nan)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> builtins.bool:
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other) -> builtins.bool:
    return tuple(input.shape) == tuple(other.shape) and builtins.bool((input == other).all())


# -- dtype and copies ------------------------------------------------------------------------------
def clone(input, *, memory_format=None):
    """A copy with its own storage; gradients flow back to `input`."""
    return dispatch(X.clone, (input,))


def to_dtype(input, dtype):
    jd = _dtype.to_jax_dtype(dtype)
    if input._data.dtype == jd:
        return input
    return dispatch(X.to_dtype, (input,), (("dtype", jd),))


# -- reductions ---------------------------------------------------------------------------------------
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over `dim` (int or tuple)."""
    d = _dims(dim, input._data.ndim)
    jd = _dtype.to_jax_dtype(dtype)
    if d is None:
        return dispatch(X.sum, (input,), (("dtype", jd),) if jd is not None else ())
    return dispatch(X.sum_dim, (input,), (("dim", d), ("keepdim", keepdim), ("dtype", jd)))


def _check_floating(input, name):
    if input._data.dtype.kind in "iub":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {input.dtype.name.capitalize()}. Convert first, e.g. x.float().")


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over `dim`."""
    if dtype is None:
        _check_floating(input, "mean")
    d = _dims(dim, input._data.ndim)
    jd = _dtype.to_jax_dtype(dtype)
    if d is None:
        return dispatch(X.mean, (input,), (("dtype", jd),) if jd is not None else ())
    return dispatch(X.mean_dim, (input,), (("dim", d), ("keepdim", keepdim), ("dtype", jd)))


def nansum(input, dim=None, keepdim=False):
    return dispatch(X.nansum, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


def nanmean(input, dim=None, keepdim=False):
    mask = ~isnan(input)
    return nansum(input, dim, keepdim) / sum(mask, dim, keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(X.prod, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance (Bessel-corrected by default, `correction=0` for the population variance)."""
    if isinstance(dim, builtins.bool):
        unbiased, dim = dim, None
    return dispatch(X.var, (input,), (("dim", _dims(dim, input.ndim)), ("correction", _correction(unbiased, correction)),
                                      ("keepdim", keepdim)))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation (Bessel-corrected by default)."""
    if isinstance(dim, builtins.bool):
        unbiased, dim = dim, None
    return dispatch(X.std, (input,), (("dim", _dims(dim, input.ndim)), ("correction", _correction(unbiased, correction)),
                                      ("keepdim", keepdim)))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


return_types = type("return_types", (), {})
for _n in ["max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax"]:
    setattr(return_types, _n, namedtuple(_n, ["values", "indices"]))


def max(input, dim=None, keepdim=False, *, out=None):
    """Largest element; `max(x, dim)` gives `(values, indices)`; `max(x, other)` is `maximum`."""
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    if dim is None:
        return dispatch(X.max, (input,))
    d = _dim(dim, input.ndim)
    return return_types.max(*dispatch(X.max_dim, (input,), (("dim", d), ("keepdim", keepdim))))


def min(input, dim=None, keepdim=False, *, out=None):
    """Smallest element; `min(x, dim)` gives `(values, indices)`; `min(x, other)` is `minimum`."""
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    if dim is None:
        return dispatch(X.min, (input,))
    d = _dim(dim, input.ndim)
    return return_types.min(*dispatch(X.min_dim, (input,), (("dim", d), ("keepdim", keepdim))))


def amax(input, dim=(), keepdim=False):
    """Largest values over `dim` (all dims by default); ties share the gradient evenly."""
    return dispatch(X.amax, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


def amin(input, dim=(), keepdim=False):
    return dispatch(X.amin, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


def aminmax(input, *, dim=None, keepdim=False):
    return namedtuple("aminmax", ["min", "max"])(amin(input, dim if dim is not None else (), keepdim),
                                                 amax(input, dim if dim is not None else (), keepdim))


def argmax(input, dim=None, keepdim=False):
    d = None if dim is None else _dim(dim, input.ndim)
    if d is None:
        return dispatch(X.argmax, (input.reshape(-1),), (("dim", 0),))
    return dispatch(X.argmax, (input,), (("dim", d), ("keepdim", keepdim)))


def argmin(input, dim=None, keepdim=False):
    d = None if dim is None else _dim(dim, input.ndim)
    if d is None:
        return dispatch(X.argmin, (input.reshape(-1),), (("dim", 0),))
    return dispatch(X.argmin, (input,), (("dim", d), ("keepdim", keepdim)))


def all(input, dim=None, keepdim=False):
    return dispatch(X.all, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


def any(input, dim=None, keepdim=False):
    return dispatch(X.any, (input,), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


def count_nonzero(input, dim=None):
    return dispatch(X.count_nonzero, (input,), (("dim", _dims(dim, input.ndim)),))


def logsumexp(input, dim, keepdim=False):
    """`log(sum(exp(input), dim))`, computed stably."""
    return dispatch(X.logsumexp, (_to_float(input),), (("dim", _dims(dim, input.ndim)), ("keepdim", keepdim)))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over `dim` (all elements by default); `p="fro"` is the 2-norm."""
    if p in ("fro", None):
        p = 2.0
    if p == "nuc":
        raise RuntimeError("norm(p='nuc') is not supported; use tapeflow.linalg-free formulations (svd) instead")
    return dispatch(X.norm, (_to_float(input),), (("p", builtins.float(p)), ("dim", _dims(dim, input.ndim)),
                                                  ("keepdim", keepdim)))


def dist(input, other, p=2):
    return norm(input - other, p)


def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(X.cumsum, (input,), (("dim", _dim(dim, input.ndim)),))


def cumprod(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(X.cumprod, (input,), (("dim", _dim(dim, input.ndim)),))


def logcumsumexp(input, dim):
    return dispatch(X.logcumsumexp, (input,), (("dim", _dim(dim, input.ndim)),))


def softmax(input, dim, dtype=None):
    """`exp(x) / sum(exp(x), dim)`, computed stably."""
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(X.softmax, (_to_float(input),), (("dim", _dim(dim, input.ndim)),))


def log_softmax(input, dim, dtype=None):
    """`log(softmax(x, dim))`, computed stably."""
    if dtype is not None:
        input = input.to(dtype)
    return dispatch(X.log_softmax, (_to_float(input),), (("dim", _dim(dim, input.ndim)),))


# -- sorting -------------------------------------------------------------------------------------------
def sort(input, dim=-1, descending=False, stable=False):
    return return_types.sort(*dispatch(X.sort, (input,), (("dim", _dim(dim, input.ndim)), ("descending", descending))))


def argsort(input, dim=-1, descending=False, stable=False):
    return dispatch(X.argsort, (input,), (("dim", _dim(dim, input.ndim)), ("descending", descending)))


def topk(input, k, dim=-1, largest=True, sorted=True):
    return return_types.topk(*dispatch(X.topk, (input,), (("k", int(k)), ("dim", _dim(dim, input.ndim)),
                                                          ("largest", largest))))


def msort(input):
    return sort(input, 0).values


# -- matrix products ---------------------------------------------------------------------------------------
def matmul(input, other):
    """Matrix product with NumPy's rules (vectors, batches, broadcasting)."""
    a, b = input._data.ndim, other._data.ndim
    if a == 2 and b == 2:
        return dispatch(X.mm, (input, other))
    if a == 1 and b == 1:
        return dispatch(X.dot, (input, other))
    if a == 2 and b == 1:
        return dispatch(X.mv, (input, other))
    if a == 3 and b == 3 and input._data.shape[0] == other._data.shape[0]:
        return dispatch(X.bmm, (input, other))
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    return dispatch(X.matmul, (input, other))


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.ndim}D and {mat2.ndim}D")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    return dispatch(X.mm, (input, mat2))


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {input.ndim}D and {mat2.ndim}D")
    return dispatch(X.bmm, (input, mat2))


def mv(input, vec):
    return dispatch(X.mv, (input, vec))


def dot(input, other):
    return dispatch(X.dot, (input, other))


inner = dot


def outer(input, vec2):
    return dispatch(X.outer, (input, vec2))


ger = outer


def einsum(equation: str, *operands):
    """Einstein summation, e.g. `tp.einsum("ij,jk->ik", a, b)`."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return dispatch(X.einsum, tuple(operands), (("equation", equation),))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    out = mm(mat1, mat2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    out = bmm(batch1, batch2)
    if alpha != 1:
        out = out * alpha
    return out + (input if beta == 1 else input * beta)


def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        la = "".join(chr(97 + i) for i in range(a.ndim))
        lb = la[a.ndim - dims:] + "".join(chr(97 + a.ndim + i) for i in range(b.ndim - dims))
        out = la[: a.ndim - dims] + lb[dims:]
        return einsum(f"{la},{lb}->{out}", a, b)
    raise TypeError("tensordot: pass dims as an int")


def trace(input):
    return diagonal(input).sum()


# -- shape ops (views alias their input) --------------------------------------------------------------------
def _infer_shape(shape, numel):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif int(np.prod(shape, dtype=np.int64)) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def reshape(input, *shape):
    """The same data with a new shape (a view); one dimension may be -1."""
    s = _infer_shape(shape, input._data.size)
    return view(input, X.reshape, (("shape", s),))


def view_as(input, other):
    return reshape(input, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.ndim
    if nd == 0:
        return reshape(input, 1)
    s, e = _dim(start_dim, nd), _dim(end_dim, nd)
    shp = input._data.shape
    return reshape(input, shp[:s] + (int(np.prod(shp[s:e + 1], dtype=np.int64)),) + shp[e + 1:])


def unflatten(input, dim, sizes):
    d = _dim(dim, input.ndim)
    shp = input._data.shape
    return reshape(input, shp[:d] + tuple(sizes) + shp[d + 1:])


def ravel(input):
    return reshape(input, -1)


def permute(input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    nd = input.ndim
    d = tuple(_dim(i, nd) for i in dims)
    if sorted(d) != list(range(nd)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
                           f"len(dims) = {len(dims)}" if len(d) != nd else f"permute(): repeated dim in {list(dims)}")
    return view(input, X.permute, (("dims", d),))


def transpose(input, dim0, dim1):
    nd = input.ndim
    return view(input, X.transpose, (("dim0", _dim(dim0, nd)), ("dim1", _dim(dim1, nd))))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return view(input, X.t)


def adjoint(input):
    return transpose(input, -2, -1)


def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    nd = input.ndim
    perm = [i for i in range(nd) if i not in [_dim(s, nd) for s in src]]
    for d, s in sorted(zip([_dim(d, nd) for d in dst], [_dim(s, nd) for s in src])):
        perm.insert(d, s)
    return permute(input, perm)


moveaxis = movedim


def expand(input, *sizes):
    """Broadcast to `sizes` (a view; -1 keeps a dimension)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shp = input._data.shape
    lead = len(sizes) - len(shp)
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(shp)})")
    new = tuple(shp[i - lead] if s == -1 and i >= lead else int(s) for i, s in enumerate(sizes))
    for i, n in enumerate(shp):
        if n != 1 and n != new[i + lead]:
            raise RuntimeError(f"The expanded size of the tensor ({new[i + lead]}) must match the existing size ({n}) "
                               f"at non-singleton dimension {i + lead}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shp)}")
    return view(input, X.expand, (("shape", new),))


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def broadcast_tensors(*tensors):
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def squeeze(input, dim=None):
    if dim is None:
        return view(input, X.squeeze, ())
    dims = _dims(dim, input.ndim)
    dims = tuple(d for d in dims if input._data.shape[d] == 1)
    if not dims:
        return view(input, X.alias)
    return view(input, X.squeeze, (("dim", dims),))


def unsqueeze(input, dim):
    return view(input, X.unsqueeze, (("dim", _dim(dim, input.ndim + 1)),))


def narrow(input, dim, start, length):
    d = _dim(dim, input.ndim)
    start = int(start)
    if start < 0:
        start += input._data.shape[d]
    return view(input, X.slice_, (("dim", d), ("start", start), ("stop", start + int(length)), ("step", 1)))


def select(input, dim, index):
    d = _dim(dim, input.ndim)
    n = input._data.shape[d]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    return view(input, X.select, (("dim", d), ("index", int(index) % n)))


def diagonal(input, offset=0, dim1=0, dim2=1):
    nd = input.ndim
    return view(input, X.diagonal, (("offset", offset), ("dim1", _dim(dim1, nd)), ("dim2", _dim(dim2, nd))))


def diag(input, diagonal=0):
    if input.ndim == 1:
        n = input.shape[0] + builtins.abs(diagonal)
        idx = np.arange(input.shape[0])
        rows, cols = (idx, idx + diagonal) if diagonal >= 0 else (idx - diagonal, idx)
        from ._factories import zeros

        out = zeros(n, n, dtype=input.dtype)
        return index_put(out, (as_tensor(rows), as_tensor(cols)), input)
    return globals()["diagonal"](input, diagonal)


def split(tensor, split_size_or_sections, dim=0):
    """Split into chunks of `split_size` (or the given section sizes) along `dim` (views)."""
    d = _dim(dim, tensor.ndim)
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        sizes = tuple([s] * (n // s) + ([n % s] if n % s else [])) if s > 0 else (n,)
    else:
        sizes = tuple(int(s) for s in split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={list(sizes)}")
    return view(tensor, X.split, (("sizes", sizes), ("dim", d)))


def chunk(input, chunks, dim=0):
    n = input._data.shape[_dim(dim, input.ndim)]
    size = -(-n // chunks) if chunks > 0 else n
    return split(input, builtins.max(size, 1), dim)


def tensor_split(input, sections, dim=0):
    n = input._data.shape[_dim(dim, input.ndim)]
    q, r = divmod(n, sections)
    return split(input, [q + 1] * r + [q] * (sections - r), dim)


def unbind(input, dim=0):
    return view(input, X.unbind, (("dim", _dim(dim, input.ndim)),))


def cat(tensors, dim=0):
    """Concatenate along an existing dimension."""
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((x for x in tensors if x.ndim > 0), tensors[0])
    tensors = [x for x in tensors if not (x.ndim == 1 and x.shape[0] == 0)] or tensors[:1]
    d = _dim(dim, ref.ndim)
    for i, x in enumerate(tensors):
        if x.ndim != ref.ndim or builtins.any(a != b for j, (a, b) in enumerate(zip(x.shape, ref.shape)) if j != d):
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                               f"{list(ref.shape)} but got size {list(x.shape)} for tensor number {i} in the list.")
    return dispatch(X.cat, tuple(tensors), (("dim", d),))


concat = concatenate = cat


def stack(tensors, dim=0):
    """Stack along a new dimension."""
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(x.shape)} at entry {i}")
    return dispatch(X.stack, tuple(tensors), (("dim", _dim(dim, tensors[0].ndim + 1)),))


def hstack(tensors):
    return cat(tensors, 1 if tensors[0].ndim > 1 else 0)


def vstack(tensors):
    return cat([t.reshape(1, -1) if t.ndim == 1 else t for t in tensors], 0)


def flip(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return dispatch(X.flip, (input,), (("dims", tuple(_dim(d, input.ndim) for d in dims)),))


def fliplr(input):
    return flip(input, 1)


def flipud(input):
    return flip(input, 0)


def roll(input, shifts, dims=None):
    if dims is None:
        return roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
    dims = tuple(_dim(d, input.ndim) for d in dims) if isinstance(dims, (list, tuple)) else _dim(dims, input.ndim)
    return dispatch(X.roll, (input,), (("shifts", shifts), ("dims", dims)))


def repeat(input, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = input.reshape((1,) * (len(sizes) - input.ndim) + tuple(input.shape))
    return dispatch(X.repeat, (x,), (("repeats", tuple(int(s) for s in sizes)),))


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats, dim=None):
    if isinstance(repeats, Tensor):
        repeats = tuple(repeats.tolist()) if repeats.ndim else int(repeats.item())
    return dispatch(X.repeat_interleave, (input,),
                    (("repeats", repeats), ("dim", None if dim is None else _dim(dim, input.ndim))))


def tril(input, diagonal=0):
    return dispatch(X.tril, (input,), (("diagonal", diagonal),))


def triu(input, diagonal=0):
    return dispatch(X.triu, (input,), (("diagonal", diagonal),))


def contiguous(input, memory_format=None):
    """Tensors are always contiguous here: returns `input`."""
    return input


# -- indexing -------------------------------------------------------------------------------------------------
def gather(input, dim, index):
    """`out[i][j] = input[i][index[i][j]]` for `dim=1` (and likewise for other dims)."""
    return dispatch(X.gather, (input, index), (("dim", _dim(dim, input.ndim)),))


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return take(input, indices)
    return gather(input, dim, indices)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of `input` with `src` (or `value`) written at `index` along `dim`."""
    if src is None:
        src = value
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise RuntimeError(f"scatter: reduce='{reduce}' is not supported; use reduce='add' or scatter_reduce")
    return dispatch(X.scatter, (input, index, _operand(input, src)), (("dim", _dim(dim, input.ndim)),))


def scatter_add(input, dim, index, src):
    return dispatch(X.scatter_add, (input, index, src), (("dim", _dim(dim, input.ndim)),))


def index_select(input, dim, index):
    return dispatch(X.index_select, (input, index), (("dim", _dim(dim, input.ndim)),))


def index_add(input, dim, index, source, *, alpha=1):
    return dispatch(X.index_add, (input, index, source), (("dim", _dim(dim, input.ndim)), ("alpha", alpha)))


def take(input, index):
    return dispatch(X.take, (input, index))


def masked_select(input, mask):
    return input[mask.expand_as(input) if tuple(mask.shape) != tuple(input.shape) else mask]


def nonzero(input, *, as_tuple=False):
    """Indices of non-zero elements (needs concrete data: a host sync, as in PyTorch)."""
    arr = np.asarray(input._concrete("nonzero()"))
    idx = np.nonzero(arr)
    if as_tuple:
        return tuple(Tensor._wrap(jnp.asarray(i, jnp.int64)) for i in idx)
    return Tensor._wrap(jnp.asarray(np.stack(idx, axis=1) if idx else np.zeros((0, 0)), jnp.int64))


def argwhere(input):
    return nonzero(input)


def index_put(input, indices, values, accumulate=False):
    spec, arrays = _parse_index(input, tuple(indices))
    return dispatch(X.index_put, (input, _operand(input, values), *arrays),
                    (("spec", spec), ("accumulate", accumulate)))


def _parse_index(x: Tensor, index) -> tuple[tuple, list]:
    """Encode a NumPy-style index as a hashable spec plus the index arrays it uses."""
    if not isinstance(index, tuple):
        index = (index,)
    spec, arrays = [], []
    for i in index:
        if isinstance(i, builtins.bool):
            i = as_tensor(i)
        if isinstance(i, (int, np.integer)):
            spec.append(int(i))
        elif isinstance(i, slice):
            vals = [None if v is None else int(v) for v in (i.start, i.stop, i.step)]
            if vals[2] is not None and vals[2] <= 0:
                raise ValueError("step must be greater than zero")
            spec.append(("s", *vals))
        elif i is None or i is Ellipsis:
            spec.append(i)
        else:
            t = i if isinstance(i, Tensor) else as_tensor(np.asarray(i) if isinstance(i, (list, tuple)) else i)
            if t._data.dtype == jnp.bool_:
                for a in nonzero(t, as_tuple=True):
                    spec.append("T")
                    arrays.append(a)
                continue
            if t._data.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            spec.append("T")
            arrays.append(t)
    return tuple(spec), arrays


def _getitem(self, index):
    if type(index) is int and self._data.ndim:
        return select(self, 0, index)
    spec, arrays = _parse_index(self, index)
    if not arrays:
        return view(self, X.index_basic, (("index", spec),))
    return dispatch(X.index, (self, *arrays), (("spec", spec),))


def _setitem(self, index, value):
    if isinstance(index, Tensor) and index._data.dtype == jnp.bool_ and tuple(index.shape) == tuple(self.shape) \
            and (not isinstance(value, Tensor) or value.ndim == 0):
        inplace(self, masked_fill(self, index, value))
        return
    inplace(self, index_put(self, index if isinstance(index, tuple) else (index,), value))


# -- misc ---------------------------------------------------------------------------------------------------------
def numel(input) -> int:
    return input.numel()


def is_floating_point(input) -> builtins.bool:
    return input.dtype.is_floating_point


def is_nonzero(input) -> builtins.bool:
    return builtins.bool(input)


def detach(input):
    return input.detach()


def cdist(x1, x2, p=2.0):
    return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1)


def cross(input, other, dim=-1):
    d = _dim(dim, input.ndim)
    a0, a1, a2 = input.unbind(d)
    b0, b1, b2 = other.unbind(d)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)
