"""`Module.load_state_dict`: copy a checkpoint into a module, with PyTorch's error report."""

from __future__ import annotations

from collections import namedtuple

from ..._tensor import Tensor, as_tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["load_state_dict"]

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class _Result(_IncompatibleKeys):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def load_state_dict(module, state_dict, strict: bool = True, assign: bool = False) -> _Result:
    """Copy `state_dict` into `module` in place (see `Module.load_state_dict`)."""
    own = module.state_dict(keep_vars=True)
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    errors = []
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
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors)
                           + "\nHint: compare model.state_dict().keys() and shapes with the checkpoint's; "
                           "pass strict=False to load a matching subset.")
    return _Result(missing, unexpected)


def _assign(module, key: str, src: Tensor) -> None:
    path, _, name = key.rpartition(".")
    mod = module.get_submodule(path)
    if name in mod._parameters:
        old = mod._parameters[name]
        mod._parameters[name] = src if isinstance(src, Parameter) else Parameter(src, old.requires_grad)
    else:
        mod._buffers[name] = src
