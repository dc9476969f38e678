"""The legality rules of `fusion-segment`'s grouping (`passes/fusion_segment.py`): whether an
op may join a group (one iteration domain, one set of reduced dims, rows along one dim,
no cycle between groups), whether two groups may merge, which views can be index
arithmetic in their consumer, and which groups make an inner-outer kernel
(`analysis/inner_outer.py`). The rules only ask; the walk that applies them is
`fusion_segment._Grouping`."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Operation, SSAValue

from allotment.analysis import inner_outer
from allotment.analysis.capacity import Capacity
from allotment.analysis.shapes import ShapeAnalysis
from allotment.dialects import fusion
from allotment.extents.symbolic import Const, Extent
from allotment.passes.segment_groups import GATHERS, INDEXING, REDUCTIONS, SCANS, VIEWS, Group, GroupTable


class GroupRules(GroupTable):
    """What may join what, over the grouping state of `GroupTable`."""

    def __init__(self, f: func.FuncOp, shapes: ShapeAnalysis) -> None:
        super().__init__(f, shapes)
        body = f.body.block.ops if f.body.blocks else ()
        self.scatters = any(isinstance(op, fusion.INDEXING_SCATTERS) for op in body)
        self.indexing = any(isinstance(op, INDEXING) for op in body)
        """Whether the function has scatters (`_closed`) or indexing ops (`_indexes_into`) at
        all: without them neither needs to look at a group's ops (a linear walk, not a
        quadratic one, on a chain of 10,000 pointwise ops)."""

    def _reduced_shapes(self, g: Group) -> tuple[tuple[Extent, ...], tuple[Extent, ...]]:
        assert g.rdims is not None
        keep = tuple(Const(1) if d in g.rdims else self.shapes.canonical(e) for d, e in enumerate(g.domain))
        drop = tuple(e for d, e in enumerate(g.domain) if d not in g.rdims)
        return keep, drop

    def _is_suffix(self, rdims: tuple[int, ...], rank: int) -> bool:
        return tuple(sorted(rdims)) == tuple(range(rank - len(rdims), rank))

    def _uses_reduced(self, g: Group, op: Operation) -> bool:
        return any(v in g.reduced for v in op.operands)

    def _scan_fits(self, g: Group, op: Operation) -> bool:
        """A scan joins a group that reduces nothing and scans (if at all) along its dim; a
        reduction never joins a group that scans (a kernel's rows run along one dim)."""
        if isinstance(op, SCANS):
            return g.rdims is None and g.scan_dim in (None, op.scan_dim())
        if isinstance(op, REDUCTIONS):
            return g.scan_dim is None
        return True

    def _fits(self, g: Group, op: Operation) -> bool:
        if g.kind != "compute" or self._closed(g) or not self._scan_fits(g, op):
            return False
        domain = tuple(self.shapes.canonical(e) for e in g.domain)
        if isinstance(op, REDUCTIONS):
            rdims = op.reduced_dims()
            if self._shape(op.operands[0]) != domain:
                return False
            if g.rdims is not None and tuple(sorted(rdims)) != tuple(sorted(g.rdims)):
                return False
            if self._uses_reduced(g, op) and not self._is_suffix(rdims, len(domain)):
                return False
            return True
        shape = self._shape(op.results[0])
        if g.rdims is None:
            return shape == domain
        if shape == domain:
            return not self._uses_reduced(g, op) or self._is_suffix(g.rdims, len(domain))
        keep, drop = self._reduced_shapes(g)
        return shape in (keep, drop)

    def _keeps_rows(self, g: Group, op: Operation) -> bool:
        """Whether a broadcast view of a reduced-shape value of g puts its dims back on g's
        outer dims: a kernel has each row's reduced values only, not those of other rows."""
        if g.rdims is None or not isinstance(op, fusion.BroadcastInDimOp):
            return True
        shape = self._shape(op.operands[0])
        keep, drop = self._reduced_shapes(g)
        dims = list(op.broadcast_dims.get_values())
        if shape == drop:
            return dims == [d for d in range(len(g.domain)) if d not in g.rdims]
        if shape == keep:
            return dims == list(range(len(shape)))
        return True

    def _acyclic(self, g: Group, op: Operation) -> bool:
        return all(h is g or not self._depends_on(h, g) for h in self._operand_groups(op))

    def _closed(self, g: Group) -> bool:
        """A scatter's group: nothing joins it and it joins nothing (its result is complete
        only once its kernel has run)."""
        return self.scatters and any(isinstance(op, fusion.INDEXING_SCATTERS) for op in g.ops)

    def _indexes_into(self, g: Group, h: Group) -> bool:
        """Whether an indexing op of g reads a value of h as its source or index: h must stay
        another kernel (a buffer), so the two never merge."""
        return self.indexing and any(isinstance(op, INDEXING) and any(self.owner.get(v) is h for v in op.operands)
                                     for op in g.ops)

    def _separate(self, g: Group, h: Group) -> bool:
        """Whether g and h must stay apart (`_closed`, `_indexes_into`)."""
        return self._closed(g) or self._closed(h) or self._indexes_into(g, h) or self._indexes_into(h, g)

    def _on_reduced_domain(self, g: Group, h: Group) -> bool:
        """Whether h is pointwise work over g's reduced domain (RMSNorm backward's rstd**2 next
        to the row sum it scales): it can join g, as the ops after g's reductions do."""
        if g.rdims is None or h.rdims is not None or h.normalization:
            return False
        keep, drop = self._reduced_shapes(g)
        return tuple(map(self.shapes.canonical, h.domain)) in (keep, drop)

    def _can_merge(self, g: Group, h: Group, reduced: bool = False) -> bool:
        """Whether two groups can become one without a cycle between groups (`reduced`: h is
        pointwise work over g's reduced domain, `_on_reduced_domain`)."""
        if g is h or g.kind != "compute" or h.kind != "compute" or self._separate(g, h):
            return False
        if (g.scan_dim is not None and (h.rdims is not None or h.scan_dim not in (None, g.scan_dim))) or (
            h.scan_dim is not None and g.rdims is not None
        ):
            return False  # a kernel's rows run along one dim: its scans' or its reductions'
        if not reduced and tuple(map(self.shapes.canonical, g.domain)) != tuple(map(self.shapes.canonical, h.domain)):
            return False
        if g.rdims is not None and h.rdims is not None and g.rdims != h.rdims:
            return False
        for a, b in ((g, h), (h, g)):
            for p in a.preds:
                if p != b.index and self._depends_on(self.groups[p], b):
                    return False
        return True

    def _index_view(self, op: Operation) -> bool:
        """Whether a view op can be index arithmetic in its consumer's kernel: a slice with
        static steps, a permute, or a reshape that only inserts or removes static size-1 dims,
        of a value that is computed (a view of an argument stays a free strided view)."""
        src = op.operands[0]
        while isinstance(src.owner, VIEWS):
            src = src.owner.operands[0]
        if not isinstance(src.owner, Operation):
            return False
        if isinstance(op, fusion.SliceOp):
            return all(s != DYNAMIC_INDEX for s in op.static_step.get_values())
        if isinstance(op, fusion.PermuteOp):
            return True
        if isinstance(op, fusion.ReshapeOp):
            return self._unit_reshape(op)
        return False

    def _unit_reshape(self, op: fusion.ReshapeOp) -> bool:
        """Whether a reshape only inserts or removes static size-1 dims: the other dims pair up
        in order with equal extents (static ones equal; one dynamic pair is equal because a
        reshape keeps the element count; several must be equal symbolically)."""
        def non_unit(v: SSAValue) -> list[tuple[int, Extent]]:
            return [(t, self.shapes.canonical(e)) for e, t in zip(self._shape(v), v.type.get_shape()) if t != 1]
        a, b = non_unit(op.input), non_unit(op.results[0])
        if len(a) != len(b) or any((x == DYNAMIC_INDEX) != (y == DYNAMIC_INDEX) or x != y for (x, _), (y, _) in zip(a, b)):
            return False
        dynamic = [(p, q) for (x, p), (_, q) in zip(a, b) if x == DYNAMIC_INDEX]
        return len(dynamic) <= 1 or all(p == q for p, q in dynamic)

    def _row_group(self, g: Group) -> bool:
        rank = len(g.domain)
        return (g.kind == "compute" and g.rdims == (rank - 1,) and rank >= 2 and g.scan_dim is None
                and not self._closed(g)
                and all(inner_outer.is_row_reduction(op, rank) for op in g.ops if isinstance(op, REDUCTIONS)))

    def _column_group(self, h: Group, returned: set[SSAValue], into: Group | None = None) -> bool:
        """Sums and means of floats over every dim but the last, whose values used outside
        the group are all computed from those sums (the partials add up to them); `returned`:
        the values the function returns. With `into`, the row group it would join, a value
        computed before the sums may be used outside too: the merged kernel computes it per
        row tile, for `into` (RMSNorm backward's dy * w, which the walk grouped with dw's sum
        and dx reads) or as one more row output (dx plus the residual's gradient)."""
        rank = len(h.domain)
        if h.kind != "compute" or h.rdims != tuple(range(rank - 1)) or rank < 2 or h.scan_dim is not None:
            return False
        if any(isinstance(op, (*GATHERS, *SCANS)) for op in h.ops):
            return False
        reductions = [op for op in h.ops if isinstance(op, REDUCTIONS)]
        if not reductions or not all(inner_outer.is_column_reduction(op, rank) for op in reductions):
            return False
        members = set(h.ops) | (set(into.ops) if into is not None else set())
        reduced = set(h.reduced)
        late = self._after_sums(h) if into is not None else None
        for op in h.ops:
            if any(x in reduced for x in op.operands if op in reductions):
                return False  # a reduction of another's result: two levels
            for r in op.results:
                used_outside = r in returned or any(u.operation not in members for u in r.uses)
                if used_outside and r not in reduced and (late is None or r in late):
                    return False
        return True

    def _after_sums(self, h: Group) -> set[SSAValue]:
        """The values of h computed from its reductions' results (those included): complete
        only once every row has been read."""
        done = set(h.reduced)
        for op in sorted(h.ops, key=lambda o: self.position[o]):
            if isinstance(op, REDUCTIONS) or any(x in done for x in op.operands):
                done.update(op.results)
        return done

    def _feeds_rows_per_tile(self, g: Group, h: Group) -> bool:
        """Whether every value of h that g reads is computed before h's sums (so a row tile of
        the merged kernel computes it for itself)."""
        late = self._after_sums(h)
        return not any(x in late for op in g.ops for x in op.operands if self.owner.get(x) is h)

    def _inner_outer_ok(self, g: Group, h: Group, cap: Capacity) -> bool:
        """Same domain, no path between the two through a third group, h feeds g only values
        computed before its sums (`_feeds_rows_per_tile`), and the rows fit on chip (static
        N) or are left to alloc-place (a `?` N)."""
        if tuple(map(self.shapes.canonical, g.domain)) != tuple(map(self.shapes.canonical, h.domain)):
            return False
        if h.index in g.preds and not self._feeds_rows_per_tile(g, h) or self._separate(g, h):
            return False
        for a, b in ((g, h), (h, g)):
            for p in a.preds:
                if p != b.index and self._depends_on(self.groups[p], b):
                    return False
        if any(isinstance(v.type, TensorType) and isinstance(v.type.encoding, fusion.ShardingAttr)
               for op in g.ops + h.ops for v in (*op.operands, *op.results)):
            return False
        n = self.shapes.canonical(g.domain[-1])
        if not isinstance(n, Const):
            return True  # alloc-place: persistent if the row fits at run time, else looped
        acc = [inner_outer.accumulation_bytes(op.operands[0].type.element_type)
               for op in g.ops + h.ops if isinstance(op, REDUCTIONS)]
        return inner_outer.fits_on_chip(n.value, acc, cap)
