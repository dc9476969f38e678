"""Extents of a kernel's values as `index` values, for `alloc-to-mlir`'s kernel lowering.

The extent of a tensor value of a kernel body is a static constant, a `memref.dim` of
the buffer an `in` reads, or computed from its op's operands and size operands by the
op's shape rule (a broadcast's or full's declared sizes, a reshape's inferred `-1`, a
slice's clamped length as torch computes it, a pad's widths around its input, a cat's
sum). Dynamic extents are computed once, outside every loop (they depend on sizes
only). `ExtentRules` is a part of `mlir_kernel.KernelEmitter`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from allotment.dialects import fusion
from allotment.dialects.fusion_rules import normalize_dims
from allotment.passes.mlir_errors import refuse
from allotment.passes.mlir_loops import ints as _ints


class ExtentRules:
    """Extents of tensor values and the shape rules of views (mixed into KernelEmitter)."""

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
