"""`tapeflow.mps`: `torch.mps`'s availability idioms; tapeflow runs on what JAX sees, never on Apple's MPS.

Example:
    >>> import tapeflow as tp
    >>> tp.mps.is_available(), tp.mps.device_count()
    (False, 0)
"""

from __future__ import annotations

__all__ = ["is_available", "device_count"]


def is_available() -> bool:
    """False: programs that ask pick another device.

    Example:
        >>> import tapeflow as tp
        >>> tp.mps.is_available()
        False
    """
    return False


def device_count() -> int:
    """0.

    Example:
        >>> import tapeflow as tp
        >>> tp.mps.device_count()
        0
    """
    return 0
