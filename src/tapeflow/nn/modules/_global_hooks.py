"""Forward hooks that run around every module's forward (`register_module_forward_hook`)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from ...autograd.graph import RemovableHandle

__all__ = ["register_module_forward_hook", "register_module_forward_pre_hook"]

_global_forward_hooks: dict = OrderedDict()
_global_forward_pre_hooks: dict = OrderedDict()


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
    h = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[h.id] = hook
    return h


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
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h
