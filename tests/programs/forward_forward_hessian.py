"""Forward-forward training (per-layer Adam, goodness from squared activations) and a Hessian spectrum
estimate by power iteration with Hessian-vector products over a list of parameters; results as JSON.

Run as `python forward_forward_hessian.py` with PyTorch, or `python -m tapeflow.torch forward_forward_hessian.py`.
"""

import json

import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam


def overlay_y_on_x(x, y):
    x_ = x.clone()
    x_[:, :4] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, rng):
        super().__init__(in_features, out_features)
        with torch.no_grad():
            self.weight.copy_(torch.from_numpy(rng.normal(scale=0.3, size=(out_features, in_features))).float())
            self.bias.copy_(torch.from_numpy(rng.normal(scale=0.1, size=out_features)).float())
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=0.03)
        self.threshold = 2.0
        self.num_epochs = 8

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train_layer(self, x_pos, x_neg, losses):
        for _i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log(1 + torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class Net(torch.nn.Module):
    def __init__(self, dims, rng):
        super().__init__()
        self.layers = [Layer(dims[d], dims[d + 1], rng) for d in range(len(dims) - 1)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(4):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness += [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        return torch.cat(goodness_per_label, 1).argmax(1)

    def train_net(self, x_pos, x_neg, losses):
        h_pos, h_neg = x_pos, x_neg
        for layer in self.layers:
            h_pos, h_neg = layer.train_layer(h_pos, h_neg, losses)


def hessian_top_eigenvalue(model, x, y, iters, rng):
    params = [p for p in model.parameters() if p.requires_grad]
    loss = nn.functional.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    v = [torch.from_numpy(rng.normal(size=tuple(p.shape))).float() for p in params]
    norm = torch.sqrt(sum((vi * vi).sum() for vi in v))
    v = [vi / norm for vi in v]
    eig = None
    history = []
    for _ in range(iters):
        Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        eig = sum((hv * vi).sum() for hv, vi in zip(Hv, v)).item()
        norm = torch.sqrt(sum((hv * hv).sum() for hv in Hv))
        v = [hv / (norm + 1e-6) for hv in Hv]
        history.append(eig)
    trace_est = 0.0
    for _ in range(3):
        z = [torch.from_numpy(rng.choice([-1.0, 1.0], size=tuple(p.shape))).float() for p in params]
        Hz = torch.autograd.grad(grads, params, grad_outputs=z, retain_graph=True)
        trace_est += sum((hz * zi).sum() for hz, zi in zip(Hz, z)).item() / 3
    return eig, history, trace_est


def main():
    torch.manual_seed(1234)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.uniform(0, 1, size=(32, 12))).float()
    y = torch.from_numpy(rng.integers(0, 4, size=32))
    net = Net([12, 16, 16], rng)
    x_pos = overlay_y_on_x(x, y)
    rnd = torch.from_numpy(rng.permutation(x.size(0)))
    x_neg = overlay_y_on_x(x, y[rnd])
    losses = []
    net.train_net(x_pos, x_neg, losses)
    pred = net.predict(x)
    err = 1.0 - pred.eq(y).float().mean().item()

    mlp = nn.Sequential(nn.Linear(12, 10), nn.Tanh(), nn.Linear(10, 4))
    with torch.no_grad():
        for p in mlp.parameters():
            p.copy_(torch.from_numpy(rng.normal(scale=0.5, size=tuple(p.shape))).float())
    eig, history, trace_est = hessian_top_eigenvalue(mlp, x, y, 12, rng)
    out = {"losses": losses, "pred": pred.tolist(), "err": err, "eig": eig, "history": history,
           "trace": trace_est, "w": [layer.weight.view(-1)[:30].tolist() for layer in net.layers]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
