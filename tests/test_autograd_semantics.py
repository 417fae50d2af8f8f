"""Autograd behaviours from PyTorch's own autograd tests: grad-mode decorators on generators, nested inference
mode, gradients at NaN ties and at 0 ** negative, views regaining history after an in-place write through a
sibling, and `retain_grad` following a tensor through in-place writes. Each scenario runs on tapeflow and, when
installed, on PyTorch, and the observations are compared."""

import functools
import warnings

import numpy as np
import pytest

import tapeflow as tp

NAN = float("nan")


def _vals(t):
    return np.round(np.asarray(t.detach().tolist(), dtype=np.float64), 5).tolist()


def _grads(m, f, *xs):
    xs = [m.tensor(x, requires_grad=True) for x in xs]
    f(*xs).sum().backward()
    return [_vals(x.grad) for x in xs]


def generator_decorators(m):
    @m.no_grad()
    def g():
        sent = yield m.is_grad_enabled()
        yield sent, m.is_grad_enabled()

    @m.enable_grad()
    def h():
        try:
            yield m.is_grad_enabled()
        except ValueError:
            yield "caught", m.is_grad_enabled()

    out = []
    with m.enable_grad():
        it = g()
        out += [next(it), m.is_grad_enabled(), it.send(5), m.is_grad_enabled()]
    with m.no_grad():
        it = h()
        out += [next(it), m.is_grad_enabled(), it.throw(ValueError("x")), m.is_grad_enabled()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @m.no_grad()
        class C:
            def __init__(self):
                self.enabled = m.is_grad_enabled()

        out += [C().enabled, [w.category.__name__ for w in caught]]
    return out


def nested_inference_mode(m):
    out = []
    with m.inference_mode():
        with m.inference_mode(False):
            out.append((m.is_inference_mode_enabled(), m.is_grad_enabled()))
        out.append((m.is_inference_mode_enabled(), m.is_grad_enabled()))
    with m.no_grad():
        with m.inference_mode(False):
            out.append(m.is_grad_enabled())
    return out


def gradients_at_edges(m):
    return [_grads(m, lambda a, b: a ** b, [0., 0., 0., 2.], [-1., 0., 1., 0.5]),
            _grads(m, lambda a, b: m.atan2(a, b), [0., 1.], [0., 0.]),
            _grads(m, lambda a: a.max(), [NAN, NAN, NAN]), _grads(m, lambda a: a.max(), [NAN, 1., NAN]),
            _grads(m, lambda a: a.min(), [NAN, 2., 1.]), _grads(m, lambda a: a.median(), [NAN, NAN, NAN]),
            _grads(m, lambda a: a.max(), [1., 3., 3.]), _grads(m, lambda a: a.nanmedian(), [NAN, NAN]),
            _grads(m, lambda a: a.max(0)[0], [[NAN, 1.], [NAN, 2.]])]


def views_after_inplace_writes(m):
    out = []
    r = m.ones(2, 2, requires_grad=True)
    x = r.clone()
    v1, v2 = x.narrow(0, 0, 1), x.narrow(0, 0, 1)
    v1.mul_(2)  # v2 sees the write, and so does its gradient
    v2.sum().backward()
    out.append(_vals(r.grad))
    r = m.ones(2, 2, requires_grad=True)
    x = r.clone()
    v = x[1]
    x.mul_(3)  # a write into the base
    (v * v).sum().backward()
    out += [_vals(r.grad), _vals(v)]
    r = m.ones(3, requires_grad=True)
    x = r.clone()
    a, b = x[:2], x[1:]
    a.add_(1)
    (b * 2).sum().backward()
    out.append(_vals(r.grad))
    base = m.arange(16.).reshape(4, 4)
    w = m.tensor([[1., 2.], [3., 4.], [5., 6.], [7., 8.]], requires_grad=True)
    y = base.clone()
    y.narrow(1, 2, 2).mul_(w)  # a value with history written into a view of a tensor outside the graph
    out += [y.requires_grad, y.grad_fn is not None]
    (y * y).sum().backward()
    out.append(_vals(w.grad))
    w = m.ones(3, requires_grad=True)
    z = m.zeros(2, 3)
    v = z[0]
    with m.no_grad():
        u = z[1]
    z.add_(w * 2)  # views made before the write (even under no_grad) now require grad
    out += [v.requires_grad, u.requires_grad]
    (v * 3).sum().backward()
    out.append(_vals(w.grad))
    return out


def retain_grad_follows_inplace_writes(m):
    out = []
    a = m.tensor([1.], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    out.append(_vals(a.grad))
    r = m.ones(2, 2, requires_grad=True)
    x = r.clone()
    x.retain_grad()
    x[0].mul_(5)  # through a view: the base's retained gradient is the new version's
    (x * 3).sum().backward()
    out += [_vals(x.grad), _vals(r.grad)]
    r = m.ones(2, requires_grad=True)
    x = r * 2
    x.retain_grad()
    y = x * 4
    x.add_(1)
    (x.sum() + y.sum()).backward()
    out += [_vals(x.grad), _vals(r.grad)]
    base = m.tensor([1.0], requires_grad=True).clone()
    view, view2 = base[:], base[:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)  # the other view's history is regenerated from the base's: its retained gradient follows
    (view + view2).sum().backward()
    out += [_vals(view.grad), _vals(view2.grad)]
    return out


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and text are what is compared
        return type(e).__name__, str(e).split(". ")[0].replace("SplitWithSizes", "Split").replace("torch.", "tapeflow.")
    return None


def hook_order_and_returns(m):
    a = m.tensor(1., requires_grad=True)
    log = []
    acc = a.clone().grad_fn.next_functions[0][0]
    a.register_hook(lambda g: log.append("tensor hook 1"))
    a.register_hook(lambda g: log.append("tensor hook 2") or g * 2)
    acc.register_prehook(lambda g: log.append(("acc prehook", g[0].item())))
    acc.register_hook(lambda gi, go: log.append("acc hook"))
    (a * 3).backward()
    t = m.ones(2, requires_grad=True)
    t.register_post_accumulate_grad_hook(lambda p: p.grad)
    x = m.ones(2, requires_grad=True)
    calls = []
    x.register_hook(lambda g: calls.append(1) or g * 2)
    (x * 3).sum().backward(inputs=[x])
    return [log, _vals(a.grad), _error(lambda: t.sum().backward()), len(calls), _vals(x.grad)]


def graphs_that_saved_nothing_run_again(m):
    leaves = [m.zeros(2, requires_grad=True) for _ in range(4)]
    inter = [leaf * i + leaf * leaf for i, leaf in enumerate(leaves)]
    loss = sum(v * i for i, v in enumerate(inter)).sum()
    d = [g for k in range(0, 4, 2) for g in m.autograd.grad(loss, inter[k:k + 2])]  # each pass runs half the graph
    m.autograd.backward(inter, d)
    x = m.ones(2, requires_grad=True)
    y = (x * 2 + 1).sum()  # mul saved the 2: a second pass is refused, as in PyTorch
    y.backward()
    return [[_vals(leaf.grad) for leaf in leaves], _error(lambda: y.backward())[0]]


def gradient_edges_as_outputs(m):
    t = m.tensor([1., 2.], requires_grad=True)
    e = m.autograd.graph.get_gradient_edge(t.sin().sum())
    out = [[_vals(g) for g in m.autograd.grad(e, (t,), grad_outputs=(m.tensor(1.),))]]
    m.autograd.backward(m.autograd.graph.get_gradient_edge((t * t).sum()), m.tensor(2.))
    return out + [_vals(t.grad)]


def function_and_forward_mode_details(m):
    seen = []

    class Pow(m.autograd.Function):
        @staticmethod
        def forward(x, y=3):
            return x ** y

        @staticmethod
        def setup_context(ctx, inputs, output):
            seen.append(len(inputs))
            ctx.save_for_backward(inputs[0])
            ctx.y = inputs[1]

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.y * x ** (ctx.y - 1), None

    class NoForward(m.autograd.Function):
        @staticmethod
        def backward(ctx, g):
            return g

    x = m.tensor(2., requires_grad=True)
    Pow.apply(x).backward()
    out = [seen, _vals(x.grad), _error(lambda: NoForward.apply(x))[0]]
    fwd = m.autograd.forward_ad
    tangent = m.ones(2) * 3
    with fwd.dual_level():
        out.append(_error(lambda: fwd.make_dual(m.ones(2), m.ones(2, dtype=m.int64))))
        dual = fwd.make_dual(m.ones(2), tangent)
        out += [fwd._current_level, fwd.unpack_dual(dual).tangent is tangent, repr(dual * 2).replace("torch", "tp")]
    return out + [fwd._current_level]


def functional_api_messages(m):
    F = m.autograd.functional
    x = m.ones(2)
    return [_error(lambda: F.vjp(lambda a: a.detach(), x, m.ones(2), strict=True)),
            _error(lambda: F.jvp(lambda a: a.detach(), x, m.ones(2), strict=True)),
            _error(lambda: F.jacobian(lambda a: a.detach(), x, strict=True)),
            _error(lambda: F.hvp(lambda a: a.detach().sum(), x, m.ones(2), strict=True)),
            _error(lambda: F.vjp(lambda a: a * 2, x, (m.ones(2), m.ones(2)))),
            _error(lambda: F.jvp(lambda a: a * 2, x, (m.ones(2), m.ones(2)))),
            _error(lambda: F.jvp(lambda a, b: a * b, (x, x), (m.ones(2),))),
            # a gradient that is independent of the input: a hessian's and a vhp's own messages
            _error(lambda: F.hessian(lambda a: a.long().float().requires_grad_().clone().sum(), x, strict=True)),
            _error(lambda: F.vhp(lambda a: a.long().float().requires_grad_().clone().sum(), x, m.ones(2),
                                 strict=True)),
            _error(lambda: F.hessian(lambda a: (3 * a).sum(), x, strict=True)),
            _error(lambda: F.jvp(lambda a: a.clone(), x.clone().requires_grad_(), m.ones(2), create_graph=True,
                                 strict=True)),
            _error(lambda: F.jvp(lambda a: a * 2, x, m.ones(3))), _error(lambda: F.vjp(lambda a: a * 2, x, m.ones(3))),
            _error(lambda: F.hvp(lambda a, b: (a * b).sum(), (x, x), (m.ones(2), m.ones(3))))]


def tensor_odds(m):
    x = m.ones(2, requires_grad=True)
    v = m.autograd.Variable(x)
    w = m.autograd.Variable(x * 2, requires_grad=True)
    with m.no_grad():
        as_numpy = x.numpy().tolist()
    y = m.arange(20.).reshape(4, 5)
    z = m.zeros(4, 5)
    z[[[0, 1], [2, 3]]] = 1
    return [v is x, v.requires_grad, v.is_leaf, w.requires_grad, w.is_leaf, as_numpy,
            tuple(y[[[0, 1, 2, 3]]].shape), tuple(y[[[0, 1], [1, 2]]].shape), tuple(y[[0, 1]].shape),
            tuple(y[[slice(0, 2), 1]].shape), _vals(z.sum())]


def inplace_writes_into_views(m):
    out = []
    x = m.rand(3, 3)
    a, b, c = x.unbind()
    out.append(_error(lambda: a.mul_(2)))
    x = m.rand(3, 3, requires_grad=True).clone()
    a, b, c = x.unbind()
    out.append(_error(lambda: a.mul_(2)))
    x = m.rand(4, requires_grad=True).clone()
    p, q = x.split(2)
    out.append(_error(lambda: q.add_(1)))
    with m.no_grad():
        out.append(_error(lambda: p.add_(1)))
        r = x[0]
    out.append(_error(lambda: r.mul_(2)))
    y = m.ones(4, requires_grad=True).clone()
    u, _ = y.unsafe_split(2)
    out.append(_error(lambda: u.mul_(3)))  # the unsafe variants' outputs may be written
    v, _ = y.unsafe_split_with_sizes([1, 3])
    out.append(_error(lambda: v.mul_(5)))
    y.sum().backward()
    return out


def inference_tensors_and_views(m):
    with m.inference_mode():
        c = m.ones(2, 3)
    writes = (lambda x: x.add_(2), lambda x: x.transpose_(0, 1), lambda x: x.t_(), lambda x: x.unsqueeze_(0),
              lambda x: x.squeeze_(), lambda x: x.zero_())
    out = [_error(functools.partial(f, c)) for f in writes]
    s = m.ones(1, 2, 3, requires_grad=True)
    a = s.clone()
    with m.inference_mode():
        v, w = a.view_as(a), a.view(-1)
    out += [v.is_inference(), w.is_inference(), _error(lambda: v.add_(2))]
    b = m.ones(2, 3)
    with m.inference_mode():
        u = b.view(-1)
    u.add_(1)  # a view of a tensor that needs no grad: written through to its base
    x = m.ones(3)
    x.resize_(3)
    return out + [_vals(b), x._version]


def function_deprecations(m):
    class Id(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            assert len(ctx.saved_variables) == 1
            return g

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Id()
        Id.apply(m.ones(1, requires_grad=True)).backward()
    return [(w.category.__name__, str(w.message).split(" should")[-1]) for w in caught]


def engine_odds(m):
    A = m.autograd
    log = []

    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            A.Variable._execution_engine.queue_callback(lambda: log.append("callback"))
            log.append("backward")
            return g * 2

    x = m.ones(2, requires_grad=True)
    Twice.apply(x).sum().backward()
    log.append("after")

    class Chained(m.autograd.Function):  # a final callback may queue another; both run, in order
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            queue = A.Variable._execution_engine.queue_callback
            queue(lambda: (log.append("first"), queue(lambda: log.append("second"))))
            return g

    class Failing(m.autograd.Function):  # a pass that fails runs no final callback
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            A.Variable._execution_engine.queue_callback(lambda: log.append("never"))
            raise ValueError("backward failed")

    Chained.apply(x).sum().backward()
    log.append(_error(lambda: Failing.apply(x).sum().backward()))
    y = m.ones(2)
    with A._unsafe_preserve_version_counter(y):
        y.add_(1)
    with A._force_original_view_tracking(False):
        pass
    return [log, _error(lambda: A.Variable._execution_engine.queue_callback(print)), y._version, _vals(y),
            _error(lambda: A.SavedTensor()), A.is_multithreading_enabled(),
            m.gather(m.arange(4.).reshape(2, 2), 1, m.tensor([[1], [0]]), sparse_grad=False).tolist()]


def function_options(m):
    seen = []

    class Split(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out0, out1 = x.clone(), x.clone()
            ctx.mark_non_differentiable(out1)
            ctx._materialize_non_diff_grads = False
            return out0, out1

        @staticmethod
        def backward(ctx, g0, g1):
            seen.append(g1)
            return g0

    a = m.tensor(1.0, requires_grad=True)
    Split.apply(a)[0].backward()
    return [seen, _vals(a.grad), Split.generate_vmap_rule]


def grad_and_data_assignment(m):
    x = m.ones(2, requires_grad=True)
    a = m.ones(2, requires_grad=True)
    b = m.ones(2)
    b.data = m.zeros(3)
    x.grad = m.ones(2)
    del x.grad
    out = [_error(lambda: setattr(x, "grad", x)), _error(lambda: setattr(a, "data", m.ones(2, dtype=m.int64))),
           list(b.shape), b._version, x.grad]
    # `x.data = y` keeps the version counter `x` shares with its views; the views keep the old data
    x = m.ones(1, 2) * 3
    xz = x[:]
    xz.add_(1)
    x.data = m.zeros(2, 3)
    x.add_(1)
    out += [x._version, xz._version, _vals(xz), _vals(x)]
    xz.add_(1)
    out += [x._version, xz._version, _vals(x)]
    # a node's saved result is an alias of its output: same version counter, later writes seen
    a = m.tensor([0.5, 1.5], requires_grad=True)
    e = a.exp()
    res = e.grad_fn._saved_result
    with m.no_grad():
        e += 1
    out += [_vals(res), res._version == e._version, _error(lambda: e.grad_fn._saved_result)]
    return out


def hooks_and_targets(m):
    a = m.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    counts = {"tensor": 0, "pre": 0, "post": 0}

    def bump(key):
        def hook(*args):
            counts[key] += 1
        return hook

    a.register_hook(bump("tensor"))
    b.register_hook(bump("tensor"))
    acc = b.grad_fn.next_functions[0][0]
    for node in (acc, b.grad_fn):
        node.register_hook(bump("post"))
        node.register_prehook(bump("pre"))
    seen = []
    for run in (lambda: m.autograd.grad(c, inputs=(b,), retain_graph=True),  # b's node need not run
                lambda: m.autograd.grad(c, inputs=(a, b), retain_graph=True),
                lambda: c.backward(retain_graph=True), lambda: c.backward(inputs=(a, b), retain_graph=True)):
        for k in counts:
            counts[k] = 0
        run()
        seen.append(dict(counts))
    x = m.randn(5, requires_grad=True)
    parts = x.unbind()
    got = []
    parts[0].register_hook(lambda g: got.append(None if g is None else _vals(g)))  # None when it gets no gradient
    parts[0].backward()
    parts[1].backward()
    return [seen, got, _vals(x.grad)]


def sequence_numbers(m):
    # `_sequence_nr()` is a method; later nodes have higher numbers, AccumulateGrad the largest of all, and
    # `_set_sequence_nr` changes which ready node runs first.
    x = m.ones(2, requires_grad=True)
    a = x * 2
    b = a.exp()
    c = b + a
    facts = [b.grad_fn._sequence_nr() > a.grad_fn._sequence_nr(),
             c.grad_fn.next_functions[0][0]._sequence_nr() == b.grad_fn._sequence_nr(),
             a.grad_fn.next_functions[0][0]._sequence_nr()]
    order = []
    for t, name in ((a, "a"), (b, "b"), (c, "c")):
        t.grad_fn.register_prehook(lambda g, name=name: order.append(name))
    y = m.ones(2, requires_grad=True)
    p, q = y * 3, y * 4
    p.grad_fn._set_sequence_nr(q.grad_fn._sequence_nr() + 1)  # p's node now runs before q's
    p.grad_fn.register_prehook(lambda g: order.append("p"))
    q.grad_fn.register_prehook(lambda g: order.append("q"))
    c.sum().backward()
    (p + q).sum().backward()
    return [facts, order, _vals(x.grad), _vals(y.grad)]


def prehooks_of_backward_inputs(m):
    # backward(inputs=[non-leaf]) runs that tensor's hooks and its node's pre-hooks (after the gradient was
    # captured) but not the node; autograd.grad runs none of its pre-hooks; a non-leaf's .grad that backward
    # filled is read without the non-leaf warning.
    import warnings

    log = []
    a = m.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.register_hook(lambda g: log.append("tensor") or g * 3)
    b.grad_fn.register_prehook(lambda gs: log.append("pre") or tuple(g * 2 for g in gs))
    c = b * 5
    c.backward(inputs=(b,), retain_graph=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _vals(b.grad)
    first = list(log)
    log.clear()
    captured = m.autograd.grad(c, inputs=(b,))
    return [first, got, len(caught), list(log), _vals(captured[0]), a.grad is None]


def views_made_without_grad(m):
    # A view of a tensor requiring grad made under no_grad / inference mode requires grad as a leaf whose
    # gradient goes nowhere; detach() does not; an in-place write into it with grad mode on is refused.
    facts = []
    for mode in (m.no_grad, m.inference_mode):
        x = m.ones(2, 3, requires_grad=True)
        with mode():
            views = [x.view(6), x.t(), x[0], *x.unbind()]
            detached = x.detach()
            product = x * 2
        facts.append([(v.requires_grad, v.is_leaf, v.grad_fn is None) for v in views])
        facts.append([detached.requires_grad, product.requires_grad])
        y = views[0] * 2 + views[0]
        facts.append([y.requires_grad, [n is None for n, _ in y.grad_fn.next_functions]])
        y.sum().backward()
        facts.append([views[0].grad, x.grad])
        facts.append(_error(lambda v=views[1]: v.mul_(2)))
        with mode():
            views[2].mul_(2)  # allowed where the view was made
        facts.append(_vals(x))
    return facts


def outputs_without_a_derivative(m):
    """`unique` and `unique_consecutive`: the values join the graph (so they require grad) with a backward
    that raises that the derivative is not implemented; indices and counts never require grad."""
    x = m.tensor([3.0, 1.0, 3.0, 2.0], requires_grad=True)
    facts = []
    for call in (lambda: m.unique(x, return_inverse=True, return_counts=True), lambda: x.unique(dim=0),
                 lambda: m.unique_consecutive(x, return_counts=True), lambda: m.unique(x, sorted=False)):
        out = call()
        out = out if isinstance(out, tuple) else (out,)
        facts.append([(o.requires_grad, type(o.grad_fn).__name__) for o in out])
        facts.append(_error(lambda o=out[0]: (o.sum() + x.sum()).backward()))
    with m.no_grad():
        facts.append(m.unique(x).requires_grad)
    facts.append(x.grad)
    return facts


def moments_share_one_node(m):
    """`var_mean` / `std_mean`: one node for both results (a pre-hook sees both gradients), first and second
    order, a constant row (std's gradient there is 0), one result used alone."""
    out = []
    for fn in ("var_mean", "std_mean"):
        x = m.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], requires_grad=True, dtype=m.float64)
        s, mu = getattr(m, fn)(x, dim=1)
        (s * m.tensor([1.0, 2.0], dtype=m.float64) + mu * 3).sum().backward()
        out.append([type(s.grad_fn).__name__, s.grad_fn is mu.grad_fn, _vals(x.grad)])
        x.grad = None
        getattr(m, fn)(x, dim=1, keepdim=True)[1].sum().backward()
        out.append(_vals(x.grad))
        x.grad = None
        (g,) = m.autograd.grad(getattr(m, fn)(x)[0], x, create_graph=True)
        (g * g).sum().backward()
        out.append(_vals(x.grad))
    a = m.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 0.0], [2.0, 0.5, 1.0]], requires_grad=True)
    seen = []
    var, mean = m.var_mean(a, dim=0)
    mean.grad_fn.register_prehook(lambda gs: (seen.append(len(gs)), tuple(g * 2 for g in gs))[1])
    (var + mean).sum().backward()
    out += [seen, _vals(a.grad)]
    return out


def leaf_hooks_in_order(m):
    """A leaf's tensor hook, its AccumulateGrad's pre-hook, its post-accumulate hook and the node's post-hook,
    in PyTorch's order; the first accumulation takes the gradient as `.grad` itself (the node's post-hook sees
    what the post-accumulate hook did to it), a later one adds into the `.grad` there is."""
    tensor = m.tensor([0.25, 0.5, 1.0], requires_grad=True)
    log = []

    def node_post(grad_in, grad_out):
        log.append(("node post", len(grad_in), _vals(grad_out[0])))
        tensor.grad = grad_out[0].mul(10)

    acc = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    tensor.register_hook(lambda g: (log.append(("tensor pre", _vals(g))), g.sub(2.0))[1])
    acc.register_prehook(lambda go: (log.append(("node pre", _vals(go[0]))), (go[0].div(5.0),))[1])
    tensor.register_post_accumulate_grad_hook(lambda t: (log.append(("post acc", _vals(t.grad))), t.grad.add_(0.5))
                                              and None)
    acc.register_hook(node_post)
    for _ in range(2):
        tensor.sum().backward()
        log.append(_vals(tensor.grad))
    return log


def detached_views(m):
    """`detach()` of a view shares its storage without history: a later in-place write into the base gives it
    none, and a write through it changes the values of the base and its views, not their histories."""
    x = m.ones(4, requires_grad=True)
    b = x * 2
    d = b[0:2].detach()
    p = b.detach()[1:3]  # a view of a detached alias
    v = b[2:]
    b.mul_(3)
    out = [d.tolist(), d.requires_grad, d.grad_fn is None, p.requires_grad, p.grad_fn is None]
    d.add_(1)
    p.mul_(2)
    out += [b.tolist(), b.grad_fn.name(), v.tolist(), v.grad_fn.name(), d._version, b._version]
    b.sum().backward()
    return out + [x.grad.tolist()]


def saved_then_detached_in_place(m):
    """A saved input detached in place afterwards is refused; a saved output, or a tensor detached before it
    was saved, is not."""
    out = []
    for op in ("sin", "exp"):
        a = m.tensor(1.0, requires_grad=True).clone()
        b = getattr(a, op)()
        a.detach_()
        out.append(_error(lambda b=b: b.backward()))
    a = m.tensor(1.0, requires_grad=True).clone()
    a.detach_()
    w = m.tensor(2.0, requires_grad=True)
    (a * w).backward()
    return out + [w.grad.item(), a.requires_grad, a.grad_fn is None]


def _view_of_function(m):
    """A custom Function whose forward returns a view of its input."""

    class ViewOf(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g

    return ViewOf


def view_writes_that_would_take_a_history(m):
    """An in-place write of a value that requires grad into a view that cannot take its history: made by a
    custom Function, by an op returning several views, or under no_grad (whether or not the base requires
    grad); a plain view takes it."""

    ViewOf = _view_of_function(m)

    def no_grad_view(a):
        with m.no_grad():
            return a[0]

    out = []
    for requires_grad in (False, True):
        makers = (ViewOf.apply, lambda a: a.unbind()[0], lambda a: a.split(1)[0], no_grad_view, lambda a: a[0])
        for make in makers:
            a = m.rand(2, 2, requires_grad=requires_grad).clone()
            b = m.rand(2, requires_grad=True)
            v = make(a)
            try:
                v.mul_(b)
                out.append(None)
            except RuntimeError as e:  # (the whole message: its reason follows the first sentence)
                out.append(str(e))
            if out[-1] is None:
                out.append(v.grad_fn.name() if v.grad_fn is not None else None)
    v = ViewOf.apply(m.rand(2, 2, requires_grad=True).clone())
    with m.no_grad():
        v.add_(1)  # (no history to take: allowed)
    w = no_grad_view(m.ones(3, 2))
    w.requires_grad_()
    (w * 2).sum().backward()
    return out + [w.grad.tolist()]


def second_order_links(m):
    """A second derivative reaches only the inputs its first derivative read: `d(x*a)/dx = a` does not depend
    on `x` (None, or PyTorch's error), where a first derivative that reads `x` does."""
    A = m.autograd
    x, a = m.tensor(0.5, requires_grad=True), m.tensor(1.5, requires_grad=True)

    def first():
        return A.grad(x * a, x, create_graph=True)[0]

    out = [_vals(g) if g is not None else None for g in A.grad(first(), [x, a], allow_unused=True)]
    out.append(_error(lambda: A.grad(first(), x)))
    out.append(_vals(A.grad(first(), x, allow_unused=True, materialize_grads=True)[0]))
    out.append(_error(lambda: A.grad(x * a, x, allow_unused=False, materialize_grads=True)))
    (da,) = A.grad((x * a).sin(), a, create_graph=True)  # reads x through the product: defined
    out.append([_vals(g) for g in A.grad(da, [x, a])])
    w, b = m.randn(3, 2, requires_grad=True), m.randn(2, requires_grad=True)
    (dw,) = A.grad((m.ones(4, 3) @ w + b).sum(), w, create_graph=True)  # d/dw of (X @ w + b) reads neither
    out.append(_error(lambda: A.grad(dw.sum(), [w, b])))
    x = m.randn(4, 3, requires_grad=True)
    (dw,) = A.grad((x @ w).sum(), w, create_graph=True)  # X.T @ g: reads x, not w
    out.append([None if g is None else list(g.shape) for g in A.grad(dw.sum(), [x, w], allow_unused=True)])
    return out


def splits(m):
    """The split family's nodes (an integer size, a list of sizes, chunk, unbind, tensor_split, hsplit), which of
    their pieces take an in-place write (tensor_split's are plain slices), and their gradients."""
    out = []
    makers = {"split int": lambda a: a.split(2, 1), "split sizes": lambda a: a.split([1, 3], 1),
              "chunk": lambda a: a.chunk(2, 1), "unbind": lambda a: a.unbind(1),
              "tensor_split count": lambda a: a.tensor_split(3, 1), "tensor_split indices": lambda a: a.tensor_split([1], 1),
              "hsplit": lambda a: a.hsplit(2), "torch.split": lambda a: m.split(a, 3, 1)}
    for name, make in makers.items():
        x = m.tensor(np.arange(8.0).reshape(2, 4), requires_grad=True)
        pieces = make(x.clone())
        out.append((name, [p.grad_fn.name() for p in pieces], [list(p.shape) for p in pieces]))
        try:
            pieces[0].mul_(2)
            written = "written"
        except RuntimeError as e:
            written = str(e)
        out.append(written)
        sum((p * (i + 1)).sum() for i, p in enumerate(pieces)).backward()
        out.append(x.grad.tolist())
    return out


def ops_without_a_derivative(m):
    """Ops whose derivative PyTorch defines as zero (nextafter, division with a rounding mode) and ops whose
    derivative it does not implement (floor_divide and //, heaviside, histogram): which nodes they record, and
    what a backward through them gives or raises."""
    out = []
    cases = {"nextafter": lambda x: m.nextafter(x, m.tensor(1.0)), "div floor": lambda x: m.div(x, 2, rounding_mode="floor"),
             "div trunc": lambda x: m.div(x, x + 1, rounding_mode="trunc"), "floor_divide": lambda x: m.floor_divide(x, 2),
             "//": lambda x: x // 0.7, "heaviside": lambda x: m.heaviside(x, m.tensor(0.5)),
             "histogram": lambda x: m.histogram(x, 3).hist}
    for name, f in cases.items():
        x = m.tensor([0.3, -2.7, 1.5], requires_grad=True)
        y = f(x)
        out.append((name, _vals(y), y.requires_grad, y.grad_fn.name().replace("torch::autograd::", "")))
        try:
            (y * x).sum().backward()
            out.append(_vals(x.grad))
        except RuntimeError as e:
            out.append(str(e))
    with m.no_grad():
        out.append((m.tensor([1.5], requires_grad=True) // 1).requires_grad)
    return out


def inference_views_in_normal_mode(m):
    """View ops (and detach) on an inference tensor outside inference mode give inference tensors that need no
    grad and are no autograd views; a write into one inside inference mode reaches the base."""
    out = []
    for requires_grad in (True, False):
        with m.inference_mode():
            c = m.ones(1, 2, 3, requires_grad=requires_grad)
        makers = {"view": lambda c: c.view(-1), "select": lambda c: c[0], "transpose": lambda c: c.transpose(1, 2),
                  "unbind": lambda c: c.unbind(2)[0], "detach": lambda c: c.detach(), "mul": lambda c: c * 2}
        for name, make in makers.items():
            o = make(c)
            out.append((requires_grad, name, m.is_inference(o), o.requires_grad, o._is_view(), o.is_leaf))
        w = c.view(-1)
        with m.inference_mode():
            w.add_(1)
        out.append(_vals(c))
        try:  # (PyTorch raises after the write has happened: c is not compared after this)
            w.add_(1)
            out.append("written outside inference mode")
        except RuntimeError as e:
            out.append(str(e))
    return out


def tensor_attribute_errors(m):
    """Deleting or mis-setting autograd attributes of a tensor, and `is_grads_batched` shape errors."""
    out = []
    y = m.ones(2, 2, requires_grad=True)
    for attr in ("data", "requires_grad", "_grad_fn", "_backward_hooks"):
        try:
            delattr(y, attr)
            out.append(f"deleted {attr}")
        except (RuntimeError, AttributeError) as e:
            out.append((type(e).__name__, str(e)))
    del y.grad
    out.append(y.grad is None)
    try:
        y.data = None
    except TypeError as e:
        out.append(str(e))
    out.append(y._backward_hooks)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out.append((m.randn(2).volatile, [str(x.message) for x in w]))
    base = m.zeros(2)
    with m.no_grad():
        y = base.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    try:
        z /= 2
        out.append("written")
    except RuntimeError as e:  # (a view of a no_grad view that was given requires_grad)
        out.append(str(e))
    x = m.ones(1, requires_grad=True)
    for g in (m.ones(2), m.ones(())):
        try:
            m.autograd.grad(x * m.ones(2, 2), x, g, is_grads_batched=True)
        except (RuntimeError, IndexError) as e:
            out.append((type(e).__name__, str(e).replace("torch.Size", "Size").replace("tapeflow.Size", "Size")))
    return out


def inplace_view_ops_on_views(m):
    """`t_`, `transpose_`, `unsqueeze_`, `squeeze_`, `as_strided_` on views (plain, of an op returning several
    views, of a custom Function; made with and without grad, changed with and without grad): what is refused
    and when, and that later writes still reach the base with the right gradients."""

    ViewOf = _view_of_function(m)

    ops = {"t_": lambda v: v.t_(), "transpose_": lambda v: v.transpose_(0, 1), "unsqueeze_": lambda v: v.unsqueeze_(0),
           "squeeze_": lambda v: v.squeeze_(0), "as_strided_": lambda v: v.as_strided_((1, 0), (2, 2))}
    kinds = {"plain": lambda b: b.view_as(b), "unbind": lambda b: b.unbind()[0], "custom": ViewOf.apply}
    out = []
    for name, op in ops.items():
        for kind, make in kinds.items():
            for grad_view in (True, False):
                for grad_op in (True, False):
                    for requires_grad in (True, False):
                        base = m.rand(2, 3, requires_grad=requires_grad).clone()
                        with m.set_grad_enabled(grad_view):
                            v = make(base)
                        r = []
                        with m.set_grad_enabled(grad_op):
                            try:
                                op(v)
                                r.append(list(v.shape))
                            except (RuntimeError, IndexError) as e:
                                r.append(f"{type(e).__name__}: {e}")
                        if type(r[0]) is list:
                            try:
                                v.add_(1)
                                r.append("written")
                            except RuntimeError as e:
                                r.append(str(e))
                        out.append((name, kind, grad_view, grad_op, requires_grad, r))
    for nograd in (False, True):
        leaf = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        base = leaf * 1
        v = base[1]
        with m.set_grad_enabled(not nograd):
            v.unsqueeze_(0)
        v.mul_(m.tensor([[2.0, 3.0, 4.0]]))
        (base * m.tensor([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
        out.append((list(v.shape), _vals(base), _vals(leaf.grad)))
    # A tensor that others view changes its own layout: they keep theirs, and writes still go both ways.
    x = m.zeros(2, 3)
    v = x[0]
    x.t_()
    x.add_(1)
    out.append((_vals(v), _vals(x)))
    x = m.zeros(2, 3)
    v = x[:, 1]
    x.unsqueeze_(0)
    x[0, 1, 1] = 5
    out.append((_vals(v), list(x.shape)))
    x = m.arange(6.0).reshape(2, 3)
    v = x.view(3, 2)
    x.t_()
    v.mul_(10)
    w = x[0]
    w.add_(100)
    out.append((_vals(x), _vals(v)))
    # `.data =` gives the tensor a new storage (its views keep the old one); resize_ keeps the storage.
    x = m.zeros(3)
    v = x[:2]
    x.data = m.ones(3)
    x.add_(1)
    v.add_(5)
    out.append((_vals(x), _vals(v)))
    p = m.nn.Parameter(m.zeros(3))
    v = p[:2]
    p.data = m.ones(3)
    out.append((_vals(p), _vals(v), v.grad_fn.name()))
    for size in (4, 2):
        x = m.zeros(2, 2)
        v = x[0] if size == 4 else x.view(4)
        x.resize_(size)
        x.add_(1)
        out.append((_vals(x), _vals(v)))
    return out


def legacy_backward_hooks(m):
    """Hooks set through the `_backward_hooks` dict: kept as given, run on leaves only (as PyTorch)."""
    from collections import OrderedDict

    z = m.ones(3, requires_grad=True)
    x = m.ones(3)
    a = x * 2
    hooks = OrderedDict()
    a._backward_hooks = hooks
    hooks["never"] = lambda g: 1 / 0  # `a` has no gradient: never called
    x._backward_hooks = OrderedDict(never=lambda g: 1 / 0)
    (a + z).sum().backward()
    w = z * 2
    w._backward_hooks = OrderedDict(double=lambda g: g * 2)  # a tensor with a history: not run
    w.sum().backward()
    out = [a._backward_hooks is hooks, _vals(z.grad)]
    z._backward_hooks = OrderedDict()
    z._backward_hooks["x10"] = lambda g: g * 10
    z.grad = None
    (z * 3).sum().backward()
    return out + [_vals(z.grad), list(z._backward_hooks)]


def nodes_reached_without_a_gradient(m):
    """A node that gets no gradient (a custom Function returned None for it) still runs, as in PyTorch: tensor,
    leaf and node hooks see None, a custom Function's backward sees zeros (so its inputs get zero gradients,
    not None); a built-in node gives no gradient."""
    seen = []

    class DropsSecond(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, None

    class Doubles(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(("Doubles.backward", _vals(g)))
            return g * 2

    w = m.ones(2, requires_grad=True)
    leaf = m.ones(2, requires_grad=True)
    leaf.register_hook(lambda g: seen.append(("leaf hook", g)))
    y = leaf.clone()
    y.register_hook(lambda g: seen.append(("tensor hook", g)))
    DropsSecond.apply(w, y).sum().backward()
    x = m.ones(2, requires_grad=True)
    DropsSecond.apply(w, Doubles.apply(x)).sum().backward()
    n = x * 3
    n.grad_fn.register_prehook(lambda go: seen.append(("prehook", go)))
    n.grad_fn.register_hook(lambda gi, go: seen.append(("posthook", gi, go)))
    DropsSecond.apply(w, n).sum().backward()
    return seen + [leaf.grad, _vals(x.grad), _vals(w.grad)]


def no_grad_views_after_inplace_writes(m):
    """A view made under no_grad or in inference mode of a tensor requiring grad gets no history once its data
    changed in place (through its base, itself or another view, or an in-place view op on the base; in any grad
    mode): it requires grad, but reading its grad_fn (`is_leaf`, an op on it in grad mode) raises, an in-place write
    to it in grad mode is refused, ops under no_grad run, and it prints `grad_fn=<Invalid>`."""
    out = []
    for mode in ("no_grad", "inference_mode"):
        for where in ("base", "view", "base under no_grad"):
            s = m.ones(3, requires_grad=True)
            b = s.clone()
            with getattr(m, mode)():
                v = b[:2]
            if where == "base":
                b.add_(1)
            elif where == "view":
                with getattr(m, mode)():
                    v.mul_(2)
            else:
                with m.no_grad():
                    b.add_(1)
            out.append(repr(v).split("grad_fn=")[-1])
            try:
                (v * 2).sum().backward()
                out.append(("ran", _vals(s.grad)))
            except RuntimeError as e:
                out.append(str(e)[:60])
            out.append(_vals(v.detach()))
            for probe in (lambda t: t.grad_fn, lambda t: t.is_leaf, lambda t: t.requires_grad,
                          lambda t: t.add_(1), lambda t: t.zero_(), lambda t: t.__setitem__(0, 2.0)):
                try:
                    out.append(probe(v))
                except RuntimeError as e:
                    out.append(str(e)[:70])
            with m.no_grad():
                out.append(_vals(v * 2))
    for rg in (True, False):  # (an in-place view op on the base changes its data's layout)
        b = m.ones(1, 2, 3, requires_grad=rg).clone()
        with m.inference_mode():
            v = b.view(-1)
        b.transpose_(0, 1)
        try:
            out.append(v.grad_fn)
        except RuntimeError as e:
            out.append(str(e)[:70])
        out.append(b._version)
    x = m.zeros(2)
    with m.no_grad():
        v = x.view(2)  # (its base required no grad then)
    x.add_(m.ones(2, requires_grad=True))
    out.append(repr(v).split("grad_fn=")[-1])
    untouched = m.ones(2, requires_grad=True).clone()
    with m.no_grad():
        w = untouched[:1]
    (w * 2).sum()  # nothing was written: a view made in no_grad is usable
    out.append(w.requires_grad)
    return out


def views_of_plain_tensors_made_without_grad(m):
    """A view made under no_grad or in inference mode of a tensor that needs no gradient: an in-place write in
    grad mode that would give it (or a view of it) a history is refused, with the wording of the mode it was made
    in; once its base comes to require grad through a write, it gets no history (`<Invalid>`)."""
    def error(f, t):
        try:
            f(t)
        except RuntimeError as e:
            return str(e)
        return None

    out = []
    for mode in (m.no_grad, m.inference_mode):
        x = m.zeros(2)
        with mode():
            y = x.view(2)
        out.append(error(lambda t: t.add_(m.ones(2, requires_grad=True)), y))
        z = y.view(2)
        out.append(error(lambda t: t.add_(m.ones(2, requires_grad=True)), z))
        x = m.zeros(2)
        with mode():
            y = x.view(2)
        y.requires_grad_(True)
        z = y.view(2)
        out += [z.grad_fn.name(), error(lambda t: t.div_(2), z)]
        x = m.zeros(2)
        with mode():
            v = x.view(2)
        x.add_(m.ones(2, requires_grad=True))
        out += [error(lambda t: t.grad_fn, v), repr(v), v.requires_grad]
    return out


def create_graph_grads_are_copies(m):
    """Under `create_graph` a leaf's first `.grad` is a copy of the incoming gradient, never the tensor itself (a
    later write to the user's gradient leaves `.grad` alone), recorded as `CopyBackwards` when it has history."""
    x = m.tensor([1.0, 2.0], requires_grad=True)
    g = m.tensor([1.0, 1.0], requires_grad=True)
    x.backward(g, create_graph=True)
    fn = x.grad.grad_fn
    out = [x.grad is g, fn.name(), [None if n is None else n.name() for n, _ in fn.next_functions]]
    plain = m.tensor([3.0, 3.0])
    x.grad = None
    x.backward(plain, create_graph=True)
    same = x.grad is plain
    with m.no_grad():
        plain.add_(1)
    out += [same, _vals(x.grad), x.grad.grad_fn]
    x.grad = None
    (x * x).sum().backward(create_graph=True)
    out += [x.grad.grad_fn.name(), _vals(m.autograd.grad(x.grad.sum(), x)[0])]
    return out


def version_error_messages(m):
    """PyTorch's wording of the error for a saved tensor written in place: the tensor's type and shape, the op it
    is an output of (none for a leaf or a tensor without history), and the hint (another one in anomaly mode)."""
    def message(f):
        try:
            f()
        except RuntimeError as e:
            return str(e).replace("torch.", "tapeflow.")
        return None

    class Twice(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    out = []
    a = m.tensor([0.5, 1.5], requires_grad=True)
    w = m.tensor([0.5, 1.5])
    y = a * w
    with m.no_grad():
        w += 1
    out.append(message(lambda: y.sum().backward()))
    o = Twice.apply(a)
    z = o.sin()
    with m.no_grad():
        o += 1
    out.append(message(lambda: z.sum().backward()))
    for dtype in (m.float64, m.float16, m.complex64):
        e = (a.to(dtype) * 1).exp()
        with m.no_grad():
            e += 1
        out.append(message(e.abs().sum().backward))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autograd.detect_anomaly():
            e = a.exp()
            with m.no_grad():
                e += 1
            out.append(message(lambda: e.sum().backward()))
    return out


SCENARIOS = [create_graph_grads_are_copies, version_error_messages, views_of_plain_tensors_made_without_grad,
             no_grad_views_after_inplace_writes, nodes_reached_without_a_gradient, legacy_backward_hooks,
             inplace_view_ops_on_views, tensor_attribute_errors, inference_views_in_normal_mode, ops_without_a_derivative, splits,
             detached_views, second_order_links, saved_then_detached_in_place, view_writes_that_would_take_a_history,
             prehooks_of_backward_inputs, outputs_without_a_derivative, moments_share_one_node, leaf_hooks_in_order,
             views_made_without_grad, sequence_numbers, hooks_and_targets, grad_and_data_assignment, function_options, engine_odds,
             inference_tensors_and_views, function_deprecations,
             hook_order_and_returns, graphs_that_saved_nothing_run_again, gradient_edges_as_outputs,
             function_and_forward_mode_details, functional_api_messages, tensor_odds, inplace_writes_into_views,
             generator_decorators, nested_inference_mode, gradients_at_edges, views_after_inplace_writes,
             retain_grad_follows_inplace_writes]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_matches_pytorch(scenario):
    got = scenario(tp)
    torch = pytest.importorskip("torch")
    assert got == scenario(torch)


def test_a_generators_mode_never_leaks_to_its_caller():
    obs = generator_decorators(tp)
    assert obs[:4] == [False, True, (5, False), True]


def test_nan_ties_share_the_gradient():
    g = gradients_at_edges(tp)
    assert g[2] == [[0.33333] * 3] and g[3] == [[0.5, 0.0, 0.5]]
    assert g[0][1][0] == -np.inf  # d/db 0 ** b at b = -1


def test_backward_with_create_graph_warns_once_like_pytorch():
    tp.set_warn_always(True)
    try:
        x = tp.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="Using backward\\(\\) with create_graph=True"):
            (x * x).sum().backward(create_graph=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tp.autograd.grad((x * x).sum(), x, create_graph=True)  # autograd.grad does not warn
    finally:
        tp.set_warn_always(False)


def test_checkpoint_early_stop_is_a_scoped_setting():
    from tapeflow.utils.checkpoint import checkpoint, set_checkpoint_early_stop

    x = tp.ones(2, requires_grad=True)
    with set_checkpoint_early_stop(False):
        y = checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False)
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_submodule_import_does_not_hide_a_function_of_the_same_name(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "prog.py"
    script.write_text("import torch\nfrom torch.autograd.gradcheck import GradcheckError\n"
                      "x = torch.ones(2, dtype=torch.float64, requires_grad=True)\n"
                      "print(torch.autograd.gradcheck(lambda a: a * 2, (x,)))\n")
    out = subprocess.run([sys.executable, "-m", "tapeflow.torch", str(script)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr


def test_multi_grad_hooks_work_with_backward_inputs_on_threads():
    import threading

    errors = []

    def work():
        try:
            a, b = tp.ones(2, requires_grad=True), tp.ones(2, requires_grad=True)
            seen = []
            tp.autograd.graph.register_multi_grad_hook((a, b), lambda gs: seen.append(len(gs)))
            (a * b).sum().backward(inputs=[a, b])
            assert seen == [2], seen
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("kind", ["scatter_reduce", "index_reduce"])
def test_prod_reduction_refuses_a_double_backward_where_two_zeros_meet(kind):
    """PyTorch's rule: the gradient of `prod` for the written values has no derivative where two zeros are
    written to one position; a double backward through it raises (a first backward, and the gradient's value,
    are fine), and with at most one zero per position it is the derivative (gradgradcheck)."""
    source = "src" if kind == "scatter_reduce" else "source"
    fn = getattr(tp, kind)
    x = tp.tensor([1.0, 2.0], dtype=tp.float64, requires_grad=True)
    index = tp.tensor([0, 0, 1])
    src = tp.tensor([0.0, 0.0, 3.0], dtype=tp.float64, requires_grad=True)
    gx, gs = tp.autograd.grad(fn(x, 0, index, src, "prod").sum(), (x, src), create_graph=True)
    assert gs.grad_fn.name() == "Error"
    assert gs.tolist() == [0.0, 0.0, 2.0]
    with pytest.raises(RuntimeError, match=rf"{kind}\(\): Double backward is unsupported for {source} when >1 zeros"):
        tp.autograd.grad(gs.sum(), (x, src))
    one_zero = tp.tensor([0.0, 1.5, 3.0], dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradgradcheck(lambda a, b: fn(a, 0, index, b, "prod"), (x, one_zero))
