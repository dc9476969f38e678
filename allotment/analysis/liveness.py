"""Live ranges of the global buffers of an allocated function.

An allocated function (after `fusion-allocate`) is straight-line host code:
size arithmetic, `alloc.alloc`, views (`memref.reinterpret_cast`), kernels
and a `func.return`. A buffer is live from its `alloc.alloc` to the last
top-level op that touches it or any view of it (a view reads and writes the
buffer's memory, so it keeps the buffer alive). A buffer that is returned, or
whose view is returned, lives to the end of the function; function arguments
are not buffers of the function and are never part of the plan.

`live_ranges(func)` returns one `LiveRange` per top-level global `alloc.alloc`,
positions being indices into the function's top-level ops.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.ir import Operation, SSAValue

from allotment.dialects import alloc

VIEW_OPS = (memref.ReinterpretCastOp, memref.SubviewOp, memref.CastOp, memref.ViewOp)
"""Upstream ops whose result shares its source's memory."""


@dataclass(frozen=True)
class LiveRange:
    """Where a buffer lives in the schedule: [start, end] over top-level op indices.

    `returned` buffers (or buffers with a returned view) live past the end;
    `end` is then the index of the `func.return`."""

    buffer: alloc.AllocOp
    start: int
    end: int
    returned: bool

    def overlaps(self, other: LiveRange) -> bool:
        return self.start <= other.end and other.start <= self.end


def view_root(value: SSAValue) -> SSAValue:
    """The value whose memory `value` views (itself if it is not a view)."""
    while isinstance(value.owner, VIEW_OPS):
        value = value.owner.operands[0]
    return value


def top_level_users(value: SSAValue, block_ops: dict[Operation, int]) -> Iterator[tuple[Operation, SSAValue]]:
    """(top-level op, used value) for every use of `value` or of a view of it."""
    pending = [value]
    while pending:
        v = pending.pop()
        for use in v.uses:
            op = use.operation
            while op not in block_ops and op.parent_op() is not None:
                op = op.parent_op()
            yield op, v
            if isinstance(use.operation, VIEW_OPS):
                pending.extend(use.operation.results)


def live_ranges(f: func.FuncOp) -> list[LiveRange]:
    """The live range of every top-level global buffer of `f`, in allocation order."""
    ops = list(f.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    ranges: list[LiveRange] = []
    for i, op in enumerate(ops):
        if not isinstance(op, alloc.AllocOp) or op.memory.data != alloc.MemorySpace.GLOBAL:
            continue
        end, returned = i, False
        for user, _ in top_level_users(op.result, index):
            if isinstance(user, alloc.DeallocOp):
                continue
            end = max(end, index.get(user, len(ops) - 1))
            returned = returned or isinstance(user, func.ReturnOp)
        ranges.append(LiveRange(op, i, end, returned))
    return ranges
