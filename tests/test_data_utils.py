"""Samplers and dataset combinators of `tapeflow.utils.data`, and `tapeflow.testing.make_tensor`, compared with
PyTorch's where the result does not depend on the random stream."""

import functools

import pytest

import tapeflow as tp


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and text are what is compared
        return type(e).__name__, str(e).replace("torch", "tapeflow")
    return None


class _Count:
    """An IterableDataset of `range(n)`, built on the given library's base class."""

    @staticmethod
    def make(lib, n):
        class Count(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(n))

            def __len__(self):
                return n
        return Count()


def samplers_and_datasets(m):
    D = m.utils.data
    out = [list(D.WeightedRandomSampler([0.0, 1.0, 0.0], 4)), len(D.WeightedRandomSampler([1, 2], 7)),
           sorted(D.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)),
           _error(lambda: D.WeightedRandomSampler([1.0], 0)),
           _error(lambda: D.WeightedRandomSampler([1.0], 2, replacement=1)),
           _error(lambda: D.WeightedRandomSampler([[1.0]], 2))]
    for drop_last in (False, True):
        for rank in range(3):
            s = D.DistributedSampler(range(10), num_replicas=3, rank=rank, shuffle=False, drop_last=drop_last)
            out.append((list(s), len(s)))
    shuffled = [list(D.DistributedSampler(range(10), num_replicas=3, rank=r)) for r in range(3)]
    out.append((sum(map(len, shuffled)), len(set(sum(shuffled, [])))))  # padded to 12, covering all 10
    out.append(_error(lambda: D.DistributedSampler(range(10), num_replicas=3, rank=3)))
    chained = D.ChainDataset([_Count.make(m, 2), _Count.make(m, 3)])
    out += [list(chained), len(chained), _error(lambda: list(D.ChainDataset([_Count.make(m, 1), [1, 2]])))]
    out += [D.StackDataset([1, 2], [3, 4])[0], len(D.StackDataset([1, 2], [3, 4])),
            D.StackDataset(a=[1, 2], b=[3, 4])[1], _error(lambda: D.StackDataset([1], [1, 2])),
            _error(lambda: D.StackDataset([1], b=[1]))]
    loader = D.DataLoader(D.StackDataset(m.arange(4), m.arange(4) * 2), batch_size=2)
    out.append([[b.tolist() for b in batch] for batch in loader])
    return out


def make_tensor_rules(m):
    mk = functools.partial(m.testing.make_tensor, device="cpu")
    out = []
    for name, lo, hi in (("float32", -9, 9), ("float64", -9, 9), ("int64", -9, 10), ("int8", -9, 10),
                         ("uint8", 0, 10), ("bool", 0, 2)):
        t = mk((40, 30), dtype=getattr(m, name))
        out.append((name, tuple(t.shape), str(t.dtype).split(".")[-1], float(t.min()) >= lo, float(t.max()) < hi))
    t = mk(3, 4, dtype=m.float32, low=-1, high=1, requires_grad=True)
    out += [t.requires_grad, tuple(t.shape), mk((2, 2), dtype=m.complex64).dtype.is_complex,
            bool((mk(1000, dtype=m.int64, low=0, high=2, exclude_zero=True) != 0).all()),
            _error(lambda: mk(2, dtype=m.int64, requires_grad=True)),
            _error(lambda: mk(2, dtype=m.float32, low=3, high=2)),
            _error(lambda: mk(2, dtype=m.float32, low=float("nan"))),
            _error(lambda: mk(2, dtype=m.uint8, low=-20, high=-10)),
            _error(lambda: mk(2, dtype=m.float32, noncontiguous=True, memory_format=m.contiguous_format))]
    return out


@pytest.mark.parametrize("scenario", [samplers_and_datasets, make_tensor_rules], ids=lambda f: f.__name__)
def test_matches_pytorch(scenario):
    got = scenario(tp)
    torch = pytest.importorskip("torch")
    assert got == scenario(torch)


def test_distributed_sampler_epochs_reshuffle_and_ranks_partition():
    D = tp.utils.data
    parts = [D.DistributedSampler(range(9), num_replicas=3, rank=r, seed=1) for r in range(3)]
    first = [list(p) for p in parts]
    assert sorted(sum(first, [])) == list(range(9))  # the ranks partition the dataset
    for p in parts:
        p.set_epoch(1)
    second = [list(p) for p in parts]
    assert sorted(sum(second, [])) == list(range(9)) and second != first
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        D.DistributedSampler(range(3))


def test_weighted_sampler_follows_the_weights():
    draws = list(tp.utils.data.WeightedRandomSampler([1.0, 3.0], 4000, generator=tp.Generator().manual_seed(0)))
    share = sum(draws) / len(draws)
    assert 0.72 < share < 0.78  # index 1 carries 3/4 of the weight


def test_assert_allclose_is_deprecated_but_works():
    with pytest.warns(FutureWarning, match="assert_close"):
        tp.testing.assert_allclose(tp.tensor([1.0, float("nan")]), [1.0, float("nan")])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        tp.testing.assert_allclose(tp.tensor([1.0]), [2.0])


def test_shuffled_epochs_with_a_generator_follow_pytorch():
    """`DataLoader(shuffle=True, generator=g)` over several epochs, and `RandomSampler` with replacement or more
    samples than data, draw what PyTorch draws (a sampler ends each epoch with one more permutation, cut short)."""
    torch = pytest.importorskip("torch")

    def run(m):
        g = m.Generator()
        g.manual_seed(0)
        dl = m.utils.data.DataLoader(list(range(12)), batch_size=4, shuffle=True, generator=g)
        epochs = [[b.tolist() for b in dl] for _ in range(3)]
        g2 = m.Generator()
        g2.manual_seed(3)
        with_replacement = list(m.utils.data.RandomSampler(range(7), replacement=True, num_samples=40, generator=g2))
        longer = list(m.utils.data.RandomSampler(range(5), num_samples=12, generator=g2))
        m.manual_seed(1)
        unseeded = [[b.tolist() for b in m.utils.data.DataLoader(list(range(10)), batch_size=3, shuffle=True)]
                    for _ in range(2)]
        return epochs, with_replacement, longer, unseeded, m.rand(2).tolist()

    assert run(tp) == run(torch)


# -- worker processes, emulated: PyTorch's batches, per-worker random streams and worker info -------------------
def _worker_program(L):
    """Batches of datasets that draw random numbers while loading, with 0, 2 and 3 workers (persistent or not),
    two epochs each, and the main process's streams after."""
    import random

    import numpy as np

    D = L.utils.data

    class Augmented(D.Dataset):
        def __len__(self):
            return 10

        def __getitem__(self, i):
            info = D.get_worker_info()
            return float(L.rand(1)) + random.random() + np.random.rand() + i, -1 if info is None else info.id

    class Sharded(D.IterableDataset):
        def __iter__(self):
            info = D.get_worker_info()
            lo, step = (0, 1) if info is None else (info.id, info.num_workers)
            for i in range(lo, 7, step):
                yield float(L.rand(1)) + i

    def init(w):
        info = D.get_worker_info()
        assert info.id == w and info.num_workers in (2, 3) and info.dataset is not None
        L.rand(1)  # (moves the worker's stream, not the main process's)

    out = []
    L.manual_seed(0)
    random.seed(1)
    np.random.seed(2)
    for workers, persistent in ((0, False), (2, False), (3, False), (3, True)):
        loader = D.DataLoader(Augmented(), batch_size=3, shuffle=True, num_workers=workers,
                              worker_init_fn=init if workers else None, persistent_workers=persistent)
        for _ in range(2):
            out.append([[round(float(v), 5) for v in b[0]] + b[1].tolist() for b in loader])
    for workers in (0, 2, 3):
        out.append([[round(float(v), 5) for v in b] for b in D.DataLoader(Sharded(), batch_size=2, num_workers=workers)])
    out.append((round(float(L.rand(1)), 6), random.random(), float(np.random.rand())))
    return out


@pytest.mark.oracle
def test_workers_load_what_pytorchs_worker_processes_load():
    """Batch i comes from worker i % num_workers, which draws from its own streams (tapeflow's generator, Python's
    `random`, NumPy's), seeded as PyTorch seeds a worker; `worker_init_fn` and `get_worker_info` run in it; an
    IterableDataset is streamed by every worker; the main process's streams are left as PyTorch leaves them."""
    torch = pytest.importorskip("torch")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's warning about more workers than cores)
        theirs = _worker_program(torch)
    assert _worker_program(tp) == theirs


def test_worker_info_and_options():
    from tapeflow.utils.data.dataloader import WorkerInfo

    info = WorkerInfo(id=1, num_workers=2, seed=9, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 0
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        tp.utils.data.DataLoader([1, 2], persistent_workers=True)
    loader = tp.utils.data.DataLoader(list(range(4)), batch_size=2, num_workers=2,
                                      collate_fn=lambda b: (b, tp.utils.data.get_worker_info().id))
    assert [b for b in loader] == [([0, 1], 0), ([2, 3], 1)] and tp.utils.data.get_worker_info() is None
