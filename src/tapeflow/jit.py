"""`torch.jit`, as eager code sees it: the queries model code branches on and the TorchScript decorators.

tapeflow has no TorchScript: `script` gives back the function or module it is given, which runs as
ordinary eager code (with PyTorch's deprecation warning), and the decorators that steer the
TorchScript compiler (`ignore`, `unused`, `export`) leave functions unchanged, which is what they do
to code that is not scripted. `trace` runs the function once on its example inputs, as PyTorch's does, and
gives it back to run as eager code. Saving and loading TorchScript programs are not provided.
"""

from __future__ import annotations

import typing
import warnings

__all__ = ["is_scripting", "is_tracing", "script", "trace", "ignore", "unused", "export", "annotate", "Final"]

Final = typing.Final


def is_scripting() -> bool:
    """Whether the code runs under the TorchScript compiler: never, in tapeflow.

    Example:
        >>> import tapeflow as tp
        >>> tp.jit.is_scripting()
        False
    """
    return False


def is_tracing() -> bool:
    """Whether the code runs under `torch.jit.trace`: never, in tapeflow (`tp.compile` traces with JAX; see
    `tp.compiler.is_compiling`).

    Example:
        >>> import tapeflow as tp
        >>> tp.jit.is_tracing()
        False
    """
    return False


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """`obj` (a function or a Module) itself: it runs as eager code. PyTorch deprecates `torch.jit.script`;
    the same warning is given. For one compiled program, use `tp.compile`.

    Example:
        >>> import warnings, tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     double = tp.jit.script(lambda x: x * 2)
        >>> double(tp.ones(2))
        tensor([2., 2.])
    """
    warnings.warn("`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=2)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True, check_inputs=None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs: bool = True):
    """`func` (a function or a Module) itself, after one call on `example_inputs` (a tensor or a tuple of
    arguments) or `example_kwarg_inputs` (a dict), as PyTorch's tracer makes: an input it cannot take raises
    here. The result runs as eager code, so its control flow still follows its inputs (PyTorch's trace
    records the path the example took) and it has no `graph`, `code` or `save`. PyTorch deprecates
    `torch.jit.trace`; the same warning is given. For one compiled program, use `tp.compile`.

    Example:
        >>> import warnings, tapeflow as tp
        >>> layer = tp.nn.Linear(2, 1)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     traced = tp.jit.trace(layer, tp.ones(1, 2))
        >>> traced is layer
        True
    """
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or `torch.export`.",
                  DeprecationWarning, stacklevel=2)
    if example_inputs is None:
        if not isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict")
        func(**example_kwarg_inputs)
    else:
        func(*(example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)))
    return func


def ignore(drop=False, **kwargs):
    """Decorator telling TorchScript to leave a function to Python: the function unchanged (as
    `@ignore` or `@ignore(drop=True)`).

    Example:
        >>> import tapeflow as tp
        >>> @tp.jit.ignore
        ... def debug(x):
        ...     return x + 1
        >>> debug(1)
        2
    """
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Decorator telling TorchScript to skip a method: the method unchanged.

    Example:
        >>> import tapeflow as tp
        >>> tp.jit.unused(abs)(-3)
        3
    """
    return fn


def export(fn):
    """Decorator telling TorchScript to compile a method as an entry point: the method unchanged.

    Example:
        >>> import tapeflow as tp
        >>> tp.jit.export(len)([1, 2])
        2
    """
    return fn


def annotate(the_type, the_value):
    """A type hint for TorchScript: `the_value` itself.

    Example:
        >>> import tapeflow as tp
        >>> tp.jit.annotate(list, [])
        []
    """
    return the_value
