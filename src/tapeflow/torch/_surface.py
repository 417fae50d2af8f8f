"""The torch API that `tapeflow.torch` provides, listed from the code (`docs/torch_api.md` is generated here)."""

from __future__ import annotations

import importlib
import types

from . import _target_name

__all__ = ["surface_markdown"]

NAMESPACES = ["torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.utils.rnn",
              "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations", "torch.nn.utils.prune",
              "torch.optim", "torch.optim.lr_scheduler", "torch.optim.swa_utils", "torch.utils.data",
              "torch.utils.checkpoint", "torch.utils.hooks", "torch.utils._pytree", "torch.nn.attention", "torch.ops", "torch.random",
              "torch.jit", "torch.compiler", "torch.profiler", "torch._C",
              "torch.autograd", "torch.autograd.graph", "torch.autograd.functional", "torch.autograd.forward_ad",
              "torch.func", "torch.linalg", "torch.fft",
              "torch.distributions", "torch.special", "torch.cuda", "torch.amp", "torch.backends", "torch.accelerator", "torch.testing"]

# Torch APIs that real programs use and tapeflow does not have yet (each raises a clear error when touched).
NOT_YET = ["torch.distributions.constraints: MixtureSameFamilyConstraint",
           "torch.utils.tensorboard", "torch.jit.save and torch.jit.load (TorchScript programs)",
           "torch.fx, torch.export", "sparse and quantized tensors"]


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    out = []
    for n in sorted(set(names)):
        obj = getattr(module, n, None)
        if obj is None or isinstance(obj, types.ModuleType):
            continue
        out.append(f"`{n}`")
    return out


def surface_markdown() -> str:
    """The page: for each torch namespace, the names tapeflow gives it; then what is not supported yet."""
    lines = ["# The torch API under `tapeflow.torch`", "",
             "Generated from the code by `python -m tapeflow.torch --api` (a test keeps it current). Under",
             "`python -m tapeflow.torch`, `torch.X` is `tapeflow.X`; each name below is what a program finds there.",
             "Anything else raises an error naming the torch API that is missing.", ""]
    for ns in NAMESPACES:
        module = importlib.import_module(_target_name(ns))
        names = _public(module)
        lines += [f"## `{ns}` ({len(names)})", "", ", ".join(names) if names else "(flags only)", ""]
    lines += ["## Not supported yet", ""] + [f"- {item}" for item in NOT_YET] + [""]
    return "\n".join(lines)
