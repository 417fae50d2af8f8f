"""Keeping Python's cyclic garbage collector off the hot path of graph building.

A tapeflow graph is many small Python objects (a node, its edge and saved-input tuples per op), none of
them in reference cycles: they are freed by reference counting. The cyclic collector still visits them,
in two ways that tapeflow adjusts once, at import:

* Each full collection walks every tracked object in the process, including the ~100,000 that importing
  JAX and tapeflow leaves behind and that never become garbage. tapeflow collects once and moves what is
  left into the collector's permanent generation (`gc.freeze()`), so full collections walk only the
  program's own objects. Frozen objects are still freed when their reference count drops to zero; only
  reference cycles among them are no longer collected. `TAPEFLOW_GC_FREEZE=0` turns this off.
* Python runs a young-generation collection every 700 new container objects, and every tenth of those
  a middle one, and full collections follow from those counts: building a graph of 400,000 nodes ran 13
  full collections, half of the time spent building it. tapeflow raises the first threshold to 20,000
  (a young collection then runs every ~2,000 recorded ops; reference cycles that become garbage are
  found that much later). It does so only while the threshold is Python's default (700), so a program
  that set its own keeps it; `TAPEFLOW_GC_THRESHOLD=<n>` sets another value, `0` leaves it alone.
"""

from __future__ import annotations

import atexit
import gc
import os

__all__ = ["freeze_import_time_objects", "raise_young_threshold"]

PYTHON_DEFAULT = 700
YOUNG_THRESHOLD = 20_000


def freeze_import_time_objects() -> bool:
    """Collect, then freeze what is tracked now (unless `TAPEFLOW_GC_FREEZE=0`); whether it froze."""
    if os.environ.get("TAPEFLOW_GC_FREEZE", "1").lower() in ("0", "off", "false", "no"):
        return False
    gc.collect()
    gc.freeze()
    atexit.register(gc.unfreeze)
    return True


def raise_young_threshold() -> int:
    """Set the young generation's threshold to `YOUNG_THRESHOLD` (or `TAPEFLOW_GC_THRESHOLD`) if it is
    Python's default; the threshold in force afterwards."""
    value = os.environ.get("TAPEFLOW_GC_THRESHOLD", "").strip()
    try:
        target = int(value) if value else YOUNG_THRESHOLD
    except ValueError:
        raise ValueError(f"TAPEFLOW_GC_THRESHOLD must be a whole number (0 leaves Python's setting alone), "
                         f"not {value!r}") from None
    first, *rest = gc.get_threshold()
    if target > 0 and first == PYTHON_DEFAULT:
        gc.set_threshold(target, *rest)
    return gc.get_threshold()[0]
