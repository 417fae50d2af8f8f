"""A word-level language model in the style of PyTorch's examples (word_language_model): tied
embedding/decoder weights, a 2-layer LSTM and GRU with dropout, truncated BPTT with `repackage_hidden`,
gradient clipping and a hand-written SGD step through `p.data`, then sampling with `multinomial`; every
random number comes from `torch.manual_seed` (initialisation, corpus, dropout masks, sampling).

Run as `python seeded_word_lm.py` with PyTorch, or `python -m tapeflow.torch seeded_word_lm.py` on tapeflow;
tests/test_seeded_programs.py compares the two outputs.
"""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1111)


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt=7):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i : i + seq_len], source[i + 1 : i + 1 + seq_len].view(-1)


ntokens = 25
corpus = torch.randint(0, ntokens, (400,))
train = batchify(corpus, 4)
res = {}
for kind in ("LSTM", "GRU"):
    model = RNNModel(kind, ntokens, 16, 16, 2, 0.2, tie_weights=True)
    criterion = nn.NLLLoss()
    lr = 20
    losses = []
    model.train()
    hidden = model.init_hidden(4)
    for i in range(0, train.size(0) - 1, 7):
        data, targets = get_batch(train, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        losses.append(loss.item())
    res[kind] = losses
    model.eval()
    with torch.no_grad():
        hidden = model.init_hidden(1)
        inp = torch.randint(ntokens, (1, 1), dtype=torch.long)
        words = []
        for _ in range(10):
            output, hidden = model(inp, hidden)
            word_weights = output.squeeze().div(1.0).exp().cpu()
            word_idx = torch.multinomial(word_weights, 1)[0]
            inp.fill_(word_idx)
            words.append(word_idx.item())
    res[kind + "_gen"] = words
print(json.dumps(res))
