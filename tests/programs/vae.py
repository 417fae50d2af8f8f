"""A PyTorch-style variational auto-encoder (the examples repo's MNIST VAE, shrunk) on random binary images:
Linear encoder to mu/logvar, the reparameterised sample loc + eps * scale of a torch.distributions.Normal, a
Bernoulli reconstruction loss with binary_cross_entropy_with_logits, and the KL term from
torch.distributions.kl_divergence; Adam; fixed weights and noise; results as JSON.

Run as `python vae.py` with PyTorch, or `python -m tapeflow.torch vae.py` on tapeflow;
tests/test_torch_programs.py compares the two outputs.
"""

import json

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.distributions import Normal, kl_divergence

IN, HID, LAT = 64, 32, 4


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN, HID)
        self.fc21 = nn.Linear(HID, LAT)
        self.fc22 = nn.Linear(HID, LAT)
        self.fc3 = nn.Linear(LAT, HID)
        self.fc4 = nn.Linear(HID, IN)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return self.fc4(h3)  # logits

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, IN))
        std = torch.exp(0.5 * logvar)
        q = Normal(mu, std)
        # rsample draws its own noise, which differs between libraries: check its shape, then
        # reparameterise by hand with the fixed eps (the same thing rsample computes)
        assert q.rsample(torch.Size([2])).shape == (2, *mu.shape)
        z = q.loc + eps * q.scale
        return self.decode(z), q


def loss_function(logits, x, q):
    bce = F.binary_cross_entropy_with_logits(logits, x.view(-1, IN), reduction="sum")
    prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
    kld = kl_divergence(q, prior).sum()
    return bce + kld, bce, kld


def main():
    rng = np.random.default_rng(0)
    model = VAE()
    state = {k: torch.tensor(rng.normal(scale=0.15, size=tuple(v.shape)), dtype=torch.float32)
             for k, v in sorted(model.state_dict().items())}
    model.load_state_dict(state)
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    x = torch.tensor((rng.random((8, 1, 8, 8)) > 0.5).astype(np.float32))
    losses, kls = [], []
    model.train()
    for _step in range(3):
        eps = torch.tensor(rng.standard_normal((8, LAT)), dtype=torch.float32)
        optimizer.zero_grad()
        logits, q = model(x, eps)
        loss, _bce, kld = loss_function(logits, x, q)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        kls.append(kld.item())
    model.eval()
    with torch.no_grad():
        mu, logvar = model.encode(x.view(-1, IN))
        recon = torch.sigmoid(model.decode(mu))
        bce_plain = F.binary_cross_entropy(recon, x.view(-1, IN)).item()
        log_prob = Normal(mu, torch.exp(0.5 * logvar)).log_prob(mu).sum().item()
    out = {"losses": losses, "kls": kls, "bce_eval": bce_plain, "log_prob": log_prob,
           "recon": recon[:2].tolist(), "weights": {k: v.tolist() for k, v in model.state_dict().items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
