"""Containers of parameters: `ParameterList`, `ParameterDict` (their entries are registered parameters, so
`parameters()`, `state_dict()` and optimizers find them)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from ..._dtype import PREFIX as _PREFIX
from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module

__all__ = ["ParameterList", "ParameterDict"]

_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _as_parameter(value):
    """Tensors are stored as parameters (PyTorch's rule); other objects as plain attributes."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(p, tensor_type_names: bool) -> str:
    size = "x".join(map(str, p.shape))
    kind = "Parameter containing" if isinstance(p, Parameter) else "Tensor"
    if tensor_type_names:
        return f"{kind}: [{_PREFIX[0]}.{_TENSOR_TYPES.get(p.dtype.name, p.dtype.name)} of size {size}]"
    return f"{kind}: [{p.dtype} of size {size}]"


def _repr_lines(items, tensor_type_names):
    return "\n".join(f"({k}): {_describe(v, tensor_type_names) if isinstance(v, Tensor) else repr(v)}"
                     for k, v in items)


class ParameterList(Module):
    """A list of parameters, registered under the names "0", "1", ... (tensors are wrapped as `Parameter`).

    Example:
        >>> import tapeflow as tp
        >>> params = tp.nn.ParameterList([tp.nn.Parameter(tp.ones(2)), tp.zeros(3)])
        >>> list(params.state_dict())
        ['0', '1']
        >>> len(list(params.parameters()))
        2
    """

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return getattr(self, str(idx % len(self)))

    def __setitem__(self, idx: int, value) -> None:
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        setattr(self, str(idx % len(self)), _as_parameter(value))

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable) -> ParameterList:
        return self.extend(values)

    def append(self, value) -> ParameterList:
        """Add `value` at the end; returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        """Append every value; returns self."""
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return _repr_lines(((i, self[i]) for i in range(len(self))), False)

    def __repr__(self) -> str:
        body = self.extra_repr()
        return f"{type(self).__name__}(\n" + "\n".join("    " + line for line in body.split("\n")) + "\n)" \
            if body else f"{type(self).__name__}()"


class ParameterDict(Module):
    """A dict of parameters, registered under their keys (tensors are wrapped as `Parameter`).

    A plain `dict` is added in sorted key order, an `OrderedDict` or `ParameterDict` in its own order (as
    PyTorch does).

    Example:
        >>> import tapeflow as tp
        >>> params = tp.nn.ParameterDict({"scale": tp.ones(2), "bias": tp.zeros(2)})
        >>> list(params.state_dict())
        ['bias', 'scale']
        >>> params["scale"].requires_grad
        True
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        """The names."""
        return self._keys.keys()

    def items(self):
        """`(name, parameter)` pairs."""
        return [(k, self[k]) for k in self._keys]

    def values(self):
        """The parameters."""
        return [self[k] for k in self._keys]

    def get(self, key: str, default=None):
        """The entry under `key`, or `default`."""
        return self[key] if key in self else default

    def pop(self, key: str):
        """Remove and return the entry under `key`."""
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        """Remove every entry."""
        for k in list(self._keys):
            del self[k]

    def setdefault(self, key: str, default=None):
        """The entry under `key`, first set to `default` if there is none."""
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self):
        """Remove and return the last `(name, parameter)` added."""
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def copy(self) -> ParameterDict:
        """A new `ParameterDict` holding the same parameters."""
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys, default=None) -> ParameterDict:
        """A new `ParameterDict` with every key of `keys` set to `default`."""
        return ParameterDict(OrderedDict((k, default) for k in keys))

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __or__(self, other) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def update(self, parameters) -> None:
        """Add entries from a mapping or an iterable of `(name, value)` pairs."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        else:
            items = list(parameters)
        for k, v in items:
            self[k] = v

    def extra_repr(self) -> str:
        return _repr_lines(self.items(), True)

    def __repr__(self) -> str:
        body = self.extra_repr()
        return f"{type(self).__name__}(\n" + "\n".join("    " + line for line in body.split("\n")) + "\n)" \
            if body else f"{type(self).__name__}()"
