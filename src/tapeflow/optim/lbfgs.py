"""`LBFGS`: limited-memory BFGS over all parameters as one flat vector, with an optional strong-Wolfe line
search, iteration for iteration as PyTorch's `torch.optim.LBFGS`.

NOTE: L-BFGS decides on the host (convergence tests, line-search brackets), so each inner iteration reads a
few scalars back, as PyTorch does; the vectors stay on the device.
"""

from __future__ import annotations

import math

from .. import _ops
from .._factories import zeros
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Limited-memory BFGS (PyTorch's algorithm, defaults and state names).

    Arguments:
        params: the parameters (one group only).
        lr: step length scale (default 1).
        max_iter: iterations per `step()` (default 20).
        max_eval: function evaluations per `step()` (default `max_iter * 5 // 4`).
        tolerance_grad: stop when the largest gradient entry is at most this (default 1e-7).
        tolerance_change: stop when the step or the loss change is below this (default 1e-9).
        history_size: how many curvature pairs to keep (default 100).
        line_search_fn: `None` (fixed step `lr`) or `"strong_wolfe"`.

    Example:
        >>> import tapeflow as tp
        >>> w = tp.nn.Parameter(tp.tensor([3.0, -2.0]))
        >>> opt = tp.optim.LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((w - 1) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure)
        >>> tp.allclose(w.detach(), tp.ones(2))
        True
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- the parameters as one flat vector ----------------------------------------------------------------
    def _gather_flat_grad(self):
        return _ops.cat([zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1)
                         for p in self._params])

    def _add_grad(self, step_size: float, update) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            self._write(p, p + update[offset:offset + n].reshape(p.shape) * step_size)
            offset += n

    def _clone_params(self):
        return [p.detach().clone() for p in self._params]

    def _set_params(self, values) -> None:
        for p, v in zip(self._params, values):
            self._write(p, v)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_params(x)
        return loss, flat_grad

    def step(self, closure):
        """Run up to `max_iter` iterations; `closure` clears the gradients, computes the loss, calls
        `backward()` and returns the loss. Returns the loss of the first evaluation."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that reevaluates the model and returns the loss")
        group = self.param_groups[0]
        with no_grad():
            return self._step(group, _with_grad(closure))

    def _step(self, group, closure):
        max_iter, tol_grad, tol_change = group["max_iter"], group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if float(flat_grad.abs().max()) <= tol_grad:
            return orig_loss
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            d = _direction(state, flat_grad, group["history_size"])
            state["prev_flat_grad"], state["prev_loss"] = flat_grad.clone(), loss
            t = min(1.0, 1.0 / float(flat_grad.abs().sum())) * group["lr"] if state["n_iter"] == 1 else group["lr"]
            state["t"] = t
            gtd = float(_ops.dot(flat_grad, d))
            if gtd > -tol_change:  # not a descent direction
                break
            loss, flat_grad, t, evals = self._move(closure, group, d, t, loss, flat_grad, gtd, n_iter == max_iter)
            state["t"] = t
            current_evals += evals
            state["func_evals"] += evals
            if n_iter == max_iter or current_evals >= group["max_eval"]:
                break
            if float(flat_grad.abs().max()) <= tol_grad:
                break
            if float((d * t).abs().max()) <= tol_change or abs(loss - state["prev_loss"]) < tol_change:
                break
        return orig_loss

    def _move(self, closure, group, d, t, loss, flat_grad, gtd, last):
        """Step along `d`: by `t`, or by a strong-Wolfe line search from `t`; returns the new
        `(loss, flat_grad, t, evaluations)` (no evaluation after a last fixed step, as PyTorch)."""
        line_search_fn = group["line_search_fn"]
        if line_search_fn is None:
            self._add_grad(t, d)
            if last:
                return loss, flat_grad, t, 0
            loss = float(closure())
            return loss, self._gather_flat_grad(), t, 1
        if line_search_fn != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")
        x_init = self._clone_params()

        def obj_func(x, t, d):
            return self._directional_evaluate(closure, x, t, d)

        loss, flat_grad, t, evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd)
        self._add_grad(t, d)
        return loss, flat_grad, t, evals


def _direction(state, flat_grad, history_size):
    """The search direction: steepest descent first, then L-BFGS from the curvature pairs in `state`, which
    gains the last step's pair when it keeps the curvature condition."""
    if state["n_iter"] == 1:
        state.update(old_dirs=[], old_stps=[], ro=[], H_diag=1.0)
        state["d"] = -flat_grad
        return state["d"]
    y, s = flat_grad - state["prev_flat_grad"], state["d"] * state["t"]
    ys = float(_ops.dot(y, s))
    if ys > 1e-10:
        if len(state["old_dirs"]) == history_size:
            for k in ("old_dirs", "old_stps", "ro"):
                state[k].pop(0)
        state["old_dirs"].append(y)
        state["old_stps"].append(s)
        state["ro"].append(1.0 / ys)
        state["H_diag"] = ys / float(_ops.dot(y, y))
    al = state.setdefault("al", [None] * history_size)  # (kept in the state, as PyTorch's is)
    state["d"] = _two_loop(flat_grad, state["old_dirs"], state["old_stps"], state["ro"], state["H_diag"], al)
    return state["d"]


def _with_grad(closure):
    def run():
        with enable_grad():
            return closure()
    return run


def _two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, al):
    """The L-BFGS direction `-H g` from the kept curvature pairs (Nocedal & Wright, algorithm 7.4); `al` (at least
    as long as the history) receives the first loop's coefficients."""
    q = -flat_grad
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = float(_ops.dot(old_stps[i], q)) * ro[i]
        q = q - old_dirs[i] * al[i]
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = float(_ops.dot(old_dirs[i], r)) * ro[i]
        r = r + old_stps[i] * (al[i] - be_i)
    return r


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through `(x1, f1, g1)` and `(x2, f2, g2)`, clamped to `bounds` (default the
    interval); the midpoint when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        m = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        m = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(m, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along `d` from step `t` for a point meeting the strong Wolfe conditions: bracket, then zoom
    (Nocedal & Wright, algorithms 3.5 and 3.6). Returns `(f, g, t, evaluations)`."""
    br, done, ls_iter = _bracket(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls)
    return _zoom(obj_func, x, d, f, gtd, br, done, ls_iter, c1, c2, tolerance_change, max_ls)


def _evaluate(obj_func, x, t, d):
    f_new, g_new = obj_func(x, t, d)
    return t, f_new, g_new, float(_ops.dot(g_new, d))


def _bracket(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls):
    """Grow the step until an interval must hold a strong-Wolfe point (or the current step is one).
    Returns the bracket as `[steps, losses, grads, slopes]` lists, whether it is done, and the iterations."""
    prev, new = (0.0, f, g, gtd), _evaluate(obj_func, x, t, d)
    ls_iter = 0
    while ls_iter < max_ls:
        t, f_new, _, gtd_new = new
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= prev[1]):  # overshot: zoom in between
            return [list(v) for v in zip(prev, new)], False, ls_iter
        if abs(gtd_new) <= -c2 * gtd:  # the strong Wolfe conditions hold
            return [[v] for v in new], True, ls_iter
        if gtd_new >= 0:  # the slope turned: a minimum lies in between
            return [list(v) for v in zip(prev, new)], False, ls_iter
        # extrapolate: the cubic's minimiser, at least 1% further and at most 10 times the step
        t_next = _cubic_interpolate(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                                    bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev, new = new, _evaluate(obj_func, x, t_next, d)
        ls_iter += 1
    return [list(v) for v in zip((0.0, f, g, gtd), new)], False, ls_iter


def _zoom(obj_func, x, d, f, gtd, br, done, ls_iter, c1, c2, tolerance_change, max_ls):
    """Shrink the bracket `[steps, losses, grads, slopes]` around a strong-Wolfe point by safeguarded cubic
    interpolation; returns `(f, g, t, evaluations)` of its best end."""
    steps, losses = br[0], br[1]
    evals = ls_iter + 1
    insuf_progress = False
    low, high = (0, 1) if losses[0] <= losses[-1] else (1, 0)
    d_norm = float(d.abs().max())
    while not done and ls_iter < max_ls:
        if abs(steps[1] - steps[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(steps[0], losses[0], br[3][0], steps[1], losses[1], br[3][1])
        # stay at least 10% of the bracket away from its ends (twice in a row: step back from the end)
        lo, hi = min(steps), max(steps)
        eps = 0.1 * (hi - lo)
        if min(hi - t, t - lo) < eps:
            if insuf_progress or t >= hi or t <= lo:
                t = hi - eps if abs(t - hi) < abs(t - lo) else lo + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        new = _evaluate(obj_func, x, t, d)
        evals += 1
        ls_iter += 1
        if new[1] > f + c1 * t * gtd or new[1] >= losses[low]:
            for column, v in zip(br, new):
                column[high] = v
            low, high = (0, 1) if losses[0] <= losses[1] else (1, 0)
        else:
            if abs(new[3]) <= -c2 * gtd:
                done = True
            elif new[3] * (steps[high] - steps[low]) >= 0:
                for column in br:
                    column[high] = column[low]
            for column, v in zip(br, new):
                column[low] = v
    return losses[low], br[2][low], steps[low], evals
