"""A PyTorch-style training script: fixed weights, a DataLoader, a few optimizer steps, results as JSON.

Run as `python mlp_dataloader.py` with PyTorch, or `python -m tapeflow.torch mlp_dataloader.py` on tapeflow;
tests/test_torch_runner.py compares the two outputs.
"""

import json
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.drop = nn.Identity()
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x))))


def main():
    rng = np.random.default_rng(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.normal(scale=0.3, size=tuple(p.shape)), dtype=torch.float32))
    x = torch.tensor(rng.normal(size=(40, 6)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 40))
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=False, drop_last=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    losses = []
    for _epoch in range(2):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb.to(device)), yb.to(device))
            loss.backward()
            opt.step()
            losses.append(float(f"{loss.item():.7f}"))
        sched.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    out = {"losses": losses, "acc": acc, "weights": {k: v.tolist() for k, v in model.state_dict().items()},
           "grad_fn": type(loss.grad_fn).__name__ if loss.grad_fn is not None else None, "argv": sys.argv[1:]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
