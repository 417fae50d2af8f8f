"""`torch.ops` under the alias: `torch.ops.aten.<name>.<overload>` names the tapeflow op `<name>`.

tapeflow dispatches `xla_ops` ops, one overload each, so every overload of an aten op (`aten.add.Tensor`,
`aten.sin.default`) names the same `xla_ops.Op` record: the object selective checkpointing policies receive,
so `op is torch.ops.aten.mm.default` and `op in [torch.ops.aten.sin.default]` work. A few aten names are the
same computation under another name in tapeflow (`aten.view` is tapeflow's `reshape`). An aten op tapeflow
does not have raises `AttributeError` naming it.
"""

from __future__ import annotations

import xla_ops

__all__ = ["aten", "OpOverloadPacket"]

# aten names whose computation tapeflow dispatches under another op name.
_ALIASES = {"view": "reshape", "_unsafe_view": "reshape", "_reshape_alias": "reshape"}


class OpOverloadPacket:
    """`torch.ops.aten.<name>`: all overloads of one op. `.default` (or any overload name) is the op itself."""

    def __init__(self, name: str, op: xla_ops.Op):
        self._qualified_op_name = f"aten::{name}"
        self._op = op

    def __getattr__(self, overload: str):
        if overload.startswith("__"):
            raise AttributeError(overload)
        return object.__getattribute__(self, "_op")

    def overloads(self) -> list[str]:
        return ["default"]

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._qualified_op_name.replace('::', '.')}')>"


class _OpNamespace:
    """`torch.ops.aten`: its attributes are the packets of tapeflow's ops."""

    def __init__(self, name: str):
        self.name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        packet = self._packets.get(name)
        if packet is None:
            op = xla_ops.TABLE.get(_ALIASES.get(name, name))
            if op is None:
                raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}' (tapeflow has "
                                     f"no op {self.name}.{name}; the ops it dispatches are xla_ops.TABLE's)")
            packet = self._packets[name] = OpOverloadPacket(name, op)
        return packet


aten = _OpNamespace("aten")
