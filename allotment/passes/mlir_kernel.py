"""One `alloc.kernel` as upstream loops: the kernel lowering of `alloc-to-mlir`.

A kernel is lowered inline, where it stands in its function: for each group of
outputs of one shape, a nest of `scf.for` loops over the output's extents (the
kernel's iteration domain; a static extent 1 takes no loop). The innermost body
computes one element of every output of the group and `memref.store`s it.

Elements are pulled: the element of a value at an index is computed from its
operands' elements at the indices the op maps it to (a broadcast reads index 0,
a permute permutes, a slice scales and shifts, a reshape re-linearizes, a pad
or cat reads its operand only where it lies inside, under `scf.if`). Each
reduction is its own `scf.for` nest with `iter_args`, accumulating in the type
the dialect specifies (f32 for f16 and bf16, i64 for integers and bools, the
float result type where one is declared). Nothing is allocated: a kernel's
intermediate tensors are scalars in registers.

Every op is placed in the outermost loop that defines its operands (the
emitter tracks, for each SSA value, the loop depth it lives at), so a row's
statistics are computed once per row, before the loop over the row's elements
writes anything: a kernel whose output overwrites one of its inputs (an
in-place output, `alloc-alias`) reads every element of a row before it writes
it, as the Triton kernels do. Output groups that write one of the kernel's
inputs come last. Values read under a guard (`scf.if`) stay inside it.

`memory = local` and `shared` buffers that the plan declares in a kernel become
`memref.alloca`s of the plan's sizes (the loops keep rows in registers and do
not need them; they are kept so that the plan's on-chip sizes stay visible).
A library kernel that is one f32 2-D matmul of two of its inputs becomes
`linalg.fill` + `linalg.matmul` on the buffers; other matmuls and linears (batches,
16-bit types, bias) are loop nests accumulating in f32.

The parts: `mlir_loops` places ops (the loop nest and the depth of each value),
`mlir_extents` computes extents, `mlir_scalar` and `mlir_special` compute
elementwise ops on scalars and `mlir_elementwise` the ones that take more than an
op, `mlir_views` maps the indices of reshape, pad and cat, `mlir_reductions` and
`mlir_indexing` pull reductions, scans, sorts, matmuls, random numbers, gathers and
scatters, `mlir_outputs` writes the outputs (and the allocas and library matmul);
`mlir_errors` holds the error. This module holds the element cache, the dispatch
of each op to its rule, and the grouping of outputs into loop nests.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, TensorType, i1, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from allotment.diagnostics import located_message
from allotment.dialects import alloc, fusion
from allotment.passes import mlir_scalar as sc
from allotment.passes.mlir_elementwise import ElementwiseRules
from allotment.passes.mlir_errors import LoweringError, refuse
from allotment.passes.mlir_extents import ExtentRules
from allotment.passes.mlir_indexing import IndexingRules
from allotment.passes.mlir_loops import LoopNest, Scope
from allotment.passes.mlir_loops import ints as _ints
from allotment.passes.mlir_outputs import OutputLoops
from allotment.passes.mlir_reductions import ReductionRules
from allotment.passes.mlir_special import SPECIAL
from allotment.passes.mlir_views import ViewRules


class KernelEmitter(ExtentRules, ViewRules, ElementwiseRules, OutputLoops, ReductionRules, IndexingRules,
                    LoopNest):
    """Lowers one kernel in place (see the module docstring)."""

    def __init__(self, kernel: alloc.KernelOp):
        block = kernel.parent_block()
        assert block is not None
        LoopNest.__init__(self, block, kernel)
        self.kernel = kernel
        self.cache: dict[tuple, tuple[SSAValue, Scope, int]] = {}
        self.extents: dict[tuple[SSAValue, int], SSAValue] = {}
        self.body = kernel.body.block
        self.args = {a: kernel.ins[i] for i, a in enumerate(self.body.args)}

    def scalar(self, v: SSAValue) -> SSAValue:
        """A non-tensor value the body uses: an in, a value from outside, or a scalar op
        of the body (cloned)."""
        if isinstance(v, BlockArgument):
            return self.args.get(v, v)
        op = v.owner
        if op.parent_op() is not self.kernel and not self._inside(op):
            return v
        key = (v, ())
        hit = self._lookup(key)
        if hit is not None:
            return hit
        if op.regions or op.name.split(".")[0] not in ("arith", "math"):
            raise refuse(op, "a scalar op of the kernel body other than arith or math")
        clone = op.clone_without_regions()
        for i, o in enumerate(op.operands):
            clone.operands[i] = self.scalar(o)
        self.emit(clone)
        for r, c in zip(op.results, clone.results):
            self._store((r, ()), c)
        return clone.results[v.index]

    def _inside(self, op: Operation) -> bool:
        p = op.parent_op()
        while p is not None:
            if p is self.kernel:
                return True
            p = p.parent_op()
        return False

    def _lookup(self, key: tuple) -> SSAValue | None:
        hit = self.cache.get(key)
        if hit is None:
            return None
        value, scope, d = hit
        if d < len(self.scopes) and self.scopes[d] is scope:
            return value
        return None

    def _store(self, key: tuple, value: SSAValue) -> None:
        d = self._depth(value)
        self.cache[key] = (value, self.scopes[d], d)

    def elem(self, v: SSAValue, idx: Sequence[SSAValue]) -> SSAValue:
        """The element of `v` at `idx` (a scalar of v's element type); a scalar `v` is itself."""
        if not isinstance(v.type, TensorType):
            return self.scalar(v)
        key = (v, tuple(idx))
        hit = self._lookup(key)
        if hit is not None:
            return hit
        if isinstance(v, BlockArgument):
            if v not in self.args:
                raise LoweringError(located_message(self.kernel, "a tensor block argument that is not an in"))
            out = self.emit(memref.LoadOp.get(self.args[v], list(idx))).results[0]
        else:
            out = self._elem_op(v, list(idx))
        self._store(key, out)
        return out

    def _elem_op(self, v: SSAValue, idx: list[SSAValue]) -> SSAValue:
        op = v.owner
        assert isinstance(op, Operation)
        et = v.type.element_type
        cls = type(op)
        if op.name in SPECIAL:
            x = self._operand(op.input, idx, v)
            ct = sc.compute_type(et)
            return sc.convert(self.emit, SPECIAL[op.name](self.emit, sc.convert(self.emit, x, ct)), et)
        if cls in sc.UNARY:
            x = self._operand(op.input, idx, v)
            # the compute type is the result's, except for predicates (signbit, logical_not)
            ct = sc.compute_type(et if et != i1 else op.input.type.element_type)
            return sc.convert(self.emit, sc.UNARY[cls](self.emit, sc.convert(self.emit, x, ct)), et)
        if isinstance(op, fusion.NextafterOp):
            return self._nextafter(op, idx, v, et)
        if isinstance(op, fusion.FmaOp):
            return self._fma(op, idx, v, et)
        if isinstance(op, fusion.GcdOp):
            a = sc.convert(self.emit, self._operand(op.lhs, idx, v), et)
            b = sc.convert(self.emit, self._operand(op.rhs, idx, v), et)
            return self._gcd(a, b)
        if cls in sc.BINARY:
            a, b = self._operand(op.lhs, idx, v), self._operand(op.rhs, idx, v)
            ot = sc.binary_operand_type(op, et, [op.lhs.type, op.rhs.type])
            r = sc.BINARY[cls](self.emit, sc.convert(self.emit, a, ot), sc.convert(self.emit, b, ot))
            return sc.convert(self.emit, r, et)
        if isinstance(op, fusion.WhereOp):
            p = sc.convert(self.emit, self._operand(op.pred, idx, v), i1)
            ct = sc.compute_type(et)
            a = sc.convert(self.emit, self._operand(op.on_true, idx, v), ct)
            b = sc.convert(self.emit, self._operand(op.on_false, idx, v), ct)
            return sc.convert(self.emit, self.emit(arith.SelectOp(p, a, b)).results[0], et)
        if isinstance(op, fusion.CastOp):
            x = self.elem(op.input, idx)
            if sc.is_float(x.type) and sc.is_float(et):
                return sc.convert(self.emit, x, et)
            return sc.convert(self.emit, sc.convert(self.emit, x, sc.compute_type(x.type)), et)
        if isinstance(op, fusion.SetOp):
            return self.elem(op.input, idx)
        if isinstance(op, fusion.TriangularOp):
            return self._triangular(op, idx, et)
        if isinstance(op, fusion.FullOp):
            return sc.convert(self.emit, self.scalar(op.value), et)
        if isinstance(op, fusion.IotaOp):
            start = sc.convert(self.emit, self.scalar(op.start), sc.compute_type(et))
            step = sc.convert(self.emit, self.scalar(op.step), sc.compute_type(et))
            i = sc.convert(self.emit, sc.convert(self.emit, idx[0], i64), sc.compute_type(et))
            mul = arith.MulfOp if sc.is_float(et) else arith.MuliOp
            add = arith.AddfOp if sc.is_float(et) else arith.AddiOp
            r = self.emit(add(start, self.emit(mul(i, step)).results[0])).results[0]
            return sc.convert(self.emit, r, et)
        if isinstance(op, (fusion.BroadcastInDimOp,)):
            dims = _ints(op.broadcast_dims)
            shape = op.input.type.get_shape()
            return self.elem(op.input, [self.index(0) if shape[k] == 1 else idx[d] for k, d in enumerate(dims)])
        if isinstance(op, fusion.ExpandOp):
            shape = op.input.type.get_shape()
            return self.elem(op.input, [self.index(0) if shape[k] == 1 else idx[k] for k in range(len(shape))])
        if isinstance(op, fusion.PermuteOp):
            perm = _ints(op.dims)
            inner: list[SSAValue] = [self.index(0)] * len(perm)
            for i, p in enumerate(perm):
                inner[p] = idx[i]
            return self.elem(op.input, inner)
        if isinstance(op, fusion.SqueezeOp):
            keep = self._squeeze_map(op)
            inner = [self.index(0)] * len(op.input.type.get_shape())
            for i, k in enumerate(keep):
                inner[k] = idx[i]
            return self.elem(op.input, inner)
        if isinstance(op, fusion.ReshapeOp):
            return self.elem(op.input, self._reshape_index(op, idx))
        if isinstance(op, fusion.SliceOp):
            inner = []
            for d, i in enumerate(idx):
                first, _, step = self._slice(op, d)
                inner.append(self.ix("add", first, self.ix("mul", i, step)))
            return self.elem(op.input, inner)
        if isinstance(op, fusion.PadOp):
            return self._pad(op, idx, et)
        if isinstance(op, fusion.CatOp):
            return self._cat(op, idx, et, 0, self.index(0))
        if isinstance(op, (fusion.SumOp, fusion.ProdOp, fusion.MaxOp, fusion.MinOp, fusion.MeanOp)):
            return self._reduce(op, idx)
        if isinstance(op, (fusion.VarMeanOp, fusion.WelfordOp)):
            return self._moments(op, v, idx)
        if isinstance(op, fusion.RandomOp):
            return self._random(op, idx, et)
        if isinstance(op, (fusion.ArgsortOp, fusion.TopkOp)):
            return self._sorted(op, v, idx)
        if isinstance(op, fusion.ScatterOp):
            return self._scatter(op, idx, et)
        if isinstance(op, fusion.IndexPutAccumulateOp):
            return self._index_put(op, idx, et)
        if isinstance(op, fusion.AccumulatingScanOp):
            return self._scan(op, idx, et)
        if isinstance(op, fusion.SelectingScanOp):
            return self._selecting_scan(op, v, idx)
        if isinstance(op, fusion.IndexSelectOp):
            d = op.indexed_dim()
            inner = [*idx]
            inner[d] = self._checked_index(op, self.elem(op.index, [idx[d]]), self.extent(op.input, d))
            return self.elem(op.input, inner)
        if isinstance(op, (fusion.GatherOp, fusion.TakeAlongAxisOp)):
            d = op.indexed_dim()
            inner = [*idx]
            inner[d] = self._checked_index(op, self.elem(op.index, idx), self.extent(op.input, d))
            return self.elem(op.input, inner)
        if isinstance(op, fusion.EmbeddingOp):
            row = self._checked_index(op, self.elem(op.index, idx[:-1]), self.extent(op.weight, 0))
            return self.elem(op.weight, [row, idx[-1]])
        if isinstance(op, fusion.MatmulOp):
            return self._matmul(op, idx, et)
        if isinstance(op, fusion.LinearOp):
            return self._linear(op, idx, et)
        raise refuse(op, "no scalar lowering for this op")

    def lower(self) -> None:
        """Replaces the kernel by its loops (and its on-chip buffers by allocas)."""
        for op in list(self.body.walk()):
            if isinstance(op, alloc.ExtentsOp):  # the loops take their extents from the buffers
                op.detach()
                op.erase()
            elif isinstance(op, alloc.AllocOp):
                self._alloca(op)
            elif not isinstance(op, (fusion.FusionOp, alloc.YieldOp, arith.ConstantOp)) and \
                    op.name.split(".")[0] not in ("arith", "math"):
                raise refuse(op, "not an op of a kernel body")
            elif isinstance(op, fusion.FusionOp) and not _lowerable(op):
                raise refuse(op, "no scalar lowering for this op")
        if self._library_matmul():
            return
        yielded = list(self.body.last_op.values)
        ins_roots = {_root(v) for v in self.kernel.ins if isinstance(v.type, MemRefType)}
        groups: dict[tuple, list[int]] = {}
        for i, out in enumerate(self.kernel.outs):
            in_place = _root(out) in ins_roots
            # in-place outputs of one static shape share one nest (each reads its input
            # elementwise: every element is loaded before any is stored); their dynamic
            # extents are checked equal at run time
            extents = ("in_place",) if in_place else tuple(self._out_extents(i))
            key = (tuple(out.type.get_shape()), extents)
            groups.setdefault(key, []).append(i)
        ordered = sorted(groups.values(), key=lambda g: any(_root(self.kernel.outs[i]) in ins_roots for i in g))
        for group in ordered:
            self._same_extents(group)
            self._store_group(group, yielded)


def _root(v: SSAValue) -> SSAValue:
    while isinstance(v.owner, Operation) and v.owner.name in ("memref.reinterpret_cast", "memref.view",
                                                              "memref.subview", "memref.cast"):
        v = v.owner.operands[0]
    return v


_HANDLED = (
    fusion.NextafterOp, fusion.GcdOp, fusion.FmaOp, fusion.WhereOp, fusion.CastOp, fusion.SetOp, fusion.TriangularOp, fusion.FullOp, fusion.IotaOp,
    fusion.BroadcastInDimOp, fusion.ExpandOp, fusion.PermuteOp, fusion.SqueezeOp, fusion.ReshapeOp,
    fusion.SliceOp, fusion.PadOp, fusion.CatOp, fusion.SumOp, fusion.ProdOp, fusion.MaxOp, fusion.MinOp,
    fusion.MeanOp, fusion.VarMeanOp, fusion.WelfordOp, fusion.MatmulOp, fusion.LinearOp,
    fusion.AccumulatingScanOp, fusion.SelectingScanOp, fusion.RandomOp, fusion.ArgsortOp, fusion.TopkOp, fusion.IndexSelectOp, fusion.GatherOp,
    fusion.TakeAlongAxisOp, fusion.EmbeddingOp, fusion.ScatterOp, fusion.IndexPutAccumulateOp,
)


def _lowerable(op: Operation) -> bool:
    return type(op) in sc.UNARY or type(op) in sc.BINARY or isinstance(op, _HANDLED) or op.name in SPECIAL


def lowerable_op_names() -> list[str]:
    """The fusion ops a kernel body may hold (for the docs' table)."""
    import inspect

    from xdsl.irdl import IRDLOperation

    ops = [c for c in vars(fusion).values() if inspect.isclass(c) and issubclass(c, IRDLOperation)
           and not inspect.isabstract(c) and isinstance(getattr(c, "name", None), str)
           and c.name.startswith("fusion.")]
    return sorted({c.name for c in ops if c in sc.UNARY or c in sc.BINARY or issubclass(c, _HANDLED)
                   or c.name in SPECIAL})
