"""`tapeflow.backends`: the flags of `torch.backends` that programs set, accepted (XLA chooses its kernels).
`cuda.matmul.allow_tf32` is `tapeflow.set_float32_matmul_precision`: True is `"high"`, False `"highest"`.

Example:
    >>> import tapeflow as tp
    >>> tp.backends.cudnn.benchmark = True
    >>> tp.backends.mps.is_available()
    False
"""

from __future__ import annotations

import types

from . import _toplevel
from . import cuda as _cuda

__all__ = ["cudnn", "cuda", "mps", "mkldnn", "openmp"]

cudnn = types.SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                              is_available=_cuda.is_available, version=lambda: None)


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
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: False)
openmp = types.SimpleNamespace(is_available=lambda: False)
