"""Packed and padded variable-length sequences (PyTorch's `torch.nn.utils.rnn`).

A `PackedSequence` stores a batch of sequences time step by time step, longest first: `data` holds, for each
step `t`, the rows of the `batch_sizes[t]` sequences that are that long. The recurrent layers take it directly
and skip each sequence's padding. Packing and unpacking are gathers, so gradients flow through them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import _dtype, _ops
from ..._factories import full, tensor
from ..._tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence", "invert_permutation"]


class PackedSequence(NamedTuple):
    """A batch of variable-length sequences, packed (build it with `pack_padded_sequence` or `pack_sequence`).

    Fields: `data` `(sum of lengths, *)`; `batch_sizes` (int64, one per time step); `sorted_indices` (the batch
    order, longest first, or None) and `unsorted_indices` (its inverse).
    """

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args, **kwargs) -> PackedSequence:
        """`data.to(...)` (indices stay int64)."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._replace(data=data)

    def double(self) -> PackedSequence:
        return self._replace(data=self.data.double())

    def float(self) -> PackedSequence:
        return self._replace(data=self.data.float())

    def cpu(self) -> PackedSequence:
        return self

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        """False: tapeflow has no pinned host memory."""
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    return tensor(np.argsort(permutation.numpy(), kind="stable"))


def _lengths(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.ndim}D "
                               f"{lengths.device.type} {str(lengths.dtype).split('.')[-1]} tensor")
        return lengths.numpy().astype(np.int64)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _layout(batch_sizes: np.ndarray, batch: int) -> np.ndarray:
    """For each packed row, its position `t * batch + b` in a flattened `(T, batch)` padded layout."""
    return np.concatenate([t * batch + np.arange(n) for t, n in enumerate(batch_sizes)]).astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch `(T, B, *)` (`(B, T, *)` with batch_first) of sequences of the given `lengths`.

    Arguments:
        input: the padded batch.
        lengths: each sequence's length (a list or a 1-D int64 tensor).
        batch_first: the batch is the first dimension.
        enforce_sorted: require lengths in decreasing order (otherwise they are sorted, and the order kept in
            `sorted_indices` so that unpacking restores it).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils.rnn import pack_padded_sequence
        >>> packed = pack_padded_sequence(tp.tensor([[1, 2, 3], [4, 5, 0]]), [3, 2], batch_first=True)
        >>> packed.data, packed.batch_sizes
        (tensor([1, 4, 2, 5, 3]), tensor([2, 2, 1]))
    """
    lens = _lengths(lengths)
    sorted_indices = None
    if enforce_sorted:
        if (np.diff(lens) > 0).any():
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
    else:
        order = np.argsort(-lens, kind="stable")
        lens, sorted_indices = lens[order], tensor(order)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    T, B = input.shape[0], input.shape[1]
    if len(lens) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={B})")
    if len(lens) and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if len(lens) and lens.max() > T:
        raise RuntimeError(f"Expected sequence length to be smaller than or equal to {T} but got {lens.max()}")
    batch_sizes = (lens[None, :] > np.arange(lens.max())[:, None]).sum(1)
    data = input.reshape(T * B, *input.shape[2:])[tensor(_layout(batch_sizes, B))]
    return PackedSequence(data, tensor(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple:
    """Undo `pack_padded_sequence`: `(padded batch, lengths)`, in the original batch order.

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.utils.rnn import pack_sequence, pad_packed_sequence
        >>> padded, lengths = pad_packed_sequence(pack_sequence([tp.tensor([1, 2]), tp.tensor([3])]))
        >>> padded.T, lengths
        (tensor([[1, 2],
                [3, 0]]), tensor([2, 1]))
    """
    data, batch_sizes = sequence.data, sequence.batch_sizes.numpy()
    T, B = len(batch_sizes), int(batch_sizes[0])
    if total_length is not None:
        if total_length < T:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {T}")
        T = total_length
    padded = _unpack(data, batch_sizes, T, B, padding_value)
    lens = (batch_sizes[None, :] > np.arange(B)[:, None]).sum(1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lens = lens[sequence.unsorted_indices.numpy()]
    return (padded.transpose(0, 1) if batch_first else padded), tensor(lens)


def _unpack(data, batch_sizes: np.ndarray, T: int, B: int, padding_value) -> Tensor:
    """`(T, B, *)` padded in the packed (sorted) order: every cell gathers its packed row or the padding row."""
    where = np.full(T * B, data.shape[0], np.int64)
    where[_layout(batch_sizes, B)] = np.arange(data.shape[0])
    pad = full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    return _ops.cat([data, pad])[tensor(where)].reshape(T, B, *data.shape[1:])


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths `(L_i, *)` into `(T, B, *)` (`(B, T, *)` with batch_first).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.utils.rnn.pad_sequence([tp.tensor([1, 2]), tp.tensor([3])], batch_first=True)
        tensor([[1, 2],
                [3, 0]])
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    T = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        n = T - s.shape[0]
        if n:
            pad = full((n, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = _ops.cat([s, pad] if padding_side == "right" else [pad, s])
        rows.append(s)
    return _ops.stack(rows, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences `(L_i, *)` (longest first unless `enforce_sorted=False`).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.utils.rnn.pack_sequence([tp.tensor([1, 2, 3]), tp.tensor([4])]).batch_sizes
        tensor([2, 1, 1])
    """
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """Split a padded batch back into its sequences."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths(lengths).tolist())]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """Split a packed batch back into its sequences (original order)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def _mask(batch_sizes: np.ndarray, B: int) -> Tensor:
    """`(T, B)` bool: which steps each (sorted) sequence has."""
    return tensor(np.arange(B)[None, :] < batch_sizes[:, None], dtype=_dtype.bool)
