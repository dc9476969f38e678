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
`mlir_scalar` and `mlir_special` compute elementwise ops on scalars,
`mlir_reductions` and `mlir_indexing` pull reductions, scans, sorts, matmuls,
random numbers, gathers and scatters; this module holds extents, views, the
elementwise dispatch and the kernel's output loops.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, cf, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from allotment.diagnostics import located_message
from allotment.dialects import alloc, fusion
from allotment.dialects.fusion_rules import normalize_dims
from allotment.errors import UnsupportedError
from allotment.passes import mlir_scalar as sc
from allotment.passes.mlir_indexing import IndexingRules
from allotment.passes.mlir_loops import LoopNest, Scope
from allotment.passes.mlir_loops import ints as _ints
from allotment.passes.mlir_reductions import ReductionRules
from allotment.passes.mlir_special import SPECIAL


class LoweringError(UnsupportedError):
    """An op `alloc-to-mlir` cannot lower: the message is located and names the op."""


def refuse(op: Operation, why: str) -> LoweringError:
    return LoweringError(located_message(op, f"alloc-to-mlir cannot lower it: {why}"))



class KernelEmitter(ReductionRules, IndexingRules, LoopNest):
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

    def extent(self, v: SSAValue, d: int) -> SSAValue:
        """Extent `d` of tensor value `v` as an `index` value."""
        t = v.type
        assert isinstance(t, TensorType)
        e = t.get_shape()[d]
        if e != DYNAMIC_INDEX:
            return self.index(e)
        key = (v, d)
        if key not in self.extents:
            floor, self.floor = self.floor, 0  # extents depend on sizes only: outside every loop
            try:
                self.extents[key] = self._extent(v, d)
            finally:
                self.floor = floor
        return self.extents[key]

    def _extent(self, v: SSAValue, d: int) -> SSAValue:
        if isinstance(v, BlockArgument) and v in self.args:
            buf = self.args[v]
            op = memref.DimOp(buf, self.index(d))
            return self.emit(op).results[0]
        op = v.owner
        assert isinstance(op, Operation)
        if isinstance(op, (fusion.ElementwiseOp, fusion.CastOp)):
            for o in op.operands:
                if isinstance(o.type, TensorType) and o.type.get_shape()[d] != 1:
                    return self.extent(o, d)
        if isinstance(op, (fusion.ReductionOp, fusion.VarMeanOp, fusion.WelfordOp)):
            return self.extent(op.input, self._reduction_input_dims(op)[d])
        if isinstance(op, (fusion.BroadcastInDimOp, fusion.ExpandOp)):
            return self._mixed(_ints(op.static_shape), op.shape)[d]
        if isinstance(op, (fusion.FullOp, fusion.RandomOp)):
            return self._mixed(_ints(op.static_sizes), op.sizes)[d]
        if isinstance(op, fusion.IotaOp):
            return self.scalar(op.length[0])
        if isinstance(op, fusion.ReshapeOp):
            return self._reshape_extents(op)[d]
        if isinstance(op, fusion.PermuteOp):
            return self.extent(op.input, _ints(op.dims)[d])
        if isinstance(op, fusion.SqueezeOp):
            return self.extent(op.input, self._squeeze_map(op)[d])
        if isinstance(op, fusion.SliceOp):
            return self._slice(op, d)[1]
        if isinstance(op, fusion.PadOp):
            low, high = op.widths()
            e = self.extent(op.input, d)
            return self.ix("add", self.ix("add", self._width(low[d]), e), self._width(high[d]))
        if isinstance(op, fusion.CatOp):
            if d != self._cat_dim(op):
                for x in op.inputs:
                    if x.type.get_shape()[d] != DYNAMIC_INDEX:
                        return self.extent(x, d)
                return self.extent(op.inputs[0], d)
            total = self.index(0)
            for x in op.inputs:
                total = self.ix("add", total, self.extent(x, d))
            return total
        if isinstance(op, fusion.ScanOp):
            return self.extent(op.input, d)
        if isinstance(op, fusion.TopkOp):
            return self.index(op.k.value.data) if d == op.sort_dim() else self.extent(op.input, d)
        if isinstance(op, fusion.ArgsortOp):
            return self.extent(op.input, d)
        if isinstance(op, fusion.ScatterOp):
            return self.extent(op.input, d)
        if isinstance(op, fusion.IndexPutAccumulateOp):
            return self.extent(op.acc, d)
        if isinstance(op, fusion.IndexSelectOp):
            return self.extent(op.index, 0) if d == op.indexed_dim() else self.extent(op.input, d)
        if isinstance(op, (fusion.GatherOp, fusion.TakeAlongAxisOp)):
            return self.extent(op.index, d)
        if isinstance(op, fusion.EmbeddingOp):
            rank = len(op.index.type.get_shape())
            return self.extent(op.index, d) if d < rank else self.extent(op.weight, 1)
        if isinstance(op, fusion.MatmulOp):
            return self._matmul_extent(op, d)
        if isinstance(op, fusion.LinearOp):
            rank = len(v.type.get_shape())
            w = op.weight.type.get_shape()
            if len(w) == 2 and d == rank - 1:
                return self.extent(op.weight, 0)
            return self.extent(op.input, d)
        raise refuse(op, f"no rule for the extents of {op.name}")

    def _width(self, w: int | SSAValue) -> SSAValue:
        return self.index(w) if isinstance(w, int) else self.scalar(w)

    def _mixed(self, static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[SSAValue]:
        it = iter(dynamic)
        return [self.scalar(next(it)) if s == DYNAMIC_INDEX else self.index(s) for s in static]

    def numel(self, v: SSAValue) -> SSAValue:
        n = self.index(1)
        for d in range(len(v.type.get_shape())):
            n = self.ix("mul", n, self.extent(v, d))
        return n

    def _reshape_extents(self, op: fusion.ReshapeOp) -> list[SSAValue]:
        static = _ints(op.static_shape)
        it = iter(op.shape)
        out: list[SSAValue | None] = []
        for s in static:
            out.append(self.scalar(next(it)) if s == DYNAMIC_INDEX else None if s == -1 else self.index(s))
        if None in out:
            rest = self.index(1)
            for e in out:
                if e is not None:
                    rest = self.ix("mul", rest, e)
            inferred = self.ix("floordiv", self.numel(op.input), self.ix("max", rest, self.index(1)))
            out = [inferred if e is None else e for e in out]
        return [e for e in out if e is not None]

    def _squeeze_map(self, op: fusion.SqueezeOp) -> list[int]:
        rank = len(op.input.type.get_shape())
        gone = set(normalize_dims(_ints(op.dims), rank))
        return [d for d in range(rank) if d not in gone]

    def _cat_dim(self, op: fusion.CatOp) -> int:
        return normalize_dims([op.dim.value.data], len(op.result.type.get_shape()))[0]

    def _slice(self, op: fusion.SliceOp, d: int) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(first input index, extent, step) of dimension d (torch's rule: negative
        bounds count from the end, then both clamp to [0, extent])."""
        n = self.extent(op.input, d)
        bounds = []
        for name in ("start", "stop", "step"):
            bounds.append(self._mixed(_ints(getattr(op, f"static_{name}")), getattr(op, name))[d])
        start, stop, step = bounds
        start, stop = self._clamp_bound(start, n), self._clamp_bound(stop, n)
        length = self.ix("ceildiv", self.ix("max", self.ix("sub", stop, start), self.index(0)), step)
        return start, length, step

    def _clamp_bound(self, b: SSAValue, n: SSAValue) -> SSAValue:
        k = self.known(b)
        if k is not None and k >= 0:
            return self.ix("min", b, n)
        if k is not None:
            shifted = self.ix("add", b, n)
        else:
            neg = self.cmp("slt", b, self.index(0))
            shifted = self.emit(arith.SelectOp(neg, self.ix("add", b, n), b)).results[0]
        return self.ix("min", self.ix("max", shifted, self.index(0)), n)

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

    def _nextafter(self, op: fusion.NextafterOp, idx: list[SSAValue], v: SSAValue, et: Attribute) -> SSAValue:
        """The next value of the result type after a toward b (the Triton kernels' rule)."""
        a = sc.convert(self.emit, self._operand(op.lhs, idx, v), et)
        b = sc.convert(self.emit, self._operand(op.rhs, idx, v), et)
        ct = sc.compute_type(et)
        af, bf = sc.convert(self.emit, a, ct), sc.convert(self.emit, b, ct)
        bits = IntegerType(sc.width(et))
        ia = self.emit(arith.BitcastOp(a, bits)).results[0]
        zero = sc.constant(self.emit, 0.0, ct)
        away = self.emit(arith.XOrIOp(self.emit(arith.CmpfOp(bf, af, "ogt")).results[0],
                                      self.emit(arith.CmpfOp(af, zero, "ogt")).results[0])).results[0]
        away = self.emit(arith.XOrIOp(away, self.true())).results[0]  # (b > a) == (a > 0)
        one = sc.constant(self.emit, 1, bits)
        stepped = self.emit(arith.SelectOp(away, self.emit(arith.AddiOp(ia, one)).results[0],
                                           self.emit(arith.SubiOp(ia, one)).results[0])).results[0]
        # values chosen in the result type itself (its subnormals survive no conversion)
        r = self.emit(arith.BitcastOp(stepped, et)).results[0]
        tiny = self.emit(arith.BitcastOp(one, et)).results[0]
        sign = sc.constant(self.emit, 1 - (1 << (sc.width(et) - 1)), bits)  # the sign bit and 1
        neg_tiny = self.emit(arith.BitcastOp(sign, et)).results[0]
        toward = self.emit(arith.SelectOp(self.emit(arith.CmpfOp(bf, zero, "ogt")).results[0], tiny, neg_tiny)).results[0]
        r = self.emit(arith.SelectOp(self.emit(arith.CmpfOp(af, zero, "oeq")).results[0], toward, r)).results[0]
        r = self.emit(arith.SelectOp(self.emit(arith.CmpfOp(af, bf, "oeq")).results[0], b, r)).results[0]
        nan = self.emit(arith.CmpfOp(af, bf, "uno")).results[0]
        return self.emit(arith.SelectOp(nan, sc.convert(self.emit, self.emit(arith.AddfOp(af, bf)).results[0], et), r)).results[0]

    def _gcd(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Euclid on absolute values, 94 steps (enough for 64 bits), as torch and the kernels."""
        t = a.type
        zero, one, minus = (sc.constant(self.emit, k, t) for k in (0, 1, -1))

        def absolute(x: SSAValue) -> SSAValue:
            neg = self.emit(arith.CmpiOp(x, zero, "slt")).results[0]
            return self.emit(arith.SelectOp(neg, self.emit(arith.SubiOp(zero, x)).results[0], x)).results[0]

        def step(_k: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            x, y = c
            nz = self.emit(arith.CmpiOp(x, zero, "ne")).results[0]
            ok = self.emit(arith.AndIOp(nz, self.emit(arith.CmpiOp(x, minus, "ne")).results[0])).results[0]
            r = self.emit(arith.RemSIOp(y, self.emit(arith.SelectOp(ok, x, one)).results[0])).results[0]
            return [self.emit(arith.SelectOp(nz, r, x)).results[0], self.emit(arith.SelectOp(nz, x, y)).results[0]]

        _, g = self.loop(self.index(94), [absolute(a), absolute(b)], step, uses=[a, b])
        return g

    def _operand(self, x: SSAValue, idx: list[SSAValue], result: SSAValue) -> SSAValue:
        """The element of elementwise operand `x` for result index `idx` (static size-1
        dims broadcast)."""
        if not isinstance(x.type, TensorType):
            return self.scalar(x)
        shape = x.type.get_shape()
        return self.elem(x, [self.index(0) if e == 1 else i for e, i in zip(shape, idx)])

    def _triangular(self, op: fusion.TriangularOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        x = self.elem(op.input, idx)
        rank = len(idx)
        diff = self.ix("sub", idx[rank - 1], idx[rank - 2])
        k = self.index(op.diagonal_value)
        keep = self.cmp("sge" if isinstance(op, fusion.TriuOp) else "sle", diff, k)
        return self.emit(arith.SelectOp(keep, x, sc.constant(self.emit, 0, et))).results[0]

    def _reshape_index(self, op: fusion.ReshapeOp, idx: list[SSAValue]) -> list[SSAValue]:
        out = self._reshape_extents(op)
        in_shape = op.input.type.get_shape()
        rank = len(in_shape)
        if len(out) == rank and all(
            a != DYNAMIC_INDEX and a == self.known(b) for a, b in zip(in_shape, out)
        ):
            return idx
        flat = self.index(0)
        for i, e in zip(idx, out):
            flat = self.ix("add", self.ix("mul", flat, e), i)
        inner: list[SSAValue] = []
        for d in reversed(range(rank)):
            e = self.extent(op.input, d)
            if d == 0:
                inner.append(flat)
            else:
                inner.append(self.ix("rem", flat, e))
                flat = self.ix("floordiv", flat, e)
        return list(reversed(inner))

    def _pad(self, op: fusion.PadOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        low, _ = op.widths()
        inner, inside = [], None
        for d, i in enumerate(idx):
            lo = self._width(low[d])
            j = self.ix("sub", i, lo)
            inner.append(j)
            if self.known(lo) == 0 and op.high is not None and _ints(op.high)[d] == 0:
                continue
            n = self.extent(op.input, d)
            ok = self.both(self.cmp("sge", j, self.index(0)), self.cmp("slt", j, n))
            inside = self.both(inside, ok)
        if inside is None:
            return self.elem(op.input, inner)
        value = sc.convert(self.emit, self.scalar(op.value), et)
        return self.guarded(inside, et, lambda: self.elem(op.input, inner), lambda: value, uses=idx)

    def _cat(self, op: fusion.CatOp, idx: list[SSAValue], et: Attribute, k: int, first: SSAValue) -> SSAValue:
        d = self._cat_dim(op)
        x = op.inputs[k]
        shifted = [*idx]
        shifted[d] = self.ix("sub", idx[d], first)
        if k == len(op.inputs) - 1:
            return self.elem(x, shifted)
        n = self.extent(x, d)
        inside = self.cmp("slt", shifted[d], n)
        nxt = self.ix("add", first, n)
        return self.guarded(inside, et, lambda: self.elem(x, shifted), lambda: self._cat(op, idx, et, k + 1, nxt),
                            uses=idx)

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

    def _out_extents(self, i: int) -> list[SSAValue]:
        out = self.kernel.outs[i]
        ext = []
        for d, e in enumerate(out.type.get_shape()):
            if e != DYNAMIC_INDEX:
                ext.append(self.index(e))
            else:
                key = (out, d)
                if key not in self.extents:
                    self.extents[key] = self.emit(memref.DimOp(out, self.index(d))).results[0]
                ext.append(self.extents[key])
        return ext

    def _same_extents(self, group: list[int]) -> None:
        """`cf.assert`s that the outputs of a group have the first one's extents."""
        first = self._out_extents(group[0])
        for i in group[1:]:
            for d, (a, b) in enumerate(zip(first, self._out_extents(i))):
                if a is not b:
                    same = self.cmp("eq", a, b)
                    self.emit(cf.AssertOp(same, f"kernel {self.kernel.sym_name.data}: in-place outputs "
                                                f"#{group[0]} and #{i} differ in dimension {d}"))

    def _store_group(self, group: list[int], yielded: list[SSAValue]) -> None:
        extents = self._out_extents(group[0])

        def nest(k: int, idx: list[SSAValue]) -> Sequence[SSAValue]:
            if k == len(extents):
                values = [self.elem(yielded[i], idx) for i in group]
                for i, v in zip(group, values):
                    self.emit(memref.StoreOp.get(v, self.kernel.outs[i], list(idx)))
                return []
            if self.known(extents[k]) == 1:
                return nest(k + 1, [*idx, self.index(0)])
            return self.loop(extents[k], [], lambda i, _c: (nest(k + 1, [*idx, i]), [])[1], uses=idx)

        nest(0, [])

    def _alloca(self, op: alloc.AllocOp) -> None:
        t = op.result.type
        new = memref.AllocaOp.create(operands=list(op.sizes), result_types=[t],
                                     properties={"operandSegmentSizes": _segments(len(op.sizes), 0)})
        if op.buffer_name is not None:
            new.memref.name_hint = op.buffer_name.data
        new.attributes["alloc.memory"] = StringAttr(op.memory_space.value)
        self._insert(0, new)

    def _library_matmul(self) -> bool:
        """A library kernel that is one f32 2-D matmul of two ins into a plain out:
        `linalg.fill` 0 + `linalg.matmul` on the buffers."""
        if self.kernel.kind.data != "library":
            return False
        ops = [o for o in self.body.ops if not isinstance(o, alloc.YieldOp)]
        if len(ops) != 1 or not isinstance(ops[0], fusion.MatmulOp) or len(self.kernel.outs) != 1:
            return False
        op = ops[0]
        a, b, out = op.lhs, op.rhs, self.kernel.outs[0]
        if not all(isinstance(x, BlockArgument) and x in self.args for x in (a, b)):
            return False
        bufs = [self.args[a], self.args[b], out]
        if any(len(x.type.get_shape()) != 2 or x.type.element_type != f32 for x in bufs):
            return False
        zero = sc.constant(self.emit, 0.0, f32)
        self._insert(0, linalg.FillOp((zero,), (out,), ()))
        self._insert(0, linalg.MatmulOp((bufs[0], bufs[1]), (out,)))
        return True


def _segments(*sizes: int) -> Attribute:
    from xdsl.dialects.builtin import DenseArrayBase, i32

    return DenseArrayBase.from_list(i32, list(sizes))


def _root(v: SSAValue) -> SSAValue:
    while isinstance(v.owner, Operation) and v.owner.name in ("memref.reinterpret_cast", "memref.view",
                                                              "memref.subview", "memref.cast"):
        v = v.owner.operands[0]
    return v


_HANDLED = (
    fusion.NextafterOp, fusion.GcdOp, fusion.WhereOp, fusion.CastOp, fusion.SetOp, fusion.TriangularOp, fusion.FullOp, fusion.IotaOp,
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
