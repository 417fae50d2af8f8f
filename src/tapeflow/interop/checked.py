"""`checked`: a tapeflow function staged under `jax.jit` with its value checks kept.

Eager tapeflow checks index values and integer divisors and raises PyTorch's errors. Inside `jax.jit`,
`tp.compile` or another transform those values are traced, so the checks cannot read them: JAX's own rules
apply there (gathers clamp out-of-range indices, scatters drop them, integer division by zero gives an
unspecified value). `checked(f)` stages the same checks into the compiled program with
`jax.experimental.checkify`, and after the program runs raises the error eager mode would have raised.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable

import jax
from jax.experimental import checkify

from .._staging import to_arrays, to_tensors
from .._state import state
from .convert import to_jax

__all__ = ["checked"]


def checked(fn: Callable) -> Callable:
    """`fn` compiled with `jax.jit`, raising eager mode's errors for out-of-range indices and integer
    division by zero instead of returning JAX's clamped or unspecified values.

    Arguments:
        fn: a function of Tensors (or pytrees of them) returning Tensors.

    Returns:
        A function with `fn`'s signature. Each call runs one compiled program, then reads one flag back
        from the device (the cost of checking); a failed check raises PyTorch's exception class and message.

    Example:
        >>> import tapeflow as tp
        >>> pick = tp.interop.checked(lambda x, i: x[i])
        >>> pick(tp.arange(3.0), tp.tensor([2, 0]))
        tensor([2., 0.])
        >>> pick(tp.arange(3.0), tp.tensor([3]))
        Traceback (most recent call last):
        ...
        IndexError: index 3 is out of bounds for dimension 0 with size 3
    """
    pure = to_jax(fn)

    def body(*args, **kwargs):
        prev = state.checked
        state.checked = True
        try:
            return pure(*args, **kwargs)
        finally:
            state.checked = prev

    program = jax.jit(checkify.checkify(body, errors=checkify.user_checks))

    @functools.wraps(fn)
    def run(*args, **kwargs):
        err, out = program(*to_arrays(args), **to_arrays(kwargs))
        message = err.get()
        if message is not None:
            raise _exception(message)
        return to_tensors(out)

    return run


def _exception(message: str) -> Exception:
    """The exception a staged check describes as `"ClassName: message"` (see `_ops._checks.staged_check`)."""
    text = message.split(" (`check` failed")[0].split(" (check failed at")[0]
    name, _, rest = text.partition(": ")
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls(rest)
    return RuntimeError(text)
