"""PyTorch's TypeError for a Python number where a function's first argument must be a Tensor.

`torch.maximum(2, x)` or `torch.eq(2, x)` is refused in PyTorch (only the operators reflect: `2 < x`); the
functions here would otherwise take the number as a 0-d tensor and answer. A function with one signature names
the argument; one with overloads lists them, as PyTorch's argument parser does.
"""

from __future__ import annotations

import functools

from ._tensor import Tensor

# function: the name of its first argument (one signature)
_ONE = {name: "input" for name in (
    "atan2 arctan2 maximum minimum fmax fmin logical_and logical_or logical_xor hypot nextafter ldexp logaddexp "
    "logaddexp2 igamma igammac dist dot matmul outer ger kron inner mm mv vdot cross isclose allclose gcd lcm "
    "heaviside").split()}
_ONE.update({"polar": "abs", "complex": "real", "cdist": "x1"})

_TENSOR_OR_NUMBER = (" * (Tensor input, Tensor other, *, Tensor out = None)",
                     " * (Tensor input, Number other, *, Tensor out = None)")
# function: the lines of its overloads
_SEVERAL = {name: _TENSOR_OR_NUMBER for name in
            "fmod eq ne lt le gt ge greater less not_equal greater_equal less_equal copysign".split()}
_SEVERAL.update({
    "rsub": (" * (Tensor input, Tensor other, *, Number alpha = 1)", " * (Tensor input, Number other, Number alpha = 1)"),
    "clamp_min": (" * (Tensor input, Tensor min, *, Tensor out = None)",
                  " * (Tensor input, Number min, *, Tensor out = None)"),
    "clamp_max": (" * (Tensor input, Tensor max, *, Tensor out = None)",
                  " * (Tensor input, Number max, *, Tensor out = None)"),
    "lerp": (" * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)",
             " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)"),
    "masked_fill": (" * (Tensor input, Tensor mask, Tensor value)", " * (Tensor input, Tensor mask, Number value)"),
})


def _described(args, kwargs) -> str:
    def kind(v):
        return "Tensor" if isinstance(v, Tensor) else type(v).__name__
    return ", ".join([kind(a) for a in args] + [f"{k}={kind(v)}" for k, v in kwargs.items()])


def _refusal(name: str, args, kwargs) -> TypeError:
    if name in _ONE:
        return TypeError(f"{name}(): argument '{_ONE[name]}' (position 1) must be Tensor, not {type(args[0]).__name__}")
    lines = "\n".join(_SEVERAL[name])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({_described(args, kwargs)}), "
                     f"but expected one of:\n{lines}\n")


def _checked(name: str, fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if args and not isinstance(args[0], Tensor):
            raise _refusal(name, args, kwargs)
        return fn(*args, **kwargs)
    return run


def install(namespace: dict) -> None:
    """Wrap the functions above in `namespace` (the top-level one) with the check."""
    for name in (*_ONE, *_SEVERAL):
        if name in namespace:
            namespace[name] = _checked(name, namespace[name])
