"""The autograd profiler."""

import json

import jax

import tapeflow as tp
from tapeflow.autograd import profiler


def step(x, w):
    with profiler.record_function("forward"):
        y = (x @ w).relu().sum()
    y.backward()


def test_events_and_table(tmp_path):
    x, w = tp.randn(4, 3), tp.randn(3, 2, requires_grad=True)
    with profiler.profile(record_shapes=True) as prof:
        step(x, w)
    keys = {e.key for e in prof.key_averages()}
    assert {"forward", "aten::mm", "aten::relu", "aten::sum", "torch::autograd::AccumulateGrad", "MmBackward0"} <= keys
    assert any(k.endswith("Backward0") for k in keys)
    fwd = next(e for e in prof.events() if e.key == "forward")
    assert fwd.cpu_children and fwd.cpu_time_total >= fwd.self_cpu_time_total >= 0
    assert abs(fwd.self_cpu_time_total - (fwd.cpu_time_total - sum(c.cpu_time_total for c in fwd.cpu_children))) < 1e-6
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    assert "Self CPU %" in table and "# of Calls" in table and "Self CPU time total:" in table
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.load(open(path))["traceEvents"]
    ranges = [e for e in events if e["ph"] == "X"]
    assert ranges and all(e["dur"] >= 0 for e in ranges)
    meta = {(e["name"], e.get("tid")): e["args"]["name"] for e in events if e["ph"] == "M"}
    assert meta[("process_name", None)].startswith("tapeflow (")
    assert {tid for _, tid in meta if tid is not None} == {e["tid"] for e in ranges}
    assert meta[("thread_name", ranges[0]["tid"])] == "main thread"
    assert prof.total_average().count == len(prof.events())
    shaped = prof.key_averages(group_by_input_shape=True)
    assert any(a.input_shapes == [[4, 3], [3, 2]] for a in shaped)
    assert not tp._state.state.interceptors


def test_sync_device_time_and_decorator():
    @profiler.record_function("f")
    def f(a):
        return a * 2 + 1

    with profiler.profile(sync=True) as prof:
        f(tp.ones(3))
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["f"].count == 1
    if jax.default_backend() == "cpu":  # host and device are one: no device columns repeating the CPU times
        assert avg["aten::mul"].device_time_total == 0 and "Device" not in prof.table()
    else:
        assert avg["aten::mul"].device_time_total > 0 and "Device total" in prof.table()


def test_compile_time_is_its_own_row():
    x, w, b = tp.randn(5, 23), tp.randn(19, 23), tp.randn(19)  # shapes no other test uses, so linear compiles here
    with profiler.profile() as first:
        tp.nn.functional.linear(x, w, b)
    compile_ev = next(e for e in first.events() if e.name == "XLA compile: aten::linear")
    op = compile_ev.cpu_parent
    assert op.name == "aten::linear" and op.cpu_children == [compile_ev]
    assert 0 < compile_ev.cpu_time_total <= op.cpu_time_total
    assert op.self_cpu_time_total == op.cpu_time_total - compile_ev.cpu_time_total
    table = first.table()
    assert "XLA compile: aten::linear" in table and "XLA compile time total:" in table
    with profiler.profile() as second:  # compiled once: the second call has no compile row
        tp.nn.functional.linear(x, w, b)
    assert [e.name for e in second.events()] == ["aten::linear"]
    assert "XLA compile" not in second.table()


def test_jax_trace(tmp_path):
    with jax.profiler.trace(str(tmp_path)):
        with profiler.profile():
            step(tp.randn(2, 2), tp.randn(2, 2, requires_grad=True))
    assert any(p.is_file() for p in tmp_path.rglob("*"))
