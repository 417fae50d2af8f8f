"""`tapeflow.amp`: PyTorch's mixed-precision helpers, `autocast` and `GradScaler`.

tapeflow computes every op in its inputs' dtypes: `autocast(..., enabled=False)` and an autocast whose
dtype is float32 run the block unchanged. An enabled autocast to a lower-precision dtype (which in PyTorch
recasts chosen ops' inputs) raises `NotImplementedError` on entry rather than compute in a precision the
program did not ask for. `GradScaler` is PyTorch's dynamic loss scaling: `scale(loss)` multiplies by the
scale, `unscale_(opt)` divides the gradients by it and records non-finite ones, `step(opt)` skips the step
when one was found, and `update()` backs the scale off after such a step or grows it after
`growth_interval` clean ones; with `enabled=False` each is a pass-through.

Example:
    >>> import tapeflow as tp
    >>> w = tp.nn.Parameter(tp.tensor([1.0, 2.0]))
    >>> opt = tp.optim.SGD([w], lr=0.1)
    >>> scaler = tp.amp.GradScaler("cpu", init_scale=4.0)
    >>> with tp.amp.autocast(device_type="cpu", dtype=tp.bfloat16, enabled=False):
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

from . import _dtype

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd"]


def is_autocast_available(device_type: str) -> bool:
    """Whether `autocast` accepts `device_type` (as PyTorch: "cpu", "cuda", ...)."""
    return device_type in ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "maia")


class autocast:
    """A context manager (and decorator) for a mixed-precision region: a pass-through when disabled or when
    `dtype` is float32; an enabled lower-precision autocast raises `NotImplementedError` on entry.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autocast("cpu", dtype=tp.bfloat16, enabled=False):
        ...     y = tp.ones(2) * 3
        >>> y.dtype
        tapeflow.float32
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if dtype is None:
            dtype = _dtype.bfloat16 if device_type == "cpu" else _dtype.float16
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)

    def __enter__(self):
        if self._enabled and self.fast_dtype != _dtype.float32:
            raise NotImplementedError(
                f"tapeflow computes each op in its inputs' dtypes: an enabled autocast to {self.fast_dtype} is not "
                "supported (pass enabled=False, or cast the model with .to(dtype))")
        return self

    def __exit__(self, exc_type, exc, tb):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return wrapper


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for a custom `autograd.Function.forward` (as PyTorch's): with no autocast in effect it
    returns `fwd` to run as it is; a lower-precision `cast_inputs` is refused like an enabled autocast."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if cast_inputs is not None and cast_inputs != _dtype.float32:
        raise NotImplementedError(f"tapeflow has no autocast: custom_fwd(cast_inputs={cast_inputs}) is not supported")
    return fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for a custom `autograd.Function.backward` (as PyTorch's): runs `bwd` as it is."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return bwd


class GradScaler:
    """Dynamic loss scaling, as `torch.amp.GradScaler`."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = bool(enabled)
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
