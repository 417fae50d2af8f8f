"""Containers: `Sequential`, `ModuleList`, `ModuleDict`."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from .module import Module

__all__ = ["Sequential", "ModuleList", "ModuleDict"]


def _index(idx: int, n: int) -> int:
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


def _renumber(container: Module, modules: list) -> None:
    """Register `modules` again under the keys "0", "1", ... (the numbering PyTorch keeps contiguous)."""
    container._modules.clear()
    for i, m in enumerate(modules):
        container.add_module(str(i), m)


class Sequential(Module):
    """Run modules one after another; indexable and sliceable.

    Arguments:
        *args: modules, or one `OrderedDict` of named modules.

    Example:
        >>> import tapeflow as tp
        >>> net = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 2))
        >>> net(tp.ones(3, 4)).shape
        tapeflow.Size([3, 2])
        >>> net[:2]
        Sequential(
          (0): Linear(in_features=4, out_features=8, bias=True)
          (1): ReLU()
        )
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self))]
        self.add_module(key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for k in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self))]]):
            del self._modules[k]
        if all(k.isdigit() for k in keys):
            _renumber(self, list(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert `module` before position `index`; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index % n if index < 0 else index, module)
        _renumber(self, items)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of `sequential`; returns self."""
        for m in sequential:
            self.append(m)
        return self

    def pop(self, key: int | slice):
        """Remove and return the module (or the `Sequential` of the modules) at `key`."""
        v = self[key]
        del self[key]
        return v

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))  # (the same modules repeated, as PyTorch's)

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        repeated = self * other
        _renumber(self, list(repeated))
        return self

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so their parameters are found.

    Example:
        >>> import tapeflow as tp
        >>> layers = tp.nn.ModuleList([tp.nn.Linear(2, 2) for _ in range(3)])
        >>> len(list(layers.parameters()))
        6
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx) -> None:
        items = list(self._modules.values())
        del items[idx]
        _renumber(self, items)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of `modules`; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert `module` before `index`."""
        items = list(self._modules.values())
        items.insert(index, module)
        _renumber(self, items)

    def pop(self, key: int | slice):
        """Remove and return the module (or the `ModuleList` of the modules) at `key`."""
        v = self[key]
        del self[key]
        return v

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])


class ModuleDict(Module):
    """A dict of modules (insertion-ordered), registered so their parameters are found.

    Example:
        >>> import tapeflow as tp
        >>> heads = tp.nn.ModuleDict({"a": tp.nn.Linear(2, 1), "b": tp.nn.Linear(2, 3)})
        >>> heads["b"](tp.ones(2)).shape
        tapeflow.Size([3])
    """

    def __init__(self, modules: Mapping[str, Module] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        """The names."""
        return self._modules.keys()

    def items(self):
        """`(name, module)` pairs."""
        return self._modules.items()

    def values(self):
        """The modules."""
        return self._modules.values()

    def pop(self, key: str) -> Module:
        """Remove and return the module under `key`."""
        return self._modules.pop(key)

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def update(self, modules) -> None:
        """Add modules from a mapping or an iterable of `(name, module)` pairs."""
        items = modules.items() if isinstance(modules, Mapping) else modules
        for k, m in items:
            self.add_module(k, m)
