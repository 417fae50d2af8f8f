"""Full backward hooks of modules: an identity node on the inputs and one on
the outputs. The output node's pre-hook sees `grad_output` (the backward pre-hooks
may replace it there, before any gradient flows into the module); the input
node's pre-hook sees `grad_input` (the full backward hooks run there)."""

from __future__ import annotations

import warnings

import xla_ops

from ..._dispatch import dispatch
from ..._state import state
from ..._tensor import Tensor

__all__ = ["BackwardHook"]


class BackwardHook:
    """Wraps one call of a module that has full backward hooks and/or backward pre-hooks."""

    def __init__(self, module, hooks, pre_hooks=()):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.input_positions: list[int] = []
        self.slots: dict[int, int] = {}
        self.n_outputs = 0
        self.output_positions: list[int] = []
        self.grad_output = None
        self.constant_inputs: list = []

    def _identity(self, tensors):
        return dispatch(xla_ops.nn.backward_hook, tuple(tensors))

    def setup_input(self, args: tuple) -> tuple:
        # `grad_input` has one entry per positional argument, as PyTorch's: None for those that are not tensors.
        tensor_args = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(args)
        self.slots = {i: i for i in tensor_args}
        if not state.grad_enabled or not self.hooks:
            # Pre-hooks alone need only the output node.
            return args
        pos = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        self.input_positions = pos
        if not pos:
            return args
        # The tensor inputs that need no gradient: PyTorch's hook sees zeros of their shape and dtype for them.
        self.constant_inputs = [(self.slots[i], args[i].shape, args[i].dtype) for i in tensor_args if i not in pos]
        outs = self._identity([args[i] for i in pos])
        outs[0].grad_fn.register_prehook(self._on_grad_input)
        new = list(args)
        for i, o in zip(pos, outs):
            new[i] = o
        return tuple(new)

    def setup_output(self, out):
        single = isinstance(out, Tensor)
        items = (out,) if single else out
        if not state.grad_enabled or not isinstance(items, tuple):
            return out
        pos = [i for i, o in enumerate(items) if isinstance(o, Tensor) and o.requires_grad]
        if not pos:
            return out
        # `grad_output` has one entry per output, as in PyTorch: None for non-tensors and
        # for outputs that need no gradient.
        self.n_outputs, self.output_positions = len(items), pos
        outs = self._identity([items[i] for i in pos])
        outs[0].grad_fn.register_prehook(self._on_grad_output)
        new = list(items)
        for i, o in zip(pos, outs):
            new[i] = o
        return new[0] if single else tuple(new)

    def _on_grad_output(self, grads):
        full: list = [None] * self.n_outputs
        for i, g in zip(self.output_positions, grads):
            full[i] = g
        grad_output, replaced = tuple(full), False
        for hook in self.pre_hooks:
            res = hook(self.module, grad_output)
            if res is None:
                continue
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(grad_output):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(res)}, "
                                   f"but expected {len(grad_output)}")
            grad_output, replaced = res, True
        self.grad_output = grad_output
        if not self.input_positions and self.hooks:
            # No input needs a gradient: the hooks run now, with grad_input all None (PyTorch warns of it).
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See the documentation of "
                          "Module.register_full_backward_hook for more details.", UserWarning, stacklevel=2)
            self._run((None,) * self.n_inputs)
        if not replaced:
            return None
        return tuple(grad_output[i] for i in self.output_positions)

    def _on_grad_input(self, grads):
        if self.grad_output is None:
            # The gradient reached the module's inputs without passing through its outputs (a double backward
            # through the first one's graph): the hooks do not run, as in PyTorch.
            return None
        full: list = [None] * self.n_inputs
        tensor_slots = self.slots
        for i, g in zip(self.input_positions, grads):
            full[tensor_slots[i]] = g
        if self.constant_inputs:
            from ..._factories import zeros

            for slot, shape, dtype in self.constant_inputs:
                full[slot] = zeros(shape, dtype=dtype)
        res = self._run(tuple(full))
        self.grad_output = None  # (a later pass through the inputs alone runs no hook either)
        if res is None:
            return None
        return tuple(res[tensor_slots[i]] for i in self.input_positions)

    def _run(self, grad_input):
        result = None
        for hook in self.hooks:
            res = hook(self.module, grad_input if result is None else result, self.grad_output or ())
            if res is not None:
                if len(res) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(res)}, "
                                       f"but expected {len(grad_input)}")
                result = tuple(res)
        return result
