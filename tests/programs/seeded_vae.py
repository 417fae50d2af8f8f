"""A VAE (PyTorch's examples/vae, shrunk) whose reparameterisation draws `randn_like` noise every step, and
whose samples decode `torch.randn` codes; seeded with `torch.manual_seed`.

Run as `python seeded_vae.py` with PyTorch, or `python -m tapeflow.torch seeded_vae.py` on tapeflow;
tests/test_seeded_programs.py compares the two outputs.
"""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc21 = nn.Linear(16, 4)
        self.fc22 = nn.Linear(16, 4)
        self.fc3 = nn.Linear(4, 16)
        self.fc4 = nn.Linear(16, 20)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def forward(self, x):
        h = F.relu(self.fc1(x))
        mu, lv = self.fc21(h), self.fc22(h)
        z = self.reparameterize(mu, lv)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, lv


m = VAE()
opt = torch.optim.Adam(m.parameters(), lr=1e-3)
x = torch.rand(32, 20)
losses = []
for _ in range(10):
    opt.zero_grad()
    r, mu, lv = m(x)
    loss = F.binary_cross_entropy(r, x, reduction="sum") - 0.5 * torch.sum(1 + lv - mu.pow(2) - lv.exp())
    loss.backward()
    opt.step()
    losses.append(loss.item())
with torch.no_grad():
    s = m.fc4(F.relu(m.fc3(torch.randn(3, 4)))).tolist()
print(json.dumps({"losses": losses, "s": s}))
