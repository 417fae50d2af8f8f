"""Thread-local mode flags read on the hot path (grad mode, anomaly mode)."""

from __future__ import annotations

import threading


class _ThreadState(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        self.anomaly = False
        self.anomaly_check_nan = True


state = _ThreadState()
