"""Fit a polynomial with a single linear layer and hand-written SGD, as in the classic regression example;
results as JSON.

Run as `python poly_regression.py` with PyTorch, or `python -m tapeflow.torch poly_regression.py` on tapeflow.
"""

import json

import numpy as np
import torch
import torch.nn.functional as F

POLY_DEGREE = 4
W_target = torch.tensor([[0.5], [-1.2], [0.3], [0.8]])
b_target = torch.tensor([0.25])


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    result = "y = "
    for i, w in enumerate(W):
        result += f"{w:+.2f} x^{i + 1} "
    result += f"{b[0]:+.2f}"
    return result


def get_batch(rng, batch_size=16):
    random = torch.from_numpy(rng.normal(size=batch_size).astype(np.float32))
    x = make_features(random)
    y = f(x)
    return x, y


def main():
    rng = np.random.default_rng(0)
    fc = torch.nn.Linear(W_target.size(0), 1)
    with torch.no_grad():
        fc.weight.copy_(torch.tensor([[0.1, -0.2, 0.05, 0.0]]))
        fc.bias.fill_(0.0)
    losses = []
    for batch_idx in range(1, 60):
        batch_x, batch_y = get_batch(rng)
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.05 * param.grad)
        if batch_idx % 10 == 0:
            fc.weight.grad.data.zero_()
            fc.bias.grad.zero_()
        losses.append(loss)
    out = {"losses": losses, "desc": poly_desc(fc.weight.view(-1), fc.bias),
           "target": poly_desc(W_target.view(-1), b_target),
           "weight": fc.weight.view(-1).tolist(), "bias": fc.bias.tolist(),
           "grad": fc.weight.grad.data.view(-1).tolist(), "batches": batch_idx}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
