"""Shape ops: views that alias their input, joins and splits, and copies that rearrange."""

from __future__ import annotations

import builtins
import itertools
import math

import numpy as np

import xla_ops as X

from .. import _dtype, _layout
from .._dispatch import dispatch, rename_node, view
from .._tensor import Tensor, as_tensor
from ._args import _dim, _dims, _t
from ._dtype_rules import _kernel

__all__ = [
    "adjoint", "broadcast_tensors", "broadcast_to", "cat", "chunk", "concat", "concatenate", "contiguous",
    "diag", "diagonal", "expand", "expand_as", "flatten", "flip", "fliplr", "flipud", "hstack", "moveaxis",
    "movedim", "narrow", "permute", "ravel", "repeat", "repeat_interleave", "reshape", "roll", "select",
    "split", "squeeze", "stack", "swapaxes", "swapdims", "t", "tensor_split", "tile", "transpose", "tril",
    "triu", "unbind", "unflatten", "unsqueeze", "view_as", "vstack",
]


# -- shape ops (views alias their input) --------------------------------------------------------------------
def _infer_shape(shape, numel):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = math.prod([s for s in shape if s != -1])
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def reshape(input, *shape):
    """The same data with a new shape (a view); one dimension may be -1.

    Example:
        >>> tp.reshape(tp.arange(6), (2, -1))
        tensor([[0, 1, 2],
                [3, 4, 5]])
    """
    s = _infer_shape(shape, input._raw.size)
    if (input._view and input._base is not None) or "_own_layout" in input.__dict__:
        lay = _layout.layout(input)
        if lay is not None and _layout.view_strides(lay[0], lay[1], s) is None:
            # PyTorch copies a layout that no view can give the new shape (a transposed tensor flattened): the
            # result shares nothing, so writing into it neither reaches `input` nor bumps its version.
            return dispatch(X.reshape, (input.clone(),), (("shape", s),))
    return view(input, X.reshape, (("shape", s),))


def view_as(input, other):
    """`input` viewed with the shape of `other` (`input.view(other.shape)`).

    Example:
        >>> tp.view_as(tp.arange(4), tp.zeros(2, 2))
        tensor([[0, 1],
                [2, 3]])
    """
    return input.view(tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    """Dimensions `start_dim` to `end_dim` merged into one.

    Example:
        >>> tp.flatten(tp.zeros(2, 3, 4), start_dim=1).shape
        tapeflow.Size([2, 12])
    """
    nd = input.ndim
    if nd == 0:
        return reshape(input, 1)
    s, e = _dim(start_dim, nd), _dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input._raw.shape
    return reshape(input, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


def unflatten(input, dim, sizes):
    """Dimension `dim` split into `sizes`.

    Example:
        >>> tp.unflatten(tp.zeros(2, 12), 1, (3, 4)).shape
        tapeflow.Size([2, 3, 4])
    """
    d = _dim(dim, input.ndim)
    shp, sizes = input._raw.shape, tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes and known == 0 and shp[d] == 0:
        raise RuntimeError(f"unflatten got an unexpected error:\ncannot reshape tensor of 0 elements into shape "
                           f"{list(sizes)} because the unspecified dimension size -1 can be any value and is ambiguous")
    if (shp[d] % known if -1 in sizes and known else known != shp[d]):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({shp[d]}) in the input tensor")
    return reshape(input, shp[:d] + sizes + shp[d + 1:])


def ravel(input):
    """`input` flattened to one dimension.

    Example:
        >>> tp.ravel(tp.tensor([[1, 2], [3, 4]]))
        tensor([1, 2, 3, 4])
    """
    return reshape(input, -1)


def permute(input, *dims):
    """Dimensions reordered as `dims` (a view).

    Example:
        >>> tp.permute(tp.zeros(2, 3, 4), (2, 0, 1)).shape
        tapeflow.Size([4, 2, 3])
    """
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    nd = input.ndim
    d = tuple(_dim(i, nd) for i in dims)
    if sorted(d) != list(range(nd)):
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
                           f"len(dims) = {len(dims)}" if len(d) != nd else "permute(): duplicate dims are not allowed.")
    return view(input, X.permute, (("dims", d),))


def transpose(input, dim0, dim1):
    """Two dimensions exchanged (also `swapdims`, `transpose`).

    Example:
        >>> tp.swapaxes(tp.zeros(2, 3, 4), 0, 2).shape
        tapeflow.Size([4, 3, 2])
    """
    nd = input.ndim
    d0, d1 = _dim(dim0, nd), _dim(dim1, nd)
    if nd == 0:  # (dims 0 / -1 of a 0-d tensor: nothing to exchange)
        return rename_node(view(input, X.alias), "TransposeBackward0")
    return view(input, X.transpose, (("dim0", d0), ("dim1", d1)))


swapaxes = swapdims = transpose


def t(input):
    """The transpose of a tensor with at most 2 dimensions (a view).

    Example:
        >>> tp.t(tp.tensor([[1, 2, 3]]))
        tensor([[1],
                [2],
                [3]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return view(input, X.t)


def adjoint(input):
    """The conjugate transpose of the last two dimensions (a view).

    Example:
        >>> tp.adjoint(tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor([[1., 3.],
                [2., 4.]])
    """
    return transpose(input, -2, -1)


def movedim(input, source, destination):
    """Dimensions `source` moved to positions `destination`, the others keeping their order (a view).

    Example:
        >>> tp.movedim(tp.zeros(2, 3, 4), 0, -1).shape
        tapeflow.Size([3, 4, 2])
    """
    """`movedim` under NumPy's name.

    Example:
        >>> tp.moveaxis(tp.zeros(2, 3, 4), 0, -1).shape
        tapeflow.Size([3, 4, 2])
    """
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    nd = input.ndim
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    for name, dims in (("source", src), ("destination", dst)):
        if len({_dim(x, nd) for x in dims}) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    if nd == 0:
        return permute(input, ())
    perm = [i for i in range(nd) if i not in [_dim(s, nd) for s in src]]
    for d, s in sorted(zip([_dim(d, nd) for d in dst], [_dim(s, nd) for s in src])):
        perm.insert(d, s)
    return permute(input, perm)


moveaxis = movedim


def expand(input, *sizes):
    """Broadcast to `sizes` (a view; -1 keeps a dimension).

    Example:
        >>> tp.expand(tp.tensor([[1.0], [2.0]]), 2, 3)
        tensor([[1., 1., 1.],
                [2., 2., 2.]])
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    shp = input._raw.shape
    lead = len(sizes) - len(shp)
    if lead < 0:
        raise RuntimeError(f"expand({input.type()}{{{list(shp)}}}, size={list(sizes)}): the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(shp)})")
    new = tuple(shp[i - lead] if s == -1 and i >= lead else int(s) for i, s in enumerate(sizes))
    for i, n in enumerate(shp):
        if n != 1 and n != new[i + lead]:
            raise RuntimeError(f"The expanded size of the tensor ({new[i + lead]}) must match the existing size ({n}) "
                               f"at non-singleton dimension {i + lead}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shp)}")
    return view(input, X.expand, (("shape", new),))


def expand_as(input, other):
    """`input` expanded to the shape of `other` (a view).

    Example:
        >>> tp.expand_as(tp.tensor([1.0, 2.0]), tp.zeros(3, 2)).shape
        tapeflow.Size([3, 2])
    """
    return expand(input, tuple(other.shape))


def broadcast_to(input, shape):
    """`input` expanded to `shape` by broadcasting (a view).

    Example:
        >>> tp.broadcast_to(tp.tensor([1.0, 2.0]), (2, 2))
        tensor([[1., 2.],
                [1., 2.]])
    """
    return expand(input, tuple(shape))


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape.

    Example:
        >>> a, b = tp.broadcast_tensors(tp.ones(2, 1), tp.ones(3))
        >>> a.shape, b.shape
        (tapeflow.Size([2, 3]), tapeflow.Size([2, 3]))
    """
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def squeeze(input, dim=None):
    """Dimensions of size 1 removed (all of them, or those in `dim`).

    Example:
        >>> tp.squeeze(tp.zeros(1, 3, 1)).shape
        tapeflow.Size([3])
        >>> tp.squeeze(tp.zeros(1, 3, 1), 0).shape
        tapeflow.Size([3, 1])
    """
    if dim is None:
        return rename_node(view(input, X.squeeze, ()), "SqueezeBackward0")
    name = "SqueezeBackward2" if isinstance(dim, (tuple, list)) else "SqueezeBackward1"  # (PyTorch's overloads)
    dims = _dims(dim, input.ndim)
    dims = tuple(d for d in dims if input._raw.shape and input._raw.shape[d] == 1)
    if not dims:
        return rename_node(view(input, X.alias), name)
    return rename_node(view(input, X.squeeze, (("dim", dims),)), name)


def unsqueeze(input, dim):
    """A new dimension of size 1 inserted at `dim` (a view).

    Example:
        >>> tp.unsqueeze(tp.tensor([1, 2]), 1)
        tensor([[1],
                [2]])
    """
    return view(input, X.unsqueeze, (("dim", _dim(dim, input.ndim + 1)),))


def narrow(input, dim, start, length):
    """The slice `start:start + length` along `dim` (a view).

    Example:
        >>> tp.narrow(tp.arange(6), 0, 2, 3)
        tensor([2, 3, 4])
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input.ndim)
    start, n = int(start), input._raw.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start + int(length) > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({int(length)}) exceeds dimension size ({n}).")
    return view(input, X.slice_, (("dim", d), ("start", start), ("stop", start + int(length)), ("step", 1)))


def select(input, dim, index):
    """The slice at `index` along `dim`, with that dimension removed (a view).

    Example:
        >>> tp.select(tp.tensor([[1, 2], [3, 4]]), 1, 0)
        tensor([1, 3])
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input.ndim)
    n = input._raw.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input._raw.shape)} at "
                         f"dimension {d}")
    return _select(input, d, index, n)


def _select(input, d, index, n):
    return view(input, X.select, (("dim", d), ("index", int(index) % n)))


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal (offset by `offset`) of the `dim1`, `dim2` planes, as the last dimension (a view).

    Example:
        >>> tp.diagonal(tp.arange(9.0).reshape(3, 3), offset=1)
        tensor([1., 5.])
    """
    nd = input.ndim
    return view(input, X.diagonal, (("offset", offset), ("dim1", _dim(dim1, nd)), ("dim2", _dim(dim2, nd))))


def diag(input, diagonal=0):
    """A 1-D tensor gives a square matrix with it on the `diagonal`-th diagonal; a 2-D tensor gives that diagonal.

    Example:
        >>> tp.diag(tp.tensor([1.0, 2.0]))
        tensor([[1., 0.],
                [0., 2.]])
        >>> tp.diag(tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor([1., 4.])
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    if input.ndim == 1:
        n = input.shape[0] + builtins.abs(diagonal)
        idx = np.arange(input.shape[0])
        rows, cols = (idx, idx + diagonal) if diagonal >= 0 else (idx - diagonal, idx)
        from .._factories import zeros

        out = zeros(n, n, dtype=input.dtype)
        return index_put(out, (as_tensor(rows), as_tensor(cols)), input)
    return globals()["diagonal"](input, diagonal)


def split(tensor, split_size_or_sections, dim=0):
    """Split into chunks of `split_size` (or the given section sizes) along `dim` (views).

    Example:
        >>> tp.split(tp.arange(5), [2, 3])
        (tensor([0, 1]), tensor([2, 3, 4]))
    """
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _dim(dim, tensor.ndim)
    n = tensor._raw.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        if s == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = tuple([s] * (n // s) + ([n % s] if n % s else [])) if s > 0 else (n,)
        return view(tensor, X.split_even, (("sizes", sizes), ("dim", d)))
    else:
        sizes = tuple(int(s) for s in split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={list(sizes)}")
    return view(tensor, X.split, (("sizes", sizes), ("dim", d)))


def chunk(input, chunks, dim=0):
    """Split into `chunks` pieces of (nearly) equal size along `dim`; views.

    Example:
        >>> tp.chunk(tp.arange(5), 2)
        (tensor([0, 1, 2]), tensor([3, 4]))
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    n = input._raw.shape[_dim(dim, input.ndim)]
    size = -(-n // chunks) if chunks > 0 else n
    return split(input, builtins.max(size, 1), dim)


def tensor_split(input, indices_or_sections, dim=0):
    """Split into `indices_or_sections` pieces along `dim`: a count (the first pieces one larger) or split points.

    Example:
        >>> tp.tensor_split(tp.arange(7), 3)
        (tensor([0, 1, 2]), tensor([3, 4]), tensor([5, 6]))
        >>> tp.tensor_split(tp.arange(7), [1, 5])
        (tensor([0]), tensor([1, 2, 3, 4]), tensor([5, 6]))
    """
    sections = indices_or_sections
    if isinstance(sections, Tensor):
        if sections.dtype.name != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_dtype.SCALAR_NAMES[sections.dtype.name]}")
        if sections.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {sections.ndim} dims")
        sections = int(sections.item()) if sections.ndim == 0 else [int(i) for i in sections.tolist()]
    d = _dim(dim, input.ndim)
    n = input._raw.shape[d]
    if not isinstance(sections, (list, tuple)):
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        q, r = divmod(n, sections)
        sections = list(itertools.accumulate([q + 1] * r + [q] * (sections - r)))[:-1]
    # Each piece is a slice of its own (PyTorch's SliceBackward0), not an output of one multi-output view.
    bounds = [builtins.min(builtins.max(int(i) + (n if i < 0 else 0), 0), n) for i in sections]
    return tuple(narrow(input, d, lo, builtins.max(hi - lo, 0)) for lo, hi in zip([0, *bounds], [*bounds, n]))


def unbind(input, dim=0):
    """The slices along `dim`, as a tuple of views.

    Example:
        >>> tp.unbind(tp.tensor([[1, 2], [3, 4]]))
        (tensor([1, 2]), tensor([3, 4]))
    """
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return view(input, X.unbind, (("dim", _dim(dim, input.ndim)),))


def cat(tensors, dim=0):
    """Concatenate along an existing dimension.

    Example:
        >>> tp.cat([tp.ones(1, 2), tp.zeros(2, 2)], dim=0)
        tensor([[1., 1.],
                [0., 0.],
                [0., 0.]])
    """
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise ValueError(f"{_dtype.PREFIX[0]}.cat(): expected a non-empty list of Tensors")
    # (a 1-D tensor without elements joins tensors of any rank and adds nothing but its dtype: PyTorch's legacy rule)
    legacy = [x.ndim == 1 and x.shape[0] == 0 for x in tensors]
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    ref = next((x for x, e in zip(tensors, legacy) if not e and x.ndim > 0), tensors[0])
    d = _dim(dim, ref.ndim)
    for i, x in enumerate(tensors):
        if legacy[i]:
            continue
        if x.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
        for j, (a, b) in enumerate(zip(ref.shape, x.shape)):
            if a != b and j != d:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                   f"size {b} for tensor number {i} in the list.")
    return dispatch(X.cat, tuple(tensors), (("dim", d),))


concat = concatenate = cat


def stack(tensors, dim=0):
    """Stack along a new dimension.

    Example:
        >>> tp.stack([tp.tensor([1, 2]), tp.tensor([3, 4])], dim=1)
        tensor([[1, 3],
                [2, 4]])
    """
    tensors = [_t(x) for x in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(x.shape)} at entry {i}")
    return dispatch(X.stack, tuple(tensors), (("dim", _dim(dim, tensors[0].ndim + 1)),))


def hstack(tensors):
    """Concatenation along the second dimension (the first for 1-D tensors).

    Example:
        >>> tp.hstack([tp.tensor([1, 2]), tp.tensor([3])])
        tensor([1, 2, 3])
    """
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    tensors = [t.reshape(1) if t.ndim == 0 else t for t in tensors]  # (as `atleast_1d`)
    return cat(tensors, 1 if tensors[0].ndim > 1 else 0)


def vstack(tensors):
    """Concatenation along the first dimension (1-D tensors become rows).

    Example:
        >>> tp.vstack([tp.tensor([1, 2]), tp.tensor([3, 4])])
        tensor([[1, 2],
                [3, 4]])
    """
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)  # (as `atleast_2d`)


def flip(input, *dims_, dims=None):
    """Elements reversed along each of `dims` (a sequence, or several ints as `x.flip(0, 1)`).

    Example:
        >>> tp.flip(tp.tensor([[1, 2], [3, 4]]), dims=(1,))
        tensor([[2, 1],
                [4, 3]])
    """
    if dims is None:
        if not dims_:
            raise TypeError('flip() missing 1 required positional arguments: "dims"')
        dims = dims_[0] if len(dims_) == 1 else dims_
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    ds = _dims(dims, input.ndim) or ()
    return dispatch(X.flip, (input,), (("dims", ds if input.ndim else ()),))


def fliplr(input):
    """Columns reversed (`flip` along dimension 1).

    Example:
        >>> tp.fliplr(tp.tensor([[1, 2], [3, 4]]))
        tensor([[2, 1],
                [4, 3]])
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    """Rows reversed (`flip` along dimension 0).

    Example:
        >>> tp.flipud(tp.tensor([[1, 2], [3, 4]]))
        tensor([[3, 4],
                [1, 2]])
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def roll(input, shifts, dims=None):
    """Elements shifted by `shifts` along `dims`, wrapping around.

    Example:
        >>> tp.roll(tp.tensor([1, 2, 3, 4]), 1)
        tensor([4, 1, 2, 3])
    """
    if dims is None:
        one = shifts[0] if isinstance(shifts, (list, tuple)) and len(shifts) == 1 else shifts
        if isinstance(one, (list, tuple)):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(one)}, dims:0")
        if input.ndim == 0:
            return roll(input.reshape(-1), one, 0).reshape(input.shape)
        return dispatch(X.roll, (input,), (("shifts", int(one)), ("dims", None)))  # (rolls the flattened input)
    n_shifts = len(shifts) if isinstance(shifts, (list, tuple)) else 1
    n_dims = len(dims) if isinstance(dims, (list, tuple)) else 1
    if n_shifts != n_dims:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {n_shifts}, dims:{n_dims}")
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
    if input.ndim == 0:
        first = dims[0] if isinstance(dims, (list, tuple)) else dims
        raise IndexError(f"Dimension specified as {first} but tensor has no dimensions")
    dims = tuple(_dim(d, input.ndim) for d in dims) if isinstance(dims, (list, tuple)) else _dim(dims, input.ndim)
    return dispatch(X.roll, (input,), (("shifts", shifts), ("dims", dims)))


def repeat(input, *sizes):
    """`input` tiled `repeats` times along each dimension (as `Tensor.repeat`).

    Example:
        >>> tp.repeat(tp.tensor([1, 2]), 2, 2)
        tensor([[1, 2, 1, 2],
                [1, 2, 1, 2]])
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = input.reshape((1,) * (len(sizes) - input.ndim) + tuple(input.shape))
    shape = [n * int(r) for n, r in zip(x.shape, sizes)]
    bad = next((n for n in shape if n < 0), None)
    if bad is not None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    return dispatch(X.repeat, (x,), (("repeats", tuple(int(s) for s in sizes)),))


def tile(input, dims):
    """`input` repeated along each dimension as `dims` says (leading 1s added to the shorter one).

    Example:
        >>> tp.tile(tp.tensor([1, 2]), (2,))
        tensor([1, 2, 1, 2])
    """
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element repeated `repeats` times along `dim` (flattened when `dim` is None).

    Example:
        >>> tp.repeat_interleave(tp.tensor([1, 2]), 2)
        tensor([1, 1, 2, 2])
    """
    if repeats is None:  # (one argument, the counts: each index repeated by its count)
        from .._factories import arange

        counts = _t(input)
        if counts.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return repeat_interleave(arange(counts.numel()), counts.reshape(-1), 0, output_size=output_size)
    d = None if dim is None else _dim(dim, input.ndim)
    n = input.numel() if d is None else input.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.dtype.is_floating_point or repeats.dtype.is_complex:
            raise _kernel("repeat_interleave_cpu")(repeats.dtype.name)
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        counts = repeats.tolist()
        if repeats.ndim == 1 and len(counts) != 1:  # (one count, 0-d or not, repeats every element)
            if len(counts) != n:
                raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                                   f"{len(counts)} and input.size({d or 0}) = {n}")
            if builtins.min(counts, default=0) < 0:
                raise RuntimeError("repeats can not be negative")
            if output_size is not None and output_size != builtins.sum(counts):
                raise RuntimeError("allocated size does not match required size")
            repeats = tuple(counts)
        else:
            repeats = int(counts[0] if repeats.ndim else counts)
    if type(repeats) is not tuple and output_size is not None and output_size != repeats * n:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {repeats * n} but got {output_size}")
    return dispatch(X.repeat_interleave, (input,), (("repeats", repeats), ("dim", d)))


def tril(input, diagonal=0):
    """The lower triangle (`diagonal=0`: on and below the main diagonal), zeros elsewhere.

    Example:
        >>> tp.tril(tp.ones(3, 3))
        tensor([[1., 0., 0.],
                [1., 1., 0.],
                [1., 1., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return dispatch(X.tril, (input,), (("diagonal", diagonal),))


def triu(input, diagonal=0):
    """The upper triangle (`diagonal=0`: on and above the main diagonal), zeros elsewhere.

    Example:
        >>> tp.triu(tp.ones(3, 3), diagonal=1)
        tensor([[0., 1., 1.],
                [0., 0., 1.],
                [0., 0., 0.]])
    """
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return dispatch(X.triu, (input,), (("diagonal", diagonal),))


def contiguous(input, memory_format=None):
    """`input` itself when its layout is row-major (see `Tensor.is_contiguous`), else a row-major copy (no view
    of `input`), as PyTorch. A channels-last request returns `input` (the values are the same; tapeflow's own
    copies are row-major).

    Example:
        >>> x = tp.ones(2, 3)
        >>> tp.contiguous(x) is x, tp.contiguous(x.t()) is x.t(), tp.contiguous(x.t()).is_contiguous()
        (True, False, True)
    """
    if getattr(memory_format, "name", None) in ("channels_last", "channels_last_3d"):
        _layout.check_memory_format(memory_format, input.ndim)
        return input
    if input.is_contiguous():
        return input
    return input.clone()


# Sibling modules import each other; importing at the end lets every name above exist first.
from .index import index_put  # noqa: E402
