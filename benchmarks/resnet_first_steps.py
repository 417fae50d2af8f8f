"""A ResNet-18 program's first steps: process start to the end of step 3, tapeflow vs PyTorch eager.

The model (ResNet-18's layout: 4 stages of 2 basic blocks, batch norm, 64-512 channels) is written once
against a torch-like namespace and built on each library. One fresh process per library runs 3 SGD steps
with momentum on a batch of 8 random 3x64x64 images, twice: with an empty compilation cache (everything
compiles: what a program's first run waits for) and then reading what the first run kept (tapeflow's
persistent compilation cache; PyTorch keeps nothing and compiles nothing). Printed: the wall time of each
process and the ratio to PyTorch's.

Run: python benchmarks/resnet_first_steps.py [--steps 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

B, SIZE, CLASSES = 8, 64, 10


def build(lib):
    """A step function that runs one SGD step of ResNet-18 on `lib` and returns the loss as a float."""
    nn, F = lib.nn, lib.nn.functional

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            h = F.relu(self.b1(self.c1(x)))
            h = self.b2(self.c2(h))
            return F.relu(h + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                blocks += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
                cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.head = nn.Linear(512, CLASSES)

        def forward(self, x):
            h = self.blocks(self.stem(x))
            return self.head(F.adaptive_avg_pool2d(h, 1).flatten(1))

    lib.manual_seed(0)
    model = ResNet18()
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = lib.randn(B, 3, SIZE, SIZE)
    y = lib.randint(0, CLASSES, (B,))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    code = ("import time; t0 = time.perf_counter(); import sys; sys.path.insert(0, '.'); "
            "import resnet_first_steps as r, {lib}; s = r.build({lib}); "
            f"[s() for _ in range({args.steps})]; print(time.perf_counter() - t0)")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # (imports read compiled bytecode, as after an install)
        subprocess.run([sys.executable, "-c", "import tapeflow"], check=True, env=dict(env, TAPEFLOW_CACHE_DIR="0"))
        for run in ("first run, empty cache", "second run"):
            times = {}
            for lib in ("tapeflow", "torch"):
                t = time.perf_counter()
                subprocess.run([sys.executable, "-c", code.format(lib=lib)], check=True, capture_output=True,
                               env=env, cwd=os.path.dirname(os.path.abspath(__file__)))
                times[lib] = time.perf_counter() - t
            print(f"ResNet-18, B={B}, {SIZE}x{SIZE}, process start -> end of step {args.steps} ({run}): "
                  f"tapeflow {times['tapeflow']:6.2f} s, torch {times['torch']:6.2f} s, "
                  f"{times['tapeflow'] / times['torch']:.2f}x")


if __name__ == "__main__":
    main()
