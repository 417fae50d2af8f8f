"""Grad modes: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Each saves the thread's mode on enter and restores it on exit, works as a
decorator, and nests.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from .._state import state

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled"]


def is_grad_enabled() -> bool:
    """Whether operations are being recorded on this thread.

    Example:
        >>> import tapeflow as tp
        >>> with tp.no_grad():
        ...     print(tp.is_grad_enabled())
        False
    """
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on in this thread.

    Example:
        >>> import tapeflow as tp
        >>> with tp.inference_mode():
        ...     print(tp.is_inference_mode_enabled())
        True
    """
    return state.inference


def _set_grad(mode: bool) -> None:
    # A region the user takes off the tape is off every JAX derivative too (`lax.stop_gradient`).
    state.grad_enabled = mode
    state.stop_traced = not mode


class _Mode:
    """Base for mode switches: context manager and decorator. Subclasses define
    `_enter`, which sets the thread's flags."""

    def __enter__(self):
        self._saved = (state.grad_enabled, state.stop_traced, state.inference)
        self._enter()
        return self

    def __exit__(self, *exc):
        state.grad_enabled, state.stop_traced, state.inference = self._saved
        return False

    def clone(self):
        return type(self)()

    def __call__(self, fn):
        if inspect.isclass(fn):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should "
                          "only decorate functions or methods. To preserve the current behavior of class decoration, "
                          "you can directly decorate the `__init__` method and nothing else.", FutureWarning,
                          stacklevel=2)
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper


    def _wrap_generator(self, fn):
        """`fn`'s generator runs in this mode at every resume; its caller keeps its own mode in between."""
        @functools.wraps(fn)
        def gen(*args, **kwargs):
            g = fn(*args, **kwargs)
            try:
                with self.clone():
                    value = next(g)
                while True:
                    try:
                        sent = yield value
                    except GeneratorExit:
                        with self.clone():
                            g.close()
                        raise
                    except BaseException as exc:  # thrown in by the caller: pass it on inside the mode
                        with self.clone():
                            value = g.throw(exc)
                    else:
                        with self.clone():
                            value = g.send(sent)
            except StopIteration as stop:
                return stop.value
        return gen


class _NoArgMode(_Mode):
    """A mode that also decorates without parentheses: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoArgMode):
    """Disable recording: results have no `grad_fn` and nothing is saved for backward.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(2, requires_grad=True)
        >>> with tp.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def _enter(self):
        _set_grad(False)


class enable_grad(_NoArgMode):
    """Enable recording inside a `no_grad` region.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(2, requires_grad=True)
        >>> with tp.no_grad(), tp.enable_grad():
        ...     (x * 2).requires_grad
        True
    """

    def _enter(self):
        _set_grad(True)


class set_grad_enabled(_Mode):
    """Set grad mode to `mode`: a plain call takes effect at once, a `with` restores it after.

    Example:
        >>> import tapeflow as tp
        >>> with tp.set_grad_enabled(False):
        ...     tp.is_grad_enabled()
        False
    """

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._prev = (state.grad_enabled, state.stop_traced)
        _set_grad(self.mode)

    def __enter__(self):
        self._saved = (*self._prev, state.inference)
        _set_grad(self.mode)
        return self

    def _enter(self):
        _set_grad(self.mode)

    def clone(self):
        prev = (state.grad_enabled, state.stop_traced)
        new = set_grad_enabled(self.mode)
        state.grad_enabled, state.stop_traced = prev
        new._prev = prev
        return new

    def __call__(self, fn):
        # Used as a decorator: undo the immediate switch made by __init__.
        state.grad_enabled, state.stop_traced = self._prev
        return super().__call__(fn)


class inference_mode(_Mode):
    """Like `no_grad`, for inference: nothing is recorded or saved.

    Example:
        >>> import tapeflow as tp
        >>> with tp.inference_mode():
        ...     tp.is_inference_mode_enabled()
        True
    """

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # used as `@inference_mode` without parentheses
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _enter(self):
        # `inference_mode(False)` is a region out of inference mode with grad mode on, as in PyTorch.
        _set_grad(not self.mode)
        state.inference = self.mode

    def clone(self):
        return inference_mode(self.mode)


def is_multithreading_enabled() -> bool:
    """Whether backward may run on worker threads (see `set_multithreading_enabled`).

    Example:
        >>> import tapeflow as tp
        >>> tp.autograd.is_multithreading_enabled()
        True
    """
    return getattr(state, "multithreading", True)


class set_multithreading_enabled(_Mode):
    """Allow (`True`, the default) or forbid backward on worker threads; takes effect at once, and as a
    context manager or decorator restores the previous setting when it ends. Per thread.

    tapeflow's engine always runs a backward pass on the calling thread (XLA parallelises inside each
    program), so this records the setting for code that sets and reads it, as PyTorch's does.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autograd.set_multithreading_enabled(False):
        ...     tp.autograd.grad_mode.is_multithreading_enabled()
        False
    """

    def __init__(self, mode: bool):
        self.prev = is_multithreading_enabled()
        state.multithreading = bool(mode)
        self.mode = bool(mode)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        state.multithreading = self.prev
        return False

    def clone(self):
        return type(self)(self.mode)


class _unsafe_preserve_version_counter:
    """Restore the version counters of `tensors` when the block ends, hiding the in-place writes made in it from
    autograd's checks (PyTorch's escape hatch: a saved tensor written this way is read with its new values, and
    nothing warns). Also a decorator.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(2)
        >>> with tp.autograd.grad_mode._unsafe_preserve_version_counter(x):
        ...     _ = x.mul_(2)
        >>> x._version, x.tolist()
        (0, [2.0, 2.0])
    """

    def __init__(self, tensors):
        from .._tensor import Tensor

        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tensors
        if not isinstance(self.tensors, tuple):
            raise AssertionError("Expected tensors to be a tuple")
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        for t, version in zip(self.tensors, self.prev_versions):
            t._st().version = version

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper
