"""Reductions, scans, sorts and contractions of `alloc-to-mlir`'s kernel lowering, pulled.

Each is a loop (`scf.for` with `iter_args`) over the reduced positions, placed where the
indices it reads at live (`mlir_loops`), accumulating in the type the dialect specifies:
f32 for f16 and bf16, i64 for integers and bools, the float result type where one is
declared. Float sums are compensated (Kahan) in that type. `ReductionRules` is a part
of `mlir_kernel.KernelEmitter`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mmath
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import Attribute, Operation, SSAValue

from allotment.dialects import fusion
from allotment.dialects.fusion_rules import normalize_dims
from allotment.passes import mlir_scalar as sc
from allotment.passes.mlir_loops import ints


class ReductionRules:
    """Element rules for reductions, scans, sorts, matmul and linear (mixed into KernelEmitter)."""

    def _over(
        self, x: SSAValue, outer: dict[int, SSAValue], dims: Sequence[int], inits: Sequence[SSAValue],
        step: Callable[[SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
    ) -> Sequence[SSAValue]:
        """Folds `step(element, carried)` over the `dims` of `x` (the other dims at `outer`)."""
        rank = len(x.type.get_shape())

        def nest(k: int, fixed: dict[int, SSAValue], carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
            if k == len(dims):
                return step(self.elem(x, [fixed[d] for d in range(rank)]), carried)
            d = dims[k]
            if x.type.get_shape()[d] == 1:
                return nest(k + 1, {**fixed, d: self.index(0)}, carried)
            return self.loop(self.extent(x, d), carried, lambda i, c: nest(k + 1, {**fixed, d: i}, c),
                             uses=list(fixed.values()))

        return nest(0, dict(outer), inits)

    def _sum(self, x: SSAValue, outer: dict[int, SSAValue], dims: Sequence[int], t: Attribute,
             term: Callable[[SSAValue], SSAValue]) -> SSAValue:
        """The float sum of `term(element)` over `dims`, in type `t`, compensated (Kahan): the
        accumulation type stays the dialect's, the error no longer grows with the row
        (torch's pairwise sums are that close too). The compensation restarts at 0 once the
        sum is infinite or NaN, so infinities sum as they do without it."""
        zero = sc.constant(self.emit, 0.0, t)
        inf = sc.constant(self.emit, float("inf"), t)

        def step(e: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            total, comp = c
            y = self.emit(arith.SubfOp(term(e), comp)).results[0]
            nxt = self.emit(arith.AddfOp(total, y)).results[0]
            lost = self.emit(arith.SubfOp(self.emit(arith.SubfOp(nxt, total)).results[0], y)).results[0]
            finite = self.emit(arith.CmpfOp(self.emit(mmath.AbsFOp(nxt)).results[0], inf, "olt")).results[0]
            return [nxt, self.emit(arith.SelectOp(finite, lost, zero)).results[0]]

        total, _ = self._over(x, outer, dims, [zero, zero], step)
        return total

    def _outer(self, op: Operation, idx: list[SSAValue]) -> tuple[dict[int, SSAValue], list[int]]:
        rank = len(op.input.type.get_shape())
        dims = normalize_dims(ints(op.dims), rank)
        keep = self._reduction_input_dims(op)
        outer = {k: i for k, i in zip(keep, idx) if k not in dims}
        return outer, dims

    def _count(self, x: SSAValue, dims: Sequence[int], t: Attribute) -> SSAValue:
        n = self.index(1)
        for d in dims:
            n = self.ix("mul", n, self.extent(x, d))
        return sc.convert(self.emit, sc.convert(self.emit, n, i64), t)

    def _reduce(self, op: Operation, idx: list[SSAValue]) -> SSAValue:
        et = op.result.type.element_type
        in_t = op.input.type.element_type
        outer, dims = self._outer(op, idx)
        if isinstance(op, (fusion.SumOp, fusion.ProdOp, fusion.MeanOp)):
            acc_t = sc.compute_type(et) if sc.is_float(et) else i64
            is_sum = not isinstance(op, fusion.ProdOp)
            init = sc.constant(self.emit, 0 if is_sum else 1, acc_t)
            fl = sc.is_float(acc_t)
            cls = (arith.AddfOp if fl else arith.AddiOp) if is_sum else (arith.MulfOp if fl else arith.MuliOp)

            if fl and is_sum:
                acc = self._sum(op.input, outer, dims, acc_t, lambda x: sc.convert(self.emit, x, acc_t))
            else:
                def step(x: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    return [self.emit(cls(c[0], sc.convert(self.emit, x, acc_t))).results[0]]

                (acc,) = self._over(op.input, outer, dims, [init], step)
            if isinstance(op, fusion.MeanOp):
                acc = self.emit(arith.DivfOp(acc, self._count(op.input, dims, acc_t))).results[0]
            return sc.convert(self.emit, acc, et)
        ct = sc.compute_type(in_t)
        init = sc.lowest(self.emit, ct) if isinstance(op, fusion.MaxOp) else sc.highest(self.emit, ct)
        fn = sc.BINARY[fusion.MaximumOp if isinstance(op, fusion.MaxOp) else fusion.MinimumOp]
        (acc,) = self._over(op.input, outer, dims, [init],
                            lambda x, c: [fn(self.emit, c[0], sc.convert(self.emit, x, ct))])
        return sc.convert(self.emit, acc, et)

    def _moments(self, op: Operation, v: SSAValue, idx: list[SSAValue]) -> SSAValue:
        """var_mean and welford: the mean, then the squared deviations (two passes)."""
        outer, dims = self._outer(op, idx)
        t = sc.compute_type(op.input.type.element_type)
        zero = sc.constant(self.emit, 0.0, t)
        total = self._sum(op.input, outer, dims, t, lambda x: sc.convert(self.emit, x, t))
        n = self._count(op.input, dims, t)
        mean = self.emit(arith.DivfOp(total, n)).results[0]

        def dev(x: SSAValue) -> SSAValue:
            d = self.emit(arith.SubfOp(sc.convert(self.emit, x, t), mean)).results[0]
            return self.emit(arith.MulfOp(d, d)).results[0]

        m2 = self._sum(op.input, outer, dims, t, dev)
        key = tuple(idx)
        if isinstance(op, fusion.VarMeanOp):
            corr = sc.constant(self.emit, float(op.correction.value.data), t)
            denom = self.emit(arith.MaximumfOp(self.emit(arith.SubfOp(n, corr)).results[0], zero)).results[0]
            var = self.emit(arith.DivfOp(m2, denom)).results[0]
            values = [var, mean]
        else:
            count = sc.convert(self.emit, self._count(op.input, dims, t), i64)
            values = [mean, m2, count]
        outs = [sc.convert(self.emit, x, r.type.element_type) for x, r in zip(values, op.results)]
        for r, x in zip(op.results, outs):
            self._store((r, key), x)
        return outs[v.index]

    def _dot(self, a: SSAValue, b: SSAValue, a_idx: Callable[[SSAValue], list[SSAValue]],
             b_idx: Callable[[SSAValue], list[SSAValue]], k_extent: SSAValue, et: Attribute,
             uses: Sequence[SSAValue]) -> SSAValue:
        t = sc.compute_type(et)

        def step(k: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            x = sc.convert(self.emit, self.elem(a, a_idx(k)), t)
            y = sc.convert(self.emit, self.elem(b, b_idx(k)), t)
            return [self.emit(arith.AddfOp(c[0], self.emit(arith.MulfOp(x, y)).results[0])).results[0]]

        (acc,) = self.loop(k_extent, [sc.constant(self.emit, 0.0, t)], step, uses=uses)
        return acc

    def _matmul(self, op: fusion.MatmulOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        a, b = op.lhs.type.get_shape(), op.rhs.type.get_shape()
        k_extent = self.extent(op.lhs, len(a) - 1)
        if len(a) == 1 and len(b) == 1:
            acc = self._dot(op.lhs, op.rhs, lambda k: [k], lambda k: [k], k_extent, et, idx)
        elif len(b) == 1:
            acc = self._dot(op.lhs, op.rhs, lambda k: [*idx, k], lambda k: [k], k_extent, et, idx)
        elif len(a) == 1:
            batch, j = idx[:-1], idx[-1]
            acc = self._dot(op.lhs, op.rhs, lambda k: [k], lambda k: [*self._batch(b, batch), k, j], k_extent, et, idx)
        else:
            batch, i, j = idx[:-2], idx[-2], idx[-1]
            acc = self._dot(op.lhs, op.rhs, lambda k: [*self._batch(a, batch), i, k],
                            lambda k: [*self._batch(b, batch), k, j], k_extent, et, idx)
        return sc.convert(self.emit, acc, et)

    def _batch(self, shape: Sequence[int], batch: list[SSAValue]) -> list[SSAValue]:
        n = len(shape) - 2
        mine = batch[len(batch) - n:] if n else []
        return [self.index(0) if e == 1 else i for e, i in zip(shape[:n], mine)]

    def _linear(self, op: fusion.LinearOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        xs, ws = op.input.type.get_shape(), op.weight.type.get_shape()
        k_extent = self.extent(op.input, len(xs) - 1)
        if len(ws) == 2:
            rows, j = idx[:-1], idx[-1]
            acc = self._dot(op.input, op.weight, lambda k: [*rows, k], lambda k: [j, k], k_extent, et, idx)
            bias_idx = [j]
        else:
            acc = self._dot(op.input, op.weight, lambda k: [*idx, k], lambda k: [k], k_extent, et, idx)
            bias_idx = []
        if op.bias is not None:
            t = sc.compute_type(et)
            acc = self.emit(arith.AddfOp(acc, sc.convert(self.emit, self.elem(op.bias, bias_idx), t))).results[0]
        return sc.convert(self.emit, acc, et)

    def _scan(self, op: fusion.AccumulatingScanOp, idx: list[SSAValue], et: Attribute) -> SSAValue:
        """Inclusive running sum or product: a loop over the scanned dim up to this element."""
        d = op.scan_dim()
        acc_t = sc.compute_type(et) if sc.is_float(et) else i64
        is_sum = isinstance(op, fusion.CumsumOp)
        fl = sc.is_float(acc_t)
        cls = (arith.AddfOp if fl else arith.AddiOp) if is_sum else (arith.MulfOp if fl else arith.MuliOp)
        init = sc.constant(self.emit, 0 if is_sum else 1, acc_t)

        def step(k: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            inner = [*idx]
            inner[d] = k
            return [self.emit(cls(c[0], sc.convert(self.emit, self.elem(op.input, inner), acc_t))).results[0]]

        (acc,) = self.loop(self.ix("add", idx[d], self.index(1)), [init], step, uses=idx)
        return sc.convert(self.emit, acc, et)

    def _selecting_scan(self, op: fusion.SelectingScanOp, v: SSAValue, idx: list[SSAValue]) -> SSAValue:
        """cummax/cummin: the running extremum and its last index (NaN wins, as torch on CPU)."""
        d = op.scan_dim()
        t = op.input.type.element_type
        ct = sc.compute_type(t)
        is_max = isinstance(op, fusion.CummaxOp)
        init = sc.lowest(self.emit, ct) if is_max else sc.highest(self.emit, ct)

        def step(k: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            inner = [*idx]
            inner[d] = k
            x = sc.convert(self.emit, self.elem(op.input, inner), ct)
            best, where = c
            if sc.is_float(ct):
                take = self.emit(arith.CmpfOp(x, best, "oge" if is_max else "ole")).results[0]
                x_nan = self.emit(arith.CmpfOp(x, x, "uno")).results[0]
                best_nan = self.emit(arith.CmpfOp(best, best, "uno")).results[0]
                not_best_nan = self.emit(arith.XOrIOp(best_nan, self.true())).results[0]
                take = self.emit(arith.OrIOp(x_nan, self.emit(arith.AndIOp(take, not_best_nan)).results[0])).results[0]
            else:
                take = self.emit(arith.CmpiOp(x, best, "sge" if is_max else "sle")).results[0]
            k64 = sc.convert(self.emit, k, i64)
            return [self.emit(arith.SelectOp(take, x, best)).results[0],
                    self.emit(arith.SelectOp(take, k64, where)).results[0]]

        best, where = self.loop(self.ix("add", idx[d], self.index(1)), [init, sc.constant(self.emit, 0, i64)],
                                step, uses=idx)
        outs = [sc.convert(self.emit, best, t), where]
        key = tuple(idx)
        for r, x in zip(op.results, outs):
            self._store((r, key), x)
        return outs[v.index]

    def _sorted(self, op: fusion.SortOp, v: SSAValue, idx: list[SSAValue]) -> SSAValue:
        """argsort and topk, pulled: the element at sorted position p of its row is the one
        whose rank (how many elements of the row sort before it) is p. The order is the
        dialect's: total, NaN above every number (NaNs equal), -0.0 == 0.0, stable (equal
        elements keep their order, descending too)."""
        d = op.sort_dim()
        x = op.input
        n = self.extent(x, d)
        t = sc.compute_type(x.type.element_type)
        descending = (op.descending is not None) if isinstance(op, fusion.ArgsortOp) else op.largest is not None

        def at(k: SSAValue) -> SSAValue:
            inner = [*idx]
            inner[d] = k
            return sc.convert(self.emit, self.elem(x, inner), t)

        def less(a: SSAValue, b: SSAValue) -> SSAValue:
            if not sc.is_float(t):
                return self.emit(arith.CmpiOp(a, b, "ult" if t == i1 else "slt")).results[0]
            lt = self.emit(arith.CmpfOp(a, b, "olt")).results[0]
            a_num = self.emit(arith.CmpfOp(a, a, "ord")).results[0]
            b_nan = self.emit(arith.CmpfOp(b, b, "uno")).results[0]
            return self.emit(arith.OrIOp(lt, self.emit(arith.AndIOp(a_num, b_nan)).results[0])).results[0]

        def equal(a: SSAValue, b: SSAValue) -> SSAValue:
            if not sc.is_float(t):
                return self.emit(arith.CmpiOp(a, b, "eq")).results[0]
            eq = self.emit(arith.CmpfOp(a, b, "oeq")).results[0]
            both_nan = self.emit(arith.AndIOp(self.emit(arith.CmpfOp(a, a, "uno")).results[0],
                                              self.emit(arith.CmpfOp(b, b, "uno")).results[0])).results[0]
            return self.emit(arith.OrIOp(eq, both_nan)).results[0]

        def rank(j: SSAValue) -> SSAValue:
            xj = at(j)

            def step(i: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
                xi = at(i)
                first = less(xj, xi) if descending else less(xi, xj)
                tie = self.emit(arith.AndIOp(equal(xi, xj), self.cmp("slt", i, j))).results[0]
                before = self.emit(arith.OrIOp(first, tie)).results[0]
                return [self.emit(arith.SelectOp(before, self.ix("add", c[0], self.index(1)), c[0])).results[0]]

            (r,) = self.loop(n, [self.index(0)], step, uses=[*idx, j])
            return r

        def find(j: SSAValue, c: Sequence[SSAValue]) -> Sequence[SSAValue]:
            hit = self.cmp("eq", rank(j), idx[d])
            return [self.emit(arith.SelectOp(hit, j, c[0])).results[0]]

        (where,) = self.loop(n, [self.index(0)], find, uses=idx)
        index = sc.convert(self.emit, where, i64)
        key = tuple(idx)
        if isinstance(op, fusion.ArgsortOp):
            return index
        inner = [*idx]
        inner[d] = where
        outs = [self.elem(x, inner), index]
        for r, value in zip(op.results, outs):
            self._store((r, key), value)
        return outs[v.index]

    def _reduction_input_dims(self, op: Operation) -> list[int]:
        """For each result dim of a reduction, the input dim it is."""
        rank = len(op.input.type.get_shape())
        dims = set(normalize_dims(ints(op.dims), rank))
        if op.keepdim is not None:
            return list(range(rank))
        return [d for d in range(rank) if d not in dims]

    def _matmul_extent(self, op: fusion.MatmulOp, d: int) -> SSAValue:
        a, b = op.lhs.type.get_shape(), op.rhs.type.get_shape()
        rank = len(op.result.type.get_shape())
        if len(b) == 1:
            return self.extent(op.lhs, d)
        if len(a) == 1:
            return self.extent(op.rhs, d if d < rank - 1 else len(b) - 1)
        if d == rank - 1:
            return self.extent(op.rhs, len(b) - 1)
        if d == rank - 2:
            return self.extent(op.lhs, len(a) - 2)
        for x, s in ((op.lhs, a), (op.rhs, b)):
            k = d - (rank - len(s))
            if k >= 0 and s[k] != 1:
                return self.extent(x, k)
        return self.index(1)
