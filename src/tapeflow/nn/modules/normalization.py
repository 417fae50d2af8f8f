"""Normalisation layers: `BatchNorm1d`, `BatchNorm2d`, `LayerNorm`, `GroupNorm`."""

from __future__ import annotations

from ... import _dtype
from ..._factories import ones, tensor, zeros
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm"]


class _BatchNorm(Module):
    _dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(num_features, device=device, dtype=dtype))
            else:  # (PyTorch's `bias=False`: a scale without a shift)
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dtype.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, batch count 0."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics and the affine parameters (weight 1, bias 0)."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # Cumulative moving average: weight 1/n for the n-th batch (on the device, no host sync).
                factor = 1.0 / self.num_batches_tracked
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over `(N, C)` or `(N, C, L)`.

    Arguments:
        num_features: C.
        eps: added to the variance.
        momentum: running-average factor (`None`: cumulative average).
        affine: learn weight and bias.
        track_running_stats: keep running mean/variance buffers (used in `eval()`).

    Example:
        >>> import tapeflow as tp
        >>> bn = tp.nn.BatchNorm1d(3)
        >>> _ = bn(tp.randn(8, 3))
        >>> int(bn.num_batches_tracked)
        1
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over `(N, C, H, W)` (see `BatchNorm1d` for the arguments).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.BatchNorm2d(4)(tp.randn(2, 4, 3, 3)).shape
        tapeflow.Size([2, 4, 3, 3])
    """

    _dims = (4,)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose statistics cover the whole batch however it is split over devices (PyTorch's
    `SyncBatchNorm`). tapeflow runs data parallelism as one SPMD program over a sharded batch, so the
    statistics of every `BatchNorm` are already the global batch's: this layer computes as `BatchNorm` does,
    over any input of two or more dimensions. `process_group` is accepted for PyTorch's signature.

    Example:
        >>> import tapeflow as tp
        >>> net = tp.nn.Sequential(tp.nn.Conv2d(3, 4, 1), tp.nn.BatchNorm2d(4))
        >>> net = tp.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        >>> type(net[1]).__name__, net[1](tp.randn(2, 4, 3, 3)).shape
        ('SyncBatchNorm', tapeflow.Size([2, 4, 3, 3]))
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with every `BatchNorm1d/2d/3d` in it replaced by a `SyncBatchNorm` holding the same
        parameters and running statistics (the module itself when it is one)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out


class LayerNorm(Module):
    """Layer normalisation over the trailing `normalized_shape` dimensions.

    Arguments:
        normalized_shape: int or tuple.
        eps: added to the variance.
        elementwise_affine: learn weight (ones) and bias (zeros).
        bias: learn the bias (when affine).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LayerNorm(4)(tp.randn(2, 4)).shape
        tapeflow.Size([2, 4])
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(*shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Group normalisation: `num_channels` split into `num_groups` groups.

    Arguments:
        num_groups: must divide num_channels.
        num_channels: C.
        eps: added to the variance.
        affine: learn per-channel weight (ones) and bias (zeros).
        bias: learn the bias (when affine).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.GroupNorm(2, 4)(tp.randn(2, 4, 3)).shape
        tapeflow.Size([2, 4, 3])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(ones(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    """Local response normalisation across channels (AlexNet):
    `x / (k + alpha / size * sum of x^2 over size neighbouring channels) ** beta`.

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.LocalResponseNorm(2)(tp.randn(2, 4, 3, 3)).shape
        tapeflow.Size([2, 4, 3, 3])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over `(N, C, D, H, W)` (see `BatchNorm1d` for the arguments).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.BatchNorm3d(2)(tp.randn(2, 2, 3, 3, 3)).shape
        tapeflow.Size([2, 2, 3, 3, 3])
    """

    _dims = (5,)


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing `normalized_shape` dimensions, times a learned weight.

    Arguments:
        normalized_shape: int or tuple.
        eps: added to the mean square (None: the dtype's machine epsilon).
        elementwise_affine: learn a weight (initialised to ones).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.RMSNorm(2)(tp.tensor([[3.0, 4.0]]))
        tensor([[0.8485, 1.1314]], grad_fn=<MulBackward0>)
    """

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Weight back to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
