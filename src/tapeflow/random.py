"""`torch.random`: the global generator's seed and state, and `fork_rng`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import _factories
from ._factories import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda") -> Iterator[None]:
    """Run a block with the global generator's state saved and restored afterwards: random draws inside it
    (and any seeding) leave the numbers drawn after it unchanged.

    Arguments:
        devices: accelerator devices whose generators are forked too (tapeflow has one generator for every
            device, so it is forked whatever this says).
        enabled: False makes it a no-op.
        device_type: the accelerator type `devices` refers to (accepted for PyTorch's signature).

    Example:
        >>> import tapeflow as tp
        >>> _ = tp.manual_seed(0)
        >>> with tp.random.fork_rng():
        ...     _ = tp.rand(3)
        >>> a = tp.rand(2); _ = tp.manual_seed(0)
        >>> bool((tp.rand(2) == a).all())
        True
    """
    if not enabled:
        yield
        return
    gen = _factories.default_generator
    saved = (gen.mt.state(), gen.key, gen._seed)
    try:
        yield
    finally:
        gen.mt.set_state(saved[0])
        gen.key, gen._seed = saved[1], saved[2]
