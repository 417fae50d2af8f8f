"""Which input dtypes PyTorch refuses for an op, and with which error: bool, integer or complex inputs that
PyTorch's kernels do not take (`sort` of complex numbers, `floor` of bools, `frac` of integers, ...).

JAX would accept many of them (or fail with its own message), so each op of the table is wrapped once, at
import, in a check of its first argument's dtype kind; the check costs one attribute read per call.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from ._checks import broadcast_first

__all__ = ["guard"]


def _kernel(name):
    """PyTorch's NotImplementedError for a kernel with no version for the dtype."""
    return lambda dt: NotImplementedError(f'"{name}" not implemented for \'{_dtype.SCALAR_NAMES.get(dt, dt)}\'')


def _fixed(cls, message):
    return lambda dt: cls(message)


def _with_dim(whole, along):
    """One error for a reduction over everything (`max(x)`), another along a dim (`max(x, 0)`): rules whose
    factory takes the call's arguments too."""
    def make(dt, args, kwargs):
        return along(dt) if args or "dim" in kwargs else whole(dt)
    make.takes_args = True
    return make


def _round(dt, args, kwargs):
    """PyTorch's kernel for `round` with `decimals` other than 0 is another than without; integers have a
    version only for a call without `decimals` (given, even as 0, they take the kernels' path)."""
    if "decimals" not in kwargs and dt.startswith(("int", "uint")):
        return None
    return _kernel("round_cpu" if kwargs.get("decimals") else "round_vml_cpu")(dt)


_round.takes_args = True


def _needs_dim(name, make):
    """PyTorch parses the arguments before its kernel sees the dtype: a call without `dim` is a TypeError."""
    def rule(dt, args, kwargs):
        if not args and "dim" not in kwargs:
            return TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        return make(dt)
    rule.takes_args = True
    return rule


_COMPLEX_CLAMP = _fixed(NotImplementedError, "clamp is not supported for complex types")
_SORT = _fixed(RuntimeError, " Sort does not support complex dtypes on CPU")  # (sic: PyTorch's leading space)

# op: {dtype kinds refused: error factory (called with the dtype's name)}; "b" bool, "iu" integers, "c" complex
RULES = {
    "max": {"c": _with_dim(_kernel("max_all"), _fixed(RuntimeError, "max(): does not support complex input"))},
    "min": {"c": _with_dim(_kernel("min_all"), _fixed(RuntimeError, "min(): does not support complex input"))},
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
    "round": {"biuc": _round},
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
    "logcumsumexp": {"biu": _needs_dim("logcumsumexp", _kernel("logcumsumexp_out_cpu"))},
    # (softmax and log_softmax refuse these dtypes themselves: the kernel's name depends on the dim)
    "norm": {"biu": lambda dt: RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                                            f"input. Got {_dtype.SCALAR_NAMES.get(dt, dt)}")},
    "trace": {"b": _kernel("trace")},
    "bincount": {"b": _kernel("bincount_cpu")},
    "unique": {"c": _kernel("unique")},
}


def _kernels(table: dict) -> dict:
    """`{function: {kernel: kinds}}` as rules: each kernel's NotImplementedError for the input dtype kinds it
    lacks (a kernel name ending in `+int64` has an int64 version among the integers it lacks)."""
    def rule(k):
        name, _, has = k.partition("+")
        make = _kernel(name)
        return (lambda dt: None if dt == has else make(dt)) if has else make

    return {name: {kinds: rule(k) for k, kinds in kernels.items()} for name, kernels in table.items()}


# `tapeflow.nn.functional`: the CPU kernel behind each function, and the input dtype kinds it has no version for
# ("b" bool, "u" unsigned, "i" signed integers, "c" complex), as PyTorch 2.13 reports them.
FUNCTIONAL_RULES = _kernels({
    "elu": {"elu_cpu": "buic"}, "selu": {"elu_cpu": "buic"}, "celu": {"elu_cpu": "buic"},
    "leaky_relu": {"leaky_relu_cpu": "buic"}, "rrelu": {"leaky_relu_cpu": "buic"}, "prelu": {"prelu_cpu": "buic"},
    "silu": {"silu_cpu": "bui"}, "softshrink": {"softshrink_check": "buic"}, "hardshrink": {"hardshrink_cpu": "buic"},
    "hardsigmoid": {"hardsigmoid_cpu": "buic"}, "hardswish": {"hardswish_cpu": "buic"},
    "logsigmoid": {"log_sigmoid_cpu": "buic"}, "glu": {"glu_cpu": "buic"},
    "layer_norm": {"LayerNormKernelImpl": "buic"}, "group_norm": {"GroupNormKernelImpl": "buic"},
    "instance_norm": {"batch_norm": "buic"}, "rms_norm": {"rms_norm": "bui"},
    "mse_loss": {"mse_cpu": "buic"}, "smooth_l1_loss": {"smooth_l1_cpu": "buic"}, "huber_loss": {"huber_cpu": "buic"},
    "binary_cross_entropy": {"binary_cross_entropy": "buic"},
    "binary_cross_entropy_with_logits": {"log_sigmoid_cpu": "buic"},
    "multilabel_soft_margin_loss": {"log_sigmoid_cpu": "buic"},
    "avg_pool1d": {"avg_pool2d+int64": "buic"}, "local_response_norm": {"avg_pool2d+int64": "buic"},
    "lp_pool1d": {"avg_pool2d+int64": "uic"},
    "max_pool1d": {"max_pool1d_impl": "c"}, "adaptive_avg_pool1d": {"adaptive_avg_pool2d": "c"},
    "linear": {"addmm_impl_cpu_": "b"}, "unfold": {"im2col_out_cpu": "ui"},
})


# Losses whose kernel runs in the dtype input and target promote to (`mse_loss` of integer predictions and float
# targets computes in float).
_ON_RESULT_DTYPE = frozenset(("mse_loss", "smooth_l1_loss"))


def _casts(args, kwargs) -> bool:
    """Whether the call passes a dtype to compute in (`softmax(x, 0, dtype=tp.float32)`): the input's is moot."""
    if kwargs.get("dtype") is not None:
        return True
    return any(isinstance(a, _dtype.dtype) for a in args)


def guard(name, fn, table=None):
    """`fn` refusing the dtypes `table[name]` (default `RULES`) lists, with PyTorch's error."""
    rules = [(kinds, make) for kinds, make in (RULES if table is None else table)[name].items()]
    promoted = name in _ON_RESULT_DTYPE

    @functools.wraps(fn)
    def checked(input, *args, **kwargs):
        if isinstance(input, Tensor) and not _casts(args, kwargs):
            dt = input._raw.dtype
            if promoted:
                other = args[0] if args else kwargs.get("target")
                if isinstance(other, Tensor):
                    dt = jnp.result_type(dt, other._raw.dtype)
            for kinds, make in rules:
                if dt.kind in kinds:
                    err = make(str(dt), args, kwargs) if getattr(make, "takes_args", False) else make(str(dt))
                    if err is not None:
                        broadcast_first(input, *args, *kwargs.values())
                        raise err
        return fn(input, *args, **kwargs)
    return checked
