"""Distances and similarities of `tapeflow.nn.functional`: `pairwise_distance`, `cosine_similarity`, `pdist`.

Compositions of `norm`, whose gradient at a zero vector is zero (PyTorch's subgradient), so a zero
distance gives a zero gradient here too.
"""

from __future__ import annotations

from .. import _dtype, _ops
from .._ops._dtype_rules import _kernel
from .._tensor import Tensor
from ..amp import full_precision

__all__ = ["pairwise_distance", "cosine_similarity", "pdist"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor:
    """The `p`-norm of `x1 - x2 + eps` over the last dimension (inputs broadcast).

    Arguments:
        x1, x2: `(N, D)` or `(D,)`, broadcastable.
        p: the norm degree.
        eps: added to the difference (keeps the gradient finite at zero distance).
        keepdim: keep the reduced dimension.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.pairwise_distance(tp.tensor([[0.0, 0.0]]), tp.tensor([[3.0, 4.0]]), eps=0.0)
        tensor([5.])
    """
    dim = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p=p, dim=dim, keepdim=keepdim)


@full_precision(devices=("cuda",))
def cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor:
    """`sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps))` along `dim` (inputs broadcast).

    Each norm is clamped separately, and the clamp passes the gradient through unchanged, as in PyTorch.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.cosine_similarity(tp.tensor([[1.0, 0.0], [1.0, 1.0]]), tp.tensor([[1.0, 1.0]]))
        tensor([0.7071, 1.0000])
    """
    from .._toplevel import result_type

    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.SCALAR_NAMES[common.name]}")
    x1, x2 = (x if x.dtype is common else x.to(common) for x in (x1, x2))  # (PyTorch computes in the common dtype)
    x1, x2 = _ops.broadcast_tensors(x1, x2)
    n1 = x1.norm(dim=dim, keepdim=True)
    n2 = x2.norm(dim=dim, keepdim=True)
    # NOTE: PyTorch clamps the norms in place under no_grad: the gradient sees the unclamped norm's rule.
    n1 = n1 + (_ops.clamp_min(n1, eps) - n1).detach()
    n2 = n2 + (_ops.clamp_min(n2, eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@full_precision(devices=("cuda",))
def pdist(input, p=2.0) -> Tensor:
    """The `p`-norm distances between all pairs of rows of an `(N, M)` input: the upper triangle of `cdist`.

    Returns:
        `(N * (N - 1) / 2,)`, ordered as the pairs `(0, 1), (0, 2), ..., (N-2, N-1)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.functional.pdist(tp.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input.dtype.name in ("float16", "bfloat16"):
        raise _kernel("pdist")(input.dtype.name)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = _ops.triu_indices(n, n, 1)
    return (input[i] - input[j]).norm(p=p, dim=-1)
