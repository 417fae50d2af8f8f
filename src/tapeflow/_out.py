"""`out=`: the functions PyTorch gives an `out=` argument write their result into a given tensor.

`tp.add(a, b, out=c)` computes `a + b`, writes it into `c` in place (the same tensor object, its version bumped,
views of it see the write) and returns `c`. As in PyTorch:

- functions with `out=` do not support autograd: with grad mode on, an input or an output that requires grad
  raises "functions with out=... arguments don't support automatic differentiation";
- an output of the wrong shape is resized (with PyTorch's deprecation warning when it had elements);
- elementwise ops, reductions and concatenations cast their result to the output's dtype when PyTorch's casting
  rules allow it (`can_cast`); the other functions (products, linear algebra, sorting, indexing) require the
  output to have the result's dtype; factories (`zeros`, `arange`, ...) make their result in the output's dtype;
- a function returning several tensors (`max(x, dim)`, `sort`, `topk`, ...) takes a tuple of outputs.

`install` wraps the named functions of a namespace; a call without `out=` goes straight to the function.
"""

from __future__ import annotations

import functools
import warnings

from . import _dtype
from ._tensor import Tensor

__all__ = ["install", "TOPLEVEL", "LINALG", "SPECIAL", "FFT"]

# The functions of each namespace that take `out=` in PyTorch 2.13 (those tapeflow has).
TOPLEVEL = """abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax angle any
arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin asin asinh atan atan2 atanh baddbmm bernoulli
bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil cholesky
cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip column_stack complex concat concatenate conj_physical
copysign cos cosh cross cummax cummin cumprod cumsum deg2rad diag diff digamma div divide dot dstack empty eq erf erfc
erfinv exp exp2 expm1 eye fix float_power floor floor_divide fmax fmin fmod frac frexp full gather gcd ge ger greater
greater_equal gt hardshrink heaviside histc histogram hstack hypot i0 igamma igammac index_add index_copy index_select
inner inverse isin isneginf isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma linspace log log10 log1p
log2 log_softmax logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor logit logspace
logsumexp lt lu_solve masked_select matmul matrix_power max maximum mean median min minimum mm mode msort mul
multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow_copy ne neg negative nextafter
nonzero norm normal not_equal ones orgqr outer polar polygamma pow prod qr quantile rad2deg rand randint randn randperm
reciprocal remainder renorm round row_stack rsqrt scatter scatter_add searchsorted sgn sigmoid sign signbit sin sinc
sinh slice_scatter slogdet softmax sort sqrt square stack std sub subtract sum svd take take_along_dim tan tanh
tensordot threshold topk triangular_solve tril triu true_divide trunc var vdot vstack where xlogy zeros""".split()

LINALG = """cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv inv_ex lu lu_factor lu_factor_ex lu_solve
matmul matrix_norm matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd svdvals
tensorinv tensorsolve vecdot vector_norm""".split()

SPECIAL = """digamma entr erf erfc erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln i0 i0e i1 i1e log1p log_ndtr
logit logsumexp multigammaln ndtr ndtri polygamma psi round sinc xlog1py xlogy zeta""".split()

FFT = """fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft fftfreq rfftfreq""".split()

# Functions whose output must have the result's dtype (PyTorch casts only for elementwise ops, reductions and
# concatenations); every linear-algebra function is one of them.
_EXACT = frozenset("""addbmm addmm addmv addr aminmax argmax argmin baddbmm bmm bucketize cholesky cholesky_inverse
cholesky_solve clamp clamp_max clamp_min clip cross cummax cummin diag dot frexp gather histc histogram index_add
index_copy index_select inner inverse kthvalue lu_solve masked_select matmul matrix_power max median min mm mode msort
mv nanmedian nanquantile narrow_copy nonzero norm qr quantile renorm scatter scatter_add searchsorted slice_scatter
slogdet softmax log_softmax sort svd take take_along_dim tensordot topk triangular_solve tril triu vdot where""".split())

# Factories: without an explicit dtype they make their result in the output's dtype.
_FACTORIES = frozenset("arange empty eye full linspace logspace ones rand randint randn randperm zeros".split())


def install(namespace: dict, names, prefix: str = "") -> None:
    """Give each function `namespace[name]` (of `names`) PyTorch's `out=` argument."""
    for name in names:
        fn = namespace.get(name)
        if fn is not None and not hasattr(fn, "__tapeflow_out__"):
            namespace[name] = _with_out(fn, name, exact=bool(prefix) or name in _EXACT, factory=name in _FACTORIES)


def _with_out(fn, name: str, exact: bool, factory: bool):
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return _into(fn, name, args, kwargs, out, exact, factory)
    call.__tapeflow_out__ = True
    return call


def _into(fn, name, args, kwargs, out, exact, factory):
    from .autograd.grad_mode import is_grad_enabled, no_grad

    outs = tuple(out) if isinstance(out, (tuple, list)) else None
    for o in outs if outs is not None else (out,):
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be {'tuple of Tensors' if outs else 'Tensor'}, not "
                            f"{type(o).__name__}")
    if is_grad_enabled() and (any(o.requires_grad for o in outs or (out,)) or _requires_grad(args)
                              or _requires_grad(kwargs.values())):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if _dual(args, kwargs, outs or (out,)):
        raise RuntimeError(f"Trying to use forward AD with {name}_out that does not support it because it is an out= "
                           "function")
    if factory and kwargs.get("dtype") is None:
        kwargs["dtype"] = (outs or (out,))[0].dtype
    result = fn(*args, **kwargs)
    multiple = isinstance(result, tuple)
    if multiple != (outs is not None):
        raise TypeError(f"{name}(): argument 'out' must be {'tuple of Tensors' if multiple else 'Tensor'}, not "
                        f"{type(out).__name__}")
    if multiple and len(result) != len(outs):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors, not {len(outs)}")
    with no_grad():
        for o, r in zip(outs or (out,), result if multiple else (result,)):
            _write(name, o, r, exact or factory)
    if not multiple:
        return out
    return outs if type(result) is tuple else type(result)(*outs)


def _dual(args, kwargs, outs) -> bool:
    """Whether an input or output carries a forward-mode tangent (at the current dual level)."""
    from .autograd import forward_ad

    table = forward_ad._table(None)
    if not table:
        return False
    tensors = [v for v in (*args, *kwargs.values(), *outs) if isinstance(v, Tensor)]
    return any(forward_ad._tangent_of(t, table) is not None for t in tensors)


def _requires_grad(values) -> bool:
    for v in values:
        if isinstance(v, Tensor):
            if v.requires_grad:
                return True
        elif isinstance(v, (tuple, list)) and _requires_grad(v):
            return True
    return False


def _write(name: str, o: Tensor, r, exact: bool) -> None:
    if not isinstance(r, Tensor):
        return
    if o.dtype != r.dtype:
        src, dst = r.dtype.name, o.dtype.name
        if exact:
            raise RuntimeError(f"Expected out tensor to have dtype {_dtype.CPP_NAMES[src]}, but got "
                               f"{_dtype.CPP_NAMES[dst]} instead")
        from ._toplevel import can_cast

        if not can_cast(r.dtype, o.dtype):
            raise RuntimeError(f"result type {_dtype.SCALAR_NAMES[src]} can't be cast to the desired output type "
                               f"{_dtype.SCALAR_NAMES[dst]}")
    if tuple(o.shape) != tuple(r.shape):
        if o.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(o.shape)}, "
                          f"which does not match the required output shape {list(r.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=4)
        o.resize_(tuple(r.shape))
    o.copy_(r)
