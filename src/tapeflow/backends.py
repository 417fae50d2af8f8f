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
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: False)
openmp = types.SimpleNamespace(is_available=lambda: False)
