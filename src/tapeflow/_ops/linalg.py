"""Matrix products (`matmul` and its special cases, `einsum`, `addmm`, ...) and the top-level spellings
of `tp.linalg` functions that are also Tensor methods (`svd`, `qr`, `matrix_exp`, `matrix_power`, `pinverse`)."""

from __future__ import annotations

import numpy as np

import xla_ops as X

from .. import _dtype
from .._dispatch import dispatch
from .._tensor import Tensor
from ..amp import full_precision, lower_precision, promote
from ._args import result_dtype
from ._checks import check_expandable, tensor_arg
from ._dtype_rules import _kernel

__all__ = [
    "addmm", "addmv", "addr", "addbmm", "baddbmm", "bmm", "dot", "einsum", "ger", "inner", "matmul", "matrix_exp",
    "matrix_power", "mm", "mv",
    "outer", "pinverse", "qr", "svd", "tensordot", "trace",
]


# -- matrix products ---------------------------------------------------------------------------------------
@lower_precision
def matmul(input, other):
    """Matrix product with NumPy's rules (vectors, batches, broadcasting).

    Example:
        >>> tp.matmul(tp.ones(5, 2, 3), tp.ones(3, 4)).shape
        tapeflow.Size([5, 2, 4])
    """
    a, b = input._raw.ndim, other._raw.ndim
    if a and b:
        _check_inner(input._raw.shape, other._raw.shape)
        kind = "dot" if a == b == 1 else "mv" if (a, b) == (2, 1) else "mm" if b <= 2 and a <= 2 else "bmm"
        # the kernel each shape reaches: a batch folds into rows where the second operand is a matrix or vector
        kernel = "dot" if a == b == 1 else "addmv_impl_cpu" if b == 1 else "addmm_impl_cpu_" if b == 2 else "bmm"
        if kernel == "bmm":  # (PyTorch's bmm looks for its kernel before it compares the dtypes)
            _refuse_bool(kernel, input, other)
        _same_dtype(kind, input, other)
        if kernel != "bmm":
            _refuse_bool(kernel, input, other)
    if a == 2 and b == 2:
        return dispatch(X.mm, (input, other))
    if a == 1 and b == 1:
        return dispatch(X.dot, (input, other))
    if a == 2 and b == 1:
        return dispatch(X.mv, (input, other))
    if a == 3 and b == 3 and input._raw.shape[0] == other._raw.shape[0]:
        return dispatch(X.bmm, (input, other))
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    return dispatch(X.matmul, (input, other))


def _refuse_bool(kernel: str, a, b) -> None:
    """PyTorch's products have no bool kernel; one with nothing to sum (an empty operand) never runs it, except
    `dot`."""
    if a._raw.dtype == np.bool_ and (kernel == "dot" or (a.numel() and b.numel())):
        raise _kernel(kernel)("bool")


def _same_dtype(kind: str, a, b) -> None:
    """Matrix products take one dtype (PyTorch does not promote them); its message for each kind of product."""
    da, db = a.dtype, b.dtype
    if da is db:
        return
    s, c = _dtype.SCALAR_NAMES, _dtype.CPP_NAMES
    if kind == "dot":
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {s[da.name]} and {s[db.name]}")
    if kind == "mv":
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {s[db.name]}, {s[da.name]}, and "
                           f"{s[db.name]}")
    if kind == "bmm":
        raise RuntimeError(f"expected scalar type {s[da.name]} but found {s[db.name]}")
    raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {c[da.name]} != {c[db.name]}")


def _same_dtypes(kind: str, input, a, b) -> None:
    """`addmm`-style products take one dtype for the added tensor and both factors; PyTorch's checks, in its
    order, and its messages."""
    di, da, db = input.dtype, a.dtype, b.dtype
    if di is da and da is db:
        return
    s, c = _dtype.SCALAR_NAMES, _dtype.CPP_NAMES
    if kind == "addmv":
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {s[di.name]}, {s[da.name]}, and "
                           f"{s[db.name]}")
    if kind == "baddbmm":
        if di is da:  # (the input agrees with batch1: the product's own check speaks first)
            raise RuntimeError(f"expected scalar type {s[da.name]} but found {s[db.name]}")
        raise RuntimeError(f"Input dtypes must be the same, got: input {c[di.name]}, batch1: {c[da.name]}, batch2: "
                           f"{c[db.name]}")
    if di is not db:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {s[di.name]} and {s[db.name]}")
    raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {s[da.name]} and {s[db.name]}")


def _check_inner(sa: tuple, sb: tuple) -> None:
    """The contracted sizes must agree: PyTorch's messages for each case of `matmul`."""
    k_a, k_b = sa[-1], sb[-2] if len(sb) > 1 else sb[0]
    if k_a == k_b:
        return
    if len(sa) == 1 and len(sb) == 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src [{k_b}] to have the same "
                           f"number of elements, but got {k_a} and {k_b} elements respectively")
    if len(sa) == 3 and len(sb) == 3 and sa[0] == sb[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sb[0]}, {k_a}] but "
                           f"got: [{sb[0]}, {k_b}].")
    if len(sb) == 1:
        raise RuntimeError(f"size mismatch, got input ({sa[-2]}), mat ({sa[-2]}x{sa[-1]}), vec ({sb[0]})")
    rows = int(np.prod(sa[:-1])) if len(sa) > 1 else 1
    raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and {sb[-2]}x{sb[-1]})")


@lower_precision
def mm(input, mat2):
    """Matrix product of two 2-D tensors.

    Example:
        >>> tp.mm(tp.tensor([[1.0, 2.0]]), tp.tensor([[3.0], [4.0]]))
        tensor([[11.]])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    _same_dtype("mm", input, mat2)
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    _refuse_bool("addmm_impl_cpu_", input, mat2)
    return dispatch(X.mm, (input, mat2))


@lower_precision
def bmm(input, mat2):
    """Batched matrix product of `(b, n, m)` and `(b, m, p)` tensors.

    Example:
        >>> tp.bmm(tp.ones(4, 2, 3), tp.ones(4, 3, 5)).shape
        tapeflow.Size([4, 2, 5])
    """
    _check_batches(input, mat2)
    _refuse_bool("bmm", input, mat2)
    _same_dtype("bmm", input, mat2)
    return dispatch(X.bmm, (input, mat2))


@lower_precision(devices=("cuda",))
def mv(input, vec):
    """Product of a 2-D matrix and a 1-D vector.

    Example:
        >>> tp.mv(tp.tensor([[1.0, 2.0], [3.0, 4.0]]), tp.tensor([1.0, 1.0]))
        tensor([3., 7.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_inner(input._raw.shape, vec._raw.shape)
    _same_dtype("mv", input, vec)
    _refuse_bool("addmv_impl_cpu", input, vec)
    return dispatch(X.mv, (input, vec))


@promote
def dot(input, other):
    """Inner product of two 1-D tensors.

    Example:
        >>> tp.dot(tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0]))
        tensor(11.)
    """
    tensor_arg("dot", "tensor", other)
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _check_inner(input._raw.shape, other._raw.shape)
    _same_dtype("dot", input, other)
    if input._raw.dtype == bool:  # (after the checks above, in PyTorch's order)
        raise _kernel("dot")("bool")
    return dispatch(X.dot, (input, other))


def inner(input, other):
    """Inner products over the last dimension: `out[i..., j...] = sum_k input[i..., k] * other[j..., k]`
    (a 0-d operand scales the other).

    Example:
        >>> tp.inner(tp.tensor([[1.0, 2.0], [3.0, 4.0]]), tp.tensor([1.0, 1.0]))
        tensor([3., 7.])
    """
    tensor_arg("inner", "tensor", other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.ndim == 1 and other.ndim == 1:
        return dot(input, other)
    return tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


def outer(input, vec2):
    """Outer product of two 1-D tensors (the same as `outer`).

    Example:
        >>> tp.ger(tp.tensor([1.0, 2.0]), tp.tensor([1.0, 10.0]))
        tensor([[ 1., 10.],
                [ 2., 20.]])
    """
    tensor_arg("outer", "vec2", vec2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return dispatch(X.outer, (input, vec2))


ger = outer


@lower_precision
def einsum(equation: str, *operands):
    """Einstein summation, e.g. `tp.einsum("ij,jk->ik", a, b)`, or in the sublist form
    `tp.einsum(a, [0, 1], b, [1, 2], [0, 2])`.

    Example:
        >>> tp.einsum("ij,j->i", tp.tensor([[1.0, 2.0], [3.0, 4.0]]), tp.tensor([1.0, 1.0]))
        tensor([3., 7.])
    """
    if isinstance(equation, Tensor):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation, *operands))
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for other in operands[1:]:
        if isinstance(other, Tensor) and isinstance(operands[0], Tensor) and other._raw.dtype != operands[0]._raw.dtype:
            s = _dtype.SCALAR_NAMES
            raise RuntimeError(f"expected scalar type {s[operands[0].dtype.name]} but found {s[other.dtype.name]}")
    if operands and isinstance(operands[0], Tensor) and operands[0]._raw.dtype == np.bool_:
        # Bool operands take PyTorch's path: its sums count (int64), its products of two operands over a
        # shared dimension are a bmm, which has no bool kernel. The counts are the integer einsum's.
        out = dispatch(X.einsum, tuple(t.long() for t in operands), (("equation", equation),))
        return out if _bool_einsum_dtype(equation, [tuple(t.shape) for t in operands]) == "int64" else out.bool()
    return dispatch(X.einsum, tuple(operands), (("equation", equation),))


def _sublist_equation(args: tuple) -> tuple[str, tuple]:
    """`(equation, operands)` of einsum's sublist form `(op, sublist, op, sublist, ..., [output sublist])`:
    subscripts 0-25 are `a`-`z`, 26-51 `A`-`Z`, `...` an ellipsis."""
    def term(sub) -> str:
        out = []
        for i in sub:
            if i is Ellipsis:
                out.append("...")
            elif not 0 <= i < 52:
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            else:
                out.append(chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26))
        return "".join(out)

    operands, terms = args[0::2], args[1::2]
    n = len(terms)
    if len(operands) > n:  # an odd count: the last item is the output's sublist
        operands, out = operands[:n], operands[n]
        return ",".join(map(term, terms)) + "->" + term(out), operands
    return ",".join(map(term, terms)), operands


def _bool_einsum_dtype(equation: str, shapes: list) -> str:
    """The dtype ("bool" or "int64") PyTorch's einsum of bool operands of these shapes gives, following its
    steps: dimensions of size 1 broadcast, a dimension left in one operand only is summed there (a count), two
    operands sharing one are multiplied by bmm. Raises PyTorch's refusal where a bmm meets a bool operand."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    ell = max((len(sh) - len(t) + 3 for t, sh in zip(terms, shapes) if "..." in t), default=0)
    ops, count = [], {}
    for term, shape in zip(terms, shapes):
        head, dots, tail = term.partition("...")
        labels = list(head)
        if dots:  # (the dimensions under an operand's ellipsis align with the last of the widest one's)
            labels += [("...", j) for j in range(ell - (len(shape) - len(head) - len(tail)), ell)]
        labels += list(tail)
        sizes = {}
        for label, n in zip(labels, shape):
            sizes.setdefault(label, n)  # (a repeated label: its diagonal)
            if isinstance(label, str):
                count[label] = count.get(label, 0) + 1
        ops.append(sizes)
    ellipsis = [("...", j) for j in range(ell)]
    if arrow:
        out = [x for c in rhs.replace("...", ".") for x in (ellipsis if c == "." else [c])]
    else:
        out = ellipsis + sorted(c for c, k in count.items() if k == 1)
    # PyTorch's dimension order: the output's, then the ellipsis (when summed), then the labels (A-Z, a-z)
    order = out + [x for x in ellipsis if x not in out] + sorted(c for c in count if c not in out)
    summed = order[len(out):]
    ops = [({x: sz.get(x, 1) for x in order}, "bool") for sz in ops]
    left = {x: sum(sz[x] != 1 for sz, _ in ops) for x in summed}
    path = None
    if len(ops) > 2:  # (PyTorch contracts three or more operands in opt_einsum's order, where it has opt_einsum)
        try:
            import opt_einsum
        except ImportError:
            pass
        else:
            path = [tuple(p) for p in opt_einsum.contract_path(equation, *shapes, shapes=True, optimize="auto")[0]]
    while len(ops) > 1:
        i, j = sorted(path.pop(0)) if path else (0, 1)
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        now = []
        for x in summed:
            sa, sb = a[0][x] != 1, b[0][x] != 1
            if sa and sb:
                left[x] -= 1
                if left[x] == 1:
                    now.append(x)
                    left[x] = 0
            elif left[x] == 1 and (sa or sb):
                a, b = (_counted(a, [x]), b) if sa else (a, _counted(b, [x]))
                left[x] = 0
        r = _product_pair(a, b, now, order)
        ops.insert(len(ops) if path is not None else 0, r)
    # (one operand: PyTorch sums what is not in the output, even dimensions of size 1)
    return "int64" if summed and len(terms) == 1 else ops[0][1]


def _counted(op, dims):
    """`op` summed over `dims` (kept as size 1): a bool sum is an int64 count."""
    sizes, _ = op
    return {x: 1 if x in dims else n for x, n in sizes.items()}, "int64"


def _product_pair(a, b, summed, order):
    """PyTorch's product of two aligned operands: elementwise (promoting) with nothing to sum, else a bmm of
    (batch, rows, summed) by (batch, summed, columns)."""
    if not summed:
        return {x: b[0][x] if a[0][x] == 1 else a[0][x] for x in order}, "bool" if a[1] == b[1] == "bool" else "int64"
    rows, cols, both, k = [], [], 1, 1
    for pos, x in enumerate(order):
        sa, sb = a[0][x] != 1, b[0][x] != 1
        if x in summed:
            if sa and sb:
                k *= a[0][x]
            elif sa or sb:
                a, b = (_counted(a, [x]), b) if sa else (a, _counted(b, [x]))
        elif sa and sb:
            both *= a[0][x]
        elif sa:
            rows.append((pos, a[0][x]))
        else:  # (PyTorch counts a dimension of size 1 in both among the columns)
            cols.append((pos, b[0][x]))
    if rows and cols and cols[-1][0] < rows[0][0]:  # (PyTorch swaps the operands to write the result in order)
        a, b = b, a
    sizes = {x: 1 if x in summed else (a[0][x] if a[0][x] != 1 else b[0][x]) for x in order}
    if not (both * int(np.prod([n for _, n in rows])) * int(np.prod([n for _, n in cols])) and k):
        return sizes, b[1]  # (an empty bmm runs no kernel; its result takes the second operand's dtype)
    if a[1] == "bool":
        raise _kernel("bmm")("bool")
    if b[1] != a[1]:
        s = _dtype.SCALAR_NAMES
        raise RuntimeError(f"expected scalar type {s[a[1]]} but found {s[b[1]]}")
    return sizes, a[1]


@lower_precision
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """`beta * input + alpha * (mat1 @ mat2)` for 2-D `mat1` and `mat2`.

    Example:
        >>> tp.addmm(tp.ones(2, 2), tp.eye(2), tp.full((2, 2), 3.0), beta=0.5)
        tensor([[3.5000, 3.5000],
                [3.5000, 3.5000]])
    """
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    return _added_product("addmm", X.addmm, input, mat1, mat2, (mat1.shape[0], mat2.shape[1]), beta, alpha)


@lower_precision
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """`beta * input + alpha * (batch1 @ batch2)` for batches of matrices.

    Example:
        >>> tp.baddbmm(tp.zeros(1, 2, 2), tp.ones(1, 2, 3), tp.ones(1, 3, 2)).shape
        tapeflow.Size([1, 2, 2])
    """
    _check_batches(batch1, batch2)
    target = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    return _added_product("baddbmm", X.baddbmm, input, batch1, batch2, target, beta, alpha)


@lower_precision(devices=("cuda",))
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """`beta * input + alpha * (mat @ vec)` for a matrix and a vector.

    Example:
        >>> tp.addmv(tp.ones(2), tp.eye(2), tp.tensor([2.0, 3.0]), alpha=2)
        tensor([5., 7.])
    """
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    return _added_product("addmv", X.addmv, input, mat, vec, (mat.shape[0],), beta, alpha)


@lower_precision(devices=("cuda",))
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """`beta * input + alpha * outer(vec1, vec2)`.

    Example:
        >>> tp.addr(tp.zeros(2, 2), tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0]))
        tensor([[3., 4.],
                [6., 8.]])
    """
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    dt = result_dtype(input, vec1, vec2)
    if dt.kind in "biu":
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, (float, complex)):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point "
                                   "number.")
    input, vec1, vec2 = (t if t._raw.dtype == dt else t.to(_dtype.from_jax_dtype(dt)) for t in (input, vec1, vec2))
    return _added_product("addr", X.addr, input, vec1, vec2, (vec1.shape[0], vec2.shape[0]), beta, alpha)


@lower_precision
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """`beta * input + alpha * (sum of batch1[i] @ batch2[i])`: batched products reduced over the batch.

    Example:
        >>> tp.addbmm(tp.zeros(2, 2), tp.ones(3, 2, 4), tp.ones(3, 4, 2))
        tensor([[12., 12.],
                [12., 12.]])
    """
    _check_batches(batch1, batch2)
    target = (batch1.shape[1], batch2.shape[2])
    return _added_product("addbmm", X.addbmm, input, batch1, batch2, target, beta, alpha)


def _check_batches(batch1, batch2) -> None:
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    sa, sb = batch1._raw.shape, batch2._raw.shape
    if sa[0] != sb[0]:  # (no broadcasting of the batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] but "
                           f"got: [{sb[0]}, {sb[1]}].")
    _check_inner(sa, sb)


# PyTorch's kernel names in its refusal of Bool (addr takes Bool: `or` for `+`, `and` for `*`).
_BOOL_KERNELS = {"addmm": "addmm_impl_cpu_", "addbmm": "addmm_impl_cpu_", "addmv": "addmv_impl_cpu",
                 "baddbmm": "baddbmm"}


def _added_product(kind, op, input, a, b, target: tuple, beta, alpha):
    """`beta * input + alpha * product(a, b)` as the one op `op` (PyTorch's single kernel and graph node), after
    PyTorch's checks: one dtype for all three, `input` expandable to the product's shape `target`; `beta` and
    `alpha` taken in the result's dtype (truncated for integers)."""
    if isinstance(input, Tensor) and kind != "addr":
        _same_dtypes(kind, input, a, b)
    tensor_arg(kind, "input", input)
    check_expandable(input, target)
    dt = a._raw.dtype
    if dt == np.bool_:
        if kind in _BOOL_KERNELS:
            raise NotImplementedError(f'"{_BOOL_KERNELS[kind]}" not implemented for \'Bool\'')
        beta, alpha = bool(beta), bool(alpha)
    elif dt.kind in "iu":
        beta, alpha = int(beta), int(alpha)
    return dispatch(op, (input, a, b), (("beta", beta), ("alpha", alpha)))


def tensordot(a, b, dims=2):
    """Sum of products over the given dimensions: the last `dims` of `a` against the first `dims` of `b`, or two lists of dims.

    Example:
        >>> tp.tensordot(tp.ones(2, 3, 4), tp.ones(4, 5), dims=1).shape
        tapeflow.Size([2, 3, 5])
    """
    if a._raw.dtype != b._raw.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, int) or (hasattr(dims, "ndim") and dims.ndim == 0):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([int(d) for d in ([x] if isinstance(x, int) else x)] for x in dims)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da, db = [d % max(a.ndim, 1) for d in da], [d % max(b.ndim, 1) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} "
                               f"and second has size {b.shape[j]} in dim {j}")
    la = [chr(97 + i) for i in range(a.ndim)]
    lb = [chr(97 + a.ndim + i) for i in range(b.ndim)]
    for i, j in zip(da, db):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in da] + [c for j, c in enumerate(lb) if j not in db]
    equation = f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
    if a._raw.dtype == np.bool_:
        _tensordot_refuses_bool(a, b, da, db)
        return einsum(equation, a.long(), b.long()) != 0  # (PyTorch's bool sums are `any`)
    return einsum(equation, a, b)


def _tensordot_refuses_bool(a, b, da, db) -> None:
    """PyTorch's tensordot of bools: a contracted dimension of size 1 in one operand is summed away in the
    other; the rest is a matrix product (no bool kernel unless it is empty) or, with nothing left uncontracted,
    a `dot` of the two operands flattened (no bool kernel) where both lie in memory in the contracted order."""
    sa, sb = list(a.shape), list(b.shape)
    strides_a, strides_b = a.stride(), b.stride()
    inner = 1
    for i, j in zip(da, db):
        if sb[j] == 1:
            sa[i], strides_a = 1, None  # (summed: a new contiguous tensor)
        elif sa[i] == 1:
            sb[j], strides_b = 1, None
        else:
            inner *= sa[i]
    rows = int(np.prod([n for i, n in enumerate(sa) if i not in da]))
    cols = int(np.prod([n for j, n in enumerate(sb) if j not in db]))
    if rows != 1 or cols != 1:
        if rows and cols and inner:
            raise _kernel("addmm_impl_cpu_")("bool")
        return
    pa = [i for i in range(len(sa)) if i not in da] + list(da)
    pb = list(db) + [j for j in range(len(sb)) if j not in db]
    if _contiguous_after(sa, strides_a, pa) and _contiguous_after(sb, strides_b, pb):
        raise _kernel("dot")("bool")


def _contiguous_after(shape: list, strides, perm: list) -> bool:
    """Whether a tensor of `shape` and `strides` (None: contiguous) is contiguous once permuted by `perm`."""
    if strides is None:
        strides = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    if 0 in shape:
        return True
    expected = 1
    for k in reversed(perm):
        if shape[k] != 1:
            if strides[k] != expected:
                return False
            expected *= shape[k]
    return True


@full_precision(devices=("cpu",))
def trace(input):
    """Sum of the main diagonal of a 2-D tensor.

    Example:
        >>> tp.trace(tp.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(5.)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()


# -- decompositions (tp.linalg imports this package, so it is imported on first use) ------------------------
def svd(input, some: bool = True, compute_uv: bool = True):
    """`tp.svd` / `Tensor.svd`, the older spelling: `(U, S, V)` with `V` (not `Vh`) and `some=True` (reduced)
    by default. With `compute_uv=False`, `U` and `V` are zero-filled `(m, m)` and `(n, n)` matrices.

    Example:
        >>> U, S, V = tp.svd(tp.tensor([[3.0, 0.0], [0.0, 4.0]]))
        >>> S
        tensor([4., 3.])
    """
    from .. import linalg

    if not compute_uv:
        S = linalg.svdvals(input)
        m, n = input.shape[-2:]
        z = input.detach()
        return linalg.return_types.svd(z.new_zeros((*input.shape[:-2], m, m)), S,
                                       z.new_zeros((*input.shape[:-2], n, n)))
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    return linalg.return_types.svd(U, S, Vh.mT)


def qr(input, some: bool = True):
    """`tp.qr` / `Tensor.qr`, the older spelling of `tp.linalg.qr(input, "reduced" if some else "complete")`.

    Example:
        >>> Q, R = tp.qr(tp.tensor([[3.0, 1.0], [4.0, 2.0]]))
        >>> tp.allclose(Q @ R, tp.tensor([[3.0, 1.0], [4.0, 2.0]]))
        True
    """
    from .. import linalg

    return linalg.qr(input, "reduced" if some else "complete")


def matrix_exp(input):
    """`tp.linalg.matrix_exp` as a function and Tensor method.

    Example:
        >>> tp.matrix_exp(tp.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    from .. import linalg

    return linalg.matrix_exp(input)


def matrix_power(input, n: int):
    """`tp.linalg.matrix_power` as a function and Tensor method.

    Example:
        >>> tp.matrix_power(tp.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    from .. import linalg

    return linalg.matrix_power(input, n)


def pinverse(input, rcond: float = 1e-15):
    """`tp.linalg.pinv(input, rtol=rcond)`, the older spelling.

    Example:
        >>> tp.pinverse(tp.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    from .. import linalg

    return linalg.pinv(input, rtol=rcond)


# Sibling modules import each other; importing at the end lets every name above exist first.
from .shape import diagonal  # noqa: E402
