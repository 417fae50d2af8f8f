"""Samplers: which indices a `DataLoader` reads, in which order, and how they group into batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: an iterable of dataset indices (and usually a `__len__`).

    Example:
        >>> import tapeflow as tp
        >>> class Evens(tp.utils.data.Sampler): __iter__ = lambda self: iter([0, 2]); __len__ = lambda self: 2
        >>> list(tp.utils.data.BatchSampler(Evens(), batch_size=2, drop_last=False))
        [[0, 2]]
    """

    def __init__(self, data_source=None):
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """`0, 1, ..., len(data_source) - 1`.

    Example:
        >>> import tapeflow as tp
        >>> list(tp.utils.data.SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _permutation(n: int, generator) -> list[int]:
    from ... import _factories

    return _factories.randperm(n, generator=generator).tolist()


class RandomSampler(Sampler):
    """A random permutation of the indices (a new one per epoch), or `num_samples` draws with replacement.

    Example:
        >>> import tapeflow as tp
        >>> sorted(tp.utils.data.RandomSampler(range(4)))
        [0, 1, 2, 3]
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None, generator=None):
        self.data_source, self.replacement, self._num_samples, self.generator = \
            data_source, replacement, num_samples, generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ... import _factories

        n = len(self.data_source)
        if self.replacement:
            draws = _factories.randint(0, n, (self.num_samples,), generator=self.generator)
            return iter(draws.tolist())
        out = []
        while len(out) < self.num_samples:
            out.extend(_permutation(n, self.generator))
        return iter(out[:self.num_samples])

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order (a new one per epoch).

    Example:
        >>> import tapeflow as tp
        >>> sorted(tp.utils.data.SubsetRandomSampler([5, 7]))
        [5, 7]
    """

    def __init__(self, indices: Sequence[int], generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        return (self.indices[i] for i in _permutation(len(self.indices), self.generator))

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of `batch_size` (the last one shorter unless `drop_last`).

    Example:
        >>> import tapeflow as tp
        >>> list(tp.utils.data.BatchSampler(range(5), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
