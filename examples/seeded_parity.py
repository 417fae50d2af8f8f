"""A seeded training run draws PyTorch's random numbers: the same initial weights, shuffled batches and
dropout masks, so the same losses.

The same function runs on tapeflow and, when PyTorch is installed, on PyTorch; the script prints both
loss curves and their largest difference.

Run: python examples/seeded_parity.py
"""

from __future__ import annotations

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


def main() -> None:
    mine = train(tp)
    print("tapeflow losses:", " ".join(f"{v:.5f}" for v in mine))
    try:
        import torch
    except ImportError:
        print("(PyTorch is not installed: nothing to compare with)")
        return
    theirs = train(torch)
    print("PyTorch losses: ", " ".join(f"{v:.5f}" for v in theirs))
    print(f"largest difference: {max(abs(a - b) for a, b in zip(mine, theirs)):.2e}")


if __name__ == "__main__":
    main()
