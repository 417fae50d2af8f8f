"""The rest of PyTorch's top-level namespace that programs reach for: `meshgrid`, dtype queries (`finfo`,
`iinfo`, `promote_types`, `result_type`, `can_cast`, `broadcast_shapes`), printing and threading settings,
determinism and matmul-precision flags, and the functional forms of a few layers under their `torch.*` names."""

from __future__ import annotations

import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import xla_ops

from . import _dtype, _tensor_str
from ._tensor import Tensor

__all__ = ["_assert", "meshgrid", "finfo", "iinfo", "promote_types", "result_type", "can_cast", "broadcast_shapes",
           "set_printoptions", "set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "is_conj", "is_neg", "resolve_neg", "is_signed", "scalar_tensor", "vmap",
           "zero_", "fill", "fill_", "inf", "nan", "pi", "e", "newaxis", "is_inference", "is_storage", "empty_strided",
           "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "set_warn_always", "is_warn_always_enabled",
           "chain_matmul"]


def meshgrid(*tensors, indexing: str = "ij"):
    """Coordinate grids from 1-d tensors: with `indexing="ij"` the i-th output varies along dimension i;
    `"xy"` swaps the first two dimensions (as NumPy's default).

    Example:
        >>> import tapeflow as tp
        >>> gx, gy = tp.meshgrid(tp.tensor([1, 2, 3]), tp.tensor([4, 5]), indexing="ij")
        >>> gx.shape, gy[0]
        (tapeflow.Size([3, 2]), tensor([4, 5]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    n = len(flat)
    grids = [t.reshape(tuple(-1 if i == k else 1 for i in range(n))).expand(shape) for k, t in enumerate(flat)]
    if swap:  # the grids of the swapped inputs, handed back in the callers' order
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


class finfo:
    """Machine limits of a floating-point dtype (`bits`, `eps`, `max`, `min`, `tiny`, `smallest_normal`,
    `resolution`), as `torch.finfo`.

    Example:
        >>> import tapeflow as tp
        >>> tp.finfo(tp.float32).eps, tp.finfo().bits
        (1.1920928955078125e-07, 32)
    """

    def __init__(self, type=None):
        d = _dtype.get_default_dtype() if type is None else _dtype.to_dtype(type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            f"'{d.name}'")
        info = jnp.finfo(d.to_real().jax if d.is_complex else d.jax)
        self.dtype = (d.to_real() if d.is_complex else d).name
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)  # (a Python float, as PyTorch gives it)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (`bits`, `max`, `min`), as `torch.iinfo`.

    Example:
        >>> import tapeflow as tp
        >>> tp.iinfo(tp.int8).max, tp.iinfo(tp.uint8).min
        (127, 0)
    """

    def __init__(self, type):
        d = _dtype.to_dtype(type)
        if d.is_floating_point or d.is_complex:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{d.name}'")
        info = np.iinfo(np.dtype(d.jax)) if d.name != "bool" else None
        self.dtype = d.name
        self.bits = 8 if info is None else int(info.bits)
        self.max, self.min = (1, 0) if info is None else (int(info.max), int(info.min))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def promote_types(type1, type2):
    """The dtype PyTorch promotes two dtypes to.

    Example:
        >>> import tapeflow as tp
        >>> tp.promote_types(tp.int8, tp.uint8), tp.promote_types(tp.int64, tp.float16)
        (tapeflow.int16, tapeflow.float16)
    """
    a, b = _dtype.to_dtype(type1), _dtype.to_dtype(type2)
    return _dtype.from_jax_dtype(jnp.promote_types(a.jax, b.jax))


def result_type(tensor1, tensor2):
    """The dtype of `tensor1 op tensor2` under PyTorch's promotion (tensors or Python numbers).

    Example:
        >>> import tapeflow as tp
        >>> tp.result_type(tp.ones(2, dtype=tp.int8), 2.5), tp.result_type(tp.ones(2), tp.tensor(1.0, dtype=tp.float64))
        (tapeflow.float32, tapeflow.float32)
    """
    from ._factories import tensor
    from ._ops import add

    if not isinstance(tensor1, Tensor):
        tensor1, tensor2 = tensor2, tensor1  # (promotion does not depend on the order)
    if not isinstance(tensor1, Tensor):
        tensor1 = tensor(tensor1)
    a = _empty_like_meta(tensor1)
    b = _empty_like_meta(tensor2) if isinstance(tensor2, Tensor) else tensor2
    return add(a, b).dtype


def _empty_like_meta(t: Tensor) -> Tensor:
    from ._factories import empty

    return empty(tuple(t.shape), dtype=t.dtype, device="meta")


_KIND = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow `from_` to `to` without a category drop (float to int, complex to
    real, a number to bool).

    Example:
        >>> import tapeflow as tp
        >>> tp.can_cast(tp.int32, tp.float32), tp.can_cast(tp.float32, tp.int32)
        (True, False)
    """
    a, b = _dtype.to_dtype(from_), _dtype.to_dtype(to)
    return _KIND[np.dtype(a.jax).kind] <= _KIND[np.dtype(b.jax).kind]


def broadcast_shapes(*shapes):
    """The shape tensors of `shapes` broadcast to, without building them.

    Example:
        >>> import tapeflow as tp
        >>> tp.broadcast_shapes((2, 1), (1, 3), (3,))
        tapeflow.Size([2, 3])
    """
    from ._tensor import Size

    norm = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    n = max((len(s) for s in norm), default=0)
    out = [1] * n
    for s in norm:
        for i, d in enumerate((1,) * (n - len(s)) + s):
            if d < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {list(s)}")
            if d != 1:
                if out[i] not in (1, d):
                    raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                       f"between arg 0 and arg {norm.index(s)}.")
                out[i] = d
    return Size(out)


_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, 2 ** 63 - 1, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """How tensors print: decimals, the element count above which prints are summarised, the items shown at each
    end, the line width, a `profile` (`"default"`, `"short"`, `"full"`) and `sci_mode` (None: chosen per tensor).

    Example:
        >>> import tapeflow as tp
        >>> tp.set_printoptions(precision=2); print(tp.tensor([1.2345])); tp.set_printoptions(profile="default")
        tensor([1.23])
    """
    if profile is not None:
        _tensor_str.PRECISION, _tensor_str.THRESHOLD, _tensor_str.EDGEITEMS, _tensor_str.LINEWIDTH = _PROFILES[profile]
        _tensor_str.SCI_MODE = None
    for name, value in (("PRECISION", precision), ("THRESHOLD", threshold), ("EDGEITEMS", edgeitems),
                        ("LINEWIDTH", linewidth)):
        if value is not None:
            setattr(_tensor_str, name, int(value))
    if sci_mode is not None or profile is not None:
        _tensor_str.SCI_MODE = sci_mode


_threads = {"intra": os.cpu_count() or 1, "inter": os.cpu_count() or 1}


def set_num_threads(num: int) -> None:
    """Accepted for PyTorch programs; XLA picks its CPU threads itself (see the performance docs). The value is
    what `get_num_threads` returns.

    Example:
        >>> import tapeflow as tp
        >>> n = tp.get_num_threads(); tp.set_num_threads(1); tp.get_num_threads(); tp.set_num_threads(n)
        1
    """
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads["intra"] = int(num)


def get_num_threads() -> int:
    """The value last given to `set_num_threads` (the number of CPUs before).

    Example:
        >>> import tapeflow as tp
        >>> tp.get_num_threads() >= 1
        True
    """
    return _threads["intra"]


def set_num_interop_threads(num: int) -> None:
    """Accepted for PyTorch programs (see `set_num_threads`).

    Example:
        >>> import tapeflow as tp
        >>> tp.set_num_interop_threads(2); tp.get_num_interop_threads()
        2
    """
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _threads["inter"] = int(num)


def get_num_interop_threads() -> int:
    """The value last given to `set_num_interop_threads`.

    Example:
        >>> import tapeflow as tp
        >>> tp.get_num_interop_threads() >= 1
        True
    """
    return _threads["inter"]


_flags = {"deterministic": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded for PyTorch programs: XLA's CPU kernels are deterministic already.

    Example:
        >>> import tapeflow as tp
        >>> tp.use_deterministic_algorithms(True); tp.are_deterministic_algorithms_enabled()
        True
        >>> tp.use_deterministic_algorithms(False)
    """
    _flags["deterministic"], _flags["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether `use_deterministic_algorithms(True)` was called.

    Example:
        >>> import tapeflow as tp
        >>> tp.are_deterministic_algorithms_enabled()
        False
    """
    return _flags["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The `warn_only` given to `use_deterministic_algorithms`.

    Example:
        >>> import tapeflow as tp
        >>> tp.is_deterministic_algorithms_warn_only_enabled()
        False
    """
    return _flags["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """The precision of float32 matrix products, PyTorch's setting: `"highest"` (the default: full float32 on
    every device), `"high"` (TensorFloat-32 on GPUs that have it, three bfloat16 passes on TPUs) or
    `"medium"` (one bfloat16 pass). CPUs compute float32 products in full whatever the setting.

    It is part of every program: changing it waits for programs being compiled in the background and drops
    compiled programs (JAX's caches), so the next step recompiles under the new precision. Set it once, at the
    start of a program, as PyTorch programs do. `tapeflow.backends.cuda.matmul.allow_tf32 = True` is the
    same as `"high"`.

    Example:
        >>> import tapeflow as tp
        >>> tp.set_float32_matmul_precision("high"); tp.get_float32_matmul_precision()
        'high'
        >>> tp.set_float32_matmul_precision("highest")
    """
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"  # (PyTorch's words)
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    if precision == xla_ops.get_matmul_precision():
        return
    from . import _adaptive

    _adaptive.wait_for_compiles()  # (a program traced under the old precision must not land after the clear)
    xla_ops.set_matmul_precision(precision)
    jax.clear_caches()


def get_float32_matmul_precision() -> str:
    """The value last given to `set_float32_matmul_precision` (`"highest"` before).

    Example:
        >>> import tapeflow as tp
        >>> tp.get_float32_matmul_precision()
        'highest'
    """
    return xla_ops.get_matmul_precision()


def is_conj(input) -> bool:
    """False: tapeflow conjugates eagerly, so no tensor carries a lazy conjugation bit.

    Example:
        >>> import tapeflow as tp
        >>> tp.is_conj(tp.tensor([1j]).conj())
        False
    """
    return False


def is_neg(input) -> bool:
    """False: no tensor carries a lazy negation bit here.

    Example:
        >>> import tapeflow as tp
        >>> tp.is_neg(tp.ones(1))
        False
    """
    return False


def resolve_neg(input):
    """`input` itself (there is no lazy negation to resolve).

    Example:
        >>> import tapeflow as tp
        >>> tp.resolve_neg(tp.tensor([1.0]))
        tensor([1.])
    """
    return input


def is_signed(input) -> bool:
    """Whether the tensor's dtype is signed (False for bool and uint8).

    Example:
        >>> import tapeflow as tp
        >>> tp.is_signed(tp.ones(1)), tp.is_signed(tp.ones(1, dtype=tp.uint8))
        (True, False)
    """
    return input.dtype.is_signed


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False):
    """A 0-d tensor holding the number `s`, in the default float dtype unless `dtype` says otherwise.

    Example:
        >>> import tapeflow as tp
        >>> tp.scalar_tensor(3)
        tensor(3.)
    """
    from ._factories import tensor

    return tensor(s, dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """`tapeflow.func.vmap` under PyTorch's `torch.vmap` name.

    Example:
        >>> import tapeflow as tp
        >>> tp.vmap(lambda x: x.sum())(tp.ones(3, 2))
        tensor([2., 2., 2.])
    """
    from .func import vmap as _vmap

    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def zero_(input):
    """Fill `input` with zeros in place.

    Example:
        >>> import tapeflow as tp
        >>> tp.zero_(tp.ones(2))
        tensor([0., 0.])
    """
    return input.zero_()


def fill_(input, value):
    """Fill `input` with `value` in place.

    Example:
        >>> import tapeflow as tp
        >>> tp.fill_(tp.ones(2), 5.0)
        tensor([5., 5.])
    """
    return input.fill_(value)


def fill(input, value):
    """A copy of `input` filled with `value`.

    Example:
        >>> import tapeflow as tp
        >>> tp.fill(tp.ones(2), 5.0)
        tensor([5., 5.])
    """
    return input.clone().fill_(value)


#: Math constants under their `torch.*` names.
inf, nan, pi, e = float("inf"), float("nan"), float(np.pi), float(np.e)
newaxis = None


def is_inference(input) -> bool:
    """Whether `input` was made in inference mode (`Tensor.is_inference()`).

    Example:
        >>> import tapeflow as tp
        >>> with tp.inference_mode():
        ...     t = tp.ones(2)
        >>> tp.is_inference(t), tp.is_inference(tp.ones(2))
        (True, False)
    """
    return input.is_inference()


def is_storage(obj) -> bool:
    """Whether `obj` is a storage (`Tensor.untyped_storage()`, `Tensor.storage()`), not a tensor.

    Example:
        >>> import tapeflow as tp
        >>> tp.is_storage(tp.ones(2)), tp.is_storage(tp.ones(2).untyped_storage())
        (False, True)
    """
    from ._storage import TypedStorage, UntypedStorage

    return isinstance(obj, (UntypedStorage, TypedStorage))


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False):
    """`empty(size)` that reports `stride` as its strides (`stride()`, `is_contiguous()`, and which shapes
    `view()` accepts follow it, as in PyTorch).

    Example:
        >>> import tapeflow as tp
        >>> t = tp.empty_strided((2, 3), (1, 2))
        >>> t.shape, t.stride(), t.is_contiguous()
        (tapeflow.Size([2, 3]), (1, 2), False)
    """
    from ._factories import empty

    size, stride = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: got {len(stride)} strides for "
                           f"{len(size)} dimensions")
    out = empty(size, dtype=dtype, device=device, requires_grad=requires_grad)
    out.__dict__["_own_layout"] = (size, stride, 0)
    return out


def unsafe_split(input, split_size_or_sections, dim: int = 0):
    """`split` whose outputs may be written in place (PyTorch's `unsafe_split`: the caller vouches for it).

    Example:
        >>> import tapeflow as tp
        >>> [p.tolist() for p in tp.unsafe_split(tp.arange(4), 2)]
        [[0, 1], [2, 3]]
    """
    return _unsafe(input.split(split_size_or_sections, dim))


def unsafe_chunk(input, chunks: int, dim: int = 0):
    """`chunk` whose outputs may be written in place (PyTorch's `unsafe_chunk`).

    Example:
        >>> import tapeflow as tp
        >>> [p.tolist() for p in tp.unsafe_chunk(tp.arange(4), 2)]
        [[0, 1], [2, 3]]
    """
    return _unsafe(input.chunk(chunks, dim))


def unsafe_split_with_sizes(input, split_sizes, dim: int = 0):
    """`split_with_sizes` whose outputs may be written in place (PyTorch's `unsafe_split_with_sizes`).

    Example:
        >>> import tapeflow as tp
        >>> [p.tolist() for p in tp.unsafe_split_with_sizes(tp.arange(5), [2, 3])]
        [[0, 1], [2, 3, 4]]
    """
    return _unsafe(input.split_with_sizes(split_sizes, dim))


def _unsafe(parts):
    for p in parts:
        p._unsafe_view = True  # exempt from the refusal of in-place writes into multi-output views
    return parts


_warn_always = [False]


def set_warn_always(b: bool) -> None:
    """Repeat warnings that tapeflow gives once per process (as PyTorch's `TORCH_WARN_ONCE`) every time.

    Example:
        >>> import tapeflow as tp
        >>> tp.set_warn_always(True); tp.is_warn_always_enabled()
        True
        >>> tp.set_warn_always(False)
    """
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether once-per-process warnings repeat (see `set_warn_always`).

    Example:
        >>> import tapeflow as tp
        >>> tp.is_warn_always_enabled()
        False
    """
    return _warn_always[0]


def _assert(condition, message) -> None:
    """`assert condition, message` as a function (PyTorch's `torch._assert`, which model code uses where an
    `assert` statement would be stripped or untraceable): raises AssertionError with `message` when
    `condition` (a bool, or a one-element tensor) is false.

    Example:
        >>> import tapeflow as tp
        >>> tp._assert(tp.tensor(2) > 1, "too small")
        >>> try:
        ...     tp._assert(False, "shape mismatch")
        ... except AssertionError as e:
        ...     print(e)
        shape mismatch
    """
    assert condition, message


_chain_matmul_warned = False


def chain_matmul(*matrices):
    """The product of 2-D `matrices`, in the cheapest order (deprecated in PyTorch: `linalg.multi_dot` takes a
    list and also vectors at the ends).

    Example:
        >>> import tapeflow as tp
        >>> tp.chain_matmul(tp.ones(2, 3), tp.ones(3, 4), tp.ones(4, 1)).tolist()
        [[12.0], [12.0]]
    """
    global _chain_matmul_warned
    if not _chain_matmul_warned:
        _chain_matmul_warned = True
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                      "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                      "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    from .linalg import multi_dot

    return multi_dot(matrices)



Tensor.is_neg = is_neg
Tensor.resolve_neg = resolve_neg


# -- PyTorch's top-level in-place forms of some nn.functional functions (`torch.selu_(x)`) ------------------------
def _functional():
    from .nn import functional

    return functional


def selu_(input):
    """`selu` written into `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.selu_(tp.tensor([0.0, 1.0]))
        tensor([0.0000, 1.0507])
    """
    return _functional().selu(input, inplace=True)


def celu_(input, alpha=1.0):
    """`celu` written into `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.celu_(tp.tensor([0.0, 1.0]), 2.0)
        tensor([0., 1.])
    """
    return _functional().celu(input, alpha, inplace=True)


def threshold_(input, threshold, value):
    """`threshold` written into `input`: elements not above `threshold` become `value`.

    Example:
        >>> import tapeflow as tp
        >>> tp.threshold_(tp.tensor([0.2, 0.8]), 0.5, 9.0)
        tensor([9.0000, 0.8000])
    """
    return _functional().threshold(input, threshold, value, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """`rrelu` written into `input` (in evaluation, negative slopes are `(lower + upper) / 2`).

    Example:
        >>> import tapeflow as tp
        >>> tp.rrelu_(tp.tensor([-1.0, 1.0]), 0.2, 0.4)
        tensor([-0.3000,  1.0000])
    """
    if generator is not None:
        raise TypeError("rrelu_() got an unexpected keyword argument 'generator'; draw the slopes with the global "
                        "generator (seed it with tapeflow.manual_seed)")
    return _functional().rrelu(input, lower, upper, training, inplace=True)


def dropout_(input, p, train):
    """`dropout` written into `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.dropout_(tp.ones(3), 0.5, False)
        tensor([1., 1., 1.])
    """
    return _functional().dropout(input, p, train, inplace=True)


def alpha_dropout_(input, p, train):
    """`alpha_dropout` written into `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.alpha_dropout_(tp.ones(3), 0.5, False)
        tensor([1., 1., 1.])
    """
    return _functional().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input, p, train):
    """`feature_alpha_dropout` written into `input`.

    Example:
        >>> import tapeflow as tp
        >>> tp.feature_alpha_dropout_(tp.ones(2, 3), 0.5, False)
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
    """
    return _functional().feature_alpha_dropout(input, p, train, inplace=True)


__all__ += ["selu_", "celu_", "threshold_", "rrelu_", "dropout_", "alpha_dropout_", "feature_alpha_dropout_"]
