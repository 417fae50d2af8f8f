"""A two-layer graph convolutional network on a sparse adjacency matrix, written as PyTorch GCN code is.

The graph is synthetic: 300 nodes in three communities, dense links inside a community and few across,
with node features that are noisy hints of the community. The normalised adjacency D^-1/2 (A + I) D^-1/2
is a sparse COO tensor; each layer is `spmm(adj, x @ W)`. Half of the nodes are labelled for training;
the network labels the rest from their neighbourhoods. An exponential moving average of the weights,
kept with `torch._foreach_*` calls as training code keeps one, is evaluated too.

    python examples/graph_convolution.py
"""

import numpy as np

import tapeflow as tp
from tapeflow import nn
from tapeflow.nn import functional as F


def make_graph(n=300, communities=3, features=16, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, communities, n)
    same = labels[:, None] == labels[None, :]
    links = rng.uniform(size=(n, n)) < np.where(same, 0.08, 0.004)
    links = np.triu(links, 1)
    rows, cols = np.nonzero(links | links.T)
    x = rng.normal(size=(n, features)) + 0.6 * np.eye(communities, features)[labels]
    return rows, cols, x.astype(np.float32), labels


def normalised_adjacency(rows, cols, n):
    adj = tp.sparse_coo_tensor(tp.tensor(np.stack([rows, cols])), tp.ones(len(rows)), (n, n))
    adj = tp.eye(n) + adj  # self-loops (the sum is dense)
    d = adj.sum(1).rsqrt()
    return (tp.diag(d) @ adj @ tp.diag(d)).to_sparse()


class GCN(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.w1 = nn.Parameter(nn.init.xavier_uniform_(tp.empty(d_in, d_hidden)))
        self.w2 = nn.Parameter(nn.init.xavier_uniform_(tp.empty(d_hidden, d_out)))
        self.dropout = nn.Dropout(0.5)

    def forward(self, x, adj):
        h = F.relu(tp.spmm(adj, x @ self.w1))
        return F.log_softmax(tp.spmm(adj, self.dropout(h) @ self.w2), dim=1)


def accuracy(model, x, adj, labels, mask):
    model.eval()
    with tp.no_grad():
        return (model(x, adj)[mask].argmax(1) == labels[mask]).float().mean().item()


def main():
    tp.manual_seed(0)
    rows, cols, x_np, labels_np = make_graph()
    n = len(labels_np)
    adj = normalised_adjacency(rows, cols, n)
    print(f"adjacency: {adj.layout}, {n} nodes, {adj._nnz()} stored entries "
          f"({adj._nnz() / n**2:.1%} of the matrix)")
    x, labels = tp.tensor(x_np), tp.tensor(labels_np)
    train = tp.arange(n) % 2 == 0
    test = ~train

    model = GCN(x.shape[1], 32, 3)
    ema = GCN(x.shape[1], 32, 3)
    ema.load_state_dict(model.state_dict())
    opt = tp.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(1, 101):
        model.train()
        opt.zero_grad()
        loss = F.nll_loss(model(x, adj)[train], labels[train])
        loss.backward()
        opt.step()
        with tp.no_grad():
            tp._foreach_lerp_(list(ema.parameters()), list(model.parameters()), 0.1)
        if epoch % 25 == 0:
            print(f"epoch {epoch:3d}  loss {loss.item():.4f}  train {accuracy(model, x, adj, labels, train):.3f}  "
                  f"test {accuracy(model, x, adj, labels, test):.3f}  (moving average: "
                  f"{accuracy(ema, x, adj, labels, test):.3f})")


if __name__ == "__main__":
    main()
