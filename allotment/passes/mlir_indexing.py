"""Random numbers and indexed reads and writes of `alloc-to-mlir`'s kernel lowering.

`rand`/`randn` run Philox-4x32-10 in `arith` on i64 (the reference's `allotment/philox.py`
is the other half of the contract); gathers assert their indices in range; scatter and
index_put_accumulate are pulled through a loop over the index. `IndexingRules` is a part
of `mlir_kernel.KernelEmitter`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, cf
from xdsl.dialects import math as mmath
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.dialects import fusion
from allotment.passes import mlir_scalar as sc
from allotment.passes.mlir_loops import INDEX


class IndexingRules:
    """Element rules for random numbers, gathers and scatters (mixed into KernelEmitter)."""

    def _i64(self, cls: type[Operation], a: SSAValue, b: SSAValue | int) -> SSAValue:
        if isinstance(b, int):
            b = sc.constant(self.emit, b, i64)
        return self.emit(cls(a, b)).results[0]

    def _random(self, op: fusion.RandomOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        """Philox-4x32-10 on (linear index, offset) with key seed, then the op's mapping to a
        value (`allotment/philox.py` is the reference's half of the same contract)."""
        from allotment import philox

        lin = self.index(0)
        for d, i in enumerate(idx):
            lin = self.ix("add", self.ix("mul", lin, self.extent(op.result, d)), i)
        mask = philox.MASK32
        lin = sc.convert(self.emit, lin, i64)
        seed, offset = self.scalar(op.seed), self.scalar(op.offset)
        c0, c1 = self._i64(arith.AndIOp, lin, mask), self._i64(arith.ShRUIOp, lin, 32)
        c2, c3 = self._i64(arith.AndIOp, offset, mask), self._i64(arith.ShRUIOp, offset, 32)
        k0, k1 = self._i64(arith.AndIOp, seed, mask), self._i64(arith.ShRUIOp, seed, 32)
        for _ in range(10):
            p0 = self._i64(arith.MuliOp, c0, philox.ROUND_A)
            p2 = self._i64(arith.MuliOp, c2, philox.ROUND_B)
            n0 = self._i64(arith.XOrIOp, self._i64(arith.XOrIOp, self._i64(arith.ShRUIOp, p2, 32), c1), k0)
            n2 = self._i64(arith.XOrIOp, self._i64(arith.XOrIOp, self._i64(arith.ShRUIOp, p0, 32), c3), k1)
            c0, c2 = n0, n2
            c1, c3 = self._i64(arith.AndIOp, p2, mask), self._i64(arith.AndIOp, p0, mask)
            k0 = self._i64(arith.AndIOp, self._i64(arith.AddiOp, k0, philox.KEY_A), mask)
            k1 = self._i64(arith.AndIOp, self._i64(arith.AddiOp, k1, philox.KEY_B), mask)
        from xdsl.dialects.builtin import f64

        def f64_of(bits: SSAValue, scale: float) -> SSAValue:
            x = self.emit(arith.SIToFPOp(bits, f64)).results[0]
            return self.emit(arith.MulfOp(x, sc.constant(self.emit, scale, f64))).results[0]

        def bits53(hi: SSAValue, lo: SSAValue) -> SSAValue:
            return self._i64(arith.OrIOp, self._i64(arith.ShLIOp, hi, 21), self._i64(arith.ShRUIOp, lo, 11))

        if isinstance(op, fusion.RandOp):
            if et == f64:
                return f64_of(bits53(c0, c1), 2.0**-53)
            shift, scale = {"f32": (8, 2.0**-24), "f16": (21, 2.0**-11), "bf16": (24, 2.0**-8)}[str(et)]
            value = f64_of(self._i64(arith.ShRUIOp, c0, shift), scale)  # exact in the result type
        else:
            u1 = f64_of(self._i64(arith.AddiOp, bits53(c0, c1), 1), 2.0**-53)
            u2 = f64_of(bits53(c2, c3), 2.0**-53)
            log = self.emit(mmath.LogOp(u1)).results[0]
            r = self.emit(mmath.SqrtOp(self.emit(arith.MulfOp(sc.constant(self.emit, -2.0, f64), log)).results[0])).results[0]
            angle = self.emit(arith.MulfOp(sc.constant(self.emit, philox.TWO_PI, f64), u2)).results[0]
            value = self.emit(arith.MulfOp(r, self.emit(mmath.CosOp(angle)).results[0])).results[0]
            if et == f64:
                return value
        return sc.convert(self.emit, sc.convert(self.emit, value, f32), et)

    def _scatter(self, op: fusion.ScatterOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        """Pulled: the last source element whose index names this element, else the input's.
        Only positions inside the index's extents (other than `dim`) can be written."""
        d = op.indexed_dim()
        inside: SSAValue | None = None
        for k, i in enumerate(idx):
            if k != d:
                inside = self.both(inside, self.cmp("slt", i, self.extent(op.index, k)))

        def written() -> SSAValue:
            def step(j: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
                q = [*idx]
                q[d] = j
                hit = self.cmp("eq", sc.convert(self.emit, self.elem(op.index, q), INDEX), idx[d])
                return [self.emit(arith.SelectOp(hit, self.elem(op.src, q), c[0])).results[0]]

            (v,) = self.loop(self.extent(op.index, d), [self.elem(op.input, idx)], step, uses=idx)
            return v

        if inside is None:
            return written()
        return self.guarded(inside, et, written, lambda: self.elem(op.input, idx), uses=idx)

    def _index_put(self, op: fusion.IndexPutAccumulateOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        """Pulled: the accumulator's element plus every value row whose index names its row."""
        ct = sc.compute_type(et)
        add = arith.AddfOp if sc.is_float(ct) else arith.AddiOp

        def step(i: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            hit = self.cmp("eq", sc.convert(self.emit, self.elem(op.index, [i]), INDEX), idx[0])
            v = sc.convert(self.emit, self.elem(op.value, [i, *idx[1:]]), ct)
            return [self.emit(arith.SelectOp(hit, self.emit(add(c[0], v)).results[0], c[0])).results[0]]

        init = sc.convert(self.emit, self.elem(op.acc, idx), ct)
        (total,) = self.loop(self.extent(op.index, 0), [init], step, uses=idx)
        return sc.convert(self.emit, total, et)

    def _checked_index(self, op: Operation, j: SSAValue, n: SSAValue) -> SSAValue:
        """An index element as an `index`, asserted in [0, n) (as torch.gather): the kernel
        stops with the op's message where the host program and the reference raise."""
        k = sc.convert(self.emit, j, INDEX)
        inside = self.both(self.cmp("sge", k, self.index(0)), self.cmp("slt", k, n))
        self.emit(cf.AssertOp(inside, f"{op.name}: an index is out of range"))
        return k
