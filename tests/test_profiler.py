"""The autograd profiler."""

import json

import jax
import pytest

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


def test_events_and_averages_are_built_and_added_as_pytorchs():
    torch = pytest.importorskip("torch")

    def run(lib):
        prof = lib.autograd.profiler_util
        avg = prof.FunctionEventAvg()
        avg.add(prof.FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
        avg.add(prof.FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
        avg.add(avg)
        events = prof.EventList()
        ranges = [(1, 0, 1), (1, 1, 2), (0, 0, 2), (0, 1, 2), (0, 1, 3)]
        for i, (thread, start, end) in enumerate(ranges):
            events.append(prof.FunctionEvent(id=i + 1, node_id=0, name=f"e{i}", thread=thread, start_us=start,
                                             end_us=end))
        events._populate_cpu_children()
        return (avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total, avg.cpu_time,
                [[c.id for c in e.cpu_children] for e in events])

    assert run(tp) == run(torch)


def test_an_op_and_its_backward_node_share_a_sequence_number():
    with tp.autograd.profiler.profile() as prof:
        assert tp.autograd._profiler_enabled()
        x = tp.randn(4, 4, requires_grad=True)
        (x + x).sum().backward()
    assert not tp.autograd._profiler_enabled()
    seq = {}
    for e in prof.function_events:
        for name in ("add", "sum"):  # (compile rows carry the number of the op or node they compiled)
            if e.name.endswith("aten::" + name):
                seq.setdefault(name, set()).add(e.sequence_nr)
            elif name.capitalize() in e.name and "Backward" in e.name:
                seq.setdefault(name + " backward", set()).add(e.sequence_nr)
    assert seq["add"] == seq["add backward"] and seq["sum"] == seq["sum backward"]
    assert len(seq["add"] | seq["sum"]) == 2 and min(seq["add"] | seq["sum"]) >= 0
    assert str(prof) == prof.table()


def test_events_are_listed_in_start_order_with_memory_and_totals():
    x = tp.ones(10, 10)
    with tp.autograd.profiler.profile(profile_memory=True) as prof:
        with tp.autograd.profiler.record_function("outer"):
            y = x * 2 + 4
            with tp.autograd.profiler.record_function("inner"):
                y = y - 1
        y = y / 1
    names = [e.name for e in prof.function_events if not e.name.startswith(profiler.COMPILE_PREFIX)]
    assert names == ["outer", "aten::mul", "aten::add", "inner", "aten::sub", "aten::div"]
    usage = {e.name: e.cpu_memory_usage for e in prof.function_events}
    assert usage["aten::mul"] == usage["inner"] == 400 and usage["outer"] == 3 * 400
    assert prof.self_cpu_time_total == sum(e.self_cpu_time_total for e in prof.function_events) > 0

    outer = tp.autograd.profiler.record_function("outer")  # (closed out of order, and without arguments)
    outer.__enter__()
    with tp.autograd.profiler.record_function("inner"):
        outer.__exit__()


def test_pytorchs_profile_arguments_are_accepted():
    assert tp.autograd.profiler.kineto_available() is False
    with tp.autograd.profiler.profile(use_kineto=tp.autograd.profiler.kineto_available(), use_cpu=True,
                                      acc_events=False) as prof:
        tp.ones(2).sum()
    assert "aten::sum" in {e.name for e in prof.function_events}
