"""`tapeflow.save` / `tapeflow.load`: checkpoints that loading never turns into code.

Tensors pickle as NumPy arrays plus their `requires_grad` flag (see
`Tensor.__reduce_ex__`), so a file holds no JAX device buffers and loads on
any backend. `load` reads with a weights-only unpickler by default: it
rebuilds tensors, dtypes, devices, containers, numbers and strings, and
refuses every other global a file names, so a crafted file cannot run code.
`save` writes to a temporary file beside the target and renames it over the
target, so an interrupted save leaves the previous checkpoint intact.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import tempfile
import warnings
from collections.abc import Callable, Iterable
from typing import IO, Any

from . import _dtype

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

# What a tapeflow checkpoint names: the rebuild functions of tensors, parameters, dtypes and devices, and
# what NumPy and ml_dtypes use to rebuild arrays, scalars and dtypes (NumPy 1 and 2 module names).
_ALLOWED = {
    ("tapeflow._tensor", "_rebuild"), ("tapeflow._tensor", "_rebuild_view"), ("tapeflow.nn.parameter", "_rebuild_parameter"),
    ("tapeflow._dtype", "from_jax_dtype"), ("tapeflow._device", "device"),
    ("collections", "OrderedDict"), ("collections", "Counter"), ("builtins", "slice"), ("builtins", "complex"), ("builtins", "set"),
    ("builtins", "frozenset"), ("builtins", "bytearray"), ("builtins", "range"),
    ("numpy", "dtype"), ("numpy", "ndarray"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
}
_ML_DTYPES = {"bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "int4", "uint4"}
_user_globals: dict[tuple[str, str], Any] = {}


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow `load(weights_only=True)` to rebuild these classes or functions (e.g. your own dataclass).

    Arguments:
        safe_globals: objects, or `(object, "module.name")` pairs naming them as the file does.

    Example:
        >>> import tapeflow as tp
        >>> from fractions import Fraction
        >>> tp.serialization.add_safe_globals([Fraction])
        >>> Fraction in tp.serialization.get_safe_globals()
        True
        >>> tp.serialization.clear_safe_globals()  # the allow-list is process-wide
    """
    for g in safe_globals:
        if isinstance(g, tuple):
            obj, path = g
            module, _, name = path.rpartition(".")
        else:
            obj, module, name = g, g.__module__, g.__qualname__
        _user_globals[(module, name)] = obj


def get_safe_globals() -> list:
    """The globals added by `add_safe_globals`."""
    return list(_user_globals.values())


def clear_safe_globals() -> None:
    """Forget every global added by `add_safe_globals`."""
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_: Iterable[Any]):
    """`add_safe_globals` for the duration of a `with` block.

    Example:
        >>> import tapeflow as tp
        >>> from fractions import Fraction
        >>> with tp.serialization.safe_globals([Fraction]):
        ...     Fraction in tp.serialization.get_safe_globals()
        True
    """
    before = dict(_user_globals)
    add_safe_globals(globals_)
    try:
        yield
    finally:
        _user_globals.clear()
        _user_globals.update(before)


class _WeightsUnpickler(pickle.Unpickler):
    """Rebuilds only what a checkpoint of tensors holds; any other global is refused before it is touched."""

    def find_class(self, module: str, name: str):
        if (module, name) in _user_globals:
            return _user_globals[(module, name)]
        if (module, name) in _ALLOWED or (module == "ml_dtypes" and name in _ML_DTYPES):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed. Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
            f"default. A checkpoint of tensors never needs it; if you trust this file, allow it with "
            f"`tapeflow.serialization.add_safe_globals([{name}])`, or load with `weights_only=False` (which "
            "runs whatever code the file contains).")


def save(obj: Any, f: str | os.PathLike | IO[bytes], pickle_protocol: int = pickle.HIGHEST_PROTOCOL) -> None:
    """Write `obj` (a tensor, a `state_dict()`, any picklable object) to a path or binary file.

    A path is written atomically: to a temporary file in the same directory, then renamed over the target,
    so an interrupted save leaves any previous file at that path intact.

    Arguments:
        obj: what to save.
        f: a file path or an object with `write`.
        pickle_protocol: the pickle protocol.

    Returns:
        None.

    Example:
        >>> import tempfile, os, tapeflow as tp
        >>> path = os.path.join(tempfile.mkdtemp(), "model.pt")
        >>> tp.save(tp.nn.Linear(2, 1).state_dict(), path)
        >>> sorted(tp.load(path))
        ['bias', 'weight']
    """
    if not isinstance(f, (str, os.PathLike)):
        if not hasattr(f, "write"):
            raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
        pickle.dump(obj, f, protocol=pickle_protocol)
        return
    path = os.fspath(f)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle_protocol)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load(f: str | os.PathLike | IO[bytes], map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args) -> Any:
    """Read an object written by `save`.

    By default (`weights_only=True`, as in PyTorch 2.6+) only tensors, parameters, dtypes, devices, dicts,
    lists, tuples, sets, numbers, strings, `OrderedDict` and the globals allowed by `add_safe_globals` are
    rebuilt; a file that names anything else raises `pickle.UnpicklingError` and runs nothing.
    `weights_only=False` unpickles anything, which can run arbitrary code: only for files you trust.

    Arguments:
        f: a file path or an object with `read`.
        map_location: a device (or string) to move loaded tensors to; `None` keeps the default device.
        pickle_module: accepted for PyTorch's signature (only with `weights_only=False`).
        weights_only: restrict unpickling to checkpoint data (default True).
        mmap: accepted for PyTorch's signature; files are read into memory.

    Returns:
        The saved object.

    Raises:
        pickle.UnpicklingError: the file names a global that is not allowed.
        RuntimeError: the file is truncated or is not a tapeflow checkpoint.

    Example:
        >>> import io, tapeflow as tp
        >>> buf = io.BytesIO(); tp.save({"x": tp.ones(2)}, buf); _ = buf.seek(0)
        >>> tp.load(buf)["x"]
        tensor([1., 1.])
    """
    safe = weights_only is None or weights_only
    if safe and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if not safe:
        warnings.warn("tapeflow.load(weights_only=False) unpickles arbitrary objects, which can run code from the "
                      "file: use it only for files you trust.", UserWarning, stacklevel=2)
    unpickler = _WeightsUnpickler if safe else (pickle_module or pickle).Unpickler
    if not isinstance(f, (str, os.PathLike)):
        if not hasattr(f, "seek"):  # (an int would open that file descriptor)
            raise AttributeError(f"'{type(f).__name__}' object has no attribute 'seek'. You can only "
                                 f"{_dtype.PREFIX[0]}.load from a file that is seekable. Please pre-load the data into "
                                 "a buffer like io.BytesIO and try to load from it instead.")
        obj = _unpickle(unpickler, f, getattr(f, "name", "the file object"), pickle_load_args)
    else:
        with open(f, "rb") as fh:
            obj = _unpickle(unpickler, fh, os.fspath(f), pickle_load_args)
    if map_location is not None:
        obj = _move(obj, map_location)
    return obj


def _unpickle(unpickler: Callable, fh: IO[bytes], name: str, kwargs: dict) -> Any:
    try:
        return unpickler(fh, **kwargs).load()
    except pickle.UnpicklingError as e:
        if str(e).startswith("Weights only load failed"):
            raise
        raise RuntimeError(f"tapeflow.load: {name} is corrupt or not a tapeflow checkpoint ({e}).") from e
    except (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError, io.UnsupportedOperation) as e:
        raise RuntimeError(f"tapeflow.load: {name} is truncated or corrupt ({type(e).__name__}: {e}). "
                           "Re-create it with tapeflow.save.") from e


def _move(obj, device):
    from ._tensor import Tensor

    if isinstance(obj, Tensor):
        moved = obj.to(device)
        if moved is not obj:
            obj._data = moved._data
        return obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            obj[k] = _move(v, device)
        return obj
    if isinstance(obj, list):
        return [_move(v, device) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_move(v, device) for v in obj)
    return obj
