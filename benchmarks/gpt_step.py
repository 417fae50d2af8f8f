"""A tiny GPT training step (4 layers, d=64, 4 heads, T=32, B=8, AdamW): tapeflow eager vs PyTorch eager.

The model is written once against a torch-like namespace and built twice, on tapeflow and on PyTorch
(one thread: XLA runs programs this small on one CPU thread). tapeflow runs with adaptive eager on and
off. Steady-state medians and ratios come from one process, interleaved. `--first` instead times one
fresh process per library from start to the end of its second step (run it twice: the second run reads
tapeflow's persistent compilation cache).

Run: python benchmarks/gpt_step.py [--first]
"""

from __future__ import annotations

import subprocess
import sys
import time

from _timing import interleaved, report

LAYERS, D, HEADS, T, B, VOCAB = 4, 64, 4, 32, 8, 96


def build(lib):
    """`(step, sync)` for a tiny GPT on `lib` (`tapeflow` or `torch`)."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.fc, self.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

        def forward(self, x):
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
            q, k, v = (t.view(B, T, HEADS, D // HEADS).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, D))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(T, D)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, VOCAB, bias=False)

        def forward(self, idx, targets):
            x = self.tok(idx) + self.pos(lib.arange(T))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))

    lib.manual_seed(0)
    model = GPT()
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    idx = lib.randint(0, VOCAB, (B, T))
    targets = lib.randint(0, VOCAB, (B, T))

    def step():
        opt.zero_grad()
        loss = model(idx, targets)
        loss.backward()
        opt.step()
        return loss.item()  # a training loop's usual host read; it also waits for the step

    return step


def steady() -> None:
    import torch

    import tapeflow as tp

    torch.set_num_threads(1)
    tp_step, torch_step = build(tp), build(torch)

    def adaptive(on):
        def run():
            tp.set_adaptive_eager(on)
            tp_step()
        return run

    med = interleaved({"tapeflow adaptive eager": adaptive(True), "tapeflow op by op": adaptive(False),
                       "torch eager (1 thread)": torch_step}, repeats=30, warmup=4)
    report("tiny GPT training step (median)", med, "torch eager (1 thread)")


def first_steps() -> None:
    code = ("import time; t0 = time.perf_counter(); import sys; sys.path.insert(0, '.'); import gpt_step, {lib}; "
            "{setup}; s = gpt_step.build({lib}); s(); s(); print(time.perf_counter() - t0)")
    for name, lib, setup in (("tapeflow", "tapeflow", "pass"), ("torch (1 thread)", "torch", "torch.set_num_threads(1)")):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code.format(lib=lib, setup=setup)], check=True, capture_output=True)
        print(f"  {name:20s} process start -> end of step 2: {time.perf_counter() - t:6.2f} s")


if __name__ == "__main__":
    first_steps() if "--first" in sys.argv else steady()
