"""Folding an eval-mode batch norm into the convolution or linear layer before it (`fuse_conv_bn_eval`, ...),
and `skip_init`."""

from __future__ import annotations

import copy
import inspect

from ... import _factories
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init"]


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None, transpose: bool = False):
    """The weight and bias of one convolution computing `bn(conv(x))` with the batch norm's running statistics.

    Example:
        >>> import tapeflow as tp
        >>> w, b = tp.nn.utils.fuse_conv_bn_weights(tp.ones(2, 1, 1), None, tp.zeros(2), tp.ones(2), 0.0,
        ...                                         tp.tensor([2.0, 3.0]), tp.tensor([1.0, 0.0]))
        >>> w.flatten().tolist(), b.tolist()
        ([2.0, 3.0], [1.0, 0.0])
    """
    with no_grad():
        if conv_b is None:
            conv_b = _factories.zeros_like(bn_rm)
        if bn_w is None:
            bn_w = _factories.ones_like(bn_rm)
        if bn_b is None:
            bn_b = _factories.zeros_like(bn_rm)
        scale = bn_w * (bn_rv + bn_eps).rsqrt()
        shape = [1] * conv_w.ndim
        shape[1 if transpose else 0] = -1
        w = (conv_w * scale.reshape(shape)).to(conv_w.dtype)
        b = ((conv_b - bn_rm) * scale + bn_b).to(conv_w.dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of `conv` whose output is `bn(conv(x))` for the eval-mode batch norm `bn`.

    Example:
        >>> import tapeflow as tp
        >>> conv, bn = tp.nn.Conv2d(1, 2, 3).eval(), tp.nn.BatchNorm2d(2).eval()
        >>> x = tp.randn(1, 1, 5, 5)
        >>> tp.allclose(tp.nn.utils.fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), atol=1e-6)
        True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor):
    """The weight and bias of one linear layer computing `bn(linear(x))` with the batch norm's running statistics.

    Example:
        >>> import tapeflow as tp
        >>> w, b = tp.nn.utils.fuse_linear_bn_weights(tp.eye(2), None, tp.zeros(2), tp.ones(2), 0.0,
        ...                                           tp.tensor([2.0, 3.0]), tp.zeros(2))
        >>> w.tolist()
        [[2.0, 0.0], [0.0, 3.0]]
    """
    with no_grad():
        if linear_b is None:
            linear_b = _factories.zeros_like(bn_rm)
        scale = bn_w * (bn_rv + bn_eps).rsqrt()
        w = linear_w * scale.unsqueeze(-1)
        b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of `linear` whose output is `bn(linear(x))` for the eval-mode batch norm `bn`.

    Example:
        >>> import tapeflow as tp
        >>> lin, bn = tp.nn.Linear(3, 2).eval(), tp.nn.BatchNorm1d(2).eval()
        >>> x = tp.randn(4, 3)
        >>> tp.allclose(tp.nn.utils.fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)), atol=1e-6)
        True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def skip_init(module_cls, *args, **kwargs):
    """`module_cls(*args, **kwargs)` without running its parameter initialisation: built on the meta device,
    then given uninitialised (zero) storage on `device` (the CPU by default).

    Example:
        >>> import tapeflow as tp
        >>> tp.nn.utils.skip_init(tp.nn.Linear, 2, 3).weight.shape
        tapeflow.Size([3, 2])
    """
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
