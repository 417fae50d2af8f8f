"""Samplers: which indices a `DataLoader` reads, in which order, and how they group into batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler", "DistributedSampler"]


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


def _seed_from(generator) -> int:
    """One int64 drawn from `generator` (the global one for None), as PyTorch seeds per-epoch generators."""
    from ... import _factories

    return int(_factories.random_full_range((), _factories._dtype.int64, generator).item())


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
        generator = self.generator
        if generator is None:  # (as PyTorch: a generator of its own, seeded from the global one, per epoch)
            generator = _factories.Generator().manual_seed(_seed_from(None))
        # (PyTorch's draws, lazily, in its order: whole permutations, then one more cut short, drawn even when
        # nothing of it is used, so a generator passed in stands where PyTorch's does at the next epoch)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _factories.randint(0, n, (32,), generator=generator).tolist()
            yield from _factories.randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from _permutation(n, generator)
        yield from _permutation(n, generator)[:self.num_samples % n]

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


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights` (with replacement by default).

    Example:
        >>> import tapeflow as tp
        >>> s = tp.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0], num_samples=4)
        >>> list(s)
        [1, 1, 1, 1]
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        from ... import _factories
        from ..._dtype import float64

        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = _factories.as_tensor(weights, dtype=float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights, self.num_samples, self.replacement, self.generator = w, num_samples, replacement, generator

    def __iter__(self):
        from ..._sampling import multinomial

        return iter(multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist())

    def __len__(self) -> int:
        return self.num_samples


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


class DistributedSampler(Sampler):
    """The share of a dataset that one of `num_replicas` data-parallel processes reads: every `num_replicas`-th
    index from `rank` on, of one permutation all processes agree on (seeded by `seed` and the epoch).

    The dataset is padded by repeating indices (or, with `drop_last`, trimmed) to a multiple of
    `num_replicas`, so every process gets `len(sampler)` samples. Call `set_epoch(e)` at the start of each
    epoch for a new order. Without a process group, pass `num_replicas` and `rank` explicitly.

    Example:
        >>> import tapeflow as tp
        >>> list(tp.utils.data.DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False):
        if num_replicas is None or rank is None:
            world, me = _process_group()
            num_replicas = world if num_replicas is None else num_replicas
            rank = me if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = -(-(n - num_replicas) // num_replicas)
        else:
            self.num_samples = -(-n // num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        from ... import _factories
        from ..._factories import Generator

        n = len(self.dataset)
        if self.shuffle:
            order = _factories.randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            pad = self.total_size - len(order)
            while pad > 0:
                order += order[:pad]
                pad = self.total_size - len(order)
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of `epoch` (call once per epoch, before iterating)."""
        self.epoch = epoch


def _process_group() -> tuple[int, int]:
    import jax

    if jax.process_count() > 1:
        return jax.process_count(), jax.process_index()
    raise ValueError("Default process group has not been initialized, please make sure to call init_process_group. "
                     "(Or pass num_replicas= and rank= explicitly; tapeflow reads them from JAX when it runs as "
                     "several processes.)")
