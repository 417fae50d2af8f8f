"""Argument helpers that layers (and programs written against `torch.nn.modules.utils`) use: `_pair(3)` is
`(3, 3)`, a tuple or list is kept as a tuple."""

from __future__ import annotations

import collections.abc
from itertools import repeat


def _ntuple(n: int, name: str = "parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """`t` reversed, each element repeated `n` times (conv padding in `F.pad`'s order)."""
    return tuple(x for x in reversed(t) for _ in range(n))
