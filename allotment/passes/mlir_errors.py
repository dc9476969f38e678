"""The error of `alloc-to-mlir`: an op it cannot lower, located and named."""

from __future__ import annotations

from xdsl.ir import Operation

from allotment.diagnostics import located_message
from allotment.errors import UnsupportedError


class LoweringError(UnsupportedError):
    """An op `alloc-to-mlir` cannot lower: the message is located and names the op."""


def refuse(op: Operation, why: str) -> LoweringError:
    return LoweringError(located_message(op, f"alloc-to-mlir cannot lower it: {why}"))
