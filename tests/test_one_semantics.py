"""One semantics on every path: at kinks and ties, through `detach` / `.data` / `no_grad`, and with hooks.

Each case is a scalar function written once against the torch-like API (`lib` is `tapeflow` or
`torch`, `F` its `nn.functional`) and a point where PyTorch picks a subgradient. Every tapeflow path
must give the tape's gradient: `tp.func.grad` (first and compiled call), `autograd.functional.vjp`
(default and `create_graph=True`), `jax.grad` / `jax.jit(jax.grad)` of `to_jax(f)`, `tp.compile`,
`tp.func.jacfwd` and the tape's own forward mode (`forward_ad`). The tape must equal PyTorch where
torch is installed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapeflow as tp
import tapeflow.nn.functional as TF
from tapeflow.autograd import forward_ad as fwAD
from tapeflow.interop import to_jax

try:
    import torch
    import torch.nn.functional as TORCH_F
except ImportError:  # pragma: no cover - the oracle is optional
    torch = None


def _w(lib, x):
    """Distinct weights per element, so every entry of the gradient is visible."""
    return lib.linspace(1.0, 2.0, x.numel(), dtype=x.dtype).reshape(x.shape)


def _ew(g):
    """A weighted sum of an elementwise function."""
    return lambda lib, F, x: (g(lib, F, x) * _w(lib, x)).sum()


def _no_grad_block(lib, F, x):
    with lib.no_grad():
        y = x * 3
    return (x * y).sum()


def _detached_write(lib, F, x):
    y = x * 1
    y.detach().mul_(2)
    return (y * x).sum()


def _data_read(lib, F, x):
    return (x * x.data * _w(lib, x)).sum()


def _hooked(lib, F, x):
    y = x * 2
    y.register_hook(lambda g: g * 10)
    return (y * y).sum()


Z3, T3 = [0.0, 1.0, -2.0], [1.0, 3.0, 3.0, -1.0]

CASES = {
    # kinks at 0
    "abs": (_ew(lambda lib, F, x: x.abs()), Z3),
    "relu": (_ew(lambda lib, F, x: F.relu(x)), Z3),
    "sign": (_ew(lambda lib, F, x: x.sign() * x), Z3),
    "leaky_relu": (_ew(lambda lib, F, x: F.leaky_relu(x, 0.1)), Z3),
    "elu": (_ew(lambda lib, F, x: F.elu(x, alpha=0.5)), Z3),
    "celu": (_ew(lambda lib, F, x: F.celu(x, alpha=0.5)), Z3),
    "selu": (_ew(lambda lib, F, x: F.selu(x)), Z3),
    "l1_loss": (lambda lib, F, x: F.l1_loss(x, lib.zeros_like(x)), Z3),
    "smooth_l1_loss": (lambda lib, F, x: F.smooth_l1_loss(x, lib.zeros_like(x), beta=1.0), [0.0, 1.0, -1.0, 2.0]),
    "huber_loss": (lambda lib, F, x: F.huber_loss(x, lib.zeros_like(x), delta=1.0), [0.0, 1.0, -1.0, 2.0]),
    # bounds
    "clamp": (_ew(lambda lib, F, x: x.clamp(0.0, 1.0)), [0.0, 1.0, 0.5, 2.0]),
    "clamp_min": (_ew(lambda lib, F, x: x.clamp(min=0.0)), Z3),
    "clamp_max": (_ew(lambda lib, F, x: x.clamp(max=1.0)), [1.0, 0.0, 2.0]),
    "hardtanh": (_ew(lambda lib, F, x: F.hardtanh(x)), [-1.0, 1.0, 0.0, 2.0]),
    "relu6": (_ew(lambda lib, F, x: F.relu6(x)), [0.0, 6.0, 3.0, 7.0]),
    "hardsigmoid": (_ew(lambda lib, F, x: F.hardsigmoid(x)), [-3.0, 3.0, 0.0, 4.0]),
    "hardswish": (_ew(lambda lib, F, x: F.hardswish(x)), [-3.0, 3.0, 0.0, 4.0]),
    "softshrink": (_ew(lambda lib, F, x: F.softshrink(x, 0.5)), [0.5, -0.5, 0.0, 1.0]),
    "hardshrink": (_ew(lambda lib, F, x: F.hardshrink(x, 0.5)), [0.5, -0.5, 0.0, 1.0]),
    "threshold": (_ew(lambda lib, F, x: F.threshold(x, 1.0, -2.0)), [1.0, 0.0, 2.0]),
    # ties
    "max": (lambda lib, F, x: x.max() * 2, T3),
    "min": (lambda lib, F, x: x.min() * 2, [1.0, -1.0, 3.0, -1.0]),
    "max_dim": (lambda lib, F, x: (x.reshape(2, 2).max(dim=1).values * lib.tensor([1.0, 2.0], dtype=x.dtype)).sum(),
                [3.0, 3.0, 1.0, 1.0]),
    "amax": (lambda lib, F, x: x.amax() * 2, T3),
    "amin": (lambda lib, F, x: x.amin() * 2, [1.0, -1.0, 3.0, -1.0]),
    "maximum": (lambda lib, F, x: (lib.maximum(x, lib.ones_like(x)) * _w(lib, x)).sum(), [1.0, 0.0, 2.0]),
    "minimum": (lambda lib, F, x: (lib.minimum(x, lib.ones_like(x)) * _w(lib, x)).sum(), [1.0, 0.0, 2.0]),
    "sort": (lambda lib, F, x: (x.sort().values * _w(lib, x)).sum(), [2.0, 1.0, 2.0, 1.0]),
    "topk": (lambda lib, F, x: (x.topk(2).values * lib.tensor([1.0, 2.0], dtype=x.dtype)).sum(), T3),
    "median": (lambda lib, F, x: x.median() * 2, [1.0, 2.0, 2.0, 3.0, 2.0]),
    "median_dim": (lambda lib, F, x: (x.reshape(2, 3).median(dim=1).values * lib.tensor([1.0, 2.0], dtype=x.dtype))
                   .sum(), [1.0, 2.0, 2.0, 5.0, 5.0, 4.0]),
    "kthvalue": (lambda lib, F, x: x.kthvalue(2).values * 2, [1.0, 2.0, 2.0, 3.0]),
    "cummax": (lambda lib, F, x: (x.cummax(0).values * _w(lib, x)).sum(), [1.0, 1.0, 0.0, 2.0]),
    "cummin": (lambda lib, F, x: (x.cummin(0).values * _w(lib, x)).sum(), [1.0, 1.0, 2.0, 0.0]),
    "max_pool": (lambda lib, F, x: (F.max_pool1d(x.reshape(1, 1, 4), 2) * 3).sum(), [1.0, 1.0, 2.0, 2.0]),
    # norms and square roots at 0
    "norm": (lambda lib, F, x: x.norm(), [0.0, 0.0, 0.0]),
    "norm_1": (lambda lib, F, x: lib.linalg.vector_norm(x, 1), [0.0, 1.0, -2.0]),
    "norm_inf": (lambda lib, F, x: lib.linalg.vector_norm(x, float("inf")), [0.0, 2.0, -2.0]),
    "sqrt_sum_sq": (lambda lib, F, x: (x * x).sum().sqrt(), [0.0, 0.0]),
    "normalize": (lambda lib, F, x: (F.normalize(x, dim=0) * _w(lib, x)).sum(), [0.0, 0.0, 0.0]),
    # what the tape does not differentiate
    "detach": (lambda lib, F, x: (x * x.detach() * _w(lib, x)).sum(), Z3),
    "data": (_data_read, Z3),
    "no_grad": (_no_grad_block, Z3),
    "detached_write": (_detached_write, Z3),
    "hook": (_hooked, Z3),
}

# Not checked in forward mode: hooks are backward-only (as in PyTorch) and JAX's forward mode refuses them;
# forward AD refuses a write through a detached alias of a dual tensor (its tangent would go stale); the tape's
# forward AD, like PyTorch's, ignores grad mode (see test_forward_ad_ignores_no_grad_as_pytorch_does).
NO_FORWARD = {"hook", "detached_write", "no_grad"}


def _tp(name):
    fn, x = CASES[name]
    return (lambda x: fn(tp, TF, x)), np.asarray(x, np.float64)


def _tape_grad(f, x):
    xt = tp.tensor(x, requires_grad=True)
    f(xt).backward()
    return xt.grad.numpy()


def _close(a, b, what, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=1e-12,
                               equal_nan=True, err_msg=what)


def _compiled_grad(f, x):
    leaf = tp.tensor(x, requires_grad=True)

    @tp.compile
    def step():
        leaf.grad = None
        f(leaf).backward()
        return leaf.grad

    step()
    return step().numpy()


def _forward_mode(f, x):
    """The gradient of scalar `f` from one forward-mode product per input element (on the tape)."""
    out = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = 1.0
        with fwAD.dual_level():
            dual = fwAD.make_dual(tp.tensor(x), tp.tensor(e))
            t = fwAD.unpack_dual(f(dual)).tangent
        out.append(0.0 if t is None else float(t))
    return np.asarray(out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_path_gives_the_tapes_gradient(name):
    f, x = _tp(name)
    want = _tape_grad(f, x)
    got = {
        "tp.func.grad, first call": tp.func.grad(f)(tp.tensor(x)).numpy(),
        "autograd.functional.vjp": tp.autograd.functional.vjp(f, tp.tensor(x))[1].numpy(),
        "autograd.functional.vjp(create_graph=True)":
            tp.autograd.functional.vjp(f, tp.tensor(x), create_graph=True)[1].detach().numpy(),
        "jax.grad(to_jax(f))": jax.grad(to_jax(f))(jnp.asarray(x)),
        "jax.jit(jax.grad(to_jax(f)))": jax.jit(jax.grad(to_jax(f)))(jnp.asarray(x)),
        "tp.compile": _compiled_grad(f, x),
    }
    for _ in range(2):  # compiled from the second call with the same key
        got["tp.func.grad, compiled"] = tp.func.grad(f)(tp.tensor(x)).numpy()
    if name not in NO_FORWARD:
        got["tp.func.jacfwd"] = tp.func.jacfwd(f)(tp.tensor(x)).numpy()
        got["forward_ad"] = _forward_mode(f, x)
    for path, g in got.items():
        _close(g, want, f"{name}: {path} vs the tape")


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_tape_equals_pytorch(name):
    fn, x = CASES[name]
    f, _ = _tp(name)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    fn(torch, TORCH_F, xt).backward()
    # PyTorch's hardsigmoid kernel scales by a float32 1/6, hence the tolerance.
    _close(_tape_grad(f, np.asarray(x, np.float64)), xt.grad.numpy(), f"{name}: tape vs PyTorch", rtol=1e-7)


def test_hessian_paths_agree_at_a_kink():
    """Second order through the table rule: the tape's double backward, `tp.func.hessian` and
    `autograd.functional.hessian` agree where JAX's own rules would differ (relu at 0 under a square)."""
    def f(x):
        return (TF.relu(x) ** 2 * x).sum() + x.abs().sum() * x.sum()

    x = np.asarray([0.0, 1.0, -2.0])
    want = tp.autograd.functional.hessian(f, tp.tensor(x)).numpy()
    xt = tp.tensor(x, requires_grad=True)
    (g,) = tp.autograd.grad(f(xt), xt, create_graph=True)
    rows = [tp.autograd.grad(g[i], xt, retain_graph=True)[0].numpy() for i in range(3)]
    _close(np.stack(rows), want, "tape double backward vs functional.hessian")
    _close(tp.func.hessian(f)(tp.tensor(x)).numpy(), want, "tp.func.hessian vs functional.hessian")
    _close(jax.hessian(to_jax(f))(jnp.asarray(x)), want, "jax.hessian(to_jax(f)) vs functional.hessian")


def test_a_hook_that_reads_values_raises_under_jit():
    def f(x):
        y = x * 2
        y.register_hook(lambda g: g * float(g.sum()))
        return (y * y).sum()

    with pytest.raises(RuntimeError, match="hook .* reads the gradient's values on the host"):
        jax.jit(jax.grad(to_jax(f)))(jnp.ones(3))


def test_outer_no_grad_does_not_reach_into_a_transform():
    """As `torch.func.grad` ignores an enclosing `no_grad`, so do tapeflow's transforms."""
    with tp.no_grad():
        g = tp.func.grad(lambda x: (x * x).sum())(tp.tensor([1.0, 2.0]))
    _close(g.numpy(), [2.0, 4.0], "tp.func.grad under an outer no_grad")


def test_hook_removed_before_the_transform_runs():
    def f(x):
        y = x * 2
        h = y.register_hook(lambda g: g * 10)
        h.remove()
        return (y * y).sum()

    _close(jax.grad(to_jax(f))(jnp.ones(2)), [8.0, 8.0], "a removed hook")


def test_forward_ad_ignores_no_grad_as_pytorch_does():
    """PyTorch's forward AD is not affected by grad mode: a tangent flows through a `no_grad` block."""
    x = np.asarray([0.0, 1.0, -2.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(tp.tensor(x), tp.ones(3, dtype=tp.float64))
        with tp.no_grad():
            y = dual * 3
        _close(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 3.0, 3.0], "tangent through no_grad")


def test_extension_points_are_per_thread():
    """A profiler (an op interceptor) on one thread does not see ops run by another, as grad mode is per thread."""
    import threading

    from tapeflow._state import state

    seen = []
    with tp.autograd.profiler.profile() as prof:
        t = threading.Thread(target=lambda: seen.append((len(state.interceptors), float((tp.ones(3) * 2).sum()))))
        t.start()
        t.join()
        tp.ones(2).exp()
    assert seen == [(0, 6.0)], "the other thread ran with this thread's interceptors"
    names = {e.key for e in prof.key_averages()}
    assert any("exp" in n for n in names) and not any("mul" in n for n in names), names


def test_a_hook_fires_again_in_the_second_backward_as_in_pytorch():
    f, x = _tp("hook")
    want = tp.autograd.functional.hessian(f, tp.tensor(x)).numpy()
    xt = tp.tensor(x, requires_grad=True)
    (g,) = tp.autograd.grad(f(xt), xt, create_graph=True)
    rows = np.stack([tp.autograd.grad(g[i], xt, retain_graph=True)[0].numpy() for i in range(x.size)])
    _close(rows, want, "double backward vs functional.hessian")
    _close(jax.jacrev(jax.jacrev(to_jax(f)))(jnp.asarray(x)), want, "jax.jacrev(jax.jacrev(to_jax(f)))")
    if torch is not None:
        fn, _ = CASES["hook"]
        ref = torch.autograd.functional.hessian(lambda t: fn(torch, TORCH_F, t), torch.tensor(x))
        _close(want, ref.numpy(), "functional.hessian vs PyTorch")
    with pytest.raises(RuntimeError, match="forward mode"):
        tp.func.hessian(f)(tp.tensor(x))
