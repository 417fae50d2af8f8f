"""`Parameter`: a Tensor that a `Module` registers as one of its parameters."""

from __future__ import annotations

from .._tensor import Tensor, _init

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A leaf tensor that modules register as a parameter when assigned as an attribute.

    It requires grad by default; ops on it return plain Tensors.

    Arguments:
        data: the initial value (a Tensor; its array is reused, not copied). Defaults to an empty tensor.
        requires_grad: whether autograd records ops on it (default `True`).

    Returns:
        A `Parameter` (an instance of `tapeflow.Tensor`).

    Example:
        >>> import tapeflow as tp
        >>> p = tp.nn.Parameter(tp.zeros(2))
        >>> p
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    _is_param = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from .._factories import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor as data, got {type(data).__name__}; "
                            "wrap it first, e.g. Parameter(tp.tensor(values))")
        self = object.__new__(cls)
        _init(self, data._data, None, 0, False)
        if requires_grad:
            self._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        import numpy as np

        return (_rebuild_parameter, (np.asarray(self._concrete("pickling")), self._requires_grad))


def _rebuild_parameter(array, requires_grad):
    from .._device import host_array

    return Parameter(Tensor._wrap(host_array(array)), requires_grad)


class Buffer(Tensor):
    """Marks a tensor to register as a buffer when assigned to a `Module` attribute.

    Arguments:
        data: the tensor.
        persistent: whether it appears in `state_dict()` (default `True`).

    Returns:
        The tensor, registered as a buffer by `Module.__setattr__`.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.Module()
        >>> m.steps = tp.nn.Buffer(tp.zeros(()))
        >>> [name for name, _ in m.named_buffers()]
        ['steps']
    """

    def __new__(cls, data: Tensor, *, persistent: bool = True):
        self = object.__new__(cls)
        _init(self, data._data, None, 0, False)
        self.persistent = persistent
        return self

    def __init__(self, data: Tensor, *, persistent: bool = True):
        pass
