"""`Module`: the base class of every layer and model.

State lives in three ordered dicts, as in PyTorch: `_parameters`,
`_buffers` and `_modules`; assigning an attribute registers into the right
one. Plain dicts keep the state easy to flatten into a JAX pytree.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ... import _dtype
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.graph import RemovableHandle
from ..parameter import Buffer, Parameter
from ._global_hooks import (
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_forward_hooks,
    _global_forward_pre_hooks,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from ._module_extras import ModuleExtras, has_extra_state

__all__ = ["Module", "register_module_forward_hook", "register_module_forward_pre_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook"]

class Module(ModuleExtras):
    """Base class for neural-network modules.

    Subclasses set parameters, buffers and submodules as attributes in
    `__init__` (after calling `super().__init__()`) and define `forward`.
    Calling the module runs the forward hooks around `forward`.

    Example:
        >>> import tapeflow as tp
        >>> class Net(tp.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = tp.nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> net = Net()
        >>> net(tp.ones(3, 4)).shape
        tapeflow.Size([3, 2])
        >>> [n for n, _ in net.named_parameters()]
        ['fc.weight', 'fc.bias']
    """

    training: bool
    _version: int = 1

    def __init__(self) -> None:
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()

    forward: Callable[..., Any]
    _compiled_call_impl = None  # set by `compile()`

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # (`_call_impl` written out: one frame fewer between the caller and `forward`, on every module call)
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        if not self._hooked():
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's call (hooks included) with `tapeflow.compile` (PyTorch's `Module.compile`):
        unlike `tp.compile(module)`, the module stays itself, so its `state_dict` keys do not change. The
        arguments are `tapeflow.compile`'s.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(2, 1)
            >>> m.compile()
            >>> with tp.no_grad():
            ...     y = m(tp.ones(1, 2))
            >>> y.shape, next(iter(m.state_dict()))
            (tapeflow.Size([1, 1]), 'weight')
        """
        from ...interop.compile import compile as compile_fn

        self.__dict__["_compiled_call_impl"] = compile_fn(self._call_impl, *args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        """The module's call without `compile()`'s program: its hooks and `forward`."""
        if not self._hooked():
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _hooked(self) -> bool:
        """Whether a hook (the module's or a global one) runs around `forward`."""
        return bool(self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                    or self._backward_pre_hooks or _global_forward_hooks or _global_forward_pre_hooks
                    or _global_backward_hooks or _global_backward_pre_hooks)

    def _call_with_hooks(self, args, kwargs):
        kw_hooks = self.__dict__.get("_hooks_with_kwargs", ())
        for hid, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hid in kw_hooks:
                res = hook(self, args, kwargs)
                if res is not None:
                    args, kwargs = res
                continue
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        bw = None
        if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks or _global_backward_pre_hooks:
            from ._backward_hook import BackwardHook

            # Global hooks run before the module's own, as in PyTorch.
            bw = BackwardHook(self, [*_global_backward_hooks.values(), *self._backward_hooks.values()],
                              [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()])
            args = bw.setup_input(args)
        out, called = None, set()
        try:
            out = self.forward(*args, **kwargs)
            for hid, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                called.add(hid)
                res = hook(self, args, kwargs, out) if hid in kw_hooks else hook(self, args, out)
                if res is not None:
                    out = res
        except Exception:
            self._run_always_called_hooks(args, kwargs, out, called, kw_hooks)
            raise
        if bw is not None:
            out = bw.setup_output(out)
        return out

    def _run_always_called_hooks(self, args, kwargs, out, called: set, kw_hooks) -> None:
        """After `forward` (or a forward hook) raised: the forward hooks registered with `always_call=True` that
        have not run yet, as PyTorch runs them; an error of theirs is a warning (the first error propagates)."""
        always = self.__dict__.get("_hooks_always_called", ())
        for hid, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            if hid not in always or hid in called:
                continue
            try:
                res = hook(self, args, kwargs, out) if hid in kw_hooks else hook(self, args, out)
                out = out if res is None else res
            except Exception as e:  # noqa: BLE001 (reported, then the forward's own error is raised)
                warnings.warn("module forward hook with ``always_call=True`` raised an exception that was silenced "
                              f"as another error was raised in forward: {e}", stacklevel=3)

    def forward(self, *args, **kwargs):  # noqa: F811
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # -- attribute registration ---------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _discard(d, name, exclude="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(tapeflow.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _discard(d, name, exclude="_modules")
            d["_modules"][name] = value
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(tapeflow.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            self.register_buffer(name, value, persistent=value.persistent)
        elif params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(tapeflow.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if name in d.get(store, ()):
                del d[store][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or `None`) under `name`.

        Arguments:
            name: attribute name (no dots).
            param: a `Parameter`, or `None` for an absent one (e.g. no bias).

        Returns:
            None.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Module()
            >>> m.register_parameter("scale", tp.nn.Parameter(tp.ones(1)))
            >>> list(dict(m.named_parameters()))
            ['scale']
        """
        _check_name(self, name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(tapeflow.nn.Parameter or None required); wrap it: nn.Parameter(tensor)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (e.g. BatchNorm's running mean).

        Arguments:
            name: attribute name.
            tensor: the buffer (or `None`).
            persistent: whether it is part of `state_dict()`.

        Returns:
            None.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Module()
            >>> m.register_buffer("count", tp.zeros(()))
            >>> list(m.state_dict())
            ['count']
        """
        _check_name(self, name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(tapeflow.Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = Tensor._wrap(tensor._data)
        _discard(self.__dict__, name, exclude="_buffers")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under `name` (same as setting the attribute).

        Arguments:
            name: attribute name.
            module: the child (or `None`).

        Returns:
            None.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Module(); m.add_module("act", tp.nn.ReLU())
            >>> m
            Module(
              (act): ReLU()
            )
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self, name, "module")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` (`""` is this module)."""
        mod = self
        for item in target.split(".") if target else []:
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target` (`"fc.weight"`)."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    # -- iteration ---------------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        """Yield `(dotted_name, module)` for this module and all descendants (pre-order)."""
        stack = [(prefix, self)]
        seen = memo if memo is not None else set()
        while stack:
            name, mod = stack.pop()
            if remove_duplicate:
                if id(mod) in seen:
                    continue
                seen.add(id(mod))
            yield name, mod
            children = [(name + ("." if name else "") + k, m) for k, m in mod._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        """This module and all descendants."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Yield `(name, child)` for the direct children."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in getattr(mod, store).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield `(dotted_name, parameter)`; shared parameters appear once.

        Example:
            >>> import tapeflow as tp
            >>> [n for n, p in tp.nn.Linear(2, 3).named_parameters()]
            ['weight', 'bias']
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """All parameters (for an optimizer: `SGD(model.parameters(), lr=0.1)`)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield `(dotted_name, buffer)`."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """All buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and bulk changes ----------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout active, BatchNorm uses batch statistics); returns self.

        Unrelated to grad mode: use `tapeflow.no_grad()` to stop recording.
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        """Set evaluation mode (`train(False)`); returns self. Does not touch grad mode."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set `requires_grad` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to `None` by default, else to zeros)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    p.grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call `fn` on every submodule (children first) and on self; returns self.

        Example:
            >>> import tapeflow as tp
            >>> def init(m):
            ...     if isinstance(m, tp.nn.Linear):
            ...         tp.nn.init.zeros_(m.bias)
            >>> net = tp.nn.Sequential(tp.nn.Linear(2, 2)).apply(init)
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter's and buffer's data by `fn(data)`, keeping the objects."""
        for m in self.modules():
            for p in m._parameters.values():
                if p is None:
                    continue
                with no_grad():
                    new = fn(p)
                p._data = new._data
                if p.grad is not None:
                    p._grad = Tensor._wrap(fn(p._grad)._data)
            for k, b in m._buffers.items():
                if b is not None:
                    m._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers in place: `to("cpu")`, `to(tp.float64)`.

        Only floating-point tensors change dtype. Returns self.

        Example:
            >>> import tapeflow as tp
            >>> tp.nn.Linear(2, 2).to(tp.float64).weight.dtype
            tapeflow.float64
        """
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, _dtype.dtype):
                dtype = a
            else:
                device = a
        if dtype is not None:
            dt = _dtype.to_dtype(dtype)
            if not (dt.is_floating_point or dt.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
            if dt.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as "
                              "parameters or buffers.", stacklevel=2)

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() or t.is_complex() else None)
        return self._apply(convert)

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self.to(_dtype.float32)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self.to(_dtype.float64)

    def cpu(self) -> Module:
        """Move everything to the CPU."""
        return self.to("cpu")

    # -- state dict -------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (detached unless `keep_vars`).

        Example:
            >>> import tapeflow as tp
            >>> list(tp.nn.BatchNorm1d(3).state_dict())
            ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
        """
        dest = OrderedDict() if destination is None else destination
        self._save_state(dest, prefix, keep_vars)
        return dest

    def _save_state(self, dest, prefix: str, keep_vars: bool) -> None:
        """This module's entries, then its children's; state-dict hooks around them, as in PyTorch."""
        d = self.__dict__
        for hook in list(d.get("_state_dict_pre_hooks", {}).values()):
            hook(self, prefix, keep_vars)
        for k, p in self._parameters.items():
            if p is not None:
                dest[prefix + k] = p if keep_vars else p.detach()
        for k, b in self._buffers.items():
            if b is not None and k not in self._non_persistent_buffers_set:
                dest[prefix + k] = b if keep_vars else b.detach()
        if has_extra_state(self):
            dest[prefix + "_extra_state"] = self.get_extra_state()
        for name, child in self._modules.items():
            if child is not None:
                child._save_state(dest, prefix + name + ".", keep_vars)
        for hook in list(d.get("_state_dict_post_hooks", {}).values()):
            hook(self, dest, prefix, {})

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from `state_dict` into this module (in place).

        Arguments:
            state_dict: a mapping from dotted names to tensors (as `state_dict()` returns).
            strict: raise on missing or unexpected keys.
            assign: replace the tensors instead of copying into them.

        Returns:
            A named tuple `(missing_keys, unexpected_keys)`.

        Example:
            >>> import tapeflow as tp
            >>> a, b = tp.nn.Linear(2, 2), tp.nn.Linear(2, 2)
            >>> b.load_state_dict(a.state_dict())
            <All keys matched successfully>
        """
        from ._state_dict import load_state_dict

        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        return load_state_dict(self, state_dict, strict, assign)

    # -- hooks -------------------------------------------------------------------------------------
    def _add_hook(self, store: dict, hook: Callable, prepend: bool, with_kwargs: bool) -> RemovableHandle:
        h = RemovableHandle(store)
        store[h.id] = hook
        if prepend:
            store.move_to_end(h.id, last=False)
        if with_kwargs:
            self.__dict__.setdefault("_hooks_with_kwargs", set()).add(h.id)
        return h

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Register `hook(module, args) -> None | new_args`, run before `forward`.

        With `with_kwargs=True` the hook is `hook(module, args, kwargs) -> None | (args, kwargs)`;
        `prepend=True` runs it before the hooks already registered.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Identity()
            >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
            >>> m(tp.ones(1))
            tensor([2.])
            >>> h.remove()
        """
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Register `hook(module, args, output) -> None | new_output`, run after `forward`.

        With `with_kwargs=True` the hook is `hook(module, args, kwargs, output)`;
        `prepend=True` runs it before the hooks already registered; `always_call=True` runs it also when
        `forward` raises (with `output` None), before the error propagates.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Identity()
            >>> h = m.register_forward_hook(lambda mod, args, out: out + 1)
            >>> m(tp.ones(1))
            tensor([2.])
        """
        handle = self._add_hook(self._forward_hooks, hook, prepend, with_kwargs)
        if always_call:
            self.__dict__.setdefault("_hooks_always_called", set()).add(handle.id)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register `hook(module, grad_input, grad_output) -> None | new_grad_input`.

        `grad_input` holds one entry per positional argument: the gradient of a
        tensor input (zeros for one that needs no gradient, as in PyTorch), None
        for an argument that is not a tensor; `grad_output` holds those
        w.r.t. its outputs (`None` for outputs that are not tensors or need no
        gradient). The hook runs once both are known; `prepend=True` runs it
        before the hooks already registered.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(2, 1)
            >>> seen = []
            >>> h = m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].shape))
            >>> m(tp.ones(3, 2, requires_grad=True)).sum().backward()
            >>> seen
            [tapeflow.Size([3, 1])]
        """
        return self._add_hook(self._backward_hooks, hook, prepend, False)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Register `hook(module, grad_output) -> None | new_grad_output`, run before the module's
        gradients w.r.t. its inputs are computed.

        `grad_output` has one entry per output of the module (`None` for outputs that
        are not tensors or need no gradient). A returned tuple of the same length
        replaces it: the module's backward and the full backward hooks then see the
        new gradients. `prepend=True` runs the hook before those already registered.

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Identity()
            >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
            >>> x = tp.ones(3, requires_grad=True)
            >>> m(x).sum().backward()
            >>> x.grad
            tensor([2., 2., 2.])
            >>> h.remove()
        """
        return self._add_hook(self.__dict__.setdefault("_backward_pre_hooks", OrderedDict()), hook, prepend, False)

    # -- repr ----------------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in `repr` (override in layers)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            child = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        head = self._get_name() + "("
        if not lines:
            return head + ")"
        if len(lines) == 1 and not self._modules:
            return head + lines[0] + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)  # (a program is not copied or saved: the copy runs eagerly)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_backward_pre_hooks", OrderedDict())


def _discard(d: dict, name: str, exclude: str) -> None:
    for store in ("_parameters", "_buffers", "_modules"):
        if store != exclude and name in d.get(store, ()):
            del d[store][name]
    if exclude != "_buffers":
        d.get("_non_persistent_buffers_set", set()).discard(name)
    d.pop(name, None)


def _check_name(module: Module, name: str, kind: str) -> None:
    if "_parameters" not in module.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}' if kind == "module" else
                       f'{kind} name can\'t contain "."')
    # (PyTorch's rule: any attribute of that name, a member of another kind included, unless it is one of this kind)
    own = {"parameter": module._parameters, "buffer": module._buffers, "module": module._modules}[kind]
    if name not in own and hasattr(module, name):
        raise KeyError(f"attribute '{name}' already exists")
