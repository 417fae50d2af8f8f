"""`tapeflow.utils.data`: datasets, samplers and the `DataLoader`, with `torch.utils.data`'s API.

Example:
    >>> import tapeflow as tp
    >>> from tapeflow.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(tp.arange(10.0).reshape(5, 2), tp.arange(5))
    >>> [tuple(y.tolist()) for _, y in DataLoader(ds, batch_size=2)]
    [(0, 1), (2, 3), (4,)]
"""

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info", "Dataset", "IterableDataset",
           "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "BatchSampler"]
