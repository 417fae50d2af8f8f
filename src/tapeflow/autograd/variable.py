"""`Variable`: the legacy wrapper, kept so old code runs. It returns a Tensor."""

from __future__ import annotations

from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """`Variable(t, requires_grad=True)` is `t` with `requires_grad` set (a Tensor).

    Example:
        >>> import tapeflow as tp
        >>> v = tp.autograd.Variable(tp.ones(2), requires_grad=True)
        >>> isinstance(v, tp.Tensor), v.requires_grad
        (True, True)
    """

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad:
            if data.grad_fn is not None:
                return data
            data.requires_grad_(True)
        return data
