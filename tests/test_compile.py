"""tp.compile: a whole eager step as one XLA program, with eager semantics for lifted state."""

import types

import jax
import numpy as np
import pytest

import tapeflow as tp


def _params(seed=0, dtype=tp.float32):
    tp.manual_seed(seed)
    return [tp.randn(4, 8, dtype=dtype, requires_grad=True), tp.randn(8, 2, dtype=dtype, requires_grad=True)]


def _mlp(params, x, p_drop=0.0):
    h = (x @ params[0]).relu()
    if p_drop:
        h = h * (tp.rand(h.shape) > p_drop).float() / (1 - p_drop)
    return h @ params[1]


def make_sgd_step(params, lr=0.1, momentum=0.9, p_drop=0.25):
    bufs = [None] * len(params)

    def step(x, y):
        for p in params:
            p.grad = None
        loss = ((_mlp(params, x, p_drop) - y) ** 2).mean()
        loss.backward()
        with tp.no_grad():
            for i, p in enumerate(params):
                if bufs[i] is None:
                    bufs[i] = p.grad.clone()
                else:
                    bufs[i].mul_(momentum).add_(p.grad)
                p.sub_(lr * bufs[i])
        return loss

    return step, bufs


def make_adam_step(params, lr=0.05, b1=0.9, b2=0.99, eps=1e-8):
    st = {"t": tp.zeros(()), "m": [tp.zeros_like(p) for p in params], "v": [tp.zeros_like(p) for p in params]}

    def step(x, y):
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
        loss = ((_mlp(params, x) - y) ** 2).mean()
        loss.backward()
        with tp.no_grad():
            st["t"].add_(1)
            for p, m, v in zip(params, st["m"], st["v"]):
                m.mul_(b1).add_((1 - b1) * p.grad)
                v.mul_(b2).add_((1 - b2) * p.grad * p.grad)
                mh = m / (1 - b1 ** st["t"])
                vh = v / (1 - b2 ** st["t"])
                p.sub_(lr * mh / (vh.sqrt() + eps))
        return {"loss": loss, "tag": "adam"}

    return step, st


def _data(n=16):
    tp.manual_seed(123)
    return tp.randn(n, 4), tp.randn(n, 2)


@pytest.mark.parametrize("kind", ["sgd_momentum_dropout", "adam"])
def test_compiled_step_equals_eager_step_for_step(kind):
    x, y = _data()
    results = []
    for compiled in (False, True):
        params = _params()
        step, _ = make_sgd_step(params) if kind.startswith("sgd") else make_adam_step(params)
        run = tp.compile(step) if compiled else step
        tp.manual_seed(7)
        losses = []
        for _ in range(4):
            out = run(x, y)
            losses.append((out["loss"] if isinstance(out, dict) else out).item())
        results.append((losses, [p.detach().numpy().copy() for p in params], [p.grad.numpy() for p in params]))
        if compiled:
            assert all(p.is_leaf and p.requires_grad for p in params)
            assert run.traces <= 2
    (l0, p0, g0), (l1, p1, g1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    for a, b in zip(p0 + g0, p1 + g1):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_same_objects_updated_and_rng_advanced():
    params = _params()
    ids = [id(p) for p in params]
    step, bufs = make_sgd_step(params)
    cstep = tp.compile(step)
    x, y = _data()
    key0 = np.asarray(tp.get_rng_state())
    cstep(x, y)
    cstep(x, y)
    assert [id(p) for p in params] == ids
    assert all(b is not None and isinstance(b._data, type(params[0]._data)) for b in bufs)
    assert not np.array_equal(np.asarray(tp.get_rng_state()), key0)


def test_retrace_rules_and_python_side_effects():
    w = tp.ones(3, requires_grad=True)
    calls = []

    @tp.compile
    def f(x, scale):
        calls.append(1)  # Python runs only while tracing
        return ((w * x).sum() * scale).detach()  # (a result with history would run eagerly: see below)

    assert f(tp.ones(3), 2).item() == 6.0
    assert f(tp.full((3,), 2.0), 2).item() == 12.0
    assert len(calls) == 1 and f.traces == 1
    f(tp.ones(3), 3)  # new static value
    f(tp.ones(3, dtype=tp.float64), 3)  # new dtype
    assert f.traces == 3
    w.data = tp.ones(3) * 2  # new value of lifted state: no retrace, new result
    assert f(tp.ones(3), 3).item() == 18.0 and f.traces == 3
    w.grad = tp.zeros(3)  # grad presence is part of the signature
    f(tp.ones(3), 3)
    assert f.traces == 4


def test_inplace_on_arguments_and_output_structure():
    @tp.compile
    def f(acc, x):
        acc.add_(x)
        return acc.sum(), [x * 2, None, "label"]

    acc = tp.zeros(2)
    for _ in range(3):
        total, rest = f(acc, tp.ones(2))
    assert acc.tolist() == [3.0, 3.0] and total.item() == 6.0
    assert rest[0].tolist() == [2.0, 2.0] and rest[1] is None and rest[2] == "label"


def test_state_found_only_while_tracing_is_lifted():
    w = tp.tensor([1.0, 2.0], requires_grad=True)
    holder = types.SimpleNamespace(inner=types.SimpleNamespace(w=w))  # too deep for the closure walk

    @tp.compile
    def step():
        t = holder.inner.w
        t.grad = None
        (t * t).sum().backward()
        with tp.no_grad():
            t.sub_(0.25 * t.grad)

    step()
    step()
    assert w.tolist() == [0.25, 0.5] and w.grad.tolist() == [1.0, 2.0]


def test_method_decorator_and_unhashable_static_argument():
    class Model:
        def __init__(self):
            self.w = tp.ones(2, requires_grad=True)

        @tp.compile
        def forward(self, x):
            return (self.w * x).sum()

    a, b = Model(), Model()
    b.w = tp.full((2,), 3.0, requires_grad=True)
    assert a.forward(tp.ones(2)).item() == 2.0 and b.forward(tp.ones(2)).item() == 6.0
    with pytest.raises(TypeError, match="hashable"):
        tp.compile(lambda x, opts: x)(tp.ones(1), {1, 2})


def test_errors_inside_the_function_leave_state_untouched():
    w = tp.tensor([1.0, 2.0], requires_grad=True)
    calls = {"n": 0}

    @tp.compile(fullgraph=True)
    def bad(x):
        calls["n"] += 1
        loss = (w * x).sum()
        loss.backward()
        with tp.no_grad():
            w.sub_(w.grad)
        if loss.item() > 0:  # a host read of a traced value
            return loss
        return loss

    with pytest.raises(RuntimeError, match="concrete value"):
        bad(tp.ones(2))
    assert w.tolist() == [1.0, 2.0] and w.grad is None and not isinstance(w._data, jax.core.Tracer)
    assert bad.traces == 0


def test_compiled_method_does_not_keep_its_instance_alive():
    import gc
    import weakref

    class Scaler:
        def __init__(self):
            self.w = tp.full((2,), 2.0)

        @tp.compile
        def __call__(self, x):
            return self.w * x

    s = Scaler()
    assert s(tp.ones(2)).tolist() == [2.0, 2.0]
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None



def _same_objects(xs, ys):
    return len(xs) == len(ys) and all(a is b for a, b in zip(xs, ys))


# -- what a call returns and what it skips ---------------------------------------------------------------------------
def test_untouched_state_keeps_its_arrays():
    w = tp.tensor([1.0, 2.0], requires_grad=True)
    w.grad = tp.tensor([0.5, 0.5])
    frozen = tp.tensor([3.0, 4.0])
    alias = frozen.detach()

    @tp.compile
    def f(x):
        return (w * x).sum() + (frozen * x).sum()

    x = tp.ones(2)
    f(x)
    held = [w._data, w.grad, w.grad._data, frozen._data, x._data]
    key = np.asarray(tp.get_rng_state())
    assert f(x).item() == 10.0
    # Nothing was written: the same arrays (no copies made by the program), the same grad object.
    assert _same_objects([w._data, w.grad, w.grad._data, frozen._data, x._data], held)
    assert np.array_equal(np.asarray(tp.get_rng_state()), key)
    assert alias.tolist() == [3.0, 4.0] and not isinstance(alias._data, jax.core.Tracer)


def test_grads_kept_cleared_or_replaced_as_eager_code_sets_them():
    a, b, c = (tp.tensor([1.0, 2.0], requires_grad=True) for _ in range(3))
    for t in (a, b, c):
        t.grad = tp.tensor([9.0, 9.0])
    kept = a.grad

    @tp.compile
    def f():
        b.grad = None
        (a * c).sum().backward()  # accumulates into a.grad and c.grad

    f()
    assert b.grad is None and a.grad is kept
    assert a.grad.tolist() == [10.0, 11.0] and c.grad.tolist() == [10.0, 11.0]

    @tp.compile
    def g():
        return (a * 2).sum()

    g()
    before = [a.grad, a.grad._data, c.grad._data]
    g()
    assert _same_objects([a.grad, a.grad._data, c.grad._data], before)


def test_donated_state_is_still_written_back_when_untouched():
    w = tp.tensor([1.0, 2.0])
    v = tp.tensor([1.0, 1.0], requires_grad=True)

    @tp.compile(donate_state=True)
    def f(x):
        with tp.no_grad():
            v.add_(x)
        return (w * x).sum()

    for _ in range(3):
        assert f(tp.ones(2)).item() == 3.0
    assert w.tolist() == [1.0, 2.0] and v.tolist() == [4.0, 4.0]


# -- reusing the last call's discovery: changes between calls are still seen -----------------------------------------
def _compiled_sgd_step(m, opt):
    """A compiled training step of `m` on `sum(m(x))` with `opt`."""
    @tp.compile
    def step(x):
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()

    return step


def test_steady_state_calls_do_not_walk_the_state(state_walks):
    m = tp.nn.Linear(3, 2)
    opt = tp.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

    step = _compiled_sgd_step(m, opt)
    x = tp.ones(4, 3)
    for _ in range(3):
        step(x)
    state_walks["n"] = 0
    for _ in range(3):
        step(x)
    assert state_walks["n"] == 0 and step.traces == 2


def test_replaced_parameter_between_calls_is_used():
    m = tp.nn.Linear(2, 1, bias=False)
    f = tp.compile(lambda x: m(x).sum().detach())
    x = tp.ones(1, 2)
    f(x)
    f(x)
    old = m.weight
    m.weight = tp.nn.Parameter(tp.full((1, 2), 5.0))
    assert f(x).item() == 10.0 and f.traces == 2  # the new parameter is lifted (a new trace)
    import gc
    import weakref

    ref = weakref.ref(old)
    del old
    gc.collect()
    assert ref() is None  # nothing kept the replaced parameter alive


def test_containers_changed_between_calls_are_seen():
    ws = [tp.ones(2)]
    named = {"a": tp.ones(2)}
    shared = [tp.ones(2)]
    holder = {"first": shared, "second": shared}

    @tp.compile
    def f():
        total = sum(w.sum() for w in ws) + named["a"].sum()
        return total + holder["first"][0].sum() + holder["second"][0].sum()

    assert f().item() == 8.0
    assert f().item() == 8.0
    ws.append(tp.full((2,), 2.0))  # a new tensor in a closed-over list
    assert f().item() == 12.0
    named["a"] = tp.full((2,), 3.0)  # a replaced entry
    assert f().item() == 16.0
    holder["second"] = [tp.full((2,), 4.0)]  # one of two references to a shared list replaced
    assert f().item() == 22.0
    ws[0].data = tp.zeros(3)  # a new shape: traced again
    assert f().item() == 20.0


def test_hyperparameters_changed_between_calls_are_seen():
    m = tp.nn.Linear(2, 1)
    opt = tp.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    opt.param_groups[0]["tags"] = ["a"]  # a setting that can change in place

    step = _compiled_sgd_step(m, opt)
    x = tp.ones(1, 2)
    for _ in range(3):
        step(x)
    assert step.traces == 2
    opt.param_groups[0]["lr"] = 0.05  # a program input: no new trace
    step(x)
    assert step.traces == 2
    opt.param_groups[0]["momentum"] = 0.5
    step(x)
    assert step.traces == 3
    opt.param_groups[0]["tags"].append("b")
    step(x)
    assert step.traces == 4
    m.eval()
    step(x)
    assert step.traces == 5


def test_learning_rate_change_between_calls_is_applied():
    w = tp.tensor([1.0], requires_grad=True)
    opt = tp.optim.SGD([w], lr=0.5)

    @tp.compile
    def step():
        opt.zero_grad()
        (w * 2).sum().backward()
        opt.step()

    step()
    step()
    assert w.tolist() == [-1.0]
    opt.param_groups[0]["lr"] = 0.25
    step()
    assert w.tolist() == [-1.5] and step.traces == 2


def test_tensor_flags_and_module_tree_changed_between_calls_are_seen():
    seq = tp.nn.Sequential(tp.nn.Linear(2, 2))
    w = tp.tensor([1.0, 1.0], requires_grad=True)

    @tp.compile
    def f(x):
        out = seq(x).sum() + (w * x).sum()
        if w.requires_grad:
            out = out + 100.0
        return out

    x = tp.ones(1, 2)
    f(x)
    f(x)
    base = f(x).item()
    w.requires_grad_(False)
    assert f(x).item() == pytest.approx(base - 100.0, abs=1e-4)
    extra = tp.nn.Linear(2, 2)
    with tp.no_grad():
        extra.weight.fill_(0.0)
        extra.bias.fill_(1.0)
    seq.append(extra)  # a new submodule: its parameters are lifted
    assert f(x).item() == pytest.approx(2.0 + 2.0)
    with tp.no_grad():
        extra.bias.fill_(2.0)
    assert f(x).item() == pytest.approx(4.0 + 2.0)


def test_changes_deep_in_the_module_tree_between_calls_are_seen():
    inner = tp.nn.Sequential(tp.nn.Linear(2, 2), tp.nn.Dropout(0.5))
    model = tp.nn.Sequential(tp.nn.Sequential(inner))

    @tp.compile
    def f(x):
        return model(x).sum()

    def set_linear(lin, weight, bias):
        with tp.no_grad():
            lin.weight.fill_(weight)
            lin.bias.fill_(bias)

    set_linear(inner[0], 1.0, 0.0)
    x = tp.ones(1, 2)
    model.eval()
    assert [f(x).item() for _ in range(3)] == [4.0] * 3
    inner[1].train()  # a grandchild's training flag: dropout now zeroes or doubles each value
    seen = {f(x).item() for _ in range(20)}
    assert seen <= {0.0, 4.0, 8.0} and len(seen) > 1  # (all twenty 4.0: one chance in a million)
    inner[1].eval()
    assert f(x).item() == 4.0
    replacement = tp.nn.Parameter(tp.full((2, 2), 2.0))
    inner[0]._parameters["weight"] = replacement  # straight into the dict, not through setattr
    assert f(x).item() == 8.0
    new_linear = tp.nn.Linear(2, 2)
    set_linear(new_linear, 0.0, 3.0)
    inner[0] = new_linear  # a grandchild replaced
    assert f(x).item() == 6.0


def test_results_of_a_stale_program_are_dropped_with_the_random_state():
    def run(compiled):
        ws = [tp.ones(2)]

        def f():
            return ws[0] * tp.rand(2)

        g = tp.compile(f) if compiled else f
        tp.manual_seed(5)
        outs = [g().tolist(), g().tolist()]
        old = ws[0]  # alive, so the last call's program can run on it; its results must not be kept
        ws[0] = tp.full((2,), 3.0)
        outs += [g().tolist(), g().tolist()]
        assert old.tolist() == [1.0, 1.0]
        return outs, np.asarray(tp.get_rng_state())

    (eager, key_eager), (compiled, key_compiled) = run(False), run(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-6)
    np.testing.assert_array_equal(key_compiled, key_eager)


def test_a_forward_whose_results_need_history_runs_eagerly_and_stays_differentiable():
    torch_like = tp.nn.Linear(3, 2)
    model = tp.compile(torch_like)  # `torch.compile(model)`: an OptimizedModule around it
    assert isinstance(model, tp.nn.Module) and model._orig_mod is torch_like and model.in_features == 3
    assert list(model.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert [n for n, _ in model.named_parameters()] == ["_orig_mod.weight", "_orig_mod.bias"]
    x = tp.ones(4, 3)
    for _ in range(2):
        y = model(x)
        assert y.grad_fn is not None  # the caller differentiates it
        y.sum().backward()
    np.testing.assert_allclose(torch_like.weight.grad.numpy(), np.full((2, 3), 8.0))
    with tp.no_grad():
        out = model(x)  # no history needed: one compiled program
    np.testing.assert_allclose(out.numpy(), torch_like(x).detach().numpy(), rtol=1e-6)
    assert model._compiled.traces == 1
    model.eval()
    assert not torch_like.training


def test_module_compile_compiles_the_call_in_place():
    """`model.compile()` (PyTorch's `Module.compile`): the module stays itself (its state_dict keys, its type),
    its hooks run inside the program, a result that needs history stays differentiable, and a copy runs
    eagerly."""
    import copy

    model = tp.nn.Sequential(tp.nn.Linear(3, 4), tp.nn.Tanh(), tp.nn.Linear(4, 2))
    x = tp.ones(5, 3)
    ref = model(x).detach()
    calls = []
    model[1].register_forward_hook(lambda m, args, out: calls.append(1))
    assert model.compile() is None
    assert type(model) is tp.nn.Sequential and list(model.state_dict())[0] == "0.weight"
    with tp.no_grad():
        for _ in range(3):
            np.testing.assert_allclose(model(x).numpy(), ref.numpy(), rtol=1e-6)
    assert model._compiled_call_impl.traces == 1 and len(calls) == 1  # the hook ran while tracing only
    y = model(x)
    assert y.grad_fn is not None
    y.sum().backward()
    assert model[0].weight.grad.shape == (4, 3)
    twin = copy.deepcopy(model)
    assert twin._compiled_call_impl is None
    np.testing.assert_allclose(twin(x).detach().numpy(), ref.numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="unexpected keyword"):
        model.compile(bogus=1)


def test_a_trace_that_fails_runs_eagerly_unless_fullgraph():
    seen = []

    def f(x):
        seen.append(1)
        if x.sum().item() > 0:  # data-dependent Python: a graph break
            return x * 2
        return x * 3

    lenient = tp.compile(f)
    with pytest.warns(UserWarning, match="runs eagerly"):
        assert lenient(tp.ones(2)).tolist() == [2.0, 2.0]
    assert lenient(-tp.ones(2)).tolist() == [-3.0, -3.0]
    with pytest.raises(RuntimeError, match="concrete value"):
        tp.compile(f, fullgraph=True)(tp.ones(2))
    tp.manual_seed(0)
    expected = tp.rand(3)

    def draws(x):
        noise = tp.rand(3)
        return x + noise if x.sum().item() > 0 else x - noise

    tp.manual_seed(0)
    with pytest.warns(UserWarning, match="runs eagerly"):
        got = tp.compile(draws)(tp.zeros(3) + 1)  # the failed trace's draws are undone: eager numbers
    np.testing.assert_allclose(got.numpy(), (expected + 1).numpy())
