"""`AdaptiveLogSoftmaxWithLoss`: the adaptive softmax of Grave et al. (2016), PyTorch's module."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

from ..._dtype import int8
from ..._factories import arange
from ..._ops import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

#: What `AdaptiveLogSoftmaxWithLoss.forward` returns: the target log-probabilities and their mean negative.
_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])

_BAD_CUTOFFS = ("cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                "where each value is between 1 and n_classes-1")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax ("Efficient softmax approximation for GPUs", Grave et al.), as PyTorch's module.

    The classes, which should be numbered by decreasing frequency, are split by `cutoffs`: the first
    `cutoffs[0]` classes (the shortlist) are scored by the `head` directly, every further range
    `[cutoffs[i], cutoffs[i+1])` (the last ending at `n_classes`) is a cluster: the head scores the cluster
    as a whole, and a small two-layer projection `tail[i]` (hidden size `in_features // div_value**(i+1)`)
    scores the classes inside it. A batch evaluates only the clusters its targets fall in.

    Arguments:
        in_features: size of each input sample.
        n_classes: number of classes.
        cutoffs: increasing, unique integers in `[1, n_classes - 1]`.
        div_value: the base of the clusters' hidden-size divisor (default 4.0).
        head_bias: give the head `Linear` a bias (default False).
        device, dtype: of the parameters.

    Attributes:
        head: `Linear(in_features, cutoffs[0] + n_clusters)`.
        tail: a `ModuleList` of `Sequential(Linear(in_features, hsz), Linear(hsz, cluster size))`, no biases.

    `forward(input, target)` takes `(N, in_features)` with `(N,)` targets, or `(in_features,)` with a 0-d
    target, and returns the named tuple `(output, loss)`: each row's log-probability of its target, and
    the mean of their negatives.

    Example:
        >>> import tapeflow as tp
        >>> asm = tp.nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 8])
        >>> out = asm(tp.randn(5, 16), tp.tensor([0, 3, 5, 9, 2]))
        >>> out.output.shape, out.loss.shape
        (tapeflow.Size([5]), tapeflow.Size([]))
        >>> out.loss.backward()
        >>> asm.tail[0][1].weight.grad.shape
        tapeflow.Size([4, 4])
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(_BAD_CUTOFFS)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        # Registration order (head, then each cluster's two projections) is PyTorch's, so the same seed
        # draws the same weights.
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                        Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Re-draw every weight with `Linear`'s default initialisation (head first, then the clusters).

        Example:
            >>> import tapeflow as tp
            >>> asm = tp.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[2])
            >>> asm.reset_parameters()
            >>> asm.head.weight.shape
            tapeflow.Size([3, 4])
        """
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_, target_):
        """The target log-probabilities and the loss, as the named tuple `(output, loss)`.

        Example:
            >>> import tapeflow as tp
            >>> asm = tp.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[2])
            >>> asm(tp.randn(4), tp.tensor(5)).output.shape
            tapeflow.Size([])
        """
        target_dim = target_.dim()
        if target_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(
                    f"1D target tensor expects 2D input tensors, but found inputs with size {input_.size()}")
        elif target_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    f"0D target tensor expects 1D input tensors, but found inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

        batched = target_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch_size = target.size(0)

        # Each row's cluster (0: the shortlist; `n_clusters + 1`: a target out of range), and one host read of
        # how many rows each has: which clusters run, and how many rows each evaluates.
        cluster = sum((target >= c).long() for c in self.cutoffs)
        cluster = cluster.masked_fill(target < 0, self.n_clusters + 1)
        counts = (cluster.unsqueeze(1) == arange(self.n_clusters + 2, device=target.device)).sum(0).tolist()
        if counts[-1]:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. ")
        # `head_index`: the head column each row reads (its own class, or its cluster's column); `output`
        # (one extra slot, where padding rows write) each row's log-probability within its cluster.
        head_index = target.where(cluster == 0, cluster + (self.shortlist_size - 1))
        output = input.new_zeros(batch_size + 1)
        for i in range(1, self.n_clusters + 1):
            if counts[i]:
                output = self._cluster_logprob(i, input, target, cluster, counts[i], output)
        output = output[:batch_size]
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _cluster_logprob(self, i, input, target, cluster, count, output):
        """`output` with the log-probability of each row of cluster `i` within the cluster (`count` rows).

        The cluster's rows are evaluated padded to a power of two (rows of other clusters fill the rest and
        write into `output`'s last slot), so a batch's varying cluster sizes reuse a few compiled programs
        instead of compiling new ones for every new size."""
        batch_size, low = target.size(0), self.cutoffs[i - 1]
        padded = min(batch_size, 1 << (count - 1).bit_length())
        rows = (cluster != i).to(int8).argsort(stable=True)[:padded]  # the cluster's rows first, in order
        kept = arange(padded, device=target.device) < count
        logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
        within = (target.index_select(0, rows) - low).clamp(0, self.cutoffs[i] - low - 1)
        local = logprob.gather(1, within.unsqueeze(1)).squeeze(1)
        return output.index_copy(0, rows.masked_fill(~kept, batch_size), local.masked_fill(~kept, 0.0))

    def _get_full_log_prob(self, input, head_output):
        """`(N, n_classes)` log-probabilities from the input and the head's output (PyTorch's helper's name)."""
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(pieces, dim=1)

    def log_prob(self, input):
        """Log-probabilities of all `n_classes` classes, `(N, in_features)` -> `(N, n_classes)`.

        Example:
            >>> import tapeflow as tp
            >>> asm = tp.nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 8])
            >>> logp = asm.log_prob(tp.randn(3, 16))
            >>> logp.shape, bool(tp.allclose(logp.exp().sum(1), tp.ones(3)))
            (tapeflow.Size([3, 10]), True)
        """
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row, `(N, in_features)` -> `(N,)`.

        The same as `self.log_prob(input).argmax(dim=1)`; the clusters are evaluated only for rows whose
        best head column is a cluster.

        Example:
            >>> import tapeflow as tp
            >>> asm = tp.nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 8])
            >>> x = tp.randn(6, 16)
            >>> bool((asm.predict(x) == asm.log_prob(x).argmax(dim=1)).all())
            True
        """
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        output[outside] = self._get_full_log_prob(input[outside], head_output[outside]).argmax(dim=1)
        return output
