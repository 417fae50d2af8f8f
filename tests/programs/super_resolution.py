"""The PyTorch examples' super-resolution net (an efficient sub-pixel CNN): Conv2d + ReLU layers ending in
PixelShuffle, initialised with init.orthogonal_ and a gain from init.calculate_gain('relu'), trained with
MSELoss and Adam on random low/high-resolution pairs. orthogonal_ draws its own random matrix, so the
program checks what it produced (orthogonal rows, scaled by the gain) and then copies fixed numpy weights
in; results as JSON.

Run as `python super_resolution.py` with PyTorch, or `python -m tapeflow.torch super_resolution.py` on
tapeflow; tests/test_torch_programs.py compares the two outputs.
"""

import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim

UPSCALE = 2


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv4.weight)


def orthogonality_error(w, gain):
    """orthogonal_ flattens to (out, in*kh*kw); rows (or columns, when there are more rows) are orthonormal * gain."""
    m = w.detach().reshape(w.shape[0], -1)
    if m.shape[0] > m.shape[1]:
        m = m.t()
    gram = m @ m.t() / gain ** 2
    return (gram - torch.eye(m.shape[0])).abs().max().item()


def main():
    rng = np.random.default_rng(0)
    model = Net(UPSCALE)
    gain = init.calculate_gain("relu")
    ortho = {name: orthogonality_error(getattr(model, name).weight, g) < 1e-4
             for name, g in (("conv1", gain), ("conv2", gain), ("conv3", gain), ("conv4", 1.0))}
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.from_numpy(rng.normal(scale=0.2, size=tuple(p.shape)).astype(np.float32)))
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    target = torch.from_numpy(rng.random((4, 1, 12, 12)).astype(np.float32))
    # the low-resolution input: a 2x2 average pooling of the target, as a bicubic stand-in
    inp = target.reshape(4, 1, 6, 2, 6, 2).mean(dim=(3, 5))
    losses = []
    for _step in range(3):
        optimizer.zero_grad()
        out = model(inp)
        loss = criterion(out, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        pred = model(inp)
        psnr = (10 * torch.log10(1 / criterion(pred, target))).item()
    out = {"gain": gain, "ortho": ortho, "shape": list(pred.shape), "losses": losses, "psnr": psnr,
           "pred": pred[0, 0].tolist(), "weights": {k: v.tolist() for k, v in model.state_dict().items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
