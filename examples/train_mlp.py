"""Train an MLP on scikit-learn's handwritten digits (8x8 images, 10 classes).

Shows the usual PyTorch-style loop with tapeflow: a model built from
`tp.nn` layers, `CrossEntropyLoss`, `tp.optim.Adam` with a cosine schedule,
a text progress bar, evaluation under `model.eval()` + `tp.no_grad()`, and a
`state_dict` round trip through `tp.save` / `tp.load`.

Run: python examples/train_mlp.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np
from _outputs import save_curves
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import tapeflow as tp
from tapeflow import nn

EPOCHS = 12
BATCH = 64


def progress(epoch: int, done: int, total: int, loss: float, acc: float, width: int = 28) -> None:
    """Redraw a one-line progress bar: `epoch 3/12 [#######.....] 40/100 loss 0.1234 acc 96.1%`."""
    filled = int(width * done / total)
    bar = "#" * filled + "." * (width - filled)
    sys.stdout.write(f"\repoch {epoch:2d}/{EPOCHS} [{bar}] {done:3d}/{total} loss {loss:.4f} acc {acc:6.2%}")
    sys.stdout.flush()


def load_data():
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # pixel values 0..16 -> 0..1
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    mean, std = x_tr.mean(0), x_tr.std(0) + 1e-3
    return (tp.tensor((x_tr - mean) / std), tp.tensor(y_tr)), (tp.tensor((x_te - mean) / std), tp.tensor(y_te))


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(128, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def evaluate(model: nn.Module, x: tp.Tensor, y: tp.Tensor) -> float:
    model.eval()
    with tp.no_grad():
        pred = model(x).argmax(1)
    model.train()
    return (pred == y).float().mean().item()


def main() -> float:
    tp.manual_seed(0)
    (x_tr, y_tr), (x_te, y_te) = load_data()
    model = make_model()
    loss_fn = nn.CrossEntropyLoss()
    opt = tp.optim.Adam(model.parameters(), lr=3e-3)
    sched = tp.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=EPOCHS)
    n = x_tr.shape[0]
    batches = n // BATCH  # full batches only: one compiled shape per op
    start = time.perf_counter()
    losses, accs = [], []
    for epoch in range(1, EPOCHS + 1):
        order = tp.randperm(n)
        seen = correct = 0
        total_loss = 0.0
        for b in range(batches):
            idx = order[b * BATCH:(b + 1) * BATCH]
            xb, yb = x_tr[idx], y_tr[idx]
            logits = model(xb)
            loss = loss_fn(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item() * BATCH
            correct += int((logits.argmax(1) == yb).sum())
            seen += BATCH
            progress(epoch, b + 1, batches, total_loss / seen, correct / seen)
        sched.step()
        losses.append(total_loss / seen)
        accs.append(evaluate(model, x_te, y_te))
        print(f"  test acc {accs[-1]:6.2%}  lr {sched.get_last_lr()[0]:.5f}")
    elapsed = time.perf_counter() - start

    # Save the weights, load them into a fresh model, and check it predicts the same.
    path = os.path.join(tempfile.mkdtemp(), "digits_mlp.pt")
    state = model.state_dict()
    # Checkpoint writers find tied weights by storage address, as under PyTorch: here no two entries share one,
    # and each entry shares its parameter's.
    assert len({t.untyped_storage().data_ptr() for t in state.values()}) == len(state)
    assert all(state[n].data_ptr() == p.data_ptr() for n, p in model.named_parameters())
    tp.save(state, path)
    restored = make_model()
    restored.load_state_dict(tp.load(path))
    acc = evaluate(model, x_te, y_te)
    acc_restored = evaluate(restored, x_te, y_te)
    assert acc == acc_restored, "the reloaded model must predict exactly like the trained one"
    print(f"trained in {elapsed:.1f}s; state_dict saved to {path} and reloaded (same accuracy)")
    print(f"final test accuracy: {acc:.2%}")
    curves = save_curves("train_mlp_curves.png", {"train loss": losses, "test accuracy": accs}, "epoch")
    if curves:
        print(f"loss and accuracy curves saved to {curves}")
    return acc


if __name__ == "__main__":
    main()
