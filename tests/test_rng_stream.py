"""Seeded eager draws equal PyTorch's CPU generator's: `rand`, `randn`, `randint`, `normal`, `uniform_`,
`normal_`, `random_`, and layers' default initialisation, one call after another from one seed; with an
accelerator as the default device, the draws PyTorch makes on the CPU still do."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import tapeflow as tp
from tapeflow import _factories

torch = pytest.importorskip("torch", reason="PyTorch (the oracle) is not installed")

# On an accelerator, draws that fill or imitate a device tensor come from the device's generator, as PyTorch's
# CUDA draws do: these tests compare them with PyTorch's CPU stream, so they run where tensors live on the CPU.
cpu_draws = pytest.mark.skipif(jax.default_backend() != "cpu", reason="device tensors draw from the device's generator")


def _draws(lib, seed: int) -> list:
    """A run of draws from one seed, in the order a program makes them."""
    g = lib.manual_seed(seed)
    assert g is not None
    out = []
    for n in (1, 3, 15, 16, 17, 31, 40):  # (Box-Muller in blocks of 16 from 16 elements on; a tail redrawn)
        out.append(lib.randn(n))
        out.append(lib.rand(n))
    out += [lib.randn(5, dtype=lib.float64), lib.randn(2, 17, dtype=lib.float64), lib.rand(4, dtype=lib.float64)]
    out += [lib.randint(3, 17, (9,)), lib.randint(0, 2**40, (3,)), lib.randint(5, (2, 2), dtype=lib.int32)]
    out += [lib.normal(2.0, 0.5, size=(20,)), lib.normal(-1.0, 3.0, size=(3,))]
    out += [lib.empty(7).uniform_(-0.3, 0.7), lib.empty(4, 5).normal_(1.0, 0.1), lib.empty(6).random_(0, 10)]
    out += [lib.randn_like(lib.zeros(3, 7)), lib.rand_like(lib.zeros(2)), lib.empty(size=(2, 3)).uniform_()]
    out += [lib.normal(lib.zeros(5), lib.ones(5))]
    return [np.asarray(t.tolist(), dtype=np.float64) for t in out]


@cpu_draws
@pytest.mark.parametrize("seed", [0, 1234, 2**40 + 7])
def test_seeded_draws_equal_pytorchs(seed):
    for i, (mine, theirs) in enumerate(zip(_draws(tp, seed), _draws(torch, seed), strict=True)):
        # uniforms and integers are exact; normals agree to float32 rounding (PyTorch's vectorised log/sin/cos)
        np.testing.assert_allclose(mine, theirs, rtol=2e-6, atol=2e-6, err_msg=f"draw {i}")


def _exact_draws(lib) -> list:
    lib.manual_seed(11)
    return [lib.empty(500).uniform_(-0.37, 2.9), lib.empty(300, dtype=lib.float64).uniform_(-3.3, 7.1),
            lib.nn.Linear(30, 20).weight, lib.nn.Conv2d(3, 8, 3).bias, lib.rand(40),
            lib.empty(50, dtype=lib.float64).normal_(-2.0, 3.3), lib.empty(5).normal_(1.5, 0.3),
            lib.normal(0.7, 2.0, size=(7,))]


@cpu_draws
def test_uniforms_and_initialisation_are_bit_exact():
    """`x * (high - low) + low` (and a normal's `* std + mean`) rounded once, as PyTorch's compiled kernels
    fuse them: uniform draws, layers' initialisation and float64 normals equal PyTorch's bit for bit."""
    for i, (mine, theirs) in enumerate(zip(_exact_draws(tp), _exact_draws(torch), strict=True)):
        np.testing.assert_array_equal(np.asarray(mine.tolist()), np.asarray(theirs.detach().tolist()), f"draw {i}")


def test_default_initialisation_equals_pytorchs():
    def params(lib):
        lib.manual_seed(0)
        nn = lib.nn
        layers = [nn.Linear(7, 5), nn.Conv2d(3, 4, 3), nn.Embedding(10, 4), nn.LSTM(4, 6), nn.GRU(3, 2),
                  nn.MultiheadAttention(8, 2), nn.BatchNorm1d(3), nn.ConvTranspose1d(2, 3, 4), nn.Bilinear(2, 3, 4)]
        w = lib.empty(20, 30)
        inits = [nn.init.xavier_normal_(w.clone()), nn.init.kaiming_normal_(w.clone()),
                 nn.init.xavier_uniform_(w.clone()), nn.init.kaiming_uniform_(w.clone(), a=0.1),
                 nn.init.trunc_normal_(w.clone(), std=0.02), nn.init.trunc_normal_(w.clone(), a=2.0, b=3.0)]
        return [np.asarray(p.tolist()) for m in layers for p in m.parameters()] + [np.asarray(t.tolist()) for t in inits]

    for i, (mine, theirs) in enumerate(zip(params(tp), params(torch), strict=True)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6, err_msg=f"tensor {i}")


def test_generators_and_saved_states_replay_the_stream():
    g, tg = tp.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    np.testing.assert_allclose(tp.randn(20, generator=g).tolist(), torch.randn(20, generator=tg).tolist(), rtol=2e-6)
    np.testing.assert_array_equal(tp.rand(5, generator=g).tolist(), torch.rand(5, generator=tg).tolist())
    tp.manual_seed(0)
    tp.randn(3)  # (leaves one Box-Muller sample over: the state keeps it)
    state = tp.get_rng_state()
    first = [tp.randn(3).tolist(), tp.rand(2).tolist(), tp.randn(17).tolist()]
    tp.set_rng_state(state)
    assert [tp.randn(3).tolist(), tp.rand(2).tolist(), tp.randn(17).tolist()] == first
    with pytest.raises(RuntimeError, match="uint8 state"):
        tp.set_rng_state(tp.zeros(3))


def test_compiled_steps_draw_what_eager_steps_draw():
    """`tp.compile` draws each call's numbers from the same stream, in the same order, as the eager function
    (made on the host before the call and passed in): the same values call after call, fresh every call."""
    def step(x):
        noise = tp.randn(x.shape) * 0.1 + tp.rand(3, dtype=tp.float64).sum()
        keep = tp.randint(0, 2, x.shape).float()
        return x + noise * keep + tp.empty(2).uniform_(-1, 1).sum() + tp.normal(0.0, 2.0, size=(3,))

    x = tp.zeros(5, 3)
    tp.manual_seed(4)
    eager = [step(x).tolist() for _ in range(4)] + [tp.rand(2).tolist()]
    compiled = tp.compile(step)
    tp.manual_seed(4)
    staged = [compiled(x).tolist() for _ in range(4)] + [tp.rand(2).tolist()]
    np.testing.assert_allclose(np.asarray(staged[:4]), np.asarray(eager[:4]), rtol=1e-6, atol=1e-6)
    assert staged[4] == eager[4]  # (the stream advanced exactly as far)
    assert eager[0] != eager[1]
    assert compiled.traces <= 2  # (the first trace makes its draws on the host; the second takes them as inputs)


def _dropout_run(lib) -> list:
    """Dropout masks and a short training run with `nn.Dropout`, from one seed."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(4, 6, requires_grad=True)
    d = F.dropout(x, 0.3)
    d.sum().backward()
    out = [d, x.grad, F.dropout2d(lib.ones(2, 5, 3, 3), 0.4), F.alpha_dropout(lib.ones(20), 0.2, True),
           lib.bernoulli(lib.rand(10)), lib.bernoulli(lib.zeros(10), 0.6), lib.empty(12).bernoulli_(0.25),
           # a transposed input is masked in its memory's order, as PyTorch draws `empty_like(input)`'s
           F.dropout(lib.ones(3, 4, 5).transpose(0, 1), 0.5), F.dropout(lib.ones(4, 6)[:, ::2], 0.5)]
    lstm = lib.nn.LSTM(3, 4, num_layers=2, dropout=0.4, batch_first=True)
    out.append(F.dropout(lstm(lib.randn(2, 5, 3))[0], 0.3))  # (a batch-first output is a time-major view)
    model = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Dropout(0.5), lib.nn.Linear(16, 3))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    xs, ys = lib.randn(10, 8), lib.randint(0, 3, (10,))
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
        out.append(loss.detach())
    return [np.asarray(t.tolist()) for t in out] + [d.grad_fn.name()]


@cpu_draws
def test_dropout_and_bernoulli_draw_pytorchs_masks():
    mine, theirs = _dropout_run(tp), _dropout_run(torch)
    assert mine[-1] == theirs[-1] == "MulBackward0"  # (PyTorch's CPU dropout multiplies by a scaled mask)
    for i, (a, b) in enumerate(zip(mine[:-1], theirs[:-1], strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"result {i}")


def test_compiled_dropout_draws_the_eager_masks():
    def run(compiled):
        tp.manual_seed(1)
        model = tp.nn.Sequential(tp.nn.Linear(8, 16), tp.nn.Dropout(0.5), tp.nn.Linear(16, 2))
        opt = tp.optim.SGD(model.parameters(), lr=0.1)
        x, y = tp.randn(6, 8), tp.randn(6, 2)

        def step():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        run_step = tp.compile(step) if compiled else step
        return [run_step().item() for _ in range(4)]

    np.testing.assert_allclose(run(True), run(False), rtol=1e-6)


def _shuffles(lib) -> list:
    """Shuffled epochs, splits and samplers from one seed, as a training script draws them."""
    data = lib.utils.data
    lib.manual_seed(0)
    out = [lib.randperm(37).tolist()]
    ds = data.TensorDataset(lib.arange(50.0).unsqueeze(1), lib.arange(50))
    loader = data.DataLoader(ds, batch_size=8, shuffle=True)
    for _ in range(2):
        out.append([i for batch in loader for i in batch[1].tolist()])
    a, b = data.random_split(range(20), [15, 5])
    out.append(list(a.indices) + list(b.indices))
    out.append(list(data.RandomSampler(range(10), replacement=True, num_samples=40)))
    g = lib.Generator().manual_seed(5)
    out.append([i for batch in data.DataLoader(ds, batch_size=10, shuffle=True, generator=g) for i in batch[1].tolist()])
    out.append([lib.empty((), dtype=lib.int64).random_().item(), lib.empty(3, dtype=lib.int32).random_().tolist()])
    out.append(lib.rand(2).tolist())
    return out


@cpu_draws
def test_shuffling_draws_pytorchs_orders():
    assert _shuffles(tp) == _shuffles(torch)


def _categorical_draws(lib) -> list:
    lib.manual_seed(0)
    p = lib.rand(4, 7) ** 3
    return [lib.multinomial(p, 1).tolist(), lib.multinomial(p, 3).tolist(),
            lib.multinomial(p, 20, replacement=True).tolist(),
            lib.multinomial(lib.tensor([0.1, 0.0, 0.5, 0.4]), 2).tolist(),
            lib.distributions.Categorical(logits=lib.randn(3, 5)).sample((4,)).tolist(),
            lib.distributions.Categorical(probs=lib.rand(6)).sample().tolist(),
            np.round(lib.empty(6).exponential_(2.0).numpy(), 5).tolist(), lib.rand(2).tolist()]


@cpu_draws
def test_multinomial_and_exponential_draw_pytorchs_numbers():
    assert _categorical_draws(tp) == _categorical_draws(torch)


def _distribution_draws(lib) -> list:
    D = lib.distributions
    lib.manual_seed(0)
    out = [lib.empty(5).cauchy_(1.0, 2.0), lib.empty(20).log_normal_(0.0, 0.5), lib.empty(6).geometric_(0.3)]
    for d in (D.Normal(lib.zeros(3), lib.ones(3)), D.Uniform(0.0, 2.0), D.Bernoulli(probs=lib.full((5,), 0.3)),
              D.Exponential(lib.tensor([2.0])), D.Laplace(0.0, 1.0), D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
              D.LogNormal(0.0, 1.0), D.Gumbel(0.0, 1.0), D.Cauchy(0.0, 1.0), D.Geometric(probs=lib.tensor(0.3)),
              D.OneHotCategorical(probs=lib.tensor([0.2, 0.8])),
              D.RelaxedBernoulli(lib.tensor(0.5), probs=lib.tensor(0.3))):
        out.append(d.sample((4,)))
    out.append(lib.rand(2))
    return [np.asarray(t.tolist(), np.float64) for t in out]


@cpu_draws
def test_distributions_sample_pytorchs_numbers():
    for i, (a, b) in enumerate(zip(_distribution_draws(tp), _distribution_draws(torch), strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"draw {i}")


def _noisy_activations(lib) -> list:
    F = lib.nn.functional
    lib.manual_seed(0)
    logits = lib.randn(3, 5, requires_grad=True)
    soft, hard = F.gumbel_softmax(logits, tau=0.5), F.gumbel_softmax(logits, hard=True)
    (soft * lib.arange(5.0)).sum().backward()
    x = lib.randn(4, 5, requires_grad=True)
    y = F.rrelu(x, training=True)  # (one draw per non-positive element)
    y.sum().backward()
    return [np.asarray(t.tolist()) for t in (soft, hard, logits.grad, y, x.grad, lib.rand(2))]


@cpu_draws
def test_gumbel_softmax_and_rrelu_draw_pytorchs_noise():
    for i, (a, b) in enumerate(zip(_noisy_activations(tp), _noisy_activations(torch), strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"result {i}")


@pytest.fixture
def accelerator_default(monkeypatch):
    """As on a machine whose default device is an accelerator. On a real one, as it is; on the CPU, the
    backend reads as another and tensors report `cuda:0`, which is all the choice of stream looks at."""
    if jax.default_backend() == "cpu":
        monkeypatch.setattr(_factories, "_backend", [False])
        monkeypatch.setattr(tp.Tensor, "device", property(lambda self: tp.device("cuda", 0)))


def _program_on(lib, device, *, device_draws: bool) -> list:
    """A seeded program that builds a model (on the CPU, as PyTorch programs do), moves it, shuffles its
    data and trains with dropout; `device_draws=False` leaves out the draws made for device tensors."""
    lib.manual_seed(7)
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Dropout(0.5), lib.nn.Linear(6, 2))
    rnn, emb = lib.nn.GRU(2, 3), lib.nn.Embedding(5, 2)
    out = [p.tolist() for m in (model, rnn, emb) for p in m.parameters()]
    model.to(device)
    data = lib.randn(8, 4)
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(data), batch_size=3, shuffle=True)
    for (batch,) in loader:
        out.append(batch.tolist())
        if device_draws:  # dropout, randn_like and in-place samplers on device tensors
            model(batch.to(device)).sum().backward()
            lib.randn_like(batch.to(device))
            lib.empty(3, device=device).uniform_()
    out.append(lib.randn(3).tolist())
    out.append(lib.randperm(6).tolist())
    return out


def test_on_an_accelerator_cpu_draws_are_pytorchs_and_device_draws_leave_the_stream(accelerator_default):
    """With an accelerator as the default device, what PyTorch draws on the CPU (factories with no device,
    module initialisation, data shuffling) still equals PyTorch's numbers; dropout masks and samplers on
    device tensors use the device's generator and leave the CPU stream where PyTorch's CUDA draws leave it."""
    mine = _program_on(tp, "cpu" if jax.default_backend() == "cpu" else "cuda", device_draws=True)
    theirs = _program_on(torch, "cpu", device_draws=False)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6, err_msg=f"value {i}")


def _packed_rnn_run(lib):
    """A two-layer GRU with dropout between layers over a packed batch, then a draw after it: the inter-layer
    mask covers the packed rows only, so the stream after it is PyTorch's too."""
    from_pack = lib.nn.utils.rnn
    lib.manual_seed(11)
    rnn = lib.nn.GRU(3, 4, num_layers=2, dropout=0.5, bidirectional=True)
    x = lib.randn(5, 3, 3)
    packed = from_pack.pack_padded_sequence(x, lib.tensor([5, 2, 4]), enforce_sorted=False)
    out, h = rnn(packed)
    padded, _ = from_pack.pad_packed_sequence(out)
    return [np.asarray(t.tolist(), np.float64) for t in (padded, h, lib.rand(4))]


@cpu_draws
def test_rnn_dropout_on_a_packed_batch_draws_pytorchs_mask():
    for i, (a, b) in enumerate(zip(_packed_rnn_run(tp), _packed_rnn_run(torch), strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"result {i}")


def _half_draws(lib, dtype_name: str) -> list:
    """Draws in float16/bfloat16, and the small integer dtypes' samplers: each followed by a float32 draw, so a
    sampler that takes more or fewer numbers from the stream than PyTorch's shows in the next one."""
    dt = getattr(lib, dtype_name)
    lib.manual_seed(21)
    out = []
    for n in (3, 16, 20, 37, 64):  # (normals: one by one below 16; blocks of 16, the last redrawn, from 16 on)
        out += [lib.rand(n, dtype=dt), lib.randn(n, dtype=dt), lib.rand(2)]
        out += [lib.empty(n, dtype=dt).uniform_(0.1, 0.7), lib.empty(n, dtype=dt).normal_(0.3, 1.7), lib.rand(2)]
    for fill in (lambda t: t.exponential_(1.5), lambda t: t.cauchy_(), lambda t: t.log_normal_(),
                 lambda t: t.geometric_(0.2), lambda t: t.random_(), lambda t: t.random_(3, 50),
                 lambda t: t.bernoulli_(0.3)):
        out += [fill(lib.empty(40, dtype=dt)), lib.rand(2)]
    out += [lib.randint(0, 9, (30,), dtype=dt), lib.randn_like(lib.empty(5, 7, dtype=dt))]
    out += [lib.nn.functional.dropout(lib.ones(50, dtype=dt), 0.3), lib.nn.Linear(20, 30).to(dt).weight]
    for small in (lib.uint8, lib.int8, lib.int16):
        out += [lib.empty(30, dtype=small).geometric_(0.3), lib.empty(30, dtype=small).random_(), lib.rand(2)]
    return [np.asarray(t.float().tolist()) for t in out]


@cpu_draws
@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_half_precision_draws_are_pytorchs(dtype_name):
    """float16/bfloat16 samplers draw PyTorch's numbers and leave the stream where PyTorch leaves it (uniforms
    from a float32 one, rounding up to `high` giving `low`; normals in float32, a tail of the stream's next
    16 uniforms; float64-based samplers rounded through float32)."""
    for i, (mine, theirs) in enumerate(zip(_half_draws(tp, dtype_name), _half_draws(torch, dtype_name),
                                           strict=True)):
        # exact but for normals, where float32 log/sin/cos may round a half-precision result one unit apart
        np.testing.assert_allclose(mine, theirs, rtol=1e-3, atol=2e-6, err_msg=f"draw {i}")
        assert np.mean(mine == theirs) > 0.97, f"draw {i}"
