"""Anomaly mode: forward tracebacks, parent tracebacks for nested backward, NaN checks."""

import warnings

import pytest

import tapeflow as tp


class Fails(tp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("broken backward")


class Outer(tp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * Fails.apply(x)


class NanBackward(tp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


def _run_warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="broken backward"):
            fn()
    return "\n".join(str(x.message) for x in w if issubclass(x.category, UserWarning))


def test_forward_traceback_reported():
    x = tp.randn(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tp.autograd.detect_anomaly():
            y = Fails.apply(x).sum()
            msg = _run_warned(y.backward)
    assert "Error detected in" in msg and "Traceback of forward call that caused the error" in msg
    assert "test_forward_traceback_reported" in msg


def test_parent_traceback_for_nested_backward():
    x = tp.randn(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tp.autograd.detect_anomaly():
            y = Outer.apply(x).sum()
            (gx,) = tp.autograd.grad(y, x, create_graph=True)
            msg = _run_warned(lambda: gx.sum().backward())
    assert "Previous calculation was induced by" in msg
    assert "Outer" in msg.split("Previous calculation was induced by")[1]


@pytest.mark.parametrize("make", [lambda x: x.sqrt(), NanBackward.apply])
def test_nan_check(make):
    x = tp.tensor([-1.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tp.autograd.detect_anomaly():
            y = make(x).sum()
            with pytest.raises(RuntimeError, match=r"Function '\w+' returned nan values in its 0th output"):
                y.backward()
        with tp.autograd.detect_anomaly(check_nan=False):
            assert not tp.autograd.is_anomaly_check_nan_enabled()
            make(x).sum().backward()
    assert not tp.is_anomaly_enabled()


def test_nan_report_matches_pytorch():
    """The NaN error is PyTorch's bare sentence; where the node was made comes as warnings, one per node of the
    chain, and a node made outside anomaly mode says it has no forward information (as PyTorch words it)."""
    torch = pytest.importorskip("torch")

    def run(lib, anomalous_forward: bool):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return NaNs.apply(g * x)

        class NaNs(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        x = lib.rand(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                with lib.autograd.set_detect_anomaly(anomalous_forward):  # (the forward and the first backward)
                    (gx,) = lib.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
                with lib.autograd.detect_anomaly():
                    gx.sum().backward()
            except RuntimeError as e:
                error = str(e)
        reports = [str(m.message).split(" (Triggered internally")[0] for m in w if "Anomaly Detection" not in str(m.message)]
        return error, [r.split(":\n")[0] for r in reports]

    for anomalous_forward in (False, True):
        assert run(tp, anomalous_forward) == run(torch, anomalous_forward)


def test_anomaly_report_goes_to_stderr_when_warnings_are_errors(capsys):
    """With a filter that makes warnings errors, the failing node's own error still propagates (PyTorch) and
    anomaly mode's report of where the node was made is written to stderr instead of raised."""
    import warnings

    with warnings.catch_warnings(record=True) as caught, tp.autograd.detect_anomaly():
        warnings.simplefilter("error")
        a = tp.randn(5, requires_grad=True)
        d1 = a + 1
        d2 = d1**2
        d1 += 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            tp.autograd.grad(d2.sum(), a)
    assert len(caught) == 1 and "Anomaly Detection has been enabled" in str(caught[0].message)
    err = capsys.readouterr().err
    assert "Error detected in PowBackward0" in err and "d2 = d1**2" in err
