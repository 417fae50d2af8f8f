"""An MNIST-style CNN (PyTorch's examples/mnist, shrunk): Conv2d, BatchNorm2d, max pooling, two Dropouts,
Adadelta with StepLR, and a shuffling DataLoader, everything random drawn from `torch.manual_seed`.

Run as `python seeded_mnist_cnn.py` with PyTorch, or `python -m tapeflow.torch seeded_mnist_cnn.py` on
tapeflow; tests/test_seeded_programs.py compares the two outputs.
"""

import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        x = F.relu(self.bn(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


X = torch.randn(64, 1, 14, 14)
Y = torch.randint(0, 10, (64,))
loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=True)
model = Net()
opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
losses = []
for _ in range(3):
    model.train()
    for data, target in loader:
        opt.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    sched.step()
model.eval()
with torch.no_grad():
    out = model(X[:8])
print(json.dumps({"losses": losses, "out": out.tolist()}))
