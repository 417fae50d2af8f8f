"""`tapeflow.accelerator`: `torch.accelerator`'s questions, answered from JAX's default backend.

Example:
    >>> import tapeflow as tp
    >>> tp.accelerator.is_available() == (tp.accelerator.current_accelerator() is not None)
    True
"""

from __future__ import annotations

import jax

from ._device import device, from_jax_device

__all__ = ["is_available", "current_accelerator", "device_count", "synchronize"]


def _accelerators() -> list:
    return [d for d in jax.devices() if d.platform != "cpu"]


def is_available() -> bool:
    """Whether JAX's default backend is an accelerator (GPU or TPU)."""
    return bool(_accelerators())


def current_accelerator(check_available: bool = False) -> device | None:
    """The accelerator as a `tapeflow.device` (`cuda` for a GPU, `tpu`), or None on a CPU-only machine."""
    accs = _accelerators()
    return device(from_jax_device(accs[0]).type) if accs else None


def device_count() -> int:
    return len(_accelerators())


def synchronize(device=None) -> None:
    jax.effects_barrier()
