"""`DataLoader`: iterate over a dataset in (shuffled) mini-batches, collated into tensors.

Loading runs in the calling process. With `num_workers > 0` each of PyTorch's worker processes is emulated
here: batch i is loaded by worker i % num_workers, and each worker has its own random states (tapeflow's
global generator, Python's `random`, NumPy's global generator), seeded as PyTorch seeds a worker from the
epoch's base seed, runs `worker_init_fn` first, and answers `get_worker_info()` while it loads. So a dataset
that draws random numbers in `__getitem__` (augmentation) gets PyTorch's numbers, and the main process's
streams are left as PyTorch leaves them. An `IterableDataset` is iterated by every worker, each over its own
(shallow) copy, batches taken from the workers in turn, as PyTorch does.
"""

from __future__ import annotations

import collections.abc as abc
import contextlib
import copy
import random

import numpy as np

from ... import _factories
from ..._dtype import float64
from ..._factories import manual_seed
from ..._factories import tensor as _tensor
from ..._mt19937 import MT19937
from ..._ops import stack
from ..._tensor import Tensor, as_tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _seed_from

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "default_convert", "get_worker_info"]


class WorkerInfo:
    """What `get_worker_info()` tells a dataset loaded by a worker: its `id`, `num_workers`, `seed` and `dataset`
    (the worker's own copy for an `IterableDataset`).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.data.dataloader import WorkerInfo
        >>> info = WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
        >>> info.id, info.num_workers, info.seed
        (0, 2, 5)
    """

    __slots__ = ("id", "num_workers", "seed", "dataset", "_frozen")

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, key, value):
        if getattr(self, "_frozen", False):
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset})")


_current_worker: list = [None]


_DONE = object()


def get_worker_info():
    """The `WorkerInfo` of the loader worker running this code (in a dataset's `__getitem__`/`__iter__` or a
    `worker_init_fn`), None outside one.

    Example:
        >>> import tapeflow as tp
        >>> tp.utils.data.get_worker_info() is None
        True
    """
    return _current_worker[0]


def _random_states():
    """The three global random states a worker has its own of (tapeflow's generator by its parts: its stream
    object and JAX key, swapped in and out without copying them)."""
    g = _factories.default_generator
    return (g.mt, g.key, g._seed), random.getstate(), np.random.get_state()


def _set_random_states(states) -> None:
    g = _factories.default_generator
    g.mt, g.key, g._seed = states[0]
    random.setstate(states[1])
    np.random.set_state(states[2])


class _Worker:
    """One of PyTorch's loader worker processes, emulated in this one: its own random states, seeded as PyTorch
    seeds worker `wid` of an epoch whose base seed is `base_seed`, and its `WorkerInfo`."""

    def __init__(self, wid: int, num_workers: int, base_seed: int, dataset, init_fn):
        self.info = WorkerInfo(id=wid, num_workers=num_workers, seed=base_seed + wid, dataset=dataset)
        outside = _random_states()
        try:
            random.seed(base_seed + wid)
            _factories.default_generator.mt = MT19937(0)  # (its own stream object: seeding mutates it in place)
            manual_seed(base_seed + wid)
            # (PyTorch's NumPy seed for a worker: NumPy's own SeedSequence of the worker id and the base seed)
            np.random.seed(np.random.SeedSequence([wid, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]).generate_state(4))
            self.states = _random_states()
        finally:
            _set_random_states(outside)
        if init_fn is not None:
            with self.running():
                init_fn(wid)

    @contextlib.contextmanager
    def running(self):
        """This worker's random states and `WorkerInfo` in place (the caller's back after)."""
        outside, before = _random_states(), _current_worker[0]
        _set_random_states(self.states)
        _current_worker[0] = self.info
        try:
            yield
        finally:
            self.states = _random_states()
            _current_worker[0] = before
            _set_random_states(outside)


def default_convert(data):
    """NumPy arrays (anywhere in lists, tuples and dicts) become tensors; everything else is kept.

    Example:
        >>> import numpy as np, tapeflow as tp
        >>> tp.utils.data.default_convert(np.array([1, 2]))
        tensor([1, 2])
    """
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SUO":
        return as_tensor(data)
    if isinstance(data, abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()}) if not isinstance(data, dict) \
            else {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data


def default_collate(batch):
    """Merge a list of samples into a batch, as PyTorch does: tensors and arrays are stacked along a new first
    dimension, numbers become a tensor (floats float64, ints int64), dicts and sequences are collated per field
    (a tuple of fields gives a list), strings stay as they came (a field of strings: a tuple).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.data import default_collate
        >>> default_collate([(tp.ones(2), 1), (tp.zeros(2), 0)])
        [tensor([[1., 1.],
                [0., 0.]]), tensor([1, 0])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "SUO":
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return as_tensor(np.asarray(batch))
    if isinstance(elem, bool) or isinstance(elem, int):
        return _tensor(batch)
    if isinstance(elem, float):
        return _tensor(batch, dtype=float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(s) for s in zip(*batch)]  # (fields of strings stay tuples, as PyTorch's)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")


class DataLoader:
    """Batches of `dataset`, in order or shuffled, collated by `collate_fn`.

    Arguments (as `torch.utils.data.DataLoader`):
        dataset: a map-style `Dataset` (or any object with `__getitem__`/`__len__`) or an `IterableDataset`.
        batch_size: samples per batch; `None` yields samples one by one (converted by `default_convert`).
        shuffle: a new random order every epoch (drawn from `generator`, or the global generator).
        sampler, batch_sampler: custom index orders (mutually exclusive with `shuffle` / the batching options).
        num_workers: worker processes emulated in this one: each batch is loaded by the worker PyTorch gives it,
            with that worker's random states and `get_worker_info()` (see the module's docstring).
        worker_init_fn: called with the worker id, in the worker's context, before it loads anything.
        persistent_workers: keep the workers (and their random states) from one epoch to the next.
        collate_fn: merges a list of samples (default `default_collate`).
        drop_last: drop a last, incomplete batch.
        generator: the `tapeflow.Generator` for shuffling.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.data import DataLoader, TensorDataset
        >>> loader = DataLoader(TensorDataset(tp.arange(6.0)), batch_size=4, shuffle=True)
        >>> [len(b[0]) for b in loader]
        [4, 2]
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.generator = dataset, num_workers, generator
        self.pin_memory, self.timeout, self.worker_init_fn = pin_memory, timeout, worker_init_fn
        self.persistent_workers = persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler/batch_sampler option")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.sampler, self.batch_sampler = batch_size, drop_last, sampler, batch_sampler
        auto = batch_size is not None or batch_sampler is not None
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if auto else default_convert)

    def __iter__(self):
        if self.num_workers > 0:
            yield from self._iter_workers()
            return
        _seed_from(self.generator)  # (PyTorch draws a base seed for its workers from the stream every epoch)
        if self._iterable:
            yield from self._iter_stream()
            return
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
        else:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])

    def _workers(self) -> list:
        """This epoch's workers: new ones, seeded from a base seed drawn from the loader's stream; with
        `persistent_workers`, the first epoch's (their random states go on from where they were)."""
        kept = getattr(self, "_kept_workers", None)
        if kept is not None:
            return kept
        base_seed = _seed_from(self.generator)
        workers = [_Worker(w, self.num_workers, base_seed, copy.copy(self.dataset) if self._iterable else self.dataset,
                           self.worker_init_fn) for w in range(self.num_workers)]
        if self.persistent_workers:
            self._kept_workers = workers
        return workers

    def _iter_workers(self):
        workers = self._workers()
        n = len(workers)
        if self._iterable:  # each worker streams its own copy; batches come from the workers in turn
            streams = []
            for w in workers:
                with w.running():
                    streams.append(iter(self._iter_stream(w.info.dataset)))
            active = list(range(n))
            while active:
                for w in list(active):
                    with workers[w].running():
                        batch = next(streams[w], _DONE)
                    if batch is _DONE:
                        active.remove(w)
                    else:
                        yield batch
            return
        batches = self.batch_sampler if self.batch_sampler is not None else self.sampler
        for i, indices in enumerate(batches):
            with workers[i % n].running():
                batch = self.collate_fn([self.dataset[i] for i in indices]) if self.batch_sampler is not None \
                    else self.collate_fn(self.dataset[indices])
            yield batch

    def _iter_stream(self, dataset=None):
        dataset = self.dataset if dataset is None else dataset
        if self.batch_size is None:
            for sample in dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
