"""`torch.compiler`: what code asks of the compiler behind `tp.compile` (`torch.compile`)."""

from __future__ import annotations

import functools

from ._staging.program import EagerOnly
from .interop.compile import is_tracing, reset_all

__all__ = ["is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "reset", "allow_in_graph"]


def is_compiling() -> bool:
    """Whether the calling code is being traced by `tp.compile` (`torch.compile`), rather than running
    eagerly.

    Example:
        >>> import tapeflow as tp
        >>> tp.compiler.is_compiling()
        False
        >>> tp.compile(lambda x: x + tp.compiler.is_compiling())(tp.zeros(1))
        tensor([1.])
    """
    return is_tracing()


def is_dynamo_compiling() -> bool:
    """The same as `is_compiling` (tapeflow has one tracer).

    Example:
        >>> import tapeflow as tp
        >>> tp.compiler.is_dynamo_compiling()
        False
    """
    return is_tracing()


def is_exporting() -> bool:
    """Whether the code is being exported (`torch.export`): never, in tapeflow.

    Example:
        >>> import tapeflow as tp
        >>> tp.compiler.is_exporting()
        False
    """
    return False


def disable(fn=None, recursive: bool = True, *, reason: str | None = None):
    """Decorator: `fn` always runs eagerly. A compiled function that calls it while being traced runs
    eagerly for those arguments from then on (without a warning; with `fullgraph=True` the trace raises
    instead), as `torch.compile` breaks its graph there. Use it for code that cannot be traced, such as
    host reads or logging.

    Example:
        >>> import tapeflow as tp
        >>> @tp.compiler.disable
        ... def log(x):
        ...     return x.sum().item()
        >>> step = tp.compile(lambda x: log(x * 2))
        >>> step(tp.ones(3))
        6.0
    """
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def eager_only(*args, **kwargs):
        if is_tracing():
            raise EagerOnly(f"{getattr(fn, '__qualname__', fn)} is marked torch.compiler.disable"
                            + (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)

    return eager_only


def reset() -> None:
    """Forget the programs of every compiled function: each traces again on its next call.

    Example:
        >>> import tapeflow as tp
        >>> f = tp.compile(lambda x: x * 2)
        >>> _ = f(tp.ones(1)); tp.compiler.reset(); _ = f(tp.ones(1))
        >>> f.traces
        1
    """
    reset_all()


def allow_in_graph(fn):
    """Decorator: `fn` is traced into the compiled program (it already is, in tapeflow): `fn` unchanged.

    Example:
        >>> import tapeflow as tp
        >>> tp.compiler.allow_in_graph(abs) is abs
        True
    """
    return fn
