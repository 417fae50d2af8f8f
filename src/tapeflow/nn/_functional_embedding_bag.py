"""`embedding_bag`: sums, means or maxima of bags of embedding rows, without building the per-index rows'
tensor for the caller.

The bags are laid out as a padded `(bags, longest bag)` index matrix with a mask (offsets are read once on
the host, as PyTorch's CPU kernel reads them); the reductions are then tapeflow ops, so the gradient of
`max` goes to the row that gave the maximum and padding entries get none.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import _ops
from .._factories import tensor, zeros_like
from .._legacy import argument_type_name
from .._tensor import Tensor

__all__ = ["embedding_bag"]


def _host(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy()).astype(np.int64)


def _layout(input, offsets, include_last_offset):
    """Index matrix `(B, L)` and mask of a 2-d input or of a flat input cut at `offsets`."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        idx = _host(input)
        return idx, np.ones(idx.shape, bool), None
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    flat, starts = _host(input), _host(offsets)
    if starts.size and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(starts[0])}")
    ends = np.append(starts[1:], flat.size)
    if include_last_offset:
        starts, ends = starts[:-1], starts[1:]
    if np.any(ends < starts) or np.any(ends > flat.size):
        raise RuntimeError("embedding_bag: offsets must be non-decreasing and at most the input's length")
    lengths = ends - starts
    width = max(int(lengths.max(initial=0)), 1)
    mask = np.arange(width) < lengths[:, None]
    pos = np.minimum(starts[:, None] + np.arange(width), max(flat.size - 1, 0))
    return (np.where(mask, flat[pos], 0) if flat.size else np.zeros(mask.shape, np.int64)), mask, pos


def _traced_bags(input, weight, offsets, mode, per_sample_weights, padding_idx, n):
    """Inside a trace the indices cannot be read: 2-d bags only, computed on the device, unchecked."""
    if input.ndim != 2 or offsets is not None:
        raise RuntimeError("embedding_bag: inside a traced function pass 2-d (B, L) bags; flat indices with "
                           "offsets need the offsets on the host")
    rows = weight[input]
    keep = (input != (padding_idx % n)).unsqueeze(-1) if padding_idx is not None else None
    zeros = zeros_like(rows)
    if mode == "max":
        best = _ops.where(keep, rows, zeros - float("inf")) if keep is not None else rows
        best = best.max(1).values
        return best if keep is None else _ops.where(keep.any(1), best, zeros_like(best))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(-1)
    total = (_ops.where(keep, rows, zeros) if keep is not None else rows).sum(1)
    if mode == "sum":
        return total
    count = keep.sum(1).clamp_min(1) if keep is not None else input.shape[1]
    return total / count


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None) -> Tensor:
    """Reduce bags of rows of `weight` ("sum", "mean" or "max") without materialising them for the caller.

    Arguments:
        input: `(B, L)` indices (B bags of L), or flat `(n,)` indices cut into bags at `offsets`.
        weight: `(num_embeddings, embedding_dim)`.
        offsets: `(B,)` start of each bag in a flat `input` (with `include_last_offset`, `(B+1,)`: the
            last entry ends the last bag).
        max_norm, norm_type: rescale the rows looked up in place, as `embedding` does.
        mode: "sum" | "mean" | "max"; an empty bag gives zeros.
        per_sample_weights: weights of `input`'s shape multiplying each row (mode "sum" only).
        padding_idx: entries with this index are left out (and not counted in the mean).

    Returns:
        `(B, embedding_dim)`.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.tensor([[1.0, 0.0], [0.0, 2.0], [4.0, 4.0]])
        >>> tp.nn.functional.embedding_bag(tp.tensor([0, 1, 2, 2]), w, tp.tensor([0, 2]))
        tensor([[0.5000, 1.0000],
                [4.0000, 4.0000]])
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {argument_type_name(input)} instead (while checking arguments for embedding_bag)")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then "
                             f"it must have the same shape as the input ({input.shape})")
    if scale_grad_by_freq:
        if mode == "max":
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        # NOTE: PyTorch's CPU kernel scales bags by counts that do not follow the indices' frequencies
        # (flat and 2-d inputs disagree), so there is no rule to reproduce; refuse rather than differ.
        raise NotImplementedError("embedding_bag: scale_grad_by_freq is not supported; scale the gradient of "
                                  "weight with a hook instead")
    n = weight.shape[0]
    if isinstance(input._data, jax.core.Tracer) or (offsets is not None and isinstance(offsets._data, jax.core.Tracer)):
        return _traced_bags(input, weight, offsets, mode, per_sample_weights, padding_idx, n)
    idx, mask, pos = _layout(input, offsets, include_last_offset)
    bad = np.argwhere(mask & ((idx < 0) | (idx >= n)))
    if bad.size:
        b, j = bad[0]  # PyTorch names the position inside the bag
        raise RuntimeError(f"Index {int(j)} of input takes value {int(idx[b, j])} which is not in the valid range "
                           f"[0, {n})")
    if padding_idx is not None:
        padding_idx %= n
        mask = mask & (idx != padding_idx)
    if max_norm is not None:
        from .functional import embedding

        embedding(input, weight, max_norm=max_norm, norm_type=norm_type)  # the in-place renorm of the rows
    rows = weight[tensor(idx)]  # (B, L, D)
    keep = tensor(mask[..., None])
    zeros = zeros_like(rows)
    if mode == "max":
        best = _ops.where(keep, rows, zeros - float("inf")).max(1).values
        return _ops.where(tensor(~mask.any(1))[:, None], zeros_like(best), best)
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)[tensor(pos)] if pos is not None else per_sample_weights
        rows = rows * psw.unsqueeze(-1)
    total = _ops.where(keep, rows, zeros).sum(1)
    if mode == "sum":
        return total
    count = np.maximum(mask.sum(1), 1).astype(np.float64)
    return total / tensor(count[:, None], dtype=weight.dtype)
