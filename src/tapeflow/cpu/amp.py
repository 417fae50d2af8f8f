"""`tapeflow.cpu.amp.autocast`: PyTorch's older spelling of `autocast("cpu", ...)` (bfloat16 by default).

Example:
    >>> import warnings
    >>> import tapeflow as tp
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with tp.cpu.amp.autocast():
    ...         print((tp.ones(2, 2) @ tp.ones(2, 2)).dtype)
    tapeflow.bfloat16
"""

from __future__ import annotations

import warnings

from .. import _dtype
from .. import amp as _amp

__all__ = ["autocast"]


class autocast(_amp.autocast):
    """`torch.cpu.amp.autocast(enabled, dtype, cache_enabled)`: `autocast("cpu", ...)`, with PyTorch's
    deprecation warning.

    Example:
        >>> import warnings
        >>> import tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     with tp.cpu.amp.autocast(dtype=tp.bfloat16):
        ...         print(tp.is_autocast_enabled("cpu"))
        True
    """

    def __init__(self, enabled: bool = True, dtype=_dtype.bfloat16, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
