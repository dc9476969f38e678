"""`alloc-place`: where every buffer lives, decided in the IR before any code generation.

Runs on allocated functions (after `fusion-allocate`). Global buffers stay in
global memory. What this pass decides is the placement of the on-chip row
buffers that `fusion-allocate` declares in each reduction or normalization
kernel (one `local` `alloc.alloc` per reduction, holding one reduced row in
the accumulation type), from the capacity model of the target
(`analysis/capacity.py`, options `target` and `on-chip-row-bytes`):

- a row whose bytes are static and within the budget: the kernel is
  `schedule(persistent)` and keeps its row buffers (registers);
- a static row over the budget: `schedule(looped)`; the row buffers are
  erased, since a looped kernel streams its row in tiles and holds no row;
- an `inner_outer` kernel (`analysis/inner_outer.py`) holds its row buffers and its
  column accumulators at once: they share the budget (each gets the budget
  divided by their number);
- a kernel that reads its row once when streamed (`analysis/row_passes.py`:
  one loop for all its reductions, online softmax included, and no row-shaped
  output; or several loops of which only one loads a row-long input, the others
  computing from per-row values: a cross-entropy's gradient, whose one-hot sum
  reads a label a row) keeps at most `stream_elements - 1` elements on chip, the
  target's point past which streaming such a row is faster (`analysis/capacity.py`);
- a row with a `?` extent: `schedule(persistent if %fits else looped)`, with
  `%fits = arith.cmpi ule, %row, %cap` computed right before the kernel from the
  row buffer's symbolic size (in elements, against the budget in elements of
  the row's type, so nothing can overflow). The host program evaluates it and
  launches the variant it names; FileCheck sees the condition.

Off-mesh devices allocate nothing: a row buffer takes the mesh of the
kernel's outputs (when they have one), so a device outside that mesh plans no
on-chip memory for the kernel either.

Library kernels (one matmul or linear) get who computes them
(`analysis/library_matmul.py`): `schedule(tiled)` (a generated kernel of output
tiles) for small static problems the tiled kernel computes, `schedule(vendor)`
for the rest, and `schedule(tiled if %fits else vendor)` where the size rule
depends on `?` extents, `%fits` computed before the kernel from `memref.dim`s of
its inputs.

Guarantees: every kernel that reduces through row buffers gets a schedule,
exactly once (placed kernels are left alone: the pass is idempotent); the
decision for static rows is made here, never at run time.

Refused, with a located error: a function still in tensor form
(`alloc_stage.require_allocated`: run `fusion-allocate` first); an on-chip buffer
that is not a one-dimensional row (the dialect allows any shape, but a row's
extent is what this pass compares with the budget); an on-chip buffer in a kernel
whose kind takes no schedule (pointwise, view: they reduce nothing). The names
this pass gives new values (`%<kernel>_fits`) are valid SSA names whatever the
kernel's name holds (`ssa_names.ssa_name`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, FlatSymbolRefAttr, IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from allotment.analysis import library_matmul
from allotment.analysis.capacity import Capacity, capacity
from allotment.analysis.liveness import view_root
from allotment.analysis.row_passes import REDUCTIONS, row_reading_loops, streamed_passes
from allotment.diagnostics import located_message
from allotment.dialects import alloc
from allotment.dialects.fusion_rules import type_name
from allotment.dtypes import element_nbytes
from allotment.errors import UnsupportedError
from allotment.passes.alloc_stage import allocated_definitions
from allotment.passes.gc_pause import gc_paused
from allotment.passes.ssa_names import ssa_name


def row_buffers(kernel: alloc.KernelOp) -> list[alloc.AllocOp]:
    """The on-chip buffers a kernel's body declares."""
    return [op for op in kernel.body.block.ops if isinstance(op, alloc.AllocOp)]


def _require_rows(kernel: alloc.KernelOp, rows: list[alloc.AllocOp]) -> None:
    """Refuses on-chip buffers this pass cannot place, with a located `UnsupportedError`
    naming the buffer: the alloc dialect lets a kernel declare any on-chip buffer, but
    what this pass places is a reduced row (one dimension, its extent compared with the
    budget), in a kernel whose kind takes a schedule (`alloc.schedule_problem`)."""
    kernel_name = f'"{kernel.sym_name.data}"'
    for row in rows:
        t = row.result.type
        assert isinstance(t, MemRefType)  # AllocOp's result constraint
        rank = len(t.get_shape())
        if rank != 1:
            raise UnsupportedError(located_message(
                row, f"alloc-place: {_buffer_name(row)} ({type_name(t)}) in kernel {kernel_name} is not a row "
                     f"buffer: alloc-place places one-dimensional on-chip rows, not a rank-{rank} buffer"))
    problem = alloc.schedule_problem(kernel.kind.data, "persistent")
    if problem is not None:
        raise UnsupportedError(located_message(
            kernel, f"alloc-place: kernel {kernel_name} declares the on-chip buffer {_buffer_name(rows[0])}, which "
                    f"alloc-place cannot place ({problem}; only a reducing kernel holds rows on chip)"))


def _buffer_name(row: alloc.AllocOp) -> str:
    return f"%{row.result.name_hint}" if row.result.name_hint else "an on-chip buffer"


def _kernel_mesh(kernel: alloc.KernelOp) -> FlatSymbolRefAttr | None:
    for out in kernel.outs:
        owner = view_root(out).owner
        if isinstance(owner, alloc.AllocOp) and owner.mesh is not None:
            return owner.mesh
    return None


def _budget_elements(row: alloc.AllocOp, cap: Capacity, rows: int = 1) -> int:
    t = row.result.type
    assert isinstance(t, MemRefType)
    return cap.row_elements(element_nbytes(t.element_type), rows)


def place_kernel(kernel: alloc.KernelOp, cap: Capacity) -> str | None:
    """Gives `kernel` its schedule (see the module docstring); returns it, or None
    for a kernel with no row buffer or one already placed."""
    rows = row_buffers(kernel)
    if not rows or kernel.schedule is not None:
        return None
    _require_rows(kernel, rows)
    mesh = _kernel_mesh(kernel)
    if mesh is not None:
        for row in rows:
            if row.mesh is None:
                row.properties["mesh"] = mesh
    dynamic: list[tuple[SSAValue, int]] = []
    fits_statically = True
    one_pass = kernel.kind.data != "inner_outer" and cap.stream_elements > 0 and reads_row_once(kernel)
    for row in rows:
        (extent,) = row.result.type.get_shape()
        # an inner-outer kernel holds all its rows at once (row buffers and column accumulators)
        budget = _budget_elements(row, cap, len(rows) if kernel.kind.data == "inner_outer" else 1)
        if one_pass:
            budget = min(budget, cap.stream_elements - 1)
        if extent == DYNAMIC_INDEX:
            dynamic.append((row.sizes[0], budget))
        elif extent > budget:
            fits_statically = False
    if not fits_statically:
        for row in rows:
            row.detach()
            row.erase()
        kernel.set_schedule("looped")
        return "looped"
    if not dynamic:
        kernel.set_schedule("persistent")
        return "persistent"
    fits = _fits_condition(kernel, dynamic)
    kernel.set_schedule("persistent_if", fits)
    return "persistent_if"


def place_library(kernel: alloc.KernelOp, lim: library_matmul.TiledLimits) -> str | None:
    """Gives a library kernel its schedule (`analysis/library_matmul.py` has the rules):
    `tiled` when the generated tiled matmul computes it and its static extents are small,
    `vendor` when it cannot or they are not, `tiled_if` with `%<kernel>_fits` (inserted
    before the kernel) when the answer depends on `?` extents. Returns it, or None for a
    kernel already placed."""
    if kernel.schedule is not None:
        return None
    lm = library_matmul.tileable(kernel)
    if lm is None:
        kernel.set_schedule("vendor")
        return "vendor"
    def extent(source: tuple[int, int] | None) -> int | tuple[int, int] | None:
        if source is None:
            return None
        i, d = source
        e = kernel.ins[i].type.get_shape()[d]
        return source if e == DYNAMIC_INDEX else e

    m, n, k = (extent(x) for x in lm.extent_sources())
    lb, rb = (extent(x) for x in lm.batch_sources())
    terms = lim.terms(m, n, k, lb, rb, element_nbytes(lm.op.results[0].type.element_type))
    dynamic = []
    for factors, cap in terms:
        static = math.prod(x for x in factors if isinstance(x, int))
        if static > cap or (cap == 0 and len(factors) > sum(isinstance(x, int) for x in factors)):
            kernel.set_schedule("vendor")  # past the cap whatever a `?` extent (of at least 1) is
            return "vendor"
        if not all(isinstance(x, int) for x in factors):
            dynamic.append((factors, cap))
    if not dynamic:
        kernel.set_schedule("tiled")
        return "tiled"
    if not _dims_known(kernel, [x for factors, _ in dynamic for x in factors if not isinstance(x, int)]):
        kernel.set_schedule("vendor")  # an extent of a view: no size value to decide by
        return "vendor"
    kernel.set_schedule("tiled_if", _small_condition(kernel, dynamic))
    return "tiled_if"


def _small_condition(kernel: alloc.KernelOp, terms: list[tuple[list[int | tuple[int, int]], int]]) -> SSAValue:
    """`%<kernel>_fits`: the product of each term's factors (static extents, or `?` ones
    of kernel inputs) at most its cap, inserted before the kernel. Each product is the
    element count of a tensor the call holds (`library_matmul.TiledLimits.terms`), so
    it never overflows `index`."""
    ops: list[Operation] = []
    dims: dict[tuple[int, int], SSAValue] = {}

    def value(x: int | tuple[int, int]) -> SSAValue:
        if isinstance(x, int):
            c = arith.ConstantOp(IntegerAttr(x, IndexType()))
            ops.append(c)
            return c.result
        if x not in dims:
            i, d = x
            dims[x] = _extent_value(kernel, kernel.ins[i], d, ops)
        return dims[x]

    condition: SSAValue | None = None
    for factors, cap in terms:
        product = value(factors[0])
        for x in factors[1:]:
            mul = arith.MuliOp(product, value(x))
            ops.append(mul)
            product = mul.result
        condition = _and_within(ops, condition, product, cap, f"{kernel.sym_name.data}_limit")
    return _insert_fits(kernel, ops, condition)


def _and_within(ops: list[Operation], condition: SSAValue | None, value: SSAValue, cap: int,
                cap_name: str) -> SSAValue:
    """Appends `value <= cap` (the cap a constant named `cap_name`) to `ops`, and-ed with
    `condition` when there is one; returns the new condition."""
    limit = arith.ConstantOp(IntegerAttr(cap, IndexType()))
    limit.result.name_hint = ssa_name(cap_name)
    cmp = arith.CmpiOp(value, limit.result, "ule")
    ops += [limit, cmp]
    if condition is None:
        return cmp.result
    both = arith.AndIOp(condition, cmp.result)
    ops.append(both)
    return both.result


def _insert_fits(kernel: alloc.KernelOp, ops: list[Operation], condition: SSAValue | None) -> SSAValue:
    """Names `condition` `%<kernel>_fits` and inserts `ops` right before the kernel."""
    block = kernel.parent_block()
    assert block is not None and condition is not None
    condition.name_hint = ssa_name(f"{kernel.sym_name.data}_fits")  # a kernel's name is any string
    block.insert_ops_before(ops, kernel)
    return condition


def _extent_value(kernel: alloc.KernelOp, source: SSAValue, d: int, ops: list[Operation]) -> SSAValue:
    """The `?` extent d of a kernel input: its `alloc.alloc`'s size operand, or a
    `memref.dim` of a function argument (an existing one before the kernel, else new)."""
    owner = source.owner
    if isinstance(owner, alloc.AllocOp):
        shape = source.type.get_shape()
        return owner.sizes[sum(1 for e in shape[:d] if e == DYNAMIC_INDEX)]
    return _existing_dim(kernel, source, d) or _new_dim(source, d, ops)


def _dims_known(kernel: alloc.KernelOp, sources: list[tuple[int, int]]) -> bool:
    """Whether each (input, dim) is an allocation's size or a function argument's extent
    (what the size analyses evaluate)."""
    for i, _ in sources:
        v = kernel.ins[i]
        if not isinstance(v.owner, alloc.AllocOp) and not (isinstance(v, BlockArgument) and isinstance(
                v.owner.parent_op(), func.FuncOp)):
            return False
    return True


def _existing_dim(kernel: alloc.KernelOp, source: SSAValue, d: int) -> SSAValue | None:
    """A `memref.dim` of `source` at the constant dim `d` in the kernel's block, before it."""
    for op in source.uses:
        dim = op.operation
        if (isinstance(dim, memref.DimOp) and dim.source is source and dim.parent_block() is kernel.parent_block()
                and isinstance(dim.index.owner, arith.ConstantOp) and dim.index.owner.value.value.data == d
                and dim.is_before_in_block(kernel)):
            return dim.result
    return None


def _new_dim(source: SSAValue, d: int, ops: list[Operation]) -> SSAValue:
    c = arith.ConstantOp(IntegerAttr(d, IndexType()))
    dim = memref.DimOp(source, c.result)
    ops.extend([c, dim])
    return dim.result


def reads_row_once(kernel: alloc.KernelOp) -> bool:
    """Whether `kernel`, streamed, reads its row from memory once (`analysis/row_passes.py`):
    one loop in all (`streamed_passes`), or one loop that loads a row-long input while the
    others compute from per-row values only (`row_reading_loops`: the one-hot sum of a
    cross-entropy's gradient)."""
    block = kernel.body.block
    reductions = [op for op in block.ops if isinstance(op, REDUCTIONS)]
    return bool(reductions) and (streamed_passes(block, reductions) == 1 or row_reading_loops(block, reductions) <= 1)


def _fits_condition(kernel: alloc.KernelOp, rows: list[tuple[SSAValue, int]]) -> SSAValue:
    """`%<kernel>_fits`: every dynamic row within its budget, inserted before the kernel."""
    ops: list[Operation] = []
    condition: SSAValue | None = None
    seen: set[tuple[SSAValue, int]] = set()
    for size, budget in rows:
        if (size, budget) in seen:
            continue
        seen.add((size, budget))
        condition = _and_within(ops, condition, size, budget, f"{kernel.sym_name.data}_budget")
    return _insert_fits(kernel, ops, condition)


@dataclass(frozen=True)
class AllocPlacePass(ModulePass):
    """Places each reducing kernel's rows on chip or streams them, and picks who computes
    each library kernel (docs/memory-planning.md)."""

    name = "alloc-place"

    target: str = "h200"
    """The capacity model: `h200` or `cpu` (`analysis/capacity.py`)."""

    on_chip_row_bytes: int = 0
    """Overrides the target's budget for one reduced row, in bytes (0: the target's)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            cap = capacity(self.target, self.on_chip_row_bytes)
        except ValueError as e:
            raise PassFailedException(f"alloc-place: {e}") from None
        try:
            lim = library_matmul.limits()
        except ValueError as e:
            raise PassFailedException(f"alloc-place: {e}") from None
        with gc_paused():  # many short-lived objects (`passes/gc_pause.py`)
            for f in allocated_definitions(op, self.name):
                for kernel in [k for k in f.body.block.ops if isinstance(k, alloc.KernelOp)]:
                    if kernel.kind.data == "library":
                        place_library(kernel, lim)
                    else:
                        place_kernel(kernel, cap)
