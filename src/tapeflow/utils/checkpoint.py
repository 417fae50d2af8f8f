"""Activation checkpointing (PyTorch's `torch.utils.checkpoint`): run a block without keeping its
intermediate tensors, and recompute them on the tape when the backward pass reaches the block.

Memory for compute: the block's forward runs twice. Random draws inside (dropout) are replayed from the same
generator state, so the recomputed values equal the first ones. Under a JAX trace (`tp.compile`,
`tp.func`) the block runs as it is and XLA decides what to keep.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable

import jax

from .._factories import get_rng_state, set_rng_state, zeros
from .._tensor import Tensor
from ..autograd.backward import backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "set_checkpoint_early_stop"]


def _noop_context_fn():
    return None


class _Checkpoint(Function):
    """The block as one node: forward without recording; backward recomputes it with recording on and
    back-propagates through the recomputed graph (parameters inside get their `.grad` there)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, _anchor, *args):
        ctx.run_function, ctx.kwargs = run_function, kwargs
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.tensor_index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_index))
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        with no_grad():
            return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.args)
        for i, t in zip(ctx.tensor_index, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        outer_rng = get_rng_state()
        if ctx.rng_state is not None:
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outputs = ctx.run_function(*args, **ctx.kwargs)
        finally:
            set_rng_state(outer_rng)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None, None, *(a._grad if isinstance(a, Tensor) else None for a in args))


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None, context_fn: Callable = _noop_context_fn,
               determinism_check: str = "default", debug: bool = False, **kwargs):
    """`function(*args, **kwargs)` without keeping its intermediates for backward; they are recomputed then.

    Arguments:
        function: the block (a module or any function of tensors).
        *args: its arguments.
        use_reentrant: PyTorch's two variants; pass it explicitly (a warning otherwise, defaulting to True).
            With True, keyword arguments are refused and the block's parameters get gradients only when an
            input requires grad; with False, parameters always do.
        preserve_rng_state: (keyword, default True) replay the generator state for the recomputation.
        context_fn, determinism_check, debug: accepted as in PyTorch (no effect here).

    Returns:
        `function`'s output. Gradients reach the block's inputs and (as `.grad`) the parameters it uses.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import checkpoint
        >>> block = tp.nn.Sequential(tp.nn.Linear(4, 8), tp.nn.ReLU(), tp.nn.Linear(8, 4))
        >>> x = tp.randn(2, 4, requires_grad=True)
        >>> checkpoint(block, x, use_reentrant=False).sum().backward()
        >>> x.grad.shape, block[0].weight.grad.shape
        (tapeflow.Size([2, 4]), tapeflow.Size([8, 4]))
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
                      "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if context_fn is not _noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if any(isinstance(a, Tensor) and isinstance(a._data, jax.core.Tracer) for a in args):
        return function(*args, **kwargs)  # staged: one program, XLA rematerialises as it sees fit
    if use_reentrant:
        if is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        anchor = None
    else:
        # A leaf that requires grad makes the node record even when no input does, so that the backward
        # pass reaches the block and its parameters get their gradients.
        anchor = zeros((), requires_grad=True) if is_grad_enabled() else None
    return _Checkpoint.apply(function, preserve, kwargs, anchor, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Run a `Sequential` (or list of modules) in `segments` checkpointed chunks; the last chunk runs normally.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import checkpoint_sequential
        >>> net = tp.nn.Sequential(*[tp.nn.Linear(4, 4) for _ in range(4)])
        >>> checkpoint_sequential(net, 2, tp.randn(3, 4), use_reentrant=False).shape
        tapeflow.Size([3, 4])
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


_early_stop = [True]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Context manager: whether a checkpointed block's recomputation may stop once it has produced what backward
    needs (on by default). tapeflow recomputes a block as one node, so the result is the same either way; the
    setting is kept for code that sets it.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.utils.checkpoint import checkpoint, set_checkpoint_early_stop
        >>> x = tp.ones(2, requires_grad=True)
        >>> with set_checkpoint_early_stop(False):
        ...     y = checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False)
        >>> y.backward(); x.grad
        tensor([2., 2.])
    """
    prev = _early_stop[0]
    _early_stop[0] = bool(enable)
    try:
        yield
    finally:
        _early_stop[0] = prev
