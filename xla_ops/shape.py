"""Shape ops. Most are views in tapeflow (they alias their input); here they
are plain functions of arrays. `index` parameters use hashable encodings:
slices are `("s", start, stop, step)`."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._op import op, unbroadcast


def decode_index(index):
    """Turn a hashable index encoding back into a NumPy-style index tuple."""
    return tuple(slice(i[1], i[2], i[3]) if type(i) is tuple else i for i in index)


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


# -- views ------------------------------------------------------------------------
reshape = op("reshape", lambda x, shape: jnp.reshape(x, shape), lambda g, ans, x, shape: (g.reshape(x.shape),),
             node="ViewBackward0")
permute = op("permute", lambda x, dims: jnp.transpose(x, dims),
             lambda g, ans, x, dims: (jnp.transpose(g, _inverse(dims)),))
transpose = op("transpose", lambda x, dim0, dim1: jnp.swapaxes(x, dim0, dim1),
               lambda g, ans, x, dim0, dim1: (jnp.swapaxes(g, dim0, dim1),))
t = op("t", lambda x: jnp.swapaxes(x, 0, 1) if x.ndim == 2 else x,
       lambda g, ans, x: (jnp.swapaxes(g, 0, 1) if g.ndim == 2 else g,), node="TBackward0")
expand = op("expand", lambda x, shape: jnp.broadcast_to(x, shape), lambda g, ans, x, shape: (unbroadcast(g, x),))
squeeze = op("squeeze", lambda x, dim=None: jnp.squeeze(x, dim), lambda g, ans, x, dim=None: (g.reshape(x.shape),),
             node="SqueezeBackward1")
unsqueeze = op("unsqueeze", lambda x, dim: jnp.expand_dims(x, dim), lambda g, ans, x, dim: (g.reshape(x.shape),))
select = op("select", lambda x, dim, index: jnp.take(x, index, axis=dim),
            lambda g, ans, x, dim, index: (jnp.zeros(x.shape, g.dtype).at[(slice(None),) * dim + (index,)].set(g),))
slice_ = op("slice", lambda x, dim, start, stop, step=1: x[(slice(None),) * dim + (slice(start, stop, step),)],
            lambda g, ans, x, dim, start, stop, step=1:
            (jnp.zeros(x.shape, g.dtype).at[(slice(None),) * dim + (slice(start, stop, step),)].set(g),))


def _linear_vjp(fwd):
    """VJP of a linear view from the input's shape alone: it saves nothing, so writing through the
    view (which bumps the base's version) never invalidates the graph behind it."""
    def vjp(g, ans, x, **params):
        _, pullback = jax.vjp(lambda z: fwd(z, **params), jnp.zeros(x.shape, g.dtype))
        return pullback(g)
    return vjp


def _index_basic(x, index):
    return x[decode_index(index)]


def _diagonal(x, offset=0, dim1=0, dim2=1):
    return jnp.diagonal(x, offset, dim1, dim2)


index_basic = op("index_basic", _index_basic, _linear_vjp(_index_basic), node="SliceBackward0")
diagonal = op("diagonal", _diagonal, _linear_vjp(_diagonal))
alias = op("alias", lambda x: x, lambda g, ans, x: (g,), node="AliasBackward0")
# What `detach()` and `.data` are to JAX when a Tensor holds a tracer: a view with no derivative.
detach = op("detach", jax.lax.stop_gradient, differentiable=False, node="DetachBackward0")


def _bitcast(x, dtype, src=None):
    """`x`'s bytes read as `dtype` (PyTorch's `view(dtype)`): the last dimension grows or shrinks by the ratio of
    the element sizes (a 0-d `x` keeps its shape: only equal sizes are allowed there). XLA bitcasts neither
    bools nor complex numbers: those go through `uint8` and (real, imaginary) pairs. (`src`, `x`'s dtype, is for
    the view's strides.)"""
    dst = jnp.dtype(dtype)
    if x.dtype == dst:
        return x
    scalar = x.ndim == 0
    if scalar:
        x = x[None]
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.uint8)
    elif jnp.iscomplexobj(x):
        x = jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1).reshape(*x.shape[:-1], 2 * x.shape[-1])
    via = jnp.dtype(jnp.uint8) if dst == jnp.bool_ else jnp.finfo(dst).dtype if jnp.issubdtype(dst, jnp.complexfloating) \
        else dst
    a, b = x.dtype.itemsize, via.itemsize
    if a > b:
        x = jax.lax.bitcast_convert_type(x, via).reshape(*x.shape[:-1], x.shape[-1] * (a // b))
    elif a < b:
        x = jax.lax.bitcast_convert_type(x.reshape(*x.shape[:-1], x.shape[-1] * a // b, b // a), via)
    else:
        x = jax.lax.bitcast_convert_type(x, via)
    if dst == jnp.bool_:
        x = x != 0
    elif via != dst:
        x = jax.lax.complex(x[..., 0::2], x[..., 1::2])
    return x[0] if scalar else x


# PyTorch's `view(dtype)`: the same bytes under another dtype; its output never requires grad.
view_dtype = op("view_dtype", _bitcast, differentiable=False, node="ViewBackward0")


def _split(x, sizes, dim):
    out, start = [], 0
    for n in sizes:
        out.append(x[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return tuple(out)


def _split_vjp(g, ans, x, sizes, dim):
    return (jnp.concatenate(g, axis=dim),)


split = op("split", _split, _split_vjp, node="SplitWithSizesBackward0")
# `split(x, n)` and `chunk`: the same pieces, under PyTorch's node for an integer split size.
split_even = op("split_even", _split, _split_vjp, node="SplitBackward0")
unbind = op("unbind", lambda x, dim=0: tuple(jnp.moveaxis(x, dim, 0)),
            lambda g, ans, x, dim=0: (jnp.stack(g, axis=dim),))



def apply_chain(x, chain):
    """Apply a view chain `((op_name, params, out_index), ...)` to `x`."""
    from ._op import TABLE

    for name, params, i in chain:
        x = TABLE[name].fwd(x, **dict(params))
        if i is not None:
            x = x[i]
    return x


#: Views between complex and real numbers: one element of the view is a part of one element of the base.
_PART_VIEWS = frozenset({"real", "imag", "view_as_real", "view_as_complex"})


def _view_scatter(base, new, chain):
    detached = any(step[0] == "detach" for step in chain)
    if detached:
        chain = tuple(step for step in chain if step[0] != "detach")
    for k in range(len(chain) - 1, -1, -1):
        if chain[k][0] == "view_dtype":
            return _bitcast_scatter(base, new, chain, k)
    if any(step[0] in _PART_VIEWS for step in chain):
        return _part_scatter(base, new, chain, detached)
    # Where each element of the view lives in `base`: the chain applied to an iota.
    where = apply_chain(jnp.arange(base.size).reshape(base.shape), chain)
    new = jnp.broadcast_to(jnp.asarray(new).astype(base.dtype), where.shape)
    if detached:
        # A write through `detach()` / `.data` changes values, not derivatives (as on the tape).
        old = apply_chain(base, chain)
        new = old + jax.lax.stop_gradient(new - old)
    return base.ravel().at[where.ravel()].set(new.ravel()).reshape(base.shape)


def _bitcast_scatter(base, new, chain, k):
    """Write `new` through a view chain whose step `k` (its last) reinterprets bytes (`view_dtype`): write into
    that reinterpreted view, read the bytes back in the dtype before it, and write those into `base`. Bytes
    carry no derivative (PyTorch's `view(dtype)` is not differentiable)."""
    before = chain[:k]
    mid = jax.lax.stop_gradient(apply_chain(base, before))
    seen = _bitcast(mid, **dict(chain[k][1]))
    if k + 1 < len(chain):
        seen = _view_scatter(seen, new, chain[k + 1:])
    else:
        seen = jnp.broadcast_to(jnp.asarray(new).astype(seen.dtype), seen.shape)
    back = _bitcast(jax.lax.stop_gradient(seen), mid.dtype).reshape(mid.shape)
    return _view_scatter(base, back, before) if before else back


def _part_scatter(base, new, chain, detached):
    """Write `new` through a view chain that selects real or imaginary parts.

    Such a view is a real-linear map `L` that picks coordinates of `base`; the write is
    `base + L*(new - L(base))`, with `L*` its adjoint (JAX's transpose, conjugated on both sides).
    """
    old, pullback = jax.vjp(lambda b: apply_chain(b, chain), base)
    new = jnp.broadcast_to(jnp.asarray(new).astype(old.dtype), old.shape)
    delta = new - old
    if detached:
        delta = jax.lax.stop_gradient(delta)
    (back,) = pullback(jnp.conj(delta) if jnp.iscomplexobj(delta) else delta)
    back = jnp.conj(back) if jnp.iscomplexobj(back) else back
    return base + back.astype(base.dtype)


view_apply = op("view_apply", apply_chain, nin=1, node="AsStridedBackward0")
view_scatter = op("view_scatter", _view_scatter, nin=2, node="CopySlices", linear="separable")
copy = op("copy", lambda x, src: jnp.broadcast_to(src, x.shape).astype(x.dtype),
          lambda g, ans, x, src: (jnp.zeros_like(g), unbroadcast(g, src)), node="CopyBackwards")

# -- copies ------------------------------------------------------------------------


def _legacy_empty(x, xs) -> bool:
    """PyTorch's legacy rule: a 1-D tensor with no elements joins a concatenation of tensors of any rank, adding
    nothing to it but its dtype."""
    return x.ndim == 1 and x.shape[0] == 0 and any(y.ndim != 1 for y in xs)


def _cat(*xs, dim=0):
    kept = [x for x in xs if not _legacy_empty(x, xs)]
    if len(kept) == len(xs):
        return jnp.concatenate(xs, axis=dim)
    dtype = jnp.result_type(*xs)
    return jnp.concatenate([x.astype(dtype) for x in kept], axis=dim)


def _cat_vjp(g, ans, *xs, dim):
    kept = [x for x in xs if not _legacy_empty(x, xs)]
    parts = iter(_split(g, [x.shape[dim] for x in kept], dim))
    return tuple(jnp.zeros(x.shape, g.dtype) if _legacy_empty(x, xs) else next(parts) for x in xs)


cat = op("cat", _cat, _cat_vjp, node="CatBackward0")
stack = op("stack", lambda *xs, dim=0: jnp.stack(xs, axis=dim),
           lambda g, ans, *xs, dim=0: tuple(jnp.moveaxis(g, dim, 0)))
flip = op("flip", lambda x, dims: jnp.flip(x, dims), lambda g, ans, x, dims: (jnp.flip(g, dims),))
roll = op("roll", lambda x, shifts, dims=None: jnp.roll(x, shifts, dims),
          lambda g, ans, x, shifts, dims=None: (jnp.roll(g, tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts, dims),))
repeat = op("repeat", lambda x, repeats: jnp.tile(x, repeats), linear=True)
# `repeats` is static (an int or a tuple, hashable for the compile cache); JAX wants an array for the tuple form
# and the output length (their sum) to size the result.
repeat_interleave = op("repeat_interleave", lambda x, repeats, dim=None: jnp.repeat(
    x, jnp.asarray(repeats) if isinstance(repeats, tuple) else repeats, axis=dim,
    total_repeat_length=sum(repeats) if isinstance(repeats, tuple) else None), linear=True)
tril = op("tril", lambda x, diagonal=0: jnp.tril(x, diagonal), lambda g, ans, x, diagonal=0: (jnp.tril(g, diagonal),))
triu = op("triu", lambda x, diagonal=0: jnp.triu(x, diagonal), lambda g, ans, x, diagonal=0: (jnp.triu(g, diagonal),))
pad = op("pad", lambda x, widths, mode="constant", value=0.0:
         jnp.pad(x, widths, mode=mode, constant_values=value) if mode == "constant" else jnp.pad(x, widths, mode=mode),
         node="ConstantPadNdBackward0", linear=True)


# -- writes through a view, into a copy: slice_scatter, select_scatter, diagonal_scatter ------------------------
def _set_through(view_fn):
    """`x` with `src` written where `view_fn` reads (found by applying it to the positions of `x`)."""
    def fwd(x, src, **params):
        where = view_fn(jnp.arange(x.size).reshape(x.shape), **params)
        new = jnp.broadcast_to(jnp.asarray(src).astype(x.dtype), where.shape)
        return x.reshape(-1).at[where.reshape(-1)].set(new.reshape(-1)).reshape(x.shape)
    return fwd


def _slice(x, dim, start, stop, step=1):
    return x[(slice(None),) * dim + (slice(start, stop, step),)]


def _set_through_vjp(view_fn):
    """`g` with the written positions cleared, for `x`; what the view reads of `g`, for `src`."""
    def vjp(g, ans, x, src, **params):
        return _set_through(view_fn)(g, jnp.zeros((), g.dtype), **params), view_fn(g, **params).reshape(src.shape)
    return vjp


def _select(x, dim, index):
    return jnp.take(x, index, axis=dim)


slice_scatter = op("slice_scatter", _set_through(_slice), _set_through_vjp(_slice), linear=True)
select_scatter = op("select_scatter", _set_through(_select), _set_through_vjp(_select), linear=True)
diagonal_scatter = op("diagonal_scatter", _set_through(_diagonal), _set_through_vjp(_diagonal), linear=True)


# -- strided views: unfold, as_strided -------------------------------------------------------------------------
def _unfold(x, dim, size, step):
    """Windows of `size` elements every `step` along `dim`, as a new last dimension."""
    if x.ndim == 0:
        return x.reshape(1)
    count = (x.shape[dim] - size) // step + 1
    idx = jnp.arange(count)[:, None] * step + jnp.arange(size)[None, :]
    return jnp.moveaxis(jnp.take(x, idx, axis=dim), dim + 1, -1)


def _as_strided(x, size, stride, storage_offset=0):
    """Elements of the flattened `x` at `storage_offset + sum(i_k * stride_k)` for each index `(i_0, ...)`."""
    where = jnp.asarray(storage_offset, jnp.int64)
    for k, (n, s) in enumerate(zip(size, stride)):
        where = where + (jnp.arange(n, dtype=jnp.int64) * s).reshape((n,) + (1,) * (len(size) - k - 1))
    return x.reshape(-1)[jnp.broadcast_to(where, size)]


# Both gather: an element read by several windows gets the sum of their gradients (a scatter-add).
unfold = op("unfold", _unfold, _linear_vjp(_unfold), node="UnfoldBackward0")
as_strided = op("as_strided", _as_strided, _linear_vjp(_as_strided), node="AsStridedBackward0")
