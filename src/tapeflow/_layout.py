"""Strides and storage offsets, as PyTorch reports them.

tapeflow's data are JAX arrays, so a view holds its values, not a pointer into its base. Its *layout* (the
strides and offset PyTorch's view would have in the base's storage) follows from its view chain: each view
op maps the base's row-major layout as PyTorch's op maps strides. `stride()`, `storage_offset()` and
`is_contiguous()` report it; `view()` refuses the shapes PyTorch cannot view without a copy; `as_strided`
on a view indexes the base's storage, as PyTorch's does.
"""

from __future__ import annotations

import math

__all__ = ["layout", "contiguous_strides", "view_strides"]


def contiguous_strides(shape) -> tuple:
    out, acc = [], 1
    for n in reversed(tuple(shape)):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


def layout(t) -> tuple | None:
    """`(shape, strides, offset)` of `t` in its base's storage (in elements of `t`'s dtype), or None where a
    step of its view chain has no PyTorch stride rule here."""
    chain = t._view if t._base is not None else ()
    if not chain:
        return own_layout(t)
    shape, strides, off = own_layout(t._base)
    shape, strides = list(shape), list(strides)
    for name, params, out in chain:
        step = _STEPS.get(name)
        if step is None:
            return None
        res = step(shape, strides, off, dict(params), out)
        if res is None:
            return None
        shape, strides, off = res
    return tuple(shape), tuple(strides), off


def own_layout(t) -> tuple:
    """The layout of a tensor that views no other: row-major, unless an in-place view op (`t_`,
    `transpose_`, `as_strided_`) rearranged it, as PyTorch's strides then show (`_own_layout`, kept while the
    shape is the one that op gave)."""
    shape = tuple(t._raw.shape)
    own = t.__dict__.get("_own_layout")
    if own is not None and own[0] == shape:
        return own
    return shape, contiguous_strides(shape), 0


def view_strides(shape, strides, new_shape) -> tuple | None:
    """The strides a view of `new_shape` has, or None when the layout cannot be viewed so (PyTorch's rule:
    dimensions are merged or split only within runs that are contiguous with each other)."""
    shape, strides, new_shape = list(shape), list(strides), list(new_shape)
    if not shape:
        return contiguous_strides(new_shape)
    if math.prod(shape) == 0:
        return contiguous_strides(new_shape)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * chunk
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk = strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new)


# -- one function per view op: (shape, strides, offset, params, output index) -> the same, or None -------------
def _reshape(shape, strides, off, p, out):
    new = list(p["shape"])
    if -1 in new:
        known = math.prod(n for n in new if n != -1)
        new[new.index(-1)] = math.prod(shape) // known if known else 0
    s = view_strides(shape, strides, new)
    return None if s is None else (new, list(s), off)


def _permute(shape, strides, off, p, out):
    dims = [d % len(shape) for d in p["dims"]]
    return [shape[d] for d in dims], [strides[d] for d in dims], off


def _transpose(shape, strides, off, p, out):
    a, b = p["dim0"] % len(shape), p["dim1"] % len(shape)
    shape, strides = list(shape), list(strides)
    shape[a], shape[b] = shape[b], shape[a]
    strides[a], strides[b] = strides[b], strides[a]
    return shape, strides, off


def _t(shape, strides, off, p, out):
    if len(shape) < 2:
        return shape, strides, off
    return _transpose(shape, strides, off, {"dim0": 0, "dim1": 1}, out)


def _expand(shape, strides, off, p, out):
    new = list(p["shape"])
    lead = len(new) - len(shape)
    ns = []
    for i, n in enumerate(new):
        if i < lead:
            ns.append(0)
            continue
        old, st = shape[i - lead], strides[i - lead]
        if n == -1:
            new[i] = old
            ns.append(st)
        else:
            ns.append(st if old == n else 0)
    return new, ns, off


def _squeeze(shape, strides, off, p, out):
    dim = p.get("dim")
    if dim is None:
        dims = {i for i, n in enumerate(shape) if n == 1}
    else:
        dims = {d % len(shape) for d in (dim if isinstance(dim, (tuple, list)) else (dim,)) if shape[d % len(shape)] == 1}
    keep = [i for i in range(len(shape)) if i not in dims]
    return [shape[i] for i in keep], [strides[i] for i in keep], off


def _unsqueeze(shape, strides, off, p, out):
    d = p["dim"] % (len(shape) + 1)
    st = strides[d] * shape[d] if d < len(shape) else 1
    return shape[:d] + [1] + shape[d:], strides[:d] + [st] + strides[d:], off


def _select(shape, strides, off, p, out):
    d = p["dim"] % len(shape)
    i = p["index"] % shape[d] if shape[d] else 0
    return shape[:d] + shape[d + 1:], strides[:d] + strides[d + 1:], off + i * strides[d]


def _slice(shape, strides, off, p, out):
    d = p["dim"] % len(shape)
    start, stop, step = slice(p.get("start"), p.get("stop"), p.get("step", 1)).indices(shape[d])
    n = len(range(start, stop, step))
    shape, strides = list(shape), list(strides)
    off += start * strides[d]
    shape[d], strides[d] = n, strides[d] * step
    return shape, strides, off


def _index_basic(shape, strides, off, p, out):
    spec = p["index"]
    used = sum(1 for s in spec if s is not None and s is not Ellipsis)
    ns, nst, d = [], [], 0
    for s in spec:
        if s is Ellipsis:
            for _ in range(len(shape) - used):
                ns.append(shape[d])
                nst.append(strides[d])
                d += 1
        elif s is None:
            ns.append(1)
            nst.append(strides[d] * shape[d] if d < len(shape) else 1)
        elif type(s) is int:
            off += (s % shape[d]) * strides[d]
            d += 1
        else:
            start, stop, step = slice(s[1], s[2], s[3]).indices(shape[d])
            n = len(range(start, stop, step))
            off += start * strides[d]
            ns.append(n)
            nst.append(strides[d] * step)
            d += 1
    ns += shape[d:]
    nst += strides[d:]
    return ns, nst, off


def _diagonal(shape, strides, off, p, out):
    o, a, b = p.get("offset", 0), p.get("dim1", 0) % len(shape), p.get("dim2", 1) % len(shape)
    n = max(min(shape[a], shape[b] - o) if o >= 0 else min(shape[a] + o, shape[b]), 0)
    if n:
        off += o * strides[b] if o >= 0 else -o * strides[a]
    keep = [i for i in range(len(shape)) if i not in (a, b)]
    return [shape[i] for i in keep] + [n], [strides[i] for i in keep] + [strides[a] + strides[b]], off


def _split(shape, strides, off, p, out):
    sizes, d = p["sizes"], p["dim"] % len(shape)
    start = sum(sizes[:out])
    return _slice(shape, strides, off, {"dim": d, "start": start, "stop": start + sizes[out], "step": 1}, None)


def _unbind(shape, strides, off, p, out):
    return _select(shape, strides, off, {"dim": p.get("dim", 0), "index": out}, None)


def _unfold(shape, strides, off, p, out):
    if not shape:
        return [1], [1], off
    d = p["dim"] % len(shape)
    size, step = p["size"], p["step"]
    shape, strides = list(shape), list(strides)
    inner = strides[d]
    shape[d] = (shape[d] - size) // step + 1
    strides[d] *= step
    return shape + [size], strides + [inner], off


def _as_strided(shape, strides, off, p, out):
    if strides != list(contiguous_strides(shape)) or off:  # (only as the first step: on the base's storage)
        return None
    return list(p["size"]), list(p["stride"]), p.get("storage_offset", 0) or 0


def _same(shape, strides, off, p, out):
    return shape, strides, off


def _real(shape, strides, off, p, out, imag=0):
    return shape, [2 * s for s in strides], 2 * off + imag


def _view_as_real(shape, strides, off, p, out):
    return shape + [2], [2 * s for s in strides] + [1], 2 * off


def _view_as_complex(shape, strides, off, p, out):
    if not shape or shape[-1] != 2 or strides[-1] != 1 or off % 2 or any(s % 2 for s in strides[:-1]):
        return None
    return shape[:-1], [s // 2 for s in strides[:-1]], off // 2


def _view_dtype(shape, strides, off, p, out):
    import numpy as np

    a, b = np.dtype(p["src"]).itemsize, np.dtype(p["dtype"]).itemsize
    if a == b:
        return shape, strides, off
    if a > b:  # (PyTorch's view(dtype) checked that the last stride is 1)
        r = a // b
        return shape[:-1] + [shape[-1] * r], [s * r for s in strides[:-1]] + [1], off * r
    r = b // a
    return shape[:-1] + [shape[-1] // r], [s // r for s in strides[:-1]] + [1], off // r


_STEPS = {"reshape": _reshape, "permute": _permute, "transpose": _transpose, "t": _t, "expand": _expand,
          "squeeze": _squeeze, "unsqueeze": _unsqueeze, "select": _select, "slice": _slice,
          "index_basic": _index_basic, "diagonal": _diagonal, "split": _split, "split_even": _split,
          "unbind": _unbind, "unfold": _unfold, "as_strided": _as_strided, "alias": _same, "detach": _same,
          "real": _real, "imag": lambda *a: _real(*a, imag=1), "view_as_real": _view_as_real,
          "view_as_complex": _view_as_complex, "view_dtype": _view_dtype}


def check_memory_format(memory_format, ndim: int) -> None:
    """PyTorch's refusal of a channels-last format for a tensor of another rank (4-D for `channels_last`,
    5-D for `channels_last_3d`); every other format suits every rank."""
    if memory_format is None:
        return
    name = getattr(memory_format, "name", None)
    rank = {"channels_last": 4, "channels_last_3d": 5}.get(name)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
