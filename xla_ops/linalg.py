"""Matrix products."""

from __future__ import annotations

import jax.numpy as jnp

from ._op import op


def _mT(a):
    return jnp.swapaxes(a, -1, -2)


mm = op("mm", jnp.matmul, lambda g, ans, x, y: (g @ y.T.conj(), x.T.conj() @ g), saves=("x", "y"))
bmm = op("bmm", jnp.matmul,
         lambda g, ans, x, y: (g @ jnp.swapaxes(y, -1, -2), jnp.swapaxes(x, -1, -2) @ g), saves=("x", "y"))
mv = op("mv", jnp.matmul, lambda g, ans, x, y: (jnp.outer(g, y), x.T @ g), saves=("x", "y"))
dot = op("dot", jnp.dot, lambda g, ans, x, y: (g * y, g * x), saves=("x", "y"))
# NOTE: general (batched, broadcasting) matmul derives its VJP from JAX, which
# undoes the batch broadcasting correctly for every rank combination.
matmul = op("matmul", jnp.matmul, node="MatmulBackward0")
outer = op("outer", jnp.outer, lambda g, ans, x, y: (g @ y, g.T @ x), saves=("x", "y"))
einsum = op("einsum", lambda *xs, equation: jnp.einsum(equation, *xs), node="EinsumBackward0")
linalg_inv = op("linalg_inv", jnp.linalg.inv, lambda g, ans, x: (-_mT(ans) @ g @ _mT(ans),), saves=("ans",),
                node="LinalgInvExBackward0")
linalg_det = op("linalg_det", jnp.linalg.det, node="LinalgDetBackward0")
linalg_solve = op("linalg_solve", jnp.linalg.solve, node="LinalgSolveExBackward0")
cholesky = op("cholesky", jnp.linalg.cholesky, node="LinalgCholeskyExBackward0")
