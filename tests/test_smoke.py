import tapeflow as tp


def test_exp_backward_and_repr():
    x = tp.tensor([1.0], requires_grad=True)
    y = x.exp()
    assert repr(y) == "tensor([2.7183], grad_fn=<ExpBackward0>)"
    y.backward()
    tp.testing.assert_close(x.grad, y.detach())


def test_third_derivative():
    x = tp.tensor(3.0, requires_grad=True)
    (d1,) = tp.autograd.grad(x ** 3, x, create_graph=True)
    (d2,) = tp.autograd.grad(d1, x, create_graph=True)
    (d3,) = tp.autograd.grad(d2, x)
    assert (d1.item(), d2.item(), d3.item()) == (27.0, 18.0, 6.0)
