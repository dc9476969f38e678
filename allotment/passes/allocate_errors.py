"""The errors of `fusion-allocate`: located where the op came from parsed text."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from allotment.diagnostics import SOURCE_SPANS, located_message


def _fail(op: Operation, message: str) -> PassFailedException:
    """The pass's error about `op`: `file:line:col: error: <op>: fusion-allocate: ...`
    where the op came from parsed text, `fusion-allocate: ...` otherwise."""
    if op in SOURCE_SPANS:
        return PassFailedException(located_message(op, f"fusion-allocate: {message.removeprefix(op.name + ': ')}"))
    return PassFailedException(f"fusion-allocate: {message}")


def value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"
