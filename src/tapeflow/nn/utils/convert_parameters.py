"""Flatten parameters into one vector and back."""

from __future__ import annotations

from collections.abc import Iterable

from ... import _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Concatenate the flattened parameters into one 1-d tensor (differentiable).

    Arguments:
        parameters: an iterable of tensors.

    Returns:
        A 1-d tensor of all their elements.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.utils.parameters_to_vector(tp.nn.Linear(3, 2).parameters()).shape
        tapeflow.Size([8])
    """
    return _ops.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of `vec` into the parameters, in place (the inverse of `parameters_to_vector`).

    Arguments:
        vec: a 1-d tensor with as many elements as all the parameters together.
        parameters: an iterable of tensors.

    Returns:
        None.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.Linear(3, 2)
        >>> tp.nn.utils.vector_to_parameters(tp.zeros(8), m.parameters())
        >>> float(m.weight.abs().sum())
        0.0
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected a Tensor, but got: {type(vec).__name__}")
    start = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(p.shape))
            start += n
