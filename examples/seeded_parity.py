"""A seeded training run draws PyTorch's random numbers: the same initial weights, shuffled batches and
dropout masks, so the same losses.

The same function runs on tapeflow and, when PyTorch is installed, on PyTorch; the script prints both
loss curves and their largest difference.

Run: python examples/seeded_parity.py
"""

from __future__ import annotations

import warnings

import tapeflow as tp


def train(lib) -> list[float]:
    """A small classifier with dropout, trained for two epochs on shuffled batches; everything random comes
    from `lib.manual_seed`. Its forward checks its input the way model code written for TorchScript and
    `torch.compile` does (`_assert`, `jit.is_scripting`, `compiler.is_compiling`), and a random probe drawn
    under `random.fork_rng` leaves the training draws unchanged."""
    nn, data = lib.nn, lib.utils.data

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))

        def forward(self, xb):
            lib._assert(xb.dim() == 2, "expected a batch of feature vectors")
            if not lib.jit.is_scripting() and not lib.compiler.is_compiling():
                self.seen = getattr(self, "seen", 0) + xb.shape[0]  # eager-only bookkeeping
            return self.body(xb)

    lib.manual_seed(0)
    x = lib.randn(96, 10)
    y = (x[:, 0] + x[:, 1] > 0).long()
    with lib.random.fork_rng():
        lib.randn(1000)  # a probe that does not shift the draws below
    model = Classifier()
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=16, shuffle=True)
    losses = []
    for _ in range(2):
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def attention_checks(lib) -> list:
    """Seeded attention with the backends restricted as model code does (`nn.attention.sdpa_kernel`): the output
    under the math backend, and the error when only the flash backend is left and dropout is asked for."""
    from_attention = lib.nn.attention  # (torch.nn.attention)
    lib.manual_seed(1)
    q = lib.randn(2, 4, 6, 8)
    with from_attention.sdpa_kernel(from_attention.SDPBackend.MATH):
        out = lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    try:
        with from_attention.sdpa_kernel(from_attention.SDPBackend.FLASH_ATTENTION), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
        refused = "(ran)"
    except RuntimeError as e:
        refused = str(e)
    return [round(float(out.sum()), 4), refused]


def main() -> None:
    mine = train(tp)
    print("tapeflow losses:", " ".join(f"{v:.5f}" for v in mine))
    print("tapeflow attention:", attention_checks(tp))
    try:
        import torch
    except ImportError:
        print("(PyTorch is not installed: nothing to compare with)")
        return
    theirs = train(torch)
    print("PyTorch losses: ", " ".join(f"{v:.5f}" for v in theirs))
    print(f"largest difference: {max(abs(a - b) for a, b in zip(mine, theirs)):.2e}")
    print("PyTorch attention: ", attention_checks(torch))


if __name__ == "__main__":
    main()
