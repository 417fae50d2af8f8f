"""Checks PyTorch makes in a fixed order (class-index and class-probability targets of the classification losses,
`cat`'s sizes, `linalg.solve`'s shapes, module member names, optimizer parameter lists): the first failing check, its exception class and
its message, on both libraries. Where tapeflow adds a hint after PyTorch's message, the message starts with
PyTorch's whole message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")


def _outcome(fn):
    try:
        fn()
    except NameError:  # (a mistake of the test itself, never an outcome)
        raise
    except Exception as e:  # noqa: BLE001 (the class is what is compared)
        return type(e).__name__, str(e).split("\nException raised from")[0]  # (without PyTorch's C++ frames)
    return "ok", ""


def _loss_cases(L):
    F, i64, i32 = L.nn.functional, L.int64, L.int32
    return {
        "nll float target, wrong batch": lambda: F.nll_loss(L.ones(2, 3), L.zeros(3)),
        "nll float 2-D target": lambda: F.nll_loss(L.ones(2, 3), L.zeros(2, 3)),
        "nll 2-D target": lambda: F.nll_loss(L.ones(2, 3), L.zeros(2, 3, dtype=i64)),
        "nll 1-D input, float 0-d target": lambda: F.nll_loss(L.ones(3), L.zeros(())),
        "nll float target before weight": lambda: F.nll_loss(L.ones(2, 3), L.zeros(2), weight=L.ones(4)),
        "nll weight": lambda: F.nll_loss(L.ones(2, 3), L.zeros(2, dtype=i64), weight=L.ones(4)),
        "nll int32 target": lambda: F.nll_loss(L.ones(2, 3), L.zeros(2, dtype=i32)),
        "nll bool target": lambda: F.nll_loss(L.ones(2, 3), L.zeros(2, dtype=L.bool)),
        "nll 1-D input, one-element target": lambda: F.nll_loss(L.ones(3), L.zeros(1, dtype=i64)),
        "nll 1-D input, two targets": lambda: F.nll_loss(L.ones(3), L.zeros(2, dtype=i64)),
        "nll 0-d input": lambda: F.nll_loss(L.tensor(1.0), L.zeros((), dtype=i64)),
        "nll 4-D, 2-D target": lambda: F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, dtype=i64)),
        "nll 4-D, target size": lambda: F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, 5, dtype=i64)),
        "nll 4-D, float target, size": lambda: F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, 5)),
        "nll 4-D, weight before size": lambda: F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, 5, dtype=i64),
                                                          weight=L.ones(2)),
        "nll 3-D, weight": lambda: F.nll_loss(L.ones(2, 3, 4), L.zeros(2, 4, dtype=i64), weight=L.ones(2)),
        "nll 3-D, target size": lambda: F.nll_loss(L.ones(2, 3, 4), L.zeros(2, 5, dtype=i64)),
        "nll 5-D, target rank": lambda: F.nll_loss(L.ones(2, 3, 4, 4, 2), L.zeros(2, 4, 4, dtype=i64)),
        "ce float target, wrong batch": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(3)),
        "ce int target of input's shape": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(2, 3, dtype=i64)),
        "ce 3-D int target of input's shape": lambda: F.cross_entropy(L.ones(2, 3, 4), L.zeros(2, 3, 4, dtype=i64)),
        "ce probabilities, ignore_index": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(2, 3), ignore_index=1),
        "ce probabilities, weight": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(2, 3), weight=L.ones(4)),
        "ce probabilities, smoothing": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(2, 3), label_smoothing=2.0),
        "ce indices, smoothing": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(2, dtype=i64), label_smoothing=1.5),
        "ce indices, smoothing, batch": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(3, dtype=i64),
                                                                label_smoothing=0.5),
        "ce 4-D, 2-D target": lambda: F.cross_entropy(L.ones(2, 3, 4, 4), L.zeros(2, 4, dtype=i64)),
        "ce bad reduction": lambda: F.cross_entropy(L.ones(2, 3), L.zeros(2, dtype=i64), reduction="bad"),
        "ce 1-D input, one-element target": lambda: F.cross_entropy(L.ones(3), L.zeros(1, dtype=i64)),
        "ce target out of range": lambda: F.cross_entropy(L.ones(2, 3), L.full((2,), 5, dtype=i64)),
    }


def _other_cases(L):
    def dup_group():
        p = L.nn.Parameter(L.ones(2))
        L.optim.SGD([p, p], lr=0.1)

    def member(kind, name):
        m = L.nn.Linear(2, 2)
        m.add_module("sub", L.nn.ReLU())
        {"module": lambda: m.add_module(name, L.nn.Tanh()), "buffer": lambda: m.register_buffer(name, L.ones(1)),
         "parameter": lambda: m.register_parameter(name, None)}[kind]()

    return {
        "cat sizes, first tensor": lambda: L.cat([L.ones(2, 3, 4), L.ones(2, 3, 4), L.ones(2, 5, 6)]),
        "cat sizes, dim 1": lambda: L.cat([L.ones(2, 3, 4), L.ones(2, 3, 6)], 1),
        "optimizer duplicate parameters": dup_group,
        "add_module over a parameter": lambda: member("module", "weight"),
        "add_module over a method": lambda: member("module", "forward"),
        "add_module over a module": lambda: member("module", "sub"),
        "register_buffer over a module": lambda: member("buffer", "sub"),
        "register_buffer over a parameter": lambda: member("buffer", "bias"),
        "register_parameter over an attribute": lambda: member("parameter", "training"),
        "solve, vector B": lambda: L.linalg.solve(L.eye(2), L.ones(3)),
        "solve, batched B": lambda: L.linalg.solve(L.eye(2), L.ones(4, 3, 2)),
        "solve XA = B": lambda: L.linalg.solve(L.eye(2), L.ones(2, 3), left=False),
        "solve XA = B, vector B": lambda: L.linalg.solve(L.eye(2), L.ones(2), left=False),
        "solve XA = B, 1 x 1 A, vector B": lambda: L.linalg.solve(L.ones(1, 1), L.ones(1), left=False),
    }


def _api_cases(L):
    import numpy as np

    nn = L.nn
    return {
        "GroupNorm groups": lambda: nn.GroupNorm(4, 6),
        "GRU hidden size": lambda: nn.GRU(3, 4)(L.ones(5, 2, 3), L.ones(1, 3, 4)),
        "GRU hidden, batch_first": lambda: nn.GRU(3, 4, batch_first=True)(L.ones(2, 5, 3), L.ones(1, 5, 4)),
        "GRU unbatched, 3-D hidden": lambda: nn.GRU(3, 4)(L.ones(5, 3), L.ones(1, 1, 4)),
        "GRU batched, 2-D hidden": lambda: nn.GRU(3, 4)(L.ones(5, 2, 3), L.ones(2, 4)),
        "LSTM cell state size": lambda: nn.LSTM(3, 4)(L.ones(5, 2, 3), (L.ones(1, 2, 4), L.ones(1, 3, 4))),
        "LSTM projected state size": lambda: nn.LSTM(3, 4, proj_size=2)(L.ones(5, 2, 3), (L.ones(1, 2, 4),
                                                                                           L.ones(1, 2, 4))),
        "LSTM ranks": lambda: nn.LSTM(3, 4)(L.ones(5, 2, 3), (L.ones(2, 4), L.ones(1, 2, 4))),
        "packed GRU hidden": lambda: nn.GRU(3, 4)(nn.utils.rnn.pack_padded_sequence(L.ones(5, 2, 3), [5, 3]),
                                                  L.ones(1, 3, 4)),
        "unflatten product": lambda: L.unflatten(L.ones(2, 6), -1, (4, -1)),
        "unflatten two -1": lambda: L.unflatten(L.ones(2, 6), 1, (-1, -1)),
        "unflatten empty sizes": lambda: L.unflatten(L.ones(2, 6), 1, ()),
        "Unflatten module": lambda: nn.Unflatten(1, (2, 2))(L.ones(2, 3)),
        "Module.to int": lambda: nn.Linear(2, 2).to(L.int64),
        "Module.to complex": lambda: nn.Linear(2, 2).to(L.complex64).weight.dtype.is_complex or 1 / 0,
        "pad_sequence of nothing": lambda: nn.utils.rnn.pad_sequence([]),
        "clip_grad_norm_ norm_type": lambda: nn.utils.clip_grad_norm_([nn.Parameter(L.ones(2))], 1.0, norm_type="x"),
        "adaptive_avg_pool2d sizes": lambda: nn.functional.adaptive_avg_pool2d(L.ones(2, 4), (2, None)),
        "adaptive_max_pool3d sizes": lambda: nn.functional.adaptive_max_pool3d(L.ones(4, 4, 4), (2, 2, 2)),
        "device index": lambda: L.device("cpu", -1),
        "resize_ of a tensor that requires grad": lambda: L.ones(2, requires_grad=True).resize_(3),
        "channels_last of a matrix": lambda: L.zeros(2, 3).contiguous(memory_format=L.channels_last),
        "channels_last_3d of a 4-D tensor": lambda: L.zeros(2, 3, 4, 5).contiguous(memory_format=L.channels_last_3d),
        "bool of an empty tensor": lambda: bool(L.zeros(0)),
        "str in a tensor": lambda: "a" in L.zeros(2),
        "number in a tensor": lambda: (1.0 in L.ones(2)) or 1 / 0,
        "from_numpy of strings": lambda: L.from_numpy(np.array(["a"])),
        "empty_like of a list": lambda: L.empty_like([1, 2]),
        "full_like of a number": lambda: L.full_like(3, 1),
        "equal with a number": lambda: L.equal(L.ones(2), 1),
        "equal of a number": lambda: L.equal(1, L.ones(2)),
        "clamp without bounds": lambda: L.clamp(L.ones(2)),
        "clamp with a complex bound": lambda: L.clamp(L.ones(2), min=1j),
        "clamp_min with a complex bound": lambda: L.clamp_min(L.ones(2), 1j),
        "clamp_max_ with a complex bound": lambda: L.ones(2).clamp_max_(1j),
        "cat of nothing": lambda: L.cat([]),
        "logical_and with a number": lambda: L.logical_and(L.ones(2), 2),
        "logical_xor with a float": lambda: L.logical_xor(L.ones(2), 1.5),
        "index_add of a number": lambda: L.index_add(L.ones(2), 0, L.tensor([0]), 3),
        "write to an element of a leaf": lambda: L.ones(2, requires_grad=True).__setitem__(0, 3.0),
        "write to a slice of a leaf": lambda: L.ones(2, requires_grad=True).__setitem__(slice(1, None), 3.0),
        "write to all of a leaf": lambda: L.ones(2, requires_grad=True).__setitem__(slice(None), 3.0),
        "write through a Python bool to a leaf": lambda: L.ones(2, requires_grad=True).__setitem__(True, 3.0),
        "write through an index tensor to a leaf": lambda: L.ones(2, requires_grad=True).__setitem__(L.tensor([0]), 3.0),
        "embedding of float64 indices": lambda: nn.functional.embedding(L.ones(2, dtype=L.float64), L.ones(3, 2)),
        "embedding of int16 indices": lambda: nn.functional.embedding(L.ones(2, dtype=L.int16), L.ones(3, 2)),
        "embedding of bool indices": lambda: nn.functional.embedding(L.ones(2, dtype=L.bool), L.ones(3, 2)),
        "embedding of bfloat16 indices": lambda: nn.functional.embedding(L.ones(2, dtype=L.bfloat16), L.ones(3, 2)),
        "embedding_bag of uint8 indices": lambda: nn.functional.embedding_bag(L.ones(2, 2, dtype=L.uint8),
                                                                              L.ones(3, 2)),
    }


def _argument_cases(L):
    x3, cl, cl3 = L.ones(2, 3, 4), L.channels_last, L.channels_last_3d
    return {
        "randint(high)": lambda: L.randint(5),
        "randint(low, high)": lambda: L.randint(0, 5),
        "randint(low, high, int)": lambda: L.randint(0, 5, 3),
        "randint(high, size=int)": lambda: L.randint(5, size=3),
        "randint(high=)": lambda: L.randint(high=5),
        "randint(size=)": lambda: L.randint(size=(2,)),
        "randint(float high, size)": lambda: L.randint(5.5, (2,)),
        "randint(bool high, size)": lambda: L.randint(True, (2,)),
        "randint(low, float high, size)": lambda: L.randint(0, 5.5, (2,)),
        "randint(low, high, int, dtype=)": lambda: L.randint(0, 5, 3, dtype=L.float32),
        "randint(high, size, generator=int)": lambda: L.randint(5, (2,), generator=3),
        "requires_grad_(int)": lambda: L.ones(2).requires_grad_(1),
        "requires_grad_(str)": lambda: L.ones(2).requires_grad_("x"),
        "requires_grad_(None)": lambda: L.ones(2).requires_grad_(None),
        "requires_grad_(numpy bool)": lambda: L.ones(2).requires_grad_(np.bool_(True)),
        "requires_grad = int": lambda: setattr(L.ones(2), "requires_grad", 1),
        "manual_seed(2**64)": lambda: L.manual_seed(2**64),
        "manual_seed(-2**63 - 1)": lambda: L.manual_seed(-2**63 - 1),
        "Generator.manual_seed(2**70)": lambda: L.Generator().manual_seed(2**70),
        "save to an int": lambda: L.save(1, 123),
        "save to None": lambda: L.save(1, None),
        "load from an int": lambda: L.load(123),
        "load from None": lambda: L.load(None),
        "numpy of bfloat16": lambda: L.ones(2, dtype=L.bfloat16).numpy(),
        "np.asarray of bfloat16": lambda: np.asarray(L.ones(2, dtype=L.bfloat16)),
        "np.asarray of a tensor requiring grad": lambda: np.asarray(L.ones(2, requires_grad=True)),
        "np.array of a tensor requiring grad": lambda: np.array(L.ones(2, requires_grad=True)),
        "to(channels_last) of 3-D": lambda: x3.to(memory_format=cl),
        "to(dtype, channels_last) of 3-D": lambda: x3.to(L.float64, memory_format=cl),
        "to(device, channels_last) of 2-D": lambda: L.ones(2, 3).to("cpu", memory_format=cl),
        "to(channels_last_3d) of 4-D": lambda: L.ones(2, 3, 4, 5).to(memory_format=cl3),
        "float(channels_last) of 3-D": lambda: x3.float(memory_format=cl),
        "cpu(channels_last) of 3-D": lambda: x3.cpu(memory_format=cl),
        "clone(channels_last) of 3-D": lambda: x3.clone(memory_format=cl),
        "resize_ to 3-D channels_last": lambda: L.ones(2).resize_(2, 3, 4, memory_format=cl),
        "empty 3-D channels_last": lambda: L.empty(2, 3, 4, memory_format=cl),
        "empty 4-D channels_last_3d": lambda: L.empty((2, 3, 4, 5), memory_format=cl3),
        **{f"{name} channels_last of 3-D": (lambda name=name: getattr(L, name)(x3, memory_format=cl))
           for name in ("zeros_like", "ones_like", "rand_like", "randn_like", "empty_like")},
        "full_like channels_last of 3-D": lambda: L.full_like(x3, 2.0, memory_format=cl),
        "randint_like channels_last of 3-D": lambda: L.randint_like(x3, 5, memory_format=cl),
        "full with an int64 overflow": lambda: L.full((2,), 2**63, dtype=L.int64),
        "full of infinity as int64": lambda: L.full((2,), float("inf"), dtype=L.int64),
        "full of NaN as int32": lambda: L.full((2,), float("nan"), dtype=L.int32),
        "full int32 overflow": lambda: L.full((2,), 2**40, dtype=L.int32),
        "full uint8 of -300": lambda: L.full((1,), -300, dtype=L.uint8),
        "full int8 of 200": lambda: L.full((1,), 200, dtype=L.int8),
        "full float32 of 1e39": lambda: L.full((1,), 1e39, dtype=L.float32),
        "full float32 of a complex": lambda: L.full((1,), 1 + 1j, dtype=L.float32),
        "eye of a float": lambda: L.eye(2.0),
        "tensor of 2**63": lambda: L.tensor([2**63]),
        "tensor of -2**63 - 1": lambda: L.tensor([[1], [-2**63 - 1]]),
        "tensor scalar 2**63": lambda: L.tensor(2**63),
        "tensor uint8 of 300": lambda: L.tensor([300], dtype=L.uint8),
        "tensor uint8 of -300": lambda: L.tensor([1, -300], dtype=L.uint8),
        "tensor uint8 of -1.0": lambda: L.tensor([-1.0], dtype=L.uint8),
        "tensor int8 of -129": lambda: L.tensor([-129], dtype=L.int8),
        "tensor int32 of 1e10": lambda: L.tensor([[1e10]], dtype=L.int32),
        "tensor int64 of NaN": lambda: L.tensor([float("nan")], dtype=L.int64),
        "fill_ int8 with 300": lambda: L.zeros(2, dtype=L.int8).fill_(300),
        "fill_ int32 with NaN": lambda: L.zeros(2, dtype=L.int32).fill_(float("nan")),
        "fill_ float with 1j": lambda: L.zeros(2).fill_(1j),
        "fill_ float16 with 1e6": lambda: L.zeros(2, dtype=L.float16).fill_(1e6),
        "write 300 into int8 at 0": lambda: L.zeros(2, dtype=L.int8).__setitem__(0, 300),
        "write 300 into an int8 slice": lambda: L.zeros(2, dtype=L.int8).__setitem__(slice(None), 300),
        "write 300 through an int8 mask": lambda: L.zeros(2, dtype=L.int8).__setitem__(L.tensor([True, False]), 300),
        "write 300 through int8 indices": lambda: L.zeros(2, dtype=L.int8).__setitem__(L.tensor([0]), 300),
        "write 1e40 into float32": lambda: L.zeros(2).__setitem__(0, 1e40),
        "masked_fill int8 with 300": lambda: L.zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]), 300),
        "masked_fill_ float16 with 1e6": lambda: L.zeros(2, dtype=L.float16).masked_fill_(L.tensor([True, False]),
                                                                                        1e6),
        "clamp int8 max 300": lambda: L.zeros(2, dtype=L.int8).clamp(max=300),
        "clamp int8 min -300": lambda: L.zeros(2, dtype=L.int8).clamp(min=-300),
        "clamp_min int8 300": lambda: L.zeros(2, dtype=L.int8).clamp_min(300),
        "clamp float32 max 1e40": lambda: L.zeros(2).clamp(max=1e40),
        "clamp float16 max 1e6": lambda: L.zeros(2, dtype=L.float16).clamp(max=1e6),
        "full float16 of 1e6": lambda: L.full((2,), 1e6, dtype=L.float16),
        "full bfloat16 of 1e39": lambda: L.full((3,), 1e39, dtype=L.bfloat16),
        "addcmul_ with a number tensor1": lambda: L.ones(3).addcmul_(1, L.ones(3)),
        "addcdiv_ with a number tensor2": lambda: L.ones(3).addcdiv_(L.ones(3), 2),
        "addcmul method with a number": lambda: L.ones(3).addcmul(1, L.ones(3)),
        "addcdiv function with a number": lambda: L.addcdiv(L.ones(3), L.ones(3), 2),
        "logical_and_ with a number": lambda: L.ones(3, dtype=L.bool).logical_and_(2),
        "logical_or_ with a float": lambda: L.ones(3).logical_or_(1.5),
        "logical_xor method with a number": lambda: L.ones(3).logical_xor(1),
        "maximum method with a number": lambda: L.ones(3).maximum(1),
        **{f"backward through {name}": (lambda f=f: f(L.nn.functional, L.tensor([-1.0, 1.0], requires_grad=True)
                                                       .clone()).sum().backward())
           for name, f in [("leaky_relu_ of slope -2", lambda F, x: F.leaky_relu_(x, -2)),
                           ("leaky_relu_ of slope 0", lambda F, x: F.leaky_relu_(x, 0.0)),
                           ("leaky_relu(inplace) of slope -2", lambda F, x: F.leaky_relu(x, -2, inplace=True)),
                           ("rrelu_ (eval) of a negative slope", lambda F, x: F.rrelu_(x, -5.0, -1.0)),
                           ("elu_ of alpha -2", lambda F, x: F.elu_(x, alpha=-2)),
                           ("celu_ of alpha -2", lambda F, x: F.celu_(x, alpha=-2)),
                           ("ELU(inplace) of alpha -1", lambda F, x: L.nn.ELU(-1.0, inplace=True)(x)),
                           ("elu of alpha -2", lambda F, x: F.elu(x, alpha=-2))]},
    }


CASES = {**_loss_cases(torch), **_other_cases(torch), **_api_cases(torch), **_argument_cases(torch)}


@pytest.mark.parametrize("name", list(CASES))
def test_first_failing_check_is_pytorchs(name):
    cases = CASES, {**_loss_cases(tp), **_other_cases(tp), **_api_cases(tp), **_argument_cases(tp)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (theirs, their_msg), (mine, my_msg) = (_outcome(c[name]) for c in cases)
    their_msg = their_msg.replace("torch.", "tapeflow.")  # (dtypes print as torch.* under `tapeflow.torch`)
    assert mine == theirs, (my_msg, their_msg)
    assert my_msg.startswith(their_msg), (my_msg, their_msg)


@pytest.mark.parametrize("kw", [dict(), dict(momentum=0.9), dict(momentum=0.9, nesterov=True, weight_decay=0.1),
                                dict(momentum=0.9, dampening=0.5)])
def test_sgd_updates_a_parameter_listed_twice_twice(kw):
    results = []
    for L in (torch, tp):
        p, q = L.nn.Parameter(L.tensor([1.0, -2.0])), L.nn.Parameter(L.tensor([0.5]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opt = L.optim.SGD([p, q, p], lr=0.1, **kw)
        assert any("duplicate parameters" in str(w.message) for w in caught)
        for _ in range(3):
            opt.zero_grad()
            ((p ** 2).sum() + q.sum() ** 2).backward()
            opt.step()
        results.append(p.tolist() + q.tolist())
    assert results[1] == pytest.approx(results[0], rel=1e-5)


def test_a_one_element_target_of_a_1d_input_gives_pytorchs_loss():
    for fn in ("nll_loss", "cross_entropy"):
        for reduction in ("none", "mean", "sum"):
            theirs, mine = (getattr(L.nn.functional, fn)(L.tensor([1.0, 2.0, 3.0]), L.tensor([2]), reduction=reduction)
                            for L in (torch, tp))
            assert tuple(mine.shape) == tuple(theirs.shape)
            assert mine.item() == pytest.approx(theirs.item(), rel=1e-6)


_INPLACE = ["add_", "sub_", "div_", "floor_divide_", "remainder_", "fmod_", "atan2_", "bitwise_and_", "clamp_min_",
            "hypot_", "true_divide_"]
_PAIRS = [("bool", "int64"), ("bool", 2), ("bool", 1.5), ("int32", "float32"), ("int64", 1.5), ("int64", 1j),
          ("float16", 1j), ("float32", "complex64"), ("uint8", "complex64"), ("bfloat16", "float64"), ("float32", 2)]


@pytest.mark.parametrize("op", _INPLACE)
def test_in_place_ops_check_the_result_dtype_first(op):
    """An in-place op whose promoted result does not fit the tensor's dtype is refused with PyTorch's cast error
    before its kernel's own refusals (and `lerp`'s dtype message names C++ types as PyTorch's does)."""
    for a, b in _PAIRS:
        outcomes = []
        for L in (torch, tp):
            other = b if not isinstance(b, str) else L.ones(2, dtype=getattr(L, b))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcomes.append(_outcome(lambda L=L, a=a, other=other: getattr(L.ones(2, dtype=getattr(L, a)), op)(other)))
        (theirs, their_msg), (mine, my_msg) = outcomes
        assert mine == theirs, (a, b, my_msg, their_msg)
        assert my_msg.startswith(their_msg.split("\n")[0]), (a, b, my_msg, their_msg)


def test_lerp_names_dtypes_as_pytorch():
    for a, b in [("float16", "int32"), ("float32", "float64"), ("complex64", "bool"), ("uint8", "float32")]:
        outcomes = [_outcome(lambda L=L, a=a, b=b: L.lerp(L.ones(2, dtype=getattr(L, a)), L.ones(2, dtype=getattr(L, b)),
                                                      0.5)) for L in (torch, tp)]
        assert outcomes[0] == outcomes[1]


def test_writes_through_python_bools_select_everything_or_nothing():
    results = []
    for L in (torch, tp):
        x, y, z, w = L.ones(2), L.ones(2, 2), L.ones(2, 2), L.ones(2)
        x[True] = 5.0
        y[0, True] = 7.0
        z[True, 1] = L.tensor([3.0, 4.0])
        w[False] = 5.0
        results.append([t.tolist() for t in (x, y, z, w)])
    assert results[0] == results[1]


@pytest.mark.parametrize("seed", [-1, 2**64 - 1, -2**63, 2**63, 2**32 + 5])
def test_seeds_are_read_as_64_bit_integers(seed):
    torch.manual_seed(seed)
    tp.manual_seed(seed)
    assert tp.initial_seed() == torch.initial_seed()
    np.testing.assert_array_equal(tp.rand(3).numpy(), torch.rand(3).numpy())
    np.testing.assert_array_equal(tp.randn(3).numpy(), torch.randn(3).numpy())


@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format", "channels_last"])
def test_like_factories_and_conversions_take_a_memory_format(fmt):
    x = tp.ones(2, 3, 4, 5)
    f = getattr(tp, fmt)
    for name in ("zeros_like", "ones_like", "rand_like", "randn_like", "empty_like"):
        assert getattr(tp, name)(x, memory_format=f).shape == x.shape
    assert tp.full_like(x, 2.0, memory_format=f).shape == x.shape
    assert tp.randint_like(x, 5, memory_format=f).shape == x.shape
    assert x.double(memory_format=f).dtype == tp.float64 and x.half(memory_format=f).dtype == tp.float16
    assert x.to(tp.int64, memory_format=f).dtype == tp.int64


def test_randint_keyword_forms():
    assert tp.randint(high=5, size=(3,)).shape == (3,)
    assert tp.randint(low=2, high=3, size=[2]).tolist() == [2, 2]
    assert tp.randint(2, 3, size=(2,)).tolist() == [2, 2]
    assert tp.randint(2, high=3, size=(2,)).tolist() == [2, 2] == torch.randint(2, high=3, size=(2,)).tolist()
    assert tp.randint(tp.tensor(3), (2,)).shape == (2,)
    assert tp.randint(3, tp.Size([2, 1])).shape == (2, 1)


@pytest.mark.parametrize("value, dtype", [(1 + 2j, None), (1 + 0j, "float32"), (2 + 0j, "int64"), (-1, "uint8"),
                                          (6e4, "float16"), (1e38, "bfloat16"), (3.7, "int32"), (1j, "bool"),
                                          (float("inf"), "float32"), (-0.0, None), (True, None), (7, None)])
def test_full_fills_as_pytorch(value, dtype):
    mine = tp.full((2,), value, dtype=None if dtype is None else getattr(tp, dtype))
    theirs = torch.full((2,), value, dtype=None if dtype is None else getattr(torch, dtype))
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(mine.float().numpy() if dtype == "bfloat16" else mine.numpy(),
                                  theirs.float().numpy() if dtype == "bfloat16" else theirs.numpy())


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([-1], dtype=L.uint8), lambda L: L.tensor([1.7, -2.5], dtype=L.int32),
    lambda L: L.tensor([1e6], dtype=L.float16), lambda L: L.tensor(np.array([300]), dtype=L.uint8),
    lambda L: L.zeros(2, dtype=L.uint8).fill_(-1), lambda L: L.zeros(2).fill_(1 + 0j),
    lambda L: L.zeros(2, dtype=L.int32).fill_(2.7), lambda L: L.zeros(2, dtype=L.bool).fill_(5),
    lambda L: L.zeros(1, dtype=L.float16).fill_(1e6), lambda L: L.zeros(2, dtype=L.int8).clamp(max=2.5),
    lambda L: (lambda x: (x.__setitem__(0, -1), x)[1])(L.zeros(2, dtype=L.uint8)),
    lambda L: (lambda x: (x.__setitem__(0, 1e6), x)[1])(L.zeros(2, dtype=L.float16)),
    lambda L: L.tensor([2**63 - 1, -2**63])])
def test_numbers_that_fit_or_wrap_as_in_pytorch(make):
    mine, theirs = make(tp), make(torch)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
