"""A PyTorch-style seq2seq Transformer (reverse a sequence of tokens): embeddings, sinusoidal positions,
nn.Transformer with a causal target mask and padding masks, cross-entropy with ignore_index, SGD with
Nesterov momentum and a warm-up schedule, gradient clipping; fixed weights; results as JSON.

Run as `python transformer_seq2seq.py` with PyTorch, or `python -m tapeflow.torch transformer_seq2seq.py` on
tapeflow; tests/test_torch_programs.py compares the two outputs.
"""

import json
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, BOS, VOCAB, D = 0, 1, 12, 16


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=32):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.tgt_emb = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = PositionalEncoding(D)
        self.transformer = nn.Transformer(d_model=D, nhead=4, num_encoder_layers=2, num_decoder_layers=1,
                                          dim_feedforward=32, dropout=0.0, batch_first=True, activation="gelu")
        self.generator = nn.Linear(D, VOCAB)

    def forward(self, src, tgt_in):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1))
        src_pad, tgt_pad = src == PAD, tgt_in == PAD
        out = self.transformer(self.pos(self.src_emb(src) * math.sqrt(D)), self.pos(self.tgt_emb(tgt_in) * math.sqrt(D)),
                               tgt_mask=tgt_mask, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                               memory_key_padding_mask=src_pad)
        return self.generator(out)


def batch(rng, n=6, length=7):
    src = np.zeros((n, length), np.int64)
    for i in range(n):
        k = rng.integers(3, length + 1)
        src[i, :k] = rng.integers(2, VOCAB, k)
    tgt = np.zeros((n, length + 1), np.int64)
    for i in range(n):
        toks = src[i][src[i] != PAD][::-1]
        tgt[i, 0], tgt[i, 1:1 + len(toks)] = BOS, toks
    return torch.tensor(src), torch.tensor(tgt)


def main():
    rng = np.random.default_rng(0)
    model = Seq2Seq()
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.tensor(rng.normal(scale=0.2, size=tuple(p.shape)), dtype=torch.float32))
    # NOTE: SGD rather than Adam: the key bias gets a gradient that is zero up to rounding, which Adam would
    # scale up to full steps of different sign in any two libraries.
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 3))
    losses = []
    for _step in range(4):
        src, tgt = batch(rng)
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1), ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        src, tgt = batch(rng)
        pred = model(src, tgt[:, :-1]).argmax(-1)
    out = {"losses": losses, "pred": pred.tolist(),
           "weights": {k: v.tolist() for k, v in model.state_dict().items() if "layers.0" in k or "generator" in k}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
