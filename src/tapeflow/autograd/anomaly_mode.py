"""Anomaly mode: remember where each node was created; report it when that
node's backward fails, and fail on NaN gradients."""

from __future__ import annotations

import traceback
import warnings

import jax
import jax.numpy as jnp

from .._state import state

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled() -> bool:
    return state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
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


def run_checked(node, grads, create_graph):
    """Run `node` reporting where it was created if it fails, and checking for NaN."""
    try:
        out = node.apply(grads, create_graph)
    except Exception:
        msg = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        warnings.warn(msg + _format_trace(node), RuntimeWarning, stacklevel=2)
        raise
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
                                   f"created it:\n{_format_trace(node)}")
    return out
