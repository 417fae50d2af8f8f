"""The persistent compilation cache: a program's second run compiles nothing it compiled before (the programs
of repeated eager segments, compiled on the compiler thread, included)."""

import os
import subprocess
import sys

import jax

import tapeflow as tp

_PROGRAM = """
import jax, tapeflow as tp
from tapeflow import _adaptive
events = []
jax.monitoring.register_event_listener(lambda e, **kw: events.append(e))
m = tp.nn.Linear(8, 2)
opt = tp.optim.SGD(m.parameters(), lr=0.1)
x = tp.randn(4, 8)
for _ in range(5):  # (a step's program compiles on the compiler thread from the second step on)
    opt.zero_grad()
    m(x).relu().sum().backward()
    opt.step()
    _adaptive.wait_for_compiles()
assert tp.adaptive_eager_stats()["programs compiled"] >= 1
hits = sum(e.endswith("cache_hits") for e in events)
misses = sum(e.endswith("compile_requests_use_cache") for e in events) - hits  # (programs compiled)
print(tp.get_compilation_cache_dir(), hits, misses)
"""


def _run(env_value):
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=env_value)
    out = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, check=True)
    where, hits, misses = out.stdout.split()
    return where, int(hits), int(misses)


def test_second_process_compiles_nothing(tmp_path):
    where, hits, misses = _run(str(tmp_path))
    # (A first run may hit too: two programs of one process can compile to the same XLA module.)
    assert where == str(tmp_path) and misses > 0
    (versioned,) = tmp_path.iterdir()  # one directory per JAX/jaxlib version
    assert jax.__version__ in versioned.name and any(versioned.iterdir())
    assert _run(str(tmp_path)) == (str(tmp_path), hits + misses, 0)


def test_the_environment_turns_it_off(tmp_path):
    where, hits, misses = _run("0")
    assert where == "None" and hits == 0 and misses > 0
    assert _run("0") == ("None", 0, misses)  # nothing was kept: the second run compiles everything again


def test_moved_and_turned_off_at_run_time(tmp_path):
    old = tp.get_compilation_cache_dir()
    try:
        tp.set_compilation_cache_dir(tmp_path)
        assert tp.get_compilation_cache_dir() == str(tmp_path)
        assert jax.config.jax_compilation_cache_dir.startswith(str(tmp_path))
        tp.set_compilation_cache_dir(None)
        assert tp.get_compilation_cache_dir() is None and not jax.config.jax_compilation_cache_dir
    finally:
        tp.set_compilation_cache_dir(old)


def test_a_full_cache_drops_the_least_recently_used_programs(tmp_path):
    from tapeflow._compilation_cache import _trim

    for i in range(10):
        p = tmp_path / f"program{i}"
        p.write_bytes(b"x" * 100)
        os.utime(p, (1000 + i, 1000 + i))
    _trim(str(tmp_path), 2000)  # under the bound: nothing goes
    assert len(list(tmp_path.iterdir())) == 10
    _trim(str(tmp_path), 500)  # over it: the oldest go, down to three quarters of the bound
    assert sorted(p.name for p in tmp_path.iterdir()) == ["program7", "program8", "program9"]
