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
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from allotment.analysis.liveness import VIEW_OPS, live_ranges
from allotment.analysis.schedule import choose_schedule
from allotment.dialects import alloc
from allotment.passes.alloc_alias import _reads_elementwise


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


def _only_buffer_use_is_plain(buffer: alloc.AllocOp) -> bool:
    """No view of the buffer exists and nothing frees it yet."""
    return all(not isinstance(u.operation, (*VIEW_OPS, alloc.DeallocOp)) for u in buffer.result.uses)


def reuse_in_place(f: func.FuncOp) -> int:
    """Outputs written into an input buffer that dies in the same kernel; returns how many.

    For a `pointwise` or `normalization` kernel, an output buffer and an input buffer
    qualify when both are top-level global buffers of `f` with the same type and the
    same dynamic sizes, neither has views, the input is neither returned nor used
    after this kernel, and the kernel reads the input only elementwise at the index it
    writes the output at (the code generator loads every input of a tile before it
    stores any output). The output's buffer is then erased and the kernel writes the
    input's buffer, as Inductor reuses a dead input for a pointwise output."""
    ops = list(f.body.block.ops)
    position = {op: i for i, op in enumerate(ops)}
    reused = 0
    for kernel in [op for op in ops if isinstance(op, alloc.KernelOp)]:
        if kernel.kind.data not in ("pointwise", "normalization"):
            continue
        taken: set[SSAValue] = set(kernel.outs)
        for out in list(kernel.outs):
            target = out.owner
            if not (isinstance(target, alloc.AllocOp) and target.parent_op() is f and _only_buffer_use_is_plain(target)):
                continue
            source = next((v for v in kernel.ins if v not in taken and _dies_here(v, kernel, f, position)
                           and _same_buffer_type(v, target) and _reads_elementwise(kernel, v, out)), None)
            if source is None:
                continue
            taken.add(source)
            target.result.replace_all_uses_with(source)
            target.detach()
            target.erase()
            reused += 1
    return reused


def _dies_here(value: SSAValue, kernel: alloc.KernelOp, f: func.FuncOp, position: dict[Operation, int]) -> bool:
    buffer = value.owner
    if not (isinstance(buffer, alloc.AllocOp) and buffer.parent_op() is f and _only_buffer_use_is_plain(buffer)):
        return False
    if buffer.memory.data != alloc.MemorySpace.GLOBAL:
        return False
    for use in value.uses:
        user = use.operation
        if isinstance(user, func.ReturnOp) or position.get(user, -1) > position[kernel]:
            return False
    return True


def _same_buffer_type(value: SSAValue, target: alloc.AllocOp) -> bool:
    source = value.owner
    assert isinstance(source, alloc.AllocOp)
    return (source.result.type == target.result.type and tuple(source.sizes) == tuple(target.sizes)
            and target.memory.data == alloc.MemorySpace.GLOBAL and source.mesh == target.mesh
            and source.sharding == target.sharding)


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

    in_place: bool = True
    """Let a pointwise output reuse an input buffer that dies in the same kernel."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                if self.reorder:
                    reorder(f, self.size_hint)
                if self.in_place:
                    reuse_in_place(f)
                free_after_last_use(f)
