"""`torch.jit`, `torch.compiler`, `torch.random`, `torch.utils.hooks` and `torch._assert` as model code uses them:
tapeflow against PyTorch where both run, and against `tp.compile` for the compiler queries."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tapeflow as tp


# -- torch.random.fork_rng -----------------------------------------------------------------------------------------
def test_fork_rng_restores_the_stream_and_the_seed():
    tp.manual_seed(3)
    with tp.random.fork_rng():
        tp.manual_seed(7)
        assert tp.initial_seed() == 7
        tp.rand(5)
        tp.nn.functional.dropout(tp.ones(4), 0.5)  # (a draw from the JAX key)
    assert tp.initial_seed() == 3
    after = tp.rand(3)
    tp.manual_seed(3)
    np.testing.assert_array_equal(after.numpy(), tp.rand(3).numpy())


def test_fork_rng_restores_on_error_and_can_be_disabled():
    tp.manual_seed(0)
    with pytest.raises(ValueError):
        with tp.random.fork_rng():
            tp.rand(2)
            raise ValueError
    first = tp.rand(1)
    with tp.random.fork_rng(enabled=False):
        second = tp.rand(1)
    tp.manual_seed(0)
    np.testing.assert_array_equal(tp.rand(2).numpy(), np.concatenate([first.numpy(), second.numpy()]))


def test_random_namespace_draws_pytorchs_numbers():
    torch = pytest.importorskip("torch")
    for lib in (tp, torch):
        lib.random.manual_seed(11)
        with lib.random.fork_rng(devices=[]):
            lib.randn(4)
        lib.random.set_rng_state(lib.random.get_rng_state())
    tp.random.manual_seed(11)
    torch.random.manual_seed(11)
    with tp.random.fork_rng(), torch.random.fork_rng():
        tp.rand(7), torch.rand(7)
    np.testing.assert_array_equal(tp.rand(3).numpy(), torch.rand(3).numpy())


# -- torch.jit -------------------------------------------------------------------------------------------------------
def test_jit_queries_and_decorators_leave_eager_code_as_it_is():
    assert tp.jit.is_scripting() is False and tp.jit.is_tracing() is False

    def f(x):
        return x * 2

    assert tp.jit.ignore(f) is f and tp.jit.ignore(drop=True)(f) is f
    assert tp.jit.unused(f) is f and tp.jit.export(f) is f and tp.jit.annotate(int, 3) == 3
    with pytest.warns(DeprecationWarning, match="torch.jit.script` is deprecated"):
        s = tp.jit.script(f)
    assert s(tp.ones(2)).tolist() == [2.0, 2.0]
    m = tp.nn.Linear(2, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tp.jit.script(m) is m


def test_jit_script_warns_as_pytorch_does():
    torch = pytest.importorskip("torch")

    def g(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    caught = []
    for lib in (torch, tp):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.jit.script(g)
        caught.append([(x.category, str(x.message)) for x in w])
    assert caught[0] == caught[1]


def test_jit_trace_as_pytorch():
    """`trace` calls its argument once on the example inputs (PyTorch's errors surface there), warns as PyTorch
    does, and gives back what computes the same numbers as PyTorch's traced program."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, tp):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh())
        x = lib.arange(6.0).view(2, 3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            traced = lib.jit.trace(m, x)
            double = lib.jit.trace(lambda a, b: a * b, (x, x))
            kw = lib.jit.trace(m, example_kwarg_inputs={"input": x})
        messages = sorted({str(x.message) for x in w if "jit.trace`" in str(x.message)})
        errors = []
        for example in ((), (lib.ones(2, 5),)):  # none, and one the layer cannot take
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    lib.jit.trace(m, *example)
                except RuntimeError as e:
                    errors.append(str(e).split(";")[0])  # (tapeflow adds a hint after ";")
        out = traced(x)
        out.sum().backward()
        results.append((messages, errors, out.detach().numpy().round(6).tolist(),
                        double(x, x).numpy().tolist(), kw(x).detach().numpy().round(6).tolist(),
                        m[0].weight.grad.numpy().round(4).tolist(), isinstance(traced, lib.nn.Module)))
    assert results[0] == results[1]


# -- torch.compiler ----------------------------------------------------------------------------------------------------
def test_is_compiling_is_true_only_while_tp_compile_traces():
    seen = []

    def f(x):
        seen.append(tp.compiler.is_compiling())
        return x * 2 if tp.compiler.is_compiling() else x * 3

    compiled = tp.compile(f)
    assert compiled(tp.ones(2)).tolist() == [2.0, 2.0]  # traced once: the program is the compiled branch
    assert compiled(tp.ones(2)).tolist() == [2.0, 2.0]
    assert f(tp.ones(2)).tolist() == [3.0, 3.0]
    assert seen == [True, False] and tp.compiler.is_dynamo_compiling() is False
    assert tp.compiler.is_exporting() is False


def test_a_disabled_function_makes_its_caller_run_eagerly_without_a_warning():
    calls = []

    @tp.compiler.disable
    def log(v):
        calls.append(v.sum().item())  # a host read: untraceable
        return v

    def step(x):
        return log(x * 2) + 1

    compiled = tp.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outs = [compiled(tp.ones(3)).tolist() for _ in range(3)]
    assert outs == [[3.0, 3.0, 3.0]] * 3 and calls == [6.0] * 3
    assert tp.compiler.disable(recursive=False)(abs)(-2) == 2
    strict = tp.compile(step, fullgraph=True)
    with pytest.raises(Exception, match="torch.compiler.disable"):
        strict(tp.ones(3))


def test_reset_makes_every_compiled_function_trace_again():
    traces = []

    def f(x):
        traces.append(1)
        return x + 1

    a, b = tp.compile(f), tp.compile(lambda x: f(x) * 2)
    a(tp.ones(1)), b(tp.ones(1)), a(tp.ones(1)), b(tp.ones(1))
    assert len(traces) == 2
    tp.compiler.reset()
    assert a(tp.ones(1)).item() == 2.0 and b(tp.ones(1)).item() == 4.0
    assert len(traces) == 4
    assert tp.compiler.allow_in_graph(f) is f


# -- torch.utils.hooks, torch._assert ------------------------------------------------------------------------------------
def test_removable_handle_removes_from_every_dict_it_names():
    from tapeflow.utils.hooks import RemovableHandle

    hooks, extra, more = {}, {}, {}
    h = RemovableHandle(hooks, extra_dict=[extra, more])
    hooks[h.id] = extra[h.id] = more[h.id] = print
    h2 = RemovableHandle(hooks, extra_dict=extra)
    assert h2.id != h.id
    hooks[h2.id] = extra[h2.id] = len
    h.remove()
    assert list(hooks) == [h2.id] and list(extra) == [h2.id] and more == {}
    with h2:
        pass
    assert hooks == {} and extra == {}
    assert isinstance(tp.nn.Linear(1, 1).register_forward_hook(lambda *a: None), RemovableHandle)


def test_assert_raises_assertion_error_with_the_message():
    tp._assert(True, "never")
    tp._assert(tp.tensor([1.0]) > 0, "never")
    with pytest.raises(AssertionError, match="x must be 2-D"):
        tp._assert(tp.ones(3).dim() == 2, "x must be 2-D")


# -- a PyTorch program that uses them, run unchanged ------------------------------------------------------------------
PROGRAM = textwrap.dedent('''
    import collections
    import json
    import torch
    from torch.utils.hooks import RemovableHandle

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.drop = torch.nn.Dropout(0.5)

        @torch.jit.ignore
        def stats(self, h):
            return float(h.abs().mean())

        def forward(self, x):
            torch._assert(x.dim() == 2, "expected a batch of vectors")
            h = self.drop(torch.tanh(self.lin(x)))
            if not torch.jit.is_scripting() and not torch.compiler.is_compiling():
                self.last = self.stats(h)
            return h

    torch.manual_seed(0)
    m = Block()
    x = torch.randn(3, 4)
    with torch.random.fork_rng():
        noise = torch.randn(3, 4)  # does not shift the draws below
    out = m(x)
    out.sum().backward()
    hooks = collections.OrderedDict()
    handle = RemovableHandle(hooks)
    hooks[handle.id] = 1
    handle.remove()
    with torch.no_grad():
        modes = [torch._C.is_grad_enabled()]
    torch._C._set_grad_enabled(False)
    modes += [torch.is_grad_enabled(), torch._C._get_tracing_state() is None]
    torch._C._set_grad_enabled(True)
    torch._C._log_api_usage_once("prog.block")
    print(json.dumps({"out": out.tolist(), "grad": m.lin.weight.grad.tolist(), "last": m.last,
                      "after": torch.rand(2).tolist(), "hooks": len(hooks), "modes": [float(v) for v in modes]}))
''')


def test_a_program_using_these_namespaces_gives_pytorchs_numbers(tmp_path):
    pytest.importorskip("torch")
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    runs = [subprocess.run([sys.executable, "-W", "ignore", *pre, str(path)], capture_output=True, text=True,
                           timeout=300) for pre in (["-m", "tapeflow.torch"], [])]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    import json

    mine, theirs = (json.loads(r.stdout.strip().splitlines()[-1]) for r in runs)
    for k in theirs:
        np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-5, atol=1e-6, err_msg=k)


# -- torch.profiler ------------------------------------------------------------------------------------------------------
SCHEDULES = [(dict(wait=1, warmup=1, active=2, repeat=2), 10), (dict(wait=0, warmup=1, active=1), 5),
             (dict(wait=2, warmup=1, active=3, skip_first=1), 6), (dict(wait=1, warmup=1, active=2, skip_first_wait=1), 6)]


def _windows(lib, kw, n):
    """The schedule's actions and, for each trace handed to `on_trace_ready`, the step it was handed over at and
    the `record_function` ranges it holds."""
    P = lib.profiler
    calls = []

    def ready(p):
        calls.append((p.step_num, sorted({e.key for e in p.key_averages() if e.key.startswith("step")})))

    s = P.schedule(**kw)
    with P.profile(activities=[P.ProfilerActivity.CPU], schedule=s, on_trace_ready=ready) as p:
        for i in range(n):
            with P.record_function(f"step{i}"):
                lib.ones(2) * 2
            p.step()
    return [s(i).name for i in range(12)], calls


@pytest.mark.parametrize("kw,n", SCHEDULES)
def test_profiler_schedule_hands_over_pytorchs_windows(kw, n):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _windows(tp, kw, n) == _windows(torch, kw, n)


def test_profiler_without_schedule_records_the_block_and_writes_traces(tmp_path):
    x = tp.randn(3, requires_grad=True)
    with tp.profiler.profile(record_shapes=True,
                             on_trace_ready=tp.profiler.tensorboard_trace_handler(str(tmp_path))) as prof:
        with pytest.raises(RuntimeError, match="no complete trace"):
            prof.key_averages()
        with tp.profiler.record_function("forward"):
            y = (x * x).sum()
        y.backward()
    keys = {e.key for e in prof.key_averages()}
    assert {"forward", "aten::mul", "MulBackward0"} <= keys
    assert "forward" in prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.endswith(".pt.trace.json")
    import json

    assert any(ev.get("name") == "forward" for ev in json.loads(files[0].read_text())["traceEvents"])
    with pytest.raises(ValueError):
        tp.profiler.schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        tp.profiler.schedule(wait=1, warmup=0, active=1)


# -- torch.nn.attention.sdpa_kernel ------------------------------------------------------------------------------------
def _sdpa_outcomes(lib):
    """For each backend choice and input kind: "ok" with the output's sum, or the error's class and message."""
    F, A = lib.nn.functional, lib.nn.attention
    lib.manual_seed(0)
    q4 = lib.randn(2, 3, 4, 8)
    q3 = lib.randn(3, 4, 8)
    inputs = {"4d": (q4, q4, q4, {}), "mask": (q4, q4, q4, {"attn_mask": lib.ones(4, 4, dtype=lib.bool)}),
              "dropout": (q4, q4, q4, {"dropout_p": 0.1}), "3d": (q3, q3, q3, {}),
              "value head": (q4, q4, q4[..., :6], {}), "causal": (q4, q4, q4, {"is_causal": True})}
    choices = [[A.SDPBackend.MATH], [A.SDPBackend.FLASH_ATTENTION], [A.SDPBackend.EFFICIENT_ATTENTION],
               [A.SDPBackend.CUDNN_ATTENTION], [A.SDPBackend.FLASH_ATTENTION, A.SDPBackend.EFFICIENT_ATTENTION],
               [A.SDPBackend.MATH, A.SDPBackend.FLASH_ATTENTION]]
    out = {}
    for c in choices:
        for name, (q, k, v, kw) in inputs.items():
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    with A.sdpa_kernel(c):
                        r = F.scaled_dot_product_attention(q, k, v, **kw)
                    res = "ok" if kw.get("dropout_p") else ("ok", round(float(r.sum()), 4))
                except RuntimeError as e:
                    res = str(e)
            why = [str(x.message).split(" (Triggered")[0] for x in w if "kernel" in str(x.message) or
                   "requires" in str(x.message) or "dropout" in str(x.message)]
            out[(tuple(b.name for b in c), name)] = res, why
    lib.backends.cuda.enable_math_sdp(False)
    try:
        with pytest.raises(RuntimeError) as e:
            F.scaled_dot_product_attention(q4, q4, q4, dropout_p=0.2)
        out["switch"] = str(e.value), lib.backends.cuda.math_sdp_enabled()
        with A.sdpa_kernel([A.SDPBackend.MATH]):
            out["inside"] = lib.backends.cuda.math_sdp_enabled(), lib.backends.cuda.flash_sdp_enabled()
        out["after"] = lib.backends.cuda.math_sdp_enabled(), lib.backends.cuda.flash_sdp_enabled()
    finally:
        lib.backends.cuda.enable_math_sdp(True)
    with pytest.raises(AssertionError) as e:
        with A.sdpa_kernel("MATH"):
            pass
    out["bad"] = str(e.value)
    return out


def test_sdpa_kernel_allows_and_refuses_what_pytorch_does_on_the_cpu():
    torch = pytest.importorskip("torch")
    mine, theirs = _sdpa_outcomes(tp), _sdpa_outcomes(torch)
    assert mine.keys() == theirs.keys()
    for k in theirs:
        assert mine[k] == theirs[k], k


@pytest.mark.parametrize("backend", ["cudnn", "mkldnn"])
def test_backend_flags_set_switches_inside_and_restore_them(backend):
    ns = getattr(tp.backends, backend)
    before = ns.enabled, ns.deterministic
    with ns.flags(enabled=False, deterministic=True):
        assert (ns.enabled, ns.deterministic) == (False, True)
    assert (ns.enabled, ns.deterministic) == before
    with ns.flags():  # (PyTorch's default turns the backend off)
        assert ns.enabled is False
    assert ns.enabled == before[0]
    with pytest.raises(ValueError), ns.flags(enabled=False):
        raise ValueError
    assert ns.enabled == before[0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        with ns.flags(bogus=1):
            pass


def test_older_spellings_real_programs_use():
    """`torch.cuda.amp.GradScaler/autocast`, `torch.cpu.amp.autocast`, `torch.mps.is_available`,
    `lr_scheduler._LRScheduler`, `nn.modules.utils._pair`, `BatchNorm2d(bias=False)`: what PyTorch gives."""
    import warnings

    torch = pytest.importorskip("torch")

    def run(m):
        from importlib import import_module

        utils = import_module(f"{m.__name__}.nn.modules.utils")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scaler = m.cuda.amp.GradScaler()
            with m.cuda.amp.autocast():
                cuda_autocast = m.is_autocast_enabled()
            with m.cpu.amp.autocast():
                cpu_dtype = str((m.ones(2, 2) @ m.ones(2, 2)).dtype).split(".")[-1]
        bn = m.nn.BatchNorm2d(3, bias=False)

        class Warm(m.optim.lr_scheduler._LRScheduler):
            def get_lr(self):
                return [g * min(1.0, (self.last_epoch + 1) / 3) for g in self.base_lrs]
        opt = m.optim.SGD([m.nn.Parameter(m.ones(1))], lr=0.3)
        sch = Warm(opt)
        lrs = []
        for _ in range(3):
            opt.step()
            sch.step()
            lrs.append(round(opt.param_groups[0]["lr"], 6))
        return (utils._pair(3), utils._triple([1, 2, 3]), scaler.is_enabled() == m.cuda.is_available(),
                cuda_autocast == m.cuda.is_available(), cpu_dtype, m.mps.is_available(), m.cpu.is_available(),
                repr(bn).replace("tapeflow", "torch"), [n for n, _ in bn.named_parameters()],
                tuple(bn(m.ones(2, 3, 2, 2)).shape), repr(m.nn.InstanceNorm2d(3, affine=True, bias=False)), lrs,
                isinstance(sch, m.optim.lr_scheduler.LRScheduler))

    assert run(tp) == run(torch)
