"""Parametrizations built on `parametrize` (PyTorch's `torch.nn.utils.parametrizations`): `weight_norm`."""

from __future__ import annotations

from ..modules.module import Module
from .parametrize import register_parametrization
from .weight_norm import norm_except_dim

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0):
    """`module.<name>` as `g * v / ||v||`, with `g` and `v` in `parametrizations.<name>.original0/1`.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.parametrizations.weight_norm(tp.nn.Linear(3, 2))
        >>> list(m.state_dict())
        ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
