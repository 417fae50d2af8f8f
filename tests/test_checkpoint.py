"""utils.checkpoint: the block keeps no intermediates on the tape, and outputs, input gradients and parameter
gradients equal an unchecked run's (dropout replayed) and PyTorch's."""

from __future__ import annotations

import contextlib
import functools
import gc
import warnings
import weakref

import numpy as np
import pytest

import tapeflow as tp
from tapeflow.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _block(lib, p_drop=0.0):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Dropout(p_drop), lib.nn.Linear(5, 2)).double()
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.tensor(np.random.default_rng(i).normal(size=tuple(p.shape))))
    return net


def _run(lib, reentrant, checkpointed, x_grad=True, p_drop=0.0):
    net = _block(lib, p_drop)
    x = lib.tensor(np.random.default_rng(7).normal(size=(4, 3)), requires_grad=x_grad)

    def f(inp, scale):
        h = net(inp)
        return h * scale, h.sum()

    lib.manual_seed(1)
    out, total = checkpoint(f, x, 2.0, use_reentrant=reentrant) if checkpointed else f(x, 2.0)
    (out.pow(2).sum() + total).backward()
    grads = [None if p.grad is None else p.grad.numpy() for p in net.parameters()]
    return out, [out.detach().numpy(), None if x.grad is None else x.grad.numpy(), *grads]


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_equals_plain_and_pytorch(reentrant):
    out, mine = _run(tp, reentrant, True)
    _, plain = _run(tp, reentrant, False)
    for a, b in zip(mine, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    import torch.utils.checkpoint as tc

    net = _block(torch)
    x = torch.tensor(np.random.default_rng(7).normal(size=(4, 3)), requires_grad=True)
    o, t = tc.checkpoint(lambda i, s: (net(i) * s, net(i).sum()), x, 2.0, use_reentrant=reentrant)
    (o.pow(2).sum() + t).backward()
    theirs = [o.detach().numpy(), x.grad.numpy(), *(p.grad.numpy() for p in net.parameters())]
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # Reentrant: the block is one node whose edges lead straight to leaves. Non-reentrant: the block's own
    # graph is recorded (only what it saves is dropped), so the output's node is its last op's, as in PyTorch.
    assert out.grad_fn.name() == o.grad_fn.name()
    if reentrant:
        assert {type(n).__name__ for n, _ in out.grad_fn.next_functions if n is not None} == {"AccumulateGrad"}


def test_dropout_is_replayed_in_the_recomputation():
    _, mine = _run(tp, False, True, p_drop=0.5)
    _, plain = _run(tp, False, False, p_drop=0.5)
    for a, b in zip(mine, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_inputs_without_grad_and_argument_errors():
    _, mine = _run(tp, False, True, x_grad=False)  # non-reentrant: parameters still get gradients
    assert mine[1] is None and all(g is not None for g in mine[2:])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(_block(tp), tp.ones(2, 3, dtype=tp.float64), use_reentrant=True)
    assert not out.requires_grad  # reentrant, as PyTorch: nothing reaches the parameters
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda x, scale: x, tp.ones(1), use_reentrant=True, scale=2)
    assert float(checkpoint(lambda x, scale: x * scale, tp.ones(1), use_reentrant=False, scale=2.0)) == 2.0
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda x: x * 2, tp.ones(1, requires_grad=True))


def test_checkpoint_sequential_equals_plain():
    net = _block(tp)
    x = tp.tensor(np.random.default_rng(7).normal(size=(4, 3)), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = checkpoint_sequential(net, 2, x, use_reentrant=False)
    y.pow(2).sum().backward()
    g = [x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]
    x.grad = None
    net.zero_grad()
    net(x).pow(2).sum().backward()
    for a, b in zip(g, [x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# -- non-reentrant semantics: each scenario runs on tapeflow and on PyTorch, and the results must agree -----------
def _ck(lib):
    return tp.utils.checkpoint if lib is tp else __import__("torch.utils.checkpoint").utils.checkpoint


def _counted(lib, runs):
    def block(x, scale=None):
        runs.append(1)
        y = x.sin().exp().sin()
        return y if scale is None else y * scale
    return block


def _early_stop_scenario(lib, early_stop, ctx_flag):
    runs = []
    a = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
    block = lambda x: _counted(lib, runs)(x).clone()  # noqa: E731 - the clone saves nothing: early stop skips it
    ctx = _ck(lib).set_checkpoint_early_stop(ctx_flag) if ctx_flag is not None else contextlib.nullcontext()
    with ctx:
        out = _ck(lib).checkpoint(block, a, use_reentrant=False, early_stop=early_stop)
    out.sum().backward()
    return len(runs), a.grad.numpy()


def _saved_result_scenario(lib):
    runs = []
    a = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    d = _ck(lib).checkpoint(lambda x: _counted(lib, runs)(x).exp(), a, use_reentrant=False)
    seen = [len(runs)]
    for _ in range(2):  # each access outside backward recomputes
        r = d.grad_fn._saved_result
        seen.append(len(runs))
    d.sum().backward()
    seen.append(len(runs))
    with pytest.raises(RuntimeError, match="or directly access saved tensors after they have already been freed"):
        d.grad_fn._saved_result  # noqa: B018
    return seen, r.detach().numpy(), a.grad.numpy()


def _exec_group_scenario(lib, grouped):
    runs = []

    def block(x):
        runs.append(1)
        y = x.sin().cos()
        return y, y.sin().cos()

    x = lib.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=lib.float64, requires_grad=True)
    y, z = _ck(lib).checkpoint(block, x, use_reentrant=False)
    with _ck(lib).GraphExecGroup() if grouped else contextlib.nullcontext():
        gy, = lib.autograd.grad(z, (y,), grad_outputs=(lib.ones_like(z),))
        gx, = lib.autograd.grad(y, (x,), grad_outputs=(gy,))
    return len(runs), gx.numpy()


def _nested_scenario(lib):
    runs = []
    c = lambda f: lambda *a: _ck(lib).checkpoint(f, *a, use_reentrant=False)  # noqa: E731
    a = lib.tensor([0.7, -0.4], dtype=lib.float64, requires_grad=True)
    b = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
    out = c(lambda x: c(_counted(lib, runs))(x, b).exp())(a)
    g = lib.autograd.grad(out.sum(), (a, b), create_graph=True)
    gg = lib.autograd.grad(g[0].sum(), (a,))
    return len(runs), [t.detach().numpy() for t in (*g, *gg)]


def _backward_inside_scenario(lib, early_stop):
    runs = []

    def block(x):
        runs.append(1)
        y = x.sin()
        gx, = lib.autograd.grad(y.cos().sum(), x, retain_graph=True)
        return x.cos() * gx

    a = lib.tensor([0.2, 0.9], dtype=lib.float64, requires_grad=True)
    with _ck(lib).set_checkpoint_early_stop(early_stop):
        out = _ck(lib).checkpoint(block, a, use_reentrant=False)
    out.sum().backward()
    return len(runs), a.grad.numpy()


SCENARIOS = {
    "early_stop_default": lambda lib: _early_stop_scenario(lib, True, None),
    "early_stop_kwarg_off": lambda lib: _early_stop_scenario(lib, False, None),
    "early_stop_context_overrides_kwarg": lambda lib: _early_stop_scenario(lib, False, True),
    "early_stop_context_off": lambda lib: _early_stop_scenario(lib, True, False),
    "saved_result_outside_backward": _saved_result_scenario,
    "two_grads": lambda lib: _exec_group_scenario(lib, False),
    "two_grads_in_one_exec_group": lambda lib: _exec_group_scenario(lib, True),
    "nested_double_backward": _nested_scenario,
    "backward_inside_block": lambda lib: _backward_inside_scenario(lib, True),
    "backward_inside_block_no_early_stop": lambda lib: _backward_inside_scenario(lib, False),
}


def _assert_same(mine, theirs):
    if isinstance(mine, (tuple, list)):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            _assert_same(a, b)
    elif isinstance(mine, np.ndarray):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)
    else:
        assert mine == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_non_reentrant_recomputations_and_gradients_match_pytorch(name):
    # How many times the block runs (forward + recomputations) and the gradients, as PyTorch.
    _assert_same(SCENARIOS[name](tp), SCENARIOS[name](torch))


@pytest.mark.oracle
@pytest.mark.parametrize("lib", ["tapeflow", "torch"])
def test_checkpointed_graphs_die_without_the_garbage_collector(lib):
    lib = tp if lib == "tapeflow" else torch
    c = lambda f: lambda *a: _ck(lib).checkpoint(f, *a, use_reentrant=False)  # noqa: E731

    def grad(f):
        def g(x):
            with lib.enable_grad():
                return lib.autograd.grad(f(x), (x,), create_graph=True)[0]
        return g

    f = lambda x: x.sin().exp().sin()  # noqa: E731

    class Tag:
        pass

    def scope(fn):
        out = fn(lib.tensor(0.4, requires_grad=True))
        refs, todo, seen = [], [out.grad_fn], set()
        while todo:
            node = todo.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            tag = node.metadata["tag"] = Tag()
            refs.append(weakref.ref(tag))
            todo += [n for n, _ in node.next_functions]
        return refs

    fns = (c(f), c(c(f)), grad(c(f)), grad(c(grad(c(f)))), c(grad(grad(c(f)))))
    for fn in fns:  # (first calls build objects that live on: PyTorch's first checkpoint keeps some alive)
        scope(fn)
    gc.collect()
    gc.disable()
    try:
        for fn in fns:
            assert all(r() is None for r in scope(fn))
    finally:
        gc.enable()


@pytest.mark.parametrize("early_stop", [True, False])
def test_a_function_saving_its_output_inside_a_checkpoint_is_freed_after_backward(early_stop):
    """The recomputed forward saves a custom Function's own output; with early stop the recomputation stops
    inside that save. Neither may leave the node and its output holding each other (freed with GC off)."""
    refs = []

    class Clone(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.clone()
            ctx.save_for_backward(y)
            refs.append(weakref.ref(y))
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * 2

    x = tp.randn(3, 3, requires_grad=True)

    def scope():
        out = checkpoint(Clone.apply, x, use_reentrant=False, early_stop=early_stop)
        out.sum().backward()

    gc.disable()
    try:
        scope()
        assert len(refs) == 2 and all(r() is None for r in refs)
    finally:
        gc.enable()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 3), 2.0))


def _non_det(lib, first, then):
    calls = []

    def fn(x):
        calls.append(1)
        return first(x) if len(calls) == 1 else then(x)
    return fn


def _error_of(lib, run):
    try:
        run()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return e
    return None


ERRORS = {
    # name: (run(lib, ck), class, the start of the message both raise)
    "fewer_saved_in_recomputation": (
        lambda lib, ck: ck.checkpoint(_non_det(lib, lambda x: x.sin().exp().sin(), lambda x: x.sin().exp()),
                                      lib.ones(1, requires_grad=True), use_reentrant=False).sum().backward(),
        "CheckpointError", "torch.utils.checkpoint: A different number of tensors was saved during the original "
                           "forward and recomputation.\nNumber of tensors saved during forward: 3\nNumber of tensors "
                           "saved during recomputation: 2."),
    "more_saved_in_recomputation": (
        lambda lib, ck: ck.checkpoint(_non_det(lib, lambda x: x.sin().exp(), lambda x: x.sin().exp().sin()),
                                      lib.ones(1, requires_grad=True), use_reentrant=False,
                                      early_stop=False).sum().backward(),
        "CheckpointError", "torch.utils.checkpoint: trying to save more tensors during recomputation than during "
                           "the original forward pass."),
    "different_metadata": (
        lambda lib, ck: ck.checkpoint(_non_det(lib, lambda x: x.sin().exp(),
                                               lambda x: x.sin() * lib.tensor([1.0, 2.0])),
                                      lib.ones(1, requires_grad=True), use_reentrant=False).sum().backward(),
        "CheckpointError", "torch.utils.checkpoint: Recomputed values for the following tensors have different "
                           "metadata than during the forward pass.\ntensor at position 1:"),
    "unpacked_twice": (
        lambda lib, ck: ck.checkpoint(lambda x: _UnpackTwice(lib).apply(x), lib.ones(2, requires_grad=True),
                                      use_reentrant=False).sum().backward(),
        "CheckpointError", "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
                           "once. If you are calling ctx.saved_tensors in backward, make sure to do so only once."),
    "overlapping_backwards_in_exec_group": (
        lambda lib, ck: _overlap(lib, ck),
        "CheckpointError", "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
                           "once. Performing two backward calls that overlap"),
    "nested_exec_groups": (
        lambda lib, ck: _nested_groups(ck),
        "RuntimeError", "GraphExecGroup contexts cannot be nested. Already inside group"),
    "bad_determinism_check": (
        lambda lib, ck: ck.checkpoint(lambda x: x, lib.ones(1), use_reentrant=False, determinism_check="shapes"),
        "ValueError", "determinism_check should be one of ['default', 'none'], but got shapes"),
    "debug_with_context_fn": (
        lambda lib, ck: ck.checkpoint(lambda x: x, lib.ones(1), use_reentrant=False, debug=True,
                                      context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext())),
        "ValueError", "debug=True is incompatible with non-default context_fn"),
    "reentrant_with_autograd_grad": (
        lambda lib, ck: _reentrant_grad(lib, ck),
        "RuntimeError", "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                        "`inputs` parameter to .backward()."),
    "reentrant_with_context_fn": (
        lambda lib, ck: ck.checkpoint(lambda x: x, lib.ones(1), use_reentrant=True, debug=True),
        "ValueError", "Passing `context_fn` or `debug` is only supported when use_reentrant=False."),
    "sac_bad_op": (lambda lib, ck: ck.create_selective_checkpoint_contexts([2]),
                   "ValueError", "Expected op in `op_list` to be an OpOverload but got: 2 of type <class 'int'>."),
    "sac_packet": (lambda lib, ck: ck.create_selective_checkpoint_contexts([_aten(lib).sin]),
                   "ValueError", "Expected op in `op_list` to be an OpOverload but got: "),
    "sac_not_a_policy": (lambda lib, ck: ck.create_selective_checkpoint_contexts(2),
                         "TypeError", "policy_fn_or_list must be either a function or a list of ops."),
    "sac_second_backward": (
        lambda lib, ck: _sac_twice(lib, ck),
        "RuntimeError", "Trying to backward an extra time. You are only allowed to backward once on any region "
                        "computed under selective activation checkpoint."),
    "sac_mutated_cache": (
        lambda lib, ck: _sac_mutated(lib, ck),
        "RuntimeError", "Tensor cached during selective activation checkpoint has been mutated"),
}


def _UnpackTwice(lib):
    class UnpackTwice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors  # noqa: B018
            ctx.saved_tensors  # noqa: B018
            return g * 2
    return UnpackTwice


def _reentrant_grad(lib, ck):
    a = lib.ones(2, requires_grad=True)
    lib.autograd.grad(ck.checkpoint(lib.exp, a, use_reentrant=True).sum(), (a,))


def _overlap(lib, ck):
    out = ck.checkpoint(lambda x: x.sin().cos(), lib.ones(2, requires_grad=True), use_reentrant=False)
    with ck.GraphExecGroup():
        out.sum().backward(retain_graph=True)
        out.sum().backward()


def _nested_groups(ck):
    with ck.GraphExecGroup(), ck.GraphExecGroup():
        pass


def _aten(lib):
    if lib is tp:
        from tapeflow.torch._ops import aten
        return aten
    return torch.ops.aten


def _sac(lib, ck, names, **kw):
    ops = [getattr(_aten(lib), n).default for n in names]
    return functools.partial(ck.create_selective_checkpoint_contexts, ops, **kw)


def _sac_twice(lib, ck):
    out = ck.checkpoint(lambda x: x.sin().cos().exp(), lib.ones(3, requires_grad=True), use_reentrant=False,
                        context_fn=_sac(lib, ck, ["sin"]))
    out.sum().backward(retain_graph=True)
    out.sum().backward()


def _sac_mutated(lib, ck):
    out = ck.checkpoint(lambda x: x.sin().mul_(2).cos().exp(), lib.ones(3, requires_grad=True),
                        use_reentrant=False, context_fn=_sac(lib, ck, ["sin"]))
    out.sum().backward()


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    import torch.utils.checkpoint as tc

    run, cls, start = ERRORS[name]
    mine, theirs = _error_of(tp, lambda: run(tp, tp.utils.checkpoint)), _error_of(torch, lambda: run(torch, tc))
    assert type(theirs).__name__ == cls and str(theirs).startswith(start), theirs
    assert type(mine).__name__ == cls and str(mine).startswith(start), mine
    assert isinstance(mine, RuntimeError) == isinstance(theirs, RuntimeError)


@pytest.mark.oracle
def test_debug_mode_shows_both_op_logs():
    import torch.utils.checkpoint as tc

    def run(lib, ck, debug_flag):
        fn = _non_det(lib, lambda x: x.sin().exp(), lambda x: x.sin() * lib.tensor([1.0, 2.0]))
        with ck.set_checkpoint_debug_enabled(debug_flag):
            ck.checkpoint(fn, lib.ones(1, requires_grad=True), use_reentrant=False, debug=True).sum().backward()

    for flag, shown in ((None, True), (True, True), (False, False)):
        for lib, ck in ((tp, tp.utils.checkpoint), (torch, tc)):
            with pytest.raises(RuntimeError) as info:
                run(lib, ck, flag)
            assert type(info.value).__name__ == "CheckpointError"
            assert ("You are seeing this error because you passed `debug=True` to checkpoint" in str(info.value)) \
                == shown
            if lib is tp and shown:  # the recomputation's log names the op that differs
                assert "mul([1], [2])" in str(info.value)


# -- selective activation checkpointing ------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("saved", [[], ["sin"], ["sin", "exp"], ["cos", "mm"]])
def test_selective_checkpoint_matches_pytorch(saved):
    import torch.utils.checkpoint as tc

    def run(lib, ck):
        calls = []

        def policy(ctx, op, *args, **kwargs):
            calls.append(ctx.is_recompute)
            return op in [getattr(_aten(lib), n).default for n in saved]

        w = lib.tensor(np.random.default_rng(3).normal(size=(3, 3)), requires_grad=True)
        x = lib.tensor(np.random.default_rng(4).normal(size=(2, 3)), requires_grad=True)
        ctx_fn = functools.partial(ck.create_selective_checkpoint_contexts, policy)
        out = ck.checkpoint(lambda a, b: lib.mm(a.sin(), b).cos().exp(), x, w, use_reentrant=False,
                            context_fn=ctx_fn)
        out.sum().backward()
        return calls, out.detach().numpy(), x.grad.numpy(), w.grad.numpy()

    _assert_same(run(tp, tp.utils.checkpoint), run(torch, tc))


def test_aten_names_are_the_dispatched_ops():
    import xla_ops
    from tapeflow.torch._ops import OpOverloadPacket, aten

    assert aten.sin.default is xla_ops.TABLE["sin"] and aten.add.Tensor is xla_ops.TABLE["add"]
    assert aten.view.default is xla_ops.TABLE["reshape"]
    assert isinstance(aten.mm, OpOverloadPacket)
    with pytest.raises(AttributeError, match="tapeflow has no op aten.no_such_op"):
        aten.no_such_op  # noqa: B018
    tapeflow_torch = pytest.importorskip("tapeflow.torch")
    tapeflow_torch.install()
    try:
        import torch as aliased
        assert aliased.ops.aten.mm.default is xla_ops.TABLE["mm"]
    finally:
        tapeflow_torch.uninstall()


@pytest.mark.oracle
def test_forward_context_that_swallows_the_error_is_refused():
    import torch.utils.checkpoint as tc

    def boom(x):
        raise KeyError("inside")

    for lib, ck in ((tp, tp.utils.checkpoint), (torch, tc)):
        ctx_fn = lambda: (contextlib.suppress(KeyError), contextlib.nullcontext())  # noqa: E731
        with pytest.raises(RuntimeError, match="the forward context provided by context_fn suppressed an exception"):
            ck.checkpoint(boom, lib.ones(1, requires_grad=True), use_reentrant=False, context_fn=ctx_fn)


@pytest.mark.parametrize("reentrant", [False, True])
def test_recomputation_runs_under_the_forwards_autocast_state(reentrant):
    """The recomputation takes the autocast state of the forward, whatever the backward runs under (a block
    checkpointed under bfloat16 autocast recomputes in bfloat16: no metadata mismatch; one checkpointed
    outside autocast recomputes in float32 even when backward runs inside one), as PyTorch's checkpoint does."""
    from tapeflow.utils.checkpoint import checkpoint

    x = tp.tensor(np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32), requires_grad=True)

    def block(t):
        return tp.mm(tp.mm(t, t), t)

    def grad(checkpointed, forward_autocast, backward_autocast):
        x.grad = None
        run = (lambda t: checkpoint(block, t, use_reentrant=reentrant)) if checkpointed else block
        with tp.autocast("cpu", dtype=tp.bfloat16, enabled=forward_autocast):
            out = run(x).sum()
        with tp.autocast("cpu", dtype=tp.bfloat16, enabled=backward_autocast):
            out.backward()
        return x.grad.clone()

    for forward_autocast, backward_autocast in ((True, False), (False, True), (True, True)):
        tp.testing.assert_close(grad(True, forward_autocast, backward_autocast),
                                grad(False, forward_autocast, backward_autocast), rtol=0, atol=0)
