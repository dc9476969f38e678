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
   `alloc.program_order_peak`, in bytes at the hint, saturated at 2^63 - 1 where
   many `?` extents make more) so FileCheck sees them.
   Program order is kept unless another order is strictly better.
2. Free. For each top-level global `alloc.alloc` that is neither returned
   nor viewed by a returned value, one `alloc.dealloc` right after the last
   top-level op that touches the buffer or any view of it
   (`analysis/liveness.py`), so the host program drops it there (`del`) and
   torch's allocator can give its memory to buffers allocated later.
   Function arguments and outputs are never freed, except arguments marked
   `alloc.donated` (the caller gave them up: AOTAutograd's saved activations), which
   are freed after their last use like transients.

Guarantees: every dependence of the input program is kept, whatever the
sizes (only the choice among correct orders uses the hint); a buffer is never
used after its `alloc.dealloc`; each buffer is freed at most once; the pass
is idempotent (a function that already frees buffers is not reordered, and
buffers that already have a dealloc are left alone). `alloc-verify` checks
the result.

3. Arena (`arena=true`, the default). The transient buffers left (global,
   not returned, not viewed by a returned value, without mesh, order or
   alignment of their own) are packed into one `i8` arena when there are at
   least two: one `alloc.pack` takes each buffer's byte size (an `index`
   value, symbolic in the inputs' extents) and its lifetime (the first and
   last kernel that touches it, counted in kernel order), and gives the arena's
   size and each slot's offset, computed when the sizes are known
   (`analysis/packing.py`, after IREE's `stream.resource.pack`). Each buffer
   becomes a `memref.view` of the arena at its offset; its `alloc.dealloc`
   ends the slot's life (the bytes go back to the arena, poisoned in poison
   mode) and the arena itself is freed after its last slot. Function
   arguments and outputs never go into the arena.

Reuse of a dead buffer's memory is thus decided twice over: in place (an
output written into an input that dies in the same kernel, step 1b) and
through the arena (any transient whose lifetime ends before another's
begins shares its bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
    i8,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from allotment.analysis import packing
from allotment.analysis.liveness import VIEW_OPS, live_ranges, top_level_users
from allotment.analysis.memory_profile import peak_bytes
from allotment.analysis.schedule import buffer_bytes, choose_schedule, hint_index_values
from allotment.dialects import alloc, comm, fusion
from allotment.dtypes import element_nbytes
from allotment.passes.alloc_alias import _reads_elementwise
from allotment.passes.alloc_stage import allocated_definitions
from allotment.passes.gc_pause import gc_paused


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
    f.attributes["alloc.estimated_peak"] = _bytes_attr(choice.peak)
    f.attributes["alloc.program_order_peak"] = _bytes_attr(choice.program_peak)
    return choice.strategy


PEAK_LIMIT = (1 << 63) - 1
"""The largest estimate an i64 attribute records: estimates past it (six `?` extents at the
hint already make 2^74 bytes) are recorded as this, saturated."""


def _bytes_attr(nbytes: int) -> IntegerAttr:
    """An estimate in bytes as an i64 attribute, saturated at `PEAK_LIMIT` (the comparison
    between orders is made on the exact Python integers before this)."""
    return IntegerAttr(min(nbytes, PEAK_LIMIT), i64)


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
    input's buffer, as Inductor reuses a dead input for a pointwise output.

    A `collective` kernel of one `comm.all_reduce` qualifies on the same terms about the
    buffers (its partial input and its result have one local shape): collectives reduce
    in place (NCCL's and gloo's all_reduce do), so the reduction then needs neither its
    own buffer nor a copy of the partial into it.

    So does a scatter kernel (one `fusion.scatter` or `fusion.index_put_accumulate`) for
    its input (accumulator) buffer, when that buffer is no other operand of the kernel:
    its result is the input with the addressed elements stored (added), so writing them
    into the input's buffer in place is the whole computation, and the host program
    skips the copy of the input into the output (`kernels.gather_scatter.host_prologue`): the
    embedding backward's accumulator and nll_loss backward's zeros are not copied."""
    ops = list(f.body.block.ops)
    position = {op: i for i, op in enumerate(ops)}
    reused = 0
    for kernel in [op for op in ops if isinstance(op, alloc.KernelOp)]:
        reduces_in_place = kernel.kind.data == "collective" and _is_all_reduce(kernel)
        if kernel.kind.data not in ("pointwise", "normalization") and not reduces_in_place:
            continue
        scattered = _scatter_input(kernel)
        taken: set[SSAValue] = set(kernel.outs)
        for out in list(kernel.outs):
            target = out.owner
            if not (isinstance(target, alloc.AllocOp) and target.parent_op() is f and _only_buffer_use_is_plain(target)):
                continue
            source = next((v for v in kernel.ins if v not in taken and _dies_here(v, kernel, f, position)
                           and _same_buffer_type(v, target)
                           and (reduces_in_place or (v is scattered if scattered is not None
                                                     else _reads_elementwise(kernel, v, out)))), None)
            if source is None:
                continue
            taken.add(source)
            _record_reuse(source.owner, target)
            target.result.replace_all_uses_with(source)
            target.detach()
            target.erase()
            reused += 1
    return reused


STRIDED_KINDS = ("pointwise", "normalization", "reduction", "inner_outer", "scan", "sort", "aten")
"""Kernel kinds whose code indexes every input through its strides: generated Triton
kernels (the launcher passes each tensor's `stride()`) and ATen calls."""


def keep_call_layouts(f: func.FuncOp) -> int:
    """Marks `any_layout` each `by_call` buffer whose users all take any dense layout: it is
    read only by kernels of `STRIDED_KINDS`, written only by its call, freed, and neither
    viewed nor returned. The host program then keeps the call's result as it comes (an
    attention output in [batch, seq, heads, dim] memory order) instead of copying it
    row-major. Returns how many it marked."""
    marked = 0
    for buffer in [op for op in f.body.block.ops if isinstance(op, alloc.AllocOp) and op.by_call is not None]:
        ok = True
        for use in buffer.result.uses:
            user = use.operation
            if isinstance(user, alloc.DeallocOp):
                continue
            if not isinstance(user, alloc.KernelOp) or user.kind.data not in STRIDED_KINDS:
                ok = False
            elif use.index >= len(user.ins) and user.kind.data != "aten":  # another kernel writes it
                ok = False
            if not ok:
                break
        if ok and buffer.any_layout is None:
            buffer.any_layout = UnitAttr()
            marked += 1
    return marked


def _scatter_input(kernel: alloc.KernelOp) -> SSAValue | None:
    """The buffer of the input (accumulator) of a scatter kernel, if the kernel holds one
    scatter and that buffer is none of its other operands (`reuse_in_place`), else None."""
    body = [o for o in kernel.body.block.ops if not isinstance(o, alloc.YieldOp)]
    if len(body) != 1 or not isinstance(body[0], fusion.INDEXING_SCATTERS) or len(kernel.outs) != 1:
        return None
    args = list(kernel.body.block.args)
    source = body[0].source_operand
    if source not in args:
        return None
    buffer = kernel.ins[args.index(source)]
    return buffer if sum(1 for v in kernel.ins if v is buffer) == 1 else None


def _record_reuse(buffer: alloc.AllocOp, erased: alloc.AllocOp) -> None:
    """Notes on `buffer` (`reused_by`) the name of the erased buffer whose tensor it now holds
    (and the names that buffer held), so that the plan still lists that tensor by name."""
    names = [*buffer.reused_names]
    if erased.buffer_name is not None:
        names.append(erased.buffer_name.data)
    names += erased.reused_names
    if names:
        buffer.reused_by = ArrayAttr([StringAttr(n) for n in names])


def _is_all_reduce(kernel: alloc.KernelOp) -> bool:
    body = [op for op in kernel.body.block.ops if not isinstance(op, alloc.YieldOp)]
    return len(body) == 1 and isinstance(body[0], comm.AllReduceOp)


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
    index = {op: i for i, op in enumerate(ops)}
    for r in live_ranges(f):
        if r.returned or _has_dealloc(r.buffer):
            continue
        # an arena outlives the ends of its slots
        slot_ends = [index[u] for u, _ in top_level_users(r.buffer.result, index) if isinstance(u, alloc.DeallocOp)]
        Rewriter.insert_op(alloc.DeallocOp(r.buffer.result), InsertPoint.after(ops[max([r.end, *slot_ends])]))
        inserted += 1
    return inserted + free_donated_arguments(f)


def free_donated_arguments(f: func.FuncOp) -> int:
    """One `alloc.dealloc` after the last top-level use of each donated buffer argument that
    is neither returned nor viewed by a returned value (nor already freed)."""
    ops = list(f.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    inserted = 0
    for i in alloc.donated_arguments(f):
        arg = f.body.block.args[i]
        if not isinstance(arg.type, MemRefType):
            continue
        users = list(top_level_users(arg, index))
        if not users or any(isinstance(u, func.ReturnOp | alloc.DeallocOp) for u, _ in users):
            continue
        last = max(index[u] for u, _ in users)
        Rewriter.insert_op(alloc.DeallocOp(arg), InsertPoint.after(ops[last]))
        inserted += 1
    return inserted


ARENA_ALIGNMENT = 256
"""Byte alignment of every arena slot: torch's caching allocator aligns blocks to 512
bytes on CUDA, and 256 keeps every element type's view aligned and every slot on
its own L2 sectors."""


def _arena_candidate(r: object) -> bool:
    b = r.buffer  # type: ignore[attr-defined]
    return (not r.returned and not _has_dealloc(b) and b.mesh is None and b.sharding is None  # type: ignore[attr-defined]
            and b.order is None and b.alignment is None and b.zero_init is None and b.by_call is None
            and isinstance(b.result.type, MemRefType) and isinstance(b.result.type.layout, NoneAttr))


def pack_arena(f: func.FuncOp, alignment: int = ARENA_ALIGNMENT, hint: int | None = 4096) -> int:
    """Packs `f`'s transient buffers into one arena (step 3 of the module docstring);
    returns how many slots it made (0: left as it was).

    An arena holds its bytes from its first slot to its last, so where outputs are
    allocated while an early slot's bytes sit unused, freeing each buffer after its
    last use (torch's allocator then reuses the bytes) has the lower peak. With every
    `?` extent at `hint`, the arena is made only when its peak is no higher; else the
    function records `alloc.arena = "declined: ..."`. `hint=None` always packs."""
    block = f.body.block
    if any(isinstance(op, alloc.PackOp) for op in block.ops):
        return 0
    candidates = [r for r in live_ranges(f) if _arena_candidate(r)]
    if len(candidates) < 2:
        return 0
    ops = list(block.ops)
    index = {op: i for i, op in enumerate(ops)}
    step_of: dict[Operation, int] = {}
    for op in ops:
        if isinstance(op, alloc.KernelOp):
            step_of[op] = len(step_of)
    lifetimes: list[tuple[int, int]] = []
    last_user: list[Operation] = []
    for r in candidates:
        users = [u for u, _ in top_level_users(r.buffer.result, index) if not isinstance(u, alloc.DeallocOp)]
        steps = [step_of[u] for u in users if u in step_of]
        if not steps:  # never touched by a kernel: its step is the next kernel's
            later = [step_of[o] for o in ops[index[r.buffer]:] if o in step_of]
            steps = [later[0] if later else len(step_of)]
        lifetimes.append((min(steps), max(steps)))
        last_user.append(max(users, key=lambda u: index[u]) if users else r.buffer)
    if hint is not None and not _arena_pays(f, candidates, lifetimes, alignment, hint):
        f.attributes["alloc.arena"] = StringAttr("declined: a higher peak than freeing each buffer")
        return 0
    first = min((r.buffer for r in candidates), key=lambda b: index[b])
    size_ops: list[Operation] = []
    sizes = [_byte_size(r.buffer, size_ops) for r in candidates]
    pack = alloc.PackOp(sizes, lifetimes, alignment)
    pack.total.name_hint = "arena_bytes"
    arena = alloc.AllocOp(alloc.memref_type(i8, (DYNAMIC_INDEX,)), [pack.total], alloc.MemorySpace.GLOBAL, name="arena")
    arena.result.name_hint = "arena"
    block.insert_ops_before([*size_ops, pack, arena], first)
    for k, (r, last) in enumerate(zip(candidates, last_user)):
        b = r.buffer
        pack.offsets[k].name_hint = f"{b.result.name_hint or 'slot'}_offset"
        view = memref.ViewOp(arena.result, pack.offsets[k], list(b.sizes), b.result.type)
        view.result.name_hint = b.result.name_hint
        if b.reused_by is not None:  # the tensors written into it in place keep their names
            view.attributes[alloc.REUSED_BY] = b.reused_by
        block.insert_op_before(view, b)
        b.result.replace_all_uses_with(view.result)
        b.detach()
        b.erase()
        Rewriter.insert_op(alloc.DeallocOp(view.result), InsertPoint.after(view if last is b else last))
    return len(candidates)


def _arena_pays(f: func.FuncOp, candidates: list, lifetimes: list[tuple[int, int]], alignment: int, hint: int) -> bool:
    """Whether the arena's peak at the hint is at most that of per-buffer frees."""
    values = hint_index_values(f, hint)
    ranges = live_ranges(f)
    steps = len(list(f.body.block.ops))
    nbytes = {r.buffer: buffer_bytes(r.buffer, values, hint) for r in ranges}
    held = [(r.start, steps if r.returned else r.end, nbytes[r.buffer]) for r in ranges]
    packed = set(id(r) for r in candidates)
    arena_total, _ = packing.pack([nbytes[r.buffer] for r in candidates], lifetimes, alignment)
    arena = [(r.start, steps if r.returned else r.end, nbytes[r.buffer]) for r in ranges if id(r) not in packed]
    arena.append((min(r.start for r in candidates), max(r.end for r in candidates), arena_total))
    return peak_bytes(steps, arena) <= peak_bytes(steps, held)


def _byte_size(b: alloc.AllocOp, out: list[Operation]) -> SSAValue:
    """The buffer's bytes as an `index` value: (static extents x element bytes) x each
    dynamic extent, in dim order, appending the arith ops it needs to `out`."""
    t = b.result.type
    assert isinstance(t, MemRefType)
    static = element_nbytes(t.element_type)
    for e in t.get_shape():
        if e != DYNAMIC_INDEX:
            static *= e
    c = arith.ConstantOp(IntegerAttr(static, IndexType()))
    out.append(c)
    value: SSAValue = c.result
    for size in b.sizes:
        m = arith.MuliOp(value, size)
        out.append(m)
        value = m.result
    value.name_hint = f"{b.result.name_hint or 'slot'}_bytes"
    return value


@dataclass(frozen=True)
class AllocPlanPass(ModulePass):
    """Orders kernels for a low peak, then frees each transient buffer after its last use.

    Takes allocated functions only (`alloc_stage.require_allocated`): a function still in
    tensor form is refused with a located error instead of passing through unplanned."""

    name = "alloc-plan"

    reorder: bool = True
    """Choose a memory-aware kernel order (else keep program order)."""

    size_hint: int = 4096
    """The extent assumed for every `?` when comparing orders."""

    in_place: bool = True
    """Let a pointwise output reuse an input buffer that dies in the same kernel."""

    arena: bool = True
    """Pack the transient buffers into one arena where its peak at `size-hint` is no
    higher than freeing each (else each is its own allocation)."""

    arena_always: bool = False
    """Pack into an arena even where it raises the peak (for tests and comparisons)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with gc_paused():  # the analyses make many short-lived objects (`passes/gc_pause.py`)
            for f in allocated_definitions(op, self.name):
                if self.reorder:
                    reorder(f, self.size_hint)
                if self.in_place:
                    reuse_in_place(f)
                if self.arena:
                    pack_arena(f, hint=None if self.arena_always else self.size_hint)
                free_after_last_use(f)
                keep_call_layouts(f)
