"""Lazy convolutions and normalisations: the channel count is read from the first input.

Until then the parameters are empty placeholders (registered, so an optimizer built before the first call keeps
them); the first call builds the full module with the same arguments, moves its values into the placeholders
(the same Parameter objects), and the module becomes that class (`LazyConv2d` becomes a `Conv2d`), as in PyTorch.
"""

from __future__ import annotations

from ..._factories import empty
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
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


def _lazy(name: str, base: type, target: type, spatial: int, doc: str) -> type:
    return type(name, (base,), {"cls_to_become": target, "_spatial": spatial, "__doc__": doc, "__module__": __name__})


_CONV_DOC = """A `{t}` whose `in_channels` is read from the first input.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.{n}(4, 3)
        >>> m(tp.ones({shape})).shape[1], type(m).__name__, m.weight.shape[1]
        (4, '{t}', 2)
    """
_NORM_DOC = """A `{t}` whose `num_features` is read from the first input.

    Example:
        >>> import tapeflow as tp
        >>> m = tp.nn.{n}()
        >>> m(tp.ones({shape})).shape, type(m).__name__, m.num_features
        (tapeflow.Size([{dims}]), '{t}', 2)
    """

LazyConv1d = _lazy("LazyConv1d", _LazyConv, Conv1d, 1, _CONV_DOC.format(t="Conv1d", n="LazyConv1d", shape="1, 2, 5"))
LazyConv2d = _lazy("LazyConv2d", _LazyConv, Conv2d, 2, _CONV_DOC.format(t="Conv2d", n="LazyConv2d",
                                                                       shape="1, 2, 5, 5"))
LazyConv3d = _lazy("LazyConv3d", _LazyConv, Conv3d, 3, _CONV_DOC.format(t="Conv3d", n="LazyConv3d",
                                                                       shape="1, 2, 5, 5, 5"))
LazyConvTranspose1d = _lazy("LazyConvTranspose1d", _LazyConv, ConvTranspose1d, 1, _CONV_DOC.format(
    t="ConvTranspose1d", n="LazyConvTranspose1d", shape="1, 2, 5").replace("m.weight.shape[1]", "m.weight.shape[0]"))
LazyConvTranspose2d = _lazy("LazyConvTranspose2d", _LazyConv, ConvTranspose2d, 2, _CONV_DOC.format(
    t="ConvTranspose2d", n="LazyConvTranspose2d", shape="1, 2, 5, 5").replace("m.weight.shape[1]",
                                                                              "m.weight.shape[0]"))
LazyConvTranspose3d = _lazy("LazyConvTranspose3d", _LazyConv, ConvTranspose3d, 3, _CONV_DOC.format(
    t="ConvTranspose3d", n="LazyConvTranspose3d", shape="1, 2, 5, 5, 5").replace("m.weight.shape[1]",
                                                                                 "m.weight.shape[0]"))
LazyBatchNorm1d = _lazy("LazyBatchNorm1d", _LazyNorm, BatchNorm1d, 1, _NORM_DOC.format(
    t="BatchNorm1d", n="LazyBatchNorm1d", shape="3, 2", dims="3, 2"))
LazyBatchNorm2d = _lazy("LazyBatchNorm2d", _LazyNorm, BatchNorm2d, 2, _NORM_DOC.format(
    t="BatchNorm2d", n="LazyBatchNorm2d", shape="3, 2, 4, 4", dims="3, 2, 4, 4"))
LazyBatchNorm3d = _lazy("LazyBatchNorm3d", _LazyNorm, BatchNorm3d, 3, _NORM_DOC.format(
    t="BatchNorm3d", n="LazyBatchNorm3d", shape="3, 2, 2, 2, 2", dims="3, 2, 2, 2, 2"))
LazyInstanceNorm1d = _lazy("LazyInstanceNorm1d", _LazyNorm, InstanceNorm1d, 1, _NORM_DOC.format(
    t="InstanceNorm1d", n="LazyInstanceNorm1d", shape="3, 2, 4", dims="3, 2, 4"))
LazyInstanceNorm2d = _lazy("LazyInstanceNorm2d", _LazyNorm, InstanceNorm2d, 2, _NORM_DOC.format(
    t="InstanceNorm2d", n="LazyInstanceNorm2d", shape="3, 2, 4, 4", dims="3, 2, 4, 4"))
LazyInstanceNorm3d = _lazy("LazyInstanceNorm3d", _LazyNorm, InstanceNorm3d, 3, _NORM_DOC.format(
    t="InstanceNorm3d", n="LazyInstanceNorm3d", shape="3, 2, 2, 2, 2", dims="3, 2, 2, 2, 2"))
