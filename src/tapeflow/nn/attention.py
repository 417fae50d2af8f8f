"""`torch.nn.attention`: which scaled-dot-product-attention backends `scaled_dot_product_attention` may use.

tapeflow has one implementation (XLA's), which stands for every backend PyTorch's build for the same
device has: on the CPU, the math backend (always applicable) and the flash backend (4-D inputs, the same
head size for values as for queries, no dropout). Turning backends off with `sdpa_kernel` (or
`torch.backends.cuda.enable_*_sdp`) therefore fails exactly where PyTorch fails — "No available kernel"
when the flash backend is the only one left and cannot take the inputs, "No viable backend" when none
that the device has is left — and otherwise gives the same numbers.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

from .. import backends as _backends

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """A scaled-dot-product-attention backend."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash", SDPBackend.EFFICIENT_ATTENTION:
           "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.OVERRIDEABLE: "overrideable"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False) -> Iterator[None]:
    """Within the block, `scaled_dot_product_attention` may use only `backends` (one `SDPBackend` or a
    list); the switches are restored afterwards.

    Arguments:
        backends: the backends allowed.
        set_priority: the list is also an order of preference (one implementation here: accepted).

    Example:
        >>> import tapeflow as tp
        >>> from tapeflow.nn.attention import SDPBackend, sdpa_kernel
        >>> q = tp.randn(1, 2, 3, 4)
        >>> with sdpa_kernel(SDPBackend.MATH):
        ...     tp.nn.functional.scaled_dot_product_attention(q, q, q).shape
        tapeflow.Size([1, 2, 3, 4])
        >>> try:
        ...     with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        ...         _ = tp.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
        ... except RuntimeError as e:
        ...     print(e)
        No available kernel.  Aborting execution.
    """
    chosen = list(backends) if isinstance(backends, (list, tuple)) else [backends]
    if not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    switches = _backends._sdp
    saved = dict(switches)
    switches.update({name: b in chosen for b, name in _SWITCH.items()})
    try:
        yield
    finally:
        switches.clear()
        switches.update(saved)
