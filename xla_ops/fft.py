"""Discrete Fourier transforms (PyTorch's `torch.fft`), in pure JAX.

Three ops, as PyTorch's three kernels (and node names): a real input transformed to a complex output
(`fft_r2c`: `rfft`, or the full spectrum of a real signal), a complex transform (`fft_c2c`: `fft`, `ifft`)
and a Hermitian spectrum transformed back to a real signal (`fft_c2r`: `irfft`). `s` gives the signal sizes
along `axes` (zero-padded or trimmed first, as `torch.fft`'s `n` / `s`), `norm` is "backward", "ortho" or
"forward". The VJPs are derived with JAX (the table's complex convention makes them PyTorch's).
"""

from __future__ import annotations

import jax.numpy as jnp

from ._op import op

__all__ = ["fft_r2c", "fft_c2c", "fft_c2r"]


def _r2c(x, s, axes, norm, onesided, forward):
    if onesided:
        return jnp.fft.rfftn(x, s=s, axes=axes, norm=norm)
    return (jnp.fft.fftn if forward else jnp.fft.ifftn)(x, s=s, axes=axes, norm=norm)


def _c2c(x, s, axes, norm, forward):
    return (jnp.fft.fftn if forward else jnp.fft.ifftn)(x, s=s, axes=axes, norm=norm)


def _c2r(x, s, axes, norm):
    return jnp.fft.irfftn(x, s=s, axes=axes, norm=norm)


fft_r2c = op("fft_r2c", _r2c, node="FftR2CBackward0")
fft_c2c = op("fft_c2c", _c2c, node="FftC2CBackward0")
fft_c2r = op("fft_c2r", _c2r, node="FftC2RBackward0")
