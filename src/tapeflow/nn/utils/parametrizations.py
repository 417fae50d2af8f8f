"""Parametrizations built on `parametrize` (PyTorch's `torch.nn.utils.parametrizations`): `weight_norm`,
`spectral_norm`."""

from __future__ import annotations

from ... import _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..functional import normalize
from ..modules.module import Module
from .parametrize import register_parametrization
from .weight_norm import norm_except_dim

__all__ = ["weight_norm", "spectral_norm"]


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


class _SpectralNorm(Module):
    """`weight / sigma`, sigma the largest singular value estimated by power iteration on the buffers `_u`, `_v`
    (15 steps at creation, `n_power_iterations` per training forward)."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim, self.eps, self.n_power_iterations = dim if dim >= 0 else dim + ndim, eps, n_power_iterations
        if ndim > 1:
            with no_grad():
                mat = self._reshape_weight_to_matrix(weight)
                h, w = mat.shape
                self.register_buffer("_u", normalize(mat.new_empty(h).normal_(0, 1), dim=0, eps=eps))
                self.register_buffer("_v", normalize(mat.new_empty(w).normal_(0, 1), dim=0, eps=eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat, n: int) -> None:
        with no_grad():
            for _ in range(n):
                self._u.copy_(normalize(_ops.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(_ops.mv(mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # the graph keeps these values, not the updated buffers
        return weight / _ops.dot(u, _ops.mv(mat, v))

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """`module.<name>` divided by its spectral norm, as a parametrization (buffers
    `parametrizations.<name>.0._u` / `_v`).

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.parametrizations.spectral_norm(tp.nn.Linear(4, 3))
        >>> list(m.state_dict())
        ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    """
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    return register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
