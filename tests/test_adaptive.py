"""Adaptive eager: ops recorded into segments that run as one cached program, with eager semantics."""

import contextlib
import math
import threading
import traceback

import jax
import numpy as np
import pytest

import tapeflow as tp
from tapeflow import _adaptive, nn, optim


def _stats():
    return tp.adaptive_eager_stats()


def _step(x, w):
    y = (x @ w).tanh() * 2.0 + 1.0
    return (y * y).mean()


def test_a_repeated_structure_compiles_once_and_is_reused(adaptive):
    x = tp.randn(8, 4)
    w = tp.randn(4, 3, requires_grad=True)
    for _ in range(3):  # each structure is sent to the compiler thread on its second sighting
        w.grad = None
        _step(x, w).backward()
        w.grad.sum().item()
    _adaptive.wait_for_compiles()
    before = _stats()
    for _ in range(4):
        w.grad = None
        _step(x, w).backward()
        w.grad.sum().item()
    after = _stats()
    assert after["programs compiled"] == before["programs compiled"]
    assert after["program hits"] - before["program hits"] >= 4


def test_a_structure_that_changes_every_step_never_compiles(adaptive):
    x = tp.randn(5)
    before = _stats()
    for n in range(1, 7):
        y = x
        for _ in range(n):  # a different number of ops every time
            y = y * 1.5
        y.sum().item()
    after = _stats()
    assert after["programs compiled"] == before["programs compiled"]
    assert after["segments run op by op"] - before["segments run op by op"] == 6


@pytest.mark.parametrize("on", [False, True])
def test_values_graph_and_versions_equal_op_by_op(on):
    was = tp.is_adaptive_eager_enabled()
    tp.set_adaptive_eager(on)
    try:
        tp.manual_seed(0)
        x = tp.randn(3, 4, dtype=tp.float64, requires_grad=True)
        h = x * 2.0
        y = h.exp().sum(1)
        h.add_(1.0)  # a version bump that does not touch y's history
        z = (y * 3.0).sum()
        names = [z.grad_fn.name(), z.grad_fn.next_functions[0][0].name(),
                 z.grad_fn.next_functions[0][0].next_functions[0][0].name()]
        seq = z.grad_fn._sequence_nr() > z.grad_fn.next_functions[0][0]._sequence_nr()
        z.backward()
        return_values = (z.item(), x.grad.numpy().copy(), h._version, names, seq, tuple(y.shape))
    finally:
        tp.set_adaptive_eager(was)
    expected = np.exp(x.detach().numpy() * 2.0) * 6.0
    np.testing.assert_allclose(return_values[1], expected, rtol=1e-12)
    assert return_values[2:] == (1, ["SumBackward0", "MulBackward0", "SumBackward1"], True, (3,))


def test_a_shape_error_raises_at_the_users_line(adaptive):
    a, b = tp.ones(2, 3), tp.ones(4, 5)
    before = _stats()["segments run"]
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied|size of tensor") as info:
        a @ b  # noqa: B018
    frames = traceback.extract_tb(info.tb)
    assert frames[0].name == "test_a_shape_error_raises_at_the_users_line"
    assert _stats()["segments run"] == before  # raised while recording, nothing ran


def test_a_training_loop_equals_op_by_op_and_runs_one_program_per_step():
    def train(on):
        was = tp.is_adaptive_eager_enabled()
        tp.set_adaptive_eager(on)
        try:
            tp.manual_seed(1)
            model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
            opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            x, y = tp.randn(32, 6), tp.randn(32, 2)
            before = _stats()
            losses = []
            for _ in range(6):
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                losses.append(loss.item())
            runs = _stats()["segments run"] - before["segments run"]
            return losses, [p.detach().numpy().copy() for p in model.parameters()], runs
        finally:
            tp.set_adaptive_eager(was)

    l0, p0, _ = train(False)
    l1, p1, runs = train(True)
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    for a, b in zip(p0, p1):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert runs <= 7  # after the first step, the optimizer update, the forward and the backward are one segment


@pytest.mark.parametrize("update", ["optimizer", "by hand"])
def test_a_backward_pass_ends_its_segment_so_segments_follow_steps(adaptive, update):
    """The program of the forward and backward starts at the end of the backward pass (it then runs while
    Python records the update); the update joins the next step's segment, and every step's segments are alike."""
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = tp.randn(4, 3)
    sizes = []
    run = _adaptive._Segment._run

    def counting(seg):
        sizes.append(len(seg.ops))
        run(seg)

    def step():
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        if update == "optimizer":
            opt.step()
        else:
            with tp.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad

    for _ in range(5):
        step()
        _adaptive.wait_for_compiles()
    _adaptive._Segment._run = counting
    try:
        for _ in range(3):
            step()
    finally:
        _adaptive._Segment._run = run
    assert len(sizes) == 3 and len(set(sizes)) == 1, sizes  # one segment per step: update, forward, backward


def test_a_value_pending_on_another_thread_is_computed_when_read(adaptive):
    out = {}

    def make():
        out["t"] = tp.arange(4.0) * 2.0 + 1.0  # recorded on this thread, never read here

    th = threading.Thread(target=make)
    th.start()
    th.join()
    assert out["t"].tolist() == [1.0, 3.0, 5.0, 7.0]


def test_pending_state_read_inside_a_compiled_function_is_a_value(adaptive):
    w = tp.ones(3)
    with tp.no_grad():
        w.mul_(3.0)  # pending when the compiled function first reads it
    f = tp.compile(lambda x: (x * w).sum())
    assert f(tp.ones(3)).item() == 9.0
    with tp.no_grad():
        w.add_(1.0)
    assert f(tp.ones(3)).item() == 12.0


def test_the_switch_turns_recording_off():
    was = tp.is_adaptive_eager_enabled()
    tp.set_adaptive_eager(False)
    try:
        before = _stats()["ops recorded"]
        (tp.ones(3) * 2.0).sum()
        assert _stats()["ops recorded"] == before
    finally:
        tp.set_adaptive_eager(was)


def test_a_users_jax_function_runs_when_called(adaptive):
    import jax.numpy as jnp

    calls = []

    def f(a):
        calls.append(1)
        return jnp.sin(a)

    g = tp.interop.from_jax(f)
    g(tp.ones(2))
    assert calls  # not deferred to when a value is read


def test_an_index_check_through_a_reshaping_view_does_not_run_the_segment(adaptive):
    logits = tp.randn(6, 5, requires_grad=True)
    targets = tp.tensor([[0, 1, 2], [3, 4, 0]])
    h = logits * 2.0  # pending
    before = _stats()["segments run"]
    loss = nn.functional.cross_entropy(h, targets.view(-1))  # checked on the targets' base
    assert _stats()["segments run"] == before
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        nn.functional.cross_entropy(h, tp.tensor([[0, 1, 2], [3, 4, 7]]).view(-1))
    assert loss.item() > 0


_FACTORIES = [
    ("zeros", lambda m: m.zeros(2, 3)), ("ones int", lambda m: m.ones(4, dtype=m.int64)),
    ("full float", lambda m: m.full((2,), 0.5)), ("full int", lambda m: m.full((3,), 7)),
    ("full bool", lambda m: m.full((2,), True)), ("full -0.0", lambda m: m.full((2,), -0.0)),
    ("full nan", lambda m: m.full((1,), float("nan"))), ("empty", lambda m: m.empty(2, 2).zero_()),
    ("ones float64", lambda m: m.ones(3, dtype=m.float64)), ("arange", lambda m: m.arange(5)),
    ("arange float", lambda m: m.arange(0, 1, 0.1)), ("zeros_like pending", lambda m: m.zeros_like(m.ones(2) * 3)),
    ("ones requires grad", lambda m: m.ones(2, requires_grad=True)),
]


@pytest.mark.parametrize("name,make", _FACTORIES, ids=[f[0] for f in _FACTORIES])
def test_factories_give_pytorchs_values_and_leave_pending_inputs_pending(adaptive, name, make):
    torch = pytest.importorskip("torch")
    before = _stats()["segments run"]
    t = make(tp)
    assert _stats()["segments run"] == before  # (`zeros_like` of a pending tensor does not run its segment)
    expected = make(torch)
    assert str(t.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert t.requires_grad == expected.requires_grad and t.is_leaf
    for got in (t, (tp.set_adaptive_eager(False), make(tp))[1]):
        np.testing.assert_array_equal(got.detach().numpy(), expected.detach().numpy())
        np.testing.assert_array_equal(np.signbit(got.detach().numpy()), np.signbit(expected.detach().numpy()))


@pytest.mark.parametrize("make", [lambda: tp.zeros(2, 3), lambda: tp.ones(4, dtype=tp.int64), lambda: tp.eye(3),
                                  lambda: tp.full((2,), -0.0), lambda: tp.empty(5, device=tp.ones(1).device),
                                  lambda: tp.zeros_like(tp.ones(2)), lambda: tp.ones(2, requires_grad=True)])
def test_factories_are_recorded_as_one_op_not_run(adaptive, make):
    make()  # (a first sighting is filled on the host: see the test below)
    before = _stats()["ops recorded"]
    t = make()
    assert type(t._raw) is _adaptive.Pending  # (no JAX dispatch of its own: it joins the segment)
    assert _stats()["ops recorded"] - before <= 2 and t.is_leaf


@contextlib.contextmanager
def _lowerings():
    """Counts the programs JAX lowers (compiles, or loads from the persistent cache) on this thread inside the
    block (not the compiler thread's work on segments seen before)."""
    seen, me = [], threading.get_ident()

    def listen(name, _secs, **_):
        if name == "/jax/core/compile/jaxpr_to_mlir_module_duration" and threading.get_ident() == me:
            seen.append(name)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


@pytest.mark.parametrize("on", [True, False])
def test_new_shapes_of_data_factories_and_host_draws_compile_nothing(on):
    """A program whose batches change shape at every step makes tensors of new shapes from NumPy data,
    factories and the CPU generator's draws: none of that compiles a program (each would cost tens of ms)."""
    rng = np.random.default_rng(0)
    was = tp.is_adaptive_eager_enabled()
    tp.set_adaptive_eager(on)
    try:
        for n in (1001 + on * 20 + k for k in range(3)):  # (shapes no other test uses)
            data = rng.normal(size=(n, 3)).astype(np.float32)
            with _lowerings() as lowered:
                made = [tp.tensor(data), tp.from_numpy(data), tp.as_tensor(data), tp.tensor(data, dtype=tp.float64),
                        tp.tensor(data.tolist()), tp.zeros(n, 3), tp.ones(n), tp.full((n, 2), 2.5),
                        tp.eye(n - 957, 11), tp.randn(n, 3), tp.rand(n), tp.randint(0, 9, (n,)), tp.randperm(n)]
            assert not lowered
            np.testing.assert_array_equal(made[0].numpy(), data)
            np.testing.assert_array_equal(made[3].numpy(), data.astype(np.float64))
            assert made[5].numpy().sum() == 0 and made[6].numpy().sum() == n
            assert (made[7].numpy() == 2.5).all() and made[7].dtype == tp.float32
            np.testing.assert_array_equal(made[8].numpy(), np.eye(n - 957, 11, dtype=np.float32))
            assert made[12].sort().values.tolist() == list(range(n))
            data[0, 0] = 99.0  # (the tensors hold copies)
            assert made[0][0, 0].item() != 99.0 and made[1][0, 0].item() != 99.0
    finally:
        tp.set_adaptive_eager(was)


def test_kept_aranges_are_separate_tensors(adaptive):
    a = tp.arange(6)
    a.add_(1)
    b = tp.arange(6)
    assert b.tolist() == list(range(6)) and a.tolist() == list(range(1, 7)) and a is not b
    assert tp.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert tp.arange(3, dtype=tp.float32).dtype == tp.float32 and tp.arange(3).dtype == tp.int64


def test_a_training_step_that_makes_tensors_every_step_runs_as_one_program(adaptive):
    w = tp.randn(3, 3, requires_grad=True)

    def step():
        h = tp.zeros(2, 3) + tp.full((3,), 0.5)  # made every step, as hidden states are
        loss = ((h @ w).tanh() + tp.ones(2, 3)).sum()
        loss.backward()
        return loss.item()

    for _ in range(5):  # (the backward joins the step's segment as one program from the graph's second sighting)
        step()
        _adaptive.wait_for_compiles()
    before = _stats()
    for _ in range(3):
        step()
    after = _stats()
    assert after["program hits"] - before["program hits"] == 3  # one program per step, factories inside it
    assert after["segments run"] - before["segments run"] == 3


def test_detaching_a_pending_tensor_runs_nothing_and_stays_an_alias(adaptive):
    x = tp.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 2
    before = _stats()["segments run"]
    d = y.detach()  # (as `loss.detach()` for logging, before the backward pass)
    assert _stats()["segments run"] == before and type(d._raw) is _adaptive.Pending
    assert not d.requires_grad and d.grad_fn is None and d._storage is y._storage and d._base is None
    d.add_(1.0)  # a write through the alias reaches the tensor it shares data with
    np.testing.assert_array_equal(y.detach().numpy(), [3.0, -3.0, 7.0])
    np.testing.assert_array_equal(d.numpy(), [3.0, -3.0, 7.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_a_pending_tensor_keeps_its_class_and_pytree_structure(adaptive):
    import jax

    x = tp.tensor([1.0, 2.0])
    y = x * 2  # pending
    assert type(y._raw) is _adaptive.Pending
    assert type(y) is tp.Tensor and jax.tree.structure(y) == jax.tree.structure(x)  # (a jitted call never retraces)
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(x).sum().backward()
    opt.step()  # the update is recorded: the parameters hold pending values
    assert type(model.weight._raw) is _adaptive.Pending
    assert type(model.weight) is nn.Parameter and type(model.weight.grad) is tp.Tensor
    assert jax.tree.structure(model.weight) == jax.tree.structure(nn.Parameter(tp.ones(1, 2)))
    np.testing.assert_allclose(y.numpy(), [2.0, 4.0])
    assert type(y) is tp.Tensor and type(y._raw) is not _adaptive.Pending


# -- donation: a program writes results into the buffers of inputs only the segment holds -------------------------------
def _sgd_steps(n, w, hold=None):
    """`n` momentum-SGD steps on `w` (each one a segment: the update reads and replaces `w` and its buffer);
    `hold(i, w)` may keep something of `w` before step `i`. Returns what it kept and the losses."""
    x = tp.linspace(-1, 1, 12).reshape(4, 3)
    buf = tp.zeros_like(w)
    kept, losses = [], []
    for i in range(n):
        if hold is not None:
            kept.append(hold(i, w))
        w.grad = None
        loss = ((x @ w).tanh() - 0.5).pow(2).mean()
        loss.backward()
        with tp.no_grad():
            buf.mul_(0.9).add_(w.grad)
            w.sub_(0.1 * buf)
        losses.append(loss.item())
        _adaptive.wait_for_compiles()
    return kept, losses


def _donating_programs():
    return [s.program for s in _adaptive._programs().values()
            if type(s.program) is _adaptive._Program and s.program.donate]


def test_a_repeated_update_donates_the_buffers_it_replaces(adaptive):
    w = tp.full((3, 2), 0.3, requires_grad=True)
    _, losses = _sgd_steps(8, w)
    tp.set_adaptive_eager(False)
    w_ref = tp.full((3, 2), 0.3, requires_grad=True)
    _, ref = _sgd_steps(8, w_ref)
    np.testing.assert_allclose(losses, ref, rtol=1e-6)
    np.testing.assert_allclose(w.detach().numpy(), w_ref.detach().numpy(), rtol=1e-6)
    assert _donating_programs(), "the update's segment should donate the old values of w and of its buffer"


@pytest.mark.parametrize("holder", ["to_jax", "detach", "numpy", "retained graph"])
def test_arrays_held_elsewhere_are_never_donated(adaptive, holder):
    def hold(i, w):
        if i < 5:
            return None
        if holder == "to_jax":
            return w.detach().numpy().copy(), tp.interop.to_jax(w)
        if holder == "detach":
            return w.detach().numpy().copy(), w.detach()
        if holder == "numpy":
            return w.detach().numpy().copy(), w.detach().numpy()
        return w.detach().numpy().copy(), (w * 3).sum()

    w = tp.full((3, 2), 0.3, requires_grad=True)
    kept, losses = _sgd_steps(8, w, hold)
    for i in range(5, 8):
        before, obj = kept[i]
        if holder == "detach":  # an alias: it shows the updates, as in PyTorch
            after = kept[i + 1][0] if i < 7 else w.detach().numpy()
            np.testing.assert_allclose(obj.numpy(), w.detach().numpy())
            assert not np.allclose(after, before)
        elif holder == "retained graph":
            g = w.grad.numpy().copy()
            obj.backward()
            np.testing.assert_allclose(w.grad.numpy(), g + 3.0, rtol=1e-6)
        else:
            np.testing.assert_array_equal(np.asarray(obj), before)  # intact (not a donated, deleted buffer)
    assert np.isfinite(losses).all()


_TWO_DEVICES = """
import os, sys
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
import jax
jax.config.update("jax_default_device", jax.devices()[1])  # (as on a GPU machine: the host is not the default)
import numpy as np
import tapeflow as tp

def program():
    tp.manual_seed(0)
    model = tp.nn.Linear(4, 3)
    opt = tp.optim.AdamW(model.parameters(), lr=0.1)
    losses = []
    for step in range(4):
        batch = [tp.tensor(np.arange(4.0) + i + step, dtype=tp.float32, device="cpu") for i in range(2)]  # host
        x = tp.stack(batch).to(model.weight.device)  # (stacked on the host, then moved, as a GPU program does)
        loss = (model(x) * tp.ones(3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.weight.tolist()

def placement():
    a = tp.ones(3) * 2  # on the default device
    b = tp.ones(3, device="cpu")  # on the host
    c = b + 1  # host only
    return [str(t.device) for t in (a, c, a * 3)]

tp.set_adaptive_eager(True)
adaptive = program(), placement()
tp.set_adaptive_eager(False)
print(adaptive[1], adaptive == (program(), placement()))
"""


def test_host_tensors_beside_the_default_device_run_as_op_by_op(tmp_path):
    """A segment runs on one device: an op reading a tensor committed elsewhere (a `from_numpy` host tensor on a
    GPU machine) runs op by op, with the same results, instead of failing in the segment's program."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _TWO_DEVICES], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "True", out.stdout  # (values and placement as op by op)


_DEFAULT_DEVICE = """
import os
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
import tapeflow as tp

before = (tp.get_default_device(), tp.arange(3), tp.ones(2) * 2.5)  # (made on the first device, and kept)
tp.set_default_device("cpu:1")
m = tp.nn.Linear(3, 2)
opt = tp.optim.Adam(m.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    loss = (m(tp.arange(3.0)) * 2.5).sum()
    loss.backward()
    opt.step()
after = [str(t.device) for t in (tp.ones(1), tp.arange(3), tp.ones(2) * 2.5, m.weight, loss)]
tp.set_default_device(None)
print(before[0], after, tp.get_default_device(), tp.arange(3).device)
"""


def test_set_default_device_moves_new_tensors_and_kept_constants():
    """`set_default_device` as PyTorch's: tensors made without a device, and the constants tapeflow keeps (small
    `arange`s, Python numbers as arrays), go to the new device; `None` goes back."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _DEFAULT_DEVICE], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[0] == "cpu ['cpu:1', 'cpu:1', 'cpu:1', 'cpu:1', 'cpu:1'] cpu cpu", out.stdout


def test_set_default_device_refuses_what_it_cannot_do():
    with pytest.raises(NotImplementedError, match="device='meta'"):
        tp.set_default_device("meta")
    tp.set_default_device(tp.get_default_device())  # (the device it is: nothing changes)
    assert tp.get_default_device() == tp.ones(1).device


def test_tensors_made_from_numpy_never_see_later_writes_to_it():
    """The host-to-device copy runs asynchronously: a write to the NumPy array right after must not reach
    the tensor. (`tensor` copies in PyTorch too; tapeflow's `as_tensor` and `from_numpy` copy as well, where
    PyTorch's share the array's memory: a JAX array's value never changes.)"""
    rng = np.random.default_rng(1)
    for k in range(100):
        data = rng.normal(size=(300 + k, 5)).astype(np.float32)
        expected = data.copy()
        made = [tp.tensor(data), tp.as_tensor(data), tp.from_numpy(data), tp.tensor(data, dtype=tp.float32)]
        data[...] = -1.0
        for t in made:
            np.testing.assert_array_equal(t.numpy(), expected)


_FILL_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float32", "float64", "bool", "complex64", "float16",
                "bfloat16"]


@pytest.mark.parametrize("dtype", _FILL_DTYPES)
def test_full_of_a_new_shape_fills_as_the_compiled_program_does(dtype):
    """A first sighting of a factory's shape is filled on the host, later ones by the compiled program: both
    convert the value alike (wrapping into unsigned dtypes, truncating into integer ones), as PyTorch does."""
    torch = pytest.importorskip("torch")
    for k, v in enumerate([-1, 7, 300, -129, 3.7, -2.5, True, 0.1, -0.0, 65504.0, 1e-8]):
        try:
            want = torch.full((2,), v, dtype=getattr(torch, dtype))
        except (RuntimeError, TypeError) as e:
            want = type(e)
        shape = (1201 + k + 40 * _FILL_DTYPES.index(dtype),)  # (new to this process: filled on the host first)
        for _ in range(2):  # (the host fill, then the compiled program)
            if isinstance(want, type):
                with pytest.raises(want):
                    tp.full(shape, v, dtype=getattr(tp, dtype))
                continue
            got = tp.full(shape, v, dtype=getattr(tp, dtype))
            assert got[:2].tolist() == want.tolist()
            assert [math.copysign(1, complex(z).real) for z in got[:2].tolist()] == \
                [math.copysign(1, complex(z).real) for z in want.tolist()]
