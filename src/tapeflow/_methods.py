"""Attach the op namespace to `Tensor`: methods, Python operators, in-place
variants and conversions. Nothing here computes; it only delegates."""

from __future__ import annotations

import re

import jax

import xla_ops as X

from . import _dtype, _layout, _ops, linalg
from ._device import default_jax_device, is_meta_device, to_jax_device
from ._device import device as _device
from ._dispatch import _category, dispatch, inplace, view
from ._meta import NO_DATA, MetaArray, meta_of
from ._ops._checks import tensor_arg
from ._state import state
from ._tensor import Pending, Tensor, as_tensor

# Functions of `_ops` that are also Tensor methods (same name).
_METHODS = """
add sub mul div pow remainder fmod atan2 hypot maximum minimum neg negative lerp addcmul addcdiv
exp exp2 expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin cos tan tanh sigmoid asin acos atan sinh cosh
asinh acosh atanh arcsin arccos arctan erf erfc erfinv lgamma digamma logit abs absolute sign floor ceil trunc frac
relu square round nan_to_num clamp clip clamp_min clamp_max masked_fill
eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and logical_or logical_xor logical_not
bitwise_and bitwise_or bitwise_xor bitwise_not isnan isinf isfinite isclose allclose equal
clone sum mean nansum nanmean prod var std max min amax amin aminmax argmax argmin all any count_nonzero logsumexp
norm dist cumsum cumprod cummax cummin logcumsumexp softmax log_softmax sort argsort topk msort median kthvalue
matmul mm bmm mv dot inner outer ger addmm baddbmm trace svd qr matrix_exp matrix_power pinverse
reshape view_as flatten unflatten ravel permute transpose swapaxes swapdims t adjoint movedim moveaxis expand
expand_as broadcast_to squeeze unsqueeze narrow select diagonal diag split chunk tensor_split unbind flip fliplr
flipud roll repeat tile repeat_interleave tril triu contiguous gather take_along_dim scatter scatter_add
index_select index_add take masked_select nonzero nonzero_static argwhere index_put floor_divide true_divide divide multiply
subtract cross float_power fmax fmin conj conj_physical resolve_conj angle sgn isreal vdot is_nonzero
copysign heaviside logaddexp logaddexp2 sinc xlogy deg2rad rad2deg signbit isneginf isposinf i0 gcd lcm
mvlgamma igamma igammac nextafter frexp ldexp bitwise_left_shift bitwise_right_shift nanmedian mode quantile
nanquantile renorm arctan2 fix
scatter_reduce index_reduce index_copy index_fill masked_scatter put slice_scatter select_scatter diagonal_scatter
as_strided unique unique_consecutive bincount histc histogram corrcoef cov diag_embed diagflat diff dsplit hsplit
vsplit kron narrow_copy positive reshape_as rot90 split_with_sizes sum_to_size is_same_size
""".split()

for _name in _METHODS:
    setattr(Tensor, _name, getattr(_ops, _name))


def _where(self, condition, y):
    """`tp.where(condition, self, y)`: this tensor where `condition` holds, `y` elsewhere (PyTorch's method; the
    condition comes first, as in the function).

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([1.0, -2.0, 3.0])
        >>> x.where(x > 0, 0.0)
        tensor([1., 0., 3.])
    """
    return _ops.where(condition, self, y)


Tensor.where = _where


_ARGUMENT_ERROR = re.compile(r"(\w+)\(\): argument '\w+' \(position (\d+)\) must be Tensor")


def as_method_error(e: TypeError, method: str) -> TypeError | None:
    """PyTorch's wording of a function's TypeError for a non-tensor argument when the call was the method
    `method` (of the same function, or its in-place form): the method's name, positions counted from 1 after
    `self` (`x.addcmul_(1, y)` names "addcmul_(): argument 'tensor1' (position 1)"). None for other errors."""
    m = _ARGUMENT_ERROR.match(str(e))
    if m is None or m.group(1) != method.rstrip("_") or m.group(2) == "1":
        return None
    text = str(e)
    return TypeError(f"{method}(){text[m.end(1) + 2:m.start(2)]}{int(m.group(2)) - 1}{text[m.end(2):]}")


def _raise_as_method(e: TypeError, method: str):
    error = as_method_error(e, method)
    if error is None:
        raise e
    raise error from None


def _counted_from_self(fn):
    """`fn` as a method whose TypeError for a non-tensor argument counts positions as PyTorch's methods do
    (from 1: `x.maximum(2)` names "position 1")."""
    def method(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except TypeError as e:
            _raise_as_method(e, fn.__name__)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _name in """atan2 arctan2 hypot maximum minimum fmax fmin heaviside logaddexp logaddexp2 gcd lcm igamma igammac
nextafter ldexp dist kron dot outer addcmul addcdiv logical_and logical_or logical_xor""".split():
    setattr(Tensor, _name, _counted_from_self(getattr(_ops, _name)))

Tensor.unfold = _ops.arrange.unfold
Tensor.transpose_ = Tensor.swapaxes_ = Tensor.swapdims_ = _ops.arrange.transpose_
Tensor.t_ = _ops.arrange.t_
Tensor.as_strided_ = _ops.arrange.as_strided_
Tensor.inverse = linalg.inverse
Tensor.cholesky_solve = linalg.cholesky_solve
Tensor.cholesky_inverse = linalg.cholesky_inverse
Tensor.det = linalg.det
Tensor.orgqr = linalg.householder_product


def _view(self, *shape, dtype=None):
    """The same data with a new shape, or (`view(dtype)`) the same bytes read as another dtype; a view either way.

    Example:
        >>> tp.arange(6.0).view(2, 3).shape
        tapeflow.Size([2, 3])
        >>> tp.tensor([1.0, -2.0]).view(tp.int32)
        tensor([ 1065353216, -1073741824], dtype=tapeflow.int32)
    """
    if dtype is not None and not shape:
        shape = (dtype,)
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(self, shape[0])
    out = _ops.reshape(self, *shape)
    if (self._view and self._base is not None) or "_own_layout" in self.__dict__:  # (a view's layout may not
        # allow it, as in PyTorch; nor may a tensor rearranged in place by `t_`, `transpose_`, `as_strided_`)
        lay = _layout.layout(self)
        if lay is not None and _layout.view_strides(lay[0], lay[1], tuple(out._raw.shape)) is None:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return out


def _view_dtype(x, dtype):
    """PyTorch's `view(dtype)`: with another element size the last dimension scales by the ratio, and PyTorch's
    layout checks apply; the result shares `x`'s storage and never requires grad."""
    src = x._raw.dtype
    a, b = src.itemsize, dtype.itemsize
    if a != b:
        what = f"to view {_dtype.SCALAR_NAMES[src.name]} as {_dtype.SCALAR_NAMES[dtype.name]} (different element sizes)"
        if x.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        lay = _layout.layout(x)
        shape, strides, off = lay if lay is not None else (tuple(x.shape), _layout.contiguous_strides(x.shape), 0)
        r = b // a
        if b > a and shape[-1] % r:
            raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}")
        if b > a and off % r:
            raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {off}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        for i, s in enumerate(strides[:-1] if b > a else ()):
            if s % r:
                raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
    out = view(x, X.view_dtype, (("dtype", dtype.jax.name), ("src", src.name)))
    out._requires_grad = False
    out._no_grad_view = out._untracked_no_grad_view = None  # (autograd does not see this view: see `reads_bytes`)
    return out


Tensor.view = _view
Tensor.__getitem__ = _ops._getitem
Tensor.__setitem__ = _ops._setitem


@property
def _T(self):
    return _ops.permute(self, tuple(reversed(range(self.ndim))))


@property
def _mT(self):
    return _ops.transpose(self, -2, -1)


@property
def _H(self):
    if self.ndim > 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor. Use tensor.mH for batches of matrices")
    return _ops.conj(_ops.permute(self, tuple(reversed(range(self.ndim)))))


@property
def _mH(self):
    return _ops.conj(_ops.transpose(self, -2, -1))


Tensor.T = _T
Tensor.mT = _mT
Tensor.H = _H
Tensor.mH = _mH

# -- Python operators -------------------------------------------------------------------------
Tensor.__add__ = _ops.add
Tensor.__radd__ = lambda self, other: _ops.add(self, other)
Tensor.__sub__ = _ops.sub
Tensor.__rsub__ = lambda self, other: _ops.rsub(self, other)
Tensor.__mul__ = _ops.mul
Tensor.__rmul__ = lambda self, other: _ops.mul(self, other)
Tensor.__truediv__ = _ops.div
Tensor.__rtruediv__ = lambda self, other: _ops.rdiv(self, other)
Tensor.__floordiv__ = _ops.floor_divide
Tensor.__rfloordiv__ = lambda self, other: _ops.floor_divide(as_tensor(other), self)
Tensor.__mod__ = _ops.remainder
Tensor.__rmod__ = lambda self, other: _ops.remainder(as_tensor(other), self)
Tensor.__pow__ = _ops.pow
Tensor.__rpow__ = lambda self, other: _ops.pow(other, self)
Tensor.__matmul__ = _ops.matmul
Tensor.__rmatmul__ = lambda self, other: _ops.matmul(as_tensor(other), self)
Tensor.__neg__ = _ops.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = _ops.abs
def _invert(self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _ops.logical_not(self) if self.dtype is _dtype.bool else _ops.bitwise_not(self)


Tensor.__invert__ = _invert
# (bitwise for bools too: `mask & 1` is an int64 tensor, as PyTorch promotes it)
Tensor.__and__ = lambda self, other: _ops.bitwise_and(self, other)
Tensor.__or__ = lambda self, other: _ops.bitwise_or(self, other)
Tensor.__xor__ = lambda self, other: _ops.bitwise_xor(self, other)
Tensor.__rand__ = Tensor.__and__
Tensor.__ror__ = Tensor.__or__
Tensor.__rxor__ = Tensor.__xor__
Tensor.__eq__ = _ops.eq
Tensor.__ne__ = _ops.ne
Tensor.__lt__ = _ops.lt
Tensor.__le__ = _ops.le
Tensor.__gt__ = _ops.gt
Tensor.__ge__ = _ops.ge


# -- in-place variants: compute out of place, then write through --------------------------------
# Binary ops whose in-place form checks, before anything else, that the promoted result fits the tensor's dtype
# (`int_tensor.floor_divide_(1j)` is a cast error in PyTorch, not the kernel's missing complex version).
_CAST_FIRST = frozenset("""add sub mul div pow remainder fmod atan2 arctan2 floor_divide clamp_min clamp_max
bitwise_and bitwise_or bitwise_xor hypot true_divide divide multiply subtract copysign fmax fmin logaddexp
nextafter""".split())


_FLOATING_RESULTS = frozenset(("div", "divide", "true_divide", "atan2", "arctan2"))  # (for integer operands too)
_TENSOR_ONLY = frozenset(("atan2", "arctan2", "hypot", "nextafter", "fmax", "fmin", "logaddexp"))


_NUMBER_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}


def _check_cast_first(self, op: str, other, rounding_mode) -> None:
    if (op in ("sub", "subtract") and self.dtype.name == "bool") or (op in ("clamp_min", "clamp_max")
                                                                     and type(other) is complex):
        return  # (the op's own refusal comes first there)
    if op in _TENSOR_ONLY:
        tensor_arg(f"{op}_", "other", other, 1)
    if isinstance(other, Tensor):
        if other.dtype is self.dtype:
            return
    elif _NUMBER_CATEGORY.get(type(other), -1) <= _category(self.dtype):
        return  # (a number of the tensor's category or lower, or not a number: nothing to check first)
    from ._toplevel import result_type

    rt = result_type(self, other)
    if op in _FLOATING_RESULTS and rounding_mode is None and _category(rt) < 2:
        rt = _dtype.get_default_dtype()  # (true division of integers is floating)
    if _category(rt) > _category(self.dtype):
        name = "ComplexHalf" if type(other) is complex and self.dtype.name == "float16" else \
            _dtype.SCALAR_NAMES[rt.name]  # (PyTorch's complex32: tapeflow computes it as complex64)
        # (PyTorch's clamp with a number names the tensor's type in C++: `int`, `bool`)
        names = _dtype.CPP_NAMES if op.startswith("clamp") and not isinstance(other, Tensor) else _dtype.SCALAR_NAMES
        raise RuntimeError(f"result type {name} can't be cast to the desired output type {names[self.dtype.name]}")


def _make_inplace(fn, name):
    # (a `try` costs nothing until something raises; a TypeError is reworded as the method's own)
    if name[:-1] in _CAST_FIRST:
        def method(self, *args, **kwargs):
            try:
                _check_cast_first(self, name[:-1], args[0] if args else kwargs.get("other"),
                                  kwargs.get("rounding_mode"))
                return inplace(self, fn(self, *args, **kwargs))
            except TypeError as e:
                _raise_as_method(e, name)
    else:
        def method(self, *args, **kwargs):
            try:
                return inplace(self, fn(self, *args, **kwargs))
            except TypeError as e:
                _raise_as_method(e, name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place `{name[:-1]}`: writes the result into this tensor (and its aliases)."
    return method


for _name in """add sub mul div pow remainder fmod atan2 neg exp expm1 log log2 log10 log1p sqrt rsqrt reciprocal sin
cos tan tanh sigmoid abs sign floor ceil trunc frac relu square round clamp clip clamp_min clamp_max masked_fill
lerp addcmul addcdiv logical_not logical_and logical_or floor_divide index_put scatter scatter_add index_add
nan_to_num erf asin acos atan sinh cosh
scatter_reduce index_reduce index_copy index_fill masked_scatter put tril triu cumsum cumprod""".split():
    setattr(Tensor, _name + "_", _make_inplace(getattr(_ops, _name), _name + "_"))

for _name in ("addmm", "addmv", "addr", "addbmm", "baddbmm"):
    setattr(Tensor, _name, getattr(_ops, _name))
    setattr(Tensor, _name + "_", _make_inplace(getattr(_ops, _name), _name + "_"))
Tensor.arccosh, Tensor.arcsinh, Tensor.arctanh = _ops.acosh, _ops.asinh, _ops.atanh
Tensor.polygamma = lambda self, n: _ops.polygamma(n, self)  # (the function takes n first)
Tensor.polygamma_ = lambda self, n: inplace(self, _ops.polygamma(n, self))


def _mvlgamma_(self, p):
    out = _ops.mvlgamma(self, p)
    if out.dtype is not self.dtype:  # (an integer tensor: its result is float)
        s = _dtype.SCALAR_NAMES  # (PyTorch names the two dtypes the other way round here)
        raise RuntimeError(f"mvlgamma: result type {s[self.dtype.name]} can't be cast to the desired output type "
                           f"{s[out.dtype.name]}")
    return inplace(self, out)


Tensor.mvlgamma_ = _mvlgamma_


def _abs_(self):
    if self._raw.dtype.kind == "c":  # (the result is real: a complex tensor cannot hold it in place)
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return inplace(self, _ops.abs(self))


Tensor.abs_ = Tensor.absolute_ = _abs_
Tensor.logdet = linalg.logdet
Tensor.slogdet = linalg.slogdet

# The in-place forms PyTorch has of the other elementwise ops (where tapeflow has the op).
for _name in """absolute acosh arccos arccosh arcsin arcsinh arctan arctan2 arctanh asinh atanh bitwise_and bitwise_not
bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift copysign deg2rad digamma divide eq erfc erfinv exp2 fix
float_power fmax fmin gcd ge greater greater_equal gt heaviside hypot i0 igamma igammac lcm ldexp le less less_equal
lgamma logaddexp logical_xor logit lt multiply mvlgamma ne negative nextafter not_equal rad2deg renorm sgn
sinc subtract true_divide xlogy""".split():
    if hasattr(_ops, _name) and not hasattr(Tensor, _name + "_"):
        setattr(Tensor, _name + "_", _make_inplace(getattr(_ops, _name), _name + "_"))


def _number_first_method(name, inplace_form=False):
    """The method `name` (add, sub, addcmul, addcdiv), also taking PyTorch's deprecated overload with the scaling
    number first (`p.add_(-lr, grad)`, `p.addcdiv_(-step, exp_avg, denom)`: old optimizer code)."""
    # (the method as installed so far: `addcmul`'s counts argument positions from self, as PyTorch's methods do)
    fn = getattr(_ops, name) if inplace_form else getattr(Tensor, name)
    key, tensors = _ops.elementwise._NUMBER_FIRST[name]
    shown = name + "_" if inplace_form else name

    def method(self, *args, **kwargs):
        if len(args) > len(tensors):
            number, rest = _ops.elementwise.number_first(name, args[0], args[1:], shown, 4 if inplace_form else 3)
            kwargs[key] = number
            args = rest
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


for _name in _ops.elementwise._NUMBER_FIRST:
    setattr(Tensor, _name, _number_first_method(_name))
    setattr(Tensor, _name + "_", _make_inplace(_number_first_method(_name, True), _name + "_"))


def _compared_inplace(fn):
    """`fn` (a comparison) for its in-place form: written into a tensor that requires grad, the result keeps it
    requiring grad and gives its old value a zero gradient, as PyTorch's `EqBackward0` and kin do (the bare
    result has no history, so the tensor kept its old one, and its gradient passed through unchanged)."""
    def compared(self, *args, **kwargs):
        out = fn(self, *args, **kwargs)
        if self._requires_grad and state.grad_enabled:
            out = dispatch(X.copy, (self, out))
        return out
    return compared


for _name in "eq ne lt le gt ge greater greater_equal less less_equal not_equal".split():
    setattr(Tensor, _name + "_", _make_inplace(_compared_inplace(getattr(_ops, _name)), _name + "_"))

Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__lshift__ = lambda self, other: _ops.bitwise_left_shift(self, other)
Tensor.__rshift__ = lambda self, other: _ops.bitwise_right_shift(self, other)
Tensor.__rlshift__ = lambda self, other: _ops.bitwise_left_shift(as_tensor(other), self)
Tensor.__rrshift__ = lambda self, other: _ops.bitwise_right_shift(as_tensor(other), self)
Tensor.__ilshift__ = Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_
# (In place, as in PyTorch: `m &= other` changes `m` and every view of it.)
Tensor.__iand__ = lambda self, other: inplace(self, self & other)
Tensor.__ior__ = lambda self, other: inplace(self, self | other)
Tensor.__ixor__ = lambda self, other: inplace(self, self ^ other)


def copy_(self, src, non_blocking=False):
    """Copy `src` (broadcast, cast to this dtype) into this tensor; gradients flow to `src`."""
    return inplace(self, dispatch(X.copy, (self, src if isinstance(src, Tensor) else as_tensor(src))))


def fill_(self, value):
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           "dimensions.")
    value = _dtype.check_number_fits(value, self._raw.dtype, self._raw.size)
    return inplace(self, dispatch(X.copy, (self, value)))


def zero_(self):
    return inplace(self, dispatch(X.copy, (self, 0)))


def _random_(sampler):
    from ._factories import drawn_for

    def method(self, *args, generator=None, **kwargs):
        from .autograd.grad_mode import no_grad

        if type(self._raw) is MetaArray:  # a meta tensor: nothing to fill, as on PyTorch's meta device
            return self
        with no_grad():
            sample = drawn_for(self, sampler, self, *args, generator=generator, **kwargs)
        return inplace(self, dispatch(X.copy, (self, sample)))
    return method


def _uniform(self, a=0.0, b=1.0, *, generator=None):
    from ._factories import rand, uniform

    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    if self.dtype.is_complex:  # both parts uniform on [a, b)
        return rand(*self.shape, generator=generator, dtype=self.dtype) * (b - a) + a * (1 + 1j)
    return uniform(a, b, tuple(self.shape), generator=generator, dtype=self.dtype)


def _normal(self, mean=0.0, std=1.0, *, generator=None):
    from ._factories import _check_std, normal, randn

    _check_std(std)
    if self.dtype.is_complex:  # both parts normal with mean `mean` (randn's parts have variance 1/2)
        return randn(*self.shape, generator=generator, dtype=self.dtype) * std + mean * (1 + 1j)
    return normal(float(mean), float(std), tuple(self.shape), generator=generator, dtype=self.dtype)


def _bernoulli(self, p=0.5, *, generator=None):
    from ._sampling import _probability, bernoulli

    _probability(p)
    return bernoulli(p, generator=generator).expand(self.shape).to(self.dtype) if isinstance(p, Tensor) else \
        bernoulli(self, float(p), generator=generator)


def _random_int(self, low=None, high=None, *, generator=None):
    from ._factories import randint, random_full_range

    if low is None and high is None:  # the dtype's whole range, as PyTorch's random_()
        return random_full_range(self.shape, self.dtype, generator)
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(self.shape), generator=generator, dtype=self.dtype)


Tensor.copy_ = copy_
Tensor.fill_ = fill_
Tensor.zero_ = zero_
Tensor.uniform_ = _random_(_uniform)
Tensor.normal_ = _random_(_normal)
Tensor.bernoulli_ = _random_(_bernoulli)
Tensor.random_ = _random_(_random_int)


def _unsqueeze_(self, dim):
    return _ops.arrange._become(self, lambda x: _ops.unsqueeze(x, dim), "UnsqueezeBackward1")


def _squeeze_(self, dim=None):
    node = "SqueezeBackward3" if dim is None else "SqueezeBackward5" if isinstance(dim, (tuple, list)) else \
        "SqueezeBackward4"  # (PyTorch's names for the in-place overloads)
    return _ops.arrange._become(self, lambda x: _ops.squeeze(x, dim), node)


Tensor.unsqueeze_ = _unsqueeze_
Tensor.squeeze_ = _squeeze_


# -- conversions ---------------------------------------------------------------------------------------
def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, **kwargs):
    """Convert dtype and/or device: `to(tp.float64)`, `to("cpu")`, `to(other)`, `to("cpu", tp.float64)`.

    Differentiable: gradients are converted back to this tensor's dtype.
    """
    if kwargs.get("memory_format") is not None:
        _layout.check_memory_format(kwargs["memory_format"], self.ndim)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (_device, str)) and not (isinstance(a, str) and _is_dtype_name(a)):
            device = a
        elif a is not None:
            dtype = a
    out = self
    if dtype is not None:
        out = _ops.to_dtype(out, dtype)
    if device is not None and (is_meta_device(device) or out.is_meta):
        return _meta_move(out, device)
    if device is not None:
        dev, raw = to_jax_device(device), out._raw
        # (a pending value is computed on the default device: moving it there needs nothing run)
        here = {default_jax_device()} if type(raw) is Pending else None if isinstance(raw, jax.core.Tracer) else \
            out._data.devices()
        if here is not None and dev not in here:
            out = dispatch(X.to_device, (out,), (("device", dev),))
    if copy and out is self:
        out = _ops.clone(self)
    return out


def _meta_move(t, device):
    """`t` moved onto the meta device (its shape and dtype, no data); nothing comes back from there."""
    if not is_meta_device(device):
        raise NotImplementedError(NO_DATA)
    if t.is_meta:
        return t
    out = Tensor._wrap(meta_of(t._raw))
    out._requires_grad = t._requires_grad
    return out


def _is_dtype_name(s: str) -> bool:
    try:
        _dtype.to_dtype(s)
        return True
    except TypeError:
        return False


Tensor.to = to
Tensor.type_as = lambda self, other: to(self, other.dtype)
Tensor.cpu = lambda self, memory_format=None: to(self, "cpu", memory_format=memory_format)
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: \
    to(self, "cuda" if device is None else f"cuda:{int(device)}", memory_format=memory_format)


def _conversion(dtype):
    def convert(self, memory_format=None):
        return to(self, dtype, memory_format=memory_format)
    return convert


for _name, _dt in [("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                   ("bfloat16", _dtype.bfloat16), ("long", _dtype.int64), ("int", _dtype.int32),
                   ("short", _dtype.int16), ("bool", _dtype.bool), ("byte", _dtype.uint8)]:
    setattr(Tensor, _name, _conversion(_dt))


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        if device is None and self.is_meta:
            device = "meta"
        return fn(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
    return method


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from ._factories import tensor

    return tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _install_factories():
    from . import _factories as F

    Tensor.new_zeros = _new_factory(F.zeros)
    Tensor.new_ones = _new_factory(F.ones)
    Tensor.new_empty = _new_factory(F.empty)
    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        F._number("new_full", fill_value)
        return F.full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    Tensor.new_full = new_full
    Tensor.new_tensor = _new_tensor

    def new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False, layout=None,
                          pin_memory=False):
        from ._toplevel import empty_strided

        return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)

    Tensor.new_empty_strided = new_empty_strided


_install_factories()
Tensor.jax = property(lambda self: self._data, doc="The underlying JAX array (or tracer).")
def _strides(self) -> tuple:
    lay = _layout.layout(self)
    return lay[1] if lay is not None else _layout.contiguous_strides(self._raw.shape)


def stride(self, dim=None):
    """The strides PyTorch's tensor would have (in elements): a view's follow from its base's layout."""
    s = _strides(self)
    if dim is None:
        return s
    return s[_ops._args._dim(dim, self.ndim)] if self.ndim else 1


def storage_offset(self) -> int:
    """Where this view starts in its base's storage (in elements), as in PyTorch."""
    lay = _layout.layout(self)
    return lay[2] if lay is not None else 0


def is_contiguous(self, memory_format=None) -> bool:
    """Whether the layout is row-major (or, with `memory_format=channels_last`, NHWC / NDHWC), ignoring
    dimensions of size 1, as PyTorch decides."""
    shape, strides = tuple(self._raw.shape), _strides(self)
    if 0 in shape:
        return True
    order = list(range(len(shape)))
    fmt = str(memory_format) if memory_format is not None else ""
    if fmt.endswith("channels_last") and len(shape) == 4:
        order = [0, 2, 3, 1]
    elif fmt.endswith("channels_last_3d") and len(shape) == 5:
        order = [0, 2, 3, 4, 1]
    elif fmt.endswith("channels_last") or fmt.endswith("channels_last_3d"):
        return False
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return False
        expected *= shape[d]
    return True


Tensor.stride = stride
Tensor.storage_offset = storage_offset
Tensor.is_contiguous = is_contiguous


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the leaves' `.grad` (see `tapeflow.autograd.backward`).

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([1.0, 2.0], requires_grad=True)
        >>> (x ** 2).sum().backward(); x.grad
        tensor([2., 4.])
    """
    from .autograd.backward import backward as _backward

    _backward(self, None if gradient is None else (gradient,), retain_graph, create_graph, inputs)


Tensor.backward = backward


def _real(self):
    return _ops.real(self)


def _set_real(self, value):
    _ops.real(self).copy_(value)


def _imag(self):
    return _ops.imag(self)


def _set_imag(self, value):
    _ops.imag(self).copy_(value)


Tensor.real = property(_real, _set_real, doc="The real part (a view; `self` for a real tensor).")
Tensor.imag = property(_imag, _set_imag, doc="The imaginary part of a complex tensor (a view).")
Tensor.is_conj = lambda self: False  # conjugation is never lazy here
