"""Datasets: map-style (`__getitem__` + `__len__`) and iterable, and ways to combine and split them."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from ..._tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset", "StackDataset",
           "random_split"]


class Dataset:
    """A map-style dataset: subclasses define `__getitem__(index)` and, for samplers, `__len__`.

    Example:
        >>> import tapeflow as tp
        >>> class Squares(tp.utils.data.Dataset): __len__ = lambda self: 3; __getitem__ = lambda self, i: i * i
        >>> [Squares()[i] for i in range(len(Squares()))]
        [0, 1, 4]
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__ (a map-style Dataset)")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define `__iter__`; the `DataLoader` batches what it yields.

    Example:
        >>> import tapeflow as tp
        >>> class Count(tp.utils.data.IterableDataset): __iter__ = lambda self: iter(range(3))
        >>> list(tp.utils.data.DataLoader(Count(), batch_size=2))
        [tensor([0, 1]), tensor([2])]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ (an IterableDataset)")


class TensorDataset(Dataset):
    """Samples are the `index`-th rows of the given tensors (which share their first dimension).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.data import TensorDataset
        >>> TensorDataset(tp.zeros(3, 2), tp.arange(3))[1]
        (tensor([0., 0.]), tensor(1))
    """

    def __init__(self, *tensors: Tensor):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order.

    Example:
        >>> import tapeflow as tp
        >>> tp.utils.data.Subset(['a', 'b', 'c', 'd'], [0, 2])[1]
        'c'
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of several map-style datasets, one after the other.

    Example:
        >>> import tapeflow as tp
        >>> ds = tp.utils.data.ConcatDataset([[1, 2], [3]])
        >>> len(ds), ds[2]
        (3, 3)
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another (a stream of streams, assembled lazily).

    Example:
        >>> import tapeflow as tp
        >>> class Count(tp.utils.data.IterableDataset):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self): return iter(range(self.n))
        ...     def __len__(self): return self.n
        >>> chained = tp.utils.data.ChainDataset([Count(2), Count(3)])
        >>> list(chained), len(chained)
        ([0, 1, 0, 1, 2], 5)
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class StackDataset(Dataset):
    """Datasets side by side: sample `i` is the tuple (positional datasets) or dict (keyword datasets) of their
    `i`-th samples. All must have the same length.

    Example:
        >>> import tapeflow as tp
        >>> both = tp.utils.data.StackDataset(image=[10, 11], label=[0, 1])
        >>> both[1], len(both)
        ({'image': 11, 'label': 1}, 2)
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, "
                             "but both types are given.")
        parts = args if args else tuple(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self._length


def random_split(dataset: Dataset, lengths: Sequence[int | float], generator=None) -> list[Subset]:
    """Split `dataset` into non-overlapping random subsets of the given lengths (or fractions summing to 1).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.data import random_split
        >>> a, b = random_split(range(10), [0.7, 0.3], generator=tp.Generator().manual_seed(0))
        >>> len(a), len(b)
        (7, 3)
    """
    from ... import _factories

    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):  # the remainder, one each, round robin
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _factories.randperm(n, generator=generator).tolist()
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, order[start:start + k]))
        start += k
    return out
