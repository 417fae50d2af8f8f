"""The staging layer: how eager tapeflow code becomes JAX functions and cached XLA programs."""

from .boundary import pure, to_arrays, to_tensors

__all__ = ["pure", "to_arrays", "to_tensors"]
