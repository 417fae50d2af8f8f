"""Parametrizations (PyTorch's `torch.nn.utils.parametrize`): a module's tensor computed from other tensors
on every access, `module.<name> = parametrization(original)`.

Registering one swaps the module's class for a subclass with a property `<name>` and moves the original tensor
to `module.parametrizations.<name>.original` (or `original0`, `original1`, ... when the parametrization's
`right_inverse` returns several), as PyTorch names them, so state dicts load both ways.
"""

from __future__ import annotations

import contextlib

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "ParametrizationList", "cached"]

_cache_enabled = [0]  # nesting depth of `cached()` blocks
_cache: dict = {}  # (id(module), tensor name) -> the parametrized tensor, inside `cached()`


@contextlib.contextmanager
def cached():
    """Inside the block, each parametrized tensor is computed once, on its first access, and that tensor is
    returned again (as PyTorch's: for a loop that reads a parametrized weight at every step of a recurrence).
    Blocks nest; the cache is emptied when the outermost one ends.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.parametrizations.weight_norm(tp.nn.Linear(3, 3))
        >>> with tp.nn.utils.parametrize.cached():
        ...     m.weight is m.weight
        True
        >>> m.weight is m.weight
        False
    """
    _cache_enabled[0] += 1
    try:
        yield
    finally:
        _cache_enabled[0] -= 1
        if not _cache_enabled[0]:
            _cache.clear()


def _parametrized(module, name: str):
    """`module.<name>`: its parametrizations applied to its originals (once per `cached()` block)."""
    if not _cache_enabled[0]:
        return module.parametrizations[name]()
    key = (id(module), name)
    value = _cache.get(key)
    if value is None:
        value = _cache[key] = module.parametrizations[name]()
    return value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to the originals it holds."""

    def __init__(self, modules, original, unsafe: bool = False):
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:  # at registration such a right_inverse is the identity
                        pass
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            with no_grad():
                original.copy_(new)
            _register(self, "original", original)
        else:
            for i, t in enumerate(new):
                _register(self, f"original{i}", Parameter(t.detach(), original.requires_grad)
                          if isinstance(original, Parameter) else t.detach())
        if not unsafe:  # PyTorch's consistency check: it runs the parametrization once (spectral_norm iterates)
            _check_same_space(self(), shape, dtype, "unparametrized dtype: {}", "parametrized dtype: {}",
                              "unparametrized shape: {}", "parametrized shape: {}", "")

    def right_inverse(self, value) -> None:
        """Set the originals so that the parametrized tensor becomes `value`."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self):
        first, *rest = list(self)
        if self.is_tensor:
            x = first(self.original)
        else:
            x = first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in rest:
            x = module(x)
        return x


def _register(module, name, tensor) -> None:
    if isinstance(tensor, Parameter):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def _check_same_space(z, shape, dtype, dtype_was, dtype_is, shape_was, shape_is, the) -> None:
    """PyTorch's refusal of a parametrization that does not give a tensor of the original's shape and dtype."""
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
    if z.dtype != dtype:
        raise ValueError(f"Registering a parametrization may not change the dtype of the tensor, unless {the}`unsafe` "
                         f"flag is enabled.\n{dtype_was.format(dtype)}\n{dtype_is.format(z.dtype)}")
    if z.shape != shape:
        raise ValueError(f"Registering a parametrization may not change the shape of the tensor, unless {the}`unsafe` "
                         f"flag is enabled.\n{shape_was.format(shape)}\n{shape_is.format(z.shape)}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False):
    """Make `module.<tensor_name>` read as `parametrization(original)` (appended to any parametrization it has).

    Example:
        >>> import tapeflow as tp
        >>> class Symmetric(tp.nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).T
        >>> m = tp.nn.utils.parametrize.register_parametrization(tp.nn.Linear(3, 3), "weight", Symmetric())
        >>> tp.equal(m.weight, m.weight.T), list(m.state_dict())
        (True, ['bias', 'parametrizations.weight.original'])
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:  # (PyTorch's check of what the new parametrization makes of the current value)
            current = getattr(module, tensor_name)
            _check_same_space(parametrization(current), current.shape, current.dtype,
                              f"module.{tensor_name}.dtype: {{}}", f"parametrization(module.{tensor_name}).dtype: {{}}",
                              f"module.{tensor_name}.shape: {{}}", f"parametrization(module.{tensor_name}).shape: {{}}",
                              "the ")
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    parametrizations = ParametrizationList([parametrization], getattr(module, tensor_name), unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = module.__class__
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    setattr(module.__class__, tensor_name, property(lambda self: _parametrized(self, tensor_name),
                                                    lambda self, v: self.parametrizations[tensor_name].right_inverse(v)))
    module.parametrizations[tensor_name] = parametrizations
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True):
    """Undo the parametrizations of `tensor_name`: a plain tensor again, holding the parametrized value
    (`leave_parametrized=True`) or the original.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.utils.parametrizations.weight_norm(tp.nn.Linear(3, 2))
        >>> m = tp.nn.utils.parametrize.remove_parametrizations(m, "weight")
        >>> type(m).__name__, list(m.state_dict())
        ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                original.copy_(getattr(module, tensor_name))
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach(), value.requires_grad) if isinstance(plist.original0, Parameter) \
            else value.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
                         "terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
