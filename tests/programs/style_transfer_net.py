"""The PyTorch examples' fast-neural-style transformer net, shrunk: ReflectionPad2d + Conv2d layers with
InstanceNorm2d(affine=True), residual blocks, nearest-neighbour upsampling (nn.Upsample in one layer,
F.interpolate in the other), a Gram-matrix style loss plus a content loss with MSELoss, Adam; fixed weights
and images; results as JSON.

Run as `python style_transfer_net.py` with PyTorch, or `python -m tapeflow.torch style_transfer_net.py` on
tapeflow; tests/test_torch_programs.py compares the two outputs.
"""

import json

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        return out + residual


class UpsampleConvLayer(nn.Module):
    """Upsample then convolve (rather than a transposed convolution), as in the example."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None, functional=False):
        super().__init__()
        self.upsample, self.functional = upsample, functional
        self.up = nn.Upsample(scale_factor=upsample, mode="nearest") if upsample and not functional else None
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        if self.upsample:
            x = F.interpolate(x, mode="nearest", scale_factor=self.upsample) if self.functional else self.up(x)
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.conv1 = ConvLayer(3, c, kernel_size=5, stride=1)
        self.in1 = nn.InstanceNorm2d(c, affine=True)
        self.conv2 = ConvLayer(c, 2 * c, kernel_size=3, stride=2)
        self.in2 = nn.InstanceNorm2d(2 * c, affine=True)
        self.conv3 = ConvLayer(2 * c, 4 * c, kernel_size=3, stride=2)
        self.in3 = nn.InstanceNorm2d(4 * c, affine=True)
        self.res1 = ResidualBlock(4 * c)
        self.res2 = ResidualBlock(4 * c)
        self.deconv1 = UpsampleConvLayer(4 * c, 2 * c, kernel_size=3, stride=1, upsample=2)
        self.in4 = nn.InstanceNorm2d(2 * c, affine=True)
        self.deconv2 = UpsampleConvLayer(2 * c, c, kernel_size=3, stride=1, upsample=2, functional=True)
        self.in5 = nn.InstanceNorm2d(c, affine=True)
        self.deconv3 = ConvLayer(c, 3, kernel_size=5, stride=1)
        self.relu = nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        return self.deconv3(y)


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    return features.bmm(features_t) / (ch * h * w)


class Features(nn.Module):
    """A fixed stand-in for the example's VGG16 feature extractor: two conv + ReLU stages."""

    def __init__(self):
        super().__init__()
        self.slice1 = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU())
        self.slice2 = nn.Sequential(nn.Conv2d(6, 8, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        h1 = self.slice1(x)
        h2 = self.slice2(h1)
        return h1, h2


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    return (batch / 255.0 - mean) / std


def main():
    rng = np.random.default_rng(0)
    transformer, features = TransformerNet(), Features()
    for net, scale in ((transformer, 0.15), (features, 0.3)):
        state = {}
        for k, v in sorted(net.state_dict().items()):
            base = 1.0 if k.startswith("in") and k.endswith("weight") else 0.0
            state[k] = torch.from_numpy((base + rng.normal(scale=scale, size=tuple(v.shape))).astype(np.float32))
        net.load_state_dict(state)
    features.requires_grad_(False)
    # NOTE: a per-channel shift right before an InstanceNorm (a convolution's bias; a residual block's last
    # InstanceNorm bias, which reaches the next norm through the skip, the upsampling and a convolution) is
    # cancelled by the normalisation: its gradient is zero up to rounding, which Adam would scale up to full
    # steps of arbitrary sign in any two libraries. Leave those frozen.
    frozen = {n for n, _ in transformer.named_parameters()
              if (n.endswith("conv2d.bias") and not n.startswith("deconv3")) or n.endswith("in2.bias") and "res" in n}
    for n, p in transformer.named_parameters():
        p.requires_grad_(n not in frozen)
    optimizer = torch.optim.Adam([p for p in transformer.parameters() if p.requires_grad], 1e-3)
    mse_loss = torch.nn.MSELoss()
    style = torch.from_numpy((rng.random((1, 3, 16, 16)) * 255).astype(np.float32))
    gram_style = [gram_matrix(y) for y in features(normalize_batch(style))]
    content_weight, style_weight = 1.0, 10.0
    log = {"content": [], "style": [], "total": []}
    transformer.train()
    for _step in range(2):
        x = torch.from_numpy((rng.random((2, 3, 16, 16)) * 255).astype(np.float32))
        n_batch = len(x)
        optimizer.zero_grad()
        y = transformer(x)
        features_y = features(normalize_batch(y))
        features_x = features(normalize_batch(x))
        content_loss = content_weight * mse_loss(features_y[1], features_x[1])
        style_loss = 0.0
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :].expand_as(gm_y))
        style_loss *= style_weight
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
        log["content"].append(content_loss.item())
        log["style"].append(style_loss.item())
        log["total"].append(total_loss.item())
    transformer.eval()
    with torch.no_grad():
        out_img = transformer(style).clamp(0, 255)
    out = {**log, "shape": list(out_img.shape), "image": out_img[0, :, ::3, ::3].tolist(),
           "weights": {k: v.tolist() for k, v in transformer.state_dict().items()
                       if k.startswith(("in1", "res1.conv1", "deconv2", "in5"))}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
