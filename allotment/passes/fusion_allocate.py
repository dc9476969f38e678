"""`fusion-allocate`: every tensor becomes an explicit buffer with symbolic sizes.

Runs on segmented functions (`fusion-segment` first). It guarantees:

- Arguments and results become `memref`s (arguments: contiguous row-major;
  a sharded argument's memref has the local shard's extents).
- Every segment output, hence every value crossing a kernel boundary and every
  function result computed by a kernel, gets a global `alloc.alloc` whose
  dynamic extents are `index` values computed at entry from `memref.dim` of the
  function's own arguments (never from a segment's block arguments).
- Every kernel becomes an `alloc.kernel` reading `ins` and writing `outs`; each
  reduction in a reduction or normalization kernel gets a local `alloc.alloc`
  of its reduced row (product of the reduced extents, accumulation type: f32
  for 16-bit floats), sized in the same terms, so the backend reads that size
  instead of computing it. An `inner_outer` kernel (`analysis/inner_outer.py`)
  gets, per column reduction, a local accumulator [N] instead of a row buffer
  and a global partials buffer [%programs, N] in the accumulation type (an
  extra `in`, named by the kernel's `column_partials` attribute), `%programs`
  computed at entry from the row count.
- A reduction segment split across CTAs (`analysis/split_reduction.py`) gets global
  partials buffers `[%split, kept]` (an extra `in` each, named by the kernel's
  `partials` attribute): a column or full split's kernel is `schedule(looped)`
  and has no row buffer; an inner split (few long rows) keeps its row buffers and
  gets its schedule from `alloc-place`, and is not split at all where static
  extents make `%split` 1.
- `view` segments become `memref.reinterpret_cast`s of an existing buffer with
  explicit offset, sizes and strides: no allocation.
- Each run-time requirement on extents found by shape reification becomes an
  `alloc.check` at entry, before any allocation and any kernel: equal extents,
  divisibility, extents taken from index values >= 0, and every dynamic
  reduced extent of a `max`/`min` >= 1 (they have no identity). A requirement
  on constants is decided here (`size_arith.check_holds`): a false one is an
  error. Sizes mean what `extents.size_arith` says; slice offsets and extents,
  pad, cat, reshape and shard extents come from `extents.view_extents`.
- Errors are located (`file:line:col: error: <op>: fusion-allocate: ...`)
  where the op came from parsed text; an `alloc.check` keeps the location of
  the op that required it. Argument and result types whose static extents
  cannot exist (past 2^63 - 1, or more bytes than that) are rejected.
- Sharded tensors: local extent = ceildiv(global, shards) with `uneven`,
  otherwise global / shards with an `alloc.check divisible`
  (`view_extents.local_extent_sym`, the rule `plan_sizes` uses too); the alloc carries
  `mesh`, `sharding` and `global_shape`. A dynamic extent of an argument that is
  sharded unevenly cannot be recovered from the local shard: rejected.
- A kernel touching sharded tensors computes its local shard: its body's
  tensor types are the local ones (`local_type`: local static extents, no
  encoding; broadcast_in_dim, expand and full get local static shapes), so
  the backend plans it like any kernel. A `collective` kernel (one `comm` op)
  keeps the global sharded types that say what it moves; its output buffer is
  sized like any other (local extents, the result's mesh). Views of shards are
  views of the local buffer.
- An `aten` kernel (one `fusion.aten` call) writes its results into their buffers
  through the call's `out=` overload; where the call has none, its buffers are
  `by_call`: sized and planned like the others, made by the call.

The parts: `allocate_shards` (local shards), `allocate_signature` (arguments and
results), `allocate_checks` (the checks at entry), `allocate_reductions` (row
buffers, accumulators and partials), `allocate_views` (view segments, on
`allocate_layout`'s layouts), `allocate_errors` (the pass's errors). This module
rewrites the function op by op and builds each kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from allotment.analysis import inner_outer, kernel_domain, split_reduction
from allotment.analysis.shapes import ShapeAnalysis, ShapeError, reify_shapes
from allotment.dialects import alloc, fusion
from allotment.extents import view_extents
from allotment.extents.symbolic import Const, Extent
from allotment.passes.allocate_checks import EntryChecks
from allotment.passes.allocate_errors import _fail
from allotment.passes.allocate_layout import Layout, in_order, row_major
from allotment.passes.allocate_reductions import ReductionBuffers
from allotment.passes.allocate_shards import ShardRules, _sharding
from allotment.passes.allocate_signature import Signature
from allotment.passes.allocate_views import ViewRewrites
from allotment.passes.gc_pause import gc_paused
from allotment.passes.size_builder import SizeBuilder


class _Allocator(ShardRules, Signature, EntryChecks, ReductionBuffers, ViewRewrites):
    """Rewrites one segmented function."""

    def __init__(self, f: func.FuncOp) -> None:
        self.f = f
        self.shapes: ShapeAnalysis = reify_shapes(f)
        self.block = f.body.block
        self.old_args = list(self.block.args)
        self.meshes: dict[str, fusion.MeshOp] = {}
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.layouts: dict[SSAValue, Layout] = {}
        self.body_ops: list[Operation] = []

    # -- the rewrite -----------------------------------------------------------

    def run(self) -> None:
        self.checks: list[tuple[str, Extent, Extent, str]] = []
        new_args = self._new_arguments()
        self.sizes = SizeBuilder(new_args, global_scales=self._global_scales())
        for op in list(self.block.ops):
            self._rewrite(op)
        entry: list[Operation] = []
        self._emit_checks(entry)
        ops = self.sizes.ops + entry + self.body_ops
        for op in reversed(list(self.block.ops)):
            op.detach()
            op.erase(safe_erase=False)
        for old in self.old_args:
            self.block.erase_arg(old, safe_erase=False)
        self.block.add_ops(ops)
        ret = self.block.last_op
        assert isinstance(ret, func.ReturnOp)
        self.f.function_type = func.FunctionType.from_lists(
            [a.type for a in self.block.args], [v.type for v in ret.arguments]
        )
        self._result_layouts(ret)

    def _rewrite(self, op: Operation) -> None:
        if isinstance(op, fusion.SegmentOp):
            if op.kind.data == "view":
                self._view_segment(op)
            else:
                self._kernel(op)
        elif isinstance(op, func.ReturnOp):
            self.body_ops.append(func.ReturnOp(*[self.buffers[v] for v in op.arguments]))
        elif isinstance(op, tensor.DimOp):
            value = self.sizes.value(self.shapes.canonical(self.shapes.scalars[op.result]))
            self.buffers[op.result] = value
        elif isinstance(op, fusion.FusionOp):
            raise _fail(op, f"{op.name} is outside any segment; run fusion-segment first")
        else:
            if any(isinstance(r.type, IndexType) for r in op.results) and all(
                r in self.shapes.scalars for r in op.results
            ):
                for r in op.results:
                    self.buffers[r] = self.sizes.value(self.shapes.canonical(self.shapes.scalars[r]))
                return
            clone = op.clone(dict(self.buffers))
            for old, new in zip(op.results, clone.results):
                self.buffers[old] = new
            self.body_ops.append(clone)

    # -- kernels and their buffers --------------------------------------------

    def _alloc_for(self, value: SSAValue, name: str) -> SSAValue:
        t = value.type
        assert isinstance(t, TensorType)
        local_shape = self.local_static_shape(t, value.owner if isinstance(value.owner, Operation) else None)
        extents = self.local_extents(value)
        dynamic = [self.sizes.value(e) for e, s in zip(extents, local_shape) if s == DYNAMIC_INDEX]
        sharding = _sharding(t)
        op = alloc.AllocOp(
            alloc.memref_type(t.element_type, tuple(local_shape)),
            dynamic,
            alloc.MemorySpace.GLOBAL,
            name=name,
            mesh=sharding.mesh.root_reference.data if sharding else None,
            sharding=sharding,
            global_shape=list(t.get_shape()) if sharding else None,
        )
        op.result.name_hint = name
        self.body_ops.append(op)
        self.layouts[value] = row_major(extents)
        return op.result

    def _kernel(self, seg: fusion.SegmentOp) -> None:
        ins = [self.buffers[v] for v in seg.inputs]
        outs = [
            self._alloc_for(r, r.name_hint or f"{seg.sym_name.data}_out{i}")
            for i, r in enumerate(seg.outputs)
        ]
        for r, b in zip(seg.outputs, outs):
            self.buffers[r] = b
        if seg.kind.data == "aten" and _allocates_results(seg):
            yielded = list(seg.body.block.last_op.operands)
            for r, b, inner_r in zip(seg.outputs, outs, yielded):
                b.owner.properties["by_call"] = UnitAttr()
                order = fusion.memory_order(inner_r)  # (a result of the segment's call)
                if order is not None:  # the call returns it in this order: planned so, views so
                    b.owner.order = DenseArrayBase.from_list(i64, order)
                    self.layouts[r] = in_order(self.layouts[r].sizes, order)
        inner = seg.body.block
        # A sharded kernel computes its local shard: its body's types are the local ones
        # (a collective keeps the global, sharded types: they say what it moves).
        local = seg.kind.data != "collective" and any(
            _sharding(v.type) is not None for v in (*seg.inputs, *seg.outputs)
        )
        block = Block(arg_types=[self.local_type(a.type) if local else a.type for a in inner.args])
        split = None if local else split_reduction.split_plan(seg)  # outer, full and inner splits
        inner_split = bool(split) and split_reduction.is_inner_reduction(split[0][0])
        if inner_split and self._split_count(split) == Const(1):
            split, inner_split = None, False  # static extents with one split: the row kernel alone
        mapping: dict[SSAValue, SSAValue] = {}
        for old, new in zip(inner.args, block.args):
            mapping[old] = new
            new.name_hint = old.name_hint
        sized: set[SSAValue] = set()
        for op in inner.ops:
            if isinstance(op, fusion.YieldOp):
                block.add_op(alloc.YieldOp(*[mapping[v] for v in op.values]))
                continue
            for v in kernel_domain.sized_operands(op, inner.args):
                if v not in sized:  # before its first reader
                    sized.add(v)
                    self._add_extents(block, v, mapping[v])
            if seg.kind.data in ("reduction", "normalization", "inner_outer") and (
                split is None or inner_split
            ) and isinstance(op, fusion.ReductionOp | fusion.VarMeanOp | fusion.WelfordOp):
                rank = len(op.operands[0].type.get_shape())
                if seg.kind.data == "inner_outer" and inner_outer.is_column_reduction(op, rank):
                    block.add_op(self._column_accumulator(op, seg))
                else:
                    block.add_op(self._row_buffer(op, inner, seg))
            clone = op.clone(mapping)
            if local:
                self._localize(op, clone)
            block.add_op(clone)
            for old, new in zip(op.results, clone.results):
                mapping[old] = new
            if isinstance(op, fusion.RandomOp):  # its extents (its linear index), after it
                self._add_extents(block, op.result, mapping[op.result])
            if isinstance(op, fusion.SliceOp):
                block.add_op(self._slice_starts(op, mapping[op.result]))
        partials = self._partials(seg, split, block) if split else []
        if seg.kind.data == "inner_outer":
            partials = self._column_partials(seg, block, len(ins))
        domain, extents = self._domain(seg, mapping)
        kernel = alloc.KernelOp(
            seg.sym_name.data, seg.kind.data, ins + partials, outs, Region(block),
            schedule="looped" if split and not inner_split else None,  # an inner split: alloc-place's
            domain=domain, extents=extents,
        )
        if split:
            kernel.attributes["partials"] = DenseArrayBase.from_list(i64, list(range(len(ins), len(ins) + len(partials))))
        if inner_split:  # decided here, read by the emitter: the IR says how it chunks
            kernel.attributes["inner_split_align"] = IntegerAttr(split_reduction.inner_split_align(), i64)
        if seg.kind.data == "inner_outer":
            kernel.attributes["column_partials"] = DenseArrayBase.from_list(
                i64, list(range(len(ins), len(ins) + len(partials)))
            )
        self.body_ops.append(kernel)

    def _domain(self, seg: fusion.SegmentOp, mapping: dict[SSAValue, SSAValue]) -> tuple[list[int] | None, list[SSAValue]]:
        """The kernel's iteration domain (`analysis.kernel_domain`): its static extents (those
        of the body's value, local ones in a sharded kernel) and the sizes of its dynamic ones."""
        if not kernel_domain.has_domain(seg.kind.data):
            return None, []
        inner = seg.body.block
        ops = [op for op in inner.ops if not isinstance(op, fusion.YieldOp)]
        v = kernel_domain.domain_value(seg.kind.data, ops, list(inner.last_op.operands))
        if v is None:
            return [], []
        static = list(mapping[v].type.get_shape())
        extents = self.local_extents(v)
        return static, [self.sizes.value(e) for e, s in zip(extents, static) if s == DYNAMIC_INDEX]

    def _add_extents(self, block: Block, v: SSAValue, clone: SSAValue) -> None:
        """`alloc.extents` of a value of a kernel body (`v` in the segment, `clone` in the
        kernel), where one of its extents is dynamic (the code reads static ones from its type)."""
        static = list(clone.type.get_shape())
        if DYNAMIC_INDEX in static:
            extents = self.local_extents(v)
            sizes = [self.sizes.value(e) for e, s in zip(extents, static) if s == DYNAMIC_INDEX]
            block.add_op(alloc.ExtentsOp(clone, static, sizes))

    def _slice_starts(self, op: fusion.SliceOp, clone: SSAValue) -> alloc.ExtentsOp:
        """Where each dim of a slice inside a kernel starts in its input (`view_extents.slice_index_sym`)."""
        starts = [  # a start of 0 is 0 whatever the extent (>= 0)
            start if start == Const(0) else self.shapes.canonical(view_extents.slice_index_sym(start, extent))
            for start, extent in zip(self._mixed(op.static_start.get_values(), op.start), self.local_extents(op.input))
        ]
        static = [e.value if isinstance(e, Const) else DYNAMIC_INDEX for e in starts]
        return alloc.ExtentsOp(clone, static, [self.sizes.value(e) for e in starts if not isinstance(e, Const)], starts=True)


def _allocates_results(seg: fusion.SegmentOp) -> bool:
    """Whether an `aten` segment's call makes its results itself (no `out=` overload)."""
    return any(isinstance(op, fusion.AtenOp) and op.out is None for op in seg.body.block.ops)


def _verify_signature(f: func.FuncOp) -> None:
    """Argument and result tensor types whose extents can exist (`fusion.verify_signature`)."""
    try:
        fusion.verify_signature(f)
    except VerifyException as e:
        raise _fail(f, str(e)) from None


@dataclass(frozen=True)
class FusionAllocatePass(ModulePass):
    """Turns every tensor of segmented fusion functions into an explicit buffer."""

    name = "fusion-allocate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        with gc_paused():
            for f in list(op.walk()):
                if not isinstance(f, func.FuncOp) or f.is_declaration:
                    continue
                if not any(isinstance(o, TensorType) for o in f.function_type.inputs.data + f.function_type.outputs.data):
                    continue
                loose = next((o for o in f.body.block.ops if isinstance(o, fusion.FusionOp)), None)
                if loose is not None:
                    raise _fail(loose, f"@{f.sym_name.data} is not segmented; run fusion-segment first")
                _verify_signature(f)
                try:
                    _Allocator(f).run()
                except ShapeError as e:
                    raise _fail(e.op, str(e)) if e.op is not None else PassFailedException(
                        f"fusion-allocate: {e}"
                    ) from None
