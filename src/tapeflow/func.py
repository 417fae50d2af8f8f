"""`tapeflow.func`: JAX-style function transforms over tapeflow functions,
with `torch.func`'s names and argument conventions.

Each transform turns the tapeflow function into a pure JAX function on
arrays (Tensors in arguments become arrays; inside, arrays or tracers are
wrapped back into Tensors; Tensor results are unwrapped), applies the JAX
transform, and wraps the arrays it returns into Tensors. Transforms compose
(`jacfwd(grad(f))`), and work inside `jax.jit`.

Called outside any JAX transform, a transform is compiled with `jax.jit` on
its second call with the same key and the program is reused afterwards. The
key: the user's function, the chain of transforms applied to it and their
options (`hessian(f)` built anew each call has the same key), the tree
structure, shapes and dtypes of the arguments, and the values of their
non-tensor leaves (Python numbers, strings, dtypes). Tensors the function
reads without taking them as arguments (closures, module parameters) are
inputs of the program, so it sees their current values; in-place writes to
them are written back and random draws advance the global generator, as in
eager code (the staging layer, `tapeflow._staging`, does this for every
path). Functions that cannot be compiled (data-dependent Python, host reads)
run the uncached path.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from xla_ops import torch_vjp

from . import _ops
from ._staging import pure as _pure
from ._staging import to_arrays as _to_arrays
from ._staging import to_tensors as _to_tensors
from ._staging.implicit import FAILED, MISS, Implicit, uncached
from ._state import state
from ._tensor import Tensor

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call",
           "stack_module_state"]


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


# -- caching -------------------------------------------------------------------------------------------
_cache = Implicit("tapeflow.func")


def _spec_of(func) -> tuple:
    """`(base function, chain of transform steps)` naming `func`: `(func, ())` unless a transform made it."""
    spec = getattr(func, "_tp_spec", None)
    return spec if type(spec) is tuple and len(spec) == 2 else (func, ())


def _spec(func, step):
    """`(base, chain)` for `step` applied to `func`; None when the step is not hashable."""
    base, chain = _spec_of(func)
    try:
        hash(step)
    except TypeError:
        return None
    return base, chain + (step,)


def _transformed(func: Callable, step: tuple, impl: Callable) -> Callable:
    """The public wrapper: `impl` (the uncached transform), compiled and cached by `(base, chain)`."""
    spec = _spec(func, step)

    def wrapper(*args, **kwargs):
        base, chain = wrapper._tp_spec
        out = _cached(base, chain, ("call",), _apply, args, kwargs)
        if out is not MISS and out is not FAILED:
            return _to_tensors(out)
        with uncached():
            return impl(*args, **kwargs)

    # A step that cannot be keyed makes the wrapper itself the function cached (by identity).
    wrapper._tp_spec = spec if spec is not None else (wrapper, ())
    return wrapper


def _rebuild(base: Callable, chain: tuple) -> Callable:
    """The transformed function named by `(base, chain)`, e.g. `jacfwd(jacrev(base))`."""
    f = base
    for name, *opts in chain:
        f = _STEPS[name](f, *opts)
    return f


def _apply(f, *args, **kwargs):
    return f(*args, **kwargs)


def _cached(base: Callable, chain: tuple, tag: tuple, terminal: Callable, args: tuple, kwargs: dict):
    """`terminal(_rebuild(base, chain), *args, **kwargs)` as a staged program (see `_staging.implicit`), or
    `MISS` / `FAILED` when the caller should run its uncached path."""

    def body(f, *a, **kw):
        return terminal(_rebuild(f, chain), *a, **kw)

    return _cache.run(base, (tag, chain), body, args, kwargs)


def _argnums_tuple(argnums, nargs: int, name: str) -> tuple:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{name}: argnums must be int or Tuple[int, ...], got {type(a).__name__}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{name}: Got argnums={argnums}, but only {nargs} positional inputs; pass an "
                               "argnums within range.")
    return nums


def _scalar_check(out, name: str, has_aux: bool):
    value = out[0] if has_aux else out
    if has_aux and not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{name}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    if not isinstance(value, Tensor):
        raise RuntimeError(f"{name}(f)(*args): Expected f(*args) to return a Tensor, got {type(value).__name__}")
    if value.ndim != 0:
        raise RuntimeError(f"{name}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                           f"{value.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
    if value._raw.dtype.kind == "c":
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {value.dtype}")


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """A function returning `(gradient, value)` of a scalar-valued `func`.

    Arguments:
        func: a function of Tensors returning a 0-d Tensor (or `(output, aux)` with `has_aux`).
        argnums: which positional argument(s) to differentiate.
        has_aux: `func` returns `(output, aux)`; aux is returned untouched.

    Returns:
        A function with `func`'s signature returning `(grad, value)` (or
        `(grad, (value, aux))`). `grad` is a tuple when `argnums` is one.

    Example:
        >>> import tapeflow as tp
        >>> g, v = tp.func.grad_and_value(lambda x: (x ** 2).sum())(tp.tensor([1.0, 2.0]))
        >>> g, v
        (tensor([2., 4.]), tensor(5.))
    """

    return _transformed(func, ("grad_and_value", _argnums_key(argnums), has_aux),
                        _grad_and_value_impl(func, argnums, has_aux))


def _argnums_key(argnums):
    return argnums if isinstance(argnums, int) else tuple(argnums)


def _grad_and_value_impl(func: Callable, argnums, has_aux: bool) -> Callable:
    def impl(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), "grad_and_value")

        def checked(*a, **kw):
            out = func(*a, **kw)
            _scalar_check(out, "grad_and_value", has_aux)
            return out

        f = _pure(checked, kwargs)
        jnums = nums[0] if isinstance(argnums, int) else nums
        value_grad = jax.value_and_grad(f, argnums=jnums, has_aux=has_aux)
        value, g = value_grad(*_to_arrays(args))
        return _to_tensors(_torch_convention(g)), _to_tensors(value)

    return impl


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """A function computing the gradient of a scalar-valued `func`.

    Arguments:
        func: a function of Tensors returning a 0-d Tensor (or `(output, aux)` with `has_aux`).
        argnums: which positional argument(s) to differentiate.
        has_aux: `func` returns `(output, aux)`; the wrapper then returns `(grad, aux)`.

    Returns:
        A function with `func`'s signature returning the gradient(s).

    Example:
        >>> import tapeflow as tp
        >>> tp.func.grad(lambda x: x.sin().sum())(tp.tensor([0.0]))
        tensor([1.])
    """
    gv = _grad_and_value_impl(func, argnums, has_aux)

    def impl(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return _transformed(func, ("grad", _argnums_key(argnums), has_aux), impl)


def vjp(func: Callable, *primals: Any, has_aux: bool = False):
    """Run `func` at `primals`; return its output and a function computing vector-Jacobian products.

    Arguments:
        func: a function of Tensors returning a Tensor or a pytree of Tensors.
        *primals: the positional arguments to `func`.
        has_aux: `func` returns `(output, aux)`.

    Returns:
        `(output, vjp_fn)` or `(output, vjp_fn, aux)`; `vjp_fn(cotangents)`
        returns a tuple with one gradient per primal.

    Example:
        >>> import tapeflow as tp
        >>> out, fn = tp.func.vjp(lambda x: x * 3, tp.tensor([1.0, 2.0]))
        >>> fn(tp.ones(2))
        (tensor([3., 3.]),)
    """
    base, chain = _spec_of(func)
    res = _cached(base, chain, ("vjp", has_aux), functools.partial(_vjp_arrays, has_aux=has_aux), primals, {})
    if res is MISS or res is FAILED:
        with uncached():
            res = _vjp_arrays(func, *primals, has_aux=has_aux)
        pull = res[1]
    else:
        pull = functools.partial(_pull, res[1])  # the pullback of the cached program: residuals in, compiled
    out = res[0]

    pull = torch_vjp(pull)

    def vjp_fn(cotangents):
        return tuple(_to_tensors(pull(_to_arrays(cotangents))))

    if has_aux:
        return _to_tensors(out), vjp_fn, _to_tensors(res[2])
    return _to_tensors(out), vjp_fn


def _vjp_arrays(func, *primals, has_aux: bool):
    return jax.vjp(_pure(func, {}), *_to_arrays(primals), has_aux=has_aux)


@jax.jit
def _pull(pullback, cotangents):
    return pullback(cotangents)


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False):
    """The output of `func` at `primals` and its Jacobian-vector product with `tangents`.

    Arguments:
        func: a function of Tensors.
        primals: a tuple of positional arguments.
        tangents: a tuple of tangents, one per primal, of the same shapes.
        strict: accepted for compatibility with `torch.func.jvp`.
        has_aux: `func` returns `(output, aux)`.

    Returns:
        `(output, jvp_out)` or `(output, jvp_out, aux)`.

    Example:
        >>> import tapeflow as tp
        >>> tp.func.jvp(lambda x: x ** 2, (tp.tensor([3.0]),), (tp.ones(1),))
        (tensor([9.]), tensor([6.]))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. it "
                           "should be valid to call f(*primals).")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure; got {len(primals)} primals and {len(tangents)} tangents.")
    base, chain = _spec_of(func)
    primals, tangents = tuple(primals), tuple(tangents)
    res = _cached(base, chain, ("jvp", has_aux), functools.partial(_jvp_arrays, has_aux=has_aux), (primals, tangents), {})
    if res is MISS or res is FAILED:
        with uncached():
            res = _jvp_arrays(func, primals, tangents, has_aux=has_aux)
    return tuple(_to_tensors(r) for r in res)


def _jvp_arrays(func, primals: tuple, tangents: tuple, *, has_aux: bool):
    with _forward_mode_hooks("jvp"):
        return jax.jvp(_pure(func, {}), _to_arrays(primals), _to_arrays(tangents), has_aux=has_aux)


@contextlib.contextmanager
def _forward_mode_hooks(name: str):
    """JAX's forward mode cannot pass through the custom VJP a tensor hook puts on a traced value: say so."""
    try:
        yield
    except TypeError as e:
        if "forward-mode" not in str(e) or "custom_vjp" not in str(e):
            raise
        raise RuntimeError(f"tapeflow.func.{name}: the function registers a tensor hook (or calls a custom Function) "
                           "and is differentiated in forward mode (jvp, jacfwd, hessian): hooks act on gradients "
                           "only, and JAX's forward mode cannot pass through them. Use a "
                           "reverse-mode transform instead (jacrev, or autograd.functional.hessian for a Hessian), "
                           "or remove the hook.") from e


def _torch_convention(grads):
    """Gradients from JAX's reverse mode in PyTorch's complex convention (conjugated; reals as they are)."""
    return jax.tree.map(lambda a: a.conj() if jnp.iscomplexobj(a) else a, grads)


def _refuse_complex(name: str, tree, what: str) -> None:
    """PyTorch's jacrev/jacfwd take real inputs and outputs only (the Jacobian of a complex map is not one
    matrix in the conjugate-Wirtinger convention); the same error, with its flattened index."""
    for i, leaf in enumerate(jax.tree.leaves(tree, is_leaf=_is_tensor)):
        if isinstance(leaf, Tensor) and leaf._raw.dtype.kind == "c":
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex tensor at flattened "
                               f"input idx: {i}")


def _jac(transform, name: str, func: Callable, argnums, has_aux: bool, randomness: str | None = None) -> Callable:
    def impl(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), name)
        jnums = nums[0] if isinstance(argnums, int) else nums
        def checked(*a, **kw):
            if randomness == "error":  # (PyTorch's jacfwd runs `func` under vmap: a draw is refused)
                outer = state.vmap_randomness
                state.vmap_randomness = (*outer, ("error", None))
                try:
                    out = func(*a, **kw)
                finally:
                    state.vmap_randomness = outer
            else:
                out = func(*a, **kw)
            _refuse_complex(name, out[0] if has_aux else out, "outputs")
            return out

        jf = transform(_pure(checked, kwargs), argnums=jnums, has_aux=has_aux)
        _refuse_complex(name, args, "inputs")
        with _forward_mode_hooks(name):
            res = jf(*_to_arrays(args))
        if has_aux:
            return _to_tensors(res[0]), _to_tensors(res[1])
        return _to_tensors(res)

    step = (name, _argnums_key(argnums), has_aux) if randomness is None else \
        (name, _argnums_key(argnums), has_aux, randomness)
    return _transformed(func, step, impl)


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of `func` by reverse mode (one vectorised VJP per output element).

    Arguments:
        func: a function of Tensors.
        argnums: which positional argument(s) to differentiate.
        has_aux: `func` returns `(output, aux)`.
        chunk_size: accepted for compatibility (the whole Jacobian is computed at once).

    Returns:
        A function returning the Jacobian, shaped `output.shape + input.shape`.

    Example:
        >>> import tapeflow as tp
        >>> tp.func.jacrev(lambda x: x * 2)(tp.ones(2))
        tensor([[2., 0.],
                [0., 2.]])
    """
    return _jac(jax.jacrev, "jacrev", func, argnums, has_aux)


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of `func` by forward mode (one vectorised JVP per input element).

    Arguments:
        func: a function of Tensors.
        argnums: which positional argument(s) to differentiate.
        has_aux: `func` returns `(output, aux)`.
        randomness: `"error"` (the default) refuses a random op inside `func`, as
            PyTorch's; `"same"` and `"different"` draw once for all the columns.

    Returns:
        A function returning the Jacobian, shaped `output.shape + input.shape`.

    Example:
        >>> import tapeflow as tp
        >>> tp.func.jacfwd(lambda x: x ** 2)(tp.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    _check_randomness(randomness)
    return _jac(jax.jacfwd, "jacfwd", func, argnums, has_aux, randomness)


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of a scalar `func` (forward-over-reverse: `jacfwd(jacrev(func))`).

    Arguments:
        func: a function of Tensors returning a 0-d Tensor.
        argnums: which positional argument(s) to differentiate.

    Returns:
        A function returning the Hessian, shaped `input.shape + input.shape`.

    Example:
        >>> import tapeflow as tp
        >>> tp.func.hessian(lambda x: (x ** 3).sum())(tp.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Vectorise `func` over a batch dimension of its inputs (`jax.vmap` underneath).

    Arguments:
        func: a function of Tensors.
        in_dims: the batch dimension of each input (an int, `None` for unbatched,
            or a structure matching the arguments).
        out_dims: where the batch dimension goes in each output.
        randomness: what a random op inside does, as in PyTorch: `"error"` (the
            default) raises; `"same"` draws once for the whole batch; `"different"`
            draws independently for each element (from the generator's JAX key,
            split along the batch).
        chunk_size: accepted for compatibility (the whole batch runs at once).

    Returns:
        The batched function.

    Example:
        >>> import tapeflow as tp
        >>> tp.func.vmap(lambda x: x.sum())(tp.ones(3, 2))
        tensor([2., 2., 2.])
    """
    _check_randomness(randomness)
    in_axes = tuple(in_dims) if isinstance(in_dims, list) else in_dims

    def impl(*args, **kwargs):
        f = _pure(func, kwargs)
        axis = object()  # (names this vmap's batch axis for the draws made inside: see `next_key`)

        def body(*a):
            outer = state.vmap_randomness
            state.vmap_randomness = (*outer, (randomness, axis))
            try:
                return f(*a)
            finally:
                state.vmap_randomness = outer

        return _to_tensors(jax.vmap(body, in_axes=in_axes, out_axes=out_dims, axis_name=axis)(*_to_arrays(args)))

    return _transformed(func, ("vmap", _freeze(in_dims), _freeze(out_dims), randomness), impl)


def _freeze(dims):
    """`in_dims` / `out_dims` as a hashable value that `_thaw` turns back (unhashable leaves stay, and make
    the step unhashable)."""
    leaves, tree = jax.tree.flatten(dims, is_leaf=lambda x: x is None)
    return tree, tuple(leaves)


def _thaw(frozen):
    tree, leaves = frozen
    return jax.tree.unflatten(tree, leaves)


_STEPS = {
    "grad": grad,
    "grad_and_value": grad_and_value,
    "jacrev": lambda f, argnums, has_aux: jacrev(f, argnums, has_aux=has_aux),
    "jacfwd": lambda f, argnums, has_aux, randomness: jacfwd(f, argnums, has_aux, randomness=randomness),
    "vmap": lambda f, in_dims, out_dims, randomness: vmap(f, _thaw(in_dims), _thaw(out_dims), randomness),
}


def functional_call(module: Any, parameter_and_buffer_dicts: dict | tuple, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True, strict: bool = False):
    """Call `module` with some of its parameters and buffers replaced by the given tensors.

    The replacement is temporary (restored on exit, even after an error) and
    by name (`"layer.weight"`). It works with any object exposing
    `named_parameters()` / `named_buffers()`; combined with `grad` it gives
    gradients with respect to a parameter dictionary.

    Arguments:
        module: the module (or object) to call.
        parameter_and_buffer_dicts: a dict name -> Tensor, or a tuple of such dicts.
        args: positional arguments (a single non-tuple value is one argument).
        kwargs: keyword arguments.
        tie_weights: replace every name that shares the replaced tensor (tied weights).
        strict: every parameter and buffer must be given, and no unknown name.

    Returns:
        Whatever `module(*args, **kwargs)` returns.

    Example:
        >>> import tapeflow as tp
        >>> lin = tp.nn.Linear(2, 1, bias=False)
        >>> tp.func.functional_call(lin, {"weight": tp.ones(1, 2)}, (tp.tensor([1.0, 2.0]),))
        tensor([3.])
    """
    params = _merge(parameter_and_buffer_dicts)
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    kwargs = kwargs or {}
    known = _named_state(module)
    if strict:
        missing = [k for k in known if k not in params]
        unexpected = [k for k in params if k not in known]
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}: missing keys {missing}, "
                               f"unexpected keys {unexpected}. Pass every parameter and buffer by name when "
                               "strict=True.")
    if tie_weights:
        by_id: dict = {}
        for name, t in known.items():
            by_id.setdefault(id(t), []).append(name)
        for name in list(params):
            if name in known:
                for other in by_id[id(known[name])]:
                    params.setdefault(other, params[name])
    restore = []
    try:
        for name, value in params.items():
            restore.append(_swap(module, name, value))
        return module(*args, **kwargs)
    finally:
        for undo in reversed(restore):
            undo()


def _merge(dicts) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    merged: dict = {}
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            merged[k] = v
    return merged


def _named_state(module) -> dict:
    state: dict = {}
    for getter in ("named_parameters", "named_buffers"):
        fn = getattr(module, getter, None)
        if fn is None:
            continue
        try:
            items = fn(remove_duplicate=False)
        except TypeError:
            items = fn()
        for k, v in items:
            state[k] = v
    return state


def _swap(module, name: str, value) -> Callable:
    """Put `value` at dotted `name`; return a function undoing it."""
    *path, leaf = name.split(".")
    owner = module
    for p in path:
        owner = getattr(owner, p)
    d = getattr(owner, "__dict__", {})
    for store in ("_parameters", "_buffers"):
        s = d.get(store)
        if isinstance(s, dict) and leaf in s:
            old = s[leaf]
            s[leaf] = value

            def undo(s=s, old=old):
                s[leaf] = old
            return undo
    had = leaf in d
    old = d.get(leaf)
    object.__setattr__(owner, leaf, value)

    def undo_attr():
        if had:
            object.__setattr__(owner, leaf, old)
        else:
            object.__delattr__(owner, leaf)
    return undo_attr


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of several same-shaped modules, stacked along a new first dimension.

    For model ensembling: `vmap(lambda p, b, x: functional_call(base, (p, b), (x,)))(params, buffers, x)`
    runs every model at once. Stacked parameters are new leaves that require grad (when the originals do).

    Example:
        >>> import tapeflow as tp
        >>> params, buffers = tp.func.stack_module_state([tp.nn.Linear(3, 2) for _ in range(4)])
        >>> params["weight"].shape
        tapeflow.Size([4, 2, 3])
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({type(m) for m in models}) != 1 or not all(m.training == models[0].training for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class and all to be in the "
                           "same training mode.")

    def stacked(getter, as_leaf):
        named = [dict(getattr(m, getter)()) for m in models]
        out = {}
        for k in named[0]:
            t = _ops.stack([n[k] for n in named]).detach()
            out[k] = t.requires_grad_() if as_leaf and all(n[k].requires_grad for n in named) else t
        return out

    return stacked("named_parameters", True), stacked("named_buffers", False)
