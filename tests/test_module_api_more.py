"""The rest of Module's and Optimizer's API, run the same way on tapeflow and on PyTorch: state-dict and load
hooks (order, arguments, edits), extra state, dtype shorthands, get_buffer / set_submodule / to_empty /
skip_init, batch-norm fusion, split gradient clipping, optimizer step and state-dict hooks, deprecated names."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import tapeflow as tp

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")
pytest.importorskip("torch.optim.optimizer")  # (registers the module in sys.modules)

LIBS = [tp, torch]


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 1))


def _state_dict_hook_trace(lib):
    net, log = _net(lib), []
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", type(m).__name__, prefix)))
    net[1].register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", type(m).__name__, prefix)))
    net[1].register_state_dict_post_hook(lambda m, sd, prefix, meta: log.append(("post", prefix, len(sd))))

    def drop_bias(m, sd, prefix, meta):
        sd.pop(prefix + "2.bias")
    net.register_state_dict_post_hook(drop_bias)
    keys = list(net.state_dict())
    return log, keys


def test_state_dict_hooks_run_as_in_pytorch():
    assert _state_dict_hook_trace(tp) == _state_dict_hook_trace(torch)


def _load_hook_trace(lib):
    net, log = _net(lib), []
    sd = {k.replace("0.", "first."): v for k, v in _net(lib).state_dict().items()}

    def rename(m, state_dict, prefix, meta, strict, missing, unexpected, errors):
        log.append(("pre", prefix, strict))
        for k in [k for k in state_dict if k.startswith(prefix + "first.")]:
            state_dict[k.replace("first.", "0.")] = state_dict.pop(k)
    net.register_load_state_dict_pre_hook(rename)
    net.register_load_state_dict_post_hook(lambda m, keys: log.append(("post", list(keys.missing_keys),
                                                                         list(keys.unexpected_keys))))
    result = net.load_state_dict(sd)
    renamed = sorted(sd)  # the caller's dict is not edited
    partial = net.load_state_dict({"2.weight": lib.zeros(1, 3)}, strict=False)
    return log, repr(result), renamed, sorted(partial.missing_keys), float(net[2].weight.abs().sum())


def test_load_state_dict_hooks_run_as_in_pytorch():
    assert _load_hook_trace(tp) == _load_hook_trace(torch)


def test_a_load_post_hook_can_forgive_missing_keys():
    for lib in LIBS:
        net = lib.nn.Linear(2, 2)
        net.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
        assert repr(net.load_state_dict({"weight": lib.zeros(2, 2)})) == "<All keys matched successfully>"


def _extra_state(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(1, 1)
            self.steps = 0

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

    a, b = lib.nn.Sequential(Counter()), lib.nn.Sequential(Counter())
    a[0].steps = 7
    keys = list(a.state_dict())
    b.load_state_dict(a.state_dict())
    missing = b.load_state_dict({"0.fc.weight": lib.ones(1, 1), "0.fc.bias": lib.ones(1)}, strict=False)
    with pytest.raises(RuntimeError) as info:
        lib.nn.Module().get_extra_state()
    return keys, b[0].steps, sorted(missing.missing_keys), str(info.value)[:40]


def test_extra_state_as_in_pytorch():
    assert _extra_state(tp) == _extra_state(torch)


def _shorthands(lib):
    net = _net(lib)
    out = [str(net.half()[0].weight.dtype), str(net.bfloat16()[1].running_mean.dtype),
           str(net.type(lib.float64)[1].num_batches_tracked.dtype), str(net.double()[2].bias.dtype)]
    out.append(net.get_buffer("1.running_var").tolist())
    with pytest.raises(AttributeError):
        net.get_buffer("1.nothing")
    net.set_submodule("1", lib.nn.Identity())
    out.append(type(net[1]).__name__)
    with pytest.raises(AttributeError):
        net.set_submodule("9", lib.nn.Identity(), strict=True)
    out.append(net.share_memory() is net)
    return [o.split(".")[-1] if isinstance(o, str) else o for o in out]


def test_dtype_shorthands_and_lookups_as_in_pytorch():
    assert _shorthands(tp) == _shorthands(torch)


def test_to_empty_and_skip_init_give_storage_of_the_right_shapes():
    for lib in LIBS:
        m = lib.nn.Linear(4, 3, device="meta")
        assert m.weight.device.type == "meta"
        m.to_empty(device="cpu")
        assert m.weight.device.type == "cpu" and tuple(m.weight.shape) == (3, 4) and m.weight.requires_grad
        s = lib.nn.utils.skip_init(lib.nn.Conv2d, 2, 5, 3)
        assert tuple(s.weight.shape) == (5, 2, 3, 3) and s.weight.device.type == "cpu"


@pytest.mark.parametrize("transpose", [False, True])
def test_conv_bn_fusion_equals_pytorchs(transpose):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 6, 6))
    outs = []
    for lib in LIBS:
        conv = (lib.nn.ConvTranspose2d(3, 4, 3) if transpose else lib.nn.Conv2d(3, 4, 3)).double().eval()
        bn = lib.nn.BatchNorm2d(4).double().eval()
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(rng.standard_normal(tuple(conv.weight.shape))))
            conv.bias.copy_(lib.tensor(rng.standard_normal(4)))
            bn.running_mean.copy_(lib.tensor([0.1, -0.2, 0.3, 0.0], dtype=lib.float64))
            bn.running_var.copy_(lib.tensor([1.5, 0.5, 2.0, 1.0], dtype=lib.float64))
            bn.weight.copy_(lib.tensor([1.0, 2.0, -1.0, 0.5], dtype=lib.float64))
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        xt = lib.tensor(x)
        outs.append((fused(xt).detach().numpy(), bn(conv(xt)).detach().numpy()))
        rng = np.random.default_rng(1)
        rng.standard_normal((2, 3, 6, 6))
    np.testing.assert_allclose(outs[0][0], outs[0][1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-10, atol=1e-12)


def test_linear_bn_fusion_and_split_clipping_equal_pytorchs():
    res = []
    for lib in LIBS:
        lib.manual_seed(0)
        lin, bn = lib.nn.Linear(3, 2).double().eval(), lib.nn.BatchNorm1d(2).double().eval()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]], dtype=lib.float64))
            lin.bias.copy_(lib.tensor([0.5, -1.0], dtype=lib.float64))
            bn.running_var.fill_(4.0)
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        x = lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64)
        p = lib.nn.Parameter(lib.zeros(3))
        p.grad = lib.tensor([3.0, 4.0, 12.0])
        total = lib.nn.utils.get_total_norm([p.grad], 2.0)
        lib.nn.utils.clip_grads_with_norm_([p], 2.0, total)
        res.append((fused(x).tolist(), bn(lin(x)).tolist(), float(total), p.grad.tolist()))
    np.testing.assert_allclose(res[0][0], res[0][1], rtol=1e-12)
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    assert res[0][2] == pytest.approx(res[1][2]) and res[0][3] == pytest.approx(res[1][3])


def _optimizer_hooks(lib):
    p = lib.nn.Parameter(lib.ones(2))
    p.grad = lib.ones(2)
    opt = lib.optim.SGD([p], lr=0.5)
    log = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre", len(args), sorted(kwargs))))
    opt.register_step_post_hook(lambda o, args, kwargs: log.append(("post", p.tolist())))
    optimizer_module = sys.modules[lib.__name__ + ".optim.optimizer"]
    g = optimizer_module.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("global", type(o).__name__)))
    opt.step()
    g.remove()
    h1.remove()
    opt.step()
    opt.register_state_dict_pre_hook(lambda o: log.append("sd-pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load-pre", sorted(sd))))
    opt.register_load_state_dict_post_hook(lambda o: log.append("load-post"))
    opt.load_state_dict(sd)
    return log, sorted(sd)


def test_optimizer_hooks_run_as_in_pytorch():
    assert _optimizer_hooks(tp) == _optimizer_hooks(torch)


@pytest.mark.parametrize("lib", LIBS, ids=["tapeflow", "torch"])
def test_a_step_pre_hook_can_replace_the_arguments(lib):
    p = lib.nn.Parameter(lib.ones(1))
    p.grad = lib.ones(1)
    opt = lib.optim.SGD([p], lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: ((o, lambda: calls.append(1) or lib.tensor(3.0)), {}))
    assert float(opt.step()) == 3.0 and calls == [1]


@pytest.mark.parametrize("name,args", [("uniform", ()), ("normal", ()), ("constant", (0.5,)), ("xavier_uniform", ()),
                                       ("kaiming_normal", ()), ("orthogonal", ()), ("dirac", ())])
def test_deprecated_init_names_warn_and_work(name, args):
    shape = (2, 2, 3) if name == "dirac" else (3, 3)
    for lib in LIBS:
        with pytest.warns(FutureWarning):
            out = getattr(lib.nn.init, name)(lib.empty(*shape), *args)
        assert tuple(out.shape) == shape
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.nn.init.constant_(tp.empty(2), 1.0)
