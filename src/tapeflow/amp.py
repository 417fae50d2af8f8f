"""`tapeflow.amp`: PyTorch's mixed-precision helpers, `autocast` and `GradScaler`.

`autocast(device_type, dtype)` follows PyTorch's autocast policies. Inside it, the ops PyTorch lists as
lower-precision (matrix products, `linear`, convolutions, attention, recurrent layers) cast their floating
inputs (not float64 ones) to `dtype` and compute in it; the ops it lists as float32 (losses, `prod`,
`cdist`, linear algebra and FFTs on the CPU; on GPUs also `softmax`, `log_softmax`, the norms, `sum`,
`cumsum`, `exp`, `log`, `pow` and other precision-sensitive ops) cast float16/bfloat16 inputs to float32;
every other op runs in its inputs' dtypes, promoting as usual. The casts are ordinary ops on the tape, so
gradients flow back to float32 parameters in float32. The policy is the autocast's device type's: `"cpu"`
for tensors on the CPU backend, `"cuda"` on a GPU (`"xla"` on a TPU takes the GPU policy). An autocast
for a device that JAX does not have, or to a dtype PyTorch does not support there, warns and does nothing,
as PyTorch's does; `enabled=False` turns autocast off inside an enabled region.

`GradScaler` is PyTorch's dynamic loss scaling: `scale(loss)` multiplies by the
scale, `unscale_(opt)` divides the gradients by it and records non-finite ones, `step(opt)` skips the step
when one was found, and `update()` backs the scale off after such a step or grows it after
`growth_interval` clean ones; with `enabled=False` each is a pass-through.

Example:
    >>> import tapeflow as tp
    >>> w = tp.nn.Parameter(tp.tensor([1.0, 2.0]))
    >>> opt = tp.optim.SGD([w], lr=0.1)
    >>> scaler = tp.amp.GradScaler("cpu", init_scale=4.0)
    >>> with tp.amp.autocast(device_type="cpu", dtype=tp.bfloat16):
    ...     loss = (w * w).sum()
    >>> scaler.scale(loss).backward()
    >>> w.grad
    tensor([ 8., 16.])
    >>> scaler.unscale_(opt)
    >>> w.grad
    tensor([2., 4.])
    >>> scaler.step(opt)
    >>> scaler.update()
    >>> w.detach()
    tensor([0.8000, 1.6000])
"""

from __future__ import annotations

import functools
import warnings

import jax

from . import _dtype
from ._state import state
from ._tensor import Tensor

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "custom_fwd", "custom_bwd"]


def is_autocast_available(device_type: str) -> bool:
    """Whether `autocast` accepts `device_type` (as PyTorch: "cpu", "cuda", ...).

    Example:
        >>> import tapeflow as tp
        >>> tp.amp.is_autocast_available("cpu")
        True
    """
    return device_type in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "maia")


# PyTorch's autocast op lists, by the op-table names of the ops they cover ("lower": computed in the autocast
# dtype; "fp32": reduced-precision inputs computed in float32). Composite functions carry the same policies
# as decorators (`lower_precision`, `full_precision`).
_LOWER = {
    "cpu": frozenset({"linear", "linear_nobias", "matmul", "mm", "bmm", "einsum", "conv", "conv_transpose",
                      "rnn_layer"}),
    "cuda": frozenset({"linear", "linear_nobias", "matmul", "mm", "bmm", "mv", "einsum", "conv", "conv_transpose",
                       "rnn_layer"}),
}
_FP32 = {
    "cpu": frozenset({"prod", "prod_dim", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
                      "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                      "cdist", "polar", "fft_c2c", "fft_r2c", "fft_c2r", "linalg_inv", "linalg_solve",
                      "linalg_lstsq", "linalg_lu_factor", "linalg_lu_solve", "linalg_qr", "linalg_svd",
                      "linalg_svdvals", "linalg_eigh", "linalg_eigvalsh", "linalg_eig", "linalg_eigvals",
                      "linalg_pinv", "cholesky"}),
    "cuda": frozenset({"acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
                       "reciprocal", "rsqrt", "sinh", "tan", "pow", "pow_scalar", "rpow", "softplus", "layer_norm",
                       "group_norm", "norm", "cdist", "logsumexp", "softmax", "log_softmax", "sum", "sum_dim",
                       "prod", "prod_dim", "cumsum", "cumprod", "mse_loss", "l1_loss", "smooth_l1_loss",
                       "huber_loss", "nll_loss", "cross_entropy", "kl_div", "binary_cross_entropy_with_logits"}),
}
_REDUCED = ("float16", "bfloat16")


def _policy_device(device_type: str) -> str:
    return "cpu" if device_type == "cpu" else "cuda"


def backend_device_type() -> str:
    """The autocast device type of the tensors tapeflow makes by default."""
    return {"cpu": "cpu", "gpu": "cuda", "tpu": "xla"}.get(jax.default_backend(), jax.default_backend())


def _cast(x, dtype, fp32: bool):
    """`x` cast for an autocast op: eligible floating tensors only (float64 never changes)."""
    if not isinstance(x, Tensor):
        return [_cast(v, dtype, fp32) for v in x] if isinstance(x, list) else x
    name = x._raw.dtype.name
    if fp32:
        return x.float() if name in _REDUCED else x
    return x.to(dtype) if name in ("float32", *_REDUCED) and x.dtype != dtype else x


def _intercept(op, args, params, proceed):
    region = state.autocast
    if region is not None:
        device = _policy_device(region[0])
        if op.name in _LOWER[device]:
            args = tuple(_cast(a, region[1], False) for a in args)
        elif op.name in _FP32[device]:
            args = tuple(_cast(a, region[1], True) for a in args)
    return proceed(op, args, params)


_intercept.deferrable = True  # (it only recasts arguments: adaptive eager goes on recording)


def _policy(fp32: bool, devices=("cpu", "cuda")):
    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            region = state.autocast
            if region is not None and _policy_device(region[0]) in devices:
                args = tuple(_cast(a, region[1], fp32) for a in args)
                kwargs = {k: _cast(v, region[1], fp32) for k, v in kwargs.items()}
            return fn(*args, **kwargs)
        return run
    return decorate


def promote(fn=None, *, devices=("cuda",)):
    """Decorator: under autocast (for `devices`), `fn`'s floating tensor arguments are cast to the widest
    floating dtype among them (PyTorch's "promote" ops, such as `index_put` or `dot` on GPUs)."""
    def decorate(f):
        @functools.wraps(f)
        def run(*args, **kwargs):
            region = state.autocast
            if region is not None and _policy_device(region[0]) in devices:
                floats = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and a.dtype.is_floating_point]
                if len({t.dtype for t in floats}) > 1:
                    widest = max((t.dtype for t in floats), key=lambda d: (d.itemsize, d != _dtype.float16))

                    def up(a):
                        return a.to(widest) if isinstance(a, Tensor) and a.dtype.is_floating_point else a
                    args, kwargs = tuple(map(up, args)), {k: up(v) for k, v in kwargs.items()}
            return f(*args, **kwargs)
        return run
    return decorate if fn is None else decorate(fn)


def refuse_bce() -> None:
    """PyTorch's refusal of `binary_cross_entropy` under a GPU autocast."""
    region = state.autocast
    if region is not None and _policy_device(region[0]) == "cuda":
        raise RuntimeError(
            "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\nMany models use "
            "a sigmoid layer right before the binary cross entropy layer.\nIn this case, combine the two layers "
            "using torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss.  "
            "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")


def lower_precision(fn=None, *, devices=("cpu", "cuda")):
    """Decorator: under autocast (for `devices`), `fn`'s floating tensor arguments are cast to its dtype (a
    composite function PyTorch lists as lower-precision, such as `addmm` or `scaled_dot_product_attention`)."""
    return _policy(False, devices) if fn is None else _policy(False, devices)(fn)


def full_precision(fn=None, *, devices=("cpu", "cuda")):
    """Decorator: under autocast (for `devices`), `fn`'s float16/bfloat16 tensor arguments are cast to
    float32 (a composite function PyTorch lists as float32, such as the margin losses)."""
    return _policy(True, devices) if fn is None else _policy(True, devices)(fn)


def _supported(device_type: str, dtype) -> bool:
    if device_type == "cpu":
        if dtype in (_dtype.bfloat16, _dtype.float16):
            return True
        warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast "
                      "only supports dtypes of torch.bfloat16, torch.float16 currently.", UserWarning, stacklevel=3)
        return False
    backend = backend_device_type()
    if device_type == "cuda" and backend != "cuda":
        warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                      stacklevel=3)
        return False
    if device_type != backend:  # (no tensor of that device type exists here)
        return False
    if dtype in (_dtype.bfloat16, _dtype.float16, _dtype.float32):
        return True
    warnings.warn(f"In {device_type} autocast, but the target dtype is not supported. Disabling autocast.",
                  UserWarning, stacklevel=3)
    return False


class autocast:
    """A mixed-precision region (context manager or decorator), PyTorch's `torch.autocast`: ops on the
    autocast's device type follow PyTorch's policies (see `tapeflow.amp`).

    Example:
        >>> import tapeflow as tp
        >>> a, b = tp.ones(2, 2), tp.ones(2, 2)
        >>> with tp.autocast("cpu", dtype=tp.bfloat16):
        ...     y = a @ b            # a lower-precision op: bfloat16
        ...     z = y.float().sum()  # the cast is an op on the tape
        >>> y.dtype, z.dtype
        (tapeflow.bfloat16, tapeflow.float32)
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if dtype is None:
            dtype = _autocast_dtypes.get(device_type, _dtype.bfloat16 if device_type == "cpu" else _dtype.float16)
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)

    def __enter__(self):
        self._outer = (state.autocast, _autocast_dtypes.get(self.device))
        _autocast_dtypes[self.device] = self.fast_dtype
        if not self._enabled:
            if state.autocast is not None and state.autocast[0] == self.device:
                state.autocast = None
        elif _supported(self.device, self.fast_dtype):
            state.autocast = (self.device, self.fast_dtype)
        if state.autocast is not None and _intercept not in state.interceptors:
            state.interceptors.append(_intercept)
        return self

    def __exit__(self, exc_type, exc, tb):
        state.autocast, dtype = self._outer
        if dtype is None:
            _autocast_dtypes.pop(self.device, None)
        else:
            _autocast_dtypes[self.device] = dtype
        if state.autocast is None and _intercept in state.interceptors:
            state.interceptors.remove(_intercept)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return wrapper


_autocast_dtypes: dict = {}  # the dtype last set for each device type (what `get_autocast_dtype` reads)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast for `device_type` (default "cuda", as PyTorch) is in effect on this thread.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autocast("cpu"):
        ...     tp.is_autocast_enabled("cpu")
        True
    """
    region = state.autocast
    return region is not None and region[0] == (device_type or "cuda")


def get_autocast_dtype(device_type: str):
    """The dtype autocast uses for `device_type`: the last one set, else PyTorch's default (bfloat16 on
    the CPU, float16 elsewhere).

    Example:
        >>> import tapeflow as tp
        >>> tp.get_autocast_dtype("cpu")
        tapeflow.bfloat16
    """
    return _autocast_dtypes.get(device_type, _dtype.bfloat16 if device_type == "cpu" else _dtype.float16)


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for a custom `autograd.Function.forward` (as PyTorch's): inside an enabled autocast for
    `device_type`, a `cast_inputs` dtype casts the floating tensor arguments to it and runs `fwd` with
    autocast off; otherwise `fwd` runs as it is (under the autocast in effect).

    Example:
        >>> import tapeflow as tp
        >>> @tp.amp.custom_fwd(device_type="cpu", cast_inputs=tp.float32)
        ... def forward(x):
        ...     return x * 2
        >>> with tp.autocast("cpu"):
        ...     forward(tp.ones(1, dtype=tp.bfloat16)).dtype
        tapeflow.float32
    """
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        if cast_inputs is None or not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)

        def cast(v):
            return v.to(cast_inputs) if isinstance(v, Tensor) and v.dtype.is_floating_point else v
        with autocast(device_type, enabled=False):
            return fwd(*map(cast, args), **{k: cast(v) for k, v in kwargs.items()})
    return forward


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for a custom `autograd.Function.backward` (as PyTorch's): runs `bwd` as it is.

    Example:
        >>> import tapeflow as tp
        >>> tp.amp.custom_bwd(lambda ctx, g: g, device_type="cpu")(None, 1.0)
        1.0
    """
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return bwd


class GradScaler:
    """Dynamic loss scaling, as `torch.amp.GradScaler` (also `tp.GradScaler`): `scale(loss)` before backward,
    `step(optimizer)` unscales the gradients and skips the step when one is inf or NaN, `update()` adapts the
    scale. Off (every call passes through) where the device is unavailable, with PyTorch's warning.

    Example:
        >>> import tapeflow as tp
        >>> scaler = tp.GradScaler("cpu", init_scale=8.0)
        >>> w = tp.ones(2, requires_grad=True)
        >>> opt = tp.optim.SGD([w], lr=0.5)
        >>> scaler.scale((w * w).sum()).backward()
        >>> w.grad
        tensor([16., 16.])
        >>> scaler.step(opt); scaler.update(); w
        tensor([0., 0.], requires_grad=True)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda":
            from . import cuda

            if not cuda.is_available():  # (PyTorch's warning and fallback)
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = None
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states: dict = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def _lazy_init(self):
        if self._scale is None:
            self._scale = float(self._init_scale)
            self._growth_tracker = self._init_growth_tracker

    def _state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(id(optimizer), {"stage": "ready", "found_inf": None})

    def scale(self, outputs):
        """`outputs` (a tensor, or a list/tuple/iterable of them) multiplied by the current scale."""
        if not self._enabled:
            return outputs
        self._lazy_init()
        from ._tensor import Tensor
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return map(self.scale, outputs)

    def unscale_(self, optimizer) -> None:
        """Divide `optimizer`'s gradients by the scale (once per step) and record whether any is not finite."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == "unscaled":
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        self._lazy_init()
        from . import no_grad
        inv = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not bool(p.grad.isfinite().all()):
                        found = True
                    p.grad.mul_(inv)
        state["found_inf"] = found
        state["stage"] = "unscaled"

    def step(self, optimizer, *args, **kwargs):
        """`optimizer.step(*args, **kwargs)` unless the unscaled gradients hold an inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == "ready":
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = "stepped"
        return retval

    def update(self, new_scale=None) -> None:
        """Back the scale off if a step this iteration found non-finite gradients, else count toward growth;
        or set it to `new_scale` (a float or a one-element tensor)."""
        if not self._enabled:
            return
        self._lazy_init()
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer_states = {}

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        self._lazy_init()
        return self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker if self._growth_tracker is not None else 0}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        self._scale = float(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]
