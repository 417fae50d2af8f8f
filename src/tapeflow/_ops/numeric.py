"""Numerical recipes over samples, composed from other ops (so their gradients are those ops'): finite
differences (`diff`, `gradient`), covariance and correlation (`cov`, `corrcoef`), trapezoidal integration (`trapezoid`,
`trapz`, `cumulative_trapezoid`)."""

from __future__ import annotations

import warnings

import jax

from .. import _dtype
from .._tensor import Tensor
from ._args import _dim, _t, _to_float

__all__ = ["corrcoef", "cov", "cumulative_trapezoid", "diff", "gradient", "trapezoid", "trapz"]


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The `n`-th forward difference along `dim` (`out[i] = x[i + 1] - x[i]`, repeated `n` times), after joining
    `prepend` and `append` to `input` along `dim`. Booleans differ by exclusive or.

    Example:
        >>> tp.diff(tp.tensor([1, 4, 9, 16]))
        tensor([3, 5, 7])
        >>> tp.diff(tp.tensor([1, 4, 9, 16]), n=2, prepend=tp.tensor([0]))
        tensor([2, 2, 2])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _dim(dim, input.ndim)
    parts = [input]
    for extra, first in ((prepend, True), (append, False)):
        if extra is None:
            continue
        extra = _t(extra)
        if extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for k in range(input.ndim):
            if k != d and extra.shape[k] != input.shape[k]:
                raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                                   f"except along the differencing dimension; input.size({k}) = {input.shape[k]}, "
                                   f"but got tensor.size({k}) = {extra.shape[k]}")
        parts.insert(0 if first else len(parts), extra)
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = logical_xor(hi, lo) if x.dtype is _dtype.bool else hi - lo
    return x


# -- covariance -------------------------------------------------------------------------------------------------------
def _check_weights(w, name: str, observations: int, integral: bool) -> None:
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.ndim} "
                           "dimensions")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {observations}")
    kind_ok = (not w.dtype.is_floating_point and not w.dtype.is_complex) if integral else w.dtype.is_floating_point
    if not kind_ok:
        raise RuntimeError(f"cov(): expected {name} to have {'integral' if integral else 'floating point'} dtype but "
                           f"got {name} with {_dtype.SCALAR_NAMES[w.dtype.name]} dtype")
    if w.numel() and _known((w < 0).any().to(_dtype.float64)) > 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of `input` (observations in the columns; a 1-D input is
    one variable), with `correction` (1: Bessel's), integer frequency weights `fweights` and observation weights
    `aweights`.

    Example:
        >>> tp.cov(tp.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} "
                           "dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", observations, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", observations, False)
        w = aweights if w is None else w * aweights
    # As PyTorch: the mean is a sum over a count (integers sum exactly, then divide).
    total = observations if w is None else w.sum()
    mean = (x if w is None else x * w).sum(1, keepdim=True) / total
    if w is None or correction == 0:
        norm = total - correction
    elif aweights is None:
        norm = total - correction
    else:
        norm = total - correction * (w * aweights).sum() / total
    if _known(norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    xc = x - mean
    right = (xc * w if w is not None else xc).t().conj()
    return (xc.matmul(right) / norm).squeeze()


def _known(value) -> float:
    """A number's value, or a tensor's when it has one to read (1 for a traced or meta tensor: nothing to check)."""
    if not isinstance(value, Tensor):
        return float(value)
    data = value._data
    if value.is_meta or not isinstance(data, jax.Array) or isinstance(data, jax.core.Tracer):
        return 1.0
    return float(data)


def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of `input` (`cov` normalised by the
    standard deviations, clipped to `[-1, 1]`).

    Example:
        >>> tp.corrcoef(tp.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal()
    std = (std.real if std.dtype.is_complex else std).sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    if c.dtype.is_complex:
        return complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# -- trapezoidal rule ---------------------------------------------------------------------------------------------------
def _spacing(y, x, d):
    """The spacing between samples along `d`: from the sample points `x` (1-D, or shaped like `y`)."""
    x = _t(x)
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        return diff(x).reshape([-1 if k == d else 1 for k in range(y.ndim)])
    return diff(x, dim=d - y.ndim)


def _no_bool(name, y, x) -> None:
    if x is None:
        if y.dtype is _dtype.bool:
            raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    elif y.dtype is _dtype.bool or _t(x).dtype is _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")


def _ends(y, d):
    m = y.shape[d]
    return y.narrow(d, 0, m - 1), y.narrow(d, 1, m - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of the samples `y` along `dim` by the trapezoidal rule, at sample points `x` or with constant
    spacing `dx` (default 1).

    Example:
        >>> tp.trapezoid(tp.tensor([1.0, 2.0, 4.0]))
        tensor(4.5000)
        >>> tp.trapezoid(tp.tensor([1.0, 2.0, 4.0]), tp.tensor([0.0, 1.0, 3.0]))
        tensor(7.5000)
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got (Tensor, Tensor, dx=...), "
                        "pass either x or dx")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _dim(dim, y.ndim)
    if y.shape[d] == 0:  # (PyTorch's zeros before any other check, in the samples' dtype)
        if not (y.dtype.is_floating_point or y.dtype.is_complex):
            return y.new_zeros(tuple(n for k, n in enumerate(y.shape) if k != d))
        return y.sum(d) * 0
    _no_bool("trapezoid", y, x)
    y = _to_float(y)
    if x is None:
        step = 1 if dx is None else dx
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * step
    lo, hi = _ends(y, d)
    return (_spacing(y, x, d) * (lo + hi)).sum(d) / 2.0


def trapz(y, x=None, *, dx=None, dim=-1):
    """`trapezoid` under its older name.

    Example:
        >>> tp.trapz(tp.tensor([1.0, 2.0, 4.0]), dx=2.0)
        tensor(9.)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral of `y` along `dim` (one fewer element than `y` there).

    Example:
        >>> tp.cumulative_trapezoid(tp.tensor([1.0, 2.0, 4.0]))
        tensor([1.5000, 4.5000])
    """
    if x is not None:
        _dim(dim, y.ndim)  # (with sample points, PyTorch checks the dim first)
    _no_bool("cumulative_trapezoid", y, x)
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, y.ndim)
    y = _to_float(y)
    if y.shape[d] == 0:
        return y
    lo, hi = _ends(y, d)
    if x is None:
        step = 1 if dx is None else dx
        return ((lo + hi) * (step / 2.0)).cumsum(d)
    return (_spacing(y, x, d) * (lo + hi)).cumsum(d) / 2.0


# Sibling modules import each other; importing at the end lets every name above exist first.
from .complex_numbers import complex  # noqa: E402
from .elementwise import logical_xor  # noqa: E402
from .shape import cat  # noqa: E402


def gradient(input, *, spacing=1, dim=None, edge_order: int = 1):
    """The derivative of the samples `input` along each dimension of `dim` (default: all) by finite differences:
    central differences inside, one-sided ones of order `edge_order` (1 or 2) at the ends, as NumPy's `gradient`.

    Arguments:
        spacing: the distance between samples: a number, one number per dimension, or one tensor of sample
            coordinates per dimension (uneven spacing).
        dim: a dimension or a list of them.
        edge_order: the accuracy order of the differences at the ends.

    Returns:
        A tuple with one tensor per dimension.

    Example:
        >>> tp.gradient(tp.tensor([1.0, 4.0, 9.0, 16.0]))
        (tensor([3., 4., 6., 7.]),)
        >>> tp.gradient(tp.tensor([1.0, 4.0, 9.0]), spacing=(tp.tensor([0.0, 1.0, 3.0]),))
        (tensor([3.0000, 2.8333, 2.5000]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if input.dtype.name == "uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_dim(d, input.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {next(d for d in dims if dims.count(d) > 1)} appears multiple times in the list of dims")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim is None:
                raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                                   f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got a "
                                   f"list of length {len(spacing)}")
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    x = _to_float(input) if input.dtype.name != "bool" else input - input  # (bool: PyTorch's subtraction error)
    return tuple(_gradient_along(x, d, h, edge_order) for d, h in zip(dims, steps))


def _gradient_along(x, d, h, edge_order):
    n = x.shape[d]

    def part(start, length):
        return x.narrow(d, start, length)

    if not isinstance(h, Tensor):  # even spacing
        h = float(h)
        mid = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            lo = (part(1, 1) - part(0, 1)) / h
            hi = (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            lo = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / h
            hi = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / h
        return _cat_along([lo, mid, hi], d)
    shape = [1] * x.ndim
    shape[d] = -1
    steps = diff(_to_float(h)).reshape(shape)  # the gaps between the coordinates

    def gap(i):
        return steps.narrow(d, i, 1) if i >= 0 else steps.narrow(d, steps.shape[d] + i, 1)

    hs, hd = steps.narrow(d, 0, n - 2), steps.narrow(d, 1, n - 2)
    mid = (-hd / (hs * (hs + hd)) * part(0, n - 2) + (hd - hs) / (hs * hd) * part(1, n - 2)
           + hs / (hd * (hs + hd)) * part(2, n - 2))
    if edge_order == 1:
        lo = (part(1, 1) - part(0, 1)) / gap(0)
        hi = (part(n - 1, 1) - part(n - 2, 1)) / gap(-1)
    else:
        h0, h1, hm2, hm1 = gap(0), gap(1), gap(-2), gap(-1)
        lo = (-(2 * h0 + h1) / (h0 * (h0 + h1)) * part(0, 1) + (h0 + h1) / (h0 * h1) * part(1, 1)
              - h0 / (h1 * (h0 + h1)) * part(2, 1))
        hi = (hm1 / (hm2 * (hm2 + hm1)) * part(n - 3, 1) - (hm1 + hm2) / (hm2 * hm1) * part(n - 2, 1)
              + (2 * hm1 + hm2) / (hm1 * (hm2 + hm1)) * part(n - 1, 1))
    return _cat_along([lo, mid, hi], d)


def _cat_along(parts, d):
    from .shape import cat

    return cat(parts, d)
