"""Sharding tensors over devices (XLA SPMD) with `jax.sharding`.

A Tensor can hold a sharded `jax.Array`. Every op is a `jax.jit` function,
so it runs SPMD on sharded inputs and its result carries the sharding XLA
chooses; `tp.compile` compiles a whole step the same way. Data parallelism
is therefore: replicate the parameters, shard the batch along its first
dimension, and let XLA insert the gradient all-reduce.

Example:
    >>> import jax, tapeflow as tp
    >>> mesh = tp.distributed.make_mesh((len(jax.devices()),), ("data",))
    >>> x = tp.distributed.shard(tp.ones(len(jax.devices()) * 2, 3), mesh, ("data",))
    >>> tuple(x.sharding.spec)
    ('data',)
"""

from __future__ import annotations

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import xla_ops

from . import _dispatch
from ._tensor import Tensor

__all__ = ["make_mesh", "shard", "replicate", "shard_batch", "data_parallel", "sharding_of",
           "Mesh", "NamedSharding", "PartitionSpec"]


def _constrain(x, sharding):
    return jax.lax.with_sharding_constraint(x, sharding)


# The placement as a differentiable op: its VJP (derived by JAX) constrains the
# gradient the same way, so gradients of sharded tensors stay sharded.
_place = xla_ops.Op("shard", _constrain, node="ShardBackward0")


def make_mesh(shape: tuple[int, ...], axis_names: tuple[str, ...], devices=None) -> Mesh:
    """A `jax.sharding.Mesh` of the given shape over `devices` (default: all devices).

    Arguments:
        shape: devices along each mesh axis, e.g. `(8,)` or `(4, 2)`.
        axis_names: a name per axis, e.g. `("data",)`.
        devices: the devices to use (default `jax.devices()`).

    Returns:
        The mesh.

    Example:
        >>> import jax, tapeflow as tp
        >>> tp.distributed.make_mesh((len(jax.devices()),), ("data",)).axis_names
        ('data',)
    """
    import numpy as np

    devs = list(devices) if devices is not None else jax.devices()
    n = int(np.prod(shape))
    if n > len(devs):
        raise ValueError(f"a mesh of shape {tuple(shape)} needs {n} devices but only {len(devs)} are available; "
                         "on CPU, set XLA_FLAGS=--xla_force_host_platform_device_count=N before importing jax")
    return Mesh(np.array(devs[:n]).reshape(shape), tuple(axis_names))


def _sharding(mesh_or_sharding, spec) -> jax.sharding.Sharding:
    if isinstance(mesh_or_sharding, jax.sharding.Sharding):
        return mesh_or_sharding
    if not isinstance(spec, PartitionSpec):
        spec = PartitionSpec(*(spec if isinstance(spec, (tuple, list)) else (spec,)))
    return NamedSharding(mesh_or_sharding, spec)


def shard(tensor: Tensor, mesh, spec=()) -> Tensor:
    """Place `tensor` on `mesh` split as `spec` (one mesh axis name or None per dimension).

    For a leaf that does not require grad the data are moved and a new leaf
    returned; otherwise the placement is recorded on the tape, so gradients
    flow through it (and are sharded the same way).

    Arguments:
        tensor: the tensor.
        mesh: a `jax.sharding.Mesh` (or a ready `jax.sharding.Sharding`, then `spec` is ignored).
        spec: a `PartitionSpec` or a tuple like `("data", None)`; `()` replicates.

    Returns:
        The placed tensor.

    Example:
        >>> import jax, tapeflow as tp
        >>> mesh = tp.distributed.make_mesh((1,), ("data",))
        >>> tp.distributed.shard(tp.ones(4, 2), mesh, ("data", None)).shape
        tapeflow.Size([4, 2])
    """
    sharding = _sharding(mesh, spec)
    if isinstance(tensor._data, jax.core.Tracer) or tensor._requires_grad:
        return _dispatch.dispatch(_place, (tensor,), (("sharding", sharding),))
    return Tensor._wrap(jax.device_put(tensor._data, sharding))


def replicate(tensor: Tensor, mesh) -> Tensor:
    """`tensor` with a full copy on every device of `mesh`.

    Arguments:
        tensor: the tensor.
        mesh: the mesh.

    Returns:
        The replicated tensor.

    Example:
        >>> import tapeflow as tp
        >>> mesh = tp.distributed.make_mesh((1,), ("data",))
        >>> tp.distributed.replicate(tp.ones(2), mesh).sharding.is_fully_replicated
        True
    """
    return shard(tensor, mesh, ())


def shard_batch(tensor: Tensor, mesh, axis: str = "data") -> Tensor:
    """Split `tensor`'s first dimension over the mesh axis `axis` (the usual data-parallel input).

    Arguments:
        tensor: a batch; its first dimension must divide evenly by the size of `axis`.
        mesh: the mesh.
        axis: the mesh axis to split over.

    Returns:
        The sharded tensor.

    Example:
        >>> import tapeflow as tp
        >>> mesh = tp.distributed.make_mesh((1,), ("data",))
        >>> tuple(tp.distributed.shard_batch(tp.ones(4, 3), mesh).sharding.spec)
        ('data',)
    """
    size = mesh.shape[axis]
    if tensor.shape[0] % size:
        raise ValueError(f"shard_batch: the batch size {tensor.shape[0]} is not divisible by the {size} devices "
                         f"of mesh axis {axis!r}; drop or pad the last batch")
    return shard(tensor, mesh, (axis,))


def data_parallel(model, mesh):
    """Replicate every parameter, buffer and existing `.grad` of `model` over `mesh`, in place.

    Then feed batches through `shard_batch`: the forward runs on each
    device's slice, and reductions over the batch (the loss mean) make XLA
    all-reduce the gradients, so training matches single-device training.

    Arguments:
        model: a tapeflow `nn.Module` (or an iterable of tensors).
        mesh: the mesh.

    Returns:
        `model`.

    Example:
        >>> import tapeflow as tp
        >>> mesh = tp.distributed.make_mesh((1,), ("data",))
        >>> model = tp.distributed.data_parallel(tp.nn.Linear(3, 1), mesh)
    """
    sharding = NamedSharding(mesh, PartitionSpec())
    tensors = list(model.parameters()) + list(model.buffers()) if hasattr(model, "parameters") else list(model)
    for t in tensors:
        t._data = jax.device_put(t._data, sharding)
        if t.grad is not None:
            t.grad._data = jax.device_put(t.grad._data, sharding)
    return model


def sharding_of(tensor: Tensor):
    """The `jax.sharding.Sharding` of `tensor`'s data (also `tensor.sharding`).

    Arguments:
        tensor: the tensor.

    Returns:
        Its sharding.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributed.sharding_of(tp.ones(2)).is_fully_replicated
        True
    """
    return tensor._data.sharding


def _tensor_shard(self, sharding) -> Tensor:
    """This tensor placed with `sharding` (a `jax.sharding.Sharding`); see `tapeflow.distributed.shard`."""
    return shard(self, sharding)


Tensor.shard = _tensor_shard
Tensor.sharding = property(sharding_of, doc="The `jax.sharding.Sharding` of this tensor's data.")
