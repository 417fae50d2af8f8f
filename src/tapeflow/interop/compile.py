"""`tp.compile`: one XLA program for an eager function, with eager semantics kept.

A thin user of the staging layer (`tapeflow._staging.Staged`): the user asks for
a program, so a key is traced on its first call and errors propagate.
"""

from __future__ import annotations

import functools
import weakref

from .._staging.program import Staged

__all__ = ["compile", "CompiledFunction"]


class CompiledFunction(Staged):
    """An eager tapeflow function compiled to one XLA program per state/argument signature.

    Built by `tapeflow.compile`; call it like the original function.

    Example:
        >>> import tapeflow as tp
        >>> f = tp.compile(lambda x: (x * x).sum())
        >>> type(f).__name__, f(tp.ones(3))
        ('CompiledFunction', tensor(3.))
    """

    def __init__(self, fn, *, donate_state: bool = False):
        super().__init__(fn, name=f"tp.compile: {getattr(fn, '__name__', 'function')}", donate_state=donate_state)
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        # One compiled function per instance (each has its own state), dropped with the instance.
        bound = self.__dict__.setdefault("_bound", weakref.WeakKeyDictionary())
        try:
            cf = bound.get(obj)
        except TypeError:  # unhashable or not weakly referenceable: compile per access
            return CompiledFunction(self.fn.__get__(obj, objtype), donate_state=self.donate_state)
        if cf is None:
            cf = bound[obj] = CompiledFunction(_WeakMethod(self.fn, obj), donate_state=self.donate_state)
        return cf


class _WeakMethod:
    """`func` bound to `obj` without keeping `obj` alive (for compiled methods cached per instance)."""

    __slots__ = ("__func__", "ref", "__name__", "__weakref__")

    def __init__(self, func, obj):
        self.__func__, self.ref, self.__name__ = func, weakref.ref(obj), func.__name__

    @property
    def __self__(self):
        return self.ref()

    def __call__(self, *args, **kwargs):
        obj = self.ref()
        if obj is None:
            raise ReferenceError("the object this compiled method belongs to no longer exists")
        return self.__func__(obj, *args, **kwargs)


def compile(model=None, *, donate_state: bool = False, **options):
    """Compile an eager function (e.g. a whole training step) into one XLA program.

    The function is traced with `jax.jit`: forward, `.backward()`, hooks and
    optimizer updates all become one program. Eager semantics are kept for
    tensors: parameters, buffers, `.grad`s, optimizer state and the global RNG
    key that the function reads or writes without taking them as arguments
    are passed in and out of the program and written back into the same
    Tensor objects after every call (state the function leaves untouched
    keeps its arrays: it is not copied). Tensor arguments are traced inputs
    (in-place writes to them are written back too); other array arguments
    are traced; modules and optimizers passed as arguments are lifted like
    closed-over ones; any other argument is static (hashable; a new value
    traces again).

    Python side effects behave as under `jax.jit`: Python code in the
    function runs only while tracing, `.item()`/printing of values is not
    possible inside, and results come back as tensors without autograd
    history. A change in the lifted state's set, shapes, dtypes or grad
    presence, in `requires_grad`, module training flags or optimizer
    hyperparameters traces again; learning rates are inputs of the program,
    so schedulers do not cause new traces.

    Arguments:
        model: the function (or a Module, whose forward is compiled). Omit to use as `@tp.compile(...)`.
        donate_state: let XLA reuse the buffers of lifted state for the new values (saves memory; arrays
            aliasing the old values, e.g. from `.detach()`, become invalid).
        **options: accepted for signature compatibility with `torch.compile` (`fullgraph`, `dynamic`,
            `backend`, `mode`, `options`, `disable`); `disable=True` returns the function unchanged.

    Returns:
        A `CompiledFunction` (or the decorator when `model` is omitted).

    Example:
        >>> import tapeflow as tp
        >>> w = tp.ones(3, requires_grad=True)
        >>> @tp.compile
        ... def step(x):
        ...     w.grad = None
        ...     loss = (w * x).sum()
        ...     loss.backward()
        ...     with tp.no_grad():
        ...         w.sub_(0.1 * w.grad)
        ...     return loss
        >>> step(tp.tensor([1.0, 2.0, 3.0]))
        tensor(6.)
        >>> w
        tensor([0.9000, 0.8000, 0.7000], requires_grad=True)
    """
    unknown = set(options) - {"fullgraph", "dynamic", "backend", "mode", "options", "disable"}
    if unknown:
        raise TypeError(f"compile() got unexpected keyword arguments {sorted(unknown)}")

    def wrap(fn):
        if options.get("disable"):
            return fn
        return CompiledFunction(fn, donate_state=donate_state)

    return wrap if model is None else wrap(model)
