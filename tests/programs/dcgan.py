"""A PyTorch-style DCGAN (the examples repo's dcgan, shrunk to 16x16 images): a generator of
ConvTranspose2d + BatchNorm2d + ReLU ending in Tanh, a discriminator of Conv2d + BatchNorm2d + LeakyReLU
ending in Sigmoid, BCELoss, alternating D and G steps with Adam(betas=(0.5, 0.999)); fixed weights and
noise; results as JSON.

Run as `python dcgan.py` with PyTorch, or `python -m tapeflow.torch dcgan.py` on tapeflow;
tests/test_torch_programs.py compares the two outputs.
"""

import json

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

NZ, NGF, NDF, NC = 8, 8, 8, 3


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # nz x 1 x 1 -> (ngf*4) x 4 x 4
            nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(NGF * 4),
            nn.ReLU(True),
            # -> (ngf*2) x 8 x 8
            nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(NGF * 2),
            nn.ReLU(True),
            # -> nc x 16 x 16
            nn.ConvTranspose2d(NGF * 2, NC, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # nc x 16 x 16 -> ndf x 8 x 8
            nn.Conv2d(NC, NDF, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # -> (ndf*2) x 4 x 4
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(NDF * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # -> 1 x 1 x 1
            nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def weights_init(rng):
    """The example's weights_init (N(0, 0.02) convs, N(1, 0.02) BatchNorm weights, zero biases), from numpy."""
    def init(m):
        name = m.__class__.__name__
        with torch.no_grad():
            if name.find("Conv") != -1:
                m.weight.copy_(torch.from_numpy(rng.normal(0.0, 0.02, tuple(m.weight.shape)).astype(np.float32)))
            elif name.find("BatchNorm") != -1:
                m.weight.copy_(torch.from_numpy(rng.normal(1.0, 0.02, tuple(m.weight.shape)).astype(np.float32)))
                m.bias.fill_(0)
    return init


def main():
    rng = np.random.default_rng(0)
    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init(rng))
    netD.apply(weights_init(rng))
    criterion = nn.BCELoss()
    optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0
    batch_size = 6
    fixed_noise = torch.from_numpy(rng.standard_normal((4, NZ, 1, 1)).astype(np.float32))
    log = {"errD": [], "errG": [], "D_x": [], "D_G_z1": [], "D_G_z2": []}
    for _i in range(2):
        real = torch.from_numpy(np.tanh(rng.standard_normal((batch_size, NC, 16, 16))).astype(np.float32))
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((batch_size,), real_label, dtype=real.dtype)
        output = netD(real)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.from_numpy(rng.standard_normal((batch_size, NZ, 1, 1)).astype(np.float32))
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        for k, v in (("errD", errD.item()), ("errG", errG.item()), ("D_x", D_x), ("D_G_z1", D_G_z1),
                     ("D_G_z2", D_G_z2)):
            log[k].append(v)
    netG.eval()
    with torch.no_grad():
        fake = netG(fixed_noise)
    out = {**log, "fake": fake[:, :, ::4, ::4].tolist(),
           "weights": {**{"G." + k: v.tolist() for k, v in netG.state_dict().items()},
                       **{"D." + k: v.tolist() for k, v in netD.state_dict().items()}}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
