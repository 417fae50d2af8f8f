"""`tapeflow.save` / `tapeflow.load`: pickle tensors, state dicts and whole objects.

Tensors pickle as NumPy arrays plus their `requires_grad` flag (see
`Tensor.__reduce_ex__`), so a file holds no JAX device buffers and loads on
any backend.
"""

from __future__ import annotations

import os
import pickle
from typing import IO, Any

__all__ = ["save", "load"]


def save(obj: Any, f: str | os.PathLike | IO[bytes], pickle_protocol: int = pickle.HIGHEST_PROTOCOL) -> None:
    """Write `obj` (a tensor, a `state_dict()`, any picklable object) to a path or binary file.

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
    if hasattr(f, "write"):
        pickle.dump(obj, f, protocol=pickle_protocol)
        return
    with open(f, "wb") as fh:
        pickle.dump(obj, fh, protocol=pickle_protocol)


def load(f: str | os.PathLike | IO[bytes], map_location=None, weights_only: bool = False) -> Any:
    """Read an object written by `save`.

    Only load files you trust: unpickling can run arbitrary code.

    Arguments:
        f: a file path or an object with `read`.
        map_location: a device (or string) to move loaded tensors to; `None` keeps the default device.
        weights_only: accepted for compatibility with PyTorch's signature; loading always unpickles.

    Returns:
        The saved object.

    Example:
        >>> import io, tapeflow as tp
        >>> buf = io.BytesIO(); tp.save({"x": tp.ones(2)}, buf); _ = buf.seek(0)
        >>> tp.load(buf)["x"]
        tensor([1., 1.])
    """
    if hasattr(f, "read"):
        obj = pickle.load(f)
    else:
        with open(f, "rb") as fh:
            obj = pickle.load(fh)
    if map_location is not None:
        obj = _move(obj, map_location)
    return obj


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
