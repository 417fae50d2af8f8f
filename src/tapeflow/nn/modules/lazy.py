"""Lazy convolutions and normalisations: the channel count is read from the first input.

Until then the parameters are empty placeholders (registered, so an optimizer built before the first call keeps
them); the first call builds the full module with the same arguments, moves its values into the placeholders
(the same Parameter objects), and the module becomes that class (`LazyConv2d` becomes a `Conv2d`), as in PyTorch.
"""

from __future__ import annotations

from ..._factories import empty
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, _ConvNd
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .resample import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

_BATCH_NORMS = (BatchNorm1d, BatchNorm2d, BatchNorm3d)

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _Lazy(Module):
    cls_to_become: type = Module
    _spatial = 2  # spatial dimensions of a batched input (the channels are dimension 1, or 0 unbatched)

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        self._lazy_args, self._lazy_kwargs = args, kwargs
        factory = {"device": kwargs.get("device"), "dtype": kwargs.get("dtype")}
        for name in self._placeholders():
            self.register_parameter(name, Parameter(empty(0, **factory)))

    def _placeholders(self) -> tuple:
        return ()

    def has_uninitialized_params(self) -> bool:
        """Whether the first input has yet to fix the parameters' shapes (PyTorch's LazyModuleMixin)."""
        return True

    def initialize_parameters(self, input) -> None:
        """Build the full module for `input`'s channel count and become it."""
        batched = input.ndim == self._spatial + 2 or issubclass(self.cls_to_become, _BATCH_NORMS)
        channels = input.shape[1 if batched else 0]  # (a batch norm's channels are always dimension 1)
        full = self.cls_to_become(channels, *self._lazy_args, **self._lazy_kwargs)
        mine = self._parameters
        with no_grad():
            for name, p in full._parameters.items():
                if p is not None and mine.get(name) is not None:
                    mine[name].data = p.data
                else:
                    mine[name] = p
        self._buffers.update(full._buffers)
        for key, value in full.__dict__.items():
            if key not in ("_parameters", "_buffers", "_modules"):
                self.__dict__.setdefault(key, value)
        del self._lazy_args, self._lazy_kwargs
        self.__class__ = self.cls_to_become

    def forward(self, input, *args, **kwargs):
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)  # (now the full module's forward; hooks already ran)


class _LazyConv(_Lazy):
    def _placeholders(self) -> tuple:
        return ("weight", "bias") if self._lazy_kwargs.get("bias", True) else ("weight",)


class _LazyNorm(_Lazy):
    def __init__(self, *args, **kwargs):
        # (PyTorch's lazy norms default to affine=True and track_running_stats=True, the instance norms too)
        for i, name in ((2, "affine"), (3, "track_running_stats")):
            if len(args) <= i:
                kwargs.setdefault(name, True)
        super().__init__(*args, **kwargs)

    def _placeholders(self) -> tuple:
        return ("weight", "bias") if self._lazy_kwargs.get("affine", True) else ()


def _lazy(target: type, spatial: int) -> type:
    """`Lazy<target>`: its docstring example runs it on a batch with `spatial` dimensions of 2 channels."""
    name, conv = "Lazy" + target.__name__, issubclass(target, _ConvNd)
    shape = ", ".join(["1" if conv else "3", "2"] + ["5" if conv else "4"] * spatial)
    if conv:
        weight_dim = 0 if target._transposed else 1  # (the input channels' dimension of the weight)
        doc = f"""A `{target.__name__}` whose `in_channels` is read from the first input.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.{name}(4, 3)
        >>> m(tp.ones({shape})).shape[1], type(m).__name__, m.weight.shape[{weight_dim}]
        (4, '{target.__name__}', 2)
    """
    else:
        doc = f"""A `{target.__name__}` whose `num_features` is read from the first input.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.{name}()
        >>> m(tp.ones({shape})).shape, type(m).__name__, m.num_features
        (tapeflow.Size([{shape}]), '{target.__name__}', 2)
    """
    return type(name, (_LazyConv if conv else _LazyNorm,), {"cls_to_become": target, "_spatial": spatial,
                                                            "__doc__": doc, "__module__": __name__})


LazyConv1d, LazyConv2d, LazyConv3d = _lazy(Conv1d, 1), _lazy(Conv2d, 2), _lazy(Conv3d, 3)
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy(ConvTranspose1d, 1), _lazy(ConvTranspose2d, 2), _lazy(ConvTranspose3d, 3))
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = _lazy(BatchNorm1d, 1), _lazy(BatchNorm2d, 2), _lazy(BatchNorm3d, 3)
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy(InstanceNorm1d, 1), _lazy(InstanceNorm2d, 2), _lazy(InstanceNorm3d, 3))
