"""`spectral_norm` / `remove_spectral_norm`: a weight divided by its largest singular value, estimated by power
iteration (Miyato et al.), as PyTorch's hook-based `torch.nn.utils.spectral_norm`."""

from __future__ import annotations

from ... import _ops
from ...autograd.grad_mode import no_grad
from ..functional import normalize
from ..parameter import Parameter

__all__ = ["spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook: in training mode it runs `n_power_iterations` steps (updating the buffers
    `<name>_u`, `<name>_v` in place), then sets `module.<name> = <name>_orig / sigma`."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(_ops.mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(normalize(_ops.mv(mat, v), dim=0, eps=self.eps))
            # the graph must hold these values, not the buffers the next iteration overwrites
            u, v = u.clone(), v.clone()
        sigma = _ops.dot(u, _ops.mv(mat, v))
        return weight / sigma

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """Normalise `module.<name>` by its spectral norm before every forward.

    Arguments:
        module: the layer; name: its weight.
        n_power_iterations: power-iteration steps per training forward.
        eps: for the normalisations.
        dim: the output dimension (default 0; 1 for transposed convolutions).

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.spectral_norm(tp.nn.Linear(4, 3))
        >>> [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()]
        (['bias', 'weight_orig'], ['weight_u', 'weight_v'])
    """
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with no_grad():
        mat = fn.reshape_weight_to_matrix(weight)
        h, w = mat.shape
        u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
        v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Undo `spectral_norm`: `<name>` is a plain parameter holding the normalised weight.

    Example:
        >>> import tapeflow as tp
        >>> lin = tp.nn.utils.spectral_norm(tp.nn.Linear(3, 2))
        >>> lin = tp.nn.utils.remove_spectral_norm(lin)
        >>> sorted(n for n, _ in lin.named_parameters())
        ['bias', 'weight']
    """
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            weight = hook.compute_weight(module, do_power_iteration=False).detach()
            del module._forward_pre_hooks[key]
            delattr(module, name)
            del module._parameters[name + "_orig"]
            del module._buffers[name + "_u"], module._buffers[name + "_v"]
            module.register_parameter(name, Parameter(weight))
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
