"""autograd.functional against PyTorch on the same calls: results (structure, shapes, dtypes, values, whether they
require grad) and errors (class and message). What PyTorch's test/autograd/test_functional.py checks, and the
argument checks around it: `_construct_standard_basis_for`, the strategy and forward-mode refusals, `strict` with
`vectorize`, PyTorch's order of checks, type and dtype errors, single-Tensor outputs of second-order functions,
and the strict checks of `jvp`'s double-backward trick."""

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch")


def _summary(x, tensor_type):
    if isinstance(x, tensor_type):
        return ("tensor", tuple(x.shape), str(x.dtype).split(".")[-1], x.requires_grad,
                np.asarray(x.detach().tolist(), dtype=np.float64))
    if isinstance(x, tuple):
        return ("tuple", tuple(_summary(e, tensor_type) for e in x))
    return ("other", repr(x))


def _run(scenario, m):
    try:
        return "ok", _summary(scenario(m), m.Tensor)
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return "raise", e


def _same(ours, theirs, where="result"):
    assert ours[0] == theirs[0], f"{where}: {ours} vs {theirs}"
    if ours[0] == "tensor":
        assert ours[1:4] == theirs[1:4], f"{where}: shape/dtype/requires_grad {ours[1:4]} vs {theirs[1:4]}"
        np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-12, atol=1e-12, err_msg=where)
    elif ours[0] == "tuple":
        assert len(ours[1]) == len(theirs[1]), f"{where}: {len(ours[1])} vs {len(theirs[1])} elements"
        for i, (a, b) in enumerate(zip(ours[1], theirs[1])):
            _same(a, b, f"{where}[{i}]")
    else:
        assert ours == theirs, where


def check(scenario):
    (kind, mine), (their_kind, theirs) = _run(scenario, tp), _run(scenario, torch)
    if their_kind == "raise":
        assert kind == "raise", f"PyTorch raises {type(theirs).__name__}: {theirs}; tapeflow returned {mine}"
        assert isinstance(mine, type(theirs)), f"{type(mine).__name__}: {mine} vs {type(theirs).__name__}: {theirs}"
        assert str(mine).replace("tapeflow.", "torch.") == str(theirs)
    else:
        assert kind == "ok", f"tapeflow raises {type(mine).__name__}: {mine}; PyTorch returned {theirs}"
        _same(mine, theirs)


def _x(m, n=4):
    return m.tensor([0.1, 0.2, 0.3, 0.4, 0.5][:n], dtype=m.float64)


def _cube(a):
    return (a ** 3).sum()


# -- _construct_standard_basis_for: the identity split into per-tensor column blocks ---------------------
BASIS_CASES = {
    "one 2x3": [((2, 3), "float32")],
    "one 1": [((1,), "float32")],
    "one 0-d": [((), "float32")],
    "1, 0-d, 0-d": [((1,), "float32"), ((), "float32"), ((), "float32")],
    "2, 0-d, 3": [((2,), "float32"), ((), "float32"), ((3,), "float32")],
    "2x3, 3, 3x4x2": [((2, 3), "float32"), ((3,), "float32"), ((3, 4, 2), "float32")],
    "float64 and float32": [((2,), "float64"), ((3,), "float32")],
    "integer and empty": [((2,), "int64"), ((0,), "float32"), ((1,), "float64")],
}


@pytest.mark.parametrize("case", list(BASIS_CASES))
def test_construct_standard_basis_for(case):
    def scenario(m):
        ts = tuple(m.zeros(shape, dtype=getattr(m, dt)) for shape, dt in BASIS_CASES[case])
        return m.autograd.functional._construct_standard_basis_for(ts, tuple(t.numel() for t in ts))

    check(scenario)


@pytest.mark.parametrize("args", [((1,), (1, 2)), ((), ())], ids=["lengths differ", "no tensor"])
def test_construct_standard_basis_for_refusals(args):
    check(lambda m: m.autograd.functional._construct_standard_basis_for(
        tuple(m.zeros(n) for n in args[0]), args[1]))


# -- strategies, forward mode and strict with vectorize: PyTorch's classes, messages and order ------------
ARGUMENT_CASES = {
    "jacobian: unknown strategy": lambda m, F: F.jacobian(lambda a: a * 2, _x(m), strategy="fwd"),
    "jacobian: unknown strategy before the input types": lambda m, F: F.jacobian(lambda a: a, [_x(m)], strategy="x"),
    "hessian: unknown strategy": lambda m, F: F.hessian(_cube, _x(m), outer_jacobian_strategy="fwd"),
    "hessian: input types before the strategy": lambda m, F: F.hessian(_cube, [_x(m)], outer_jacobian_strategy="x"),
    "jacobian forward-mode: create_graph": lambda m, F: F.jacobian(lambda a: a * 2, _x(m), create_graph=True,
                                                                   strategy="forward-mode", vectorize=True),
    "jacobian forward-mode: strict": lambda m, F: F.jacobian(lambda a: a * 2, _x(m), strict=True,
                                                             strategy="forward-mode", vectorize=True),
    "jacobian forward-mode: strict before vectorize": lambda m, F: F.jacobian(lambda a: a * 2, _x(m), strict=True,
                                                                              strategy="forward-mode"),
    "jacobian forward-mode: vectorize=False": lambda m, F: F.jacobian(lambda a: a * 2, _x(m),
                                                                      strategy="forward-mode"),
    "jacobian forward-mode: input types before vectorize": lambda m, F: F.jacobian(lambda a: a, [_x(m)],
                                                                                   strategy="forward-mode"),
    "jacobian forward-mode: integer input": lambda m, F: F.jacobian(lambda a: a * 2, m.tensor([1, 2]),
                                                                    strategy="forward-mode", vectorize=True),
    "hessian forward-mode: create_graph": lambda m, F: F.hessian(_cube, _x(m), create_graph=True, vectorize=True,
                                                                 outer_jacobian_strategy="forward-mode"),
    "hessian forward-mode: strict": lambda m, F: F.hessian(_cube, _x(m), strict=True, vectorize=True,
                                                           outer_jacobian_strategy="forward-mode"),
    "hessian forward-mode: vectorize=False": lambda m, F: F.hessian(_cube, _x(m),
                                                                    outer_jacobian_strategy="forward-mode"),
    "hessian forward-mode: integer input": lambda m, F: F.hessian(_cube, m.tensor([1, 2]), vectorize=True,
                                                                  outer_jacobian_strategy="forward-mode"),
    "jacobian: strict with vectorize": lambda m, F: F.jacobian(lambda a: a * 2, _x(m), strict=True, vectorize=True),
    "jacobian: strict output check before strict with vectorize":
        lambda m, F: F.jacobian(lambda a: a.detach(), _x(m), strict=True, vectorize=True),
    "jacobian: input types before strict with vectorize":
        lambda m, F: F.jacobian(lambda a, b: a, (_x(m), 2), strict=True, vectorize=True),
    "hessian: strict with vectorize": lambda m, F: F.hessian(_cube, _x(m), strict=True, vectorize=True),
    "hessian: strict output check before strict with vectorize":
        lambda m, F: F.hessian(lambda a: a.detach().sum(), _x(m), strict=True, vectorize=True),
    "hessian: linear function under strict before strict with vectorize":
        lambda m, F: F.hessian(lambda a: (3 * a).sum(), _x(m), strict=True, vectorize=True),
    "hessian: one-tuple output before strict with vectorize":
        lambda m, F: F.hessian(lambda a: (_cube(a),), _x(m), strict=True, vectorize=True),
}


@pytest.mark.parametrize("case", list(ARGUMENT_CASES))
def test_argument_checks(case):
    check(lambda m: ARGUMENT_CASES[case](m, m.autograd.functional))


def test_forward_mode_refusals_are_not_implemented_errors():
    with pytest.raises(NotImplementedError, match=r"isonly implemented for `vectorize=True`\.$"):
        tp.autograd.functional.jacobian(lambda a: a, tp.ones(2), strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and `strategy=\"forward-mode\"`"):
        tp.autograd.functional.hessian(_cube, tp.ones(2), create_graph=True, vectorize=True,
                                       outer_jacobian_strategy="forward-mode")


# -- type and dtype errors, with PyTorch's wording (`type(x)` as Python prints it) -------------------------
TYPE_CASES = {
    "inputs: a non-Tensor in the tuple": lambda m, F: F.vjp(lambda a, b: a, (_x(m), 2), _x(m)),
    "inputs: a list": lambda m, F: F.jacobian(lambda a: a, [_x(m)]),
    "inputs: None": lambda m, F: F.jvp(lambda: _x(m), None),
    "outputs: a str in the tuple": lambda m, F: F.jacobian(lambda a: (a, "s"), _x(m)),
    "outputs: a list": lambda m, F: F.vjp(lambda a: [a, a], _x(m), (_x(m), _x(m))),
    "outputs: None": lambda m, F: F.hessian(lambda a: None, _x(m)),
    "v: a non-Tensor in the tuple (vjp)": lambda m, F: F.vjp(lambda a: a, _x(m), (_x(m), 2)),
    "v: a list (vjp)": lambda m, F: F.vjp(lambda a: a * 2, _x(m), [_x(m)]),
    "v: a list (jvp)": lambda m, F: F.jvp(lambda a: a * 2, _x(m), [_x(m)]),
    "v: a non-Tensor in the tuple (hvp)": lambda m, F: F.hvp(_cube, _x(m), (_x(m), 2)),
    "vjp: the outputs are checked before v": lambda m, F: F.vjp(lambda a: "s", _x(m), (_x(m), 2)),
    "vjp: strict is checked before v": lambda m, F: F.vjp(lambda a: a.detach(), _x(m), (_x(m), 2), strict=True),
    "integer input (vjp)": lambda m, F: F.vjp(lambda a: a * 2, m.tensor([1, 2]), m.tensor([1, 1])),
    "integer input (jacobian)": lambda m, F: F.jacobian(lambda a: a * 2, m.tensor([1, 2])),
    "integer input (hessian)": lambda m, F: F.hessian(_cube, m.tensor([1, 2])),
    "integer input (vhp)": lambda m, F: F.vhp(_cube, m.tensor([1, 2]), m.tensor([1, 1])),
    "input types before dtypes": lambda m, F: F.jacobian(lambda a, b: a, (m.tensor([1, 2]), 2)),
}


@pytest.mark.parametrize("case", list(TYPE_CASES))
def test_type_and_dtype_errors(case):
    check(lambda m: TYPE_CASES[case](m, m.autograd.functional))


# -- second order: the function returns one Tensor (not a tuple of one); its output keeps its shape -------
def _branchy(a):  # data-dependent Python: runs on the tape
    return (a ** 3).sum().view(1, 1, 1) if a.sum().item() > 0 else a.sum().view(1, 1, 1)


SECOND_CASES = {
    "hessian of a one-tuple": lambda m, F: F.hessian(lambda a: (_cube(a),), _x(m)),
    "hessian of a one-tuple, strict": lambda m, F: F.hessian(lambda a: (_cube(a),), _x(m), strict=True),
    "vhp of a one-tuple": lambda m, F: F.vhp(lambda a: (_cube(a),), _x(m), _x(m)),
    "hvp of a one-tuple, create_graph": lambda m, F: F.hvp(lambda a: (_cube(a),), _x(m), _x(m), create_graph=True),
    "vhp of a two-tuple": lambda m, F: F.vhp(lambda a: (_cube(a), a.sum()), _x(m), _x(m)),
    "vhp: a (1, 1, 1) output": lambda m, F: F.vhp(lambda a: _cube(a).view(1, 1, 1), _x(m), _x(m)),
    "hvp: a (1,) output": lambda m, F: F.hvp(lambda a: _cube(a).reshape(1), _x(m), _x(m)),
    "vhp: a (1, 1) output, create_graph": lambda m, F: F.vhp(lambda a: _cube(a).view(1, 1),
                                                             _x(m).requires_grad_(), _x(m), create_graph=True),
    "hvp: a (1, 1, 1) output, strict": lambda m, F: F.hvp(lambda a: _cube(a).view(1, 1, 1), _x(m), _x(m),
                                                          strict=True),
    "vhp: a (1, 1, 1) output, tape path": lambda m, F: F.vhp(_branchy, _x(m), _x(m)),
    "hvp: a 0-d output": lambda m, F: F.hvp(_cube, _x(m), _x(m)),
}


@pytest.mark.parametrize("case", list(SECOND_CASES))
def test_second_order_outputs(case):
    check(lambda m: SECOND_CASES[case](m, m.autograd.functional))


# -- jvp's strict checks along the double-backward trick ----------------------------------------------------
def _leaf_output(m):
    return lambda a: (a * a, m.ones(2, dtype=m.float64).requires_grad_())


JVP_CASES = {
    "an input no output depends on": lambda m, F: F.jvp(lambda a, b: a * 2, (_x(m), _x(m)), (_x(m), _x(m)),
                                                        strict=True),
    "an unused input, not strict (zeros)": lambda m, F: F.jvp(lambda a, b: a * 2, (_x(m), _x(m)), (_x(m), _x(m))),
    "an output that depends on no input": lambda m, F: F.jvp(_leaf_output(m), _x(m), _x(m), strict=True),
    "an unconnected output, not strict (zeros)": lambda m, F: F.jvp(_leaf_output(m), _x(m), _x(m)),
    "strict and create_graph, every input used": lambda m, F: F.jvp(
        lambda a, b: a * b, (_x(m).requires_grad_(), _x(m).requires_grad_()), (_x(m), _x(m)), strict=True,
        create_graph=True),
}


@pytest.mark.parametrize("case", list(JVP_CASES))
def test_jvp_strict_checks(case):
    check(lambda m: JVP_CASES[case](m, m.autograd.functional))


# -- second-order products under strict and create_graph: PyTorch refuses one without a graph -----------------
SECOND_ORDER = {
    "x ** 2": lambda a: (a ** 2).sum(),
    "square": lambda a: a.square().sum(),
    "pow(x, 2.0)": lambda a: a.pow(2.0).sum(),
    "a * a": lambda a: (a * a).sum(),
    "x ** 3": _cube,
    "exp": lambda a: a.exp().sum(),
    "sin * cos": lambda a: (a.sin() * a.cos()).sum(),
    "linear": lambda a: (2 * a).sum(),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("kind", ["vhp", "hvp"])
@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_strict_second_order_products(name, kind, create_graph):
    def scenario(m):
        return getattr(m.autograd.functional, kind)(SECOND_ORDER[name], _x(m), m.ones(4, dtype=m.float64),
                                                   strict=True, create_graph=create_graph)
    check(scenario)


@pytest.mark.parametrize("name", ["x ** 2", "square", "pow(x, 2.0)", "a * a", "x ** 3"])
def test_third_derivative_graph(name):
    """PyTorch differentiates `x ** 2` as `2 * x.pow(1)` and that as `x.pow(0)`: the second derivative stays on
    the graph, and a third `grad` gives zeros (`a * a`'s second derivative has no graph)."""
    def scenario(m):
        x = _x(m)
        x.requires_grad_()
        (g,) = m.autograd.grad(SECOND_ORDER[name](x), x, create_graph=True)
        (h,) = m.autograd.grad(g, x, m.ones(4, dtype=m.float64), create_graph=True)
        if not h.requires_grad:
            return h
        (k,) = m.autograd.grad(h, x, m.ones(4, dtype=m.float64), create_graph=True)
        return h, k
    check(scenario)
