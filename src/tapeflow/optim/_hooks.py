"""Optimizer hooks, as PyTorch's: around `step()` (per optimizer and global), and around `state_dict()` /
`load_state_dict()`. Every subclass's `step` is wrapped once, when the class is defined."""

from __future__ import annotations

import functools
from collections import OrderedDict

from ..autograd.graph import RemovableHandle

__all__ = ["register_optimizer_step_pre_hook", "register_optimizer_step_post_hook", "with_step_hooks", "add_hook",
           "hooks_of"]

_global_pre: OrderedDict = OrderedDict()
_global_post: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """`hook(optimizer, args, kwargs)` runs before every optimizer's `step()` (`args` starts with the optimizer);
    it may return `(new_args, new_kwargs)`.

    Example:
        >>> import tapeflow as tp
        >>> seen = []
        >>> h = tp.optim.optimizer.register_optimizer_step_pre_hook(lambda opt, a, k: seen.append(type(opt).__name__))
        >>> p = tp.ones(1, requires_grad=True); p.grad = tp.ones(1)
        >>> tp.optim.SGD([p], lr=0.1).step(); h.remove(); seen
        ['SGD']
    """
    return add_hook(None, _global_pre, hook)


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """`hook(optimizer, args, kwargs)` runs after every optimizer's `step()`.

    Example:
        >>> import tapeflow as tp
        >>> seen = []
        >>> h = tp.optim.optimizer.register_optimizer_step_post_hook(lambda opt, a, k: seen.append("done"))
        >>> p = tp.ones(1, requires_grad=True); p.grad = tp.ones(1)
        >>> tp.optim.SGD([p], lr=0.1).step(); h.remove(); seen
        ['done']
    """
    return add_hook(None, _global_post, hook)


def hooks_of(optimizer, name: str) -> OrderedDict:
    """The optimizer's hook dict `name`, created on first use."""
    d = optimizer.__dict__.get(name)
    if d is None:
        d = optimizer.__dict__[name] = OrderedDict()
    return d


def add_hook(optimizer, store, hook) -> RemovableHandle:
    if optimizer is not None:
        store = hooks_of(optimizer, store)
    handle = RemovableHandle(store)
    store[handle.id] = hook
    return handle


def with_step_hooks(step):
    """`step` running the global and the optimizer's step hooks around it."""
    @functools.wraps(step)
    def hooked(*args, **kwargs):
        self = args[0]  # (the hooks see `args` with the optimizer first, as in PyTorch)
        own_pre = self.__dict__.get("_step_pre_hooks")
        if _global_pre or own_pre:
            for hook in (*_global_pre.values(), *(own_pre or {}).values()):
                out = hook(self, args, kwargs)
                if out is not None:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but got "
                                           f"{out}.")
                    args, kwargs = out
        result = step(*args, **kwargs)
        own_post = self.__dict__.get("_step_post_hooks")
        if _global_post or own_post:
            for hook in (*_global_post.values(), *(own_post or {}).values()):
                hook(self, args, kwargs)
        return result
    hooked._with_step_hooks = True
    return hooked
