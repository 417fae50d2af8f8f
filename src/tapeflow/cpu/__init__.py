"""`tapeflow.cpu`: the `torch.cpu` idioms (the CPU is always there) and `torch.cpu.amp.autocast`.

Example:
    >>> import tapeflow as tp
    >>> tp.cpu.is_available(), tp.cpu.device_count()
    (True, 1)
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "current_device", "synchronize", "amp"]


def is_available() -> bool:
    """Always true.

    Example:
        >>> import tapeflow as tp
        >>> tp.cpu.is_available()
        True
    """
    return True


def device_count() -> int:
    """One CPU device, as PyTorch counts it.

    Example:
        >>> import tapeflow as tp
        >>> tp.cpu.device_count()
        1
    """
    return 1


def current_device() -> str:
    """`"cpu"`.

    Example:
        >>> import tapeflow as tp
        >>> tp.cpu.current_device()
        'cpu'
    """
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for on the CPU (as in PyTorch); `tp.cuda.synchronize` waits for device work.

    Example:
        >>> import tapeflow as tp
        >>> tp.cpu.synchronize()
    """


from . import amp  # noqa: E402
