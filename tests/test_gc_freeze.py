"""Import-time objects are frozen out of the cyclic garbage collector; the program's own objects are not."""

import gc
import os
import subprocess
import sys
import weakref

import tapeflow as tp

_PROBE = "import gc, tapeflow; print(gc.get_freeze_count())"


def _freeze_count(**env) -> int:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True,
                         env={**os.environ, **env})
    return int(out.stdout.strip())


def test_import_freezes_what_it_leaves_behind_unless_turned_off():
    assert _freeze_count() > 10_000  # JAX's and tapeflow's module-level objects
    assert _freeze_count(TAPEFLOW_GC_FREEZE="0") == 0


def test_reference_cycles_through_a_graph_are_still_collected():
    x = tp.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g, keep=y: g)  # y -> its node -> the hook -> y: a cycle
    node = weakref.ref(y.grad_fn)
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None and node() is None
