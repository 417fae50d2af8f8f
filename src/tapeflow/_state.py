"""Thread-local mode flags read on the hot path (grad mode, anomaly mode)."""

from __future__ import annotations

import threading


class _ThreadState(threading.local):
    def __init__(self):
        self.grad_enabled = True
        # Set while a user's `no_grad` / `set_grad_enabled(False)` / `inference_mode` region is active
        # (not when tapeflow itself turns recording off): results on JAX tracers then stop gradients.
        self.stop_traced = False
        self.inference = False
        self.anomaly = False
        self.anomaly_check_nan = True
        # Set while `tp.interop.checked` traces a function: value checks on traced arrays become
        # `checkify` checks instead of being skipped.
        self.checked = False
        # Saved-tensor hooks: a stack of (pack, unpack) pairs (innermost last), and the message
        # `disable_saved_tensors_hooks` raises while it is active.
        self.saved_hooks = ()
        self.saved_hooks_disabled = None
        # The backward pass running on this thread (`autograd.engine._Task`), for hooks that ask about it, and
        # how many backward passes are nested on this thread (a backward called from inside a backward).
        self.graph_task = None
        self.backward_depth = 0
        # Backward passes started on this thread: staging tells a compiled training step (it runs one) from a
        # compiled forward whose outputs need autograd history.
        self.backward_passes = 0
        # Extension points, per thread like grad mode (a trace on one thread never sees another's ops):
        # `f(op, args, params, proceed)` around every dispatch (profiler, forward AD, state discovery);
        # `f(x, result)` after an in-place write made `x` hold `result`; `f(x, views)` after a view op made
        # `views` (a tensor or a tuple) of `x`; `f(node, grads, create_graph, proceed)` around every backward
        # node (profiler). Empty in the common case.
        self.interceptors = []
        self.inplace_listeners = []
        self.view_listeners = []
        self.node_interceptors = []
        # The autocast region in effect: (device type, dtype), or None (see `amp`).
        self.autocast = None
        # The `func.vmap` calls being traced, innermost last: (randomness, axis name) each (see `next_key`).
        self.vmap_randomness = ()


state = _ThreadState()


#: Held while a backward pass adds into a leaf's `.grad` (read, add, write), so that backward passes on
#: several threads accumulate exactly, as PyTorch guarantees. Process-wide: the leaves are shared.
grad_lock = threading.Lock()
