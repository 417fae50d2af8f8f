"""`tapeflow.utils.data`: datasets, samplers and the `DataLoader`, with `torch.utils.data`'s API.

Example:
    >>> import tapeflow as tp
    >>> from tapeflow.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(tp.arange(10.0).reshape(5, 2), tp.arange(5))
    >>> [tuple(y.tolist()) for _, y in DataLoader(ds, batch_size=2)]
    [(0, 1), (2, 3), (4,)]
"""

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info", "Dataset", "IterableDataset",
           "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "BatchSampler", "WeightedRandomSampler", "DistributedSampler",
           "ChainDataset", "StackDataset"]
