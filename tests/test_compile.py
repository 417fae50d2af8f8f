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
        return (w * x).sum() * scale

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

    @tp.compile
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
