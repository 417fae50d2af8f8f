"""Unary maths: exp, log, trigonometry, rounding, ... (integer inputs promote to float where the result is fractional)."""

from __future__ import annotations

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from ._args import _to_float


def _unary(op, floating: bool, name: str):
    if floating:
        def f(input):
            return dispatch(op, (_to_float(input),))
    elif name in _BOOL_AS:
        def f(input):
            if input._raw.dtype.kind == "b":  # PyTorch: sign(bool) is itself, square(bool) an int64
                return input.clone() if name == "sign" else dispatch(op, (input.to(_dtype.int64),))
            return dispatch(op, (input,))
    else:
        def f(input):
            return dispatch(op, (input,))
    f.__name__ = f.__qualname__ = name
    summary, example, result = _UNARY_DOCS[name]
    f.__doc__ = _example_doc(f"Elementwise {summary}.", f"tp.{name}(tp.tensor({example}))", result)
    return f


_BOOL_AS = ("sign", "square")


def _example_doc(summary: str, call: str, result: str) -> str:
    return f"{summary}\n\nExample:\n    >>> {call}\n    {result}\n"


# name: (what it computes, an example input, what tapeflow prints for it); the doctests check the last column.
_UNARY_DOCS = {
    "exp": ("`e ** input`", "[0.0, 1.0, 2.0]", "tensor([1.0000, 2.7183, 7.3891])"),
    "exp2": ("`2 ** input`", "[0.0, 1.0, 3.0]", "tensor([1., 2., 8.])"),
    "expm1": ("`exp(input) - 1`, accurate near 0", "[0.0, 0.5, 1.0]", "tensor([0.0000, 0.6487, 1.7183])"),
    "log": ("natural logarithm", "[1.0, 2.0, 0.0]", "tensor([0.0000, 0.6931,   -inf])"),
    "log2": ("base-2 logarithm", "[1.0, 2.0, 8.0]", "tensor([0., 1., 3.])"),
    "log10": ("base-10 logarithm", "[1.0, 10.0, 1000.0]", "tensor([0., 1., 3.])"),
    "log1p": ("`log(1 + input)`, accurate near 0", "[0.0, 0.5, 1.0]", "tensor([0.0000, 0.4055, 0.6931])"),
    "sqrt": ("square root", "[0.0, 4.0, 2.0]", "tensor([0.0000, 2.0000, 1.4142])"),
    "rsqrt": ("`1 / sqrt(input)`", "[1.0, 4.0, 0.25]", "tensor([1.0000, 0.5000, 2.0000])"),
    "reciprocal": ("`1 / input`", "[1.0, 4.0, -0.5]", "tensor([ 1.0000,  0.2500, -2.0000])"),
    "sin": ("sine (radians)", "[0.0, 0.5, 1.0]", "tensor([0.0000, 0.4794, 0.8415])"),
    "cos": ("cosine (radians)", "[0.0, 0.5, 1.0]", "tensor([1.0000, 0.8776, 0.5403])"),
    "tan": ("tangent (radians)", "[0.0, 0.7854, -0.7854]", "tensor([ 0.0000,  1.0000, -1.0000])"),
    "tanh": ("hyperbolic tangent", "[-1.0, 0.0, 1.0]", "tensor([-0.7616,  0.0000,  0.7616])"),
    "sigmoid": ("logistic sigmoid `1 / (1 + exp(-input))`", "[-1.0, 0.0, 1.0]", "tensor([0.2689, 0.5000, 0.7311])"),
    "asin": ("inverse sine (`arcsin` is the same function)", "[-1.0, 0.0, 0.5]", "tensor([-1.5708,  0.0000,  0.5236])"),
    "acos": ("inverse cosine (`arccos` is the same function)", "[-1.0, 0.0, 0.5]", "tensor([3.1416, 1.5708, 1.0472])"),
    "atan": ("inverse tangent (`arctan` is the same function)", "[-1.0, 0.0, 1.0]", "tensor([-0.7854,  0.0000,  0.7854])"),
    "sinh": ("hyperbolic sine", "[-1.0, 0.0, 1.0]", "tensor([-1.1752,  0.0000,  1.1752])"),
    "cosh": ("hyperbolic cosine", "[-1.0, 0.0, 1.0]", "tensor([1.5431, 1.0000, 1.5431])"),
    "asinh": ("inverse hyperbolic sine (`arcsinh` is the same function)", "[-1.0, 0.0, 1.0]", "tensor([-0.8814,  0.0000,  0.8814])"),
    "acosh": ("inverse hyperbolic cosine, for `input >= 1` (`arccosh` too)", "[1.0, 2.0, 10.0]", "tensor([0.0000, 1.3170, 2.9932])"),
    "atanh": ("inverse hyperbolic tangent (`arctanh` is the same function)", "[-0.5, 0.0, 0.5]", "tensor([-0.5493,  0.0000,  0.5493])"),
    "erf": ("error function", "[-1.0, 0.0, 1.0]", "tensor([-0.8427,  0.0000,  0.8427])"),
    "erfc": ("complementary error function `1 - erf(input)`", "[-1.0, 0.0, 1.0]", "tensor([1.8427, 1.0000, 0.1573])"),
    "erfinv": ("inverse error function, for `-1 < input < 1`", "[-0.5, 0.0, 0.5]", "tensor([-0.4769,  0.0000,  0.4769])"),
    "lgamma": ("logarithm of the absolute value of the gamma function", "[0.5, 3.0, 5.0]", "tensor([0.5724, 0.6931, 3.1781])"),
    "digamma": ("derivative of `lgamma`", "[0.5, 1.0, 5.0]", "tensor([-1.9635, -0.5772,  1.5061])"),
    "logit": ("`log(input / (1 - input))`, the inverse of `sigmoid`", "[0.25, 0.5, 0.75]", "tensor([-1.0986,  0.0000,  1.0986])"),
    "abs": ("absolute value (`absolute` is the same function)", "[-1.5, 0.0, 2.0]", "tensor([1.5000, 0.0000, 2.0000])"),
    "sign": ("-1, 0 or 1 by the sign of each element", "[-1.5, 0.0, 2.0]", "tensor([-1.,  0.,  1.])"),
    "floor": ("largest integer not above each element", "[-1.5, 0.5, 2.0]", "tensor([-2.,  0.,  2.])"),
    "ceil": ("smallest integer not below each element", "[-1.5, 0.5, 2.0]", "tensor([-1.,  1.,  2.])"),
    "trunc": ("rounding towards zero (`fix` is the same function)", "[-1.5, 0.5, 2.7]", "tensor([-1.,  0.,  2.])"),
    "frac": ("fractional part, `input - trunc(input)`", "[-1.5, 0.25, 2.0]", "tensor([-0.5000,  0.2500,  0.0000])"),
    "relu": ("`max(input, 0)`; the gradient at 0 is 0", "[-1.0, 0.0, 2.0]", "tensor([0., 0., 2.])"),
    "square": ("`input * input`", "[-1.5, 0.0, 2.0]", "tensor([2.2500, 0.0000, 4.0000])"),
}


_FLOATING = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
             "tan", "tanh", "sigmoid", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf",
             "erfc", "erfinv", "lgamma", "digamma", "logit"]
_KEEP = ["abs", "sign", "floor", "ceil", "trunc", "frac", "relu", "square"]
for _name in _FLOATING + _KEEP:
    globals()[_name] = _unary(getattr(X, _name), _name in _FLOATING, _name)
_logit = logit  # noqa: F821


def logit(input, eps=None):
    """`log(p / (1 - p))`, the inverse of `sigmoid`; with `eps`, `p` is first clamped to `[eps, 1 - eps]`
    (the gradient is 0 outside that interval).

    Example:
        >>> tp.logit(tp.tensor([0.25, 0.5, 0.75]))
        tensor([-1.0986,  0.0000,  1.0986])
        >>> tp.logit(tp.tensor([0.0, 1.0]), eps=0.25)
        tensor([-1.0986,  1.0986])
    """
    if eps is None:
        return _logit(input)
    return dispatch(X.logit, (_to_float(input),), (("eps", float(eps)),))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh  # noqa: F821
absolute = abs  # noqa: F821
fix = trunc  # noqa: F821
__all__ = [*_FLOATING, *_KEEP, "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "absolute", "fix",
           "round", "nan_to_num"]


def round(input, *, decimals: int = 0):
    """Round half to even; `decimals` rounds to that many decimal places.

    Example:
        >>> tp.round(tp.tensor([0.5, 1.5, 2.567]))
        tensor([0., 2., 3.])
        >>> tp.round(tp.tensor([2.567]), decimals=2)
        tensor([2.5700])
    """
    return dispatch(X.round, (input,), (("decimals", decimals),) if decimals else ())


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace NaN with `nan`, and infinities with `posinf`/`neginf` (default: the dtype's largest and smallest values).

    Example:
        >>> tp.nan_to_num(tp.tensor([float("nan"), 1.0, float("inf")]), nan=0.0, posinf=9.0)
        tensor([0., 1., 9.])
    """
    return dispatch(X.nan_to_num, (input,), (("nan", nan), ("posinf", posinf), ("neginf", neginf)))
