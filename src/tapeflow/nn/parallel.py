"""`tapeflow.nn.parallel`: `DataParallel` and `data_parallel`, for programs written for PyTorch's
single-process data parallelism.

PyTorch's `DataParallel` splits each batch over the GPUs of one process, runs a replica of the module on
each and gathers the outputs; without a GPU it calls the module itself. tapeflow runs the module once on
the batch where its tensors live (the default device). The outputs and gradients are what PyTorch
computes on one device; with several GPUs they differ from PyTorch's only where a layer mixes the batch
(`BatchNorm` statistics are taken over each replica's share there). To spread a batch over devices, shard
it with `tp.distributed` instead.
"""

from __future__ import annotations

import jax

from .modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _accelerators() -> list:
    return [d for d in jax.devices() if d.platform != "cpu"]


def _index(device) -> int:
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is None and isinstance(device, str):
        _, _, idx = device.partition(":")
        index = int(idx) if idx else 0
    return 0 if index is None else index


class DataParallel(Module):
    """Wraps `module` as PyTorch's `DataParallel` does: the wrapped module is `.module` (state-dict keys start
    with `module.`), `device_ids`/`output_device`/`dim` are kept, and calling it runs `module` on the batch
    (see the module docstring for how this relates to PyTorch's replicas).

    Example:
        >>> import tapeflow as tp
        >>> net = tp.nn.DataParallel(tp.nn.Linear(3, 2))
        >>> net(tp.ones(4, 3)).shape, list(net.state_dict())
        (tapeflow.Size([4, 2]), ['module.weight', 'module.bias'])
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        accelerators = _accelerators()
        if not accelerators:  # (PyTorch without a GPU: the module itself, no devices)
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(len(accelerators)))
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device if output_device is not None else self.device_ids[0])
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None):
    """`module(*inputs, **module_kwargs)`, the functional form of `DataParallel`. As in PyTorch, it needs an
    accelerator: without one it raises RuntimeError.

    Example:
        >>> import tapeflow as tp
        >>> try:
        ...     out = tp.nn.parallel.data_parallel(tp.nn.Identity(), tp.ones(2))
        ... except RuntimeError as e:  # (on a machine without a GPU or TPU)
        ...     out = e
        >>> out
        RuntimeError('device type could not be determined')
    """
    if not _accelerators():
        raise RuntimeError("device type could not be determined")
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
