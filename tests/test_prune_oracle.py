"""`nn.utils.prune` against PyTorch's: the same masks, parameters, buffers, state dicts, gradients and errors,
for every pruning method, chained pruning, global pruning and `remove`."""

import math

import numpy as np
import pytest

import tapeflow as tp
from tapeflow.nn.utils import prune

torch = pytest.importorskip("torch")
tprune = pytest.importorskip("torch.nn.utils.prune")


def _pair(build):
    """The same module in both libraries (same seed, so the same initial values)."""
    tp.manual_seed(0)
    torch.manual_seed(0)
    return build(tp), build(torch)


def _linear(lib):
    return lib.nn.Linear(6, 5)


def _conv(lib):
    return lib.nn.Conv2d(3, 4, 3)


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3))


def _same_state(m, tm):
    """Parameters, buffers, the pruned attributes and the state dict equal PyTorch's, name by name."""
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in tm.named_buffers()]
    sd, tsd = m.state_dict(), tm.state_dict()
    assert list(sd) == list(tsd)
    for k in sd:
        np.testing.assert_array_equal(sd[k].detach().numpy(), tsd[k].detach().numpy(), err_msg=k)
    for name in [n[:-5] for n in sd if n.endswith("_mask")]:
        np.testing.assert_array_equal(getattr(m, name).detach().numpy(), getattr(tm, name).detach().numpy())


UNSTRUCTURED = [
    ("l1 count", lambda lib, m: lib.l1_unstructured(m, "weight", amount=7)),
    ("l1 fraction", lambda lib, m: lib.l1_unstructured(m, "weight", amount=0.45)),
    ("l1 fraction rounding half to even", lambda lib, m: lib.l1_unstructured(m, "weight", amount=0.25)),
    ("l1 nothing", lambda lib, m: lib.l1_unstructured(m, "weight", amount=0)),
    ("l1 everything", lambda lib, m: lib.l1_unstructured(m, "weight", amount=1.0)),
    ("l1 bias", lambda lib, m: lib.l1_unstructured(m, "bias", amount=2)),
    ("random count", lambda lib, m: lib.random_unstructured(m, "weight", amount=11)),
    ("random fraction", lambda lib, m: lib.random_unstructured(m, "weight", amount=0.6)),
    ("identity", lambda lib, m: lib.identity(m, "weight")),
    ("custom mask", lambda lib, m: lib.custom_from_mask(
        m, "weight", mask=(m.weight.detach() > 0).float())),
]


@pytest.mark.parametrize("name,apply", UNSTRUCTURED, ids=[c[0] for c in UNSTRUCTURED])
def test_unstructured_pruning_matches(name, apply):
    m, tm = _pair(_linear)
    assert apply(prune, m) is m
    apply(tprune, tm)
    _same_state(m, tm)
    assert prune.is_pruned(m)


STRUCTURED = [(kind, amount, n, dim) for kind in ("random", "ln") for amount in (1, 0.5, 0)
              for n in ((None,) if kind == "random" else (1, 2, math.inf, -math.inf, "fro"))
              for dim in (0, 1, -1, -3)]


@pytest.mark.parametrize("kind,amount,n,dim", STRUCTURED)
def test_structured_pruning_matches(kind, amount, n, dim):
    m, tm = _pair(_conv)
    if kind == "random":
        prune.random_structured(m, "weight", amount=amount, dim=dim)
        tprune.random_structured(tm, "weight", amount=amount, dim=dim)
    elif n == "fro":  # a 4-d weight: PyTorch's norm refuses "fro" over three dims
        err = _raised(lambda: prune.ln_structured(m, "weight", amount=amount, n=n, dim=dim))
        assert err == _raised(lambda: tprune.ln_structured(tm, "weight", amount=amount, n=n, dim=dim))
        m, tm = _pair(_linear)
        prune.ln_structured(m, "weight", amount=amount, n=n, dim=dim % 2)
        tprune.ln_structured(tm, "weight", amount=amount, n=n, dim=dim % 2)
    else:
        prune.ln_structured(m, "weight", amount=amount, n=n, dim=dim)
        tprune.ln_structured(tm, "weight", amount=amount, n=n, dim=dim)
    _same_state(m, tm)


def _chain(lib, m):
    lib.l1_unstructured(m, "weight", amount=0.2)
    lib.ln_structured(m, "weight", amount=1, n=2, dim=0)
    lib.random_unstructured(m, "weight", amount=3)
    lib.random_structured(m, "weight", amount=1, dim=1)
    return lib.l1_unstructured(m, "weight", amount=0.1)


def test_chained_pruning_narrows_the_mask_as_pytorch():
    m, tm = _pair(_conv)
    _chain(prune, m)
    _chain(tprune, tm)
    _same_state(m, tm)
    hooks = [h for h in m._forward_pre_hooks.values()]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 5
    assert [type(h).__name__ for h in hooks[0]] == [type(h).__name__ for h in next(iter(tm._forward_pre_hooks.values()))]


def test_importance_scores():
    m, tm = _pair(_conv)
    scores = np.random.default_rng(1).standard_normal(tuple(m.weight.shape)).astype(np.float32)
    prune.l1_unstructured(m, "weight", amount=20, importance_scores=tp.tensor(scores))
    tprune.l1_unstructured(tm, "weight", amount=20, importance_scores=torch.tensor(scores))
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0, importance_scores=tp.tensor(scores))
    tprune.ln_structured(tm, "weight", amount=1, n=1, dim=0, importance_scores=torch.tensor(scores))
    _same_state(m, tm)


@pytest.mark.parametrize("amount", [5, 0.3])
def test_global_unstructured(amount):
    m, tm = _pair(_net)
    prune.l1_unstructured(m[0], "weight", amount=3)  # one tensor already pruned: its mask is respected
    tprune.l1_unstructured(tm[0], "weight", amount=3)
    params = [(m[0], "weight"), (m[2], "weight"), (m[2], "bias")]
    tparams = [(tm[0], "weight"), (tm[2], "weight"), (tm[2], "bias")]
    scores = np.random.default_rng(2).standard_normal(3).astype(np.float32)
    prune.global_unstructured(params, prune.L1Unstructured, importance_scores={(m[2], "bias"): tp.tensor(scores)},
                              amount=amount)
    tprune.global_unstructured(tparams, tprune.L1Unstructured,
                               importance_scores={(tm[2], "bias"): torch.tensor(scores)}, amount=amount)
    for a, b in zip(m, tm):
        _same_state(a, b)
    tp.manual_seed(3)
    torch.manual_seed(3)
    prune.global_unstructured(params, prune.RandomUnstructured, amount=4)
    tprune.global_unstructured(tparams, tprune.RandomUnstructured, amount=4)
    for a, b in zip(m, tm):
        _same_state(a, b)


def test_training_through_pruned_weights_matches():
    m, tm = _pair(_net)
    prune.l1_unstructured(m[0], "weight", amount=0.5)
    tprune.l1_unstructured(tm[0], "weight", amount=0.5)
    prune.ln_structured(m[2], "weight", amount=1, n=2, dim=0)
    tprune.ln_structured(tm[2], "weight", amount=1, n=2, dim=0)
    opt = tp.optim.SGD(m.parameters(), lr=0.1)
    topt = torch.optim.SGD(tm.parameters(), lr=0.1)
    x = np.random.default_rng(4).standard_normal((8, 4)).astype(np.float32)
    for _ in range(3):
        for model, o, xs in ((m, opt, tp.tensor(x)), (tm, topt, torch.tensor(x))):
            o.zero_grad()
            model(xs).pow(2).mean().backward()
            o.step()
        g, tg = m[0].weight_orig.grad.numpy(), tm[0].weight_orig.grad.numpy()
        np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-7)
        assert (g[m[0].weight_mask.numpy() == 0] == 0).all()  # no gradient where pruned
    for a, b in zip(m, tm):
        for (n, p), (_, tparam) in zip(a.named_parameters(), b.named_parameters()):
            np.testing.assert_allclose(p.detach().numpy(), tparam.detach().numpy(), rtol=1e-5, atol=1e-7, err_msg=n)
    np.testing.assert_allclose(m(tp.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_remove_makes_pruning_permanent():
    m, tm = _pair(_conv)
    _chain(prune, m)
    _chain(tprune, tm)
    assert prune.remove(m, "weight") is m
    tprune.remove(tm, "weight")
    _same_state(m, tm)
    assert isinstance(m.weight, tp.nn.Parameter) and not prune.is_pruned(m)
    assert not m._forward_pre_hooks


def test_pruned_state_dict_loads_from_pytorch():
    m, tm = _pair(_linear)
    prune.l1_unstructured(m, "weight", amount=3)
    tp.manual_seed(5)
    torch.manual_seed(5)
    other = torch.nn.Linear(6, 5)
    tprune.random_unstructured(other, "weight", amount=9)
    m.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in other.state_dict().items()})
    x = np.ones((2, 6), np.float32)
    np.testing.assert_allclose(m(tp.tensor(x)).detach().numpy(), other(torch.tensor(x)).detach().numpy(), rtol=1e-6)


def test_prune_method_without_a_module():
    t = np.random.default_rng(6).standard_normal((4, 5)).astype(np.float32)
    for make, tmake in ((lambda lib: lib.L1Unstructured(amount=6),) * 2,
                        (lambda lib: lib.LnStructured(amount=2, n=1, dim=1),) * 2):
        out = make(prune).prune(tp.tensor(t))
        np.testing.assert_array_equal(out.numpy(), tmake(tprune).prune(torch.tensor(t)).numpy())


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and text are compared
        return type(e).__name__, (str(e).replace("torch.Size", "Size").replace("tapeflow.Size", "Size")
                                .replace("tapeflow.nn.", "torch.nn."))
    return None


def _no_module_text(err):
    """The message without module reprs (each library prints its own)."""
    return err if err is None else (err[0], err[1].split(" of module ")[0].split(" to PruningContainer ")[0])


BAD = [
    ("amount type", lambda lib, m: lib.l1_unstructured(m, "weight", amount="1")),
    ("negative count", lambda lib, m: lib.l1_unstructured(m, "weight", amount=-1)),
    ("fraction above one", lambda lib, m: lib.random_unstructured(m, "weight", amount=1.5)),
    ("negative fraction", lambda lib, m: lib.random_structured(m, "weight", amount=-0.1, dim=0)),
    ("count above size", lambda lib, m: lib.l1_unstructured(m, "weight", amount=31)),
    ("structured count above size", lambda lib, m: lib.ln_structured(m, "weight", amount=6, n=2, dim=0)),
    ("structured on 1-d", lambda lib, m: lib.ln_structured(m, "bias", amount=1, n=2, dim=0)),
    ("random structured on 1-d", lambda lib, m: lib.random_structured(m, "bias", amount=1, dim=0)),
    ("dim out of range", lambda lib, m: lib.random_structured(m, "weight", amount=1, dim=2)),
    ("scores shape", lambda lib, m: lib.l1_unstructured(m, "weight", amount=1,
                                                        importance_scores=(tp if lib is prune else torch).ones(3))),
    ("remove unpruned", lambda lib, m: lib.remove(m, "weight")),
    ("global not iterable", lambda lib, m: lib.global_unstructured(3, lib.L1Unstructured, amount=1)),
    ("global scores not dict", lambda lib, m: lib.global_unstructured([(m, "weight")], lib.L1Unstructured,
                                                                      importance_scores=[1], amount=1)),
    ("global structured", lambda lib, m: lib.global_unstructured([(m, "weight")], lib.LnStructured, amount=1, n=2,
                                                                 dim=0)),
    ("custom mask shape", lambda lib, m: lib.custom_from_mask(m, "weight", mask=(tp if lib is prune else torch).ones(2))),
    ("container of another tensor", lambda lib, m: lib.PruningContainer(lib.identity(m, "weight") and next(
        iter(m._forward_pre_hooks.values()))).add_pruning_method(lib.Identity.apply(m, "bias"))),
]


@pytest.mark.parametrize("name,call", BAD, ids=[c[0] for c in BAD])
def test_bad_input_matches_pytorch(name, call):
    m, tm = _pair(_linear)
    err, terr = _raised(lambda: call(prune, m)), _raised(lambda: call(tprune, tm))
    assert terr is not None
    assert _no_module_text(err) == _no_module_text(terr)
    if name not in ("container of another tensor", "global structured"):  # (those act after pruning)
        assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]
