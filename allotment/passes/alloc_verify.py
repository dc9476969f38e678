"""`alloc-verify`: proves that a memory plan never touches freed memory.

Runs on allocated (and planned) functions. It checks, for every top-level
`alloc.dealloc`:

- it frees a buffer made by a top-level global `alloc.alloc` of the same
  function (never a function argument, a view, or an on-chip buffer);
- the buffer is freed once;
- no op after the dealloc touches the buffer or any view of it;
- the buffer is not returned (directly or through a view).

An `alloc.dealloc` of an arena slot (a `memref.view` of an arena) ends the
slot's life: the same rules hold for the slot, and the arena is not freed
before it.

For every `alloc.pack` (an arena), it proves that no two buffers whose live
ranges overlap share a byte:

- each slot is a `memref.view` of an arena whose size is the pack's total,
  at the offset the pack gave that slot;
- symbolically, for every shape: the slot's bytes (its extents times its
  element size) are at most the size the pack was given for it, an equality
  of symbolic expressions in the inputs' extents, or a comparison of
  constants; and every kernel that touches the slot (or a view of it) runs
  within the lifetime the pack was given, so slots the pack may overlap are
  never live together. The pack itself places slots with intersecting
  lifetimes apart (`analysis/packing.py`);
- for concrete shapes, always: where every slot size is a constant, the
  offsets are computed here and checked pairwise (a slot size that is a
  negative constant, computed by `arith`, is an error at the pack); `memory_plan` and
  `plan_sizes` check the same for the shapes they are given
  (`arena_overlaps`).

A plan that breaks one of these fails with a located error naming the buffer
and the op at fault.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from allotment.analysis import packing
from allotment.analysis.liveness import top_level_users, view_root
from allotment.diagnostics import located_message
from allotment.dialects import alloc
from allotment.dtypes import element_nbytes
from allotment.errors import VerifyError
from allotment.extents import size_arith
from allotment.extents import symbolic as sym
from allotment.passes.alloc_stage import allocated_definitions


def _name(op: alloc.AllocOp) -> str:
    return f"%{op.result.name_hint}" if op.result.name_hint else "a buffer"


def arena_of(slot: SSAValue) -> alloc.AllocOp | None:
    """The arena a `memref.view` slot is carved from (a top-level global alloc), or None."""
    view = slot.owner
    if isinstance(view, memref.ViewOp) and isinstance(view.source.owner, alloc.AllocOp):
        return view.source.owner
    return None


def _slot_name(slot: SSAValue) -> str:
    return f"slot %{slot.name_hint}" if slot.name_hint else "an arena slot"


def plan_violations(f: func.FuncOp) -> list[tuple[Operation, str]]:
    """(op at fault, message) for every way the deallocs and arenas of `f` break the
    plan's rules (see the module docstring)."""
    ops = list(f.body.block.ops)
    index = {op: i for i, op in enumerate(ops)}
    found: list[tuple[Operation, str]] = []
    freed: set[alloc.AllocOp] = set()
    ended: set[SSAValue] = set()
    freed_at: dict[alloc.AllocOp, int] = {}
    freed_args: set[SSAValue] = set()
    for i, op in enumerate(ops):
        if not isinstance(op, alloc.DeallocOp):
            continue
        buffer = op.buffer
        owner = buffer.owner
        arena = arena_of(buffer)
        if arena is not None and arena.parent_op() is f:
            if buffer in ended:
                found.append((op, f"ends {_slot_name(buffer)} a second time"))
                continue
            ended.add(buffer)
            if arena in freed_at and freed_at[arena] < i:
                found.append((op, f"ends {_slot_name(buffer)} after its arena was freed"))
            found += _used_after(op, buffer, i, index, f"ends {_slot_name(buffer)}, which the function returns",
                                 f"uses {_slot_name(buffer)} after its life ended")
            continue
        if isinstance(owner, alloc.AllocOp):
            freed_at.setdefault(owner, i)
        if view_root(buffer) is not buffer:
            found.append((op, "frees a view; only a buffer made by alloc.alloc can be freed"))
            continue
        if isinstance(buffer, BlockArgument) and buffer.owner is f.body.block:
            found += _donated_violations(f, op, buffer, i, index, freed_args)
            continue
        if not isinstance(owner, alloc.AllocOp) or owner.parent_op() is not f:
            found.append((op, "frees a value that no top-level alloc.alloc of this function made"))
            continue
        if owner.memory.data != alloc.MemorySpace.GLOBAL:
            found.append((op, f"frees {_name(owner)}, which is not in global memory"))
            continue
        if owner in freed:
            found.append((op, f"frees {_name(owner)} a second time"))
            continue
        freed.add(owner)
        for user, _ in top_level_users(owner.result, index):
            if isinstance(user, alloc.DeallocOp):
                continue  # a second dealloc is reported as such
            j = index.get(user)
            if isinstance(user, func.ReturnOp):
                found.append((op, f"frees {_name(owner)}, which the function returns"))
            elif j is not None and j > i:
                found.append((user, f"uses {_name(owner)} after it was freed"))
    for pack in (op for op in ops if isinstance(op, alloc.PackOp)):
        found += pack_violations(f, pack, index)
    return found


def _donated_violations(f: func.FuncOp, op: Operation, arg: SSAValue, i: int, index: dict[Operation, int],
                        freed_args: set[SSAValue]) -> list[tuple[Operation, str]]:
    """A freed argument must be donated (`alloc.donated`), freed once, and neither used
    after nor returned."""
    position = list(f.body.block.args).index(arg)
    if position not in alloc.donated_arguments(f):
        return [(op, f"frees argument #{position}, which the caller did not donate (alloc.donated)")]
    if arg in freed_args:
        return [(op, f"frees argument #{position} a second time")]
    freed_args.add(arg)
    return _used_after(op, arg, i, index, f"frees argument #{position}, which the function returns",
                       f"uses argument #{position} after it was freed")


def _used_after(end: Operation, value: SSAValue, i: int, index: dict[Operation, int], returned: str,
                used: str) -> list[tuple[Operation, str]]:
    """What is wrong with `value` ending at `end` (position `i`): returned by the function
    (`returned`, at `end`), or used by a later top-level op (`used`, at that op)."""
    found: list[tuple[Operation, str]] = []
    for user, _ in top_level_users(value, index):
        if isinstance(user, alloc.DeallocOp):
            continue
        j = index.get(user)
        if isinstance(user, func.ReturnOp):
            found.append((end, returned))
        elif j is not None and j > i:
            found.append((user, used))
    return found


def pack_violations(f: func.FuncOp, pack: alloc.PackOp, index: dict[Operation, int]) -> list[tuple[Operation, str]]:
    """How the slots of one arena could overlap while live (module docstring)."""
    found: list[tuple[Operation, str]] = []
    steps = {op: k for k, op in enumerate(op for op in index if isinstance(op, alloc.KernelOp))}
    exprs = _Symbolic(f)
    lifetimes = pack.lifetime_pairs()
    for k, offset in enumerate(pack.offsets):
        for use in offset.uses:
            view = use.operation
            if not isinstance(view, memref.ViewOp) or view.byte_shift is not offset:
                found.append((view, f"uses the offset of slot #{k} of an alloc.pack other than as a memref.view's shift"))
                continue
            arena = arena_of(view.result)
            if arena is None or tuple(arena.sizes) != (pack.total,) or arena.memory.data != alloc.MemorySpace.GLOBAL:
                found.append((view, f"{_slot_name(view.result)} is not a view of a global arena of the pack's total size"))
                continue
            problem = _size_problem(view, pack.sizes[k], exprs)
            if problem:
                found.append((view, f"{_slot_name(view.result)}: {problem}"))
            start, end = lifetimes[k]
            for user, _ in top_level_users(view.result, index):
                step = steps.get(user)
                if step is not None and not start <= step <= end:
                    found.append((user, f"uses {_slot_name(view.result)} at kernel step {step}, outside the lifetime "
                                        f"[{start}, {end}] its arena was packed for: it may share bytes with a live slot"))
    sizes = [exprs.constant(v) for v in pack.sizes]
    negative = [(k, v) for k, v in enumerate(sizes) if v is not None and v < 0]
    for k, v in negative:  # the verifier refuses a negative constant; this is one computed by arith
        found.append((pack, f"slot #{k} is given the size {v}: a slot cannot have a negative size"))
    if all(v is not None for v in sizes) and not negative:
        concrete = [v for v in sizes if v is not None]
        _, offsets = packing.pack(concrete, lifetimes, pack.alignment.value.data)
        for i, j in packing.overlapping_slots(concrete, offsets, lifetimes):
            found.append((pack, f"slots #{i} and #{j} are live together and overlap in memory"))
    return found


def _size_problem(view: memref.ViewOp, declared: SSAValue, exprs: _Symbolic) -> str | None:
    t = view.result.type
    assert isinstance(t, MemRefType)
    static = element_nbytes(t.element_type)
    for e in t.get_shape():
        static *= 1 if e == DYNAMIC_INDEX else e
    need: sym.Extent = sym.Const(static)  # the order alloc-plan builds byte sizes in
    for v in view.sizes:
        need = sym.mul(need, exprs.of(v))
    have = exprs.of(declared)
    if need == have:
        return None
    if isinstance(need, sym.Const) and isinstance(have, sym.Const):
        return None if need.value <= have.value else f"needs {need.value} bytes but was packed as {have.value}"
    return f"cannot prove that its {need} bytes fit the {have} bytes it was packed as"


class _Symbolic:
    """Top-level `index` values of a function as symbolic extents of its arguments
    (values it cannot read are opaque symbols, equal only to themselves)."""

    def __init__(self, f: func.FuncOp) -> None:
        self.args = {a: i for i, a in enumerate(f.body.block.args)}
        self.cache: dict[SSAValue, sym.Extent] = {}
        self.opaque: dict[SSAValue, int] = {}

    def of(self, v: SSAValue) -> sym.Extent:
        found = self.cache.get(v)
        if found is None:
            found = self.cache[v] = self._build(v)
        return found

    def constant(self, v: SSAValue) -> int | None:
        e = self.of(v)
        return e.value if isinstance(e, sym.Const) else None

    def _build(self, v: SSAValue) -> sym.Extent:
        op = v.owner
        if isinstance(v, BlockArgument) and v in self.args:
            return sym.ArgScalar(self.args[v], v.name_hint or "")
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return sym.Const(op.value.value.data)
        if isinstance(op, arith.IndexCastOp) and isinstance(op.result.type, IndexType):
            return self.of(op.input)  # an integer scalar argument giving a size
        if isinstance(op, memref.DimOp) and op.source in self.args:
            d = self.of(op.index)
            if isinstance(d, sym.Const):
                return sym.ArgDim(self.args[op.source], d.value, op.source.name_hint or "")
        if isinstance(op, Operation) and (name := size_arith.arith_op_name(op.name)) and len(op.operands) == 2:
            return sym.binop(name, self.of(op.operands[0]), self.of(op.operands[1]))
        return sym.ArgScalar(-1 - self.opaque.setdefault(v, len(self.opaque)), v.name_hint or "opaque")


@dataclass(frozen=True)
class AllocVerifyPass(ModulePass):
    """Fails on a plan that frees memory still in use or overlaps two live arena slots (docs/memory-planning.md).

    Takes allocated functions only (`alloc_stage.require_allocated`): a function still in
    tensor form has no plan to verify and is refused with a located error."""

    name = "alloc-verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in allocated_definitions(op, self.name):
            problems = plan_violations(f)
            if problems:
                at, message = problems[0]
                raise VerifyError(located_message(at, message))
