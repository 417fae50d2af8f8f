"""`weight_norm` / `remove_weight_norm`: a weight as a direction `v` times a magnitude `g` (Salimans & Kingma),
recomputed before each forward, as PyTorch's hook-based `torch.nn.utils.weight_norm`."""

from __future__ import annotations

import warnings

from ..parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow: float = 2, dim: int = 0):
    """The `pow`-norm of `v` over every dimension but `dim` (kept, size 1 elsewhere); `dim=-1`: over all."""
    if dim == -1:
        return v.norm(pow)
    others = tuple(i for i in range(v.ndim) if i != dim)
    return v.norm(pow, dim=others, keepdim=True)


class WeightNorm:
    """The forward pre-hook that rebuilds `module.<name>` from `<name>_g` and `<name>_v`."""

    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, dim

    def compute_weight(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _hooks(module, kind):
    return [(k, h) for k, h in module._forward_pre_hooks.items() if isinstance(h, kind)]


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparameterise `module.<name>` as `g * v / ||v||` (norm over all dimensions but `dim`; `None`: over all).

    The parameter is replaced by `<name>_g` and `<name>_v`; the weight is recomputed before every forward.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.weight_norm(tp.nn.Linear(3, 2))
        >>> [n for n, _ in m.named_parameters()]
        ['bias', 'weight_g', 'weight_v']
    """
    # PyTorch's warning, word for word (tapeflow has no parametrizations.weight_norm yet).
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    dim = -1 if dim is None else dim
    if any(h.name == name for _, h in _hooks(module, WeightNorm)):
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    fn = WeightNorm(name, dim)
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo `weight_norm`: `<name>` is a plain parameter again, holding the current weight.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.remove_weight_norm(tp.nn.utils.weight_norm(tp.nn.Linear(3, 2)))
        >>> [n for n, _ in m.named_parameters()]
        ['bias', 'weight']
    """
    for key, hook in _hooks(module, WeightNorm):
        if hook.name == name:
            weight = hook.compute_weight(module).detach()
            delattr(module, name)
            del module._parameters[name + "_g"], module._parameters[name + "_v"]
            setattr(module, name, Parameter(weight))
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
