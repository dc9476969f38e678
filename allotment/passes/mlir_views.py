"""Index maps of the reshaping views for `alloc-to-mlir`'s kernel lowering.

A reshape re-linearizes its result's index into its input's (unless the shapes are
the same); a pad reads its input only where the index lies inside it, under `scf.if`,
and its value elsewhere; a cat reads the input whose range holds the index, one
guard per input. `ViewRules` is a part of `mlir_kernel.KernelEmitter`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Attribute, SSAValue

from allotment.dialects import fusion
from allotment.passes import mlir_scalar as sc
from allotment.passes.mlir_loops import ints as _ints


class ViewRules:
    """Element rules of reshape, pad and cat (mixed into KernelEmitter)."""

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
