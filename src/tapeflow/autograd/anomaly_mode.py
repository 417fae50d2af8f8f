"""Anomaly mode: remember where each node was created; report it when that
node's backward fails, and fail on NaN gradients."""

from __future__ import annotations

import sys
import traceback
import warnings

import jax
import jax.numpy as jnp

from .._state import state
from .graph import _sequence

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on in this thread.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autograd.detect_anomaly():
        ...     print(tp.is_anomaly_enabled())
        True
    """
    return state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward outputs for NaN.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autograd.detect_anomaly(check_nan=False):
        ...     print(tp.autograd.is_anomaly_check_nan_enabled())
        False
    """
    return state.anomaly_check_nan


class detect_anomaly:
    """Context manager / decorator enabling anomaly detection for the autograd engine.

    Nodes created inside remember the forward call stack; when such a node's
    backward raises, the error is preceded by that stack. With `check_nan`,
    a node whose backward produces NaN raises a RuntimeError naming it.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.tensor([-1.0], requires_grad=True)
        >>> with tp.autograd.detect_anomaly():
        ...     y = x.sqrt()
        ...     try:
        ...         y.sum().backward()
        ...     except RuntimeError as e:
        ...         print(str(e).split(".")[0])
        Function 'SqrtBackward0' returned nan values in its 0th output
    """

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = (state.anomaly, state.anomaly_check_nan)
        state.anomaly, state.anomaly_check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        state.anomaly, state.anomaly_check_nan = self._prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: a plain call sets it, `with` restores it after.

    Example:
        >>> import tapeflow as tp
        >>> with tp.autograd.set_detect_anomaly(True):
        ...     tp.is_anomaly_enabled()
        True
    """

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (state.anomaly, state.anomaly_check_nan)
        state.anomaly, state.anomaly_check_nan = bool(mode), check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        state.anomaly, state.anomaly_check_nan = self._prev
        return False


def _format_trace(node) -> str:
    if node._trace is None:
        return ""
    return "".join(traceback.format_list(node._trace))


def _parents_message(node) -> str:
    """The chain of nodes whose create_graph backward created `node`, with their forward stacks."""
    parts = []
    parent = getattr(node, "_parent", None)
    while parent is not None:
        parts.append(f"\nThe parent's traceback follows. Previous calculation was induced by {parent.name()}. "
                     f"Traceback of forward call that induced the previous calculation:\n{_format_trace(parent)}")
        parent = getattr(parent, "_parent", None)
    return "".join(parts)


def _mark_children(node, out, marker) -> None:
    """Remember `node` as the parent of the nodes its (create_graph) backward just recorded."""
    stack = [g.grad_fn for g in out if getattr(g, "grad_fn", None) is not None]
    seen = set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen or n._seq <= marker:
            continue
        seen.add(id(n))
        if n.__dict__.get("_parent") is None:
            n.__dict__["_parent"] = node
        stack.extend(nxt for nxt, _ in n.next_functions)


def run_checked(node, grads, create_graph):
    """Run `node` reporting where it was created if it fails, and checking for NaN."""
    marker = next(_sequence)
    try:
        out = node.apply(grads, create_graph)
    except Exception:
        msg = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        msg += _format_trace(node) + _parents_message(node)
        try:
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
        except Warning:  # a filter made warnings errors: the node's own error goes on, the report to stderr
            print(f"Warning: {msg}", file=sys.stderr)
        raise
    if create_graph:
        _mark_children(node, out, marker)
    if state.anomaly_check_nan:
        for i, g in enumerate(out):
            if g is None:
                continue
            a = getattr(g, "_data", g)
            if isinstance(a, jax.core.Tracer):
                continue
            if bool(jnp.any(jnp.isnan(a))):
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output. "
                                   "Run with detect_anomaly off to skip this check; the forward call that "
                                   f"created it:\n{_format_trace(node)}{_parents_message(node)}")
    return out
