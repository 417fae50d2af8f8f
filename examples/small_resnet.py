"""A small residual CNN (conv, batch norm, pooling) trained on scikit-learn's 8x8 digits.

Two residual blocks on 8x8 single-channel images, max pooling in between,
global average pooling and a linear head; SGD with Nesterov momentum and a
step schedule. Prints train loss and test accuracy per epoch.

Run: python examples/small_resnet.py
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _outputs import save_curves
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import tapeflow as tp
from tapeflow import nn
from tapeflow.nn import functional as F

EPOCHS = 5
BATCH = 64


class ResidualBlock(nn.Module):
    """conv-bn-relu-conv-bn plus the input (projected by a 1x1 conv when the width changes)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = nn.Identity() if cin == cout else nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + self.skip(x))


class SmallResNet(nn.Module):
    def __init__(self, width: int = 16, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.block1 = ResidualBlock(width, width)
        self.pool = nn.MaxPool2d(2)  # 8x8 -> 4x4
        self.block2 = ResidualBlock(width, 2 * width)
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, classes))

    def forward(self, x):
        return self.head(self.block2(self.pool(self.block1(self.stem(x)))))


def load_data():
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (N, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)
    mean, std = x_tr.mean(), x_tr.std()
    return (tp.tensor((x_tr - mean) / std), tp.tensor(y_tr)), (tp.tensor((x_te - mean) / std), tp.tensor(y_te))


def main() -> float:
    tp.manual_seed(0)
    (x_tr, y_tr), (x_te, y_te) = load_data()
    model = SmallResNet()
    print(model)
    opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = tp.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.3)
    n, batches = x_tr.shape[0], x_tr.shape[0] // BATCH
    start = time.perf_counter()
    losses, accs = [], []
    for epoch in range(1, EPOCHS + 1):
        model.train()
        order = tp.randperm(n)
        total = 0.0
        for b in range(batches):
            idx = order[b * BATCH:(b + 1) * BATCH]
            loss = F.cross_entropy(model(x_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            sys.stdout.write(f"\repoch {epoch}/{EPOCHS}  batch {b + 1:2d}/{batches}  loss {total / (b + 1):.4f}  "
                             f"elapsed {time.perf_counter() - start:5.1f}s")
            sys.stdout.flush()
        sched.step()
        model.eval()
        with tp.no_grad():
            acc = (model(x_te).argmax(1) == y_te).float().mean().item()
        losses.append(total / batches)
        accs.append(acc)
        print(f"\repoch {epoch}/{EPOCHS}  train loss {total / batches:.4f}  test acc {acc:6.2%}  "
              f"elapsed {time.perf_counter() - start:5.1f}s")
    print(f"final test accuracy: {acc:.2%}")
    path = save_curves("small_resnet_curves.png", {"train loss": losses, "test accuracy": accs}, "epoch")
    if path:
        print(f"loss and accuracy curves saved to {path}")
    return acc


if __name__ == "__main__":
    main()
