"""PyTorch's `torch._foreach_*` functions: one op applied to every tensor of a list.

PyTorch fuses these into few kernels; here each is the tensor op applied tensor by tensor (with adaptive
eager, the ops of a step still reach XLA as one program), with PyTorch's argument forms, results and
errors. The second operand of a binary op is a number, a list of numbers (one per tensor), a 0-d tensor
or a list of tensors; `alpha` goes with the tensor forms of `add` and `sub`. An out-of-place function
returns a tuple; an in-place one (trailing underscore) writes each tensor and returns the list it was
given. Gradients flow through each tensor's own op (nodes are named after it, e.g. `MulBackward0`, where
PyTorch names one node per list, `ForeachMulBackward0List`).

Example:
    >>> import tapeflow as tp
    >>> params = [tp.ones(2), tp.ones(3)]
    >>> _ = tp._foreach_mul_(params, 0.5)
    >>> tp._foreach_add(params, [tp.ones(2), tp.ones(3)], alpha=2)
    (tensor([2.5000, 2.5000]), tensor([2.5000, 2.5000, 2.5000]))
"""

from __future__ import annotations

import numbers

from . import _ops
from ._tensor import Tensor

__all__: list[str] = []

_SCALAR, _SCALARS, _TENSOR, _LIST = "scalar", "scalars", "tensor", "list"

# PyTorch's overloads of each kind of function, as its argument parser lists them in a TypeError.
_SIGNATURES = {
    "alpha": ("(tuple of Tensors self, Number scalar)", "(tuple of Tensors self, tuple of Scalars scalars)",
              "(tuple of Tensors self, Tensor other, *, Number alpha = 1)",
              "(tuple of Tensors self, tuple of Tensors other, *, Number alpha = 1)"),
    "binary": ("(tuple of Tensors self, Number scalar)", "(tuple of Tensors self, tuple of Scalars scalars)",
               "(tuple of Tensors self, Tensor other)", "(tuple of Tensors self, tuple of Tensors other)"),
    "pointwise": ("(tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, Number value = 1)",
                  "(tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, Tensor scalars)",
                  "(tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, tuple of Scalars "
                  "scalars)"),
    "lerp": ("(tuple of Tensors self, tuple of Tensors tensors1, Number weight)",
             "(tuple of Tensors self, tuple of Tensors tensors1, tuple of Scalars weight)",
             "(tuple of Tensors self, tuple of Tensors tensors1, tuple of Tensors weights)"),
}


def _invalid(name: str, kind: str, *args, **kwargs) -> TypeError:
    def describe(v):
        if isinstance(v, (list, tuple)):
            return type(v).__name__
        return "Tensor" if isinstance(v, Tensor) else type(v).__name__

    got = ", ".join([describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()])
    lines = "\n".join(f" * {s}" for s in _SIGNATURES[kind])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f"{lines}\n")


def _tensors(name: str, kind: str, xs, *rest) -> list:
    if not isinstance(xs, (list, tuple)) or not all(isinstance(t, Tensor) for t in xs):
        raise _invalid(name, kind, xs, *rest)
    if not xs:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(xs)


def _same_length(tensors: list, others) -> list:
    if len(others) != len(tensors):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(tensors)} and {len(others)}")
    return list(others)


def _operands(name: str, kind: str, tensors: list, other) -> tuple[list, str]:
    """One operand per tensor, and which form `other` has: a number, numbers, a 0-d tensor or tensors."""
    if isinstance(other, Tensor):
        if other.ndim != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.ndim} dimensions and "
                               f"{other.numel()} elements.")
        return [other] * len(tensors), _TENSOR
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, Tensor) for o in other):
            return _same_length(tensors, other), _LIST
        if all(isinstance(o, numbers.Number) for o in other):
            if len(other) != len(tensors):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            return list(other), _SCALARS
    elif isinstance(other, numbers.Number):
        return [other] * len(tensors), _SCALAR
    raise _invalid(name, kind, tensors, other)


def _export(name: str, fn, doc: str) -> None:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    globals()[name] = fn
    __all__.append(name)


def _doc(summary: str, check: str) -> str:
    """A docstring whose example checks the function against the tensor op it applies."""
    return f"""{summary}

    Example:
        >>> import tapeflow as tp
        >>> xs = [tp.tensor([0.5, 0.25]), tp.tensor([0.75])]
        >>> {check}
        True
    """


# -- ops of one tensor -----------------------------------------------------------------------------------------
_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")


def _unary(op: str) -> None:
    name = f"_foreach_{op}"

    def out_of_place(self):
        return tuple(getattr(t, op)() for t in _tensors(name, "binary", self))

    def in_place(self):
        for t in _tensors(name + "_", "binary", self):
            getattr(t, op + "_")()
        return self

    _export(name, out_of_place, _doc(f"`{op}` of each tensor, as a tuple.",
                                     f"all(tp.equal(y, x.{op}()) for y, x in zip(tp.{name}(xs), xs))"))
    _export(name + "_", in_place, _doc(f"`{op}_` on each tensor, in place; returns the list.",
                                       f"tp.{name}_(xs) is xs"))


# -- ops of a tensor and a second operand ------------------------------------------------------------------------
def _binary(op: str, *, alpha: bool = False, scalar_op: str | None = None, tensor_form: bool = False) -> None:
    """`op(t, other)` for each tensor; `scalar_op` (a method) where the operand is a number (PyTorch's
    `maximum`/`minimum` with numbers are `clamp_min`/`clamp_max`). Without a `tensor_form` overload in
    PyTorch, a 0-d tensor operand is read as the number it holds (as PyTorch's argument parser reads it)."""
    name = f"_foreach_{op}"
    kind = "alpha" if alpha else "binary"

    def apply(t, o, form, a, inplace):
        if form in (_SCALAR, _SCALARS) and scalar_op is not None:
            return getattr(t, scalar_op + ("_" if inplace else ""))(o)
        if scalar_op is not None:  # (maximum, minimum of two tensors: no in-place method)
            out = getattr(_ops, op)(t, o)
            return t.copy_(out) if inplace else out
        fn = getattr(t, op + "_") if inplace else getattr(t, op)
        return fn(o) if a is None else fn(o, alpha=a)

    def run(fname, self, other, a, inplace):
        tensors = _tensors(fname, kind, self, other)
        others, form = _operands(fname, kind, tensors, other)
        if form == _TENSOR and not tensor_form:
            if a is not None:
                raise TypeError(f"{fname}(): argument 'other' (position 2) must be tuple of Tensors, not Tensor")
            form = _SCALAR
        if a is not None and form in (_SCALAR, _SCALARS):
            raise _invalid(fname, kind, self, other, alpha=a)
        return [apply(t, o, form, a, inplace) for t, o in zip(tensors, others)]

    if alpha:
        def out_of_place(self, other, *, alpha=None):
            return tuple(run(name, self, other, alpha, False))

        def in_place(self, other, *, alpha=None):
            run(name + "_", self, other, alpha, True)
            return self
    else:
        def out_of_place(self, other):
            return tuple(run(name, self, other, None, False))

        def in_place(self, other):
            run(name + "_", self, other, None, True)
            return self

    forms = "a number, a list of numbers, a 0-d tensor or a list of tensors" + ("; `alpha` with tensors" if alpha else "")
    ref = f"x.{op}(tp.tensor(2.0))" if scalar_op is None else f"tp.{op}(x, tp.tensor(2.0))"
    _export(name, out_of_place, _doc(f"`{op}` of each tensor with `other` ({forms}), as a tuple.",
                                     f"all(tp.equal(y, {ref}) for y, x in zip(tp.{name}(xs, 2.0), xs))"))
    _export(name + "_", in_place, _doc(f"`{op}` of each tensor with `other` ({forms}), in place; returns the list.",
                                       f"tp.{name}_(xs, [1.0, 2.0]) is xs"))


def _foreach_pow(self, exponent):
    """Each tensor to the power `exponent` (a number, numbers, a 0-d tensor or tensors); or a number to the
    power of each tensor of `exponent`. A tuple.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_pow([tp.tensor([2.0]), tp.tensor([3.0])], 2)
        (tensor([4.]), tensor([9.]))
        >>> tp._foreach_pow(2.0, [tp.tensor([3.0])])
        (tensor([8.]),)
    """
    if isinstance(self, numbers.Number):
        return tuple(_ops.pow(self, e) for e in _tensors("_foreach_pow", "binary", exponent))
    tensors = _tensors("_foreach_pow", "binary", self, exponent)
    others, _ = _operands("_foreach_pow", "binary", tensors, exponent)
    return tuple(t.pow(e) for t, e in zip(tensors, others))


def _foreach_pow_(self, exponent):
    """Each tensor raised to `exponent` in place; returns the list.

    Example:
        >>> import tapeflow as tp
        >>> xs = [tp.tensor([2.0]), tp.tensor([3.0])]
        >>> _ = tp._foreach_pow_(xs, 2); xs
        [tensor([4.]), tensor([9.])]
    """
    tensors = _tensors("_foreach_pow_", "binary", self, exponent)
    others, _ = _operands("_foreach_pow_", "binary", tensors, exponent)
    for t, e in zip(tensors, others):
        t.pow_(e)
    return self


# -- addcmul, addcdiv, lerp ----------------------------------------------------------------------------------------
def _weights(name: str, kind: str, tensors: list, value, *args) -> list:
    """`value` of `addcmul`/`addcdiv` (or `lerp`'s weight) per tensor: a number, numbers, or (`addcmul`,
    `addcdiv`) a 1-d tensor of numbers."""
    if isinstance(value, Tensor) and kind == "pointwise":
        if value.ndim != 1:
            raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {value.ndim} instead.")
        if value.numel() != len(tensors):
            raise RuntimeError(f"Expected length of scalars to match input of length {len(tensors)} but got "
                               f"{value.numel()} instead.")
        return value.tolist()
    if isinstance(value, numbers.Number):
        return [value] * len(tensors)
    if isinstance(value, (list, tuple)):
        if kind == "lerp" and value and all(isinstance(v, Tensor) for v in value):
            return _same_length(tensors, value)
        if all(isinstance(v, numbers.Number) for v in value):
            if len(value) != len(tensors):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            return list(value)
    raise _invalid(name, kind, tensors, *args, value)


def _pointwise(op: str) -> None:
    name = f"_foreach_{op}"

    def run(fname, self, tensor1, tensor2, value, inplace):
        tensors = _tensors(fname, "pointwise", self, tensor1, tensor2, value)
        t1 = _same_length(tensors, _tensors(fname, "pointwise", tensor1))
        t2 = _same_length(tensors, _tensors(fname, "pointwise", tensor2))
        values = _weights(fname, "pointwise", tensors, value, t1, t2)
        method = op + "_" if inplace else op
        return [getattr(t, method)(a, b, value=v) for t, a, b, v in zip(tensors, t1, t2, values)]

    def out_of_place(self, tensor1, tensor2, value=1):
        return tuple(run(name, self, tensor1, tensor2, value, False))

    def in_place(self, tensor1, tensor2, value=1):
        run(name + "_", self, tensor1, tensor2, value, True)
        return self

    _export(name, out_of_place, _doc(
        f"`{op}(t, t1, t2, value=v)` for each tensor (`value`: a number, numbers or a 1-d tensor), as a tuple.",
        f"all(tp.equal(y, x.{op}(x, x, value=0.5)) for y, x in zip(tp.{name}(xs, xs, xs, 0.5), xs))"))
    _export(name + "_", in_place, _doc(f"`{op}_` on each tensor, in place; returns the list.",
                                       f"tp.{name}_(xs, xs, xs, [1.0, 2.0]) is xs"))


def _lerp(fname, self, tensors1, weight, inplace):
    tensors = _tensors(fname, "lerp", self, tensors1, weight)
    ends = _same_length(tensors, _tensors(fname, "lerp", tensors1))
    weights = _weights(fname, "lerp", tensors, weight, ends)
    return [t.lerp_(e, w) if inplace else t.lerp(e, w) for t, e, w in zip(tensors, ends, weights)]


def _foreach_lerp(self, tensors1, weight):
    """`lerp(t, end, weight)` for each tensor and end (`weight`: a number, numbers or tensors), as a tuple.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_lerp([tp.zeros(2)], [tp.ones(2)], 0.25)
        (tensor([0.2500, 0.2500]),)
    """
    return tuple(_lerp("_foreach_lerp", self, tensors1, weight, False))


def _foreach_lerp_(self, tensors1, weight):
    """`lerp_` of each tensor towards its end, in place (an exponential moving average); returns the list.

    Example:
        >>> import tapeflow as tp
        >>> ema = [tp.zeros(2)]
        >>> _ = tp._foreach_lerp_(ema, [tp.ones(2)], 0.1); ema
        [tensor([0.1000, 0.1000])]
    """
    _lerp("_foreach_lerp_", self, tensors1, weight, True)
    return self


# -- reductions, copies and the rest -------------------------------------------------------------------------------
def _foreach_norm(self, ord=2, dtype=None):
    """The vector norm of each tensor (`ord` as `linalg.vector_norm`), as a tuple of 0-d tensors.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_norm([tp.tensor([3.0, 4.0]), tp.tensor([1.0])])
        (tensor(5.), tensor(1.))
    """
    from .linalg import vector_norm

    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensors("_foreach_norm", "binary", self))


def _foreach_powsum(self, ord=2, dtype=None):
    """The sum of `|t| ** ord` of each tensor (a norm before its root), as a tuple of 0-d tensors.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_powsum([tp.tensor([3.0, -4.0])], 2)
        (tensor(25.),)
    """
    out = []
    for t in _tensors("_foreach_powsum", "binary", self):
        t = t if dtype is None else t.to(dtype)
        out.append(t.abs().pow(ord).sum())
    return tuple(out)


def _foreach_max(self):
    """The largest element of each tensor, as a tuple of 0-d tensors.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_max([tp.tensor([1.0, 5.0]), tp.tensor([3.0])])
        (tensor(5.), tensor(3.))
    """
    return tuple(t.max() for t in _tensors("_foreach_max", "binary", self))


def _foreach_mm(self, mat2):
    """`mm` of each pair of matrices, as a tuple.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_mm([tp.ones(1, 2)], [tp.ones(2, 1)])
        (tensor([[2.]]),)
    """
    tensors = _tensors("_foreach_mm", "binary", self, mat2)
    return tuple(a.mm(b) for a, b in zip(tensors, _same_length(tensors, _tensors("_foreach_mm", "binary", mat2))))


def _foreach_clone(self):
    """A copy of each tensor, as a tuple.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_clone([tp.ones(1)])
        (tensor([1.]),)
    """
    return tuple(t.clone() for t in _tensors("_foreach_clone", "binary", self))


def _foreach_zero_(self):
    """Zero each tensor in place; returns the list.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_zero_([tp.ones(2)])
        [tensor([0., 0.])]
    """
    for t in _tensors("_foreach_zero_", "binary", self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """Copy each tensor of `src` into the tensor of `self` at its position; returns `self`.

    Example:
        >>> import tapeflow as tp
        >>> tp._foreach_copy_([tp.zeros(2)], [tp.ones(2)])
        [tensor([1., 1.])]
    """
    tensors = _tensors("_foreach_copy_", "binary", self, src)
    for t, s in zip(tensors, _same_length(tensors, _tensors("_foreach_copy_", "binary", src))):
        t.copy_(s)
    return self


for _op in _UNARY:
    _unary(_op)
_binary("add", alpha=True, tensor_form=True)
_binary("sub", alpha=True)
for _op in ("mul", "div"):
    _binary(_op, tensor_form=True)
for _op in ("clamp_min", "clamp_max"):
    _binary(_op)
_binary("maximum", scalar_op="clamp_min")
_binary("minimum", scalar_op="clamp_max")
for _op in ("addcmul", "addcdiv"):
    _pointwise(_op)
for _name in ("pow", "pow_", "lerp", "lerp_", "norm", "powsum", "max", "mm", "clone", "zero_", "copy_"):
    __all__.append(f"_foreach_{_name}")
