"""`tapeflow.utils`: data loading (`tapeflow.utils.data`) and activation checkpointing
(`tapeflow.utils.checkpoint`), as `torch.utils`."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
