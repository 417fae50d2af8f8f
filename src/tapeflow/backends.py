"""`tapeflow.backends`: the flags of `torch.backends` that programs set, accepted (XLA chooses its kernels).

Example:
    >>> import tapeflow as tp
    >>> tp.backends.cudnn.benchmark = True
    >>> tp.backends.mps.is_available()
    False
"""

from __future__ import annotations

import types

from . import cuda as _cuda

__all__ = ["cudnn", "cuda", "mps", "mkldnn", "openmp"]

cudnn = types.SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                              is_available=_cuda.is_available, version=lambda: None)
cuda = types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True),
                             is_built=_cuda.is_available)

# The scaled-dot-product-attention backend switches: recorded and reported (one XLA implementation serves all).
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind: str):
    def enable(enabled: bool) -> None:
        _sdp[kind] = bool(enabled)

    def query() -> bool:
        return _sdp[kind]

    enable.__name__, query.__name__ = f"enable_{kind}_sdp", f"{kind}_sdp_enabled"
    setattr(cuda, enable.__name__, enable)
    setattr(cuda, query.__name__, query)


for _kind in _sdp:
    _sdp_switch(_kind)
del _kind
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: False)
openmp = types.SimpleNamespace(is_available=lambda: False)
