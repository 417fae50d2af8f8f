"""The one program cache of every staged path: bounded LRU, one warm-up rule, a re-trace warning.

A key is a tuple of `(part name, value)` pairs, so that the warning can say which part changed. The
warm-up rule: a key the user did not ask to compile is traced on its second sighting (its first call
runs uncached), so code whose structure changes every call never pays for compilation; `tp.compile`
traces on the first call.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict

__all__ = ["Programs", "Slot"]

RETRACE_WARNING = 16  # traces of one cache before the warning


class Slot:
    """A key's place in the cache: how often it was seen, its program once traced, or why it failed."""

    __slots__ = ("seen", "program", "failed", "stamp")

    def __init__(self):
        self.seen, self.program, self.failed, self.stamp = 0, None, None, 0


class Programs:
    """Slots by key, about the least recently used dropped beyond `size`.

    Keys can be long (a segment's every op) and moving one to the recent end hashes it again, so a hit
    moves its key only once `size // 2` keys have been inserted since it last moved."""

    def __init__(self, name: str | None, *, size: int = 64, warmup: int = 1):
        self.name, self.size, self.warmup = name, size, warmup  # no name: no warning
        self._slots: OrderedDict = OrderedDict()
        self.traces, self._last_key = 0, None
        self._inserted = 0  # keys inserted so far: the clock of `Slot.stamp`

    def __len__(self) -> int:
        return len(self._slots)

    def values(self):
        return self._slots.values()

    def slot(self, key, count: bool = True) -> Slot:
        """The slot of `key` (new or refreshed); with `count`, one more sighting of it."""
        s = self._slots.get(key)
        if s is None:
            s = self._slots[key] = Slot()
            self._inserted += 1
            s.stamp = self._inserted
            if len(self._slots) > self.size:
                self._slots.popitem(last=False)
        elif self._inserted - s.stamp > self.size // 2:
            self._slots.move_to_end(key)
            s.stamp = self._inserted
        s.seen += count
        return s

    def ready(self, s: Slot) -> bool:
        """Whether `s` has been seen often enough to be traced (the warm-up rule)."""
        return s.failed is None and s.seen > self.warmup

    def traced(self, key, stacklevel: int = 4) -> None:
        """Count a trace of `key`; at the `RETRACE_WARNING`-th, say which part of the key keeps changing."""
        self.traces += 1
        last, self._last_key = self._last_key, key
        if self.traces != RETRACE_WARNING or self.name is None:
            return
        changed = [name for (name, a), (_, b) in zip(key, last or key) if a != b] or ["nothing: evicted entries"]
        warnings.warn(f"{self.name} has been traced {self.traces} times; the last trace was for a new "
                      f"{', '.join(changed)}. A program is reused only while its key stays the same: keep the "
                      "arguments' shapes, dtypes and static values, the grad mode and the state the function "
                      "reads (its identity, shapes, dtypes, training flags, optimizer settings) fixed between "
                      "calls.", stacklevel=stacklevel)
