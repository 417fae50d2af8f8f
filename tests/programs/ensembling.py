"""Model ensembling with torch.func (the PyTorch tutorial's idiom): three copies of a small MLP with
different fixed weights, their parameters stacked by torch.func.stack_module_state, run at once through
vmap(functional_call) over the stacked parameters (same minibatch for all, and a different minibatch per
model), checked against a Python loop over the models; then per-model gradients with torch.func.grad under
vmap, checked against backward() on each model, and one SGD step on the stacked parameters; results as JSON.

Run as `python ensembling.py` with PyTorch, or `python -m tapeflow.torch ensembling.py` on tapeflow;
tests/test_torch_programs.py compares the two outputs.
"""

import copy
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, stack_module_state, vmap


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 16)
        self.fc2 = nn.Linear(16, 8)
        self.fc3 = nn.Linear(8, 3)

    def forward(self, x):
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def main():
    rng = np.random.default_rng(0)
    num_models = 3
    models = []
    for _ in range(num_models):
        m = SimpleMLP()
        m.load_state_dict({k: torch.from_numpy(rng.normal(scale=0.4, size=tuple(v.shape)).astype(np.float32))
                           for k, v in sorted(m.state_dict().items())})
        models.append(m)
    data = torch.from_numpy(rng.standard_normal((num_models, 5, 2, 5)).astype(np.float32))
    targets = torch.from_numpy(rng.integers(0, 3, (num_models, 5)))
    minibatch = data[0]

    params, buffers = stack_module_state(models)
    # a stateless skeleton on the "meta" device: functional_call supplies every parameter
    base_model = copy.deepcopy(models[0]).to("meta")
    assert base_model.fc1.weight.is_meta and str(base_model.fc1.weight.device) == "meta"

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    # the same minibatch for every model, then a different minibatch per model
    same = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    per = vmap(fmodel)(params, buffers, data)
    loop_same = torch.stack([m(minibatch) for m in models])
    loop_per = torch.stack([m(x) for m, x in zip(models, data)])

    # per-model gradients of a cross-entropy loss with torch.func.grad, vmapped over the ensemble
    def compute_loss(params, buffers, x, y):
        return F.cross_entropy(fmodel(params, buffers, x), y)

    grads = vmap(grad(compute_loss), in_dims=(0, 0, 0, 0))(params, buffers, data, targets)
    loop_grads = {}
    for m, x, y in zip(models, data, targets):
        m.zero_grad()
        F.cross_entropy(m(x), y).backward()
        for k, p in m.named_parameters():
            loop_grads.setdefault(k, []).append(p.grad.clone())
    # one gradient of one model through torch.func.grad, with respect to a dict of its parameters
    single = grad(lambda p: F.cross_entropy(functional_call(models[1], p, (data[1],)), targets[1]))(
        {k: v.detach() for k, v in models[1].named_parameters()})
    # an SGD step on the stacked parameters, then the ensemble's new losses
    with torch.no_grad():
        new_params = {k: params[k] - 0.1 * grads[k] for k in params}
        new_losses = vmap(lambda p, b, x, y: F.cross_entropy(fmodel(p, b, x), y))(new_params, buffers, data,
                                                                                   targets)
    out = {
        "stacked_shapes": {k: list(v.shape) for k, v in params.items()},
        "same_vs_loop": (same - loop_same).abs().max().item(),
        "per_vs_loop": (per - loop_per).abs().max().item(),
        "grads_vs_loop": max((grads[k] - torch.stack(loop_grads[k])).abs().max().item() for k in grads),
        "single_vs_loop": max((single[k] - loop_grads[k][1]).abs().max().item() for k in single),
        "same": same.tolist(),
        "per": per.tolist(),
        "grads": {k: v.tolist() for k, v in grads.items()},
        "new_losses": new_losses.tolist(),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
