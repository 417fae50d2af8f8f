"""Bridges between tapeflow and JAX: pytrees, conversions both ways, `compile`, equinox, DLPack.

Example:
    >>> import jax, tapeflow as tp
    >>> jax.tree.leaves({"w": tp.ones(2)})
    [Array([1., 1.], dtype=float32)]
"""

from .checked import checked
from .compile import CompiledFunction, OptimizedModule, compile
from .convert import from_jax, to_jax
from .dlpack import from_dlpack, install_tensor_protocols
from .equinox_bridge import to_equinox
from .pytree import (
    register_known_types,
    register_module_type,
    register_optimizer_type,
    register_tensor_type,
)

__all__ = ["to_jax", "from_jax", "compile", "checked", "CompiledFunction", "OptimizedModule", "to_equinox", "from_dlpack",
           "register_tensor_type", "register_module_type", "register_optimizer_type", "register_known_types"]

register_known_types()
install_tensor_protocols()
