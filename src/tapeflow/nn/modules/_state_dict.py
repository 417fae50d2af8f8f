"""`Module.load_state_dict`: copy a checkpoint into a module, with PyTorch's error report."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

from ..._tensor import Tensor, as_tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from ._module_extras import has_extra_state

__all__ = ["load_state_dict"]

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _Result(_IncompatibleKeys):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def _own_entries(module) -> tuple[OrderedDict, list]:
    """`(parameters and persistent buffers by dotted name, [(prefix, module with extra state)])`, read without
    the state-dict hooks `state_dict()` would run."""
    own, extra = OrderedDict(), []
    for mod_prefix, mod in module.named_modules(remove_duplicate=False):
        pre = mod_prefix + "." if mod_prefix else ""
        for k, p in mod._parameters.items():
            if p is not None:
                own[pre + k] = p
        for k, b in mod._buffers.items():
            if b is not None and k not in mod._non_persistent_buffers_set:
                own[pre + k] = b
        if has_extra_state(mod):
            extra.append((pre, mod))
    return own, extra


def _kept_counter(module, key: str) -> bool:
    """A norm layer's `num_batches_tracked` absent from a checkpoint keeps its value and is not reported missing,
    as PyTorch treats checkpoints saved before the counter existed."""
    path, _, name = key.rpartition(".")
    return name == "num_batches_tracked" and hasattr(module.get_submodule(path), "track_running_stats")


def load_state_dict(module, state_dict, strict: bool = True, assign: bool = False) -> _Result:
    """Copy `state_dict` into `module` in place (see `Module.load_state_dict`); the load hooks run around it."""
    state_dict = OrderedDict(state_dict)  # pre-hooks may edit it; the caller's stays as it was
    errors: list = []
    missing: list = []
    unexpected: list = []
    for mod_prefix, mod in module.named_modules(remove_duplicate=False):
        for hook in list(mod.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            # (PyTorch passes strict=True to these hooks whatever `strict` is)
            hook(mod, state_dict, mod_prefix + "." if mod_prefix else "", {}, True, missing, unexpected, errors)
    own, extra = _own_entries(module)
    missing += [k for k in own if k not in state_dict and not _kept_counter(module, k)]
    extra_keys = {pre + "_extra_state" for pre, _ in extra}
    unexpected += [k for k in state_dict if k not in own and k not in extra_keys]
    for pre, mod in extra:
        if pre + "_extra_state" in state_dict:
            mod.set_extra_state(state_dict[pre + "_extra_state"])
        else:
            missing.append(pre + "_extra_state")
    for k, target in own.items():
        if k not in state_dict:
            continue
        src = state_dict[k]
        if not isinstance(src, Tensor):
            src = as_tensor(src)
        if tuple(src.shape) != tuple(target.shape):
            errors.append(f"size mismatch for {k}: copying a param with shape {src.shape} from checkpoint, "
                          f"the shape in current model is {target.shape}.")
            continue
        if assign:
            _assign(module, k, src)
        else:
            with no_grad():
                target.copy_(src)
    result = _Result(missing, unexpected)
    for _, mod in module.named_modules(remove_duplicate=False):
        for hook in list(mod.__dict__.get("_load_state_dict_post_hooks", {}).values()):
            if hook(mod, result) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not expected to "
                                     "return new values, if incompatible_keys need to be modified, it should be done "
                                     "inplace.")
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors)
                           + "\nHint: compare model.state_dict().keys() and shapes with the checkpoint's; "
                           "pass strict=False to load a matching subset.")
    return result


def _assign(module, key: str, src: Tensor) -> None:
    path, _, name = key.rpartition(".")
    mod = module.get_submodule(path)
    if name in mod._parameters:
        old = mod._parameters[name]
        mod._parameters[name] = src if isinstance(src, Parameter) else Parameter(src, old.requires_grad)
    else:
        mod._buffers[name] = src
