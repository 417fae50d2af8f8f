"""The `Op` record: a forward JAX function, its static parameters, what it
saves for backward, and its vector-Jacobian product.

Complex numbers: a table VJP is JAX's, the transpose of the op's linearisation
(`g * f'(z)` for a holomorphic `f`, no conjugation), so a derived VJP, a
hand-written one and JAX's transforms agree. The tape speaks PyTorch's
convention (the conjugate Wirtinger derivative, `g * conj(f'(z))`), which is
the same map conjugated on both sides: `backward` and `grad_op` apply
`torch_vjp = conj . vjp . conj` (a no-op on real arrays).

Everything here is pure JAX. Compiled callables are built once per
(op, static parameters) and kept on the op, so a call costs one dictionary
lookup plus JAX's own dispatch; JAX caches the XLA executable per shape and
dtype.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero
from jax.dtypes import float0

__all__ = ["Op", "Meta", "unbroadcast", "broadcast_axes", "TABLE", "op", "torch_vjp", "set_matmul_precision",
           "get_matmul_precision", "true_divide", "wide_unary"]

#: Every op, by name.
TABLE: dict[str, Op] = {}

#: PyTorch's names for the precision of float32 matrix products, and JAX's. "highest" (PyTorch's default) is full
#: float32 on every backend (GPUs would otherwise use TensorFloat-32, TPUs one bfloat16 pass); "high" allows
#: TensorFloat-32 (three bfloat16 passes on a TPU) and "medium" one bfloat16 pass. CPUs compute float32 in full.
_PRECISIONS = {"highest": "float32", "high": "tensorfloat32", "medium": "bfloat16"}
_matmul = ["highest", "float32"]


def set_matmul_precision(precision: str) -> None:
    """Set the precision of float32 matrix products in every op traced from now on (`"highest"`, `"high"` or
    `"medium"`, PyTorch's names). Programs already compiled keep theirs: a caller that changes it mid-run clears
    JAX's caches (tapeflow's `set_float32_matmul_precision` does)."""
    if precision not in _PRECISIONS:
        raise ValueError(f"matmul precision must be one of {', '.join(_PRECISIONS)}, got {precision!r}")
    _matmul[:] = [precision, _PRECISIONS[precision]]


def get_matmul_precision() -> str:
    """The precision set by `set_matmul_precision` (`"highest"` until then)."""
    return _matmul[0]


_HALF = frozenset(map(np.dtype, (jnp.float16, jnp.bfloat16)))


def _is_half(a) -> bool:
    return type(a) is not Meta and getattr(a, "dtype", None) in _HALF


def _up(a):
    """A float16/bfloat16 array in float32 (exactly); anything else as it is."""
    return a.astype(jnp.float32) if _is_half(a) else a


def _half_inputs(args) -> bool:
    return jax.default_backend() == "cpu" and any(_is_half(a) for a in jax.tree.leaves(args))


def _opmath(fwd: Callable) -> Callable:
    """`fwd` computed in float32 and rounded once to its result dtypes when an input is float16/bfloat16, on
    CPU: PyTorch's CPU kernels compute half-precision ops in float (their "opmath" type) and round the result,
    where XLA's CPU compiler rounds some intermediate results to the half type and not others (so `x * 0.1`,
    `sigmoid(x)` or `addmm` came out one unit in the last place apart, and a cumulative sum drifted)."""
    @functools.wraps(fwd)
    def run(*args, **kw):
        if not _half_inputs(args):
            return fwd(*args, **kw)
        with warnings.catch_warnings():  # (a number that overflows the half type: the float32 result says so)
            warnings.simplefilter("ignore")
            shapes = jax.eval_shape(functools.partial(fwd, **kw), *args)
        out = fwd(*jax.tree.map(_up, args), **kw)
        return jax.tree.map(lambda o, s: o.astype(s.dtype), out, shapes)

    return run


def _opmath_vjp(vjp: Callable) -> Callable:
    """`vjp` (see `Op`) computed in float32 when a cotangent, the output or an input is float16/bfloat16 (on
    CPU, as `_opmath`); each gradient is rounded once to its input's dtype."""
    @functools.wraps(vjp)
    def run(g, ans, *inputs, **kw):
        if not _half_inputs((g, ans, inputs)):
            return vjp(g, ans, *inputs, **kw)
        grads = vjp(*jax.tree.map(_up, (g, ans, *inputs)), **kw)
        return tuple(gr if gr is None or getattr(x, "dtype", None) not in _HALF else gr.astype(x.dtype)
                     for gr, x in zip(grads, inputs))

    return run


def _precise(fn: Callable) -> Callable:
    """`fn` traced under the table's float32 matrix-product precision. An op's function runs when it is traced
    (per op, inside a fused program, under a user's `jax.jit`), so its products carry the precision in the
    program whichever path traced it."""
    @functools.wraps(fn)
    def run(*args, **kw):
        with jax.default_matmul_precision(_matmul[1]):
            return fn(*args, **kw)

    return run


class Meta:
    """Shape and dtype of an input the op did not save (enough to undo broadcasting)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: Any):
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Meta) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __repr__(self) -> str:
        return f"Meta({self.shape}, {self.dtype})"


def broadcast_axes(gshape: tuple, shape: tuple) -> tuple | None:
    """The axes to sum a gradient of shape `gshape` over to undo broadcasting an input of shape `shape`
    to it; None when `shape` does not broadcast to `gshape`."""
    lead = len(gshape) - len(shape)
    if lead < 0 or not all(s in (1, n) for s, n in zip(shape, gshape[lead:])):
        return None
    return tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)


_NARROW_FLOATS = frozenset(map(np.dtype, (jnp.float32, jnp.float16, jnp.bfloat16)))


def true_divide(x, y):
    """`x / y` rounded once, as PyTorch's kernels divide.

    XLA's CPU compiler rewrites a division by a broadcast value, a constant or a square root into a
    multiplication by the reciprocal, which is off by one unit in the last place for some inputs (`x / 28`,
    `x / norm[:, None]`, `x / sqrt(v)` fused into one program). On CPU a float32, float16 or bfloat16
    quotient is therefore formed in float64 and rounded to its dtype: the reciprocal's error in float64 is far
    smaller than the distance of any such quotient from a rounding boundary, so the result is the correctly
    rounded quotient whatever XLA rewrites (and the same op by op and fused)."""
    dt = jnp.result_type(x, y)
    if dt not in _NARROW_FLOATS or jax.default_backend() != "cpu":
        return jnp.true_divide(x, y)
    weak = _is_weak(x) and _is_weak(y)
    wide = jnp.true_divide(jnp.asarray(x, jnp.float64), jnp.asarray(y, jnp.float64))
    return jax.lax.convert_element_type(wide, dt) if not weak else _weak(wide.astype(dt))


def wide_unary(fn, x):
    """`fn(x)` formed in float64 and rounded back for a float32 / float16 / bfloat16 `x` on CPU (for functions
    whose float32 versions in XLA are much less accurate than PyTorch's); `fn(x)` otherwise."""
    if x.dtype not in _NARROW_FLOATS or jax.default_backend() != "cpu":
        return fn(x)
    return fn(x.astype(jnp.float64)).astype(x.dtype)


def _is_weak(a) -> bool:
    return isinstance(a, (int, float)) or bool(getattr(getattr(a, "aval", None), "weak_type", False))


def _weak(a):
    from jax._src.lax.lax import _convert_element_type

    return _convert_element_type(a, a.dtype, weak_type=True)


def unbroadcast(g, x):
    """Sum `g` down to the shape of `x` and cast it to `x`'s dtype.

    The one place where broadcasting is undone (`broadcast_axes` says over which axes).
    """
    shape = tuple(x.shape)
    if g.shape != shape:
        axes = broadcast_axes(g.shape, shape)
        g = jnp.sum(g, axis=axes).reshape(shape) if axes else g.reshape(shape)
    dtype = getattr(x, "dtype", None)
    if dtype is not None and g.dtype != dtype:
        if jnp.iscomplexobj(g) and not jnp.issubdtype(dtype, jnp.complexfloating):
            g = jnp.real(g)  # a real input's gradient is the real part (either convention)
        g = g.astype(dtype)
    return g


def _is_float(dtype) -> bool:
    return jnp.issubdtype(dtype, jnp.inexact)


class Op:
    """One differentiable (or explicitly non-differentiable) operation.

    Arguments:
        name: the op's name in the table (`"mul"`).
        fwd: `fwd(*inputs, **params) -> array | tuple[array, ...]`, pure JAX.
        vjp: `vjp(g, ans, *inputs, **params) -> tuple` of one gradient per input
            (`None` where there is none). `g` is a tuple for multi-output ops.
            Omitted: derived with `jax.vjp` (recomputing the forward).
        saves: which of the inputs (by argument name or index) and/or `"ans"`
            the tape must keep for `vjp`. Defaults to all inputs when `vjp` is
            derived.
        differentiable: `False` for comparisons, argmax, integer ops.
        node: the PyTorch name of the backward node (`"MulBackward0"`).
        nin: number of array inputs (the rest of `fwd`'s arguments are static).
        saved_for: for saved inputs read only by other inputs' gradients, `{input: those inputs}` by
            name (`mul`: `{"x": "y", "y": "x"}`): the tape saves such an input only when one of those
            needs a gradient, as PyTorch does, so an in-place write to it afterwards is no error.
        deferrable: `fwd` is pure table code, so a caller may run it later, fused with other ops (tapeflow's
            adaptive eager); `False` for ops that run a user's function, which runs when called, and for
            LAPACK-backed linear algebra (see the end of `linalg.py`).
        linear: every input enters linearly (indexing, `einsum`, padding, scatters): the gradient of an input
            never reads that input's own value, so the tape saves an input only when another input needs a
            gradient (PyTorch saves no more), and a VJP evaluates the unsaved ones at zero. `"separable"`: the
            inputs also enter separately (no product of two of them, as when one is written into a region of
            another), so no differentiable input is saved at all.
        snapshot: inputs whose value PyTorch does not keep (it saves something computed from them, as
            `cross_entropy` saves `log_softmax(x)`): the tape keeps their current value without a version check,
            so writing into them after the op is no error.
        unread_inputs: some inputs may not be read at all (a VJP recorded as an op: `mul`'s gradient for `x`
            does not read `x`): the tape links only the inputs that `dependencies` says are read, as PyTorch's
            graph of the formula's own ops would.
        double_backward: `double_backward(*inputs, **params) -> {input: message}` on concrete inputs: the
            gradients (by input number) that have no derivative of their own for these values (PyTorch's
            `scatter_reduce(prod)` with two zeros at one position); a double backward through one raises
            `RuntimeError(message)`. Asked only when a backward records its own graph.
        opmath: on CPU, float16/bfloat16 inputs are computed in float32 and each result rounded once (see
            `_opmath`); `False` for ops whose values depend on the half type itself (its largest value, its
            next representable number) and for optimizer updates, which PyTorch rounds after every step.
        no_derivative: `{input number: name}` for inputs PyTorch has no derivative for (`"igamma: input"`):
            a backward or JVP that needs one raises PyTorch's NotImplementedError, on every path.
    """

    __slots__ = (
        "name", "fwd", "vjp", "saves", "save_ans", "saved_for", "differentiable", "node", "nin",
        "derived", "deferrable", "linear", "snapshot",
        "_fwd_cache", "_rule_cache", "_bwd_cache", "_grad_op_cache", "_jvp_op_cache", "_deps_cache", "unread_inputs",
        "double_backward", "no_derivative", "edge_rule", "__weakref__",
    )

    def __init__(self, name: str, fwd: Callable, vjp: Callable | None = None, *,
                 saves: tuple = (), differentiable: bool = True, node: str | None = None,
                 nin: int | None = None, saved_for: dict | None = None, deferrable: bool = True,
                 linear: bool | str = False, snapshot: tuple = (), unread_inputs: bool = False,
                 double_backward: Callable | None = None, opmath: bool = True, no_derivative: dict | None = None,
                 edges: tuple | None = None, scalar_edges: tuple = (), overload_nodes: dict | None = None):
        self.name = name
        # Which inputs PyTorch's node of this op links in `next_functions` (and shows node hooks), where that is
        # not every input: `edges`, the positions it ever links (not indices, masks, conditions or targets),
        # and `scalar_edges`, positions PyTorch drops when they hold a Python number (its Scalar overloads:
        # `x ** 2`, `1 - x`). `overload_nodes` names the node by which of those positions hold numbers
        # (`{(1,): "XlogyBackward2"}`), as PyTorch's overloads do. The tape itself keeps one edge per input.
        self.edge_rule = (edges, frozenset(scalar_edges), overload_nodes or {}) \
            if edges is not None or scalar_edges else None
        # input index -> PyTorch's name for it ("igamma: input"): a gradient it has no formula for, refused
        # (NotImplementedError) when a backward or a JVP asks for it, on every path
        self.no_derivative = no_derivative or {}
        self.double_backward = double_backward
        self.unread_inputs = unread_inputs
        self.deferrable = deferrable
        self.linear = linear
        self.fwd = _precise(_opmath(fwd) if opmath else fwd)
        self.nin = nin if nin is not None else _count_inputs(fwd)
        self.derived = vjp is None and differentiable
        self.vjp = vjp if vjp is None else _precise(_opmath_vjp(vjp) if opmath else vjp)
        names = _arg_names(vjp)[2:] if vjp is not None else []
        if self.derived:
            self.saves = frozenset(range(self.nin)) if self.nin >= 0 else None
            self.save_ans = False
        else:
            idx = set()
            starred = _starred_name(vjp) if vjp is not None else None
            for s in saves:
                if s == "ans":
                    continue
                idx.add(s if isinstance(s, int) else names.index(s))
                if s == starred:  # `*idx`: every input from there on (a tensor has at most 64 dims to index)
                    idx.update(range(names.index(s), names.index(s) + 64))
            self.saves = frozenset(idx)
            self.save_ans = "ans" in saves
        self.snapshot = frozenset(names.index(n) if isinstance(n, str) else n for n in snapshot)
        self.saved_for = None
        if saved_for:
            pos = {n: i for i, n in enumerate(names)}
            self.saved_for = {pos[k]: tuple(pos[u] for u in ((v,) if isinstance(v, str) else v))
                              for k, v in saved_for.items()}
        self.differentiable = differentiable
        self.node = node or "".join(p.capitalize() for p in name.split("_")) + "Backward0"
        self._fwd_cache: dict = {}
        self._rule_cache: dict = {}
        self._bwd_cache: dict = {}
        self._grad_op_cache: dict = {}
        self._deps_cache: dict = {}
        self._jvp_op_cache: dict = {}

    def __repr__(self) -> str:
        return f"<xla_ops.Op {self.name}>"

    # -- forward -----------------------------------------------------------
    def rule(self, params: tuple = ()) -> Callable:
        """The forward with `params` bound, as every JAX transform must see it.

        Differentiating it (`jax.grad`, `jax.jvp`, `jacfwd`, `hessian`) uses the
        table's derivative, the one the tape uses: a hand-written VJP becomes a
        `jax.custom_jvp` whose JVP is that VJP transposed; a derived op is its
        forward (JAX's rule is its table rule); a non-differentiable op stops
        gradients, as the tape does.
        """
        fn = self._rule_cache.get(params)
        if fn is None:
            fn = functools.partial(self.fwd, **dict(params)) if params else self.fwd
            if not self.differentiable:
                fn = _stopped(fn)
            elif not self.derived:
                fn = _table_rule(self, params, fn)
            self._rule_cache[params] = fn
        return fn

    def compiled(self, params: tuple = ()) -> Callable:
        """The jit-compiled forward with `params` (a tuple of (name, value)) bound.

        It is `rule(params)` compiled: on tracers JAX differentiates it by the table's rule."""
        fn = self._fwd_cache.get(params)
        if fn is None:
            fn = jax.jit(self.rule(params))
            self._fwd_cache[params] = fn
        return fn

    def __call__(self, *inputs, **params):
        """Run the forward eagerly: `xla_ops.mul(x, y)`."""
        return self.compiled(tuple(params.items()))(*inputs)

    # -- backward ----------------------------------------------------------
    def backward(self, params: tuple, needs: tuple, metas: tuple, nout: int = 1) -> Callable:
        """The jit-compiled VJP: `f(*gs, ans, *inputs) -> tuple of grads`.

        One `g` per forward output (`None` for integer outputs); `needs` (one
        bool per input) is static so XLA drops unused work; `metas` gives the
        shape/dtype of inputs the op did not save.
        """
        key = (params, needs, metas, nout)
        fn = self._bwd_cache.get(key)
        if fn is None:
            fn = jax.jit(functools.partial(self._vjp_torch, params, needs, metas, nout))
            self._bwd_cache[key] = fn
        return fn

    def _vjp_impl(self, params, needs, metas, nout, *args):
        g = args[:nout]
        ans = args[nout]
        inputs = args[nout + 1:]
        if metas:
            # An input saved only for gradients that are not needed is absent: zeros stand in for it
            # (whatever they feed is dropped); an input never saved is its shape and dtype.
            stand_in = (lambda m: jnp.zeros(m[0], m[1])) if self.saved_for or self.linear else (lambda m: Meta(*m))
            inputs = tuple(x if m is None else stand_in(m) for x, m in zip(inputs, metas))
        for i, label in self.no_derivative.items():
            if needs[i]:
                raise NotImplementedError(f"the derivative for '{label}' is not implemented.")
        kw = dict(params)
        if self.derived:
            grads = derived_vjp(self.fwd, kw, needs, g, inputs)
        else:
            grads = self.vjp(g[0] if nout == 1 else g, ans, *inputs, **kw)
        return tuple(gr if need else None for gr, need in zip(grads, needs))

    def _vjp_torch(self, params, needs, metas, nout, *args):
        """`_vjp_impl` in PyTorch's complex convention: conjugated on the way in and out."""
        gs = tuple(_conj(g) for g in args[:nout])
        grads = self._vjp_impl(params, needs, metas, nout, *gs, *args[nout:])
        return tuple(_conj(gr) for gr in grads)

    def grad_op(self, params: tuple, needs: tuple, metas: tuple, nout: int = 1) -> Op:
        """The VJP itself as an `Op` of `(*gs, ans, *inputs)`, so it can be
        recorded on the tape (`create_graph=True`); its own VJP is derived by JAX."""
        key = (params, needs, metas, nout)
        gop = self._grad_op_cache.get(key)
        if gop is None:
            impl = functools.partial(self._vjp_torch, params, needs, metas, nout)
            gop = Op(f"{self.name}_backward", impl, nin=-1, node=_backward_of(self.node),
                     deferrable=self.deferrable, unread_inputs=True)
            self._grad_op_cache[key] = gop
        return gop


    def dependencies(self, params: tuple, specs: tuple) -> tuple:
        """Which inputs each output of the forward reads: one frozenset of input positions per output (an
        empty one for an output that is None), on inputs of `specs`, `(shape, dtype, weak_type)` each (None for
        an input that is None). Read off the forward's jaxpr; a primitive whose body JAX does not show (a loop,
        a custom rule) counts as reading every input it is given, so a dependency may be reported that is not
        there, never the other way round."""
        key = (params, specs)
        deps = self._deps_cache.get(key)
        if deps is None:
            fwd = functools.partial(self.fwd, **dict(params)) if params else self.fwd
            present = [i for i, a in enumerate(specs) if a is not None]

            def f(*xs):
                full = [None] * len(specs)
                for i, x in zip(present, xs):
                    full[i] = x
                return fwd(*full)

            closed, shapes = jax.make_jaxpr(f, return_shape=True)(
                *[jax.ShapeDtypeStruct(*specs[i][:2], weak_type=specs[i][2]) for i in present])
            reads = iter(_reads(closed.jaxpr, [frozenset((i,)) for i in present]))
            leaves = jax.tree.leaves(shapes, is_leaf=lambda x: x is None)
            deps = self._deps_cache[key] = tuple(frozenset() if leaf is None else next(reads) for leaf in leaves)
        return deps

    # -- forward mode ------------------------------------------------------
    def jvp(self, params: tuple, idx: tuple, *args):
        """Output tangent(s) of the forward at `args[:n]`, with tangents `args[n:]` for the
        inputs at positions `idx` (the table's rule, see `rule`; `n = len(args) - len(idx)`)."""
        n = len(args) - len(idx)
        primals, tangents = args[:n], args[n:]
        fwd = self.rule(params)

        def f(*diff):
            full = list(primals)
            for i, d in zip(idx, diff):
                full[i] = d
            return fwd(*full)

        out, tan = jax.jvp(f, tuple(primals[i] for i in idx), tuple(tangents))
        if isinstance(out, (tuple, list)):  # integer outputs (indices) have no tangent
            return tuple(t if o is not None and _is_float(o.dtype) else None for o, t in zip(out, tan))
        return tan

    def jvp_op(self, params: tuple, idx: tuple) -> Op:
        """`jvp` as an `Op` of `(*inputs, *tangents)`, so a tangent computed in grad mode is
        recorded on the tape (reverse-over-forward); its VJP is derived by JAX."""
        key = (params, idx)
        jop = self._jvp_op_cache.get(key)
        if jop is None:
            jop = Op(f"{self.name}_jvp", functools.partial(self.jvp, params, idx), nin=-1,
                     node=self.node.replace("Backward", "JvpBackward"), deferrable=self.deferrable)
            self._jvp_op_cache[key] = jop
        return jop


def _conj(a):
    """`conj(a)` for a complex array; anything else as it is."""
    return jnp.conj(a) if a is not None and hasattr(a, "dtype") and jnp.iscomplexobj(a) else a


def torch_vjp(vjp_fn):
    """A JAX-convention VJP function (of a cotangent pytree) in PyTorch's complex convention."""
    def f(ct):
        return jax.tree.map(_conj, vjp_fn(jax.tree.map(_conj, ct)))
    return f


def _stopped(fwd):
    def f(*inputs):
        return jax.tree.map(jax.lax.stop_gradient, fwd(*inputs))

    return f


def _is_zero(t) -> bool:
    return t is None or type(t) is SymbolicZero or getattr(t, "dtype", None) == float0


def _table_rule(op: Op, params: tuple, fwd: Callable) -> Callable:
    """`fwd` as a `jax.custom_jvp` whose JVP is the transpose of the table's VJP.

    A VJP is linear in its cotangent `g`, so its transpose maps input tangents to
    the output tangent: JAX obtains it as the VJP of `g -> op.vjp(g, ...)` (XLA
    drops the evaluation of that map itself). Reverse
    mode transposes that back into the table's VJP, and every higher order
    differentiates the VJP's own JAX code, as `create_graph=True` does on the tape.
    """

    @jax.custom_jvp
    def f(*inputs):
        return fwd(*inputs)

    def f_jvp(primals, tangents):
        ans = f(*primals)
        needs = tuple(x is not None and not _is_zero(t) and _is_float(jnp.result_type(x))
                      for x, t in zip(primals, tangents))
        multi = isinstance(ans, (tuple, list))
        outs = tuple(ans) if multi else (ans,)
        live = [o is not None and _is_float(o.dtype) for o in outs]
        if not any(needs):
            return ans, _zero_tangents(ans if multi else outs, multi)

        def transposed(*gs):
            it = iter(gs)
            g = tuple(next(it) if keep else None for keep in live)
            grads = op._vjp_impl(params, needs, (), len(outs), *g, ans, *primals)
            return tuple(gr if gr is not None else jnp.zeros_like(primals[i])
                         for i, gr in enumerate(grads) if needs[i])

        # Any point will do for a linear map; a unit one keeps rules whose zero cotangent is a
        # special case (`0 / 0 = 0` for degenerate eigenvalues) on their general branch.
        at = tuple(jnp.ones_like(o) for o, keep in zip(outs, live) if keep)
        lin_out, pullback = jax.vjp(transposed, *at)
        tans = tuple(t.astype(o.dtype) for t, o, n in zip(tangents, primals, needs) if n)
        cts = pullback(tuple(t.astype(o.dtype) for t, o in zip(tans, lin_out)))
        it = iter(cts)
        out_t = tuple(next(it) if keep else _float0_like(o) for o, keep in zip(outs, live))
        return ans, (type(ans)(out_t) if multi else out_t[0])

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


def _float0_like(o):
    return None if o is None else np.zeros(o.shape, dtype=float0)


def _zero_tangents(outs, multi):
    t = tuple(jnp.zeros_like(o) if o is not None and _is_float(o.dtype) else _float0_like(o) for o in outs)
    return type(outs)(t) if multi else t[0]


def derived_vjp(fwd, kw, needs, g, inputs):
    """VJP of `fwd` by `jax.vjp`, differentiating only the inputs in `needs`."""
    diff = [i for i, n in enumerate(needs) if n and _is_float(jnp.result_type(inputs[i]))]

    def f(*d):
        full = list(inputs)
        for i, v in zip(diff, d):
            full[i] = v
        return _float_outputs(fwd(*full, **kw))

    out, pullback = jax.vjp(f, *(inputs[i] for i in diff))
    # `g` has one entry per forward output: `None` for integer (or absent)
    # outputs, which `f` dropped; the float ones are all present.
    cts = tuple(gi for gi in g if gi is not None) if isinstance(out, tuple) else g[0]
    res = pullback(cts)
    grads: list = [None] * len(inputs)
    for i, r in zip(diff, res):
        grads[i] = r
    return tuple(grads)


def _float_outputs(out):
    if isinstance(out, (tuple, list)):
        return tuple(o for o in out if o is not None and _is_float(o.dtype))
    return out


def _arg_names(fn) -> list[str]:
    import inspect

    try:
        return [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return []


def _starred_name(fn) -> str | None:
    """The name of `fn`'s `*args` parameter, if it has one."""
    import inspect

    for p in inspect.signature(fn).parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return p.name
    return None


def _count_inputs(fn) -> int:
    """Positional parameters without defaults are array inputs; the rest are static."""
    import inspect

    n = 0
    for p in inspect.signature(fn).parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return -1
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            n += 1
    return n


def op(name: str, fwd: Callable, vjp: Callable | None = None, **kw) -> Op:
    """Declare an op and add it to the table."""
    if name in TABLE:
        raise ValueError(f"xla_ops: op {name!r} is declared twice")
    o = Op(name, fwd, vjp, **kw)
    TABLE[name] = o
    return o


_CALLS = frozenset(("pjit", "jit", "closed_call", "core_call"))  # primitives that call a jaxpr they show
_Literal = jax.extend.core.Literal


def _reads(jaxpr, in_reads: list) -> list:
    """For each output of `jaxpr`, the union of `in_reads` of the inputs it is computed from."""
    env = dict(zip(jaxpr.invars, in_reads))
    none = frozenset()

    def read(v):
        return none if isinstance(v, _Literal) else env.get(v, none)

    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        inner = eqn.params.get("jaxpr") if eqn.primitive.name in _CALLS else None
        if inner is not None:
            outs = _reads(getattr(inner, "jaxpr", inner), ins)
        else:
            every = none.union(*ins)
            outs = [every] * len(eqn.outvars)
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _backward_of(node: str) -> str:
    """The name of the node that differentiates the node `node`: `"MulBackward0"` -> `"MulBackwardBackward0"`,
    one `Backward` more at each order (PyTorch's `ThresholdBackwardBackward0`)."""
    i = node.rfind("Backward")
    return node if i < 0 else node[:i] + "Backward" + node[i:]
