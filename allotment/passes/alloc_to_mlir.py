"""`alloc-to-mlir`: a planned program in upstream MLIR dialects only.

Runs after planning (`alloc-plan`, `alloc-verify`, optionally `alloc-evaluate`)
and leaves `func`, `arith`, `math`, `memref`, `scf`, `cf` and `linalg`, which
`mlir-opt` 22 parses as printed (`docs/mlir.md` has the pipeline that lowers it to
the LLVM dialect). The plan's decisions survive one for one:

- `alloc.alloc` (global or host memory) is `memref.alloc` with the same dynamic size
  operands and `alignment`; `zero_init` adds a `linalg.fill` of 0; `name` is kept as the
  `alloc.name` string and names the result, made a valid SSA name by `ssa_names.ssa_name`
  (any string: `"s t"` gives `%s_t`), so the output parses again. `order` other than
  row-major (or an argument's `fusion.stride_order`), `mesh` and `sharding` are refused
  (a located error): the MLIR program is one device's, with row-major buffers.
- `alloc.dealloc` is `memref.dealloc`.
- `alloc.pack` is `arith` on `index`: each slot's offset is the lowest aligned offset
  above every slot placed before it (in the order of their first steps) whose lifetime
  intersects its own, the arena's size the highest end, aligned. The arena stays
  one `i8` `memref.alloc` and its slots the plan's `memref.view`s. The offsets are
  computed in the IR from the run-time sizes (the host program's greedy-by-size
  packing, `analysis/packing.py`, sorts by size at run time; this rule needs no sort,
  never overlaps two live slots, and may take more bytes).
- `alloc.check` is `arith.cmpi` (and, for `divisible`, a remainder) plus `cf.assert`
  with the check's message.
- `alloc.kernel` becomes loops where it stands (`passes/mlir_kernel.py`), its
  `local`/`shared` buffers `memref.alloca`s.

Every function gets `llvm.emit_c_interface`: `mlir-opt`'s `--finalize-memref-to-llvm`
and `--convert-func-to-llvm` then emit `_mlir_ciface_<name>`, callable from C. The
function keeps the plan's signature: it takes the inputs as memrefs and returns the
outputs as memrefs (buffers it allocated, or the input it wrote in place), which the
caller owns.

Nothing here allocates a buffer the plan did not: the lowered program has one
`memref.alloc` per global `alloc.alloc`, and no bufferization is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, memref
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from allotment.dialects import alloc
from allotment.dialects.fusion import argument_order
from allotment.passes import mlir_scalar as sc
from allotment.passes.alloc_stage import require_allocated
from allotment.passes.mlir_errors import LoweringError, refuse
from allotment.passes.mlir_kernel import KernelEmitter
from allotment.passes.ssa_names import ssa_name

UPSTREAM = ("builtin", "func", "arith", "math", "memref", "scf", "cf", "linalg")
"""The dialects the lowered program may use."""

INDEX = IndexType()


@dataclass(frozen=True)
class AllocToMLIRPass(ModulePass):
    """Lowers planned alloc-dialect programs to upstream func/arith/math/memref/scf/cf/linalg.

    Allocation decisions stay as they were planned: one `memref.alloc` per buffer (with
    its symbolic sizes and alignment), `memref.dealloc` at the plan's frees, arenas as one
    `i8` alloc with `memref.view` slots at offsets computed in the IR, checks as
    `cf.assert`. Kernels become `scf.for` nests over their iteration domain, inline.
    A program with anything else (meshes, shardings, collectives, ops without a scalar
    lowering) is refused with a located error naming the op; a function still in tensor
    form (`alloc_stage.require_allocated`), with one saying to allocate it first."""

    name = "alloc-to-mlir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for top in op.body.block.ops:
            if isinstance(top, func.FuncOp) and not top.is_declaration:
                require_allocated(top, self.name)  # before anything is lowered
        for top in list(op.body.block.ops):
            if isinstance(top, func.FuncOp):
                lower_function(top)
            elif top.name.split(".")[0] not in UPSTREAM:
                raise refuse(top, "the MLIR program is one device's: no meshes or other non-upstream module ops")


def lower_function(f: func.FuncOp) -> None:
    """Lowers the alloc ops and kernels of `f` in place (see the module docstring)."""
    if f.body.blocks.first is None:
        return
    for a in f.body.block.args:
        order = argument_order(a)
        if order is not None:  # the lowered function would read it as a row-major memref
            raise refuse(f, f"argument {a.name_hint or a.index} is passed in memory order {order}, not row-major")
    for op in [o for o in f.body.walk() if _top_level(o, f)]:
        if isinstance(op, alloc.KernelOp):
            KernelEmitter(op).lower()
            Rewriter.erase_op(op, safe_erase=False)
        elif isinstance(op, alloc.AllocOp):
            _alloc(op)
        elif isinstance(op, alloc.DeallocOp):
            _dealloc(op)
        elif isinstance(op, alloc.CheckOp):
            _check(op)
        elif isinstance(op, alloc.PackOp):
            _pack(op)
        elif op.name.split(".")[0] not in UPSTREAM:
            raise refuse(op, f"{op.name} has no upstream lowering")
    f.attributes["llvm.emit_c_interface"] = UnitAttr()


def _top_level(op: Operation, f: func.FuncOp) -> bool:
    """Whether `op` is outside every kernel (nested in upstream control flow at most)."""
    p = op.parent_op()
    while p is not None and p is not f:
        if isinstance(p, alloc.KernelOp):
            return False
        p = p.parent_op()
    return True


def _alloc(op: alloc.AllocOp) -> None:
    if op.mesh is not None or op.sharding is not None:
        raise refuse(op, "a buffer on a device mesh (sharded programs run through torch.distributed)")
    t = op.result.type
    rank = len(t.get_shape())
    if op.order is not None and list(op.order.get_values()) != list(range(rank)):
        raise refuse(op, f"allocation order {list(op.order.get_values())} is not row-major")
    if op.memory_space in alloc.ON_CHIP:
        raise refuse(op, f"a {op.memory_space} buffer outside a kernel")
    alignment = op.alignment.value.data if op.alignment is not None else None
    new = memref.AllocOp(list(op.sizes), [], t, IntegerAttr(alignment, i64) if alignment is not None else None)
    new.attributes["alloc.memory"] = StringAttr(op.memory_space.value)
    if op.buffer_name is not None:
        new.attributes["alloc.name"] = op.buffer_name
    Rewriter.replace_op(op, new)
    if op.buffer_name is not None:
        new.memref.name_hint = ssa_name(op.buffer_name.data)  # the name is data: `alloc.name` keeps it as it is
    if op.zero_init is not None:
        zero = arith.ConstantOp(_zero_attr(t.element_type))
        Rewriter.insert_op([zero, linalg.FillOp((zero.result,), (new.memref,), ())], InsertPoint.after(new))


def _zero_attr(t: Attribute) -> Attribute:
    return FloatAttr(0.0, t) if sc.is_float(t) else IntegerAttr(0, t)


def _dealloc(op: alloc.DeallocOp) -> None:
    """`memref.dealloc` of a buffer; the end of an arena slot (a `memref.view`) frees
    nothing: its bytes are the arena's, freed with it."""
    owner = op.buffer.owner
    if isinstance(owner, Operation) and owner.name in ("memref.view", "memref.reinterpret_cast", "memref.subview"):
        Rewriter.erase_op(op)
    else:
        Rewriter.replace_op(op, memref.DeallocOp.get(op.buffer))


def _check(op: alloc.CheckOp) -> None:
    ops: list[Operation] = []
    pred = op.predicate.data
    if pred == "eq":
        ops.append(arith.CmpiOp(op.lhs, op.rhs, "eq"))
    elif pred == "ge":
        ops.append(arith.CmpiOp(op.lhs, op.rhs, "sge"))
    elif pred == "divisible":
        zero, one = arith.ConstantOp(IntegerAttr(0, INDEX)), arith.ConstantOp(IntegerAttr(1, INDEX))
        nonzero = arith.CmpiOp(op.rhs, zero, "ne")
        safe = arith.SelectOp(nonzero, op.rhs, one)
        rem = arith.RemSIOp(op.lhs, safe)
        exact = arith.CmpiOp(rem, zero, "eq")
        ops += [zero, one, nonzero, safe, rem, exact, arith.AndIOp(nonzero, exact)]
    else:
        raise refuse(op, f"no lowering for predicate {pred}")
    ops.append(cf.AssertOp(ops[-1].results[0], op.message.data))
    Rewriter.insert_op(ops, InsertPoint.before(op))
    Rewriter.erase_op(op)


def _pack(op: alloc.PackOp) -> None:
    """Offsets in the IR (the module docstring's rule)."""
    a = op.alignment.value.data
    lifetimes = op.lifetime_pairs()
    ops: list[Operation] = []

    def emit(new: Operation) -> SSAValue:
        ops.append(new)
        return new.results[0]

    def const(n: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr(n, INDEX)))

    mask = const(a - 1)
    neg_mask = const(-a)

    def align(v: SSAValue) -> SSAValue:
        return emit(arith.AndIOp(emit(arith.AddiOp(v, mask)), neg_mask))

    order = sorted(range(len(lifetimes)), key=lambda i: (lifetimes[i][0], i))
    offsets: dict[int, SSAValue] = {}
    ends: dict[int, SSAValue] = {}
    total: SSAValue | None = None
    for n, i in enumerate(order):
        s, e = lifetimes[i]
        offset = const(0)
        for j in order[:n]:
            sj, ej = lifetimes[j]
            if sj <= e and s <= ej:
                offset = emit(arith.MaxUIOp(offset, align(ends[j])))
        offsets[i] = offset
        offset.name_hint = op.offsets[i].name_hint
        ends[i] = emit(arith.AddiOp(offset, op.sizes[i]))
        total = ends[i] if total is None else emit(arith.MaxUIOp(total, ends[i]))
    total = align(total if total is not None else const(0))
    total.name_hint = op.total.name_hint
    Rewriter.insert_op(ops, InsertPoint.before(op))
    op.total.replace_all_uses_with(total)
    for k, r in enumerate(op.offsets):
        r.replace_all_uses_with(offsets[k])
    Rewriter.erase_op(op)


__all__ = ["AllocToMLIRPass", "LoweringError", "lower_function"]
