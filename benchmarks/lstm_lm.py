"""An LSTM language model's training step (PyTorch's word-language-model sizes): tapeflow vs PyTorch.

Embedding(10000, 256) -> 2-layer LSTM(256, 256) -> Linear(256, 10000), sequence 35, batch 20,
cross-entropy, gradient clipping and an SGD update: tapeflow eager, the same step under `tp.compile`,
and PyTorch eager on one thread (and its default threads), interleaved in one process; medians and ratios.

Run: python benchmarks/lstm_lm.py
"""

from __future__ import annotations

import numpy as np
import torch
from _timing import interleaved, report

import tapeflow as tp

VOCAB, HIDDEN, LAYERS, SEQ, BATCH = 10000, 256, 2, 35, 20


def build(lib):
    lib.manual_seed(0)

    class LM(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.nn.Embedding(VOCAB, HIDDEN)
            self.rnn = lib.nn.LSTM(HIDDEN, HIDDEN, LAYERS)
            self.out = lib.nn.Linear(HIDDEN, VOCAB)

        def forward(self, x):
            h, _ = self.rnn(self.emb(x))
            return self.out(h)

    model = LM()
    opt = lib.optim.SGD(model.parameters(), lr=0.5)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.integers(0, VOCAB, (SEQ, BATCH)))
    y = lib.tensor(rng.integers(0, VOCAB, (SEQ * BATCH,)))

    def step():
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        return loss

    return step, model


def main():
    tp_step, tp_model = build(tp)
    compiled = tp.compile(tp_step)
    th_step, _ = build(torch)

    def eager():
        tp_step()
        tp_model.out.weight._data.block_until_ready()

    def staged():
        compiled()
        tp_model.out.weight._data.block_until_ready()

    def torch_one():
        torch.set_num_threads(1)
        th_step()

    default_threads = torch.get_num_threads()

    def torch_default():
        torch.set_num_threads(default_threads)
        th_step()

    medians = interleaved({"tapeflow eager": eager, "tapeflow tp.compile": staged, "torch eager (1 thread)": torch_one,
                           f"torch eager ({default_threads} threads)": torch_default}, repeats=15, warmup=3)
    report(f"LSTM LM training step, {LAYERS}x{HIDDEN}, seq {SEQ}, batch {BATCH}, vocab {VOCAB} (median per step)",
           medians, "torch eager (1 thread)")


if __name__ == "__main__":
    main()
