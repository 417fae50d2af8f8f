"""`tapeflow.utils`: data loading (`tapeflow.utils.data`), as `torch.utils`."""

from . import data

__all__ = ["data"]
