"""The grouping state of `fusion-segment` (`passes/fusion_segment.py`): which ops belong to
which group, which groups read which (`Group.preds`), and the moves that change them (a
new group, an op added, two groups merged), with the op categories the grouping sorts
ops by. What may join what is `segment_rules.py`; the walk that decides, `fusion_segment.py`."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from allotment.analysis.shapes import ShapeAnalysis
from allotment.diagnostics import SOURCE_SPANS
from allotment.dialects import fusion
from allotment.dialects.comm import CommOp
from allotment.extents.symbolic import Extent

BROADCAST_VIEWS = (fusion.BroadcastInDimOp, fusion.ExpandOp, fusion.SqueezeOp)
LAYOUT_VIEWS = (fusion.ReshapeOp, fusion.PermuteOp, fusion.SliceOp)
VIEWS = BROADCAST_VIEWS + LAYOUT_VIEWS
LIBRARY = (fusion.MatmulOp, fusion.LinearOp)
COLLECTIVES = (CommOp,)
"""Communication (`comm` dialect): one `collective` segment each."""
REDUCTIONS = (fusion.ReductionOp, fusion.VarMeanOp, fusion.WelfordOp)
INDEXING = (*fusion.INDEXING_GATHERS, *fusion.INDEXING_SCATTERS)
"""Ops that read or write a buffer at computed indices: their source and index operands
are buffers (never computed in their kernel), and a scatter is a kernel of its own."""
SCANS = fusion.SCAN_OPS
"""Scans (cumsum, cumprod, cummax, cummin): their group's kernel streams rows along the scan dim."""
SORTS = fusion.SORT_OPS
"""argsort, topk: one `sort` segment each (the kernel sorts whole rows)."""
GATHERS = (fusion.PadOp, fusion.CatOp, fusion.FullOp, fusion.IotaOp, *INDEXING)
"""Pointwise ops that start their own group (their domain is not their operands')."""


def is_compute(op: Operation) -> bool:
    return isinstance(op, fusion.FusionOp) and not isinstance(op, VIEWS)


def clone_op(op: Operation, mapping: dict[SSAValue, SSAValue] | None = None) -> Operation:
    """`op.clone(mapping)`, keeping the source location of `op` for later diagnostics."""
    clone = op.clone(mapping)
    span = SOURCE_SPANS.get(op)
    if span is not None:
        SOURCE_SPANS[clone] = span
    return clone


@dataclass(eq=False)
class Group:
    """A set of ops that becomes one segment."""

    index: int
    kind: str  # "compute", "view" or "library" while grouping
    ops: list[Operation] = field(default_factory=list)
    domain: tuple[Extent, ...] = ()
    rdims: tuple[int, ...] | None = None
    preds: set[int] = field(default_factory=set)
    first: int = 0
    last: int = 0
    normalization: bool = False
    reduced: set[SSAValue] = field(default_factory=set)
    scan_dim: int | None = None
    """The dim a `scan` group's scans run along (None: the group scans nothing)."""
    inner_outer: bool = False
    """Row reductions with column reductions merged in (`_merge_inner_outer`)."""

    @property
    def has_reduction(self) -> bool:
        return self.rdims is not None


class GroupTable:
    """The groups of one function and who owns what: `groups` (by index; a merged group
    stays, empty, with kind "merged"), `owner` (the group computing a value), `position`
    (an op's place in program order; clones get fractional places between)."""

    def __init__(self, f: func.FuncOp, shapes: ShapeAnalysis) -> None:
        self.f = f
        self.shapes = shapes
        self.groups: list[Group] = []
        self.succs: dict[int, set[int]] = {}
        """For each group index p, the groups whose `preds` ever received p (a superset of those
        holding it now): `_merge` and `_recompute` rewrite only those, not every group.
        Every addition to a `preds` goes through `_link` (or records itself here)."""
        self.owner: dict[SSAValue, Group] = {}
        self.position: dict[Operation, int] = {}

    def returned_values(self) -> set[SSAValue]:
        """The values the function returns."""
        returned: set[SSAValue] = set()
        for op in self.f.body.block.ops:
            if isinstance(op, func.ReturnOp):
                returned.update(op.operands)
        return returned

    def _depends_on(self, start: Group, target: Group) -> bool:
        """Whether `start` (transitively) uses a value of `target`."""
        if start is target:
            return True
        stack, seen = [start.index], {start.index}
        while stack:
            g = self.groups[stack.pop()]
            for p in g.preds:
                if p == target.index:
                    return True
                pg = self.groups[p]
                if p not in seen and pg.last > target.first:
                    seen.add(p)
                    stack.append(p)
        return False

    def _operand_groups(self, op: Operation) -> list[Group]:
        out: list[Group] = []
        for v in op.operands:
            g = self.owner.get(v)
            if g is not None and g not in out:
                out.append(g)
        return out

    def _link(self, g: Group, p: int) -> None:
        """Adds group index p to g's predecessors (and g to p's successors, `succs`)."""
        g.preds.add(p)
        self.succs.setdefault(p, set()).add(g.index)

    def _add(self, g: Group, op: Operation) -> None:
        pos = self.position[op]
        if not g.ops:
            g.first = pos
        g.ops.append(op)
        g.last = max(g.last, pos)
        for h in self._operand_groups(op):
            if h is not g:
                self._link(g, h.index)
        for r in op.results:
            self.owner[r] = g

    def _new(self, kind: str, op: Operation, domain: tuple[Extent, ...] = ()) -> Group:
        g = Group(len(self.groups), kind, domain=domain)
        self.groups.append(g)
        self._add(g, op)
        return g

    def _merge(self, g: Group, h: Group, fresh: bool = False) -> None:
        """Moves every op of h into g. `fresh`: h was just made and no group depends on it
        yet, so no other group's predecessors need rewriting (they are not scanned)."""
        g.ops = sorted(g.ops + h.ops, key=lambda o: self.position[o])
        g.first, g.last = min(g.first, h.first), max(g.last, h.last)
        for p in h.preds:  # g's successors-to-be through h's predecessors (`succs`)
            self.succs.setdefault(p, set()).add(g.index)
        g.preds = (g.preds | h.preds) - {g.index, h.index}
        g.rdims = g.rdims if g.rdims is not None else h.rdims
        g.normalization |= h.normalization
        g.reduced |= h.reduced
        g.scan_dim = g.scan_dim if g.scan_dim is not None else h.scan_dim
        for op in h.ops:
            for r in op.results:
                self.owner[r] = g
        for i in () if fresh else self.succs.get(h.index, ()):
            other = self.groups[i]
            if h.index in other.preds:
                other.preds.discard(h.index)
                if other is not g:
                    self._link(other, g.index)
        h.ops, h.kind = [], "merged"

    def _shape(self, v: SSAValue) -> tuple[Extent, ...]:
        return self.shapes.shape(v)
