"""The staging layer's policy, the same on every path that turns eager code into a program."""

import types
import warnings

import numpy as np
import pytest

import tapeflow as tp
import tapeflow.autograd.functional as AF
import tapeflow.func as F


def t(x):
    return tp.tensor(x, dtype=tp.float64)


def _paths(f):
    """Ways to run `f(x) -> scalar` as a staged program, each returning the gradient at `x`."""
    def compiled(x):
        x = x.detach().requires_grad_()
        return _compiled_grad(x)

    _compiled_grad = tp.compile(lambda x: tp.autograd.grad(f(x), x)[0])
    return {"tp.func.grad": F.grad(f), "functional.vjp": lambda x: AF.vjp(f, x)[1], "tp.compile": compiled}


@pytest.mark.parametrize("path", ["tp.func.grad", "functional.vjp", "tp.compile"])
def test_python_values_the_function_reads_are_part_of_the_key(path):
    scale = 2.0

    def f(x):
        return (x * scale).sum()

    run = _paths(f)[path]
    x = t([1.0, 2.0])
    for _ in range(3):
        assert run(x).tolist() == [2.0, 2.0]
    scale = 3.0  # rebinding the closure cell: a trace would have baked 2.0 in
    for _ in range(3):
        assert run(x).tolist() == [3.0, 3.0]


def test_attributes_of_self_are_part_of_the_key():
    class Scaled:
        def __init__(self):
            self.factor = 2.0
            self.w = t([1.0, 1.0])

        @tp.compile
        def forward(self, x):
            return (self.w * x * self.factor).sum()

    m = Scaled()
    x = t([1.0, 2.0])
    assert m.forward(x).item() == 6.0
    m.factor = 0.5
    assert m.forward(x).item() == 1.5


@pytest.mark.parametrize("path", ["tp.func.grad", "functional.vjp", "tp.compile"])
def test_state_out_of_the_walks_reach_is_never_served_stale(path):
    w = t([1.0, 2.0])
    holder = types.SimpleNamespace(inner=types.SimpleNamespace(deeper=types.SimpleNamespace(w=w)))

    def f(x):
        return (x * holder.inner.deeper.w).sum()  # too deep for the walk over the closure

    run = _paths(f)[path]
    x = t([1.0, 1.0])
    for k in range(1, 5):
        with tp.no_grad():
            w.copy_(t([k, -k]))
        assert run(x).tolist() == [k, -k]


def test_repeated_retraces_warn_and_name_what_changed():
    f = tp.compile(lambda x, n: x * n)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(20):
            f(tp.ones(2), n)  # a new static value every call: a new trace every call
    messages = [str(w.message) for w in caught if "traced" in str(w.message)]
    assert len(messages) == 1 and "16 times" in messages[0] and "arguments" in messages[0]
    assert f.traces == 20


def test_cache_is_bounded():
    f = tp.compile(lambda x, n: x * n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(100):
            f(tp.ones(1), n)
    assert len(f.programs) <= f.programs.size
    assert f(tp.ones(1), 99).item() == 99.0


def test_every_path_threads_random_draws_like_eager_code():
    nn = tp.nn
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 1)).double()
    x = tp.randn(4, dtype=tp.float64)

    def loss(x):
        return model(x).sum()

    def eager(x):
        x = x.detach().requires_grad_()
        return tp.autograd.grad(loss(x), x)[0]

    runs = {"eager": eager, **_paths(loss)}
    results = {}
    for name, run in runs.items():
        tp.manual_seed(1)
        results[name] = np.stack([run(x).numpy() for _ in range(4)])
    for name, r in results.items():
        np.testing.assert_allclose(r, results["eager"], rtol=1e-12, err_msg=name)
    assert len({tuple(row) for row in results["eager"]}) > 1  # dropout masks differ from call to call


def test_compiled_backward_is_the_engines_pass():
    from tapeflow.autograd import _engine_compiled as backward

    w = t([[0.5, -1.0], [2.0, 0.25]]).requires_grad_()
    before = backward._programs.traces
    for step in range(4):
        x = t([[1.0 + step, 2.0], [3.0, -1.0]])
        w.grad = None
        ((x @ w).relu() * 3).sum().backward()
        expected = (x.T @ ((x @ w) > 0).double() * 3)
        np.testing.assert_allclose(w.grad.numpy(), expected.numpy(), rtol=1e-12)
    assert backward._programs.traces == before + 1  # compiled on the second sighting, reused after


def test_a_compiled_backward_keeps_no_model_alive_and_serves_the_next_one():
    """The program of a graph structure outlives the graph it was made from: it must not keep that graph's
    leaves (a dropped model's parameters) alive, and a later model of the same structure gets its own
    gradients from it."""
    import gc
    import weakref

    from tapeflow.autograd import _engine_compiled as backward

    def train(seed, node_by_node=False):
        tp.manual_seed(seed)
        m = tp.nn.Sequential(tp.nn.Linear(3, 5), tp.nn.Tanh(), tp.nn.Linear(5, 1))
        opt = tp.optim.SGD(m.parameters(), lr=0.1)
        x = tp.randn(7, 3)
        for _ in range(4):
            opt.zero_grad()
            loss = m(x).pow(2).mean()
            if node_by_node:
                loss.register_hook(lambda g: g)  # (a hooked graph never runs as a program)
            loss.backward()
            opt.step()
        return m, [p.grad.numpy().copy() for p in m.parameters()]

    before = backward._programs.traces
    first, _ = train(0)
    assert backward._programs.traces > before  # (the structure runs as a program)
    ref = weakref.ref(first[0].weight)
    del first
    gc.collect()
    assert ref() is None
    traces = backward._programs.traces
    _, grads = train(1)  # the same structure: the program made from the dropped model's graph
    assert backward._programs.traces == traces
    _, expected = train(1, node_by_node=True)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


def test_a_staged_function_is_not_state_of_itself(state_walks):
    """A global named like an attribute the function uses (`opt.step()`) may be the compiled function
    itself: its caches must not be walked as state (each call would then walk everything again)."""
    m = tp.nn.Linear(3, 1)
    opt = tp.optim.SGD(m.parameters(), lr=0.1)
    scope = {"tp": tp, "m": m, "opt": opt}
    exec("def step(x):\n    opt.zero_grad()\n    m(x).sum().backward()\n    opt.step()\n", scope)
    scope["step"] = step = tp.compile(scope["step"])
    x = tp.ones(2, 3)
    for _ in range(3):
        step(x)
    state_walks["n"] = 0
    for _ in range(3):
        step(x)
    assert state_walks["n"] == 0


_WRITERS = {
    "tp.func.grad": lambda f, x: F.grad(f)(x),
    "tp.func.jacrev": lambda f, x: F.jacrev(f)(x),
    "tp.func.hessian": lambda f, x: F.hessian(f)(x),
    "tp.func.vjp": lambda f, x: F.vjp(f, x)[0],
    "tp.func.jvp": lambda f, x: F.jvp(f, (x,), (tp.ones_like(x),))[0],
    "functional.vjp": lambda f, x: AF.vjp(f, x)[1],
    "tp.compile": None,
}


@pytest.mark.parametrize("path", list(_WRITERS))
def test_writes_to_captured_state_under_a_transform_keep_eager_values(path):
    # A captured buffer and a view of it (its base is not named by the function) are written in place with
    # values computed from the transformed input: uncached first call, compiled later calls and eager code
    # leave the same numbers, with no tracer left behind.
    buf = tp.zeros(3, dtype=tp.float64)
    tail = buf[1:]
    count = tp.zeros((), dtype=tp.float64)

    def f(x):
        tail.add_(x[:2] * 2)
        count.add_(x.sum())
        return (x * x).sum()

    compiled = tp.compile(f)
    run = _WRITERS[path] or (lambda f, x: compiled(x))
    x = t([1.0, 2.0, 3.0])
    for step in range(1, 4):
        run(f, x)
        np.testing.assert_allclose(buf.numpy(), [0.0, 2.0 * step, 4.0 * step], err_msg=path)
        np.testing.assert_allclose(tail.numpy(), buf.numpy()[1:])
        assert count.item() == 6.0 * step
        assert buf.grad_fn is None and count.grad_fn is None


def test_a_vmapped_write_to_captured_state_raises_and_keeps_the_old_value():
    buf = tp.zeros(2)

    def f(x):
        buf.add_(x)
        return x.sum()

    with pytest.raises(RuntimeError, match=r"vmap: the function modified a tensor it captures \(shape \[2\]\)"):
        F.vmap(f)(tp.ones(3, 2))
    assert buf.tolist() == [0.0, 0.0]
    buf.add_(1.0)  # no tracer left behind
    assert buf.tolist() == [1.0, 1.0]
