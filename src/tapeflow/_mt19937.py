"""PyTorch's CPU random-number stream, so that a seeded program draws PyTorch's numbers.

PyTorch's CPU generator is a 32-bit Mersenne Twister seeded with the low 32 bits of the seed (its default
seed when none is set: 67280421310721). Its samplers turn raw draws into values as below. Which draws come
from this stream (the draws PyTorch makes on the CPU, eager or staged through a `DrawTape`) and which from
the generator's JAX key is decided in `_factories._stream`.

- uniform: the low 24 (float32; 53 for float64, from two draws, the first as high word) bits times 2^-24
  (2^-53), then `x * (high - low) + low` rounded once to the result's dtype (PyTorch's compiled kernels
  fuse the multiply and the add; so do the normals' `* std + mean`).
- normal, float tensors of 16 or more elements: uniforms for every element, then Box-Muller on blocks of 16
  (`1 - u[j]` and `u[j + 8]` give elements j and j + 8); when the size is not a multiple of 16 the last 16
  elements are drawn again and transformed once more.
- normal, fewer than 16 elements: Box-Muller on two float64 uniforms per pair, the sine half kept for the
  next draw (also across calls, until the generator is reseeded).
- integers in [low, high): `draw % (high - low) + low`, with 64-bit draws when the range needs them.
- float16/bfloat16: a uniform is a float32 one rounded (one that rounds up to `high` becomes `low`); normals
  are computed in float32 and rounded, except that the redrawn last block takes the stream's next 16
  uniforms after the whole blocks (the leftover ones, then 16 - n % 16 new ones); samplers built on float64
  draws round through float32, as PyTorch converts a double to a half type.
- exponential: `-log1p(-u) / lambda` from a float64 uniform; Bernoulli(p): a float64 uniform below p (a
  float32 one for a tensor of probabilities); permutations: Fisher-Yates, element i swapped with one drawn
  from [i, n).
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed
_DIGITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}  # mantissa bits a uniform keeps
_HALF = frozenset(("float16", "bfloat16"))


class MT19937:
    """One PyTorch CPU generator state: the twister and the Box-Muller sample left over."""

    __slots__ = ("_bits", "next_double_normal")

    def __init__(self, seed: int = DEFAULT_SEED):
        self.seed(seed)

    def seed(self, seed: int) -> None:
        self._bits = np.random.RandomState(int(seed) & 0xFFFFFFFF)._bit_generator  # (`init_genrand`, as PyTorch)
        self.next_double_normal = None

    # -- state, for get_rng_state / set_rng_state -----------------------------------------------------------
    def state(self) -> np.ndarray:
        """The whole state as bytes: 624 words, the position, and the left-over normal sample."""
        st = self._bits.state["state"]
        cached = self.next_double_normal
        extra = np.array([st["pos"], cached is not None], np.int64).view(np.uint8)
        return np.concatenate([np.asarray(st["key"], np.uint32).view(np.uint8), extra,
                               np.array([cached or 0.0], np.float64).view(np.uint8)])

    def set_state(self, data: np.ndarray) -> None:
        data = np.ascontiguousarray(data, np.uint8)
        key = data[:2496].view(np.uint32)
        pos, has_cached = data[2496:2512].view(np.int64)
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key.copy(), "pos": int(pos)}}
        self.next_double_normal = float(data[2512:2520].view(np.float64)[0]) if has_cached else None

    # -- raw draws ------------------------------------------------------------------------------------------
    def random32(self, n: int) -> np.ndarray:
        return self._bits.random_raw(n).astype(np.uint64)

    def random64(self, n: int) -> np.ndarray:
        r = self.random32(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # -- samplers ---------------------------------------------------------------------------------------------
    def uniform(self, n: int, dtype: np.dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        dtype = np.dtype(dtype)
        if dtype.name in _HALF:
            return self._uniform_half(n, dtype, low, high)
        digits = _DIGITS[dtype.name]
        acc = np.float64 if digits == 53 else np.float32
        bits = self.random64(n) if digits == 53 else self.random32(n)
        x = (bits & np.uint64((1 << digits) - 1)).astype(acc) * acc(2.0**-digits)
        lo = acc(dtype.type(low))
        return fma(x, acc(dtype.type(high)) - lo, lo).astype(dtype)

    def _uniform_half(self, n: int, dtype: np.dtype, low: float, high: float) -> np.ndarray:
        """float16/bfloat16 uniforms: a float32 one, cast; one that rounds up to `high` becomes `low`."""
        lo, hi = np.float32(low), np.float32(high)
        x = self.uniform(n, np.dtype(np.float32))
        out = fma(x, hi - lo, lo).astype(dtype)
        return np.where(out >= dtype.type(high), dtype.type(low), out)

    def normal(self, n: int, dtype: np.dtype, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        dtype = np.dtype(dtype)
        if n < 16:
            return _cast(fma(np.array([self._one_normal() for _ in range(n)], np.float64), std, mean), dtype)
        acc = np.float64 if dtype == np.float64 else np.float32  # (float16/bfloat16: float32 throughout)
        uniforms = np.dtype(np.float32) if dtype.name in _HALF else dtype
        mean, std = acc(mean), acc(std)
        data = self.uniform(n, uniforms).astype(acc)
        whole = n - n % 16
        data[:whole] = _box_muller_16(data[:whole].reshape(-1, 16), mean, std, acc).reshape(-1)
        if n % 16:  # the last 16 again: from 16 new uniforms (float16/bfloat16: the stream's next 16 from `whole`)
            if dtype.name in _HALF:
                last = np.concatenate([data[whole:], self.uniform(16 - n % 16, uniforms).astype(acc)])
            else:
                last = self.uniform(16, uniforms).astype(acc)
            data[n - 16:] = _box_muller_16(last.reshape(1, 16), mean, std, acc)[0]
        return data.astype(dtype)

    def exponential(self, n: int, dtype: np.dtype, lambd: float = 1.0) -> np.ndarray:
        """`-log(1 - u) / lambd` from float64 uniforms, in float64, then cast."""
        return _cast(-1.0 / lambd * np.log1p(-self.uniform(n, np.dtype(np.float64))), np.dtype(dtype))

    def cauchy(self, n: int, dtype: np.dtype, median: float = 0.0, sigma: float = 1.0) -> np.ndarray:
        """`median + sigma * tan(pi * (u - 1/2))` from float64 uniforms, then cast."""
        u = self.uniform(n, np.dtype(np.float64))
        return _cast(median + sigma * np.tan(math.pi * (u - 0.5)), np.dtype(dtype))

    def log_normal(self, n: int, dtype: np.dtype, mean: float = 1.0, std: float = 2.0) -> np.ndarray:
        """`exp` of normals drawn one by one (Box-Muller pairs, whatever the size), then cast."""
        return _cast(np.exp(fma(np.array([self._one_normal() for _ in range(n)], np.float64), std, mean)),
                     np.dtype(dtype))

    def geometric(self, n: int, dtype: np.dtype, p: float) -> np.ndarray:
        """`ceil(log(u) / log1p(-p))` from float64 uniforms: trials up to the first success."""
        u = self.uniform(n, np.dtype(np.float64))
        return _cast(np.ceil(np.log(u) / math.log1p(-p)), np.dtype(dtype))

    def _one_normal(self) -> float:
        if self.next_double_normal is not None:
            v, self.next_double_normal = self.next_double_normal, None
            return v
        u1, u2 = self.uniform(2, np.float64)
        r = math.sqrt(-2.0 * math.log1p(-float(u2)))
        theta = 2.0 * math.pi * float(u1)
        self.next_double_normal = r * math.sin(theta)
        return r * math.cos(theta)

    def permutation(self, n: int) -> np.ndarray:
        """PyTorch's `randperm`: Fisher-Yates swaps, position i with one drawn from [i, n)."""
        out = list(range(n))
        if n < 0xFFFFFFFF // 20:
            picks = (self.random32(max(n - 1, 0)) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
            for i, z in enumerate(picks):
                j = i + z
                out[i], out[j] = out[j], out[i]
        else:  # (the variant PyTorch uses for huge n: 64-bit draws)
            for i, z in enumerate((self.random64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()):
                out[i] = out[z]
                out[z] = i
        return np.asarray(out, np.int64)

    def full_range(self, n: int, dtype: np.dtype) -> np.ndarray:
        """PyTorch's `random_()` without bounds: integers in [0, the dtype's max] (floats: [0, 2^mantissa])."""
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return (self.random32(n) & np.uint64(1)).astype(dtype)
        wide = dtype.name in ("int64", "float64")
        draws = self.random64(n) if wide else self.random32(n)
        top = (1 << _DIGITS[dtype.name]) + 1 if dtype.name in _DIGITS else int(np.iinfo(dtype).max) + 1
        return (draws % np.uint64(top)).astype(dtype)

    def integers(self, n: int, low: int, high: int, dtype: np.dtype) -> np.ndarray:
        span = high - low
        wide = span >= 1 << 32 and np.dtype(dtype).name in ("int64", "float64", "float32", "bfloat16")
        draws = self.random64(n) if wide else self.random32(n)
        return ((draws % np.uint64(span)).astype(np.int64) + low).astype(dtype)


def _box_muller_16(blocks: np.ndarray, mean, std, acc) -> np.ndarray:
    """PyTorch's `normal_fill_16` on each row of 16 uniforms."""
    u1, u2 = 1 - blocks[:, :8], blocks[:, 8:]
    radius = np.sqrt(acc(-2) * np.log(u1))
    theta = (2.0 * math.pi * u2.astype(np.float64)).astype(acc)  # (the angle is formed in double)
    return np.concatenate([fma(radius * np.cos(theta), std, mean), fma(radius * np.sin(theta), std, mean)], axis=1)


def _cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float64 draws in `dtype`; float16/bfloat16 through float32, as PyTorch converts a double to them."""
    if dtype.name in _HALF:
        return x.astype(np.float32).astype(dtype)
    return x.astype(dtype)


def fma(a, b, c) -> np.ndarray:
    """`a * b + c` rounded once, as PyTorch's CPU kernels compute it (the compiler fuses the multiply and
    add): float32 in float64, where the product is exact; float64 from the product's and the sum's exact
    error terms (Dekker's split, Knuth's two-sum)."""
    a = np.asarray(a)
    if a.dtype == np.float32:
        return _round_to_float32(a.astype(np.float64) * np.float64(b), np.float64(c))
    b, c = np.float64(b), np.float64(c)
    p = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    back = s - p
    s_err = (p - (s - back)) + (c - back)
    return s + (s_err + p_err)


def _round_to_float32(p, c) -> np.ndarray:
    """`p + c` (float64 arrays holding float32-exact products and addends) rounded once to float32: the
    float64 sum and its exact error (two-sum) settle the ties that rounding the float64 sum would break
    twice."""
    s = p + c
    back = s - p
    err = (p - (s - back)) + (c - back)
    r = s.astype(np.float32)
    lo = np.where(r.astype(np.float64) > s, np.nextafter(r, np.float32(-np.inf)), r)
    hi = np.nextafter(lo, np.float32(np.inf))
    tie = (s - lo.astype(np.float64) == hi.astype(np.float64) - s) & (err != 0)
    return np.where(tie, np.where(err > 0, hi, lo), r)


def _split(a):
    """`a` as a high and a low part of 26 bits each, whose products are exact in float64."""
    scaled = 134217729.0 * a  # (2^27 + 1)
    hi = scaled - (scaled - a)
    return hi, a - hi
