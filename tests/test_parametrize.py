"""nn.utils.parametrize and parametrizations.weight_norm: names, state dicts, values, gradients, assignment through
right_inverse and removal equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

        def right_inverse(self, X):
            return X.triu()

    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, X):
            return X / 2

    return Symmetric(), Scale()


def _modules(lib):
    wn = lib.nn.utils.parametrizations.weight_norm(lib.nn.Conv2d(2, 3, 2), dim=1).double()
    sym = lib.nn.Linear(3, 3).double()
    for p in _symmetric(lib):
        lib.nn.utils.parametrize.register_parametrization(sym, "weight", p)
    return wn, sym


def _run(lib, state):
    P = lib.nn.utils.parametrize
    wn, sym = _modules(lib)
    wn.load_state_dict({k: lib.tensor(v) for k, v in state["wn"].items()})
    sym.load_state_dict({k: lib.tensor(v) for k, v in state["sym"].items()})
    x = lib.tensor(np.random.default_rng(0).normal(size=(1, 2, 4, 4)))
    y = lib.tensor(np.random.default_rng(1).normal(size=(2, 3)))
    (wn(x).pow(2).sum() + sym(y).pow(2).sum()).backward()
    out = [wn.weight.detach().numpy(), sym.weight.detach().numpy()]
    out += [p.grad.numpy() for _, p in sorted(wn.named_parameters())] + [p.grad.numpy() for _, p in
                                                                        sorted(sym.named_parameters())]
    with lib.no_grad():
        sym.weight = lib.tensor(np.arange(9.0).reshape(3, 3))  # through Scale.right_inverse
    out.append(sym.parametrizations.weight.original.detach().numpy())
    keys = [list(wn.state_dict()), list(sym.state_dict()), type(wn).__name__, P.is_parametrized(sym, "bias")]
    P.remove_parametrizations(wn, "weight")
    P.remove_parametrizations(sym, "weight", leave_parametrized=False)
    out += [wn.weight.detach().numpy(), sym.weight.detach().numpy()]
    keys += [list(wn.state_dict()), type(wn).__name__, P.is_parametrized(sym)]
    return out, keys


def test_parametrizations_equal_pytorch():
    torch.manual_seed(0)
    state = {k: {n: v.numpy() for n, v in m.state_dict().items()} for k, m in zip(("wn", "sym"), _modules(torch))}
    (mine, k1), (theirs, k2) = _run(tp, state), _run(torch, state)
    assert k1 == k2
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=str(i))


def test_errors():
    P = tp.nn.utils.parametrize
    m = tp.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name"):
        P.register_parametrization(m, "nope", _symmetric(tp)[0])
    tp.nn.utils.parametrizations.weight_norm(m)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)

    class NoInverse(tp.nn.Module):
        def forward(self, X):
            return X * 3

    P.register_parametrization(m, "bias", NoInverse())
    with pytest.raises(RuntimeError, match="parametrization NoInverse does not implement right_inverse"):
        m.bias = tp.zeros(2)


@pytest.mark.parametrize("kind", ["Linear", "ConvTranspose2d"])
def test_spectral_norm_parametrization_equals_pytorch(kind):
    def build(lib):
        layer = lib.nn.Linear(4, 3) if kind == "Linear" else lib.nn.ConvTranspose2d(2, 3, 2)
        return lib.nn.utils.parametrizations.spectral_norm(layer.double(), n_power_iterations=2)

    torch.manual_seed(0)
    state = {k: v.numpy() for k, v in build(torch).state_dict().items()}
    shape = (2, 4) if kind == "Linear" else (1, 2, 3, 3)
    results = []
    for lib in (tp, torch):
        m = build(lib)
        m.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        outs = []
        for train in (True, True, False):
            m.train(train)
            x = lib.tensor(np.random.default_rng(len(outs)).normal(size=shape), requires_grad=True)
            y = m(x)
            y.pow(2).sum().backward()
            outs += [y.detach().numpy(), x.grad.numpy()]
        outs += [p.grad.numpy() for _, p in sorted(m.named_parameters())]
        outs += [v.numpy() for _, v in sorted(m.state_dict().items())]
        results.append((outs, list(m.state_dict())))
    assert results[0][1] == results[1][1]
    for i, (a, b) in enumerate(zip(results[0][0], results[1][0])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=str(i))


def test_registration_runs_the_parametrization_once_as_pytorch():
    """PyTorch's consistency check at registration runs the parametrization (spectral_norm's power iteration
    advances once more) and refuses a change of shape or dtype, on a first and an appended parametrization."""
    torch = pytest.importorskip("torch")

    def run(m):
        m.manual_seed(0)
        sn = m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(6, 3))
        u = [round(v, 6) for v in sn.parametrizations.weight[0]._u.tolist()]
        P = m.nn.utils.parametrize

        class Double(m.nn.Module):
            def forward(self, x):
                return x.double()

        class Flat(m.nn.Module):
            def forward(self, x):
                return x.reshape(-1)

        errors = []
        for first, second in ((Double(), None), (Flat(), None), (m.nn.Identity(), Double()), (m.nn.Identity(), Flat())):
            lin = m.nn.Linear(2, 2)
            try:
                P.register_parametrization(lin, "weight", first)
                if second is not None:
                    P.register_parametrization(lin, "weight", second)
            except ValueError as e:
                errors.append(str(e).replace("tapeflow", "torch"))
        ok = P.register_parametrization(m.nn.Linear(2, 2), "weight", Flat(), unsafe=True).weight.shape
        return u, errors, tuple(ok)

    assert run(tp) == run(torch)


def _cached_program(L):
    """A recurrence reading a parametrized weight at every step inside `parametrize.cached()`, nested blocks."""
    P = L.nn.utils.parametrize
    L.manual_seed(0)
    cell = L.nn.utils.parametrizations.weight_norm(L.nn.Linear(3, 3))
    x = L.ones(2, 3)
    with P.cached():
        with P.cached():
            same_inside = cell.weight is cell.weight
        still_cached = cell.weight is cell.weight  # (the outer block keeps it)
        h = x
        for _ in range(3):
            h = L.tanh(cell(h))
    fresh_after = cell.weight is not cell.weight
    h.sum().backward()
    grads = [p.grad.tolist() for p in cell.parameters()]
    return same_inside, still_cached, fresh_after, h.tolist(), grads


def test_cached_computes_each_parametrized_tensor_once_per_block():
    mine, theirs = _cached_program(tp), _cached_program(torch)
    assert mine[:3] == theirs[:3] == (True, True, True)
    np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-5, atol=1e-6)
    for a, b in zip(mine[4], theirs[4], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
