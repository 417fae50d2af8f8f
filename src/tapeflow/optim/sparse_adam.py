"""`SparseAdam`: Adam that updates only the rows a gradient touches (PyTorch's `torch.optim.SparseAdam`)."""

from __future__ import annotations

from .. import _ops
from .._factories import zeros_like
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Lazy Adam for embedding tables: rows whose gradient is absent keep their value and their moments.

    tapeflow has no sparse tensors, so `nn.Embedding(sparse=True)` produces a dense gradient whose rows
    are zero except those looked up; SparseAdam treats the rows (slices along dimension 0) with a nonzero
    gradient as the ones present, and updates them exactly as PyTorch updates the rows of a sparse gradient.

    Arguments:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator.
        maximize: ascend instead of descend.

    Example:
        >>> import tapeflow as tp
        >>> emb = tp.nn.Embedding(3, 2, sparse=True)
        >>> opt = tp.optim.SparseAdam(emb.parameters(), lr=0.1)
        >>> before = emb.weight.detach().clone()
        >>> emb(tp.tensor([0])).sum().backward(); opt.step()
        >>> (emb.weight - before).abs().sum(1) > 0
        tensor([ True, False, False])
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def step(self, closure=None):
        """One lazy update of every parameter that has a gradient; returns `closure()`'s loss if given."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                    state["step"] += 1
                    g = -p.grad if group["maximize"] else p.grad
                    rows = (g != 0).reshape(g.shape[0], -1).any(1) if g.ndim else (g != 0)
                    rows = rows.reshape((-1,) + (1,) * (g.ndim - 1)) if g.ndim else rows
                    m = _ops.where(rows, beta1 * state["exp_avg"] + (1 - beta1) * g, state["exp_avg"])
                    v = _ops.where(rows, beta2 * state["exp_avg_sq"] + (1 - beta2) * g * g, state["exp_avg_sq"])
                    t = state["step"]
                    step_size = group["lr"] * (1 - beta2 ** t) ** 0.5 / (1 - beta1 ** t)
                    new = _ops.where(rows, p - step_size * m / (v.sqrt() + group["eps"]), p)
                    self._write(p, new)
                    state["exp_avg"], state["exp_avg_sq"] = m, v
        return loss
