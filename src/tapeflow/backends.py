"""`tapeflow.backends`: the flags of `torch.backends` that programs set, accepted (XLA chooses its kernels).
`cuda.matmul.allow_tf32` is `tapeflow.set_float32_matmul_precision`: True is `"high"`, False `"highest"`.

Example:
    >>> import tapeflow as tp
    >>> tp.backends.cudnn.benchmark = True
    >>> tp.backends.mps.is_available()
    False
    >>> with tp.backends.cudnn.flags(enabled=False):
    ...     tp.backends.cudnn.enabled
    False
"""

from __future__ import annotations

import contextlib
import types

from . import _toplevel
from . import cuda as _cuda

__all__ = ["cudnn", "cuda", "mps", "mkldnn", "openmp"]


def _flags_of(namespace, **defaults):
    """`namespace.flags(...)`, PyTorch's context manager over a backend's switches (`with cudnn.flags(enabled=False):`):
    the switches hold the given values inside and their old values after. Its defaults are PyTorch's."""
    @contextlib.contextmanager
    def flags(**values):
        unknown = set(values) - set(defaults)
        if unknown:
            raise TypeError(f"flags() got an unexpected keyword argument '{sorted(unknown)[0]}'")
        new = {**defaults, **values}
        old = {k: getattr(namespace, k) for k in new if hasattr(namespace, k)}
        for k, v in new.items():
            setattr(namespace, k, v)
        try:
            yield
        finally:
            for k in new:
                if k in old:
                    setattr(namespace, k, old[k])
                else:
                    delattr(namespace, k)
    return flags


cudnn = types.SimpleNamespace(enabled=True, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
                              is_available=_cuda.is_available, version=lambda: None)
cudnn.flags = _flags_of(cudnn, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
                        allow_tf32=True, fp32_precision="none", depthwise_kernel="auto")


class _Matmul:
    """`torch.backends.cuda.matmul`: `allow_tf32` reads and sets the float32 matrix-product precision."""

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return _toplevel.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, allow: bool) -> None:
        _toplevel.set_float32_matmul_precision("high" if allow else "highest")


cuda = types.SimpleNamespace(matmul=_Matmul(), is_built=_cuda.is_available)

# The scaled-dot-product-attention backend switches (`tapeflow.nn.attention` says what they decide: one XLA
# implementation stands for every backend the device has).
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}


def _sdp_switch(kind: str):
    def enable(enabled: bool) -> None:
        _sdp[kind] = bool(enabled)

    def query() -> bool:
        return _sdp[kind]

    enable.__name__, query.__name__ = f"enable_{kind}_sdp", f"{kind}_sdp_enabled"
    setattr(cuda, enable.__name__, enable)
    setattr(cuda, query.__name__, query)


for _kind in ("flash", "mem_efficient", "math", "cudnn"):
    _sdp_switch(_kind)
del _kind
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = types.SimpleNamespace(enabled=True, deterministic=False, is_available=lambda: False)
mkldnn.flags = _flags_of(mkldnn, enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none")
openmp = types.SimpleNamespace(is_available=lambda: False)
