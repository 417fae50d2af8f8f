"""xla_ops: tapeflow's op table, in pure JAX.

Each op is an `Op` record: a forward JAX function, its static parameters,
what it saves for backward and its vector-Jacobian product (hand-written for
common ops, derived with `jax.vjp` otherwise). Nothing here knows about tapes
or Tensors.

Example:
    >>> import jax.numpy as jnp, xla_ops
    >>> x = jnp.arange(3.0)
    >>> xla_ops.mul(x, x)
    Array([0., 1., 4.], dtype=float64)
"""

import jax as _jax

# float64 and int64 must be real (PyTorch semantics, gradient checking).
_jax.config.update("jax_enable_x64", True)

from . import elementwise, fft, index, linalg, nn, optim, random, reduce, shape, sort, special, stats  # noqa: E402
from ._op import TABLE, Meta, Op, broadcast_axes, derived_vjp, get_matmul_precision, op, set_matmul_precision, torch_vjp, unbroadcast  # noqa: E402
from .elementwise import *  # noqa: E402,F401,F403
from .index import *  # noqa: E402,F401,F403
from .linalg import *  # noqa: E402,F401,F403
from .reduce import *  # noqa: E402,F401,F403
from .shape import *  # noqa: E402,F401,F403
from .sort import *  # noqa: E402,F401,F403
from .special import *  # noqa: E402,F401,F403
from .stats import *  # noqa: E402,F401,F403

__all__ = ["TABLE", "Meta", "Op", "broadcast_axes", "derived_vjp", "op", "torch_vjp", "unbroadcast", "set_matmul_precision",
           "get_matmul_precision",
           "elementwise", "fft", "index", "linalg", "random", "reduce", "shape", "sort", "special", "stats", "nn", "optim"]
