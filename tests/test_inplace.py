"""Views, aliases, in-place ops and version counters."""

import numpy as np
import pytest

import tapeflow as tp


def t(x, **kw):
    return tp.tensor(x, dtype=tp.float64, **kw)


def test_view_write_updates_base_and_other_views():
    base = t([[1.0, 2.0], [3.0, 4.0]])
    row = base[0]
    col = base[:, 1]
    flat = base.view(-1)
    row.mul_(10)
    np.testing.assert_allclose(base.numpy(), [[10, 20], [3, 4]])
    np.testing.assert_allclose(col.numpy(), [20, 4])
    np.testing.assert_allclose(flat.numpy(), [10, 20, 3, 4])
    assert base._version == row._version == 1


def test_setitem_and_iadd():
    x = t([1.0, 2.0, 3.0])
    x[1] = 7.0
    x[x > 5] = 0.0
    x += 1
    np.testing.assert_allclose(x.numpy(), [2.0, 1.0, 4.0])
    x[tp.tensor([0, 2])] = t([9.0, 8.0])
    np.testing.assert_allclose(x.numpy(), [9.0, 1.0, 8.0])


def test_detach_and_data_share_storage():
    x = t([1.0, 2.0], requires_grad=True)
    d = x.detach()
    d.zero_()
    np.testing.assert_allclose(x.detach().numpy(), [0.0, 0.0])
    assert x._version == 1
    x.data.add_(5.0)
    np.testing.assert_allclose(d.numpy(), [5.0, 5.0])
    assert not d.requires_grad and d.grad_fn is None


def test_modified_saved_tensor_raises():
    a = t([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = b * b
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_modified_saved_output_raises():
    a = t([1.0], requires_grad=True)
    e = a.exp()
    e.mul_(2)
    with pytest.raises(RuntimeError, match=r"is at version 1; expected version 0"):
        e.sum().backward()


def test_inplace_on_leaf_requiring_grad_raises_outside_no_grad():
    w = t([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.add_(1)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w[0] = 2.0
    with tp.no_grad():
        w.sub_(0.5)
    assert w.is_leaf and w.requires_grad and w.item() == 0.5


def test_view_of_leaf_inplace_raises():
    w = t([1.0, 2.0], requires_grad=True)
    v = w[0:1]
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        v.mul_(2)


def test_inplace_on_non_leaf_gradients():
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y.mul_(y)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (2 * np.array([1.0, 2.0]) + 1) * 2)


def test_write_into_view_of_non_leaf_flows_gradients():
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    w = t([10.0], requires_grad=True)
    y = x * 1.0
    y[1:2] = w * 2
    (y * t([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0, 3.0])
    np.testing.assert_allclose(w.grad.numpy(), [4.0])


def test_inplace_through_view_updates_base_graph():
    x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x.clone()
    v = y.view(2, 2)[0]
    v.mul_(3)
    assert y.grad_fn.name() == "torch::autograd::CopySlices" and type(y.grad_fn).__name__ == "CopySlices"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 1.0, 1.0])


def test_inplace_dtype_rules():
    x = tp.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.add_(0.5)
    f = tp.tensor([1.0, 2.0])
    f.add_(t([0.5, 0.5]))
    assert f.dtype == tp.float32


def test_clamp_copy_fill_zero():
    x = t([-2.0, 0.5, 3.0])
    x.clamp_(-1, 1)
    np.testing.assert_allclose(x.numpy(), [-1, 0.5, 1])
    x.copy_(t([4.0, 5.0, 6.0]))
    np.testing.assert_allclose(x.numpy(), [4, 5, 6])
    x.fill_(2.0)
    np.testing.assert_allclose(x.numpy(), [2, 2, 2])
    x.zero_()
    assert x._version == 4 and x.sum().item() == 0


def test_copy_gradient_flows_to_source():
    src = t([1.0, 2.0], requires_grad=True)
    dst = tp.zeros(2, dtype=tp.float64)
    dst.copy_(src * 3)
    dst.sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), [3.0, 3.0])


def test_views_share_version_and_transpose_write():
    m = t([[1.0, 2.0], [3.0, 4.0]])
    mt = m.t()
    mt[0, 1] = 30.0
    np.testing.assert_allclose(m.numpy(), [[1, 2], [30, 4]])
    e = m.unsqueeze(0).expand(3, 2, 2)
    assert e._version == m._version


@pytest.mark.parametrize("case", ["mul", "div", "linear", "setitem"])
def test_inputs_saved_only_for_unneeded_gradients_may_be_modified(case):
    """As PyTorch: `h * 2.0` saves `h` only if the other factor needs a gradient, so writing `h` afterwards is fine."""
    x = tp.ones(3, requires_grad=True)
    h = x * 1
    if case == "mul":
        y = h * 2.0
        h.add_(1)
    elif case == "div":
        y = h / 2.0
        h.add_(1)
    elif case == "linear":
        y = tp.nn.functional.linear(h, tp.ones(2, 3))
        h += 1
    else:
        y = h * 2.0
        h[0] = h[1] * 2.0
    y.sum().backward()
    assert x.grad is not None


def test_an_input_saved_for_a_needed_gradient_is_still_checked():
    x = tp.ones(3, requires_grad=True)
    h = x * 1
    y = tp.nn.functional.linear(h, tp.ones(2, 3, requires_grad=True))
    h += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def _view_of_a_later_leaf(lib):
    """In-place writes through views taken before the base came to require grad (PyTorch's
    test_no_requires_grad_inplace): refused for a leaf, recorded for a base that gained a history."""
    out = []
    a = lib.randn(2, 3)
    b = a[:]
    a.requires_grad = True
    for write in (lambda: a.add_(5), lambda: b.add_(5)):
        try:
            write()
            out.append(None)
        except RuntimeError as e:
            out.append(str(e).split(" in an in-place operation")[0])
    a = lib.ones(2, 3)
    b = a[:1]
    w = lib.ones(2, 3, requires_grad=True)
    a.add_(w)  # the base now has a history, and so does its view (PyTorch makes it when grad_fn is read: before
    has_history = b.grad_fn is not None  # that, its in-place check still sees the leaf it was)
    b.mul_(2)
    a.sum().backward()
    return out, has_history, b.requires_grad, a.tolist(), w.grad.tolist()


def test_writes_through_a_view_of_a_base_that_later_requires_grad_match_pytorch():
    torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
    assert _view_of_a_later_leaf(tp) == _view_of_a_later_leaf(torch)


def _detached_aliases(lib):
    x = lib.ones(3, requires_grad=True) * 2
    d = x.detach()
    out = [d._is_view(), d._base is None, d.requires_grad]
    d.add_(1)  # one storage: the write shows in both, with one version counter
    out += [x.tolist(), d.tolist(), x._version == d._version]
    with lib.no_grad():
        x.mul_(3)
    v = d[1:]
    v.mul_(10)
    out += [x.tolist(), d.tolist(), v.tolist()]
    return out


def test_detach_shares_data_without_being_a_view_as_in_pytorch():
    torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
    assert _detached_aliases(tp) == _detached_aliases(torch)


def test_a_kept_detached_loss_does_not_keep_its_graph():
    # `losses.append(loss.detach())` in a training loop: the detached tensor shares the loss's data, but the
    # loss and the graph it heads die with the step (they lived on through the alias, a leak per step).
    import gc
    import weakref

    w = tp.ones(4, requires_grad=True)
    kept, nodes = [], []
    gc.disable()
    try:
        for _ in range(6):
            loss = ((w * 2).sin() * 3).sum()
            nodes.append(weakref.ref(loss.grad_fn))
            loss.backward()
            kept.append(loss.detach())
        del loss
        assert all(r() is None for r in nodes)  # (a compiled backward keeps only a skeleton of its graph)
    finally:
        gc.enable()
    assert [round(k.item(), 5) for k in kept] == [round(float(np.sin(2.0) * 12), 5)] * 6


def test_a_detached_view_does_not_keep_its_base_or_graph():
    # Truncated backpropagation through time: `hidden = out[:, -1].detach()` carried to the next step.
    import gc
    import weakref

    w = tp.full((3, 3), 0.1, requires_grad=True)
    hidden, nodes = tp.ones(2, 3), []
    gc.disable()
    try:
        for _ in range(5):
            out = tp.stack([hidden @ w, (hidden @ w).tanh()], 1)
            nodes.append(weakref.ref(out.grad_fn))
            out.sum().backward()
            hidden = out[:, -1].detach()
        del out
        assert all(r() is None for r in nodes)
        assert not hidden.requires_grad and hidden.grad_fn is None
    finally:
        gc.enable()


def _hook_calls(lib):
    """Which tensor hooks run, with what, around in-place writes (PyTorch's rules: a hook registered on a view
    before the view is written in place never runs, as the view's old node leaves the graph; one registered on a
    non-view before its write sees the gradient of the old value; one registered after sees the new one's)."""
    calls = []
    rec = lambda name: lambda g: calls.append((name, g.tolist()))  # noqa: E731
    base = lib.tensor([1.0, 2.0], requires_grad=True).clone()
    view, view2 = base[:], base[1:]
    view.register_hook(rec("view before"))
    view2.register_hook(rec("other view before"))
    view.mul_(3)
    view.register_hook(rec("view after"))
    view2.grad_fn  # noqa: B018 - regenerates the other view's history, as reading it does in PyTorch
    view2.register_hook(rec("other view after"))
    x = base * 2
    x.register_hook(rec("non-view before"))
    x.add_(1)
    x.register_hook(rec("non-view after"))
    (view * 5 + view2 + x * 7).sum().backward()
    return calls


def test_tensor_hooks_around_inplace_writes_follow_pytorch():
    torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
    assert sorted(_hook_calls(tp)) == sorted(_hook_calls(torch))
