"""A PyTorch-style word-level language model (the examples repo's word_language_model, shrunk) on a random
token stream: Embedding -> Dropout -> 2-layer nn.LSTM -> Linear decoder with tied weights, batchify /
get_batch, truncated BPTT with repackage_hidden (detaching the (h, c) tuple), clip_grad_norm_, plain SGD
written by hand as that example does, then an evaluation pass under torch.no_grad() giving the perplexity;
fixed weights; results as JSON.

Run as `python lstm_language_model.py` with PyTorch, or `python -m tapeflow.torch lstm_language_model.py` on
tapeflow; tests/test_torch_programs.py compares the two outputs.
"""

import io
import json
import math

import numpy as np
import torch
import torch.nn as nn

NTOKEN, NINP, NHID, NLAYERS, BPTT = 20, 16, 16, 2, 5


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def evaluate(model, criterion, data_source, eval_batch_size):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, BPTT):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def generate(model, first, words, temperature=0.7):
    """generate.py, with argmax in place of torch.multinomial (whose samples differ between libraries)."""
    hidden = model.init_hidden(1)
    input = torch.zeros(1, 1, dtype=torch.long)
    input.fill_(first)
    ids = []
    with torch.no_grad():
        for _i in range(words):
            output, hidden = model(input, hidden)
            word_weights = output.squeeze().div(temperature).exp().cpu()
            word_idx = torch.argmax(word_weights)
            input.fill_(word_idx)
            ids.append(int(word_idx))
    return ids


def main():
    rng = np.random.default_rng(0)
    model = RNNModel("LSTM", NTOKEN, NINP, NHID, NLAYERS, dropout=0.0, tie_weights=True)
    state = {k: torch.tensor(rng.uniform(-0.8, 0.8, size=tuple(v.shape)), dtype=torch.float32)
             for k, v in sorted(model.state_dict().items())}
    model.load_state_dict(state)
    assert model.decoder.weight is model.encoder.weight
    stream = torch.tensor(rng.integers(0, NTOKEN, 95), dtype=torch.long)
    train_data = batchify(stream[:63], 4)      # 15 x 4: three BPTT windows
    val_data = batchify(stream[63:], 2)        # 16 x 2
    criterion = nn.NLLLoss()
    lr, clip = 2.0, 0.25
    losses, norms, detached = [], [], []
    model.train()
    hidden = model.init_hidden(4)
    for _step, i in enumerate(range(0, train_data.size(0) - 1, BPTT)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        detached.append([h.grad_fn is None and not h.requires_grad for h in hidden])
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), clip)))
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        losses.append(loss.item())
    # the example saves the best model and loads it back before testing (and before generate.py samples)
    with io.BytesIO() as f:
        torch.save(model, f)
        f.seek(0)
        model = torch.load(f, weights_only=False)
        model.rnn.flatten_parameters()
    assert model.decoder.weight is model.encoder.weight
    val_loss = evaluate(model, criterion, val_data, 2)
    generated = generate(model, first=3, words=8)
    out = {"losses": losses, "norms": norms, "val_loss": val_loss, "ppl": math.exp(val_loss), "generated": generated,
           "hidden": [h.detach().tolist() for h in hidden], "n_steps": len(losses),
           "detached": detached, "hidden_has_history": hidden[0].grad_fn is not None,
           "weights": {k: v.tolist() for k, v in model.state_dict().items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
