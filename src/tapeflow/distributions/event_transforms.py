"""Transforms that couple the coordinates of an event: onto the simplex (`SoftmaxTransform`,
`StickBreakingTransform`), onto triangular and positive-definite matrices (`LowerCholeskyTransform`,
`PositiveDefiniteTransform`, `CorrCholeskyTransform`), and transforms applied per slice (`CatTransform`,
`StackTransform`). Re-exported by `tapeflow.distributions.transforms`."""

from __future__ import annotations

import math

import numpy as np

from .. import _ops, linalg
from .._factories import arange, eye
from ..nn.functional import logsigmoid, pad, softplus
from . import constraints
from .elementwise_transforms import _clipped_sigmoid
from .independent import _sum_rightmost
from .transforms import Transform
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["SoftmaxTransform", "StickBreakingTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "CorrCholeskyTransform", "CatTransform", "StackTransform"]


def _at_least_1d(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(Transform):
    """Onto the simplex by `exp` then normalising (not bijective: `inv` is `log`, one of the preimages).

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.SoftmaxTransform()(tp.tensor([0.0, 0.0]))
        tensor([0.5000, 0.5000])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True).values).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _at_least_1d(shape)
        return shape

    inverse_shape = forward_shape


def _stick_offsets(k: int, like):
    """`log([k, k - 1, ..., 1])`: centres the stick-breaking logits so that `x = 0` maps to the uniform point."""
    return (k + 1 - arange(1, k + 1, dtype=like.dtype)).log()


class StickBreakingTransform(Transform):
    """Bijection from `R^K` onto the `K + 1`-simplex: each coordinate's sigmoid breaks off that fraction of what
    is left of the stick.

    Example:
        >>> import tapeflow as tp
        >>> t = tp.distributions.transforms.StickBreakingTransform()
        >>> t(tp.zeros(2)), t.inv(tp.tensor([0.2, 0.3, 0.5]))
        (tensor([0.3333, 0.3333, 0.3333]), tensor([-0.6931, -0.5108]))
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offsets(x.shape[-1], x))
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, (0, 1), value=1.0) * pad(z_cumprod, (1, 0), value=1.0)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        # the remaining stick can round to <= 0 when the last coordinate is ~0; keep its log finite
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(np.finfo(y.dtype.jax).tiny))
        return y_crop.log() - sf.log() + _stick_offsets(y.shape[-1] - 1, y)

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offsets(x.shape[-1], x)
        # 1 - sigmoid(x) = exp(-x) sigmoid(x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _at_least_1d(shape)
        return type(shape)((*shape[:-1], shape[-1] + 1))

    def inverse_shape(self, shape):
        _at_least_1d(shape)
        return type(shape)((*shape[:-1], shape[-1] - 1))


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal: keep the strict lower triangle,
    exponentiate the diagonal.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.LowerCholeskyTransform()(tp.tensor([[0.0, 5.0], [2.0, 0.0]]))
        tensor([[1., 0.],
                [2., 1.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: `L L^T` with `L` from `LowerCholeskyTransform`.

    Example:
        >>> import tapeflow as tp
        >>> tp.distributions.transforms.PositiveDefiniteTransform()(tp.tensor([[0.0, 0.0], [1.0, 0.0]]))
        tensor([[1., 1.],
                [1., 2.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return _ops.matmul(L, L.transpose(-2, -1))

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """A vector of `D (D - 1) / 2` reals to the Cholesky factor of a `D x D` correlation matrix (lower
    triangular, positive diagonal, rows of unit norm): `tanh` into `(-1, 1)`, then a signed stick-breaking of
    each row's squared norm.

    Example:
        >>> import tapeflow as tp
        >>> L = tp.distributions.transforms.CorrCholeskyTransform()(tp.tensor([0.5, -0.2, 1.0]))
        >>> L.shape, (L ** 2).sum(-1)
        (tapeflow.Size([3, 3]), tensor([1.0000, 1.0000, 1.0000]))
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = float(np.finfo(x.dtype.jax).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) sqrt(z (1 - z_1) ... (1 - z_{i-1})) with z = r^2, i.e. r times the remaining stick's sqrt
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype)
        return r * pad(z1m_cumprod_sqrt[..., :-1], (1, 0), value=1.0)

    def _inverse(self, y):
        y_cumsum_shifted = pad((1 - (y * y).cumsum(-1))[..., :-1], (1, 0), value=1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # The Jacobian of x against the flattened strict lower triangle of y (the spaces differ in dimension).
        # diag=-2 reads the remaining stick before each entry without shifting it.
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        _at_least_1d(shape)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return type(shape)((*shape[:-1], d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return type(shape)((*shape[:-2], d * (d - 1) // 2))


def _check_dim(name: str, t, dim: int, size: int, what: str) -> None:
    # PyTorch asserts these; AssertionError keeps its exception class
    if not -t.ndim <= dim < t.ndim:
        raise AssertionError(f"dim {dim} out of range for {name} with {t.ndim} dimensions")
    if t.shape[dim] != size:
        raise AssertionError(f"{name}.size({dim}) = {t.shape[dim]} must equal {what} {size}")


class CatTransform(Transform):
    """`tseq[i]` applied to the `lengths[i]` consecutive slices along `dim` (compatible with `cat`).

    Example:
        >>> import tapeflow as tp
        >>> T = tp.distributions.transforms
        >>> t = T.CatTransform([T.ExpTransform(), T.identity_transform], dim=0, lengths=[1, 2])
        >>> t(tp.tensor([0.0, 5.0, 6.0]))
        tensor([1., 5., 6.])
    """

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                         cache_size)

    def _slices(self, z):
        starts = np.cumsum([0] + self.lengths[:-1])
        return [z.narrow(self.dim, int(s), n) for s, n in zip(starts, self.lengths)]

    def _call(self, x):
        _check_dim("x", x, self.dim, self.length, "length")
        return _ops.cat([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        _check_dim("y", y, self.dim, self.length, "length")
        return _ops.cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim("x", x, self.dim, self.length, "length")
        _check_dim("y", y, self.dim, self.length, "length")
        terms = [_sum_rightmost(t.log_abs_det_jacobian(xs, ys), self.event_dim - t.event_dim)
                 for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y))]
        dim = (self.dim - x.ndim if self.dim >= 0 else self.dim) + self.event_dim
        # a dim left of the event survives in the log-Jacobian: join the slices; inside the event: add them up
        return _ops.cat(terms, dim) if dim < 0 else sum(terms)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """`tseq[i]` applied to the `i`-th slice along `dim` (compatible with `stack`).

    Example:
        >>> import tapeflow as tp
        >>> T = tp.distributions.transforms
        >>> T.StackTransform([T.ExpTransform(), T.identity_transform], dim=1)(tp.tensor([[0.0, 3.0]]))
        tensor([[1., 3.]])
    """

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        _check_dim("x", x, self.dim, len(self.transforms), "len(transforms)")
        return _ops.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        _check_dim("y", y, self.dim, len(self.transforms), "len(transforms)")
        return _ops.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim("x", x, self.dim, len(self.transforms), "len(transforms)")
        _check_dim("y", y, self.dim, len(self.transforms), "len(transforms)")
        return _ops.stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys in
                           zip(self.transforms, self._slices(x), self._slices(y))], self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
