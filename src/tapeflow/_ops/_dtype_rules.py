"""Which input dtypes PyTorch refuses for an op, and with which error: bool, integer or complex inputs that
PyTorch's kernels do not take (`sort` of complex numbers, `floor` of bools, `frac` of integers, ...).

JAX would accept many of them (or fail with its own message), so each op of the table is wrapped once, at
import, in a check of its first argument's dtype kind; the check costs one attribute read per call.
"""

from __future__ import annotations

import functools

from .. import _dtype
from .._tensor import Tensor

__all__ = ["guard"]


def _kernel(name):
    """PyTorch's NotImplementedError for a kernel with no version for the dtype."""
    return lambda dt: NotImplementedError(f'"{name}" not implemented for \'{_dtype.SCALAR_NAMES.get(dt, dt)}\'')


def _fixed(cls, message):
    return lambda dt: cls(message)


_COMPLEX_CLAMP = _fixed(NotImplementedError, "clamp is not supported for complex types")
_SORT = _fixed(RuntimeError, "Sort does not support complex dtypes on CPU")

# op: {dtype kinds refused: error factory (called with the dtype's name)}; "b" bool, "iu" integers, "c" complex
RULES = {
    "max": {"c": _kernel("max_all")}, "min": {"c": _kernel("min_all")},
    "amax": {"c": _kernel("max_values_cpu")}, "amin": {"c": _kernel("min_values_cpu")},
    "aminmax": {"c": _kernel("aminmax_cpu")},
    "sort": {"c": _SORT}, "argsort": {"c": _SORT}, "msort": {"c": _SORT},
    "topk": {"b": _fixed(RuntimeError, "topk does not support bool dtypes on CPU")},
    "median": {"bc": _kernel("median_cpu")}, "nanmedian": {"bc": _kernel("median_cpu")},
    "kthvalue": {"bc": _kernel("kthvalue_cpu")}, "mode": {"c": _kernel("mode_cpu")},
    "cummax": {"c": _kernel("cummax_cpu")}, "cummin": {"c": _kernel("cummin_cpu")},
    "argmax": {"b": _fixed(RuntimeError, "argmax(): does not support bool input"),
               "c": _fixed(RuntimeError, "argmax(): does not support complex input")},
    "argmin": {"b": _fixed(RuntimeError, "argmin(): does not support bool input"),
               "c": _fixed(RuntimeError, "argmin(): does not support complex input")},
    "clamp": {"c": _COMPLEX_CLAMP}, "clip": {"c": _COMPLEX_CLAMP}, "clamp_min": {"c": _COMPLEX_CLAMP},
    "clamp_max": {"c": _COMPLEX_CLAMP},
    "relu": {"b": _fixed(RuntimeError, "Boolean inputs not supported for relu"), "c": _COMPLEX_CLAMP},
    "sign": {"c": _fixed(NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex numbers. "
                                              "Please use torch.sgn instead.")},
    "abs": {"b": _kernel("abs_cpu")}, "absolute": {"b": _kernel("abs_cpu")},
    "floor": {"b": _kernel("floor_vml_cpu"), "c": _fixed(NotImplementedError, "floor is not supported for complex inputs")},
    "ceil": {"b": _kernel("ceil_vml_cpu"), "c": _fixed(NotImplementedError, "ceil is not supported for complex inputs")},
    "trunc": {"b": _kernel("trunc_vml_cpu"), "c": _fixed(NotImplementedError, "trunc is not supported for complex inputs")},
    "fix": {"b": _kernel("trunc_vml_cpu"), "c": _fixed(NotImplementedError, "trunc is not supported for complex inputs")},
    "round": {"bc": _kernel("round_vml_cpu")},
    "frac": {"biuc": _kernel("frac_cpu")},
    "erf": {"c": _kernel("erf_vml_cpu")}, "erfc": {"c": _kernel("erfc_vml_cpu")},
    "erfinv": {"c": _kernel("erfinv_vml_cpu")}, "lgamma": {"c": _kernel("lgamma_vml_cpu")},
    "digamma": {"c": _kernel("digamma")}, "logit": {"c": _kernel("logit_cpu")}, "i0": {"c": _kernel("i0_vml_cpu")},
    "signbit": {"c": _fixed(NotImplementedError, "signbit is not implemented for complex tensors.")},
    "deg2rad": {"c": _fixed(RuntimeError, "deg2rad is not supported for complex tensors.")},
    "rad2deg": {"c": _fixed(RuntimeError, "rad2deg is not supported for complex tensors.")},
    "positive": {"b": _fixed(RuntimeError, "The `+` operator, on a bool tensor is not supported.")},
    "nansum": {"c": _fixed(RuntimeError, "nansum on CPU does not support complex inputs")},
    "nanmean": {"c": _fixed(RuntimeError, "nansum on CPU does not support complex inputs"),
                "biu": lambda dt: RuntimeError("nanmean(): expected input to have floating point or complex dtype but "
                                               f"got {_dtype.SCALAR_NAMES.get(dt, dt)}")},
    "logcumsumexp": {"biu": _kernel("logcumsumexp_out_cpu")},
    # (softmax and log_softmax refuse these dtypes themselves: the kernel's name depends on the dim)
    "norm": {"biu": lambda dt: RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                                            f"input. Got {_dtype.SCALAR_NAMES.get(dt, dt)}")},
    "dist": {"biu": lambda dt: RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                                            f"{_dtype.SCALAR_NAMES.get(dt, dt)} instead.")},
    "trace": {"b": _kernel("trace")},
    "dot": {"b": _kernel("dot")}, "inner": {"b": _kernel("dot")}, "vdot": {"b": _kernel("dot")},
    "bincount": {"b": _kernel("bincount_cpu")},
    "unique": {"c": _kernel("unique")},
}


def _casts(args, kwargs) -> bool:
    """Whether the call passes a dtype to compute in (`softmax(x, 0, dtype=tp.float32)`): the input's is moot."""
    if kwargs.get("dtype") is not None:
        return True
    return any(isinstance(a, _dtype.dtype) for a in args)


def guard(name, fn):
    """`fn` refusing the dtypes `RULES[name]` lists, with PyTorch's error."""
    rules = [(kinds, make) for kinds, make in RULES[name].items()]

    @functools.wraps(fn)
    def checked(input, *args, **kwargs):
        if isinstance(input, Tensor) and not _casts(args, kwargs):
            dt = input._raw.dtype
            for kinds, make in rules:
                if dt.kind in kinds:
                    raise make(str(dt))
        return fn(input, *args, **kwargs)
    return checked
