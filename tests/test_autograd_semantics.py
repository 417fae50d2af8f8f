"""Autograd behaviours from PyTorch's own autograd tests: grad-mode decorators on generators, nested inference
mode, gradients at NaN ties and at 0 ** negative, views regaining history after an in-place write through a
sibling, and `retain_grad` following a tensor through in-place writes. Each scenario runs on tapeflow and, when
installed, on PyTorch, and the observations are compared."""

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
    return out


SCENARIOS = [generator_decorators, nested_inference_mode, gradients_at_edges, views_after_inplace_writes,
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
