"""A PyTorch-style character-level RNN name classifier (the "NLP From Scratch: Classifying Names with a
Character-Level RNN" tutorial, shrunk) on a handful of made-up names: one-hot letter tensors built with
torch.zeros and index assignment, a hand-written RNN cell (nn.Linear on torch.cat((input, hidden), 1) and
LogSoftmax) next to an nn.RNN + Linear variant, NLLLoss, plain SGD by hand (p.data.add_(p.grad.data,
alpha=-lr)), and the predicted category via topk; fixed weights; results as JSON.

Run as `python char_rnn_classifier.py` with PyTorch, or `python -m tapeflow.torch char_rnn_classifier.py` on
tapeflow; tests/test_torch_programs.py compares the two outputs.
"""

import json
import string

import numpy as np
import torch
import torch.nn as nn

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
all_categories = ["Dutch", "Greek", "Italian", "Japanese"]
n_categories = len(all_categories)
NAMES = [("Vries", "Dutch"), ("Bakker", "Dutch"), ("Nikolaidis", "Greek"), ("Papadopoulos", "Greek"),
         ("Rossi", "Italian"), ("Bianchi", "Italian"), ("Tanaka", "Japanese"), ("Suzuki", "Japanese")]
N_HIDDEN = 24


def letterToIndex(letter):
    return all_letters.find(letter)


def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor


def lineToTensor(line):
    """A <line_length x 1 x n_letters> array of one-hot letter vectors."""
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = torch.tanh(self.i2h(combined))
        output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


class CharRNN(nn.Module):
    """The newer version of the tutorial: nn.RNN over the whole line, Linear + LogSoftmax on the last state."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        return self.softmax(output)


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


def fill(model, rng):
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.tensor(rng.normal(scale=0.25, size=tuple(p.shape)), dtype=torch.float32))


def main():
    rng = np.random.default_rng(0)
    assert letterToTensor("J").shape == (1, n_letters) and lineToTensor("Jones").size() == (5, 1, n_letters)
    rnn = RNN(n_letters, N_HIDDEN, n_categories)
    char_rnn = CharRNN(n_letters, N_HIDDEN, n_categories)
    fill(rnn, rng)
    fill(char_rnn, rng)
    criterion = nn.NLLLoss()
    learning_rate = 0.05
    order = rng.permutation(len(NAMES))[:5]
    losses, losses_nn = [], []
    for step in range(5):
        line, category = NAMES[order[step]]
        category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
        line_tensor = lineToTensor(line)

        # the hand-written cell, one letter at a time
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        losses.append(loss.item())

        # nn.RNN over the whole line
        char_rnn.zero_grad()
        output_nn = char_rnn(line_tensor)
        loss_nn = criterion(output_nn, category_tensor)
        loss_nn.backward()
        for p in char_rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        losses_nn.append(loss_nn.item())

    preds, preds_nn, outs = [], [], []
    with torch.no_grad():
        for line, _ in NAMES:
            line_tensor = lineToTensor(line)
            hidden = rnn.initHidden()
            for i in range(line_tensor.size()[0]):
                output, hidden = rnn(line_tensor[i], hidden)
            preds.append(categoryFromOutput(output))
            outs.append(output[0].tolist())
            preds_nn.append(categoryFromOutput(char_rnn(line_tensor)))
    out = {"losses": losses, "losses_nn": losses_nn, "preds": preds, "preds_nn": preds_nn, "outputs": outs,
           "weights": {f"{name}.{k}": v.tolist() for name, m in (("rnn", rnn), ("char_rnn", char_rnn))
                       for k, v in m.state_dict().items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
