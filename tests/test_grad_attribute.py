"""`.grad` assignment and access, post-accumulate hooks and inference tensors, with PyTorch's rules."""

import warnings

import pytest

import tapeflow as tp


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and text are what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("value,kind,words", [
    (lambda lib: lib.ones(2), "RuntimeError", "attempting to assign a gradient of size '[2]' to a tensor of size '[3]'"),
    (lambda lib: 3, "TypeError", "assigned grad expected to be a Tensor or None but got grad of type int"),
    (lambda lib: lib.ones(3, dtype=lib.float64), "RuntimeError", "attempting to assign a gradient with dtype"),
])
def test_assigning_a_wrong_grad_raises_like_pytorch(value, kind, words):
    x = tp.ones(3, requires_grad=True)
    got = _error(lambda: setattr(x, "grad", value(tp)))
    assert got is not None and got[0] == kind and words in got[1]
    assert x.grad is None  # nothing was assigned
    torch = pytest.importorskip("torch")
    xt = torch.ones(3, requires_grad=True)
    expected = _error(lambda: setattr(xt, "grad", value(torch)))
    assert expected is not None and expected[0] == kind and words in expected[1]


def test_a_right_grad_can_be_assigned_and_cleared():
    x = tp.ones(3, requires_grad=True)
    x.grad = tp.full((3,), 2.0)
    (x * 1).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    x.grad = None
    assert x.grad is None


def test_reading_grad_of_a_non_leaf_warns_unless_retained():
    x = tp.ones(2, requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None
    z = x * 3
    z.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z.sum().backward()
        assert z.grad.tolist() == [1.0, 1.0] and x.grad.tolist() == [3.0, 3.0]


def test_post_accumulate_grad_hooks_see_the_updated_grad():
    x = tp.ones(2, requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    for _ in range(3):  # the third pass would run as one compiled program: hooks keep it node by node
        (x * 2).sum().backward()
    tp.autograd.grad((x * 5).sum(), x)  # no accumulation into .grad: no call
    handle.remove()
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0], [4.0, 4.0], [6.0, 6.0]] and x.grad.tolist() == [8.0, 8.0]
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(print)


def test_inference_tensors_follow_pytorchs_rules():
    torch = pytest.importorskip("torch")
    for lib in (tp, torch):
        with lib.inference_mode():
            i = lib.ones(2)
            j = i * 2
            i.add_(1)  # in place inside the mode: allowed
        assert i.is_inference() and j.is_inference() and not lib.ones(1).is_inference()
        assert not (i * 2).is_inference()  # made outside the mode
        w = lib.ones(2, requires_grad=True)
        checks = [lambda i=i: i.requires_grad_(), lambda i=i: i.add_(1), lambda i=i, w=w: (w * i).sum().backward()]
        got = [_error(c) for c in checks]
        if lib is tp:
            ours = got
        else:
            for a, b in zip(ours, got):
                assert a is not None and a[0] == b[0] and a[1][:40] == b[1][:40]
        c = i.clone()
        c.add_(1)  # a clone is a normal tensor (PyTorch writes before it raises above; tapeflow does not write)
        assert c.tolist() == [v + 1 for v in i.tolist()] and not c.is_inference()
    assert all(o is not None for o in ours)


def test_data_has_its_own_version_counter():
    """Writes through `.data` change the values autograd reads but not the version it checks (PyTorch's rule)."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tp, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 1
        y = h * h  # saves h
        h.data.add_(1)
        y.sum().backward()  # no "modified by an inplace operation": the write went through .data
        plain = lib.ones(2)
        alias = plain.data
        alias.mul_(3)
        plain.add_(1)  # seen through the alias
        results.append((x.grad.tolist(), h.tolist(), plain.tolist(), alias.tolist(), plain._version, alias._version))
    assert results[0] == results[1]


def test_python_numbers_keep_their_precision_in_the_dtype_asked_for():
    torch = pytest.importorskip("torch")
    cases = [[0.3], [[0.1, 0.7]], 0.3, [1, 2], [True], [1 + 2j]]
    for data in cases:
        for name in ("float64", "float32", "int32", "complex128"):
            got = _error(lambda: tp.tensor(data, dtype=getattr(tp, name)).tolist())  # noqa: B023
            ours = got if got is not None else tp.tensor(data, dtype=getattr(tp, name)).tolist()
            want = _error(lambda: torch.tensor(data, dtype=getattr(torch, name)).tolist())  # noqa: B023
            theirs = want if want is not None else torch.tensor(data, dtype=getattr(torch, name)).tolist()
            assert (ours[0] if isinstance(ours, tuple) else ours) == (theirs[0] if isinstance(theirs, tuple) else theirs)
    assert tp.tensor([0.3], dtype=tp.float64).item() == 0.3


def _grad_dtype_story(lib):
    """What `grad_dtype` does in one run: defaults, setting, refusals, gradients of a custom Function that
    returns float64, accumulation; each step's outcome as text (errors by class and first words)."""
    out = []

    def attempt(f):
        try:
            r = f()
            out.append(str(r).replace(lib.__name__, "lib"))
        except Exception as e:  # noqa: BLE001 - the class and wording are what is compared
            out.append(f"{type(e).__name__}: {str(e)[:60]}")

    class Doubles(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.to(lib.float64)

    leaf = lib.tensor([1.0, 2.0], requires_grad=True)
    attempt(lambda: leaf.grad_dtype)
    attempt(lambda: (leaf * 2).grad_dtype)
    attempt(lambda: setattr(leaf * 2, "grad_dtype", lib.float16))
    attempt(lambda: setattr(leaf, "grad_dtype", "float16"))
    attempt(lambda: setattr(leaf, "grad", lib.ones(2, dtype=lib.float64)))
    for setting in ("default", None, lib.float16, lib.float64):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        if setting != "default":
            x.grad_dtype = setting
        Doubles.apply(x).sum().backward()
        (x * 3).sum().backward()
        out.append(f"{x.grad_dtype} {x.grad.dtype} {x.grad.tolist()}")
        attempt(lambda x=x: setattr(x, "grad_dtype", lib.int64))
    y = lib.tensor([1.0, 2.0], requires_grad=True)
    y.grad_dtype = None
    y.grad = lib.ones(2, dtype=lib.bfloat16)
    (y * 2).sum().backward()
    out.append(str(y.grad.dtype))
    return [s.replace("torch", "lib").replace("tapeflow", "lib") for s in out]


@pytest.mark.filterwarnings("ignore:The .grad attribute")
def test_grad_dtype_matches_pytorch():
    torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
    assert _grad_dtype_story(tp) == _grad_dtype_story(torch)
