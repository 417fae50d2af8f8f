"""`tapeflow.cuda.amp`: PyTorch's older spellings `torch.cuda.amp.autocast(...)` and `torch.cuda.amp.GradScaler(...)`.

PyTorch deprecates them for `torch.amp.autocast("cuda", ...)` and `torch.amp.GradScaler("cuda", ...)`; here they
are those, with PyTorch's deprecation warning (without a GPU both disable themselves, as PyTorch's do).

Example:
    >>> import warnings
    >>> import tapeflow as tp
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     scaler = tp.cuda.amp.GradScaler()
    >>> scaler.is_enabled() == tp.cuda.is_available()
    True
"""

from __future__ import annotations

import warnings

from .. import _dtype
from .. import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """`torch.cuda.amp.autocast(enabled, dtype, cache_enabled)`: `autocast("cuda", ...)`, float16 by default.

    Example:
        >>> import warnings
        >>> import tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     with tp.cuda.amp.autocast():
        ...         on = tp.is_autocast_enabled("cuda")
        >>> on == tp.cuda.is_available()
        True
    """

    def __init__(self, enabled: bool = True, dtype=_dtype.float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """`torch.cuda.amp.GradScaler(...)`: `amp.GradScaler("cuda", ...)`.

    Example:
        >>> import warnings
        >>> import tapeflow as tp
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     print(tp.cuda.amp.GradScaler(init_scale=1024.0).get_scale() in (1.0, 1024.0))
        True
    """

    def __init__(self, init_scale: float = 65536.0, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
