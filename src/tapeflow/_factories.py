"""Tensor factories: `tensor`, `zeros`, `ones`, `arange`, `rand`, ... and the global RNG."""

from __future__ import annotations

import builtins
import functools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

import xla_ops

from . import _adaptive, _dtype, _mt19937
from . import _device as _device_mod
from ._adaptive import trace_state_clean
from ._device import default_jax_device, host_array, is_meta_device, place, to_jax_device
from ._device import device as _as_device
from ._layout import check_memory_format
from ._meta import meta_of
from ._mt19937 import DEFAULT_SEED, MT19937
from ._state import state
from ._tensor import Pending, Tensor, py_type_name

__all__ = ["tensor", "as_tensor", "from_numpy", "frombuffer", "zeros", "ones", "full", "empty", "arange", "linspace",
           "logspace",
           "eye", "rand", "randn", "randint", "randperm", "normal", "zeros_like", "ones_like", "full_like",
           "empty_like", "rand_like", "randn_like", "randint_like", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "Generator", "next_key"]


def _leaf(arr, device, requires_grad) -> Tensor:
    if device is not None and is_meta_device(device):
        arr = meta_of(arr)  # (made on the host first: factories build their data eagerly)
    elif device is not None:
        arr = place(arr, device)
    t = Tensor._wrap(arr)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
    return t


def _infer(data, exact: bool = False):
    """NumPy array for nested Python data, with PyTorch's dtype inference (`exact`: keep Python numbers at full
    precision, for a caller that casts to a dtype it was given)."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (jax.Array, np.ndarray, np.generic)):
        return data
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
        return jnp.stack([jnp.asarray(_infer(d)) for d in data]) if data else np.zeros((0,), np.float32)
    try:
        arr = np.asarray(data)
    except ValueError:
        _ragged(data)
        raise
    if arr.dtype in _WIDE_OR_OBJECT and any(type(d) is builtins.int and not -2**63 <= d < 2**63 for d in _flat(data)):
        raise ValueError("Overflow when unpacking long long")  # (PyTorch reads Python ints as 64-bit integers)
    if exact and arr.dtype.kind in "fiucb":
        return arr
    if arr.dtype.kind in "fc" and arr.dtype.itemsize in (8, 16) and _holds_wide_numpy_scalars(data):
        return arr  # NumPy float64 / complex128 scalars keep their precision, as in PyTorch
    if arr.dtype.kind == "f":
        arr = arr.astype(_dtype.get_default_dtype().jax)
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "c":
        arr = arr.astype(np.complex64)
    elif arr.dtype.kind in "USV":
        raise TypeError(f"new(): invalid data type '{type(data).__name__ if isinstance(data, str) else arr.dtype.name}'")
    elif arr.dtype.kind == "O":
        raise TypeError(f"tensor(): could not infer a dtype for {type(data).__name__} data; pass numbers or "
                        "nested lists of numbers")
    elif arr.size == 0 and arr.dtype.kind != "b":
        arr = arr.astype(_dtype.get_default_dtype().jax)
    return arr


_WIDE_OR_OBJECT = (np.dtype(np.uint64), np.dtype(object))


def _ragged(data, dim: int = 0) -> None:
    """Raise PyTorch's error for nested sequences of unequal lengths (NumPy refused them)."""
    if not isinstance(data, (list, tuple)) or not data:
        return
    first = data[0]
    if isinstance(first, (list, tuple)):
        for item in data:
            if not isinstance(item, (list, tuple)):
                raise TypeError("not a sequence")
            if len(item) != len(first):
                raise ValueError(f"expected sequence of length {len(first)} at dim {dim + 1} (got {len(item)})")
        for item in data:
            _ragged(item, dim + 1)
    else:
        for item in data:
            if isinstance(item, (list, tuple)):
                raise TypeError(f"'{type(item).__name__}' object cannot be interpreted as an integer")


def _holds_wide_numpy_scalars(data) -> bool:
    """Whether nested Python data holds NumPy float64 or complex128 scalars (which PyTorch does not narrow)."""
    if not isinstance(data, (list, tuple)):
        return type(data) in (np.float64, np.complex128)
    return any(type(d) in (np.float64, np.complex128) for d in _flat(data))


def _flat(data):
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(d)
        else:
            yield d


def tensor(data, dtype=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (numbers, nested lists, NumPy/JAX arrays, Tensors).

    Python floats become the default dtype (float32), ints become int64.

    Example:
        >>> import tapeflow as tp
        >>> tp.tensor([[1, 2], [3, 4]], dtype=tp.float64, requires_grad=True)
        tensor([[1., 2.],
                [3., 4.]], dtype=tapeflow.float64, requires_grad=True)
    """
    arr = _infer(data, exact=dtype is not None)
    if dtype is not None:
        target = _dtype.to_jax_dtype(dtype)
        if arr.dtype.kind == "c" and np.dtype(target).kind != "c" and not isinstance(data, (Tensor, jax.Array)):
            raise TypeError("must be real number, not complex")
        if np.dtype(target).kind in "iu" and arr.dtype.kind in "iuf" and arr.size \
                and not isinstance(data, (Tensor, jax.Array, np.ndarray, np.generic)):
            _check_range(arr, np.dtype(target))
        arr = host_array(arr, target)
    else:
        arr = host_array(arr)
    return _leaf(arr, device, requires_grad)


def _check_range(arr: np.ndarray, target: np.dtype) -> None:
    """PyTorch's refusal of Python numbers an integer dtype cannot hold (`tensor([300], dtype=uint8)`); a
    negative integer wraps into an unsigned dtype, a negative float does not."""
    info = np.iinfo(target)
    low = -builtins.int(info.max) if target.kind == "u" and arr.dtype.kind in "iu" else builtins.int(info.min)
    lo, hi = arr.min(), arr.max()
    if not (lo >= low and hi <= info.max):  # (NaN fails both)
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` as a tensor, sharing memory when it already is one of that dtype.

    Example:
        >>> import tapeflow as tp
        >>> tp.as_tensor([1.0, 2.0], dtype=tp.float64)
        tensor([1., 2.], dtype=tapeflow.float64)
    """
    from ._tensor import as_tensor as _as

    return _as(data, dtype, device)


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor with the NumPy array's dtype and values.

    Example:
        >>> import numpy as np, tapeflow as tp
        >>> tp.from_numpy(np.array([1, 2]))
        tensor([1, 2])
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    if a.dtype.kind not in "biufc":
        raise TypeError(f"can't convert np.ndarray of type numpy.{a.dtype.type.__name__}. The only supported types "
                        "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, "
                        "uint32, uint16, uint8, and bool.")
    return Tensor._wrap(host_array(a))


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D tensor of `dtype` read from an object with the buffer protocol (`bytes`, `bytearray`, `mmap`),
    skipping `offset` bytes and reading `count` elements (all that are left when negative). A tensor's values
    live on its device, so unlike PyTorch's this one is a copy: a later write to the buffer does not show.

    Example:
        >>> import tapeflow as tp
        >>> tp.frombuffer(bytes([1, 0, 2, 0]), dtype=tp.int16)
        tensor([1, 2], dtype=tapeflow.int16)
    """
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    jd = np.dtype(_dtype.to_jax_dtype(dtype))
    size, item = view.nbytes, jd.itemsize
    if size == 0 or count == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if not 0 <= offset < size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({size} "
                         "bytes) minus 1")
    if count < 0:
        if (size - offset) % item:
            raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} bytes) must be a multiple "
                             f"of element size ({item})")
        count = (size - offset) // item
    elif offset + count * item > size:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({size} bytes)")
    arr = np.frombuffer(view.cast("B"), dtype=jd, count=count, offset=offset)
    t = Tensor._wrap(host_array(arr.copy()))
    return t.requires_grad_() if requires_grad else t


def _shape(size, name: str | None = None) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"size must be a tuple of ints, but got an element of type {type(s).__name__}")
        if s < 0:
            if name == "zeros":  # PyTorch's zeros has a message of its own
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _sized(name: str, shape: tuple, size) -> tuple:
    """The varargs shape of a factory, or its `size=` keyword (PyTorch takes either, not both)."""
    if size is None:
        return shape
    if shape:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _float_dtype(dtype):
    return _dtype.to_jax_dtype(dtype) if dtype is not None else _dtype.get_default_dtype().jax


# -- filled tensors: one cached program without inputs per (what, shape, dtype) ---------------------------------
_MADE_LIMIT = 4096
_made_programs: dict = {}  # (what, *static) -> jitted program without inputs


def _made(key: tuple, build, device, requires_grad, host=None) -> Tensor:
    """A new leaf holding `build()` (a filled tensor, exact in any order of evaluation). On the default device
    it comes from one jitted program per `key`, recorded into the pending segment with adaptive eager (no JAX
    call of its own: a factory inside a model's forward costs a few microseconds and is folded into the
    step's program), run at once otherwise.

    A `key` seen for the first time (a shape that changes from step to step) is filled by `host()`, NumPy's
    twin of `build` (given for small results only: see `_small`): a new program would compile for each new
    shape."""
    if device is not None and not _is_default_device(device):
        return _leaf(build(), device, requires_grad)
    fn = _made_programs.get(key)
    if fn is None:
        if len(_made_programs) >= _MADE_LIMIT:
            _made_programs.clear()
        if key not in _made_programs and host is not None and trace_state_clean():
            _made_programs[key] = None  # (compiled when seen again)
            return _leaf(host_array(host()), None, requires_grad)
        fn = _made_programs[key] = jax.jit(build)
    t = _adaptive.constant(fn)
    if requires_grad:
        t._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
    return t


def _small(shape: tuple, host):
    """`host` if a result of `shape` is small enough to be filled on the host at its first sighting, else None."""
    return host if math.prod(shape) <= 1 << 16 else None


def _is_default_device(device) -> bool:
    """Whether `device` is where JAX puts a program's results by default (the meta device is not)."""
    if is_meta_device(device):
        return False
    return to_jax_device(device) == default_jax_device()


def _fill_key(value):
    """`value` as a cache key that tells apart what `==` does not (`0.0` and `-0.0`, `1` and `True`); None
    where no key is exact (NaN, complex numbers, tensors)."""
    t = type(value)
    if t is builtins.float:
        return None if value != value else (t, value, math.copysign(1.0, value))
    if t is builtins.int or t is builtins.bool:
        return (t, value)
    return None


def zeros(*shape, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros.

    Example:
        >>> import tapeflow as tp
        >>> tp.zeros(2, 3)
        tensor([[0., 0., 0.],
                [0., 0., 0.]])
    """
    size = _sized("zeros", shape, size)
    shape, jd = _shape(size, "zeros"), _float_dtype(dtype)
    return _made(("zeros", shape, jd), functools.partial(jnp.zeros, shape, jd), device, requires_grad,
                 _small(shape, functools.partial(np.zeros, shape, jd)))


def ones(*shape, size=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones.

    Example:
        >>> import tapeflow as tp
        >>> tp.ones(2, dtype=tp.int64)
        tensor([1, 1])
    """
    size = _sized("ones", shape, size)
    shape, jd = _shape(size), _float_dtype(dtype)
    return _made(("ones", shape, jd), functools.partial(jnp.ones, shape, jd), device, requires_grad,
                 _small(shape, functools.partial(np.ones, shape, jd)))


def empty(*shape, size=None, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """An uninitialised tensor (zeros: XLA has no uninitialised memory).

    Example:
        >>> import tapeflow as tp
        >>> tp.empty(2, 2).shape
        tapeflow.Size([2, 2])
    """
    size = _sized("empty", shape, size)
    check_memory_format(memory_format, len(_shape(size)))  # (and PyTorch's message for a negative size)
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def _number(name: str, value) -> None:
    if not isinstance(value, (numbers.Number, np.generic, Tensor)):
        raise TypeError(f"{name}(): argument 'fill_value' (position 2) must be Number, not {type(value).__name__}")


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor filled with `fill_value` (dtype inferred from it, as PyTorch does).

    Example:
        >>> import tapeflow as tp
        >>> tp.full((2,), 7)
        tensor([7, 7])
        >>> tp.full((2,), 0.5)
        tensor([0.5000, 0.5000])
    """
    _number("full", fill_value)
    is_complex = isinstance(fill_value, (complex, np.complexfloating))
    if dtype is None:
        default = _dtype.get_default_dtype()
        dtype = (_dtype.bool if isinstance(fill_value, builtins.bool) else
                 _dtype.int64 if isinstance(fill_value, int) else
                 (_dtype.complex128 if default is _dtype.float64 else _dtype.complex64) if is_complex else default)
    shape, jd = _shape((size,) if isinstance(size, int) else (tuple(size),)), _dtype.to_jax_dtype(dtype)
    if not isinstance(fill_value, Tensor):
        fill_value = _dtype.check_number_fits(fill_value, jd)
    build = functools.partial(jnp.full, shape, fill_value, jd)
    value = _fill_key(fill_value)
    if value is None:
        return _leaf(build(), device, requires_grad)
    exact_on_host = np.dtype(jd).itemsize >= 4 or np.dtype(jd).kind in "biu"  # (no half-precision rounding)
    return _made(("full", shape, jd, value), build, device, requires_grad,
                 _small(shape, functools.partial(_host_full, shape, fill_value, jd)) if exact_on_host else None)


def _host_full(shape, fill_value, jd) -> np.ndarray:
    """`jnp.full` on the host: the value converted as XLA converts it (a negative integer wraps into an unsigned
    dtype, a float truncates into an integer one)."""
    return np.full(shape, np.array(fill_value).astype(jd), jd)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from `start` to `end` (exclusive) by `step`; int64 for integer arguments.

    Example:
        >>> import tapeflow as tp
        >>> tp.arange(4)
        tensor([0, 1, 2, 3])
        >>> tp.arange(0, 1, 0.25)
        tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = _dtype.int64 if all(isinstance(v, (int, np.integer)) for v in vals) else _dtype.get_default_dtype()
    jd = _dtype.to_jax_dtype(dtype)
    if jd.kind == "b":
        from ._ops._dtype_rules import _kernel  # (the `_ops` package imports this module)
        raise _kernel("arange_cpu")("bool")
    n = builtins.max(0, int(np.ceil((vals[1] - vals[0]) / vals[2])))
    if jd.kind in "iu" and not all(isinstance(v, (int, np.integer)) for v in vals):
        # PyTorch's integer arange: the values count from start by step, both truncated to integers; int64 also
        # truncates the end and counts the length in integers
        ints = [int(v) for v in vals]
        if jd == np.int64:
            if ints[2] == 0:
                raise ValueError("step must be nonzero")
            span = ints[1] - ints[0] + ints[2] - (1 if ints[2] > 0 else -1)
            n = builtins.max(0, -(-span // ints[2]))
        vals = ints
    key = (*map(_fill_key, vals), jd, n)
    cacheable = n <= _ARANGE_CACHED_SIZE and None not in key[:3] and (device is None or _is_default_device(device))
    arr = _aranges.get(key) if cacheable else None
    if arr is None:
        arr = host_array((vals[0] + vals[2] * np.arange(n, dtype=np.float64 if jd.kind in "fc" else np.int64))
                         .astype(jd))
        if cacheable and not isinstance(arr, jax.core.Tracer):
            if len(_aranges) >= _MADE_LIMIT:
                _aranges.clear()
            _aranges[key] = arr  # (immutable; held here, a segment never donates its buffer)
    return _leaf(arr, device, requires_grad)


# Small `arange`s, kept (positions in a model's forward are asked for at every step): the same values, without
# a transfer to the device each time.
_ARANGE_CACHED_SIZE = 1 << 16
_aranges: dict = {}
_device_mod._FORGET_ON_MOVE.append(_aranges.clear)


def _steps(steps) -> None:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


def _sampled_dtype(dtype, kernel: str):
    """The float dtype of uniform / normal samples; PyTorch's error for an integer or bool one."""
    jd = _float_dtype(dtype)
    if jd.kind not in "fc" and jd.name != "bfloat16":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.SCALAR_NAMES[_dtype.from_jax_dtype(jd).name]}\'')
    return jd


def linspace(start, end, steps: int, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Evenly spaced values from `start` to `end` (inclusive), `steps` of them.

    Example:
        >>> import tapeflow as tp
        >>> tp.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    _steps(steps)
    start, end = (_endpoint("linspace", v, which) for v, which in ((start, "start"), (end, "end")))
    jd = _float_dtype(dtype)
    if jd.kind == "b":
        from ._ops._dtype_rules import _kernel  # (the `_ops` package imports this module)
        raise _kernel("linspace_cpu")("bool")
    for v in (start, end)[:steps]:
        _check_fits(v, jd)
    return _leaf(host_array(_linspace_values(start, end, steps, jd)), device, requires_grad)


def _endpoint(name: str, v, which: str):
    if isinstance(v, Tensor):
        if v.ndim != 0:
            raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {which} with "
                               f"{v.ndim} dimension(s).")
        return v.item()
    return v


_C_TYPES = _dtype.C_TYPES
_check_fits = _dtype.check_fits


def _linspace_values(start, end, steps: int, jd) -> np.ndarray:
    """PyTorch's CPU linspace, value for value: the first half counts up from `start`, the second half
    down from `end`, each value one fused multiply-add in the dtype (in float64 for integer dtypes, then
    truncated); half-precision dtypes round after every operation."""
    if jd.kind == "c" or steps <= 1:
        if steps == 1:
            return np.full(1, start).astype(jd) if jd.kind in "fc" or jd.name == "bfloat16" else \
                np.full(1, int(start) if not isinstance(start, complex) else start).astype(jd)
        return np.asarray(jnp.linspace(start, end, steps, dtype=jd)) if steps else np.zeros(0, jd)
    idx = np.arange(steps)
    first = idx < steps // 2
    counts = np.where(first, idx, steps - 1 - idx).astype(np.float64)
    if jd in (np.float32, np.float64):
        a, b = jd.type(start), jd.type(end)
        step = (b - a) / jd.type(steps - 1)
        ends, signed = np.where(first, a, b).astype(jd), np.where(first, step, -step).astype(jd)
        return _mt19937.fma(signed, counts.astype(jd), ends).astype(jd)
    if jd.kind in "iub":
        a, b = (float(np.asarray(v).astype(jd)) for v in (start, end))
        step = (b - a) / (steps - 1)
        return np.trunc(_mt19937.fma(np.where(first, step, -step), counts, np.where(first, a, b))).astype(jd)
    # float16 / bfloat16: every operation computes in float32 and rounds to the dtype
    r = lambda x: np.asarray(x, np.float32).astype(jd).astype(np.float32)  # noqa: E731
    a, b = r(start), r(end)
    step = r(r(b - a) / r(steps - 1))
    prod = r(step * r(counts))
    return np.where(first, r(a + prod), r(b - prod)).astype(jd)


def logspace(start, end, steps: int, base: float = 10.0, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`base ** v` for `steps` evenly spaced `v` from `start` to `end` (inclusive).

    Example:
        >>> import tapeflow as tp
        >>> tp.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    _steps(steps)
    jd = _float_dtype(dtype)
    if jnp.issubdtype(jd, jnp.floating) and all(isinstance(v, (builtins.int, builtins.float)) for v in (start, end)) \
            and steps > 0:
        return _leaf(host_array(_logspace_values(start, end, steps, base, jd)), device, requires_grad)
    return _leaf(jnp.logspace(start, end, steps, base=base, dtype=jd), device, requires_grad)


def _logspace_values(start, end, steps: int, base: float, jd) -> np.ndarray:
    """PyTorch's logspace, value for value: the ends rounded to the dtype, their difference taken in it, the step
    in double, exponents counted from the start for the first half and from the end for the rest (so a NaN or
    infinite step reaches every value), `base ** exponent` in double, rounded to the dtype."""
    s, e = np.asarray(start, jd), np.asarray(end, jd)
    with np.errstate(all="ignore"):
        if steps == 1:  # (PyTorch fills `base ** start`, the start not rounded to the dtype)
            return _rounded(np.power(np.float64(base), np.full(1, start, np.float64)), jd)
        step = np.float64((e - s).astype(jd)) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        first = np.float64(s) + step * i
        last = np.float64(e) - step * (steps - i - 1)
        exponents = np.where(i < steps // 2, first, last)
        return _rounded(np.power(np.float64(base), exponents), jd)


def _rounded(values: np.ndarray, jd) -> np.ndarray:
    """Doubles rounded to `jd` as PyTorch rounds them: its half-precision types are made from a float, so those
    round to float32 first."""
    return (values.astype(np.float32) if np.dtype(jd).itemsize == 2 else values).astype(jd)


def eye(n: int, m: int | None = None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The `n` x `m` identity matrix (`m` defaults to `n`).

    Example:
        >>> import tapeflow as tp
        >>> tp.eye(2)
        tensor([[1., 0.],
                [0., 1.]])
    """
    for position, name, value in ((1, "n", n), (2, "m", m)):
        if value is not None and not isinstance(value, (int, np.integer)):
            raise TypeError(f"eye(): argument '{name}' (position {position}) must be int, not {py_type_name(value)}")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    jd = _float_dtype(dtype)
    return _made(("eye", n, m, jd), functools.partial(jnp.eye, n, m, dtype=jd), device, requires_grad,
                 _small((n, n if m is None else m), functools.partial(np.eye, n, m, dtype=jd)))


# -- random numbers ------------------------------------------------------------------------------------------
class Generator:
    """A random-number state: PyTorch's CPU stream (`_mt19937`), from which eager `rand`, `randn`, `randint`
    and `normal` draw on the CPU backend, so that a seeded program draws PyTorch's numbers; and a JAX PRNG
    key, split on every other draw (traced code, the other samplers, accelerators).

    Example:
        >>> import tapeflow as tp
        >>> g = tp.Generator().manual_seed(0)
        >>> tp.rand(2, generator=g)
        tensor([0.4963, 0.7682])
    """

    def __init__(self, device="cpu"):
        self._seed = DEFAULT_SEED
        self.mt = MT19937(DEFAULT_SEED)
        self.key = jax.random.key_data(jax.random.key(DEFAULT_SEED))

    def manual_seed(self, seed: int) -> Generator:
        # PyTorch reads the seed as a 64-bit integer: negative seeds stand for their unsigned two's complement
        seed = int(seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2**64
        self.mt.seed(self._seed)
        signed = self._seed - 2**64 if self._seed >= 2**63 else self._seed  # (JAX's keys take signed 64-bit seeds)
        self.key = jax.random.key_data(jax.random.key(signed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def next_key(self):
        new, sub = xla_ops.random.split_key(self.key)
        self.key = new
        return sub

    def get_state(self) -> Tensor:
        """The whole state as a uint8 tensor: the CPU stream's bytes, then the JAX key's."""
        key = jax.lax.bitcast_convert_type(jnp.asarray(self.key, jnp.uint32), jnp.uint8).reshape(-1)
        return Tensor._wrap(jnp.concatenate([jnp.asarray(self.mt.state()), key]))

    def set_state(self, state: Tensor) -> None:
        data = state._data if isinstance(state, Tensor) else jnp.asarray(state)
        if data.dtype != jnp.uint8 or data.shape != (_MT_STATE_BYTES + 8,):
            raise RuntimeError(f"Expected a uint8 state of {_MT_STATE_BYTES + 8} bytes (from get_state), got "
                               f"{data.dtype} of shape {tuple(data.shape)}")
        self.mt.set_state(np.asarray(data[:_MT_STATE_BYTES]))
        self.key = jax.lax.bitcast_convert_type(data[_MT_STATE_BYTES:].reshape(2, 4), jnp.uint32)


_MT_STATE_BYTES = 2520


def _stream(generator, dtype, device=None):
    """Where this draw comes from: the generator's PyTorch stream when eager (no trace, no traced key), in a
    dtype PyTorch's CPU samplers are reproduced for, for a draw PyTorch makes on the CPU (`_host_draw`);
    inside a staged trace or an uncached transform, the default generator's draws come from that stream
    too, through a `DrawTape`; None otherwise (the JAX key is used)."""
    gen = generator or default_generator
    if state.vmap_randomness and _vmapped_draw():
        return None
    if dtype.name not in _STREAM_DTYPES or not _host_draw(device):
        return None
    tape = draw_tape[0]
    if tape is not None and gen is default_generator:
        return tape
    return gen.mt if trace_state_clean() and not isinstance(gen.key, jax.core.Tracer) else None


def _host_draw(device) -> bool:
    """Whether PyTorch makes this draw on the CPU, from the stream tapeflow reproduces. On the CPU backend,
    every draw. With an accelerator as the default device: a factory's draw unless it names an accelerator
    `device` (PyTorch's default device is the CPU, so a seeded program's factories, module initialisation
    and data shuffling draw PyTorch's numbers there too), but not a draw that fills or imitates a tensor on
    the accelerator (dropout masks, in-place samplers, `*_like`): PyTorch draws those with the device's own
    generator, which the JAX key stands in for, and they leave the CPU stream untouched, as in PyTorch."""
    if _cpu_backend():
        return True
    if device is None:
        device = _draw_like[0]
        if device is None or device is _HOST:
            return True
    return (device.device if isinstance(device, Tensor) else _as_device(device)).type == "cpu"


def _cpu_backend() -> bool:
    if not _backend:
        _backend.append(jax.default_backend() == "cpu")
    return _backend[0]


def _drawing_for(target, fn, args, kwargs):
    outer, _draw_like[0] = _draw_like[0], target
    try:
        return fn(*args, **kwargs)
    finally:
        _draw_like[0] = outer


def drawn_for(like: Tensor, fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, whose draws fill or imitate `like`: made where `like` lives (`_host_draw`)."""
    if _cpu_backend() or _draw_like[0] is _HOST:
        return fn(*args, **kwargs)
    return _drawing_for(like, fn, args, kwargs)


def initialisation(fn):
    """`fn`'s draws are module initialisation, which PyTorch makes on the CPU (a model is built there and
    moved): they come from the CPU stream whatever the tensor's device."""
    @functools.wraps(fn)
    def initialise(*args, **kwargs):
        return fn(*args, **kwargs) if _cpu_backend() else _drawing_for(_HOST, fn, args, kwargs)
    return initialise


_backend: list = []
_HOST = object()  # (in `_draw_like`: draws of module initialisation)
_draw_like: list = [None]  # the tensor the draws under way fill or imitate (`drawn_for`), or _HOST
draw_tape: list = [None]  # the `DrawTape` of the staged trace or uncached transform under way, if any


class DrawTape:
    """The random draws of a function `tp.compile` traces. A compiled step draws what the eager step would:
    before each call the program's draws are made on the host from the default generator's stream, in order
    (`host_draws`), and passed in; the trace takes them in the order it asks for them. A draw the tape does
    not hold (the first trace, or different draws) is made on the host there and then, so that this call's
    numbers are still the eager ones, and noted in `found`: such a program serves one call, and the next
    call traces again with `found` as its draws."""

    def __init__(self, specs: tuple, values: list):
        self.specs, self.values, self.found = specs, values, []

    def _take(self, spec: tuple):
        i = len(self.found)
        self.found.append(spec)
        if i < len(self.specs) and self.specs[i] == spec:
            return self.values[i]
        return host_draws((spec,))[0]

    def uniform(self, n, dtype, low=0.0, high=1.0):
        return self._take(("uniform", n, np.dtype(dtype).name, float(low), float(high)))

    def normal(self, n, dtype, mean=0.0, std=1.0):
        return self._take(("normal", n, np.dtype(dtype).name, float(mean), float(std)))

    def integers(self, n, low, high, dtype):
        return self._take(("integers", n, np.dtype(dtype).name, int(low), int(high)))

    def exponential(self, n, dtype, lambd=1.0):
        return self._take(("exponential", n, np.dtype(dtype).name, float(lambd), None))


def host_draws(specs: tuple) -> list:
    """The draws `specs` (from a `DrawTape`) made now from the default generator's stream."""
    mt = default_generator.mt
    out = []
    for kind, n, dtype, a, b in specs:
        dtype = np.dtype(dtype)
        if kind == "integers":
            draw = mt.integers(n, a, b, dtype)
        elif kind == "exponential":
            draw = mt.exponential(n, dtype, a)
        else:
            draw = getattr(mt, kind)(n, dtype, a, b)
        out.append(host_array(draw))
    return out


_STREAM_DTYPES = frozenset(("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"))


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the global random-number generator; returns it.

    Example:
        >>> import tapeflow as tp
        >>> _ = tp.manual_seed(0); a = tp.rand(2); _ = tp.manual_seed(0)
        >>> bool((tp.rand(2) == a).all())
        True
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the global generator from fresh entropy; returns the seed.

    Example:
        >>> import tapeflow as tp
        >>> isinstance(tp.seed(), int)
        True
    """
    s = int(np.random.SeedSequence().entropy % (2**63))
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the global generator was last seeded with.

    Example:
        >>> import tapeflow as tp
        >>> _ = tp.manual_seed(3)
        >>> tp.initial_seed()
        3
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The global generator's state, for `set_rng_state`.

    Example:
        >>> import tapeflow as tp
        >>> state = tp.get_rng_state(); a = tp.rand(2); tp.set_rng_state(state)
        >>> bool((tp.rand(2) == a).all())
        True
    """
    return default_generator.get_state()


def set_rng_state(state) -> None:
    """Restore the global generator's state from `get_rng_state`.

    Example:
        >>> import tapeflow as tp
        >>> state = tp.get_rng_state(); a = tp.randn(3); tp.set_rng_state(state)
        >>> bool((tp.randn(3) == a).all())
        True
    """
    default_generator.set_state(state)


def next_key(generator: Generator | None = None):
    """A fresh JAX key from `generator` (default: the global one).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow._factories import next_key
        >>> next_key().shape
        (2,)
    """
    if state.vmap_randomness and _vmapped_draw():
        key = (generator or default_generator).next_key()
        for mode, axis in state.vmap_randomness:
            if mode == "different":  # a key of its own for each element of the batch
                key = jax.random.fold_in(key, jax.lax.axis_index(axis))
        return key
    return (generator or default_generator).next_key()


VMAP_RANDOMNESS_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the "
                         "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                         "of vmap")


def _vmapped_draw() -> bool:
    """A draw inside `func.vmap`: refused in its (default) "error" mode, as PyTorch's; True when some vmap
    asks for different draws per element (they then come from the JAX key, split along the batch)."""
    different = False
    for mode, _ in state.vmap_randomness:
        if mode == "different":
            different = True
        elif mode != "same":  # "error", or the refusal's own message
            raise RuntimeError(VMAP_RANDOMNESS_ERROR if mode == "error" else mode)
    return different


def rand(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples on [0, 1).

    Example:
        >>> import tapeflow as tp
        >>> x = tp.rand(2, 3)
        >>> x.shape, bool(((x >= 0) & (x < 1)).all())
        (tapeflow.Size([2, 3]), True)
    """
    shape, jd = _shape(_sized("rand", shape, size)), _sampled_dtype(dtype, "check_uniform_bounds")
    return _leaf(_sample(generator, shape, jd, "uniform", xla_ops.random.uniform, device), device, requires_grad)


def _sample(generator, shape: tuple, jd, sampler: str, device_op, device=None, **params):
    """An array of `shape` and dtype `jd` from PyTorch's stream's `sampler` where it serves the draw (see
    `_stream`; `device`: the factory's), else from the JAX op `device_op` and the generator's key; `params`
    go to both."""
    if jd.kind == "c":  # PyTorch draws the real view, twice as many reals (normals with std 1/sqrt(2))
        real = np.dtype(np.float32 if jd == np.complex64 else np.float64)
        mt = _stream(generator, real, device)
        if mt is not None and sampler in _COMPLEX_SCALE:
            n, scale = 2 * math.prod(shape), _COMPLEX_SCALE[sampler]
            pairs = (getattr(mt, sampler)(n, real) if scale is None else getattr(mt, sampler)(n, real, 0.0, scale))
            pairs = pairs.reshape(*shape, 2)
            return host_array(pairs[..., 0] + 1j * pairs[..., 1].astype(jd), jd)
    mt = _stream(generator, jd, device)
    if mt is not None:
        return host_array(np.reshape(getattr(mt, sampler)(math.prod(shape), jd, *params.values()), shape))
    return device_op(next_key(generator), shape=shape, dtype=jd, **params)


_COMPLEX_SCALE = {"uniform": None, "normal": math.sqrt(0.5)}  # (the samplers drawn for complex dtypes)


def uniform(low: float, high: float, size, *, generator=None, dtype=None) -> Tensor:
    """Samples uniform on [low, high), drawn as PyTorch's `uniform_` draws them (`Tensor.uniform_`).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow._factories import uniform
        >>> _ = tp.manual_seed(0); uniform(-1.0, 1.0, (2,))
        tensor([-0.0075,  0.5364])
    """
    shape, jd = _shape((tuple(size),)), _sampled_dtype(dtype, "check_uniform_bounds")
    mt = _stream(generator, jd)
    if mt is None:
        return rand(*shape, generator=generator, dtype=dtype) * (high - low) + low
    return _leaf(host_array(mt.uniform(math.prod(shape), jd, low, high).reshape(shape)), None, False)


def random_full_range(shape, dtype, generator=None) -> Tensor:
    """`Tensor.random_()` without bounds: integers in [0, the dtype's max] (floats: [0, 2^mantissa]).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow._factories import random_full_range
        >>> _ = tp.manual_seed(0); random_full_range((), tp.int64).item()
        900450186894289455
    """
    shape, jd = tuple(shape), _dtype.to_jax_dtype(dtype)
    mt = _stream(generator, jd)
    if mt is not None and not isinstance(mt, DrawTape):
        return Tensor._wrap(host_array(mt.full_range(math.prod(shape), jd).reshape(shape)))
    high = 2 ** (np.finfo(jd).nmant + 1) + 1 if jd.kind == "f" else 2 if jd == np.bool_ else int(np.iinfo(jd).max)
    return randint(0, high, shape, generator=generator, dtype=dtype)


def bernoulli_like(input: Tensor, p: float) -> Tensor:
    """`bernoulli_mask` shaped like `input`, drawn in the order of `input`'s memory, as PyTorch fills
    `empty_like(input).bernoulli_(p)` (dropout of a transposed tensor, such as a batch-first RNN's output,
    draws time-major)."""
    order = _memory_order(input)
    if order is None:
        return drawn_for(input, bernoulli_mask, input.shape, p, input.dtype)
    mask = drawn_for(input, bernoulli_mask, [input.shape[d] for d in order], p, input.dtype)
    return mask.permute(*np.argsort(order).tolist())


def _memory_order(t: Tensor):
    """The dimensions of a view from outermost to innermost in memory, when it is dense but not row-major;
    None otherwise (PyTorch's `empty_like` then lays its result out row-major too)."""
    if t._base is None or t.ndim < 2:
        return None
    shape, strides = tuple(t.shape), t.stride()
    order = sorted(range(t.ndim), key=lambda d: -strides[d])
    if order == list(range(t.ndim)):
        return None
    step = 1
    for d in reversed(order):  # dense and non-overlapping: each stride is the product of the sizes inside it
        if shape[d] != 1 and strides[d] != step:
            return None
        step *= shape[d]
    return order


def bernoulli_mask(shape, p: float, dtype, generator=None) -> Tensor:
    """0/1 draws in `dtype`, each 1 with probability `p`, as PyTorch's `bernoulli_(p)` draws them (a float64
    uniform below `p`): dropout's mask.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow._factories import bernoulli_mask
        >>> _ = tp.manual_seed(0); bernoulli_mask((6,), 0.5, tp.float32)
        tensor([0., 0., 1., 0., 0., 0.])
    """
    shape, jd = tuple(shape), _float_dtype(dtype)
    mt = _stream(generator, np.dtype(np.float64))
    if mt is not None:
        u = np.reshape(mt.uniform(math.prod(shape), np.dtype(np.float64)), shape)
        if isinstance(u, np.ndarray):  # (drawn on the host now: the mask is made there too, compiling nothing)
            return Tensor._wrap(host_array((u < p).astype(jd)))
    else:
        u = xla_ops.random.uniform(next_key(generator), shape=shape, dtype=np.dtype(np.float32))
    return Tensor._wrap((u < p).astype(jd))


def randn(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples.

    Example:
        >>> import tapeflow as tp
        >>> tp.randn(2, 3, dtype=tp.float64).dtype
        tapeflow.float64
    """
    shape, jd = _shape(_sized("randn", shape, size)), _sampled_dtype(dtype, "normal_kernel_cpu")
    return _leaf(_sample(generator, shape, jd, "normal", xla_ops.random.normal, device), device, requires_grad)


def randint(*args, generator=None, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    """Integers uniform on [low, high). `randint(high, size)` or `randint(low, high, size)` (each also with
    keywords).

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randint(0, 10, (4,))
        >>> x.dtype, bool(((x >= 0) & (x < 10)).all())
        (tapeflow.int64, True)
    """
    low, high, size = _randint_arguments(args, kwargs, generator=generator, dtype=dtype)
    if int(low) >= int(high):
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={int(low)} >= to={int(high)}")
    jd = _dtype.to_jax_dtype(dtype) if dtype is not None else np.dtype(np.int64)
    draw = jd if jnp.issubdtype(jd, jnp.integer) else np.dtype(np.int64)  # float dtypes hold drawn integers
    shape = _shape((tuple(size),))
    mt = _stream(generator, jd, device)
    if mt is not None:
        arr = host_array(mt.integers(math.prod(shape), int(low), int(high), jd).reshape(shape))
    else:
        arr = xla_ops.random.randint(next_key(generator), shape=shape, low=int(low), high=int(high), dtype=draw)
    if arr.dtype != jd:
        arr = arr.astype(jd)
    return _leaf(arr, device, requires_grad)


_RANDINT_SIGNATURES = [f" * ({form}, *, {gen}Tensor out = None, {{0}}.dtype dtype = None, {{0}}.layout layout = None, "
                       "{0}.device device = None, bool pin_memory = False, bool requires_grad = False)"
                       for form in ("int high, tuple of ints size", "int low, int high, tuple of ints size")
                       for gen in ("{0}.Generator generator, ", "")]


def _randint_arguments(args: tuple, kwargs: dict, **given) -> tuple:
    """`(low, high, size)` of a `randint` call, with PyTorch's TypeErrors for any other combination."""
    three = "low" in kwargs or len(args) >= 3 or (len(args) == 2 and "size" in kwargs) or \
        (len(args) == 1 and "high" in kwargs)
    names = ("low", "high", "size") if three else ("high", "size")
    bound = dict(zip(names, args))
    generator = given.get("generator")
    if len(args) > len(names) or set(kwargs) - set(names) or set(kwargs) & set(bound) or set(names) - {*bound, *kwargs} \
            or not (generator is None or isinstance(generator, Generator)):
        raise _randint_invalid(args, {**kwargs, **{k: v for k, v in given.items() if v is not None}})
    bound.update(kwargs)
    for position, name in enumerate(names, 1):
        value = bound[name]
        where = f"(position {position}) " if position <= len(args) else ""
        if name == "size":
            ok = isinstance(value, (tuple, list)) and all(_is_int_like(v) for v in value)
            want = "tuple of ints"
        else:
            ok = _is_int_like(value)
            want = "int"
        if not ok:
            if len(names) == 3:
                raise _randint_invalid(args, {**kwargs, **{k: v for k, v in given.items() if v is not None}})
            raise TypeError(f"randint(): argument '{name}' {where}must be {want}, not {py_type_name(value)}")
    return bound.get("low", 0), bound["high"], tuple(bound["size"])


def _is_int_like(v) -> bool:
    if isinstance(v, Tensor):
        return v.ndim == 0 and not v.is_floating_point() and not v.is_complex() and v.dtype.name != "bool"
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _randint_invalid(args: tuple, kwargs: dict) -> TypeError:
    def kind(v):
        if isinstance(v, Tensor):
            return "Tensor"
        if isinstance(v, _dtype.dtype):
            return f"{_dtype.PREFIX[0]}.dtype"
        return py_type_name(v)

    got = ", ".join([kind(a) for a in args] + [f"{k}={kind(v)}" for k, v in kwargs.items()])
    if kwargs and not args:
        got += ", "
    lines = "\n".join(line.format(_dtype.PREFIX[0]) for line in _RANDINT_SIGNATURES)
    return TypeError(f"randint() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f"{lines}\n")


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A random permutation of 0 .. n-1.

    Example:
        >>> import tapeflow as tp
        >>> sorted(tp.randperm(5).tolist())
        [0, 1, 2, 3, 4]
    """
    _shape((n,))
    mt = _stream(generator, np.dtype(np.int64), device)
    if mt is not None and not isinstance(mt, DrawTape):  # (PyTorch's swaps, on the host)
        arr = host_array(mt.permutation(int(n)))
    else:
        arr = xla_ops.random.permutation(next_key(generator), n=int(n))
    if dtype is not None:
        arr = arr.astype(_dtype.to_jax_dtype(dtype))
    return _leaf(arr, device, requires_grad)


def _check_std(std) -> None:
    """A negative standard deviation is refused (as PyTorch does) rather than silently mirrored."""
    if isinstance(std, Tensor):
        from ._ops._checks import outside

        if outside(std, 0.0, float("inf")):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Normal samples with mean `mean` and standard deviation `std`.

    Example:
        >>> import tapeflow as tp
        >>> tp.normal(2.0, 0.5, size=(3,)).shape
        tapeflow.Size([3])
    """
    _check_std(std)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        from ._dispatch import dispatch  # (the dispatcher imports this module)
        from ._ops.index import _broadcast_pair

        ref = mean if isinstance(mean, Tensor) else std
        shape = tuple(ref.shape)
        if isinstance(mean, Tensor) and isinstance(std, Tensor):
            shape = _broadcast_pair(tuple(mean.shape), tuple(std.shape))  # (one draw per element of the result)
        z = drawn_for(ref, randn, *shape, generator=generator, dtype=ref.dtype)
        return dispatch(xla_ops.random.normal_scaled, (z, mean, std))  # (no gradient in mean or std: PyTorch's)
    shape, jd = _shape((tuple(size),)), _float_dtype(dtype)
    arr = _sample(generator, shape, jd, "normal", xla_ops.random.normal, device, mean=float(mean), std=float(std))
    return _leaf(arr, device, requires_grad)


# -- *_like -------------------------------------------------------------------------------------------------------
def _like(t: Tensor, dtype, fn: str, memory_format=None):
    if not isinstance(t, Tensor):
        from ._ops._checks import tensor_arg  # (the `_ops` package imports this module)

        tensor_arg(fn, "input", t, 1)
    check_memory_format(memory_format, t.ndim)
    return t.shape, (dtype if dtype is not None else t.dtype)


def _placed_like(out: Tensor, input: Tensor, device) -> Tensor:
    """Without a `device`, a `*_like` result lives where its input does (its device, or its sharding)."""
    if device is None and input.is_meta:
        out._data = meta_of(out._data)
    elif device is None and jax.device_count() > 1 and type(input._raw) is not Pending:
        # (nothing is read with one device, where there is no other place, nor for a pending input, computed on
        # the default device as `out` is: pending values stay pending)
        src, data = input._data, out._data
        if not isinstance(src, jax.core.Tracer) and not isinstance(data, jax.core.Tracer):
            sharding = getattr(src, "sharding", None)
            if sharding is not None and sharding != data.sharding:
                out._data = jax.device_put(data, sharding)
    return out


def zeros_like(input: Tensor, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """Zeros with the shape (and, by default, the dtype) of `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.zeros_like(tp.ones(2, dtype=tp.int64))
        tensor([0, 0])
    """
    shape, dt = _like(input, dtype, "zeros_like", memory_format)
    return _placed_like(zeros(shape, dtype=dt, device=device, requires_grad=requires_grad), input, device)


def ones_like(input: Tensor, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """Ones with the shape (and, by default, the dtype) of `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.ones_like(tp.zeros(2))
        tensor([1., 1.])
    """
    shape, dt = _like(input, dtype, "ones_like", memory_format)
    return _placed_like(ones(shape, dtype=dt, device=device, requires_grad=requires_grad), input, device)


def empty_like(input: Tensor, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """An uninitialised tensor shaped like `input` (zeros).

    Example:
        >>> import tapeflow as tp
        >>> tp.empty_like(tp.ones(2, 3)).shape
        tapeflow.Size([2, 3])
    """
    _like(input, dtype, "empty_like", memory_format)
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value, dtype=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    """`fill_value` everywhere, with the shape (and, by default, the dtype) of `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.full_like(tp.zeros(2), 3.5)
        tensor([3.5000, 3.5000])
    """
    shape, dt = _like(input, dtype, "full_like", memory_format)
    return _placed_like(full(shape, fill_value, dtype=dt, device=device, requires_grad=requires_grad), input, device)


def rand_like(input: Tensor, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """Uniform samples on [0, 1) shaped like `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.rand_like(tp.zeros(2, 2)).shape
        tapeflow.Size([2, 2])
    """
    shape, dt = _like(input, dtype, "rand_like", memory_format)
    out = drawn_for(input, rand, shape, dtype=dt, device=device, requires_grad=requires_grad)
    return _placed_like(out, input, device)


def randn_like(input: Tensor, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    """Standard normal samples shaped like `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.randn_like(tp.zeros(3, dtype=tp.float64)).dtype
        tapeflow.float64
    """
    shape, dt = _like(input, dtype, "randn_like", memory_format)
    out = drawn_for(input, randn, shape, dtype=dt, device=device, requires_grad=requires_grad)
    return _placed_like(out, input, device)


def randint_like(input: Tensor, low, high=None, dtype=None, device=None, requires_grad=False,
                 memory_format=None) -> Tensor:
    """Integers in [low, high) shaped like `input` (its dtype by default).

    Example:
        >>> import tapeflow as tp
        >>> tp.randint_like(tp.zeros(3), 5).dtype
        tapeflow.float32
    """
    _like(input, dtype, "randint_like", memory_format)
    if high is None:
        low, high = 0, low
    out = drawn_for(input, randint, low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device,
                    requires_grad=requires_grad)
    return _placed_like(out, input, device)
