"""The short-time Fourier transform and its inverse under PyTorch's names and conventions (`stft`, `istft`).

Both are written with tapeflow's own ops (padding, `unfold`, `fft`, `fold`), so they run on every path and
differentiate like any composition of ops.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from . import fft as _fft
from ._dtype import SCALAR_NAMES
from ._ops._checks import staged_check, staging_checks
from ._tensor import Tensor

__all__ = ["stft", "istft"]


def _flag(v) -> str:
    return "None" if v is None else str(int(v))


def _window_text(window) -> str:
    return "None" if window is None else f"{window.type()}{{[{', '.join(map(str, window.shape))}]}}"


def _window(window, win_length: int, n_fft: int, like: Tensor, call: str) -> Tensor | None:
    """The window, zero-padded on both sides to `n_fft` (None: a rectangular one of `win_length`)."""
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None:
        if window.ndim != 1 or window.shape[0] != win_length:
            raise RuntimeError(f"{call} : expected a 1D window tensor of size equal to win_length={win_length}, "
                               f"but got window with size {list(window.shape)}")
    if win_length == n_fft:
        return window
    from ._factories import ones
    from .nn import functional as F

    w = window if window is not None else ones(win_length, dtype=like.dtype.to_real() if like.is_complex()
                                               else like.dtype)
    left = (n_fft - win_length) // 2
    return F.pad(w, (left, n_fft - win_length - left))


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
         center: bool = True, pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform, as `torch.stft`: frames of `n_fft` samples `hop_length` apart (the
    signal padded by `n_fft // 2` on both sides with `pad_mode` when `center`), each multiplied by `window` and
    Fourier transformed; the result is `(freq, frames)`, or `(batch, freq, frames)` for a batch of signals.

    Example:
        >>> import tapeflow as tp
        >>> s = tp.stft(tp.arange(16.0), n_fft=8, hop_length=4, window=tp.hann_window(8), return_complex=True)
        >>> s.shape, s.dtype
        (tapeflow.Size([5, 5]), tapeflow.complex64)
    """
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if align_to_window:
        raise NotImplementedError("tapeflow: stft(align_to_window=True) is not supported; pad the signal by "
                                  "(n_fft - win_length) // 2 on the left and pass align_to_window=False")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    length = input.shape[-1] + (2 * (n_fft // 2) if center else 0) if input.ndim else 0
    # (PyTorch's errors name the call: the input as padded, the hop and window length it settled on)
    call = (f"stft({input.type()}[{', '.join(map(str, (*input.shape[:-1], length)))}], n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win}, window={_window_text(window)}, normalized={int(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={int(return_complex)}, "
            f"align_to_window={_flag(align_to_window)})")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{call} : expected a 1D or 2D tensor")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if center:
        from .nn import functional as F

        pad = n_fft // 2
        x = F.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    if not 0 < n_fft <= x.shape[-1]:
        raise RuntimeError(f"{call} : expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{call} : expected hop_length > 0, but got hop_length={hop}")
    w = _window(window, win, n_fft, x, call)
    frames = x.unfold(-1, n_fft, hop)  # (batch, frames, n_fft)
    if w is not None:
        frames = frames * w
    if onesided is None:
        onesided = not (frames.is_complex() or (w is not None and w.is_complex()))
    elif onesided and frames.is_complex():
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    spec = _fft.rfft(frames, dim=-1) if onesided else _fft.fft(frames, dim=-1)
    if normalized:
        spec = spec * (1.0 / math.sqrt(n_fft))
    spec = spec.transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    if return_complex:
        return spec
    from ._ops import view_as_real

    return view_as_real(spec)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
          center: bool = True, normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of `stft`, as `torch.istft`: each frame inverse-transformed, multiplied by the window and
    added where it overlaps its neighbours, divided by the overlapped squared window (which must not vanish
    anywhere: PyTorch's NOLA check), the `center` padding cut off, and cut or zero-padded to `length`.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(64)
        >>> w = tp.hann_window(16)
        >>> y = tp.istft(tp.stft(x, 16, 4, window=w, return_complex=True), 16, 4, window=w, length=64)
        >>> bool(tp.allclose(x, y, atol=1e-5))
        True
    """
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    kind = ("CUDA" if input.device.type == "cuda" else "CPU") + SCALAR_NAMES[input.dtype.name]
    call = (f"istft({kind}Type[{', '.join(map(str, input.shape))}], n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_text(window)}, center={int(center)}, normalized={int(normalized)}, "
            f"onesided={_flag(onesided)}, length={length}, return_complex={int(return_complex)})")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{call} : expected a tensor with 2 or 3 dimensions of complex, but got {input.ndim}")
    spec = input if input.ndim == 3 else input.unsqueeze(0)
    n_frames = spec.shape[-1]
    if onesided is None:
        onesided = spec.shape[-2] != n_fft
    if onesided and n_fft // 2 + 1 != spec.shape[-2]:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft / 2 + 1 when onesided=True, but got {spec.shape[-2]}")
    if not onesided and n_fft != spec.shape[-2]:
        raise RuntimeError(f"{call} : expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {spec.shape[-2]}")
    if not 0 < hop <= win:
        raise RuntimeError(f"{call} : expected 0 < hop_length <= win_length")
    w = _window(window, win, n_fft, spec, call)
    if normalized:
        spec = spec * math.sqrt(n_fft)
    spec = spec.transpose(-1, -2)  # (batch, frames, freq)
    if onesided:
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = _fft.irfft(spec, n=n_fft, dim=-1)
    else:
        frames = _fft.ifft(spec, n=n_fft, dim=-1)
        if not return_complex:
            frames = frames.real
    from ._factories import ones
    from .nn import functional as F

    if w is None:
        w = ones(n_fft, dtype=frames.dtype.to_real() if frames.is_complex() else frames.dtype)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)

    def overlap_add(t):  # (batch, frames, n_fft) -> (batch, total)
        cols = t.transpose(-1, -2)
        return F.fold(cols, output_size=(1, total), kernel_size=(1, n_fft), stride=(1, hop)).reshape(t.shape[0], total)

    if frames.is_complex():
        from ._ops import complex as _complex

        y = _complex(overlap_add(frames.real), overlap_add(frames.imag))
    else:
        y = overlap_add(frames)
    envelope = overlap_add((w * w).expand(1, n_frames, n_fft))[0]
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = min(start + length, total)
    y, envelope = y[:, start:end], envelope[start:end]
    # PyTorch's NOLA check, worded as PyTorch prints it: on the host eagerly (one read of a boolean), staged
    # into the program under `tp.interop.checked`, skipped in other traces (where the window is traced).
    nola = lambda: RuntimeError(f"{call} window overlap add min: 1\n[ CPUBoolType{{}} ]")  # noqa: E731
    gaps = envelope.abs() < 1e-11
    if staging_checks(envelope):
        staged_check(~jnp.any(gaps._raw), nola)
    elif not isinstance(gaps._raw, jax.core.Tracer) and bool(gaps.any()):
        raise nola()
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        y = F.pad(y, (0, length - y.shape[-1]))
    return y.squeeze(0) if input.ndim == 2 else y


Tensor.stft = stft
Tensor.istft = istft
