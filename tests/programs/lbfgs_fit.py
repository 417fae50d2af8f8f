"""A PyTorch-style curve fit with L-BFGS (strong-Wolfe line search) and a closure, in double precision, plus a
Normal likelihood from torch.distributions; results as JSON.

Run as `python lbfgs_fit.py` with PyTorch, or `python -m tapeflow.torch lbfgs_fit.py` on tapeflow;
tests/test_torch_programs.py compares the two outputs.
"""

import json

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.set_default_dtype(torch.float64)


def main():
    rng = np.random.default_rng(0)
    x = torch.tensor(np.linspace(-2, 2, 40)[:, None])
    y = torch.sin(2 * x) + 0.05 * torch.tensor(rng.normal(size=(40, 1)))
    model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.normal(scale=0.7, size=tuple(p.shape))))
    log_sigma = nn.Parameter(torch.tensor(0.0))
    params = list(model.parameters()) + [log_sigma]
    opt = torch.optim.LBFGS(params, lr=1, max_iter=20, history_size=10, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        nll = -Normal(model(x), log_sigma.exp()).log_prob(y).mean()
        nll.backward()
        return nll

    losses = [opt.step(closure).item() for _ in range(3)]
    state = opt.state[params[0]]
    out = {"losses": losses, "func_evals": state["func_evals"], "n_iter": state["n_iter"],
           "sigma": float(log_sigma.exp()), "weights": {k: v.tolist() for k, v in model.state_dict().items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
