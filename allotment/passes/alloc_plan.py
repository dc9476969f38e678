"""`alloc-plan`: a memory-aware kernel order, and every transient buffer freed
right after its last use.

Runs on allocated functions (after `fusion-allocate`), in two steps:

1. Order (`reorder=true`, the default). Among orders that keep every SSA and
   memory dependence (`analysis/schedule.py`), it takes the one with the
   lowest peak of live global bytes, estimated with every `?` argument extent
   set to `size-hint`; size arithmetic and `alloc.check`s move to the front,
   and an `alloc.alloc` moves to just before the first kernel that needs it.
   The chosen strategy and both estimates are recorded on the function
   (`alloc.schedule = "least-peak-first"`, `alloc.estimated_peak`,
   `alloc.program_order_peak`, in bytes at the hint) so FileCheck sees them.
   Program order is kept unless another order is strictly better.
2. Free. For each top-level global `alloc.alloc` that is neither returned
   nor viewed by a returned value, one `alloc.dealloc` right after the last
   top-level op that touches the buffer or any view of it
   (`analysis/liveness.py`), so the host program drops it there (`del`) and
   torch's allocator can give its memory to buffers allocated later.
   Function arguments and outputs are never freed.

Guarantees: every dependence of the input program is kept, whatever the
sizes (only the choice among correct orders uses the hint); a buffer is never
used after its `alloc.dealloc`; each buffer is freed at most once; the pass
is idempotent (a function that already frees buffers is not reordered, and
buffers that already have a dealloc are left alone). `alloc-verify` checks
the result.

Not done here yet: reusing a dead buffer's memory for a new one, and
packing transients into one arena with offsets computed at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from allotment.analysis.liveness import live_ranges
from allotment.analysis.schedule import choose_schedule
from allotment.dialects import alloc


def _has_dealloc(op: alloc.AllocOp) -> bool:
    return any(isinstance(use.operation, alloc.DeallocOp) for use in op.result.uses)


def reorder(f: func.FuncOp, hint: int) -> str | None:
    """Puts `f`'s ops in the order `choose_schedule` picks; returns the strategy name
    (None where the function cannot be reordered)."""
    choice = choose_schedule(f, hint)
    if choice is None:
        return None
    block = f.body.block
    moved = set(choice.order)
    ret = block.last_op
    prologue = [op for op in block.ops if op not in moved and op is not ret]
    for op in [*prologue, *choice.order]:
        op.detach()
        block.insert_op_before(op, ret)
    f.attributes["alloc.schedule"] = StringAttr(choice.strategy)
    f.attributes["alloc.estimated_peak"] = IntegerAttr(choice.peak, i64)
    f.attributes["alloc.program_order_peak"] = IntegerAttr(choice.program_peak, i64)
    return choice.strategy


def free_after_last_use(f: func.FuncOp) -> int:
    """Inserts the deallocs of `f`; returns how many it inserted."""
    ops = list(f.body.block.ops)
    inserted = 0
    for r in live_ranges(f):
        if r.returned or _has_dealloc(r.buffer):
            continue
        Rewriter.insert_op(alloc.DeallocOp(r.buffer.result), InsertPoint.after(ops[r.end]))
        inserted += 1
    return inserted


@dataclass(frozen=True)
class AllocPlanPass(ModulePass):
    """Orders kernels for a low peak, then frees each transient buffer after its last use."""

    name = "alloc-plan"

    reorder: bool = True
    """Choose a memory-aware kernel order (else keep program order)."""

    size_hint: int = 4096
    """The extent assumed for every `?` when comparing orders."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                if self.reorder:
                    reorder(f, self.size_hint)
                free_after_last_use(f)
