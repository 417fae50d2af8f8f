"""`Tensor.view(dtype)` against PyTorch: the same bytes read as another dtype (the last dimension scaling by the
ratio of element sizes), PyTorch's layout checks and messages, writes through the view reaching the base and
writes to the base reaching the view, and autograd not seeing the view (its output never requires grad, a
write through it leaves the base's history alone), on every execution path."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

DTYPES = ["int32", "float32", "float16", "bfloat16", "uint8", "int8", "int16", "int64", "float64", "bool",
          "complex64", "complex128"]


def _summary(m, r):
    if isinstance(r, m.Tensor):
        dt = str(r.dtype).split(".")[-1]
        values = r.float() if dt == "bfloat16" else r
        return ("tensor", tuple(r.shape), dt, r.requires_grad, values.detach().tolist())
    if isinstance(r, tuple):
        return tuple(_summary(m, e) for e in r)
    return r


def _run(scenario, m):
    try:
        return "ok", _summary(m, scenario(m))
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return "raise", (type(e).__name__, str(e).replace("tapeflow", "torch"))


def _same(a, b, where):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and a[:4] == b[:4], f"{where}: {a[:4]} vs {b[:4]}"
        np.testing.assert_array_equal(np.asarray(a[4]), np.asarray(b[4]), err_msg=where)  # (NaN equals NaN)
    elif isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: tapeflow {a} vs PyTorch {b}"


def check(scenario):
    (kind, ours), (their_kind, theirs) = _run(scenario, tp), _run(scenario, torch)
    assert kind == their_kind, f"tapeflow {kind} {ours} vs PyTorch {their_kind} {theirs}"
    _same(ours, theirs, "result")


@pytest.mark.parametrize("src", ["float32", "float64", "int16", "complex64", "bool"])
@pytest.mark.parametrize("dst", DTYPES)
def test_bytes_read_as_another_dtype(src, dst):
    values = {"float32": [1.0, -2.0, 0.5, 3.0], "float64": [1.0, -2.0, 0.5, 3.0], "int16": [1, -2, 300, 7],
              "complex64": [1 + 2j, -0.5j, 3.0, 1e-3 + 1j], "bool": [True, False, True, True]}[src]

    def scenario(m):
        x = m.tensor([values, values[::-1]], dtype=getattr(m, src))
        return x.view(getattr(m, dst))
    if dst == "bool" and src != "bool":
        pytest.skip("bytes other than 0 and 1 read as bool are undefined in PyTorch")
    check(scenario)


CHECKS = {
    "0-d, other size": lambda m: m.tensor(1.0).view(m.int16),
    "0-d, same size": lambda m: m.tensor(1.0).view(m.int32),
    "transposed, smaller elements": lambda m: m.zeros(3, 4).t().view(m.int16),
    "transposed, same size": lambda m: m.ones(3, 4).t().view(m.int32),
    "size not divisible": lambda m: m.zeros(3, dtype=m.int8).view(m.int32),
    "storage offset not divisible": lambda m: m.zeros(2, 3, dtype=m.int8)[:, 1:].view(m.int16),
    "stride not divisible": lambda m: m.zeros(3, 3, dtype=m.int8)[:, :2].view(m.int16),
    "last stride not 1": lambda m: m.zeros(3, 4, dtype=m.int8)[:, ::2].view(m.int16),
    "keyword": lambda m: m.zeros(2, 4).view(dtype=m.int32),
    "strides, smaller": lambda m: m.zeros(2, 4).view(m.int16).stride(),
    "strides, larger": lambda m: m.zeros(2, 4, dtype=m.int16).view(m.float64).stride(),
    "of a row": lambda m: m.arange(8, dtype=m.int16).view(2, 4)[1].view(m.int32),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_layout_checks_and_results(name):
    check(CHECKS[name])


def _write_int(m):
    w = m.zeros(2, 4)
    v = w.view(m.int32)
    v[0, 0] = 1065353216
    return w, v


def _write_bytes(m):
    w = m.zeros(2, 4)
    u = w.view(m.uint8)
    u[1, 3] = 63
    u[1, 2] = 128
    return w


def _write_sliced_bytes(m):
    w = m.ones(2, 4)
    u = w.view(m.uint8)[1]
    u.fill_(0)
    u[3::4] = 64
    return w


def _inplace_wider(m):
    w = m.arange(8, dtype=m.int16).view(2, 4)
    v = w.view(m.int64)
    v += 1
    return w, v


def _base_write_seen(m):
    w = m.arange(8, dtype=m.int16).view(2, 4)
    v = w.view(m.int64)
    w[0, 0] = 100
    return v


def _view_of_view_write(m):
    w = m.zeros(2, 4)
    v = w.t().view(m.int32)
    v[1].fill_(1065353216)
    return w


def _dtype_view_chain(m):
    w = m.zeros(4)
    v = w.view(m.int16).view(m.uint8)
    v[7] = 64
    return w, w.view(m.int16)


def _write_non_leaf(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    w = a * 2
    w.view(m.int32)[0] = 1065353216
    w.sum().backward()
    return w, a.grad


def _same_dtype_inplace(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    w = a * 2
    v = w.view(m.float32)
    v.mul_(3)
    return w, v


def _leaf_write(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    a.view(m.int32)[0] = 0
    return a


def _base_changes(m):
    a = m.tensor([1.0, 2.0], requires_grad=True)
    w = a * 2
    v = w.view(m.int32)
    w.mul_(2)
    return v, w


def _under_no_grad(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with m.no_grad():
        v = x.view(m.float32)
    return v, x.view(m.float32) * 2


WRITES = {f.__name__[1:]: f for f in (_write_int, _write_bytes, _write_sliced_bytes, _inplace_wider, _base_write_seen,
                                      _view_of_view_write, _dtype_view_chain, _write_non_leaf, _same_dtype_inplace,
                                      _leaf_write, _base_changes, _under_no_grad)}


@pytest.mark.parametrize("adaptive", [True, False])
@pytest.mark.parametrize("name", list(WRITES))
def test_aliasing_and_autograd(name, adaptive):
    tp.set_adaptive_eager(adaptive)
    try:
        check(WRITES[name])
    finally:
        tp.set_adaptive_eager(True)


def test_staged_and_traced_paths():
    """`tp.compile` and `to_jax` under `jax.jit` read the same bytes as eager."""
    import jax

    from tapeflow.interop import to_jax

    x = tp.tensor([1.0, 2.5, -3.0])

    def f(t):
        return (t.view(tp.int32) & 0xFFFF).sum()
    eager = f(x).item()
    assert tp.compile(f)(x).item() == eager
    jitted = jax.jit(to_jax(f))
    assert int(jitted(np.asarray([1.0, 2.5, -3.0], np.float32))) == eager
