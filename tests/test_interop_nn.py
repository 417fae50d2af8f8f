"""The JAX bridge with nn.Module and optimizers: pytrees, tp.compile of training steps, equinox, optax."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp

nn = pytest.importorskip("tapeflow.nn")
optim = pytest.importorskip("tapeflow.optim")


def _model(seed=0, dropout=0.0, batchnorm=False, first_bias=True):
    tp.manual_seed(seed)
    layers = [nn.Linear(4, 8, bias=first_bias)]
    if batchnorm:
        layers.append(nn.BatchNorm1d(8))
    layers.append(nn.ReLU())
    if dropout:
        layers.append(nn.Dropout(dropout))
    layers.append(nn.Linear(8, 2))
    return nn.Sequential(*layers)


def _data():
    tp.manual_seed(99)
    return tp.randn(16, 4), tp.randn(16, 2)


# -- pytrees ------------------------------------------------------------------------------------------------------
def test_module_leaves_map_and_jit():
    m = _model(batchnorm=True)
    leaves = jax.tree.leaves(m)
    named = [t for _, t in m.named_parameters()] + [t for _, t in m.named_buffers()]
    assert sorted(a.shape for a in leaves) == sorted(tuple(t.shape) for t in named)
    zeroed = jax.tree.map(jnp.zeros_like, m)
    assert type(zeroed) is type(m) and type(zeroed[0]) is nn.Linear and zeroed is not m
    assert isinstance(zeroed[0].weight, nn.Parameter) and zeroed[0].weight.sum().item() == 0.0
    assert m[0].weight.abs().sum().item() > 0  # the original is untouched
    x = tp.randn(3, 4)
    out = jax.jit(lambda mod, inp: mod(inp))(m.eval(), x)
    tp.testing.assert_close(out.detach(), m(x).detach())


def test_key_paths_name_parameters_and_state():
    m = _model(batchnorm=True)
    paths = [jax.tree_util.keystr(k) for k, _ in jax.tree_util.tree_leaves_with_path(m)]
    assert paths[:2] == [".0.weight.data", ".0.bias.data"] and ".1.running_mean.data" in paths
    opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(tp.randn(4, 4)).sum().backward()
    opt.step()
    keys = [jax.tree_util.keystr(k) for k, _ in jax.tree_util.tree_leaves_with_path(opt)]
    assert keys[0] == "[0]['momentum_buffer'].data"


def test_optimizer_state_is_a_pytree():
    m = _model()
    opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    assert jax.tree.leaves(opt) == []
    m(tp.randn(2, 4)).sum().backward()
    opt.step()
    bufs = jax.tree.leaves(opt)
    assert [b.shape for b in bufs] == [tuple(p.shape) for p in m.parameters()]
    halved = jax.tree.map(lambda a: a / 2, opt)
    p0 = next(iter(m.parameters()))
    assert type(halved) is type(opt) and halved.param_groups is opt.param_groups
    tp.testing.assert_close(halved.state[p0]["momentum_buffer"], opt.state[p0]["momentum_buffer"] / 2)


# -- tp.compile of real training steps ---------------------------------------------------------------------------------
def _training_step(m, opt):
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


@pytest.mark.parametrize("config", [
    dict(opt=lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), dropout=0.3, batchnorm=True),
    dict(opt=lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    dict(opt=lambda ps: optim.Adam(ps, lr=0.05), dropout=0.2, batchnorm=True),
    dict(opt=lambda ps: optim.AdamW(ps, lr=0.05, amsgrad=True)),
    dict(opt=lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True)),
])
def test_compiled_training_step_equals_eager(config):
    x, y = _data()
    runs = []
    for compiled in (False, True):
        # A bias right before BatchNorm gets only a rounding-noise gradient, which Adam scales up to full steps.
        bn = config.get("batchnorm", False)
        m = _model(dropout=config.get("dropout", 0.0), batchnorm=bn, first_bias=not bn)
        opt = config["opt"](m.parameters())
        params = list(m.parameters())
        step = _training_step(m, opt)
        run = tp.compile(step) if compiled else step
        tp.manual_seed(3)
        losses = [run(x, y).item() for _ in range(3)]
        if compiled:
            assert run.traces == 2  # step one creates the optimizer state; later steps reuse one program
        assert [p is q for p, q in zip(params, m.parameters())] == [True] * len(params)
        runs.append((losses, [np.asarray(a) for a in jax.tree.leaves(m)], [np.asarray(a) for a in jax.tree.leaves(opt)]))
    (l0, m0, o0), (l1, m1, o1) = runs
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    for a, b in zip(m0 + o0, m1 + o1):  # float32 state of magnitude ~10: a few ulps are ~1e-6
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_compile_retraces_on_train_eval_switch():
    m = _model(dropout=0.5)
    f = tp.compile(lambda x: m(x))
    x = tp.ones(2, 4)
    with tp.no_grad():  # (outputs without history: a compiled program; with it the forward runs eagerly)
        f(x)
        m.eval()
        tp.testing.assert_close(f(x), m(x))
    assert f.traces == 2


# -- equinox and optax -------------------------------------------------------------------------------------------------
def test_to_equinox_gradients_equal_tapeflow():
    eqx = pytest.importorskip("equinox")
    m = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    x = tp.randn(4, 3)
    (m(x) ** 2).mean().backward()
    em = tp.interop.to_equinox(m)
    grads = eqx.filter_jit(eqx.filter_grad(lambda mod, a: (mod(a) ** 2).mean()))(em, x._data)
    for name, p in m.named_parameters():
        np.testing.assert_allclose(np.asarray(grads.params[name]), p.grad.numpy(), rtol=1e-5, atol=1e-7)
    ys = jax.vmap(em)(x._data[:, None, :])
    np.testing.assert_allclose(np.asarray(ys)[:, 0], m(x).detach().numpy(), rtol=1e-5)


def test_optax_trains_a_tapeflow_model():
    optax = pytest.importorskip("optax")
    tp.manual_seed(0)
    m = nn.Linear(3, 1)
    x = tp.randn(32, 3)
    y = x @ tp.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    tx = optax.adam(0.1)
    opt_state = tx.init(tp.interop.to_jax(dict(m.named_parameters())))
    first = None
    for _ in range(60):
        m.zero_grad()
        loss = nn.functional.mse_loss(m(x), y)
        loss.backward()
        first = first if first is not None else loss.item()
        params = tp.interop.to_jax(dict(m.named_parameters()))
        grads = {n: p.grad._data for n, p in m.named_parameters()}
        updates, opt_state = tx.update(grads, opt_state, params)
        with tp.no_grad():
            for n, p in m.named_parameters():
                p.add_(tp.interop.from_jax(updates[n]))
    assert loss.item() < 0.05 * first


def test_to_jax_module_and_compiled_module_forward():
    m = _model(batchnorm=True)
    arrays = tp.interop.to_jax(m)
    assert set(arrays) == {n for n, _ in m.named_parameters()} | {n for n, _ in m.named_buffers()}
    assert arrays["0.weight"] is m[0].weight._data
    fwd = tp.compile(m)
    x = tp.randn(6, 4)
    before = m[1].running_mean.detach().numpy().copy()
    fwd(x)  # training mode: BatchNorm's running statistics are updated and written back
    assert not np.allclose(m[1].running_mean.detach().numpy(), before)
    m.eval()
    tp.testing.assert_close(fwd(x), m(x).detach())


def test_donated_state_still_updates_in_place():
    m = _model()
    opt = optim.SGD(m.parameters(), lr=0.1)
    step = tp.compile(_training_step(m, opt), donate_state=True)
    x, y = _data()
    w = m[0].weight
    losses = [step(x, y).item() for _ in range(3)]
    assert losses[2] < losses[0] and m[0].weight is w and np.isfinite(w.detach().numpy()).all()


def _penalty_run(compiled):
    tp.manual_seed(0)
    m = nn.Linear(3, 1)
    opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    m.weight.register_hook(lambda g: g * 0.5)

    def step(x):
        opt.zero_grad(set_to_none=False)
        x = x.clone().requires_grad_()
        out = m(x).sum()
        (gx,) = tp.autograd.grad(out, x, create_graph=True)  # gradient penalty: double backward
        loss = out + (gx ** 2).sum()
        loss.backward()
        opt.step()
        return loss

    run = tp.compile(step) if compiled else step
    x = tp.randn(4, 3)
    losses = []
    for _ in range(5):
        losses.append(run(x).item())
        sched.step()
    return losses, m.weight.detach().numpy(), getattr(run, "traces", None)


def test_compile_with_hooks_double_backward_and_lr_schedule():
    (l0, w0, _), (l1, w1, traces) = _penalty_run(False), _penalty_run(True)
    np.testing.assert_allclose(l1, l0, rtol=1e-6)
    np.testing.assert_allclose(w1, w0, rtol=1e-6)
    assert traces == 2  # first step, then optimizer state created; the learning rate is a program input


def test_learning_rate_changed_inside_the_compiled_function_is_kept():
    m = nn.Linear(2, 1)
    opt = optim.SGD(m.parameters(), lr=0.1)

    @tp.compile
    def step(x):
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
        for g in opt.param_groups:
            g["lr"] = g["lr"] * 0.5

    for _ in range(3):
        step(tp.ones(1, 2))
    assert opt.param_groups[0]["lr"] == pytest.approx(0.0125) and step.traces == 2


# -- donation: the new values of replaced state go into the old buffers when nothing else holds them ------------------
def _donating_used(step) -> bool:
    """Whether the last call of the compiled `step` ran the program variant that donates the replaced state."""
    entry = step._record.slot.program
    return entry.donating is not None and entry.plain is None


def test_replaced_state_is_donated_when_only_its_tensors_hold_it():
    m = _model()
    opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    step = tp.compile(_training_step(m, opt))
    x, y = _data()
    ref_m = _model()
    ref_opt = optim.SGD(ref_m.parameters(), lr=0.1, momentum=0.9)
    ref_step = _training_step(ref_m, ref_opt)
    for _ in range(4):
        np.testing.assert_allclose(step(x, y).item(), ref_step(x, y).item(), rtol=1e-5)
    assert _donating_used(step)
    for p, q in zip(m.parameters(), ref_m.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("holder", ["to_jax", "detach", "view", "numpy", "retained graph", "old grad"])
def test_state_held_elsewhere_is_never_donated(holder):
    m = _model()
    opt = optim.SGD(m.parameters(), lr=0.1)
    step = tp.compile(_training_step(m, opt))
    x, y = _data()
    step(x, y)
    w = m[0].weight
    before = w.detach().numpy().copy()
    if holder == "to_jax":
        kept = tp.interop.to_jax(w)
    elif holder == "detach":
        kept = w.detach()
    elif holder == "view":
        kept = w[0]
    elif holder == "numpy":
        kept = w.detach().numpy()
    elif holder == "retained graph":
        kept = (w * 2).sum()
    else:
        kept, before = w.grad, w.grad.numpy().copy()
    step(x, y)
    after = w.detach().numpy()
    assert not np.allclose(after, before)
    if holder == "to_jax":  # an immutable array: the values it had
        np.testing.assert_array_equal(np.asarray(kept), before)
    elif holder in ("detach", "view"):  # aliases: PyTorch shows them the update
        np.testing.assert_array_equal(kept.detach().numpy(), after if holder == "detach" else after[0])
    elif holder == "numpy":
        np.testing.assert_array_equal(kept, before)
    elif holder == "retained graph":
        g = w.grad.numpy().copy()
        kept.backward()  # the graph made before the step still runs
        np.testing.assert_allclose(w.grad.numpy(), g + 2.0)
    else:
        assert np.isfinite(kept.numpy()).all()


def test_a_grad_the_step_clears_is_not_donated():
    w = tp.tensor([1.0, 2.0], requires_grad=True)

    @tp.compile
    def clear_and_descend(x):
        g = w.grad
        w.grad = None
        with tp.no_grad():
            w.sub_(0.1 * g * x)

    for _ in range(3):
        (w * w).sum().backward()
        old, expected = w.grad, w.grad.numpy().copy()
        clear_and_descend(tp.ones(2))
        assert w.grad is None
        np.testing.assert_array_equal(old.numpy(), expected)  # the tensor the user kept keeps its values
