"""`torch.utils.hooks`: the handle every `register_*hook` call returns, for code that keeps hooks of its own."""

from __future__ import annotations

from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle"]
