"""Recurrent layers: `RNN`, `LSTM`, `GRU` (stacked, bidirectional, batch_first, dropout, LSTM projections,
initial states) and the single-step cells `RNNCell`, `LSTMCell`, `GRUCell`, with PyTorch's parameter names,
shapes, initialisation and gate order.

A whole layer over a whole sequence is one op (`xla_ops.nn.rnn_layer`, a `lax.scan` with its VJP from JAX):
one XLA call forward and one backward node per layer and direction, not one per time step.
"""

from __future__ import annotations

import math

import xla_ops as X

from ... import _factories
from ... import amp as _amp
from ..._dispatch import dispatch
from ..._ops import cat, stack
from .. import functional as F
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _layout, _mask, _unpack
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


@_factories.initialisation
def _init_uniform(module: Module, hidden_size: int) -> None:
    k = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for p in module.parameters():
        p.data.uniform_(-k, k)


class RNNBase(Module):
    """The shared machinery of `RNN`, `LSTM` and `GRU`.

    Example:
        >>> import tapeflow as tp
        >>> lstm = tp.nn.LSTM(4, 8, num_layers=2)
        >>> isinstance(lstm, tp.nn.RNNBase), lstm.mode
        (True, 'LSTM')
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError("hidden_size and num_layers must be greater than zero")
        if proj_size < 0 or (proj_size and mode != "LSTM") or proj_size >= hidden_size > 0 and proj_size:
            raise ValueError("proj_size has to be a positive integer smaller than hidden_size, and only LSTM has it")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate, out = _GATES[mode] * hidden_size, proj_size or hidden_size
        for layer in range(num_layers):
            for suffix in ["", "_reverse"][:directions]:
                n_in = input_size if layer == 0 else out * directions
                names = [(f"weight_ih_l{layer}{suffix}", (gate, n_in)), (f"weight_hh_l{layer}{suffix}", (gate, out))]
                if bias:
                    names += [(f"bias_ih_l{layer}{suffix}", (gate,)), (f"bias_hh_l{layer}{suffix}", (gate,))]
                if proj_size:
                    names.append((f"weight_hr_l{layer}{suffix}", (proj_size, hidden_size)))
                for name, shape in names:
                    setattr(self, name, Parameter(_factories.empty(*shape, dtype=dtype)))
        _init_uniform(self, hidden_size)

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights into one cuDNN buffer here; XLA needs no such buffer.

        Programs call it after `torch.load` or `DataParallel` (the word_language_model example does).
        """

    @property
    def all_weights(self) -> list:
        """The parameters per layer and direction, in PyTorch's order (weight_ih, weight_hh, biases, weight_hr)."""
        directions = 2 if self.bidirectional else 1
        return [[w for w in self._weights(layer, suffix) if w is not None]
                for layer in range(self.num_layers) for suffix in ["", "_reverse"][:directions]]

    def _weights(self, layer: int, suffix: str) -> tuple:
        get = self._parameters.get
        return (get(f"weight_ih_l{layer}{suffix}"), get(f"weight_hh_l{layer}{suffix}"),
                get(f"bias_ih_l{layer}{suffix}"), get(f"bias_hh_l{layer}{suffix}"), get(f"weight_hr_l{layer}{suffix}"))

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        data = input.data if packed else input
        weight = next(iter(self._parameters.values()), None)
        if weight is not None and data.dtype != weight.dtype and not _amp.is_autocast_enabled(_amp.backend_device_type()):
            raise ValueError(f"RNN input dtype ({data.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({data.dtype})")
        mask = None
        if packed:
            # Padded in the packed (longest-first) order; the mask makes each sequence stop at its own length.
            sizes = input.batch_sizes.numpy()
            x, mask = _unpack(input.data, sizes, len(sizes), int(sizes[0]), 0.0), _mask(sizes, int(sizes[0]))
            hx = self._permute_hidden(hx, input.sorted_indices)
            batched = True
        else:
            batched = input.ndim == 3
            if input.ndim not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
            if input.shape[-1] != self.input_size:
                raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                                   f"{input.shape[-1]}")
            x = input if batched else input.unsqueeze(1)
            if batched and self.batch_first:
                x = x.transpose(0, 1)
            if hx is not None:
                self._check_hidden_ranks(hx, batched)
        if hx is not None:
            self._check_hidden_sizes(hx, x.shape[1], batched)
        x, h_n, c_n = self._layers(x, hx, batched, mask, sizes if packed else None)
        if packed:
            out = PackedSequence(x.reshape(-1, x.shape[-1])[_factories.tensor(_layout(sizes, x.shape[1]))],
                                 input.batch_sizes, input.sorted_indices, input.unsorted_indices)
            state = h_n if c_n is None else (h_n, c_n)
            return out, self._permute_hidden(state, input.unsorted_indices)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        if not batched:
            x, h_n = x.squeeze(1), h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        return x, (h_n if c_n is None else (h_n, c_n))

    def _check_hidden_ranks(self, hx, batched: bool) -> None:
        want, kind = (3, "batched 3-D") if batched else (2, "unbatched 2-D")
        if self.mode == "LSTM":
            if hx[0].ndim != want or hx[1].ndim != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
        elif hx.ndim != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.ndim}-D tensor")

    def _check_hidden_sizes(self, hx, batch: int, batched: bool) -> None:
        """PyTorch's check of the initial state's shape (an unbatched input's state counted as a batch of one)."""
        n = self.num_layers * (2 if self.bidirectional else 1)
        states = [("hidden[0]", hx[0], self.proj_size or self.hidden_size), ("hidden[1]", hx[1], self.hidden_size)] \
            if self.mode == "LSTM" else [("hidden", hx, self.hidden_size)]
        for name, h, size in states:
            got = list(h.shape) if batched else [h.shape[0], 1, *h.shape[1:]]
            if got != [n, batch, size]:
                raise RuntimeError(f"Expected {name} size {(n, batch, size)}, got {got}")

    def _dropout(self, x, sizes):
        """Dropout between layers. A packed input's mask covers its packed rows only, in their order (as
        PyTorch draws it: a seeded program keeps its random stream); padding rows stay out of it."""
        if sizes is None:
            return F.dropout(x, self.dropout, True)
        t, b, f = x.shape
        rows = x.reshape(t * b, f)[_factories.tensor(_layout(sizes, b))]
        return _unpack(F.dropout(rows, self.dropout, True), sizes, t, b, 0.0)

    @staticmethod
    def _permute_hidden(hx, permutation):
        if hx is None or permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    def _layers(self, x, hx, batched, mask, sizes=None):
        """All layers and directions over `x` `(T, B, I)`: `(output, h_n, c_n or None)`; `sizes`: the batch
        sizes of a packed input."""
        directions = 2 if self.bidirectional else 1
        n, b = self.num_layers * directions, x.shape[1]
        out_size = self.proj_size or self.hidden_size
        h0, c0 = (hx if isinstance(hx, tuple) else (hx, None)) if hx is not None else (None, None)
        if h0 is None:
            h0 = _factories.zeros(n, b, out_size, dtype=x.dtype)
        elif not batched:
            h0 = h0.unsqueeze(1)
        if self.mode == "LSTM":
            c0 = _factories.zeros(n, b, self.hidden_size, dtype=x.dtype) if c0 is None else (
                c0 if batched else c0.unsqueeze(1))
        mode = "RNN" if self.mode.startswith("RNN") else self.mode
        act = "relu" if self.mode == "RNN_RELU" else "tanh"
        hs, cs = [], []
        for layer in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(["", "_reverse"][:directions]):
                i = layer * directions + d
                args = (x, h0[i], None if c0 is None else c0[i], *self._weights(layer, suffix), mask)
                o, h, c = dispatch(X.nn.rnn_layer, args, (("mode", mode), ("nonlinearity", act), ("reverse", d == 1)))
                outs.append(o)
                hs.append(h)
                cs.append(c)
            x = outs[0] if directions == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = self._dropout(x, sizes)
        return x, stack(hs), (stack(cs) if self.mode == "LSTM" else None)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s


class RNN(RNNBase):
    """Elman RNN: `h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)` (`nonlinearity="relu"` for ReLU).

    Example:
        >>> import tapeflow as tp
        >>> out, h = tp.nn.RNN(3, 5, num_layers=2)(tp.randn(7, 2, 3))
        >>> out.shape, h.shape
        (tapeflow.Size([7, 2, 5]), tapeflow.Size([2, 2, 5]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory (gates in PyTorch's order i, f, g, o; `proj_size` projects `h`).

    Example:
        >>> import tapeflow as tp
        >>> out, (h, c) = tp.nn.LSTM(3, 5, batch_first=True, bidirectional=True)(tp.randn(2, 7, 3))
        >>> out.shape, h.shape, c.shape
        (tapeflow.Size([2, 7, 10]), tapeflow.Size([2, 2, 5]), tapeflow.Size([2, 2, 5]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n as in PyTorch: `n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`).

    Example:
        >>> import tapeflow as tp
        >>> out, h = tp.nn.GRU(3, 5)(tp.randn(7, 2, 3))
        >>> out.shape
        tapeflow.Size([7, 2, 5])
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)


class RNNCellBase(Module):
    """The parameters and initialisation shared by `RNNCell`, `LSTMCell` and `GRUCell` (PyTorch's base class):
    `weight_ih` `(num_chunks * hidden_size, input_size)`, `weight_hh` `(num_chunks * hidden_size, hidden_size)`
    and, with `bias`, `bias_ih` and `bias_hh`, all uniform in `±1/sqrt(hidden_size)`.

    Example:
        >>> import tapeflow as tp
        >>> cell = tp.nn.RNNCellBase(3, 4, True, 2)
        >>> [tuple(p.shape) for p in cell.parameters()]
        [(8, 3), (8, 4), (8,), (8,)]
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate = num_chunks * hidden_size
        self.weight_ih = Parameter(_factories.empty(gate, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(_factories.empty(gate, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_factories.empty(gate, device=device, dtype=dtype))
            self.bias_hh = Parameter(_factories.empty(gate, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter uniform in `±1/sqrt(hidden_size)`."""
        _init_uniform(self, self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}" + ("" if self.bias is True else f", bias={self.bias}")
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class _Cell(RNNCellBase):
    _mode = "RNN"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, {"LSTM": 4, "GRU": 3, "RNN": 1}[self._mode], device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        zeros = _factories.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
        if self._mode == "LSTM":
            if hx is None:
                h, c = zeros, zeros
            else:
                h, c = hx if batched else (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        else:
            h, c = (zeros if hx is None else hx if batched else hx.unsqueeze(0)), None
        # One step is a sequence of length one: the same op (and gate order) as the layers.
        _, h, c = dispatch(X.nn.rnn_layer, (x.unsqueeze(0), h, c, self.weight_ih, self.weight_hh, self.bias_ih,
                                             self.bias_hh, None, None),
                           (("mode", self._mode), ("nonlinearity", self.nonlinearity), ("reverse", False)))
        if self._mode != "LSTM":
            return h if batched else h.squeeze(0)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))

class RNNCell(_Cell):
    """One step of an Elman RNN.

    Example:
        >>> import tapeflow as tp
        >>> cell = tp.nn.RNNCell(4, 8)
        >>> cell(tp.randn(3, 4)).shape
        tapeflow.Size([3, 8])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, nonlinearity, device, dtype)


class LSTMCell(_Cell):
    """One LSTM step: returns `(h, c)`.

    Example:
        >>> import tapeflow as tp
        >>> cell = tp.nn.LSTMCell(4, 8)
        >>> h, c = cell(tp.randn(3, 4))
        >>> h.shape, c.shape
        (tapeflow.Size([3, 8]), tapeflow.Size([3, 8]))
    """

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, "tanh", device, dtype)


class GRUCell(_Cell):
    """One GRU step.

    Example:
        >>> import tapeflow as tp
        >>> cell = tp.nn.GRUCell(4, 8)
        >>> cell(tp.randn(3, 4), tp.zeros(3, 8)).shape
        tapeflow.Size([3, 8])
    """

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, "tanh", device, dtype)
