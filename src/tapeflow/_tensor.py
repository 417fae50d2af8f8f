"""`Tensor`: a JAX array (or tracer) plus autograd metadata.

The math lives in `xla_ops`; Tensor methods only delegate (see `_ops/`,
which attaches them). Aliases (views, `detach()`, `.data`) share a
`_Storage` record: its version counter, and the set of live views that an
in-place write must refresh.
"""

from __future__ import annotations

import math
import numbers
import pickle
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype
from ._device import default_jax_device, from_jax_device, host_array, place
from ._device import device as _device_cls
from ._meta import NO_DATA, MetaArray
from ._state import state as _mode
from ._tensor_str import format_array

__all__ = ["Tensor", "as_tensor", "is_tensor", "Size"]

_new = object.__new__


def py_type_name(value) -> str:
    """How PyTorch's argument checks name a Python value's type: `int`, `NoneType`, `numpy.bool`."""
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


class TracedValueError(RuntimeError):
    """A Python value (`item()`, `bool()`, `numpy()`) was asked of a tensor that JAX is tracing."""


class Size(tuple):
    """A tensor shape: a tuple with PyTorch's repr (`tapeflow.Size([2, 3])`).

    Example:
        >>> import tapeflow as tp
        >>> tp.ones(2, 3).shape
        tapeflow.Size([2, 3])
        >>> tp.ones(2, 3).shape.numel()
        6
    """

    def __repr__(self) -> str:
        return f"{_dtype.PREFIX[0]}.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class _Views:
    """The live aliases of a storage, held weakly. Cheaper to add to than a `WeakSet` (a view op adds on every
    call): dead references are dropped in bulk when the list has doubled since the last sweep."""

    __slots__ = ("refs", "limit")

    def __init__(self):
        self.refs, self.limit = [], 8

    def add(self, t) -> None:
        refs = self.refs
        refs.append(_weakref(t))
        if len(refs) > self.limit:
            refs[:] = [r for r in refs if r() is not None]
            self.limit = max(8, 2 * len(refs))

    def __iter__(self):
        for r in self.refs:
            t = r()
            if t is not None:
                yield t

    def __bool__(self) -> bool:
        return any(r() is not None for r in self.refs)


_weakref = weakref.ref


class _Storage:
    """Shared by a tensor and all its aliases: the version counter, live views and the address `data_ptr()`
    reports (0 until one is asked for: see `_storage`)."""

    __slots__ = ("version", "views", "ptr")

    def __init__(self):
        self.version = 0
        self.views = None
        self.ptr = 0


class _SharedVersion(_Storage):
    """A storage counting its versions on another storage's counter: `x.data = y` gives `x` storage of its own
    but keeps the version counter it shared with its views, as in PyTorch."""

    __slots__ = ("counter",)

    def __init__(self, counter: _Storage):
        self.counter = counter
        self.views = None
        self.ptr = 0

    @property
    def version(self) -> int:
        return self.counter.version

    @version.setter
    def version(self, value: int) -> None:
        self.counter.version = value


_FLOAT_KINDS = frozenset("fcV")
FOLLOW_DTYPE = "same as the tensor"  # a leaf's default `grad_dtype`: its own dtype


def _is_float_array(a) -> bool:
    return a.dtype.kind in _FLOAT_KINDS


_NON_LEAF_GRAD = ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                  "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                  "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf "
                  "Tensor by mistake, make sure you access the leaf Tensor instead.")


_warned_float = False


def _warn_float_of_requires_grad() -> None:
    """PyTorch's warning, once per process, for `float()` of a tensor that requires grad (the number leaves the
    graph: nothing computed from it is differentiated)."""
    global _warned_float
    _warned_float = True
    warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                  "Consider using tensor.detach() first.", UserWarning, stacklevel=3)


class Tensor:
    """A multi-dimensional array with autograd, backed by a JAX array.

    Build tensors with `tapeflow.tensor` and the factories; results of ops on
    tensors that require grad carry a `grad_fn`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([1.0], requires_grad=True)
        >>> y = x.exp()
        >>> y
        tensor([2.7183], grad_fn=<ExpBackward0>)
        >>> y.backward(); x.grad
        tensor([2.7183])
    """

    # `_raw` holds the array, or a `Pending` value under adaptive eager; `_data` (below) reads it with any pending
    # segment run first.
    __slots__ = ("_raw", "_requires_grad", "_grad", "grad_fn", "_output_nr", "_storage", "__weakref__", "__dict__")
    __array_priority__ = 1000

    # Rarely set; class defaults keep tensor creation cheap.
    _base = None  # the tensor this one is a view of
    _view = ()  # ((op, params, out_index), ...) from `_base` to this tensor
    _acc = None  # weakref to this leaf's AccumulateGrad
    _hooks = None  # {id: fn} gradient hooks of a leaf
    _post_accumulate_hooks = None  # {id: fn} called with the leaf after its .grad is updated
    _retains_grad = False
    _inference = False  # made inside `inference_mode`
    _is_param = False
    _no_grad_view = None  # "no_grad" / "inference": a view of a tensor requiring grad made in that mode
    _unsafe_view = False  # an output of unsafe_split / unsafe_chunk (may be written in place)
    _detached_at = -1  # the sequence number taken when `detach_()` removed its history
    _custom_fn_view = False  # a view output of a custom Function's forward (written in place: PyTorch's error)
    _grad_dtype = FOLLOW_DTYPE  # a leaf's `grad_dtype` when set: a dtype, or None for any
    _untracked_no_grad_view = False  # "no_grad" / "inference": a view made so of a tensor that did not require grad

    def __init__(self, *args, device=None, dtype=None, requires_grad=False):
        """Legacy constructor: `Tensor([1, 2])` (float data) or `Tensor(2, 3)` / `Tensor(t.size())` (a shape)."""
        if len(args) == 1 and type(args[0]) is Size:  # (a shape, as in PyTorch; a plain tuple is data)
            arr = jnp.zeros(args[0], _dtype.get_default_dtype().jax)
        elif len(args) == 1 and not isinstance(args[0], int):
            src = args[0]
            if isinstance(src, Tensor):
                arr = src._data
            else:
                arr = host_array(src, _dtype.get_default_dtype().jax)
        else:  # (no arguments: an empty tensor, shape (0,))
            arr = jnp.zeros(tuple(args) if args else (0,), _dtype.get_default_dtype().jax)
        if dtype is not None:
            arr = arr.astype(_dtype.to_jax_dtype(dtype))
        if device is not None:
            arr = place(arr, device)
        _init(self, arr, None, 0, False)
        if requires_grad:
            self._set_requires_grad(True, "Only Tensors of floating point and complex dtype")

    @staticmethod
    def _make(data, grad_fn, output_nr: int, requires_grad: bool) -> Tensor:
        t = _new(Tensor)
        t._raw = data
        t.grad_fn = grad_fn
        t._output_nr = output_nr
        t._requires_grad = requires_grad
        t._grad = None
        t._storage = None
        return t

    @staticmethod
    def _wrap(data) -> Tensor:
        """A new leaf that does not require grad."""
        t = _new(Tensor)
        t._raw = data
        t.grad_fn = None
        t._output_nr = 0
        t._requires_grad = False
        t._grad = None
        t._storage = None
        if _mode.inference:
            t._inference = True
        return t

    # -- autograd attributes ---------------------------------------------------
    @property
    def grad(self):
        """The gradient accumulated by backward passes (None until one reaches this leaf)."""
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if tuple(value._data.shape) != tuple(self._data.shape):
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor "
                                   f"of size '{list(self._data.shape)}'. Please ensure that the gradient and the "
                                   "tensor are the same size")
            want = self._data.dtype if self._grad_dtype is FOLLOW_DTYPE else self._grad_dtype
            if want is not None and value._data.dtype != want:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtype.CPP_NAMES[value._data.dtype.name]}' to a "
                    f"tensor with grad_dtype '{_dtype.SCALAR_NAMES[want.name]}'. The gradient must match the tensor's "
                    "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with "
                    "a specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes "
                    "of a tensor and its gradient may break downstream systems that assume they match.")
        self._grad = value

    @property
    def grad_dtype(self):
        """The dtype a leaf's gradient must have (its own dtype unless set); None: any dtype.

        Setting it makes backward passes cast the gradient they accumulate into `.grad` to that dtype (None
        keeps the dtype a gradient arrives in).

        Example:
            >>> import tapeflow as tp
            >>> x = tp.ones(2, requires_grad=True)
            >>> x.grad_dtype
            tapeflow.float32
            >>> x.grad_dtype = tp.float64
            >>> (x * 2).sum().backward(); x.grad.dtype
            tapeflow.float64
        """
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        gd = self._grad_dtype
        if gd is FOLLOW_DTYPE:
            return self.dtype
        return None if gd is None else _dtype.from_jax_dtype(gd)

    @grad_dtype.setter
    def grad_dtype(self, value) -> None:
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dtype.dtype):
            raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got {type(value).__name__}")
        want = None if value is None else np.dtype(value.jax)
        g = self._grad
        if want is not None and g is not None and g._data.dtype != want:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{_dtype.SCALAR_NAMES[want.name]}' because there is already a gradient "
                f"with dtype '{_dtype.CPP_NAMES[g._data.dtype.name]}'. Please clear the gradient (.grad = None) "
                "before changing grad_dtype, or ensure the new grad_dtype matches the existing gradient's dtype.")
        self._grad_dtype = want

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def requires_grad(self) -> bool:
        if self._requires_grad:
            return True
        a = self._raw
        return isinstance(a, jax.core.Tracer) and _reverse_traced(a)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if type(flag) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        self._set_requires_grad(flag, "only Tensors of floating point and complex dtype")

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")

    @property
    def volatile(self) -> bool:
        """Removed in PyTorch (always False, with its warning); use `no_grad`."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value) -> None:
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                      UserWarning, stacklevel=2)

    @property
    def _grad_fn(self):
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self) -> None:
        raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")

    @property
    def _backward_hooks(self):
        """The gradient hooks registered on this leaf (`register_hook`), or None."""
        return self._hooks

    @_backward_hooks.setter
    def _backward_hooks(self, hooks) -> None:
        # PyTorch's legacy way to set a leaf's hooks: a dict (name -> hook) kept as given, so that entries added
        # later run too (as in PyTorch, hooks set this way on a tensor with a history never run).
        self._hooks = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set whether autograd records ops on this leaf (in place); returns self."""
        if type(requires_grad) is not bool:
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{py_type_name(requires_grad)}")
        return self._set_requires_grad(requires_grad, "only Tensors of floating point dtype")

    def _set_requires_grad(self, requires_grad, who: str) -> Tensor:
        """`requires_grad_`, the `requires_grad` setter and factories (`requires_grad=True`), which PyTorch words
        differently when refusing an integer tensor (`who` can require gradients)."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and self._inference and not _mode.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if requires_grad and not _is_float_array(self._raw):
            raise RuntimeError(f"{who} can require gradients (got {self.dtype}); convert first, e.g. "
                               "x.float().requires_grad_()")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        s = self._storage
        return 0 if s is None else s.version

    def _st(self) -> _Storage:
        s = self._storage
        if s is None:
            s = self._storage = _Storage()
        return s

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in `.grad` during backward."""
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook):
        """Register `hook(grad) -> grad or None`, called with the gradient of this tensor.

        Returns a handle whose `.remove()` unregisters it.

        Example:
            >>> import tapeflow as tp
            >>> x = tp.ones(2, requires_grad=True)
            >>> h = x.register_hook(lambda g: g * 2)
            >>> x.sum().backward(); x.grad
            tensor([2., 2.])
        """
        from .autograd.graph import RemovableHandle

        if isinstance(self._data, jax.core.Tracer):
            # JAX may differentiate this traced value: the hook applies to its cotangent there too.
            from .autograd._hooks_jax import hook_traced

            handle = hook_traced(self, hook)
            if not self._requires_grad:
                return handle
        elif not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        h = RemovableHandle(self._hooks)
        self._hooks[h.id] = hook
        return h

    def register_post_accumulate_grad_hook(self, hook):
        """Register `hook(tensor) -> None`, called after a backward pass has accumulated into this leaf's `.grad`.

        Returns a handle whose `.remove()` unregisters it.

        Example:
            >>> import tapeflow as tp
            >>> x = tp.ones(2, requires_grad=True)
            >>> h = x.register_post_accumulate_grad_hook(lambda t: print(t.grad))
            >>> (x * 3).sum().backward()
            tensor([3., 3.])
        """
        from .autograd.graph import RemovableHandle

        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = {}
        h = RemovableHandle(self._post_accumulate_hooks)
        self._post_accumulate_hooks[h.id] = hook
        return h

    def is_inference(self) -> bool:
        """Whether this tensor was made inside `inference_mode` (it can then never join autograd)."""
        return self._inference

    def detach(self) -> Tensor:
        """A new tensor sharing this one's data (and version counter), with no history.

        On a JAX tracer it is also off JAX's derivatives (`lax.stop_gradient`), so
        `jax.grad` and `tapeflow.func` see what the tape sees."""
        data = self._raw  # (a pending value stays pending: detaching reads nothing)
        if isinstance(data, jax.core.Tracer):
            return _alias(self, Tensor._wrap(jax.lax.stop_gradient(data)), _DETACHED)
        new = Tensor._wrap(data)
        if self._inference:
            new._inference = True  # (PyTorch: detaching an inference tensor, in any mode, gives one)
        base = self._base
        if base is None or not self._view:
            return _alias(base if base is not None else self, new, peer=True)
        # A view: the same view of a detached alias of its base, so that it holds neither the base nor its
        # graph, and a write into the base later gives it no history (it is no view of the base's history).
        root = base.detach()
        _alias(root, new)
        new._view = self._view
        return new

    def detach_(self) -> Tensor:
        """Detach in place: this tensor becomes a leaf that does not require grad."""
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        if self.grad_fn is not None:  # nodes that saved it refuse to run (see `graph.check_not_detached`)
            from .autograd import graph

            self._detached_at = next(graph._sequence)
            graph.detached_in_place[0] = True
        self.grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        if isinstance(self._data, jax.core.Tracer):
            self._data = jax.lax.stop_gradient(self._data)
        from .autograd import forward_ad

        if forward_ad._levels:  # (its forward gradient goes too, as PyTorch's detach_)
            forward_ad._drop(self)
        return self

    @property
    def data(self) -> Tensor:
        """This tensor's data as a tensor outside autograd: an alias (writes through it change this tensor)
        with a version counter of its own, as in PyTorch, so that autograd does not see writes made
        through `.data`."""
        alias = self.detach()
        own = _Storage()
        own.views = alias._storage.views  # still refreshed with (and refreshing) every alias
        if self._raw.size:
            from ._storage import data_ptr

            data_ptr(self)  # (the storage's address, given now: the alias reports the same one)
            own.ptr = alias._storage.ptr
        alias._storage = own
        return alias

    @data.setter
    def data(self, value: Tensor) -> None:
        """Swap in `value`'s data (shape and dtype may change); the version counter stays, as in PyTorch."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if (self._coo is None) != (value._coo is None):  # (a dense tensor's data cannot become sparse, or back)
            raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
                               "incompatible tensor type.")
        if self._requires_grad and not _is_float_array(value._raw):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex "
                               "dtype")
        if self._base is None and self._storage is not None and self._storage.views is not None:
            _leave_storage(self)  # (its views keep the old data, as in PyTorch: `.data =` swaps the storage)
        self._data = value._data
        self.__dict__.pop("_own_layout", None)  # (and takes the new data's layout)

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    # -- array attributes ----------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._raw.shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension."""
        if dim is None:
            return Size(self._raw.shape)
        return self._raw.shape[dim]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_jax_dtype(self._raw.dtype)

    @property
    def device(self):
        if type(self._raw) is MetaArray:
            return _META
        try:
            devs = self._raw.devices()
        except (AttributeError, jax.errors.ConcretizationTypeError):  # (a pending value or a tracer)
            return from_jax_device(default_jax_device())
        return from_jax_device(next(iter(devs)))

    @property
    def ndim(self) -> int:
        return self._raw.ndim

    def dim(self) -> int:
        return self._raw.ndim

    def ndimension(self) -> int:
        return self._raw.ndim

    def numel(self) -> int:
        return math.prod(self._raw.shape)

    nelement = numel

    def element_size(self) -> int:
        return self._raw.dtype.itemsize

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def __len__(self) -> int:
        if self._raw.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._raw.shape[0]

    # -- conversions to Python / NumPy ---------------------------------------------
    @property
    def is_meta(self) -> bool:
        return type(self._raw) is MetaArray

    def _concrete(self, what: str):
        if type(self._raw) is MetaArray:
            if what == "numpy()":
                raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the "
                                "tensor to host memory first.")
            if what == "item()":
                raise RuntimeError("Tensor.item() cannot be called on meta tensors")
            raise NotImplementedError(NO_DATA)
        if isinstance(self._data, jax.core.Tracer):
            raise TracedValueError(
                f"tapeflow: {what} needs a concrete value, but this tensor is being traced by JAX "
                "(inside jax.jit/vmap/grad or tp.compile). Keep data-dependent Python outside the "
                "traced function, or use tensor ops (tp.where) instead.")
        return self._data

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array (read-only view of the JAX buffer where possible)."""
        self._check_numpy(force)
        return np.asarray(self._concrete("numpy()"))

    def _check_numpy(self, force: bool = False) -> None:
        """PyTorch's refusals of `numpy()` (and of NumPy conversions, which go through it)."""
        if self._requires_grad and not force and _mode.grad_enabled:  # (under no_grad PyTorch allows it)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._raw.dtype == jnp.bfloat16:  # (NumPy has no bfloat16 of its own)
            raise TypeError("Got unsupported ScalarType BFloat16")

    def __array__(self, dtype=None, copy=None):
        self._check_numpy()
        a = np.asarray(self._concrete("conversion to NumPy"))
        return a.astype(dtype) if dtype is not None else a

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._raw.size != 1:
            raise RuntimeError(f"a Tensor with {self._raw.size} elements cannot be converted to Scalar")
        a = self._concrete("item()")
        if a.size != 1:
            raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
        return a.reshape(()).item()

    def tolist(self):
        return np.asarray(self._concrete("tolist()")).tolist()

    def __contains__(self, element) -> bool:
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((element == self).any())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    def __bool__(self) -> bool:
        a = self._concrete("bool()")
        if a.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if a.size == 0 else 'more than one value'} "
                               "is ambiguous")
        return bool(a.reshape(()))

    def __float__(self) -> float:
        if self._raw.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._requires_grad and not _warned_float:
            _warn_float_of_requires_grad()
        return float(_real_part(self.item(), "double"))

    def __int__(self) -> int:
        if self._raw.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(_real_part(self.item(), "int64_t"))

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self) -> str:
        return _format(self)

    def __reduce_ex__(self, protocol):
        base = self._base
        if base is not None and self._view and not isinstance(base._raw, jax.core.Tracer):
            # A view pickles as its base (pickled once, however many views refer to it) and its view chain, so
            # that views saved together with their base still alias it when loaded, as in PyTorch.
            return (_rebuild_view, (base, self._view, self._requires_grad))
        return (_rebuild, (np.asarray(self._concrete("pickling")), self._requires_grad))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment. Use detach().clone() first.")
        new = type(self)._copy_leaf(self)
        memo[id(self)] = new
        return new

    @classmethod
    def _copy_leaf(cls, t):
        new = _new(cls)
        _init(new, t._data, None, 0, t._requires_grad)
        if t._grad is not None and not t._is_param:  # (a Parameter's copy starts without one, as PyTorch's)
            new._grad = Tensor._wrap(t._grad._data)
        if t.__dict__:
            for k, v in t.__dict__.items():
                if k not in ("_acc", "_hooks", "_post_accumulate_hooks", "_base", "_view"):
                    new.__dict__[k] = v
        return new


try:  # JAX's reverse-mode tracer (no public name): under jax.grad / jax.vjp the differentiated values are these
    from jax._src.interpreters.ad import LinearizeTracer as _LinearizeTracer
except ImportError:  # pragma: no cover - a JAX without it: requires_grad stays False under transforms
    _LinearizeTracer = ()


def _reverse_traced(a) -> bool:
    """Whether the traced value `a` is being differentiated in reverse mode (`tp.func.grad`, `vjp`, `jacrev`,
    `autograd.functional`, `jax.grad`), looking through vmap's and forward mode's tracers: such a tensor
    reports `requires_grad=True`, as it does under `torch.func.grad`."""
    for _ in range(32):
        if isinstance(a, _LinearizeTracer):
            return True
        inner = getattr(a, "val", None)
        if inner is None:
            inner = getattr(a, "primal", None)
        if inner is None or not isinstance(inner, jax.core.Tracer):
            return False
        a = inner
    return False


def _init(t, data, grad_fn, output_nr, requires_grad):
    t._raw = data
    t.grad_fn = grad_fn
    t._output_nr = output_nr
    t._requires_grad = requires_grad
    t._grad = None
    t._storage = None
    if _mode.inference:
        t._inference = True


def _rebuild(array, requires_grad):
    return Tensor._make(host_array(array), None, 0, requires_grad)


def _rebuild_view(base, chain, requires_grad):
    """A view of `base` by `chain` (`((op_name, params, out_index), ...)` of view ops from the op table)."""
    from xla_ops._op import TABLE
    from xla_ops.shape import view_apply

    if not isinstance(base, Tensor) or not isinstance(chain, tuple) or not all(
            isinstance(s, tuple) and len(s) == 3 and s[0] in TABLE for s in chain):
        raise pickle.UnpicklingError("a saved view names something that is not a tensor and a chain of view ops")
    t = Tensor._make(view_apply.compiled((("chain", chain),))(base._data), None, 0, requires_grad)
    t._storage, t._base, t._view = base._st(), base, chain
    st = t._storage
    if st.views is None:
        st.views = _Views()
    st.views.add(t)
    return t


_DETACHED = ("detach", (), None)  # the view-chain step of a detached alias of a tracer


class Pending:
    """The value of one op output in an adaptive-eager segment that has not run yet (see `_adaptive`): its shape
    and dtype are known."""

    __slots__ = ("shape", "dtype", "aval", "segment", "index", "value", "__weakref__")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def get(self):
        """The value, running its segment first if it has not run."""
        if self.value is None:
            self.segment.run()
        return self.value


_raw_get = Tensor.__dict__["_raw"].__get__
_raw_set = Tensor.__dict__["_raw"].__set__


def _materialized(t):
    v = _raw_get(t)
    if type(v) is Pending:
        v = v.get()
        _raw_set(t, v)
    return v


# A tensor's array: a pending value's segment runs first (the raw slot, `_raw`, is read where a shape or a dtype
# is all that is needed). A property of `Tensor` itself, so a pending tensor's class is its own class.
Tensor._data = property(_materialized, _raw_set)


def _alias(src: Tensor, new: Tensor, view=None, peer: bool = False) -> Tensor:
    """Make `new` an alias of `src`: same storage; `view` extends the view chain. With `peer` (`detach()`, not a
    view in PyTorch) an alias of a tensor that is no view is a second root of the storage, not a view of `src`:
    a write to either reaches the other through the storage's alias list, and it does not keep `src` (nor the
    graph `src` heads) alive."""
    st = new._storage = src._st()
    if new._inference and not src._inference:
        new._inference = False  # a view of a normal tensor made in inference mode is a normal tensor (PyTorch)
    if st.views is None:
        st.views = _Views()
    if peer and src._base is None:
        if not any(r() is src for r in st.views.refs):  # (a root joins the alias list with its first peer)
            st.views.add(src)
    else:
        base = new._base = src._base if src._base is not None else src
        chain = src._view if view is None else src._view + (view,)
        if chain:
            new._view = chain
            if not _mode.grad_enabled and base._requires_grad:  # an in-place write with grad mode on is refused
                new._no_grad_view = "inference" if _mode.inference else "no_grad"
            elif src._no_grad_view:
                new._no_grad_view = src._no_grad_view
            elif src._untracked_no_grad_view:
                new._untracked_no_grad_view = src._untracked_no_grad_view
            elif not _mode.grad_enabled and not new._inference:  # (so is a write that would give it a history)
                new._untracked_no_grad_view = "inference" if _mode.inference else "no_grad"
    st.views.add(new)
    return new


def _real_part(v, ctype: str):
    """A complex number as a real one for `float()` / `int()`: PyTorch refuses a nonzero imaginary part."""
    if type(v) is complex:
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return v.real
    return v


def _leave_storage(t: Tensor) -> None:
    """`t` (a tensor no view) takes a storage of its own, keeping its version counter: the tensors that viewed or
    aliased it keep the old values, on a hidden root of the old storage."""
    st = t._storage
    others = [w for w in st.views if w is not t]
    if others:
        root = Tensor._wrap(t._data)
        root._storage = st
        st.views.add(root)
        for w in others:
            if w._base is t:
                w._base = root
    st.views.refs[:] = [r for r in st.views.refs if r() is not None and r() is not t]
    t._storage = _SharedVersion(st)


def is_tensor(obj) -> bool:
    """Whether `obj` is a tapeflow Tensor.

    Example:
        >>> import tapeflow as tp
        >>> tp.is_tensor(tp.ones(1)), tp.is_tensor([1.0])
        (True, False)
    """
    return isinstance(obj, Tensor)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` as a Tensor, without a copy when it already is one (of that dtype)."""
    if isinstance(data, Tensor):
        if dtype is None or data.dtype is _dtype.to_dtype(dtype):
            return data
        return data.to(dtype)
    from ._factories import tensor

    return tensor(data, dtype=dtype, device=device)


_META = _device_cls("meta")


def _format(t: Tensor) -> str:
    a = t._data
    extras = []
    if type(t._raw) is MetaArray:
        body = "tensor(..."
        extras.append("device='meta'")
        extras.append(f"size={tuple(t._raw.shape)}")
        if t.dtype is not _dtype.get_default_dtype():
            extras.append(f"dtype={t.dtype!r}")
    elif isinstance(a, jax.core.Tracer):
        body = f"tensor({a}"
    else:
        arr = np.asarray(a)
        body = "tensor(" + format_array(arr, indent=7)
        if arr.size == 0 and arr.ndim != 1:
            extras.append(f"size={tuple(arr.shape)}")
        dt = t.dtype
        default = _dtype.get_default_dtype()
        if arr.size == 0:  # (no element shows whether it is an integer: any dtype but the default is named)
            if dt is not default:
                extras.append(f"dtype={dt!r}")
        elif dt not in (default, _dtype.complex128 if default is _dtype.float64 else _dtype.complex64,
                        _dtype.int64, _dtype.bool):
            extras.append(f"dtype={dt!r}")
    fn = Tensor.__dict__["grad_fn"].__get__(t)  # (the slot: an invalid view's `grad_fn` raises, its repr does not)
    if fn is not None:
        extras.append(f"grad_fn=<{type(fn).__name__}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    from .autograd import forward_ad

    if forward_ad._levels:  # a dual tensor shows its tangent, as in PyTorch
        try:
            tangent = forward_ad.unpack_dual(t).tangent
        except RuntimeError:  # a stale tangent (see `forward_ad`): printing is no place to raise
            tangent = None
        if tangent is not None:
            extras.append(f"tangent={tangent!r}")
    # A suffix that would run past 80 columns goes on a line of its own, as PyTorch prints it.
    text = body[len("tensor("):]
    last = len(text) - text.rfind("\n") + 1  # PyTorch's measure (two more than the last line's length)
    for e in extras:
        if last + len(e) + 2 > 80:
            body += ",\n       " + e
            last = 7 + len(e)
        else:
            body += ", " + e
            last += len(e) + 2
    return body + ")"

