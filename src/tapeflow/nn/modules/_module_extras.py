"""The rest of `nn.Module`'s API: dtype and device shorthands, state-dict hooks, extra state, `set_submodule`,
`to_empty`, and the deprecated `register_backward_hook` (mixed into `Module`)."""

from __future__ import annotations

import warnings
from collections import OrderedDict

from ... import _dtype
from ..._tensor import Tensor
from ...autograd.graph import RemovableHandle

__all__ = ["ModuleExtras"]

_NO_EXTRA_STATE = ("Reached a code path in Module.get_extra_state() that should never be called. Please file an "
                   "issue to report this bug.")


def _hooks(module, name: str) -> OrderedDict:
    """The hook dict `name` of `module`, created on first use (modules made before it existed have none)."""
    d = module.__dict__.get(name)
    if d is None:
        d = module.__dict__[name] = OrderedDict()
    return d


def _add(module, name: str, hook) -> RemovableHandle:
    store = _hooks(module, name)
    handle = RemovableHandle(store)
    store[handle.id] = hook
    return handle


class ModuleExtras:
    """Methods of `Module` beyond the core (see `module.py`)."""

    # -- dtypes and devices ------------------------------------------------------------------------
    def half(self):
        """Cast floating-point parameters and buffers to float16.

        Example:
            >>> import tapeflow as tp
            >>> tp.nn.Linear(2, 2).half().weight.dtype
            tapeflow.float16
        """
        return self.to(_dtype.float16)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to bfloat16.

        Example:
            >>> import tapeflow as tp
            >>> tp.nn.Linear(2, 2).bfloat16().weight.dtype
            tapeflow.bfloat16
        """
        return self.to(_dtype.bfloat16)

    def cuda(self, device=None):
        """Move parameters and buffers to a GPU (JAX's; raises when JAX sees none).

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(2, 2)
            >>> m.cuda() if tp.cuda.is_available() else m  # doctest: +ELLIPSIS
            Linear(...)
        """
        return self.to("cuda" if device is None else device if not isinstance(device, int) else f"cuda:{device}")

    def type(self, dst_type):
        """Cast every parameter and buffer (integer ones too) to `dst_type`.

        Example:
            >>> import tapeflow as tp
            >>> tp.nn.Linear(2, 2).type(tp.float64).bias.dtype
            tapeflow.float64
        """
        dtype = _dtype.to_dtype(dst_type) if not isinstance(dst_type, str) else None
        if dtype is None:
            return self._apply(lambda t: t.type(dst_type))
        return self._apply(lambda t: t.to(dtype))

    def share_memory(self):
        """Nothing to do: JAX arrays are immutable and shared between processes by pickling. Returns self.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(2, 2)
            >>> m.share_memory() is m
            True
        """
        return self

    def to_empty(self, *, device=None, recurse: bool = True):
        """Replace parameters and buffers by uninitialised ones (zeros here) of the same shapes and dtypes on
        `device`: the way to materialise a module built on the meta device before initialising it.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(2, 3, device="meta").to_empty(device="cpu")
            >>> m.weight.device, tuple(m.weight.shape)
            (device(type='cpu'), (3, 2))
        """
        from ... import _factories

        def empty(t):
            return _factories.zeros(tuple(t.shape), dtype=t.dtype, device=device)
        modules = self.modules() if recurse else [self]
        for m in modules:
            for p in m._parameters.values():
                if p is not None:
                    p._data = empty(p)._data
            for k, b in m._buffers.items():
                if b is not None:
                    m._buffers[k] = empty(b)
        return self

    # -- lookup --------------------------------------------------------------------------------------
    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target` (`"bn.running_mean"`).

        Example:
            >>> import tapeflow as tp
            >>> tp.nn.Sequential(tp.nn.BatchNorm1d(2)).get_buffer("0.running_var")
            tensor([1., 1.])
        """
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        return mod._buffers[name]

    def set_submodule(self, target: str, module, strict: bool = False) -> None:
        """Put `module` at dotted path `target`, replacing what is there (with `strict`, it must exist).

        Example:
            >>> import tapeflow as tp
            >>> net = tp.nn.Sequential(tp.nn.Linear(2, 2), tp.nn.ReLU())
            >>> net.set_submodule("1", tp.nn.Tanh()); net[1]
            Tanh()
        """
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and name not in parent._modules:
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        setattr(parent, name, module)

    # -- extra state ----------------------------------------------------------------------------------
    def get_extra_state(self):
        """Override (with `set_extra_state`) to store non-tensor state in `state_dict()` under `_extra_state`.

        Example:
            >>> import tapeflow as tp
            >>> class Counter(tp.nn.Module):
            ...     def __init__(self):
            ...         super().__init__(); self.steps = 3
            ...     def get_extra_state(self):
            ...         return {"steps": self.steps}
            ...     def set_extra_state(self, state):
            ...         self.steps = state["steps"]
            >>> dict(Counter().state_dict())
            {'_extra_state': {'steps': 3}}
        """
        raise RuntimeError(_NO_EXTRA_STATE)

    def set_extra_state(self, state) -> None:
        """Restore what `get_extra_state` returned (called by `load_state_dict`).

        Example:
            >>> import tapeflow as tp
            >>> tp.nn.Module().set_extra_state({})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            RuntimeError: Reached a code path in Module.set_extra_state() ...
        """
        raise RuntimeError(_NO_EXTRA_STATE.replace("get_extra_state", "set_extra_state"))

    # -- state-dict hooks ----------------------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` runs before this module's entries go into a `state_dict()`.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(1, 1); seen = []
            >>> h = m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(prefix))
            >>> _ = m.state_dict(); seen
            ['']
        """
        return _add(self, "_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` runs after this module's entries are in; it may
        edit `state_dict` in place.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(1, 1)
            >>> h = m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop(prefix + "bias"))
            >>> list(m.state_dict())
            ['weight']
        """
        return _add(self, "_state_dict_post_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`
        runs before `load_state_dict` reads this module's entries; it may rename or fill them in place.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(1, 1)
            >>> def rename(mod, sd, prefix, *rest):
            ...     if prefix + "w" in sd:
            ...         sd[prefix + "weight"] = sd.pop(prefix + "w")
            >>> h = m.register_load_state_dict_pre_hook(rename)
            >>> m.load_state_dict({"w": tp.ones(1, 1), "bias": tp.zeros(1)})
            <All keys matched successfully>
        """
        return _add(self, "_load_state_dict_pre_hooks", hook)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """`hook(module, incompatible_keys)` runs after `load_state_dict`; it may clear entries of
        `incompatible_keys.missing_keys` / `.unexpected_keys` in place.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(1, 1)
            >>> h = m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
            >>> m.load_state_dict({"weight": tp.ones(1, 1)})
            <All keys matched successfully>
        """
        return _add(self, "_load_state_dict_post_hooks", hook)

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Deprecated in PyTorch: registers `hook` as a full backward hook (`register_full_backward_hook`).

        Example:
            >>> import tapeflow as tp, warnings
            >>> with warnings.catch_warnings():
            ...     warnings.simplefilter("ignore")
            ...     h = tp.nn.Linear(1, 1).register_backward_hook(lambda m, gi, go: None)
        """
        warnings.warn("Module.register_backward_hook is deprecated; it registers a full backward hook here (use "
                      "register_full_backward_hook).", FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)


def has_extra_state(module) -> bool:
    """Whether `module`'s class overrides `get_extra_state`."""
    return type(module).get_extra_state is not ModuleExtras.get_extra_state
