"""Import-time objects are frozen out of the cyclic garbage collector; the program's own objects are not; the
young generation's threshold is raised unless the program chose its own."""

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
    # Turned off, tapeflow freezes nothing: what is frozen then is the interpreter's own doing (site hooks).
    out = subprocess.run([sys.executable, "-c", "import gc, jax; print(gc.get_freeze_count())"], capture_output=True,
                         text=True, check=True)
    assert _freeze_count(TAPEFLOW_GC_FREEZE="0") == int(out.stdout.strip())


def _threshold(code: str = "pass", **env) -> str:
    out = subprocess.run([sys.executable, "-c", f"import gc; {code}; import tapeflow; print(gc.get_threshold()[0])"],
                         capture_output=True, text=True, env={**os.environ, **env})
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


def test_import_raises_the_young_threshold_unless_set():
    assert _threshold() == "20000"
    assert _threshold(TAPEFLOW_GC_THRESHOLD="0") == "700"  # left alone
    assert _threshold(TAPEFLOW_GC_THRESHOLD="5000") == "5000"
    assert _threshold("gc.set_threshold(1234)") == "1234"  # the program's own choice is kept
    assert _threshold(TAPEFLOW_GC_THRESHOLD="lots").startswith("ValueError: TAPEFLOW_GC_THRESHOLD must be a whole")


def test_reference_cycles_through_a_graph_are_still_collected():
    x = tp.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g, keep=y: g)  # y -> its node -> the hook -> y: a cycle
    node = weakref.ref(y.grad_fn)
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None and node() is None


def test_processes_that_froze_their_imports_exit_cleanly():
    # Left frozen at exit, import-time extension objects were finalised out of order: about one process in
    # four that had run a backward crashed (SIGSEGV) after its last line. Twelve at once, all must exit 0.
    code = ("import tapeflow as tp; x = tp.randn(7, 13, requires_grad=True); w = tp.randn(13, 5, requires_grad=True); "
            "(x @ w).sum().backward(); print(tuple(x.grad.shape))")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(12)]
    results = [(p.wait(timeout=120), p.stdout.read().strip()) for p in procs]
    for p in procs:
        p.stdout.close(), p.stderr.close()
    assert results == [(0, "(7, 13)")] * 12
