"""gradcheck / gradgradcheck: compare the tape's gradients with finite differences.

The numerical Jacobian is computed in one batched evaluation per input: all
perturbed copies of the input are stacked and the function runs once under
`jax.vmap` (tapeflow ops accept JAX tracers). Functions that cannot be traced
(for example ones calling `.item()`) fall back to one evaluation per
perturbation. The forward-mode Jacobian is batched the same way: the tangents
of one input are stacked and vmapped.

Besides the Jacobians, optional checks exercise the other ways gradients are
asked for: with undefined (missing or zero) output gradients, with a batch of
cotangents (`grad(..., is_grads_batched=True)`), with a batch of tangents, and
the dtype and device of every gradient.
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from .._dtype import from_jax_dtype
from .._state import state
from .._tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian", "get_analytical_jacobian"]

_BATCH = 2  # cotangents / tangents per batched check (PyTorch's)


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` / `gradgradcheck` when the gradients do not match.

    Example:
        >>> import tapeflow as tp
        >>> issubclass(tp.autograd.GradcheckError, RuntimeError)
        True
    """


@dataclass(frozen=True)
class _Settings:
    eps: float
    atol: float
    rtol: float
    nondet_tol: float
    check_backward_ad: bool
    check_forward_ad: bool
    check_grad_dtypes: bool


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_inputs(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _checked_inputs(inputs) -> tuple[tuple, list]:
    """The inputs as a tuple, and the indices of those that require grad (there must be one)."""
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True. Hint: create the inputs with requires_grad=True.")
    for i in diff:
        t = inputs[i]
        if t._view and t.numel() > 1 and any(step[0] == "expand" for step in t._view):
            raise RuntimeError(f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck.")
    return inputs, diff


def _outputs_of(func, inputs):
    return _as_tuple(func(*inputs))


def _tensor_outputs(func, inputs):
    return [o for o in _outputs_of(func, inputs) if isinstance(o, Tensor)]


def _pure(func, inputs, k):
    """func as a function of the raw array of input k, returning raw output arrays.

    As PyTorch's gradcheck perturbs its inputs in place, the input tensor itself holds the perturbed value
    while `func` runs (so a function that reads the input through a closure, not its argument, sees the
    perturbation too), and gets its value back afterwards. The inputs keep their requires_grad flags, so
    functions that differentiate inside (gradgradcheck) still see a tape."""
    x = inputs[k]

    def f(arr):
        kept = x._raw
        x._raw = arr
        try:
            return tuple(o._data for o in _tensor_outputs(func, inputs))
        finally:
            x._raw = kept
    return f


def _stack_rows(rows):
    return tuple(jnp.stack([r[j] for r in rows]) for j in range(len(rows[0])))


def _numerical(func, inputs, k, eps, directions):
    """Central differences of every output along each row of `directions` (shape (m, *x.shape)).

    Returns a list (one per output) of arrays of shape (m, out.numel())."""
    x = inputs[k]._data
    f = _pure(func, inputs, k)
    pert = jnp.concatenate([x[None] + eps * directions, x[None] - eps * directions])
    try:
        outs = jax.vmap(f)(pert)
    except Exception:  # untraceable function (host reads such as .item()): one call per perturbation
        rows = [f(p) for p in pert]
        _check_same_outputs(rows, eps)
        outs = _stack_rows(rows)
    m = directions.shape[0]
    outs = [np.asarray(o, np.float64) if o.dtype == jnp.bool_ else o for o in outs]  # bool outputs: no subtraction
    return [np.asarray((o[:m] - o[m:]).reshape(m, math.prod(o.shape[1:])), dtype=np.float64) / (2 * eps)
            for o in outs]


def _check_same_outputs(rows, eps) -> None:
    """PyTorch's check that perturbing an input changes no output's shape or dtype (a function whose
    outputs' structure depends on the values has no Jacobian there)."""
    first = rows[0]
    for row in rows[1:]:
        for a, b in zip(first, row):
            if a.shape != b.shape:
                raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are "
                                     f"perturbed by {eps}, but got: shapes {tuple(a.shape)} and {tuple(b.shape)}.")
            if a.dtype != b.dtype:
                raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are "
                                     f"perturbed by {eps}, but got: dtypes {from_jax_dtype(a.dtype)} and "
                                     f"{from_jax_dtype(b.dtype)}.")


def _forward_tangents(func, inputs, k, directions, batched=None):
    """Forward-mode AD: the output tangents when input k carries each row of `directions` as its tangent.

    `batched=None` tries one vmapped call and falls back to a loop; True / False force one or the other.
    Returns raw arrays, one per tensor output, of shape (m, *out.shape)."""
    from . import forward_ad

    def one(tangent):
        with forward_ad.dual_level():
            # every input that requires grad is dual (zero tangents but input k's), and, as in PyTorch's
            # gradcheck, detached: `func` sees no input requiring grad here
            args = [forward_ad.make_dual(a.detach(), Tensor._wrap(jnp.zeros_like(a._data)))
                    if i != k and isinstance(a, Tensor) and a.requires_grad else a for i, a in enumerate(inputs)]
            args[k] = forward_ad.make_dual(inputs[k].detach(), Tensor._wrap(tangent))
            outs = _tensor_outputs(func, args)
            tans = [forward_ad.unpack_dual(o).tangent for o in outs]
            return tuple(jnp.zeros(o.shape, o._data.dtype) if t is None else t._data for o, t in zip(outs, tans))

    if batched is not False:
        outer = state.vmap_randomness
        state.vmap_randomness = (*outer, (_VMAP_RANDOM, None))  # (PyTorch's batched check refuses draws)
        try:
            return jax.vmap(one)(directions)
        except Exception:
            if batched:
                raise
        finally:
            state.vmap_randomness = outer
    return _stack_rows([one(d) for d in directions])


_VMAP_RANDOM = ("vmap: We do not yet support calling random operations inside of vmap. Please perform random "
                "operations outside of vmap as a workaround")


def _vjp_rows(outs, inputs, diff, j):
    """Analytical Jacobian of output j: one backward per output element.

    Returns a dict input index -> array of shape (n_in, n_out)."""
    from .backward import grad
    out = outs[j]
    n_out = out.numel()
    cols = {k: np.zeros((inputs[k].numel(), n_out)) for k in diff}
    if not out.requires_grad:
        return cols
    for m in range(n_out):
        seed = jnp.zeros((n_out,), out._data.dtype).at[m].set(1).reshape(out.shape)
        gs = grad(out, [inputs[k] for k in diff], Tensor._wrap(seed), retain_graph=True, allow_unused=True)
        for k, g in zip(diff, gs):
            if g is not None:
                cols[k][:, m] = np.asarray(g._data, dtype=np.float64).reshape(-1)
    return cols


def _basis(x):
    n = x.numel()  # (a zero-size input has no basis vectors)
    return jnp.eye(n, dtype=x._data.dtype).reshape((n,) + tuple(x.shape))


def _mismatch(what, j, k, numerical, analytical, s):
    if np.allclose(analytical, numerical, rtol=s.rtol, atol=s.atol):
        return
    diffpos = np.argwhere(~np.isclose(analytical, numerical, rtol=s.rtol, atol=s.atol))
    raise GradcheckError(f"{what} for output {j} with respect to input {k},\n"
                         f"numerical:{numerical}\nanalytical:{analytical}\n"
                         f"mismatched (input element, output element) positions: {diffpos[:10].tolist()}\n"
                         f"max abs difference: {np.abs(analytical - numerical).max()}. Hint: use float64 inputs "
                         "and check the derivative formula of the operation.")


def _check_jacobians(func, inputs, diff, outs, s):
    """Full Jacobians: reverse mode (one backward per output element) and forward mode (one tangent per
    input element) against central differences."""
    numer = {k: _numerical(func, inputs, k, s.eps, _basis(inputs[k])) for k in diff}
    if s.check_backward_ad:
        for j, out in enumerate(outs):
            ana = _vjp_rows(outs, inputs, diff, j)
            if s.nondet_tol >= 0 and out.requires_grad:
                again = _vjp_rows(outs, inputs, diff, j)
                for k in diff:
                    if not np.allclose(ana[k], again[k], rtol=0, atol=s.nondet_tol):
                        raise GradcheckError(_NOT_REENTRANT.format(tol=s.nondet_tol))
            for k in diff:
                _mismatch("Jacobian mismatch", j, k, numer[k][j], ana[k], s)
    if s.check_forward_ad:
        for k in diff:
            tans = _forward_tangents(func, inputs, k, _basis(inputs[k]))
            for j, t in enumerate(tans):
                fwd = np.asarray(t.reshape(t.shape[0], math.prod(t.shape[1:])), dtype=np.float64)
                _mismatch("Jacobian computed with forward mode mismatch", j, k, numer[k][j], fwd, s)


def _unit(a):
    # As PyTorch's fast mode: nonnegative random directions of unit norm, so that an error that shifts every
    # gradient element the same way (a backward that adds a constant) cannot cancel out in the projection.
    n = jnp.linalg.norm(a)
    return a / jnp.where(n == 0, 1, n)


def _check_fast(func, inputs, diff, outs, s):
    """Random projections: numerical v^T (J u) (finite difference along u) against (v^T J) u from
    reverse mode and v^T (J u) from forward mode; u and v are uniform in [0, 1) and of unit norm. Reverse
    mode is checked first (and run twice, for reentrancy), as in PyTorch."""
    from .backward import grad
    key = jax.random.PRNGKey(0)
    for k in diff:
        x = inputs[k]
        key, ku = jax.random.split(key)
        u = _unit(jax.random.uniform(ku, (1,) + tuple(x.shape), dtype=x._data.dtype))
        u64 = np.asarray(u, np.float64).reshape(-1)
        ju = _numerical(func, inputs, k, s.eps, u)
        vs = []
        for out in outs:
            key, kv = jax.random.split(key)
            vs.append(_unit(jax.random.uniform(kv, tuple(out.shape), dtype=out._data.dtype)))
        checks = []  # (what, j, numerical, analytical)
        if s.check_backward_ad:
            for j, (out, v) in enumerate(zip(outs, vs)):
                runs = []
                for _ in range(2 if out.requires_grad else 0):
                    (g,) = grad(out, [x], Tensor._wrap(v), retain_graph=True, allow_unused=True)
                    runs.append(0.0 if g is None else float(np.dot(np.asarray(g._data, np.float64).reshape(-1), u64)))
                if len(runs) == 2 and abs(runs[0] - runs[1]) > s.nondet_tol:
                    raise GradcheckError(_NOT_REENTRANT.format(tol=s.nondet_tol))
                checks.append(("Jacobian mismatch", j, runs[0] if runs else 0.0))
        if s.check_forward_ad:
            ju_fwd = _forward_tangents(func, inputs, k, u, batched=False)
            for j, v in enumerate(vs):
                fwd = float(np.dot(np.asarray(ju_fwd[j][0], np.float64).reshape(-1), np.asarray(v, np.float64).reshape(-1)))
                checks.append(("Jacobian computed with forward mode mismatch", j, fwd))
        for what, j, value in checks:
            v64 = np.asarray(vs[j], np.float64).reshape(-1)
            numerical = float(np.dot(ju[j][0], v64))
            # PyTorch's tolerance for a projection: atol on every Jacobian entry gives atol * sum(u) * sum(v)
            if not np.isclose(value, numerical, rtol=s.rtol, atol=s.atol * u64.sum() * v64.sum()):
                raise GradcheckError(f"{what} for output {j} with respect to input {k},\n"
                                     f"numerical:{numerical}\nanalytical:{value}\n"
                                     "(fast mode compares v^T J u for random u, v; rerun with fast_mode=False "
                                     "to see the full Jacobians.)")


_NOT_REENTRANT = ("Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
                  "gives different values, although analytical gradient matches numerical gradient. The tolerance "
                  "for nondeterminism was {tol}.")


def _check_mul_by_grad_output(inputs, diff, outs):
    """Backward with zero output gradients gives zero input gradients (PyTorch's check)."""
    from .backward import grad
    outs = [o for o in outs if o.requires_grad]
    if not outs:
        return
    gs = grad(outs, [inputs[k] for k in diff], [Tensor._wrap(jnp.zeros_like(o._data)) for o in outs],
              retain_graph=True, allow_unused=True)
    for g in gs:
        if g is not None and not bool(jnp.all(g._data == 0)):
            raise GradcheckError("backward not multiplied by grad_output")


def _check_no_differentiable_outputs(func, inputs, diff, outs, s):
    """A function none of whose outputs requires grad must have a zero numerical gradient (PyTorch's check)."""
    for k in diff:
        for rows in _numerical(func, inputs, k, s.eps, _basis(inputs[k])):
            if not np.allclose(rows, 0, rtol=0, atol=s.atol):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _check_grad_attributes(inputs, diff, outs):
    """Every gradient has its input's shape, dtype and device."""
    from .backward import grad
    for out in outs:
        if not out.requires_grad:
            continue
        gs = grad(out, [inputs[k] for k in diff], Tensor._wrap(jnp.ones_like(out._data)),
                  retain_graph=True, allow_unused=True)
        for k, g in zip(diff, gs):
            x = inputs[k]
            if g is None:
                continue
            if tuple(g.shape) != tuple(x.shape):
                raise GradcheckError(f"Gradient of input {k} has shape {list(g.shape)} but the input has shape "
                                     f"{list(x.shape)}.")
            if g.dtype != x.dtype:
                raise GradcheckError(f"Gradient has dtype mismatch: the gradient of input {k} is {g.dtype} but the "
                                     f"input is {x.dtype}. A backward (or a gradient hook) must return gradients "
                                     "in the dtype of the input they belong to.")
            if g.device != x.device:
                raise GradcheckError(f"Gradient has device mismatch: the gradient of input {k} is on {g.device} but "
                                     f"the input is on {x.device}.")


def _warn_undefined_check() -> None:
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
                  "but it may break existing callers of this function. If this is true for you, you can call this "
                  'function with "check_undefined_grad=False" to disable the feature', UserWarning, stacklevel=4)


def _check_undefined_grad(func, inputs, diff, outs):
    """Backward with undefined output gradients: first all of them, then (several outputs) one at a time
    with the others zero. Every input gradient must come back None or zero.

    An undefined gradient is `None`, as PyTorch's: the output's hooks see None, a custom Function's backward
    sees zeros (None after `ctx.set_materialize_grads(False)`) and a built-in node gives no gradient."""
    from .._dispatch import accumulator
    from .engine import run_backward

    differentiable = [j for j, o in enumerate(outs) if o.requires_grad]
    cases = [None] + (differentiable if len(differentiable) > 1 else [])
    wrt = [inputs[k] for k in diff]
    for undef in cases:
        edges, seeds = [], []
        for j, o in enumerate(_tensor_outputs(func, inputs)):  # a fresh graph: each run frees its own
            if not o.requires_grad:
                continue
            node = o.grad_fn
            edges.append((node, o._output_nr) if node is not None else (accumulator(o), 0))
            leave = undef is None or undef == j
            seeds.append(None if leave else jnp.zeros_like(o._data))
        which = "every output gradient undefined" if undef is None else \
            f"the gradient of output {undef} undefined and the others zero"
        try:
            gs = run_backward(edges, seeds, retain_graph=False, create_graph=False, inputs=wrt, capture=True,
                              allow_unused=True)
        except Exception as e:
            _warn_undefined_check()
            raise GradcheckError(
                f"Expected backward function to handle undefined output grads. Backward failed with {which}: "
                f"{type(e).__name__}: {e}\nA backward must accept output gradients that are undefined: None for a custom Function that "
                "called ctx.set_materialize_grads(False), zeros otherwise (for example when only some outputs are "
                "used). Return None or zeros for the inputs in that case. Pass check_undefined_grad=False to "
                "skip this check.") from e
        for k, g in zip(diff, gs):
            if g is not None and not bool(jnp.all(g._data == 0)):
                _warn_undefined_check()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are undefined or zero. "
                    f"Input {k} got a nonzero gradient (largest magnitude {float(jnp.abs(g._data).max())}) with "
                    f"{which}: when every output gradient is undefined or "
                    "zero, each input gradient must be None or zero. Check that the backward multiplies by its "
                    "output gradients and handles None. Pass check_undefined_grad=False to skip this check.")


def _check_undefined_forward(func, inputs, diff):
    """PyTorch's undefined-tangent check for forward mode: with the other inputs carrying random tangents, an
    input given a zero tangent and one given none at all must give the same output tangents."""
    from . import forward_ad

    key = jax.random.PRNGKey(4)
    with forward_ad.dual_level():
        duals = list(inputs)
        for k in diff:
            key, sub = jax.random.split(key)
            x = inputs[k]
            duals[k] = forward_ad.make_dual(x.detach(), Tensor._wrap(jax.random.uniform(sub, x.shape, x._data.dtype)))
        for k in diff:
            x = inputs[k]
            args = list(duals)
            args[k] = forward_ad.make_dual(x.detach(), Tensor._wrap(jnp.zeros_like(x._data)))
            zero = [forward_ad.unpack_dual(o).tangent for o in _tensor_outputs(func, args)]
            args[k] = x.detach()
            none = [forward_ad.unpack_dual(o).tangent for o in _tensor_outputs(func, args)]
            for j, (a, b) in enumerate(zip(zero, none)):
                if a is not None and b is not None and not np.allclose(np.asarray(a._data), np.asarray(b._data)):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output with index: {j} when input: {k} has an undefined "
                        f"tangent value. Got: {a} but expected: {b}. A zero tangent and no tangent must give "
                        "the same output tangents (check the jvp's handling of None or zero tangents).")


def _compare_batched(what, j, k, got, expected):
    got = np.asarray(got, np.float64)
    expected = np.asarray(expected, np.float64)
    if got.shape == expected.shape and np.allclose(got, expected):
        return
    raise GradcheckError(f"{what} mismatch for output {j} with respect to input {k}: computing a batch of "
                         f"{_BATCH} at once gave\n{got}\nbut computing them one at a time gave\n{expected}\n"
                         "Every step of the computation must treat the batch elements independently.")


def _check_batched_grad(inputs, diff, outs):
    """`grad(..., is_grads_batched=True)` with a batch of random cotangents against one call per cotangent."""
    from .backward import grad
    key = jax.random.PRNGKey(2)
    wrt = [inputs[k] for k in diff]
    for j, out in enumerate(outs):
        if not out.requires_grad:
            continue
        key, sub = jax.random.split(key)
        vs = jax.random.normal(sub, (_BATCH,) + tuple(out.shape), dtype=out._data.dtype)
        one_by_one = [grad(out, wrt, Tensor._wrap(v), retain_graph=True, allow_unused=True) for v in vs]
        try:
            batched = grad(out, wrt, Tensor._wrap(vs), retain_graph=True, allow_unused=True, is_grads_batched=True)
        except Exception as e:
            raise GradcheckError(f"Computing batched gradients (grad(..., is_grads_batched=True)) of output {j} "
                                 f"failed: {type(e).__name__}: {e}\nEvery backward on the path must work on a batch "
                                 "of output gradients. Pass check_batched_grad=False to skip this check.") from e
        for i, (k, g) in enumerate(zip(diff, batched)):
            x = inputs[k]._data
            exp = jnp.stack([jnp.zeros_like(x) if row[i] is None else row[i]._data for row in one_by_one])
            got = jnp.zeros_like(exp) if g is None else g._data
            _compare_batched("Batched gradient", j, k, got, exp)


def _check_batched_forward_grad(func, inputs, diff):
    """Forward mode with a batch of random tangents (one vmapped call) against one call per tangent."""
    key = jax.random.PRNGKey(3)
    for k in diff:
        x = inputs[k]
        key, sub = jax.random.split(key)
        tangents = jax.random.normal(sub, (_BATCH,) + tuple(x.shape), dtype=x._data.dtype)
        one_by_one = _forward_tangents(func, inputs, k, tangents, batched=False)
        try:
            batched = _forward_tangents(func, inputs, k, tangents, batched=True)
        except Exception as e:
            raise GradcheckError(f"Computing batched forward gradients (tangents of input {k} under jax.vmap) "
                                 f"failed: {type(e).__name__}: {e}\nEvery forward-mode rule (a Function's jvp "
                                 "included) must work on traced tangents, without host reads such as .item(). "
                                 "Pass check_batched_forward_grad=False to skip this check.") from e
        for j, (got, exp) in enumerate(zip(batched, one_by_one)):
            _compare_batched("Batched forward gradient", j, k, got, exp)


def _real_parts(func, inputs):
    """`func` as a function of real tensors: each complex input that requires grad becomes two inputs (its real
    and imaginary parts), each complex output two outputs. Checking its real Jacobian checks the complex
    backward in PyTorch's convention (the conjugate Wirtinger derivative) and the forward-mode tangents."""
    from .._ops import complex as make_complex
    from .._ops import imag, real

    split = [isinstance(x, Tensor) and x.requires_grad and x.dtype.is_complex for x in inputs]
    args, parts = [], []  # parts: per real input, (the original input, "real" / "imaginary" / None)
    for i, (x, sp) in enumerate(zip(inputs, split)):
        if sp:  # (the imaginary part first: PyTorch reports a mismatch there first)
            args += [imag(x).detach().requires_grad_(), real(x).detach().requires_grad_()]
            parts += [(i, "imaginary"), (i, "real")]
        else:
            args.append(x)
            parts.append((i, None))

    def real_func(*a):
        it = iter(a)
        ins = []
        for sp in split:
            if sp:
                im = next(it)
                ins.append(make_complex(next(it), im))
            else:
                ins.append(next(it))
        outs = []
        for o in _outputs_of(func, ins):
            outs += [imag(o), real(o)] if isinstance(o, Tensor) and o.dtype.is_complex else [o]
        return tuple(outs)

    out_parts = []
    for j, o in enumerate(_tensor_outputs(func, inputs)):
        out_parts += [(j, "imaginary"), (j, "real")] if o.dtype.is_complex else [(j, None)]
    return real_func, tuple(args), (parts, out_parts)


def _complex_message(e: GradcheckError, in_parts, out_parts) -> str:
    """The message of a check of `_real_parts(func)` in terms of `func`'s own inputs and outputs, led as
    PyTorch's ("While considering the imaginary part of complex inputs only, ...")."""
    msg = str(e)
    m = re.match(r"(.*?) for output (\d+) with respect to input (\d+)", msg)
    if m is None:
        return msg
    (j, out_part), (k, in_part) = out_parts[int(m[2])], in_parts[int(m[3])]
    # (PyTorch checks reverse mode on the parts of complex outputs, forward mode on those of complex inputs)
    part, of = (in_part, "inputs") if "forward mode" in m[1] else (out_part, "outputs")
    lead = f"While considering the {part} part of complex {of} only, " if part else ""
    return f"{lead}{m[1]} for output {j} with respect to input {k}" + msg[m.end():]


def _op_by_op(check):
    """`check` run with every op executed as it is called: a fused program may round a sum differently in the last
    bit from op-by-op execution, and gradcheck compares repeated backward passes exactly (`nondet_tol=0`)."""
    @functools.wraps(check)
    def run(*args, **kwargs):
        from .._adaptive import op_by_op

        with op_by_op():
            return check(*args, **kwargs)
    return run


@_op_by_op
def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """Check the gradients of `func` against finite differences w.r.t. inputs that require grad.

    Arguments:
        func: function of tensors returning a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of arguments (tensors with `requires_grad=True` are checked).
        eps: finite-difference step.
        atol, rtol: tolerances of the comparison `|analytical - numerical| <= atol + rtol * |numerical|`.
        raise_exception: raise `GradcheckError` on a failed check (else return False).
        nondet_tol: tolerance for non-determinism (the backward is run twice and compared).
        check_undefined_grad: run backward with undefined output gradients (None for custom Functions, zeros
            for other nodes), all at once and one output at a time; it must not fail and every input
            gradient must be None or zero.
        check_grad_dtypes: also check that each gradient has its input's shape, dtype and device.
        check_batched_grad: compare `grad(..., is_grads_batched=True)` on a batch of random cotangents with
            one `grad` call per cotangent.
        check_batched_forward_grad: compare forward mode on a batch of random tangents (one `jax.vmap`ped
            call) with one call per tangent; needs `check_forward_ad`.
        check_forward_ad: also compare the Jacobian from forward-mode AD (`tp.autograd.forward_ad`, a
            Function's `jvp` included) with the numerical one.
        check_backward_ad: compare the reverse-mode Jacobian (and run the checks above that use backward);
            at least one of `check_backward_ad` and `check_forward_ad` must be True.
        fast_mode: compare one random projection `v^T J u` instead of the full Jacobian.
        masked: accepted for PyTorch compatibility; no effect, since tapeflow has no sparse or masked layouts.

    Returns:
        True when all checks pass.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(3, dtype=tp.float64, requires_grad=True)
        >>> tp.autograd.gradcheck(lambda t: 1 / (1 + tp.exp(-t)), (x,), check_forward_ad=True)
        True
    """
    inputs, diff = _checked_inputs(inputs)
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    for k in diff:
        if inputs[k].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{k} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision "
                          "floating point or complex.", stacklevel=2)
    s = _Settings(eps, atol, rtol, nondet_tol, check_backward_ad, check_forward_ad, check_grad_dtypes)
    try:
        outs = _tensor_outputs(func, inputs)
        if any(inputs[k].dtype.is_complex for k in diff) or any(o.dtype.is_complex for o in outs):
            func, inputs, (in_parts, out_parts) = _real_parts(func, inputs)
            try:
                return gradcheck(func, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=True,
                                 nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                                 check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                                 check_batched_forward_grad=check_batched_forward_grad,
                                 check_forward_ad=check_forward_ad, check_backward_ad=check_backward_ad,
                                 fast_mode=fast_mode)
            except GradcheckError as e:
                raise GradcheckError(_complex_message(e, in_parts, out_parts)) from None
        if outs and not any(o.requires_grad for o in outs):
            _check_no_differentiable_outputs(func, inputs, diff, outs, s)
            return True
        (_check_fast if fast_mode else _check_jacobians)(func, inputs, diff, outs, s)
        if check_backward_ad:
            _check_mul_by_grad_output(inputs, diff, outs)
        if check_backward_ad and check_grad_dtypes:
            _check_grad_attributes(inputs, diff, outs)
        if check_backward_ad and check_undefined_grad:
            _check_undefined_grad(func, inputs, diff, outs)
        if check_batched_grad:
            _check_batched_grad(inputs, diff, outs)
        if check_forward_ad and check_undefined_grad:
            _check_undefined_forward(func, inputs, diff)
        if check_batched_forward_grad:
            _check_batched_forward_grad(func, inputs, diff)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


@_op_by_op
def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second-order gradients: gradcheck of the (create_graph) backward of `func`.

    Arguments:
        func: function of tensors returning a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of arguments.
        grad_outputs: gradients w.r.t. the outputs (random float tensors requiring grad when None).
        eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad, check_grad_dtypes,
            check_batched_grad, fast_mode: as in `gradcheck`, applied to the backward of `func`.
        check_rev_over_rev: check the backward of the backward (gradcheck's `check_backward_ad`).
        check_fwd_over_rev: check forward-mode AD through the backward (gradcheck's `check_forward_ad`).
        gen_non_contig_grad_outputs, masked: accepted for PyTorch compatibility; no effect (tapeflow tensors
            have no strides, and no sparse or masked layouts).

    Returns:
        True when the check passes.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(3, dtype=tp.float64, requires_grad=True)
        >>> tp.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
        True
    """
    from .backward import grad
    inputs, diff = _checked_inputs(inputs)
    outs = _tensor_outputs(func, inputs)
    if grad_outputs is None:
        key = jax.random.PRNGKey(1)
        grad_outputs = []
        for o in outs:
            key, sub = jax.random.split(key)
            g = Tensor._wrap(jax.random.normal(sub, tuple(o.shape), dtype=o._data.dtype))
            g.requires_grad_(True)
            grad_outputs.append(g)
    grad_outputs = list(_as_tuple(grad_outputs))
    n_in = len(inputs)

    def new_func(*args):
        # (gradcheck's forward-mode check passes detached inputs: the ones to differentiate are marked again)
        ins = tuple(x.requires_grad_() if k in diff else x for k, x in enumerate(args[:n_in]))
        gos = args[n_in:]
        o = _tensor_outputs(func, ins)
        pairs = [(t, g) for t, g in zip(o, gos) if t.requires_grad]
        wrt = [ins[k] for k in diff]
        gs = grad([t for t, _ in pairs], wrt, [g for _, g in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, fast_mode=fast_mode)


# `tp.autograd.gradcheck` is the function (as in PyTorch); keep the error class reachable from it too.
gradcheck.GradcheckError = GradcheckError


_PRIVATE_API = ("`{}` was part of PyTorch's private API and not meant to be exposed; it is deprecated and will be "
                "removed. Use `gradcheck`, or `tapeflow.autograd.functional.jacobian` for a Jacobian.")


def get_numerical_jacobian(fn, inputs, target=None, eps: float = 1e-3, grad_out: float = 1.0) -> tuple:
    """Deprecated: central-difference Jacobians of `fn(inputs)`'s first output, one `(input numel, output
    numel)` tensor per tensor of `target` (default: `inputs`) that requires grad. `fn` takes the inputs as
    one tuple; each target is perturbed in place, so it may also reach `fn` through a closure.

    Example:
        >>> import warnings, tapeflow as tp
        >>> from tapeflow.autograd.gradcheck import get_numerical_jacobian
        >>> a = tp.ones(2, dtype=tp.float64, requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     jac = get_numerical_jacobian(lambda ins: 3 * ins[0], (a,), eps=1e-6)[0]
        >>> jac.round(decimals=6).tolist()
        [[3.0, 0.0], [0.0, 3.0]]
    """
    warnings.warn(_PRIVATE_API.format("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer supports values of "
                         "grad_out != 1.0.")
    inputs = _as_tuple(inputs)
    targets = inputs if target is None else _as_tuple(target)
    jacobians = []
    for t in targets:
        if isinstance(t, Tensor) and t.requires_grad:
            first = _numerical(lambda _: fn(inputs), [t], 0, eps, _basis(t))[0]
            jacobians.append(Tensor._wrap(jnp.asarray(first, t._data.dtype)))
    return tuple(jacobians)


def get_analytical_jacobian(inputs, output, nondet_tol: float = 0.0, grad_out: float = 1.0) -> tuple:
    """Deprecated: `(jacobians, reentrant, correct_grad_sizes, correct_grad_types)`: the Jacobian of `output`
    with respect to each input that requires grad, `(input numel, output numel)`, from one backward pass per
    output element; whether a second computation agreed within `nondet_tol`; whether every gradient had its
    input's shape, and its dtype.

    Example:
        >>> import warnings, tapeflow as tp
        >>> from tapeflow.autograd.gradcheck import get_analytical_jacobian
        >>> a = tp.ones(2, dtype=tp.float64, requires_grad=True)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     jac, reentrant, sizes_ok, types_ok = get_analytical_jacobian((a,), a * 3)
        >>> jac[0].tolist(), reentrant, sizes_ok, types_ok
        ([[3.0, 0.0], [0.0, 3.0]], True, True, True)
    """
    from .backward import grad

    warnings.warn(_PRIVATE_API.format("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer supports values of "
                         "grad_out != 1.0.")
    if output.is_complex():
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer supports "
                         "functions that return complex outputs.")
    diff = [t for t in _as_tuple(inputs) if isinstance(t, Tensor) and t.requires_grad]
    n_out = output.numel()
    sizes_ok = types_ok = True

    def jacobians():
        nonlocal sizes_ok, types_ok
        cols = [np.zeros((t.numel(), n_out)) for t in diff]
        for m in range(n_out):
            seed = jnp.zeros((n_out,), output._data.dtype).at[m].set(1).reshape(output.shape)
            gs = grad(output, diff, Tensor._wrap(seed), retain_graph=True, allow_unused=True)
            for col, t, g in zip(cols, diff, gs):
                if g is None:
                    continue
                sizes_ok = sizes_ok and g.shape == t.shape
                types_ok = types_ok and g.dtype == t.dtype
                if g.numel() == t.numel():
                    col[:, m] = np.asarray(g._data, np.float64).reshape(-1)
        return cols

    first, second = jacobians(), jacobians()
    reentrant = all(np.allclose(a, b, rtol=0, atol=nondet_tol) for a, b in zip(first, second))
    jac = tuple(Tensor._wrap(jnp.asarray(c, t._data.dtype)) for c, t in zip(first, diff))
    return jac, reentrant, sizes_ok, types_ok
