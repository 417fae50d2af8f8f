"""Hooks that every module runs: forward (`register_module_forward_hook`) and backward
(`register_module_full_backward_hook`), each with its pre-hook form."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from ...autograd.graph import RemovableHandle

__all__ = ["register_module_forward_hook", "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook"]

_global_forward_hooks: dict = OrderedDict()
_global_forward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
_global_backward_pre_hooks: dict = OrderedDict()


def _register(store: dict, hook: Callable) -> RemovableHandle:
    h = RemovableHandle(store)
    store[h.id] = hook
    return h


def register_module_forward_hook(hook: Callable) -> RemovableHandle:
    """Register `hook(module, args, output)` to run after every module's forward.

    Arguments:
        hook: returns `None` or a replacement output.

    Returns:
        A handle whose `.remove()` unregisters the hook.

    Example:
        >>> import tapeflow as tp
        >>> h = tp.nn.modules.module.register_module_forward_hook(lambda m, a, o: None)
        >>> h.remove()
    """
    return _register(_global_forward_hooks, hook)


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Register `hook(module, args)` to run before every module's forward.

    Arguments:
        hook: returns `None` or replacement positional arguments.

    Returns:
        A handle whose `.remove()` unregisters the hook.

    Example:
        >>> import tapeflow as tp
        >>> h = tp.nn.modules.module.register_module_forward_pre_hook(lambda m, a: None)
        >>> h.remove()
    """
    return _register(_global_forward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """Register `hook(module, grad_input, grad_output)` as a full backward hook of every module.

    It runs before each module's own full backward hooks (see `Module.register_full_backward_hook`).

    Arguments:
        hook: returns `None` or a replacement `grad_input`.

    Returns:
        A handle whose `.remove()` unregisters the hook.

    Example:
        >>> import tapeflow as tp
        >>> h = tp.nn.modules.module.register_module_full_backward_hook(lambda m, gi, go: None)
        >>> h.remove()
    """
    return _register(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """Register `hook(module, grad_output)` as a backward pre-hook of every module.

    It runs before each module's own (see `Module.register_full_backward_pre_hook`).

    Arguments:
        hook: returns `None` or a replacement `grad_output`.

    Returns:
        A handle whose `.remove()` unregisters the hook.

    Example:
        >>> import tapeflow as tp
        >>> h = tp.nn.modules.module.register_module_full_backward_pre_hook(lambda m, go: None)
        >>> h.remove()
    """
    return _register(_global_backward_pre_hooks, hook)
