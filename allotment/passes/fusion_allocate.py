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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException, VerifyException

from allotment.analysis import inner_outer, kernel_domain, split_reduction
from allotment.analysis.shapes import ShapeAnalysis, ShapeError, reify_shapes
from allotment.diagnostics import SOURCE_SPANS, located_message
from allotment.dialects import alloc, fusion, sharding_rules
from allotment.dialects.fusion import STRIDE_ORDER_ATTR
from allotment.dialects.fusion_rules import compute_type
from allotment.extents import size_arith, view_extents
from allotment.extents import symbolic as sym
from allotment.extents.dims import dim_set, normalize_dim
from allotment.extents.symbolic import Const, Extent
from allotment.passes.gc_pause import gc_paused
from allotment.passes.size_builder import SizeBuilder


@dataclass(frozen=True)
class Layout:
    """Where a tensor's elements are in its buffer, in elements."""

    sizes: tuple[Extent, ...]
    strides: tuple[Extent, ...]
    offset: Extent
    contiguous: bool


def row_major(sizes: Sequence[Extent]) -> Layout:
    strides: list[Extent] = []
    acc: Extent = Const(1)
    for e in reversed(sizes):
        strides.append(acc)
        acc = sym.mul(acc, e)
    return Layout(tuple(sizes), tuple(reversed(strides)), Const(0), True)


def _sharding(t: Attribute) -> fusion.ShardingAttr | None:
    enc = t.encoding if isinstance(t, TensorType) else None
    return enc if isinstance(enc, fusion.ShardingAttr) else None


class _Allocator:
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

    # -- meshes and shards ---------------------------------------------------

    def mesh(self, sharding: fusion.ShardingAttr) -> fusion.MeshOp:
        name = sharding.mesh.root_reference.data
        if name not in self.meshes:
            found = SymbolTable.lookup_symbol(self.f, sharding.mesh)
            assert isinstance(found, fusion.MeshOp)
            self.meshes[name] = found
        return self.meshes[name]

    def shard_counts(self, sharding: fusion.ShardingAttr) -> list[int]:
        mesh = self.mesh(sharding)
        return [alloc.shard_count(mesh, axes) for axes in sharding.axes]

    def local_static_shape(self, t: TensorType, op: Operation | None = None) -> list[int]:
        """The static extents of a tensor's local shard (`view_extents.local_extent`)."""
        shape = list(t.get_shape())
        sharding = _sharding(t)
        if sharding is None:
            return shape
        out = []
        for d, (e, k) in enumerate(zip(shape, self.shard_counts(sharding))):
            if e == DYNAMIC_INDEX:
                out.append(e)
            elif not view_extents.shard_divides(e, k, sharding.allows_uneven):
                raise _fail(
                    op or self.f,
                    f"dimension {d} of {t} has extent {e}, which does not divide "
                    f"evenly over {k} shards (mark the sharding `uneven` to allow it)",
                )
            else:
                out.append(view_extents.local_extent(e, k, sharding.allows_uneven))
        return out

    def local_extents(self, value: SSAValue) -> tuple[Extent, ...]:
        """The extents of the local shard of a tensor (global ones if unsharded)."""
        t = value.type
        extents = self.shapes.shape(value)
        sharding = _sharding(t)
        if sharding is None:
            return extents
        out = []
        for d, (e, k) in enumerate(zip(extents, self.shard_counts(sharding))):
            if k != 1 and not sharding.allows_uneven and not isinstance(e, Const):
                self.checks.append(
                    ("divisible", e, Const(k), f"{value_name(value)} dimension {d} ({e}) must divide "
                     f"evenly over {k} shards")
                )
            out.append(view_extents.local_extent_sym(e, k, sharding.allows_uneven))
        return tuple(out)

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

    def _result_layouts(self, ret: func.ReturnOp) -> None:
        """A result with `fusion.stride_order` (nvFuser's `add_output(stride_order=)`) gets a
        buffer allocated in that layout: its `alloc.alloc` carries `order` (dims outermost
        first), so the kernel writes it strided and the planner sees it. A result that is
        not a kernel's own buffer (an argument, a view) keeps its layout."""
        if self.f.res_attrs is None:
            return
        for i, (attrs, v) in enumerate(zip(self.f.res_attrs.data, ret.arguments)):
            attr = attrs.data.get(STRIDE_ORDER_ATTR)
            if attr is None:
                continue
            rank = len(v.type.get_shape()) if isinstance(v.type, MemRefType) else -1
            values = list(attr.get_values()) if isinstance(attr, DenseArrayBase) else None
            if values is None or sorted(values) != list(range(rank)):
                raise _fail(
                    self.f,
                    f"result #{i}: {STRIDE_ORDER_ATTR} must be an array<i64> permutation of 0..{rank - 1} "
                    f"(one entry per dimension), got {attr}",
                )
            if isinstance(v.owner, alloc.AllocOp) and v.owner.sharding is None:
                order = sorted(range(rank), key=lambda d: -values[d])  # outermost first
                if order != list(range(rank)):
                    v.owner.order = DenseArrayBase.from_list(i64, order)

    def _new_arguments(self) -> list[SSAValue]:
        new_args: list[SSAValue] = []
        for old in self.old_args:
            t = old.type
            if isinstance(t, TensorType):
                nt: Attribute = alloc.memref_type(t.element_type, tuple(self.local_static_shape(t)))
            else:
                nt = t
            arg = self.block.insert_arg(nt, len(self.block.args))
            arg.name_hint = old.name_hint
            new_args.append(arg)
            if isinstance(t, TensorType):
                self.buffers[old] = arg
                self.layouts[old] = row_major(self.local_extents(old))
            else:
                self.buffers[old] = arg
        return new_args

    def _global_scales(self) -> dict[tuple[int, int], int]:
        """Global extent of a sharded argument's dynamic dim = local extent * shards."""
        scales: dict[tuple[int, int], int] = {}
        for i, old in enumerate(self.old_args):
            sharding = _sharding(old.type)
            if sharding is None:
                continue
            for d, (e, k) in enumerate(zip(old.type.get_shape(), self.shard_counts(sharding))):
                if e != DYNAMIC_INDEX or k == 1:
                    continue
                if sharding.allows_uneven:
                    raise _fail(
                        self.f,
                        f"argument {value_name(old)} is sharded unevenly along its "
                        f"dynamic dimension {d}: its global extent cannot be recovered from the local "
                        "shard; give that dimension a static extent",
                    )
                scales[(i, d)] = k
        return scales

    def _emit_checks(self, entry: list[Operation]) -> None:
        seen: set[tuple[str, Extent, Extent]] = set()
        for c in self.shapes.checks:
            # Compared as recorded, not canonicalized: the two sides of an `eq`
            # were unified, so their canonical forms are one value (the check
            # would compare it with itself), and a check's message names the
            # extents as recorded.
            self._check(entry, seen, c.predicate, c.lhs, c.rhs, c.message, c.op)
        for pred, lhs, rhs, msg in self.checks:
            self._check(entry, seen, pred, self.shapes.canonical(lhs), self.shapes.canonical(rhs), msg, None)

    def _check(
        self, entry: list[Operation], seen: set, pred: str, lhs: Extent, rhs: Extent, msg: str,
        op: Operation | None,
    ) -> None:
        """An `alloc.check` at entry; a check of two constants is decided now
        (`size_arith.check_holds`): a false one is an error located at `op`."""
        if isinstance(lhs, Const) and isinstance(rhs, Const):
            if not size_arith.check_holds(pred, lhs.value, rhs.value):
                raise _fail(op or self.f, f"{msg} (always false: {lhs.value}, {rhs.value})")
            return
        key = (pred, lhs, rhs)
        if key in seen:
            return
        seen.add(key)
        check = alloc.CheckOp(pred, self.sizes.value(lhs), self.sizes.value(rhs), msg)
        if op is not None and op in SOURCE_SPANS:
            SOURCE_SPANS[check] = SOURCE_SPANS[op]  # a failing check is reported where its op is
        entry.append(check)

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

    # -- buffers ---------------------------------------------------------------

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
            for b in outs:
                b.owner.properties["by_call"] = UnitAttr()
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

    def _partials(self, seg: fusion.SegmentOp, split: list[tuple[Operation, Attribute]], block: Block) -> list[SSAValue]:
        """One global buffer of partial results [%split, kept] per reduction of a kernel split
        across CTAs (`split_reduction`), two for a var_mean or welford (its sum and M2
        partials, `split_reduction.partials_results`), allocated before it; the kernel's body
        gets an argument for each."""
        src = split[0][0].operands[0]
        extents = self.shapes.shape(src)
        dims = split[0][0].reduced_dims()
        kept = sym.product([e for d, e in enumerate(extents) if d not in dims])
        count = self._split_count(split)
        sizes = [self.shapes.canonical(count), self.shapes.canonical(split_reduction.partials_kept(split[0][0], count, kept))]
        return [
            self._partials_buffer(seg, r, acc, sizes, block, named=res)
            for r, acc in split
            for res in split_reduction.partials_results(r)
        ]

    def _split_count(self, split: list[tuple[Operation, Attribute]]) -> Extent:
        """The split count of a split segment in the fusion's extents (`split_reduction.count_for`)."""
        r = split[0][0]
        extents = self.shapes.shape(r.operands[0])
        dims = r.reduced_dims()
        kept = sym.product([e for d, e in enumerate(extents) if d not in dims])
        return split_reduction.count_for(r, sym.product([extents[d] for d in dims]), kept)

    def _partials_buffer(
        self, seg: fusion.SegmentOp, r: Operation, acc: Attribute, sizes: list[Extent], block: Block,
        named: SSAValue | None = None,
    ) -> SSAValue:
        """One global buffer of partial results of reduction `r` (`sizes` in the fusion's
        extents, elements `acc`), allocated before the kernel, and the kernel body's
        argument for it (appended): a split reduction's or an inner-outer kernel's. It is
        named after `named` (a result of `r`; its first by default)."""
        static = [e.value if isinstance(e, Const) else DYNAMIC_INDEX for e in sizes]
        result = named or r.results[0]
        k = list(r.results).index(result)
        name = f"{seg.sym_name.data}_partials_{result.name_hint or ('red' if k == 0 else f'red{k}')}"
        a = alloc.AllocOp(
            alloc.memref_type(acc, tuple(static)),
            [self.sizes.value(e) for e, s in zip(sizes, static) if s == DYNAMIC_INDEX],
            alloc.MemorySpace.GLOBAL,
            name=name,
        )
        a.result.name_hint = name
        self.body_ops.append(a)
        arg = block.insert_arg(TensorType(acc, static), len(block.args))
        arg.name_hint = name
        return a.result

    def _column_partials(self, seg: fusion.SegmentOp, block: Block, first: int) -> list[SSAValue]:
        """An inner-outer kernel's partials (`analysis/inner_outer.py`): one global buffer
        [%programs, N] in the accumulation type per column reduction, in body order, allocated
        before the kernel; `%programs` from the row count (`inner_outer.program_count`)."""
        out = []
        for op in seg.body.block.ops:
            if not isinstance(op, fusion.ReductionOp):
                continue
            extents = self.shapes.shape(op.operands[0])
            if not inner_outer.is_column_reduction(op, len(extents)):
                continue
            programs = inner_outer.program_count(sym.product(list(extents[:-1])))
            sizes = [self.shapes.canonical(programs), self.shapes.canonical(extents[-1])]
            acc = op.accumulation_type()
            out.append(self._partials_buffer(seg, op, acc, sizes, block))
        return out

    def _column_accumulator(self, op: Operation, seg: fusion.SegmentOp) -> alloc.AllocOp:
        """The on-chip accumulator [N] of a column reduction in an inner-outer kernel."""
        src = op.operands[0]
        n = self.local_extents(src)[-1]
        static = self.local_static_shape(src.type)[-1]
        sizes = [self.sizes.value(n)] if static == DYNAMIC_INDEX else []
        name = f"{seg.sym_name.data}_acc_{op.results[0].name_hint or 'red'}"
        a = alloc.AllocOp(
            alloc.memref_type(op.accumulation_type(), (static,)), sizes,
            alloc.MemorySpace.LOCAL, name=name,
        )
        a.result.name_hint = name
        return a

    def local_type(self, t: Attribute, op: Operation | None = None) -> Attribute:
        """A sharded tensor type as its local shard's: local static extents, no encoding."""
        if _sharding(t) is None:
            return t
        assert isinstance(t, TensorType)
        return TensorType(t.element_type, self.local_static_shape(t, op))

    def _localize(self, op: Operation, clone: Operation) -> None:
        """Gives a kernel op's clone its local result types, and local static shapes to the
        ops that hold their result's shape (broadcast_in_dim, expand, full)."""
        tensors = [v for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
        if any(_sharding(v.type) is None for v in tensors):
            raise _fail(op, "a kernel mixes sharded and unsharded tensors; run fusion-propagate-sharding "
                            "and fusion-insert-resharding first")
        if isinstance(op, fusion.SetOp) and not sharding_rules.equivalent(
            _sharding(op.input.type), _sharding(op.result.type)
        ):
            raise _fail(op, "fusion.set reshards its input; run fusion-insert-resharding first")
        for r in clone.results:
            if _sharding(r.type) is not None:
                Rewriter.replace_value_with_new_type(r, self.local_type(r.type, op))
        prop = {fusion.BroadcastInDimOp: "static_shape", fusion.ExpandOp: "static_shape", fusion.FullOp: "static_sizes"}
        name = next((p for cls, p in prop.items() if isinstance(op, cls)), None)
        sharding = _sharding(op.results[0].type) if op.results else None
        if name is None or sharding is None:
            return
        global_shape = list(op.results[0].type.get_shape())
        local_shape = self.local_static_shape(op.results[0].type, op)
        for d, (g, axes) in enumerate(zip(global_shape, sharding.axes)):
            if axes and g == DYNAMIC_INDEX:
                raise _fail(op, f"dimension {d} is split over the mesh but its extent is dynamic; give it a "
                                "static extent")
        clone.properties[name] = fusion.int_list(local_shape)

    def _row_buffer(self, op: Operation, inner: Block, seg: fusion.SegmentOp) -> alloc.AllocOp:
        """The on-chip buffer holding one reduced row of a reduction's input."""
        src = op.operands[0]
        extents = self.local_extents(src)  # a device reduces its own shard's rows
        rank = len(extents)
        dims = dim_set(op.dims.get_values(), rank)
        static = self.local_static_shape(src.type)
        row = sym.product([extents[d] for d in dims])
        static_row = DYNAMIC_INDEX if any(static[d] == DYNAMIC_INDEX for d in dims) else _prod(static[d] for d in dims)
        sizes = [self.sizes.value(row)] if static_row == DYNAMIC_INDEX else []
        name = f"{seg.sym_name.data}_row_{op.results[0].name_hint or 'red'}"
        a = alloc.AllocOp(
            alloc.memref_type(compute_type(src.type.element_type), (static_row,)), sizes, alloc.MemorySpace.LOCAL, name=name
        )
        a.result.name_hint = name
        return a

    # -- views -----------------------------------------------------------------

    def _view_segment(self, seg: fusion.SegmentOp) -> None:
        ops = [o for o in seg.body.block.ops if not isinstance(o, fusion.YieldOp | arith.ConstantOp)]
        if len(ops) != 1 or not isinstance(ops[0], fusion.FusionOp):
            raise _fail(seg, f"view segment {seg.sym_name.data} must hold one view op")
        view = ops[0]
        inner_src = view.operands[0]
        index = list(seg.body.block.args).index(inner_src)
        src = seg.inputs[index]
        layout = self.layouts[src]
        result = seg.outputs[0]
        new = self._view_layout(view, layout, result)
        self.layouts[result] = new
        self.buffers[result] = self._reinterpret(self.buffers[src], result, new)

    def _view_layout(self, view: Operation, src: Layout, result: SSAValue) -> Layout:
        sizes = self.local_extents(result)  # a view of a shard is the view of the local buffer
        in_shape = view.operands[0].type.get_shape()
        zero = Const(0)
        if isinstance(view, fusion.PermuteOp):
            rank = len(src.sizes)
            perm = [normalize_dim(d, rank) for d in view.dims.get_values()]
            return Layout(sizes, tuple(src.strides[p] for p in perm), src.offset, perm == sorted(perm) and src.contiguous)
        if isinstance(view, fusion.SliceOp):
            starts = self._mixed(view.static_start.get_values(), view.start)
            stops = self._mixed(view.static_stop.get_values(), view.stop)
            steps = self._mixed(view.static_step.get_values(), view.step)
            offset = src.offset
            for start, stop, step, size, stride in zip(starts, stops, steps, src.sizes, src.strides):
                first, _ = view_extents.slice_sym(size, start, stop, step)
                offset = sym.add(offset, sym.mul(first, stride))
            strides = tuple(sym.mul(s, st) for s, st in zip(src.strides, steps))
            return Layout(sizes, strides, offset, False)
        if isinstance(view, fusion.BroadcastInDimOp):
            dims = list(view.broadcast_dims.get_values())
            strides = []
            for d in range(len(sizes)):
                if d in dims:
                    s = dims.index(d)
                    strides.append(zero if in_shape[s] == 1 else src.strides[s])
                else:
                    strides.append(zero)
            return Layout(sizes, tuple(strides), src.offset, False)
        if isinstance(view, fusion.ExpandOp):
            strides = tuple(zero if e == 1 else s for e, s in zip(in_shape, src.strides))
            return Layout(sizes, strides, src.offset, False)
        if isinstance(view, fusion.SqueezeOp):
            rank = len(src.sizes)
            dropped = set(dim_set(view.dims.get_values(), rank))
            strides = tuple(s for d, s in enumerate(src.strides) if d not in dropped)
            return Layout(sizes, strides, src.offset, src.contiguous)
        if isinstance(view, fusion.ReshapeOp):
            if not src.contiguous:
                raise _fail(view, "reshape of a non-contiguous view (fusion-segment inserts a copy)")
            layout = row_major(sizes)
            return Layout(layout.sizes, layout.strides, src.offset, True)
        raise _fail(view, f"{view.name} is not a view op")

    def _mixed(self, static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Extent]:
        it = iter(dynamic)
        return [
            self.shapes.scalar(next(it)) if s == DYNAMIC_INDEX else Const(s) for s in static
        ]

    def _reinterpret(self, source: SSAValue, result: SSAValue, layout: Layout) -> SSAValue:
        t = result.type
        assert isinstance(t, TensorType)
        shape = self.local_static_shape(t)
        strides = [self.shapes.canonical(s) for s in layout.strides]
        offset = self.shapes.canonical(layout.offset)
        mixed_sizes = [e if e != DYNAMIC_INDEX else self.sizes.value(x) for e, x in zip(shape, layout.sizes)]
        mixed_strides = [s.value if isinstance(s, Const) else self.sizes.value(s) for s in strides]
        mixed_offset = [offset.value if isinstance(offset, Const) else self.sizes.value(offset)]
        layout_attr = StridedLayoutAttr(
            [s.value if isinstance(s, Const) else None for s in strides],
            offset.value if isinstance(offset, Const) else None,
        )
        result_type = alloc.memref_type(t.element_type, tuple(shape), layout_attr)
        op = memref.ReinterpretCastOp.from_dynamic(source, mixed_offset, mixed_sizes, mixed_strides, result_type)
        op.result.name_hint = result.name_hint
        self.body_ops.append(op)
        return op.result


def _allocates_results(seg: fusion.SegmentOp) -> bool:
    """Whether an `aten` segment's call makes its results itself (no `out=` overload)."""
    return any(isinstance(op, fusion.AtenOp) and op.out is None for op in seg.body.block.ops)


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _fail(op: Operation, message: str) -> PassFailedException:
    """The pass's error about `op`: `file:line:col: error: <op>: fusion-allocate: ...`
    where the op came from parsed text, `fusion-allocate: ...` otherwise."""
    if op in SOURCE_SPANS:
        return PassFailedException(located_message(op, f"fusion-allocate: {message.removeprefix(op.name + ': ')}"))
    return PassFailedException(f"fusion-allocate: {message}")


def _verify_signature(f: func.FuncOp) -> None:
    """Argument and result tensor types whose extents can exist (`fusion.verify_signature`)."""
    try:
        fusion.verify_signature(f)
    except VerifyException as e:
        raise _fail(f, str(e)) from None


def value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"


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
