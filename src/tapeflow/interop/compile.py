"""`tp.compile`: one XLA program for an eager function, with eager semantics kept.

A thin user of the staging layer (`tapeflow._staging.Staged`): the user asks for
a program, so a key is traced on its first call and errors propagate.
"""

from __future__ import annotations

import functools
import threading
import weakref

from .._staging.program import Staged
from ..nn.modules.module import Module

__all__ = ["compile", "CompiledFunction", "OptimizedModule", "is_tracing", "reset_all"]


class _Tracing(threading.local):
    depth = 0  # compiled functions this thread is tracing


_tracing = _Tracing()
_instances: weakref.WeakSet = weakref.WeakSet()  # every CompiledFunction, for `reset_all`


def is_tracing() -> bool:
    """Whether this thread is tracing a `tp.compile`d function (`torch.compiler.is_compiling()`)."""
    return _tracing.depth > 0


def reset_all() -> None:
    """Forget the programs of every compiled function (`torch.compiler.reset()`)."""
    for cf in list(_instances):
        cf.reset()


class CompiledFunction(Staged):
    """An eager tapeflow function compiled to one XLA program per state/argument signature.

    Built by `tapeflow.compile`; call it like the original function.

    Example:
        >>> import tapeflow as tp
        >>> f = tp.compile(lambda x: (x * x).sum())
        >>> type(f).__name__, f(tp.ones(3))
        ('CompiledFunction', tensor(3.))
    """

    def __init__(self, fn, *, donate_state: bool = False, fullgraph: bool = False):
        super().__init__(fn, name=f"tp.compile: {getattr(fn, '__name__', type(fn).__name__)}",
                         donate_state=donate_state, lenient=not fullgraph)
        functools.update_wrapper(self, fn, updated=())
        _instances.add(self)

    def _call_traced(self, *args):
        _tracing.depth += 1
        try:
            return super()._call_traced(*args)
        finally:
            _tracing.depth -= 1

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        # One compiled function per instance (each has its own state), dropped with the instance.
        bound = self.__dict__.setdefault("_bound", weakref.WeakKeyDictionary())
        try:
            cf = bound.get(obj)
        except TypeError:  # unhashable or not weakly referenceable: compile per access
            return CompiledFunction(self.fn.__get__(obj, objtype), donate_state=self.donate_state,
                                    fullgraph=not self.lenient)
        if cf is None:
            cf = bound[obj] = CompiledFunction(_WeakMethod(self.fn, obj), donate_state=self.donate_state,
                                               fullgraph=not self.lenient)
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
    function runs only while tracing, and results come back as tensors
    without autograd history. A change in the lifted state's set, shapes,
    dtypes or grad presence, in `requires_grad`, module training flags or
    optimizer hyperparameters traces again; learning rates are inputs of the
    program, so schedulers do not cause new traces.

    Like `torch.compile`, it keeps eager semantics where a program cannot:
    a function whose trace fails (a host read such as `.item()` of a traced
    value, data-dependent Python control flow) runs eagerly for those
    arguments from then on, with a warning (`fullgraph=True` raises the
    error instead; the state is left as it was); and a function that
    returns tensors with autograd history without running a backward pass
    itself (a model's forward in training) runs eagerly for those arguments
    (with adaptive eager: cached programs per segment), so that the caller
    can differentiate its results.

    Arguments:
        model: the function, or a Module (an `OptimizedModule` wrapping it is returned). Omit to use as
            `@tp.compile(...)`.
        donate_state: let XLA write the new values of lifted state into the old buffers even when other
            objects hold the old arrays (an array from `to_jax`, a retained graph): those become invalid.
            By default a call donates the arrays of the state it replaces only when nothing else holds
            them, which is always safe.
        **options: `torch.compile`'s: `fullgraph=True` raises when a trace fails; `disable=True` returns
            the function unchanged; `dynamic`, `backend`, `mode` and `options` are accepted and ignored.

    Returns:
        A `CompiledFunction`, an `OptimizedModule` for a Module (or the decorator when `model` is omitted).

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
        fullgraph = bool(options.get("fullgraph"))
        if isinstance(fn, Module):
            return OptimizedModule(fn, donate_state=donate_state, fullgraph=fullgraph)
        return CompiledFunction(fn, donate_state=donate_state, fullgraph=fullgraph)

    return wrap if model is None else wrap(model)


class OptimizedModule(Module):
    """A Module compiled with `tp.compile` (`torch.compile(model)`): calling it calls the wrapped module (hooks
    included) through a `CompiledFunction`; everything else is the wrapped module's, which it holds as its
    submodule `_orig_mod` (so its `state_dict` keys start with `_orig_mod.`, as PyTorch's do).

    Example:
        >>> import tapeflow as tp
        >>> m = tp.compile(tp.nn.Linear(2, 1))
        >>> type(m).__name__, m.in_features, next(iter(m.state_dict()))
        ('OptimizedModule', 2, '_orig_mod.weight')
    """

    def __init__(self, mod, *, donate_state: bool = False, fullgraph: bool = False):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = CompiledFunction(mod, donate_state=donate_state, fullgraph=fullgraph)

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __getattr__(self, name: str):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)
