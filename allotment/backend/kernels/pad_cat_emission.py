"""Pads and cats, mixed into `emitter.Emitter`: a value read at shifted indices under an
in-range condition (`guarded`: the loads of a pad's input or of a cat's piece are masked
by it, in a scope of their own), and the `tl.where` that picks the input, the padding
value or the piece. Uses the host emitter's `value`, `scalar`, `fresh`, `line`, `to`,
`axes_of`, `kernel_extent`, `launcher_value`, `guards`, `scopes` and `block`."""

from __future__ import annotations

from xdsl.ir import SSAValue

from allotment.backend.kernel_plan import Map, add_shift, index_expr, pad_width, shifted
from allotment.backend.kernels.elementwise_emission import compute_dtype
from allotment.dialects import fusion
from allotment.dtypes import triton_dtype
from allotment.extents.dims import normalize_dim


class PadCatEmission:
    """The pads and cats of `Emitter.compute`, with the guarded reads they make."""

    def inside(self, entry: tuple | None, extent: str) -> str:
        """The condition that the index of `entry` lies in [0, extent)."""
        idx = index_expr(entry)
        return f"(({idx}) >= 0) & (({idx}) < {extent})"

    def guarded(self, v: SSAValue, m: Map, cond: str, axes: frozenset[str]) -> tuple[str, frozenset[str]]:
        """v at m where `cond` holds: its loads are masked by `cond` (outside it the indices of
        a pad's input or a cat's piece lie outside that tensor), in a scope of its own."""
        self.guards.append((cond, axes))
        self.scopes.append({})
        try:
            return self.value(v, m)
        finally:
            self.scopes.pop()
            self.guards.pop()

    def pad(self, op: fusion.PadOp, m: Map) -> tuple[str, frozenset[str]]:
        """The input where the index is inside it (its loads masked there), else the padding value."""
        args = list(self.block.args)
        lows: list[object] = []
        highs: list[object] = []
        for j in range(len(m)):  # widths from values are kernel arguments (negative ones crop)
            for which, out in (("low", lows), ("high", highs)):
                w = self.launcher_value(pad_width(op, which, j, args))
                out.append(int(w) if w.lstrip("-").isdigit() else w)
        src_map = tuple(shifted(entry, lo) for entry, lo in zip(m, lows))
        padded = [j for j, (lo, hi) in enumerate(zip(lows, highs)) if lo or hi]
        conds = [self.inside(src_map[j], self.kernel_extent(op.input, j)) for j in padded]
        cond = " & ".join(conds) or "True"
        guard_axes = self.axes_of(tuple(src_map[j] for j in padded))
        x, axes = self.guarded(op.input, src_map, cond, guard_axes) if conds else self.value(op.input, src_map)
        rt = op.result.type.element_type
        name = self.fresh()
        # the where is taken in the compute type (Triton 3.6's interpreter has no bf16 scalars)
        ct = compute_dtype(rt)
        padded = f"tl.where({cond}, ({x}).to({ct}), ({self.scalar(op.value)}))"
        self.line(f"{name} = {self.to(padded, triton_dtype(rt))}")
        return name, self.axes_of(m) | axes

    def cat(self, op: fusion.CatOp, m: Map) -> tuple[str, frozenset[str]]:
        """Each piece where the index along the cat dim falls in it (its loads masked there).
        A constant index along the cat dim (entry None: index 0, as where a slice of extent 1
        reads the cat) picks its piece by a condition on constants."""
        rank = len(op.result.type.get_shape())
        dim = op.dim.value.data
        dim = normalize_dim(dim, rank)
        entry = m[dim]
        axes = self.axes_of(m)
        pieces = []
        offset: object = 0
        for operand in op.inputs:
            src_map = tuple(shifted(e, offset) if k == dim else e for k, e in enumerate(m))
            extent = self.kernel_extent(operand, dim)
            cond = self.inside(src_map[dim], extent)
            x, a = self.guarded(operand, src_map, cond, self.axes_of((entry,)))
            axes |= a
            pieces.append((cond, x))
            offset = add_shift(offset, int(extent) if extent.isdigit() else extent)
        name = self.fresh()
        expr = pieces[-1][1]
        for cond, x in reversed(pieces[:-1]):
            expr = f"tl.where({cond}, {x}, {expr})"
        self.line(f"{name} = {expr}")
        return name, axes
