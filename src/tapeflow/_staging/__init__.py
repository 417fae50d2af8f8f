"""The staging layer: how eager tapeflow code becomes a JAX function.

`boundary` converts between Tensors and arrays (pytrees included) and runs a
user's function as JAX code: a region the user took off the tape stops JAX's
gradients too, while a user's grad mode outside the transform does not leak in.
"""

from .boundary import jax_region, pure, to_arrays, to_tensors

__all__ = ["jax_region", "pure", "to_arrays", "to_tensors"]
