"""Saved-tensor hooks, `grad_fn._saved_*`, gradient edges and multi-tensor hooks, against PyTorch.

Each scenario runs the same code on a module `m` (tapeflow, and PyTorch when installed) and returns what it
observed: gradients, the order and arguments of hook calls, and the class and text of errors."""

import numpy as np
import pytest

import tapeflow as tp


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and text are what is compared
        return type(e).__name__, str(e).replace("torch.", "tapeflow.")
    return None


def _vals(t):
    """The values to 6 significant digits (float32 libraries may differ in the last ulp: 436.78522 against
    436.78519 is one ulp)."""
    if t is None:
        return None
    return [float(f"{v:.6g}") for v in np.asarray(t.detach().tolist(), dtype=np.float64).ravel()]


def _x(m):
    return m.tensor([0.5, -1.0, 2.0], requires_grad=True)


def default_hooks_pack_each_saved_tensor(m):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), t.requires_grad, m.is_grad_enabled()))
        return t * 1  # runs without grad: saves nothing, never re-enters the hook

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    x = _x(m)
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        w = ((x * x).exp() * 2).sum()  # mul saves both inputs, exp its result, a scalar multiple nothing
        q = x.pow(2)
    w.backward(retain_graph=True)
    return [_vals(x.grad), log, _vals(q)]


def double_backward_through_unpacked_tensors(m):
    x = _x(m)
    with m.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = x.sin() * x
        z = x.pow(3)
    (g,) = m.autograd.grad(y.sum() + z.sum(), x, create_graph=True)
    g.sum().backward()
    return [_vals(g), _vals(x.grad)]


def hooks_may_store_anything(m):
    x = _x(m)
    store = {}

    def pack(t):
        key = len(store)
        store[key] = t.detach().tolist()
        return key

    with m.autograd.graph.saved_tensors_hooks(pack, lambda k: m.tensor(store[k])):
        y = (x.exp() * x.tanh()).sum()
    y.backward()
    return [_vals(x.grad), len(store)]


def only_the_innermost_hooks_apply(m):
    seen = []
    x = _x(m)
    with m.autograd.graph.saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with m.autograd.graph.saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda t: t):
            y = x.exp()
        z = x.cos()
    (y + z).sum().backward()
    return [seen, _vals(x.grad)]


def custom_function_saved_tensors(m):
    log = []

    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y / x

    x = _x(m)
    with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t):
        out = Scale.apply(x)
    out.sum().backward()
    return [log, _vals(x.grad)]


def save_on_cpu_gives_the_same_gradients(m):
    x = _x(m)
    with m.autograd.graph.save_on_cpu():
        y = (x.exp() * x).sum()
    y.backward()
    return _vals(x.grad)


def hook_errors(m):
    G = m.autograd.graph
    x = _x(m)
    out = []

    def nested():
        with G.disable_saved_tensors_hooks("saved-tensor hooks are not allowed here"):
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    out.append(_error(nested))
    with G.saved_tensors_hooks(lambda t: t, lambda t: 1):
        y = x * x
    out.append(_error(lambda: y.sum().backward()))
    a, b = m.ones(3), m.ones(3, requires_grad=True)

    def modifying_pack():
        with G.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            a * b

    out.append(_error(modifying_pack))
    return out


def saved_attributes(m):
    x = _x(m)
    y = x.exp()
    z = x * x
    b = m.ones(3)
    s = x * b
    w = x.sin()
    w.sum().backward()
    c = x.clone()
    d = c * c
    c.add_(1)
    return [y.grad_fn._saved_result is y, y.grad_fn._saved_result.grad_fn is y.grad_fn,
            _vals(y.grad_fn._saved_result), z.grad_fn._saved_self is x, z.grad_fn._saved_other is x,
            s.grad_fn._saved_other is b, s.grad_fn._saved_self,
            list(m.mm(x[None], x[:, None]).grad_fn._saved_mat2.shape),
            _error(lambda: w.grad_fn._saved_self), _error(lambda: z.grad_fn._saved_foo),
            _error(lambda: d.grad_fn._saved_self)[0]]


def raw_saved_tensor_hooks(m):
    x = _x(m)
    out = []
    y = x.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t * 2, lambda t: t)
    y.sum().backward()
    out.append(_vals(x.grad))
    x.grad = None
    p = x.pow(2)
    raw = p.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t * 3, lambda t: t)
    out.append(_error(lambda: raw.register_hooks(lambda t: t, lambda t: t)))
    p.sum().backward()
    out.append(_vals(x.grad))
    out.append(_error(lambda: p.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)))
    out.append(_error(lambda: x.cos().grad_fn._raw_saved_self.register_hooks(1, lambda t: t))[0])

    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * t

    x.grad = None
    o = Twice.apply(x)
    o.grad_fn._raw_saved_tensors[0].register_hooks(lambda t: t * 10, lambda t: t)
    o.sum().backward()
    out.append(_vals(x.grad))
    return out


def multi_grad_hooks(m):
    G = m.autograd.graph
    a, b = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
    seen = []
    h = G.register_multi_grad_hook((a, b), lambda gs: seen.append(("all", [_vals(g) for g in gs])))
    h2 = G.register_multi_grad_hook((a, b), lambda g: seen.append(("any", _vals(g))), mode="any")
    (a * 2 + b * 3).sum().backward()
    (a * 5).sum().backward()
    h.remove()
    h2.remove()
    (a * 2 + b * 3).sum().backward()
    return [seen, _error(lambda: G.register_multi_grad_hook((a,), print, mode="some"))]


def gradient_edges(m):
    G = m.autograd.graph
    a = _x(m)
    y = a * 3
    e = G.get_gradient_edge(y)
    ea = G.get_gradient_edge(a)
    out = [e.node.name(), e.output_nr, type(e).__name__]
    z = (y * y).sum()
    out.append([_vals(g) for g in m.autograd.grad(z, e, retain_graph=True)])
    out.append([_vals(g) for g in m.autograd.grad(z, [ea, e])])
    out.append(_error(lambda: G.get_gradient_edge(m.ones(2))))
    out.append(_error(lambda: m.autograd.grad((a * a).sum(), [ea], materialize_grads=True)))
    (a * a).sum().backward(inputs=[ea])
    out.append(_vals(a.grad))
    c = a.clone()
    q = c * c
    G.increment_version(c)
    out.append(_error(lambda: q.sum().backward())[0])
    return out


def default_hooks_take_over_version_checks(m):
    G = m.autograd.graph
    a = _x(m)
    b = a.clone()
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (b * b).sum()
        e = a.exp()
        s = (e * 1).sum()
    b.mul_(5)  # the hooks returned b itself: backward reads its new value, unchecked
    y.backward()
    out = [_vals(a.grad)]
    with m.no_grad():
        e.mul_(2)
    s.backward()
    out.append(_vals(a.grad))
    c = a.clone()
    z = (c * c).sum()
    z.grad_fn.next_functions[0][0]._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    c.mul_(3)  # hooks registered on one saved tensor keep its version check
    out.append(_error(lambda: z.backward())[0])
    return out


def mutation_on_saved_tensors(m):
    G = m.autograd.graph
    out = []
    with G.allow_mutation_on_saved_tensors():
        a = _x(m)
        b = a.clone()
        y = (b ** 2).sum()
        b.sin_()
        y.backward()
        out += [_vals(a.grad), _vals(b)]
        a.grad = None
        c = a.clone()
        v = c[:2]
        y = (v.exp() * c[1:].sum()).sum()
        c.mul_(3)  # a write through the base: the view saved by exp keeps its value too
        y.backward()
        out.append(_vals(a.grad))

        def nested():
            with G.allow_mutation_on_saved_tensors():
                pass

        out.append(_error(nested))
        d = a.clone()
        z = (d * d).sum()
    out.append(_error(lambda: z.backward())[0])
    return out


def mutation_context_bookkeeping(m):
    G = m.autograd.graph

    def cloned(ctx):
        return len(list(ctx.cloned.items()))

    out = []
    with G.allow_mutation_on_saved_tensors() as ctx:
        a = m.randn(2, 3, requires_grad=True).clone()
        y = (a ** 2).sum()
        out.append((len(list(ctx.tid_to_weakhandle.items())), cloned(ctx)))
        y.backward()
        a.sin_()  # nothing saved any more: nothing to keep
        out.append(cloned(ctx))
        y = (a ** 2).sum()
        a.sin_()
        out.append(cloned(ctx))
        del y  # the graph is gone, and with it the kept value
        out.append(cloned(ctx))
    with G.allow_mutation_on_saved_tensors() as ctx:
        a = m.randn(2, 3, requires_grad=True).clone()
        b, c = a ** 2, a ** 2  # the same tensor at the same version is kept once
        a.sin_()
        out.append(cloned(ctx))
        del b, c
        out.append(cloned(ctx))
    with G.allow_mutation_on_saved_tensors() as ctx:
        a = m.rand(2, 3, requires_grad=True)
        b = a.clone()
        v = b[:1]
        y = b ** 2
        v *= 10  # a write through a view of the saved base
        y.sum().backward()
        out += [cloned(ctx), _vals(a.grad / a)]
    return out


def raw_saved_tensor_details(m):
    x, y = m.rand(2, requires_grad=True), m.rand(2, requires_grad=True)
    z = x * y
    meta = z.grad_fn._input_metadata[0]
    a = m.tensor(2.0, requires_grad=True)

    def pack(t):
        return t

    def unpack(t):
        return t

    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        b = a ** 2
    c = b.exp()
    d = c ** 2

    class KeepsNone(m.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t, None)
            return t

        @staticmethod
        def backward(ctx, g):
            return g

    w = KeepsNone.apply(a)
    s = a * m.ones(())
    return [tuple(meta.shape), str(meta.dtype).split(".")[-1], _error(lambda: z.grad_fn()),
            m.stack([x, y], 1).grad_fn._saved_dim,
            [t.grad_fn._saved_self_sym_sizes for t in (x.sum(), x.expand(2, *x.shape), x.mean(0), x.reshape(-1))],
            b.grad_fn._raw_saved_self.data is a, b.grad_fn._raw_saved_self.unpack_hook is unpack,
            c.grad_fn._raw_saved_result.data is c, c.grad_fn._raw_saved_result.unpack_hook,
            d.grad_fn._raw_saved_self.data is c, len(w.grad_fn._raw_saved_tensors),
            _error(lambda: w.grad_fn._raw_saved_tensors[1].register_hooks(pack, unpack)),
            _error(lambda: s.grad_fn._raw_saved_self.register_hooks(pack, unpack))]


def gradient_edge_outputs(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)

    def fn(reduce=True):
        tmp = x.sin().cos()
        if reduce:
            tmp = tmp.sum()
        return tmp.exp().clone().sin().sum(), m.autograd.graph.get_gradient_edge(tmp)

    out, e = fn()
    (tg,) = m.autograd.grad(out, (e,))
    (xg,) = m.autograd.grad(e, (x,), grad_outputs=(tg,))
    res = [_vals(xg), _vals(m.autograd.grad(fn()[1], (x,))[0])]
    res.append(_error(lambda: m.autograd.grad(fn(reduce=False)[1], (x,))))
    res.append(_error(lambda: m.autograd.grad(fn()[1], (x,), grad_outputs=m.tensor([1.0, 2.0]))))
    res.append(_error(lambda: m.autograd.grad(fn()[1], (x,), grad_outputs=m.ones((), dtype=m.complex64))))
    res.append(_vals(m.autograd.grad(fn()[1], (x,), grad_outputs=m.ones((), dtype=m.float64))[0]))
    res.append(_error(lambda: m.autograd.grad(2 * x, [], grad_outputs=m.tensor([1.0, 1.0]))))
    return res


SCENARIOS = [gradient_edge_outputs, raw_saved_tensor_details,
             mutation_context_bookkeeping, default_hooks_take_over_version_checks, mutation_on_saved_tensors,
             default_hooks_pack_each_saved_tensor, double_backward_through_unpacked_tensors, hooks_may_store_anything,
             only_the_innermost_hooks_apply, custom_function_saved_tensors, save_on_cpu_gives_the_same_gradients,
             hook_errors, saved_attributes, raw_saved_tensor_hooks, multi_grad_hooks, gradient_edges]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_matches_pytorch(scenario):
    got = scenario(tp)
    torch = pytest.importorskip("torch")
    assert got == scenario(torch)


def test_hooks_pack_once_per_saved_tensor_and_unpack_per_use():
    log = default_hooks_pack_each_saved_tensor(tp)[1]
    assert [e[0] for e in log] == ["pack"] * 4 + ["unpack"] * 3
    assert all(e[3] is False for e in log if e[0] == "pack")  # pack runs with grad off


def test_gradients_with_hooks_equal_gradients_without():
    x = _x(tp)
    y = ((x * x).exp() * 2).sum()
    (g,) = tp.autograd.grad(y, x)
    assert default_hooks_pack_each_saved_tensor(tp)[0] == _vals(g)


def test_a_packing_node_is_freed_after_backward():
    x = _x(tp)
    with tp.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x * x).sum()
    y.backward()
    err = _error(lambda: y.backward())
    assert err is not None and "backward through the graph a second time" in err[1]


def test_multi_grad_hook_all_mode_counts_only_what_the_pass_reaches():
    a, b = tp.ones(2, requires_grad=True), tp.ones(2, requires_grad=True)
    calls = []
    tp.autograd.graph.register_multi_grad_hook((a, b), calls.append)
    (a * 5).sum().backward()  # b is not reached: the hook still fires, with None for b
    assert len(calls) == 1 and calls[0][1] is None and calls[0][0].tolist() == [5.0, 5.0]
    with pytest.raises(AssertionError):
        tp.autograd.graph.register_multi_grad_hook((a, tp.ones(2)), calls.append)


def test_set_multithreading_enabled_is_a_scoped_setting():
    from tapeflow.autograd.grad_mode import is_multithreading_enabled

    with tp.autograd.set_multithreading_enabled(False):
        assert is_multithreading_enabled() is False
        x = tp.ones(2, requires_grad=True)
        (x * 3).sum().backward()  # backward still runs (on this thread)
        assert x.grad.tolist() == [3.0, 3.0]
    assert is_multithreading_enabled() is True


@pytest.mark.parametrize("lib_name", ["tapeflow", "torch"])
def test_a_hooks_context_entered_during_backward_ends_with_it(lib_name):
    """PyTorch runs a backward pass under its caller's thread-local state: a saved-tensor-hooks context that an
    unpack hook enters (and never leaves) is gone once the pass ends, so later ops do not pack through it."""
    lib = tp if lib_name == "tapeflow" else pytest.importorskip("torch")
    packed = []
    inner = lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append("inner") or t, lambda t: t)

    def unpack(t):
        inner.__enter__()
        return t

    x = lib.randn(3, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x.sin()
    y.sum().backward()
    (x * 2).sin().sum().backward()
    assert packed == []
