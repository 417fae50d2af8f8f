"""gradcheck / gradgradcheck: compare the tape's gradients with finite differences.

The numerical Jacobian is computed in one batched evaluation per input: all
perturbed copies of the input are stacked and the function runs once under
`jax.vmap` (tapeflow ops accept JAX tracers). Functions that cannot be traced
(for example ones calling `.item()`) fall back to one evaluation per
perturbation.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` / `gradgradcheck` when the gradients do not match."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_inputs(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs_of(func, inputs):
    return _as_tuple(func(*inputs))


def _pure(func, inputs, k):
    """func as a function of the raw array of input k, returning raw output arrays.

    The inputs keep their requires_grad flags, so functions that differentiate inside
    (gradgradcheck) still see a tape."""

    def f(arr):
        args = list(inputs)
        args[k] = Tensor._wrap(arr).requires_grad_(inputs[k].requires_grad)
        outs = _outputs_of(func, args)
        return tuple(o._data for o in outs if isinstance(o, Tensor))
    return f


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
        outs = tuple(jnp.stack([r[j] for r in rows]) for j in range(len(rows[0])))
    m = directions.shape[0]
    return [np.asarray((o[:m] - o[m:]).reshape(m, -1), dtype=np.float64) / (2 * eps) for o in outs]


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


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


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
        raise_exception: raise `GradcheckError` on mismatch (else return False).
        nondet_tol: tolerance for non-determinism (the backward is run twice and compared).
        check_grad_dtypes: also check that each gradient has its input's dtype.
        fast_mode: compare one random projection `v^T J u` instead of the full Jacobian.
        check_undefined_grad, check_batched_grad, check_batched_forward_grad, check_forward_ad,
        check_backward_ad, masked: accepted for PyTorch compatibility; the backward check is always run.

    Returns:
        True when all checks pass.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(3, dtype=tp.float64, requires_grad=True)
        >>> tp.autograd.gradcheck(lambda t: 1 / (1 + tp.exp(-t)), (x,))
        True
    """
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the "
                         "them have requires_grad=True. Hint: create the inputs with requires_grad=True.")
    for k in diff:
        if inputs[k].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{k} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision "
                          "floating point or complex.", stacklevel=2)
    outs = _outputs_of(func, inputs)
    outs = [o for o in outs if isinstance(o, Tensor)]
    if fast_mode:
        return _fast(func, inputs, diff, outs, eps, atol, rtol, raise_exception)
    numer = {k: _numerical(func, inputs, k, eps, jnp.eye(inputs[k].numel(), dtype=inputs[k]._data.dtype)
                           .reshape((-1,) + tuple(inputs[k].shape))) for k in diff}
    for j, out in enumerate(outs):
        ana = _vjp_rows(outs, inputs, diff, j)
        if nondet_tol >= 0 and out.requires_grad:
            again = _vjp_rows(outs, inputs, diff, j)
            for k in diff:
                if not np.allclose(ana[k], again[k], rtol=0, atol=nondet_tol):
                    return _fail(f"Backward is not reentrant, i.e., running backward with same input and "
                                 f"grad_output multiple times gives different values, although analytical "
                                 f"gradient matches numerical gradient. The tolerance for nondeterminism "
                                 f"was {nondet_tol}.", raise_exception)
        for k in diff:
            n = numer[k][j]
            a = ana[k]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                diffpos = np.argwhere(~np.isclose(a, n, rtol=rtol, atol=atol))
                return _fail(f"Jacobian mismatch for output {j} with respect to input {k},\n"
                             f"numerical:{n}\nanalytical:{a}\n"
                             f"mismatched (input element, output element) positions: {diffpos[:10].tolist()}\n"
                             f"max abs difference: {np.abs(a - n).max()}. Hint: use float64 inputs and "
                             f"check the backward formula of the operation.", raise_exception)
        if check_grad_dtypes and out.requires_grad:
            from .backward import grad
            gs = grad(out, [inputs[k] for k in diff], Tensor._wrap(jnp.ones_like(out._data)),
                      retain_graph=True, allow_unused=True)
            for k, g in zip(diff, gs):
                if g is not None and g.dtype != inputs[k].dtype:
                    return _fail("Gradient has dtype mismatch", raise_exception)
    return True


def _fast(func, inputs, diff, outs, eps, atol, rtol, raise_exception):
    """Random projections: numerical v^T (J u) (finite difference along u) vs analytical (v^T J) u."""
    from .backward import grad
    key = jax.random.PRNGKey(0)
    for k in diff:
        x = inputs[k]
        key, ku = jax.random.split(key)
        u = jax.random.normal(ku, (1,) + tuple(x.shape), dtype=x._data.dtype)
        ju = _numerical(func, inputs, k, eps, u)
        for j, out in enumerate(outs):
            key, kv = jax.random.split(key)
            v = jax.random.normal(kv, tuple(out.shape), dtype=out._data.dtype)
            numerical = float(np.dot(ju[j][0], np.asarray(v, np.float64).reshape(-1)))
            analytical = 0.0
            if out.requires_grad:
                (g,) = grad(out, [x], Tensor._wrap(v), retain_graph=True, allow_unused=True)
                if g is not None:
                    analytical = float(np.dot(np.asarray(g._data, np.float64).reshape(-1),
                                              np.asarray(u, np.float64).reshape(-1)))
            if not np.isclose(analytical, numerical, rtol=rtol, atol=atol):
                return _fail(f"Jacobian mismatch for output {j} with respect to input {k},\n"
                             f"numerical:{numerical}\nanalytical:{analytical}\n"
                             "(fast mode compares v^T J u for random u, v; rerun with fast_mode=False "
                             "to see the full Jacobians.)", raise_exception)
    return True


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
        eps, atol, rtol, raise_exception, nondet_tol, check_grad_dtypes, fast_mode: as in `gradcheck`.
        other arguments: accepted for PyTorch compatibility.

    Returns:
        True when the check passes.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.randn(3, dtype=tp.float64, requires_grad=True)
        >>> tp.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
        True
    """
    from .backward import grad
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the "
                         "them have requires_grad=True. Hint: create the inputs with requires_grad=True.")
    outs = [o for o in _outputs_of(func, inputs) if isinstance(o, Tensor)]
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
        ins, gos = args[:n_in], args[n_in:]
        o = [t for t in _outputs_of(func, ins) if isinstance(t, Tensor)]
        pairs = [(t, g) for t, g in zip(o, gos) if t.requires_grad]
        wrt = [ins[k] for k in _diff_inputs(ins)]
        gs = grad([t for t, _ in pairs], wrt, [g for _, g in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_grad_dtypes=check_grad_dtypes,
                     fast_mode=fast_mode)


# `tp.autograd.gradcheck` is the function (as in PyTorch); keep the error class reachable from it too.
gradcheck.GradcheckError = GradcheckError
