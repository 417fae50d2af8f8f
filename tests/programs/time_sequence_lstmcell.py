"""Sine-wave sequence prediction with two unrolled LSTMCells in double precision, trained with L-BFGS and a
closure, then predicting the future; results as JSON.

Run as `python time_sequence_lstmcell.py` with PyTorch, or `python -m tapeflow.torch time_sequence_lstmcell.py`.
"""

import json

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        for input_t in input.chunk(input.size(1), dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.stack(outputs, 1).squeeze(2)


def main():
    T, L, N = 20, 30, 6
    rng = np.random.default_rng(2)
    x = np.empty((N, L), np.int64)
    x[:] = np.array(range(L)) + rng.integers(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")
    input = torch.from_numpy(data[2:, :-1])
    target = torch.from_numpy(data[2:, 1:])
    test_input = torch.from_numpy(data[:2, :-1])
    test_target = torch.from_numpy(data[:2, 1:])
    seq = Sequence()
    seq.double()
    wrng = np.random.default_rng(5)
    with torch.no_grad():
        for p in seq.parameters():
            p.copy_(torch.from_numpy(wrng.uniform(-0.14, 0.14, size=tuple(p.shape))))
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)
    losses, test_losses = [], []
    for _i in range(3):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 5
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            test_losses.append(loss.item())
            y = pred.detach().numpy()
    out = {"losses": losses, "test_losses": test_losses, "pred": y.tolist(), "dtype": str(pred.dtype),
           "shape": list(pred.shape), "lin": seq.linear.weight.view(-1).tolist()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
