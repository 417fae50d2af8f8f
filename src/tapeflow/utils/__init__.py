"""`tapeflow.utils`: data loading (`tapeflow.utils.data`), activation checkpointing
(`tapeflow.utils.checkpoint`) and hook handles (`tapeflow.utils.hooks`), as `torch.utils`."""

from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
