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


def _stack_report(node, parent: bool) -> str:
    """PyTorch's words for where `node` was made (a parent: whose backward made the failing node)."""
    if node._trace is None:
        return (f"Error detected in {node.name()}. No forward pass information available. Enable detect anomaly "
                "during forward pass for more information.")
    trace = "".join(traceback.format_list(node._trace))
    if parent:
        return (f"\n\nPrevious calculation was induced by {node.name()}. Traceback of forward call that induced the "
                f"previous calculation:\n{trace}")
    return f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{trace}"


def _report(node) -> None:
    """Warn, as PyTorch's engine does when a node fails under anomaly mode, where the node was made and then
    where each node whose `create_graph` backward made it was made, one warning each."""
    reports = [_stack_report(node, False)]
    parent = getattr(node, "_parent", None)
    while parent is not None:
        reports.append(_stack_report(parent, True))
        parent = getattr(parent, "_parent", None)
    for msg in reports:
        try:
            warnings.warn(msg, UserWarning, stacklevel=3)
        except Warning:  # a filter made warnings errors: the node's own error goes on, the report to stderr
            print(f"Warning: {msg}", file=sys.stderr)


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
    """Run `node`; if it fails or (with `check_nan`) returns NaN, warn where it was made and raise."""
    marker = next(_sequence)
    try:
        out = node.apply(grads, create_graph)
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
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    except Exception:
        _report(node)
        raise
    return out
