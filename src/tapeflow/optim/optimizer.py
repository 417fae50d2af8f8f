"""`Optimizer`: parameter groups, per-parameter state, `zero_grad`, state dicts.

Subclasses implement `step()`: for each parameter with a gradient, one fused
`xla_ops.optim` op computes the new parameter and state, and the parameter is
written in place (same object, version bumped) under `no_grad`.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import _dtype
from .._dispatch import inplace
from .._factories import tensor, zeros_like
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ._hooks import add_hook, register_optimizer_step_post_hook, register_optimizer_step_pre_hook, with_step_hooks

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


#: Marks a hyper-parameter without a default (it must be given per group or globally).
required = _Required()


class Optimizer:
    """Base class of optimizers.

    Arguments:
        params: an iterable of tensors, or of dicts (parameter groups with their own options).
        defaults: the default options of each group.

    Example:
        >>> import tapeflow as tp
        >>> model = tp.nn.Linear(2, 1)
        >>> opt = tp.optim.SGD([{"params": [model.weight]}, {"params": [model.bias], "lr": 0.5}], lr=0.1)
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.5]
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_with_step_hooks", False):
            cls.step = with_step_hooks(step)  # every optimizer's step runs the step hooks

    def __init__(self, params: Iterable, defaults: dict[str, Any]):
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {params.dtype}; pass [tensor] or model.parameters()")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]  # (tensors, or (name, tensor) pairs)
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (missing ones take the defaults).

        Arguments:
            param_group: `{"params": [...], "lr": ..., ...}`.

        Returns:
            None.

        Example:
            >>> import tapeflow as tp
            >>> a, b = tp.nn.Linear(2, 2), tp.nn.Linear(2, 2)
            >>> opt = tp.optim.SGD(a.parameters(), lr=0.1)
            >>> opt.add_param_group({"params": b.parameters(), "lr": 0.01})
            >>> len(opt.param_groups)
            2
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        named = [isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], Tensor) for p in group["params"]]
        if any(named):  # `model.named_parameters()`: the names go to the group's "param_names", as PyTorch's
            if not all(named):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            group["param_names"] = [name for name, _ in group["params"]]
            group["params"] = [p for _, p in group["params"]]
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor; optimize the leaf it was computed from, or "
                                 "use tensor.detach().requires_grad_() to make a new leaf")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        if len({id(p) for p in group["params"]}) != len(group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors (to `None` by default, else to zeros).

        Example:
            >>> import tapeflow as tp
            >>> p = tp.nn.Parameter(tp.ones(2)); p.grad = tp.ones(2)
            >>> tp.optim.SGD([p], lr=0.1).zero_grad(); p.grad is None
            True
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach()
                    from ..autograd.grad_mode import no_grad

                    with no_grad():
                        p.grad.zero_()

    def step(self, closure: Callable | None = None):
        """Update the parameters once (see the subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def _closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @staticmethod
    def _write(p: Tensor, new: Tensor) -> None:
        inplace(p, new)

    @staticmethod
    def _advanced_step(advanced: dict, old: Tensor, new: Tensor) -> Tensor:
        """The step counter to keep after an update advanced `old` to `new`: parameters whose counters held one
        array before the update share one array after it too (each keeps its own tensor). A step's program
        then reads and writes one counter, not one per parameter. `advanced` collects them over one step."""
        before = old._raw
        seen = advanced.get(id(before))
        if seen is None:
            advanced[id(before)] = (before, new)  # (`before` kept: its id stays its own)
            return new
        return Tensor._wrap(seen[1]._raw)

    def _params_with_state(self, group: dict, buffers: list[str]) -> Iterator[tuple[Tensor, dict]]:
        """`(p, state)` for each parameter of `group` that has a gradient.

        A parameter's first step creates its state: the step counter (a float32 tensor, which the
        fused update advances on the device) and a zero buffer under each name in `buffers`."""
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = Tensor._wrap(_zero_step())  # (one array for all: see `_advanced_step`)
                for name in buffers:
                    state[name] = zeros_like(p)
            yield p, state

    # -- hooks ----------------------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """`hook(optimizer, args, kwargs)` runs before this optimizer's `step()`; it may return
        `(new_args, new_kwargs)`.

        Example:
            >>> import tapeflow as tp
            >>> p = tp.ones(1, requires_grad=True); p.grad = tp.ones(1)
            >>> opt = tp.optim.SGD([p], lr=0.1); calls = []
            >>> h = opt.register_step_pre_hook(lambda o, a, k: calls.append(len(a)))
            >>> opt.step(); calls
            [1]
        """
        return add_hook(self, "_step_pre_hooks", hook)

    def register_step_post_hook(self, hook):
        """`hook(optimizer, args, kwargs)` runs after this optimizer's `step()`.

        Example:
            >>> import tapeflow as tp
            >>> p = tp.ones(1, requires_grad=True); p.grad = tp.ones(1)
            >>> opt = tp.optim.SGD([p], lr=0.5); h = opt.register_step_post_hook(lambda o, a, k: print(p))
            >>> opt.step()
            tensor([0.5000], requires_grad=True)
        """
        return add_hook(self, "_step_post_hooks", hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False):
        """`hook(optimizer)` runs before `state_dict()` builds its result.

        Example:
            >>> import tapeflow as tp
            >>> opt = tp.optim.SGD(tp.nn.Linear(1, 1).parameters(), lr=0.1)
            >>> h = opt.register_state_dict_pre_hook(lambda o: print("saving"))
            >>> _ = opt.state_dict()
            saving
        """
        return _prepend(add_hook(self, "_state_dict_pre_hooks", hook), prepend)

    def register_state_dict_post_hook(self, hook, prepend: bool = False):
        """`hook(optimizer, state_dict)` runs on `state_dict()`'s result; a returned dict replaces it.

        Example:
            >>> import tapeflow as tp
            >>> opt = tp.optim.SGD(tp.nn.Linear(1, 1).parameters(), lr=0.1)
            >>> h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "note": 1})
            >>> opt.state_dict()["note"]
            1
        """
        return _prepend(add_hook(self, "_state_dict_post_hooks", hook), prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False):
        """`hook(optimizer, state_dict)` runs before `load_state_dict()` reads it; a returned dict replaces it.

        Example:
            >>> import tapeflow as tp
            >>> opt = tp.optim.SGD(tp.nn.Linear(1, 1).parameters(), lr=0.1)
            >>> h = opt.register_load_state_dict_pre_hook(lambda o, sd: print("loading"))
            >>> opt.load_state_dict(opt.state_dict())
            loading
        """
        return _prepend(add_hook(self, "_load_state_dict_pre_hooks", hook), prepend)

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False):
        """`hook(optimizer)` runs after `load_state_dict()`.

        Example:
            >>> import tapeflow as tp
            >>> opt = tp.optim.SGD(tp.nn.Linear(1, 1).parameters(), lr=0.1)
            >>> h = opt.register_load_state_dict_post_hook(lambda o: print("loaded"))
            >>> opt.load_state_dict(opt.state_dict())
            loaded
        """
        return _prepend(add_hook(self, "_load_state_dict_post_hooks", hook), prepend)

    # -- state dicts ------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The optimizer state: `{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}`.

        Parameters are referred to by their index over all groups, so the dict
        can be loaded into an optimizer over a freshly built model.

        Example:
            >>> import tapeflow as tp
            >>> opt = tp.optim.SGD(tp.nn.Linear(2, 1).parameters(), lr=0.1, momentum=0.9)
            >>> opt.state_dict()["param_groups"][0]["params"]
            [0, 1]
        """
        for hook in list(self.__dict__.get("_state_dict_pre_hooks", {}).values()):
            hook(self)
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        result = {"state": state, "param_groups": groups}
        for hook in list(self.__dict__.get("_state_dict_post_hooks", {}).values()):
            out = hook(self, result)
            result = result if out is None else out
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state produced by `state_dict()` (the groups must match in number and size).

        Example:
            >>> import tapeflow as tp
            >>> m = tp.nn.Linear(2, 1)
            >>> a = tp.optim.Adam(m.parameters()); b = tp.optim.Adam(m.parameters(), lr=0.5)
            >>> b.load_state_dict(a.state_dict()); b.param_groups[0]["lr"]
            0.001
        """
        state_dict = copy.deepcopy(state_dict)
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            out = hook(self, state_dict)
            state_dict = state_dict if out is None else out
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(a["params"]) != len(b["params"]) for a, b in zip(self.param_groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        lookup = {}
        for group, sg in zip(self.param_groups, saved):
            lookup.update(zip(sg["params"], group["params"]))
        self.state = defaultdict(dict)
        for k, s in state_dict["state"].items():
            if k not in lookup:
                continue
            p = lookup[k]
            self.state[p] = {name: _cast_state(name, v, p) for name, v in s.items()}
        for group, sg in zip(self.param_groups, saved):
            for k, v in sg.items():
                if k != "params":
                    group[k] = v
        for hook in list(self.__dict__.get("_load_state_dict_post_hooks", {}).values()):
            hook(self)

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines) + "\n)"


def _prepend(handle, prepend: bool):
    """Move the hook just added to the front of its dict (`prepend=True`)."""
    if prepend:
        store = handle._hooks_ref()
        if store is not None:
            store.move_to_end(handle.id, last=False)
    return handle


def _cast_state(name: str, value, param: Tensor):
    # Buffers follow the parameter's dtype and device; the step counter stays as saved.
    if isinstance(value, Tensor) and name != "step" and value.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    if isinstance(value, Tensor) and name == "step":
        return value.to(dtype=_dtype.float32)
    return value


_zero_steps: list = []


def _zero_step():
    """The float32 zero that new step counters hold (one array, created once)."""
    if not _zero_steps:
        _zero_steps.append(tensor(0.0, dtype=_dtype.float32)._data)
    return _zero_steps[0]
