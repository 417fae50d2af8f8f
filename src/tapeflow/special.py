"""`tapeflow.special`: special functions under PyTorch's `torch.special` names.

Each is the tapeflow op of the same meaning (`special.expit` is `sigmoid`, `special.gammaln` is `lgamma`,
`special.i0` is `tp.i0`, ...), so values and gradients are those ops'.

Example:
    >>> import tapeflow as tp
    >>> tp.special.expit(tp.tensor([0.0])), tp.special.xlogy(tp.tensor([0.0]), tp.tensor([0.0]))
    (tensor([0.5000]), tensor([0.]))
"""

from __future__ import annotations

from . import _ops
from ._ops.special import entr, erfcx, i0e, i1, i1e, log_ndtr, ndtr, ndtri, xlog1py, zeta

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "erfcx", "ndtr", "ndtri", "log_ndtr", "digamma", "psi",
           "gammaln", "multigammaln", "polygamma", "gammainc", "gammaincc", "sinc", "round", "log1p", "expm1", "exp2",
           "softmax", "log_softmax", "logsumexp", "xlogy", "xlog1py", "entr", "i0", "i0e", "i1", "i1e", "zeta"]

expit = _ops.sigmoid
erf, erfc, erfinv = _ops.erf, _ops.erfc, _ops.erfinv
digamma = psi = _ops.digamma
gammaln = _ops.lgamma
multigammaln = _ops.mvlgamma
polygamma = _ops.polygamma
gammainc, gammaincc = _ops.igamma, _ops.igammac
sinc, round, log1p, expm1, exp2 = _ops.sinc, _ops.round, _ops.log1p, _ops.expm1, _ops.exp2
logsumexp, xlogy, i0 = _ops.logsumexp, _ops.xlogy, _ops.i0


def logit(input, eps=None):
    """`log(p / (1 - p))`, with `p` clamped to `[eps, 1 - eps]` when `eps` is given.

    Example:
        >>> tp.special.logit(tp.tensor([0.0, 0.5]), eps=1e-6)
        tensor([-13.8155,   0.0000])
    """
    return _ops.logit(input, eps)


def softmax(input, dim, *, dtype=None):
    """`softmax` along `dim` (computed in `dtype` when given).

    Example:
        >>> tp.special.softmax(tp.tensor([0.0, 0.0]), 0)
        tensor([0.5000, 0.5000])
    """
    return _ops.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input, dim, *, dtype=None):
    """`log_softmax` along `dim` (computed in `dtype` when given).

    Example:
        >>> tp.special.log_softmax(tp.tensor([0.0, 0.0]), 0)
        tensor([-0.6931, -0.6931])
    """
    return _ops.log_softmax(input if dtype is None else input.to(dtype), dim)

