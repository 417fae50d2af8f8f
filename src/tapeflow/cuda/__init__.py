"""`tapeflow.cuda`: the device-agnostic idioms of `torch.cuda`, answered from what JAX sees.

`is_available()` is true only when JAX has a GPU backend; `device("cuda")` then means JAX's GPU.

Example:
    >>> import tapeflow as tp
    >>> dev = "cuda" if tp.cuda.is_available() else "cpu"
    >>> tp.ones(2, device=dev).device.type in ("cuda", "cpu")
    True
"""

from __future__ import annotations

import jax

__all__ = ["is_available", "device_count", "current_device", "get_device_name", "synchronize", "manual_seed",
           "manual_seed_all", "empty_cache", "is_bf16_supported", "memory_allocated", "max_memory_allocated"]


def _gpus() -> list:
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def is_available() -> bool:
    """Whether JAX has a GPU."""
    return bool(_gpus())


def device_count() -> int:
    """How many GPUs JAX sees."""
    return len(_gpus())


def current_device() -> int:
    """The index of the default GPU (0)."""
    if not is_available():
        raise RuntimeError("Found no NVIDIA driver on your system (JAX has no GPU backend): use device='cpu'")
    return 0


def get_device_name(device=None) -> str:
    """The GPU's name, as JAX reports it."""
    gpus = _gpus()
    if not gpus:
        raise RuntimeError("Found no NVIDIA driver on your system (JAX has no GPU backend)")
    return gpus[0 if device is None else int(getattr(device, "index", device) or 0)].device_kind


def synchronize(device=None) -> None:
    """Wait for all dispatched work to finish."""
    jax.effects_barrier()


def manual_seed(seed: int) -> None:
    """Seed the generator (tapeflow has one generator for every device)."""
    from ._factories import manual_seed as _seed

    _seed(seed)


manual_seed_all = manual_seed


def empty_cache() -> None:
    """Accepted: JAX manages device memory itself."""


def is_bf16_supported() -> bool:
    return is_available()


def memory_allocated(device=None) -> int:
    """Bytes in use on the GPU, from JAX's memory statistics (0 without a GPU)."""
    gpus = _gpus()
    stats = gpus[0].memory_stats() if gpus else None
    return int(stats.get("bytes_in_use", 0)) if stats else 0


def max_memory_allocated(device=None) -> int:
    gpus = _gpus()
    stats = gpus[0].memory_stats() if gpus else None
    return int(stats.get("peak_bytes_in_use", 0)) if stats else 0


def __getattr__(name: str):
    if name == "amp":  # (`torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`: PyTorch's older spellings)
        import importlib

        return importlib.import_module(f"{__name__}.amp")
    raise AttributeError(f"module 'tapeflow.cuda' has no attribute '{name}'")
