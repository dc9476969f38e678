"""`fusion-segment`: groups a fusion's ops into kernel regions (`fusion.segment`).

With `expose=true` (not in eager mode), the rewrites of `fusion-expose`
(`passes/fusion_expose.py`: casts and elementwise ops moved across reshapes) are applied
first; the torch.compile frontend applies them to its graphs itself. Then the grouping is greedy
and deterministic, in program order:

- A pointwise op joins the group of its latest producer when its shape is that
  group's iteration domain (or, in a group with reductions, the reduced domain
  with or without the kept size-1 dims), and joining creates no cycle between
  groups. A reduction joins when its input shape is the group's domain and it
  reduces the same dims; a group whose reduced values are broadcast back onto
  the full domain becomes a normalization, which requires its reduced dims to
  be the trailing ones.
- Broadcast-like views (broadcast_in_dim, expand, squeeze) of a value computed
  in a group join that group; other views (reshape, permute, slice), and views
  of inputs, become `view` segments: no kernel, a strided view of a buffer. A
  reshape of a value that may not be contiguous gets a `fusion.set` copy first.
- pad, cat, full, iota start a group (their domain is their result's); matmul
  and linear are one `library` segment each.
- Then a pointwise-only group whose values are used only by one other group,
  through broadcast-like views, is merged into it (recomputed per row: the
  weight of RMSNorm is cast inside the normalization kernel).
- Then views become index arithmetic in the kernel that reads them
  (`_absorb_into_consumers`): a view segment of a computed value (slice with
  static steps, permute, reshape that only inserts or removes size-1 dims)
  whose uses are all in one compute group moves into it, and so does a
  pointwise group (nothing returned, no reduction) whose values are all used
  in one compute group, recomputed at the indices read (pads and cats read
  values computed in their kernel). A rotary embedding is one kernel. What
  stays a view segment, and why, is listed on `fusion.SegmentOp`.
- Then (`_merge_inner_outer`, `analysis/inner_outer.py`) a group of column
  reductions (float sums or means over every dim but the last) joins a group
  of row reductions (over the last dim) of the same domain, when neither
  needs the other's results and the rows fit on chip (the capacity model of
  `alloc-place`, options `target` and `on-chip-row-bytes`; a `?` last dim is
  left to `alloc-place`): an `inner_outer` segment, one read of the shared
  inputs (RMSNorm backward's dx and dw). `inner-outer=false` keeps them apart.

`one-op-per-kernel=true` gives the eager baseline: one kernel per compute op,
every view a view segment.

Scalars (constants, `index` arithmetic, `tensor.dim`) stay outside segments,
hoisted to the top; `tensor.dim` of an intermediate is rewritten to the
argument extents it equals. The kinds and what each segment may contain are
documented on `fusion.SegmentOp`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import PassFailedException

from allotment.analysis import inner_outer
from allotment.analysis.capacity import Capacity, capacity
from allotment.analysis.shapes import ShapeAnalysis, ShapeError, reify_shapes
from allotment.diagnostics import SOURCE_SPANS, located_message, message_at, walk_ops
from allotment.dialects import fusion
from allotment.dialects.comm import CommOp
from allotment.dtypes import element_nbytes
from allotment.extents.symbolic import Const, Extent
from allotment.limits import call_with_deep_stack
from allotment.passes.fusion_expose import expose_fusion
from allotment.passes.gc_pause import gc_paused
from allotment.passes.size_builder import SizeBuilder

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


def _element_bytes(t: TensorType) -> int:
    return element_nbytes(t.element_type)


def is_compute(op: Operation) -> bool:
    return isinstance(op, fusion.FusionOp) and not isinstance(op, VIEWS)


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


class _Grouping:
    """The grouping state of one function."""

    def __init__(self, f: func.FuncOp, shapes: ShapeAnalysis, eager: bool, cap: Capacity | None = None) -> None:
        self.f = f
        self.shapes = shapes
        self.eager = eager
        self.cap = cap
        """The on-chip budget inner-outer kernels must fit (None: no inner-outer kernels)."""
        self.groups: list[Group] = []
        self.succs: dict[int, set[int]] = {}
        """For each group index p, the groups whose `preds` ever received p (a superset of those
        holding it now): `_merge` and `_recompute` rewrite only those, not every group.
        Every addition to a `preds` goes through `_link` (or records itself here)."""
        self.owner: dict[SSAValue, Group] = {}
        self.position: dict[Operation, int] = {}
        body = f.body.block.ops if f.body.blocks else ()
        self.scatters = any(isinstance(op, fusion.INDEXING_SCATTERS) for op in body)
        self.indexing = any(isinstance(op, INDEXING) for op in body)
        """Whether the function has scatters (`_closed`) or indexing ops (`_indexes_into`) at
        all: without them neither needs to look at a group's ops (a linear walk, not a
        quadratic one, on a chain of 10,000 pointwise ops)."""

    # -- dependencies ------------------------------------------------------

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

    # -- compatibility -----------------------------------------------------

    def _shape(self, v: SSAValue) -> tuple[Extent, ...]:
        return self.shapes.shape(v)

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

    # -- the walk ----------------------------------------------------------

    def run(self, ops: Sequence[Operation]) -> None:
        for i, op in enumerate(ops):
            self.position[op] = i
        for op in ops:
            if isinstance(op, VIEWS):
                self._view(op)
            elif isinstance(op, LIBRARY):
                self._new("library", op)
            elif isinstance(op, fusion.AtenOp):  # an ATen call: an `aten` segment of its own
                self._new("aten", op)
            elif isinstance(op, COLLECTIVES):  # a comm op: a collective segment of its own
                self._new("collective", op)
            elif isinstance(op, SORTS):  # argsort, topk: a sort segment of its own
                self._new("sort", op)
            elif is_compute(op):
                self._compute(op)
        if not self.eager:
            self._merge_broadcast_sources()
            self._absorb_into_consumers()
            self._recompute_shared_inputs()
            if self.cap is not None:
                self._merge_inner_outer()
            self._externalize_member_views()

    def _view(self, op: Operation) -> None:
        src = self.owner.get(op.operands[0])
        if (
            not self.eager
            and isinstance(op, BROADCAST_VIEWS)
            and src is not None
            and src.kind == "compute"
            and not self._closed(src)
            and self._keeps_rows(src, op)
        ):
            self._add(src, op)
            if op.operands[0] in src.reduced:
                src.reduced.add(op.results[0])
        else:
            self._new("view", op)

    def _sibling(self, op: Operation) -> Group | None:
        """A group that already reads one of op's inputs, over the same domain.

        An op whose operands are all kernel inputs has no producer group; joining
        a group that reads the same input (two reductions of one argument, say)
        makes one pass over that input instead of two.
        """
        for v in op.operands:
            if not isinstance(v.type, TensorType):
                continue
            for use in v.uses:
                g = self.owner.get(use.operation.results[0]) if use.operation.results else None
                if g is not None and g.kind == "compute" and self._fits(g, op) and self._acyclic(g, op):
                    return g
        return None

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

    def _compute(self, op: Operation) -> None:
        joined: Group | None = None
        if not self.eager and not isinstance(op, GATHERS):
            candidates = sorted(self._operand_groups(op), key=lambda g: -g.last)
            for g in candidates:
                if self._fits(g, op) and self._acyclic(g, op):
                    joined = g
                    break
            if joined is not None:
                for h in candidates:
                    if h is joined or h.kind != "compute" or not self._fits(h, op):
                        continue
                    if self._can_merge(joined, h):
                        self._merge(joined, h)
                    elif self._on_reduced_domain(h, joined) and self._can_merge(h, joined, reduced=True):
                        self._merge(h, joined)  # pointwise work on h's reduced values joins h
                        joined = h
            if joined is None and not candidates:
                joined = self._sibling(op)
        if joined is None:
            chain = self._recomputable_input(op) if isinstance(op, REDUCTIONS) and not self.eager else None
            if isinstance(op, REDUCTIONS):
                domain = self._shape(op.operands[0])
            else:
                domain = self._shape(op.results[0])
            if chain:
                joined = self._recompute(op, chain, domain)
            else:
                joined = self._new("compute", op, domain)
        else:
            self._add(joined, op)
        if isinstance(op, SCANS):
            joined.scan_dim = op.scan_dim()
        if isinstance(op, REDUCTIONS):
            joined.rdims = tuple(op.reduced_dims())
            joined.reduced.update(op.results)
        elif self._uses_reduced(joined, op):
            joined.reduced.update(op.results)
            if joined.rdims is not None and self._shape(op.results[0]) == tuple(
                self.shapes.canonical(e) for e in joined.domain
            ):
                joined.normalization = True

    def _recompute_shared_inputs(self) -> None:
        """A kernel that reads a value another kernel computes (and would write to memory
        for it) recomputes it instead, when the value is a chain of at most
        RECOMPUTE_MAX_OPS pointwise ops and broadcasts of function arguments whose
        full-domain inputs take no more bytes per element than the value: the producer's
        kernel keeps it in registers, nothing is written, and the consumer reads fewer
        bytes (RMSNorm backward: the dw column sum computes x * rstd and dy * w, which the
        dx normalization kernel then recomputes instead of reading two f32 buffers)."""
        returned: set[SSAValue] = set()
        for op in self.f.body.block.ops:
            if isinstance(op, func.ReturnOp):
                returned.update(op.operands)
        group_of = {op: g for g in self.groups for op in g.ops}
        for g in [g for g in self.groups if g.kind == "compute" and g.ops]:
            for op in sorted(g.ops, key=lambda o: self.position[o]):
                for v in op.results:
                    if v in returned or not isinstance(v.type, TensorType):
                        continue
                    if any(isinstance(u.operation, INDEXING) for u in v.uses):
                        continue  # an indexing op reads it from a buffer
                    users = {group_of.get(u.operation) for u in v.uses} - {g}
                    # only where the value then need not be written at all
                    if not users or None in users or any(h.kind != "compute" for h in users if h is not None):
                        continue
                    chain = self._recomputable(v, g)
                    if chain is None:
                        continue
                    for h in sorted((h for h in users if h is not None), key=lambda h: h.first):
                        first_user = min((u.operation for u in v.uses if group_of.get(u.operation) is h),
                                         key=lambda o: self.position[o])
                        for clone in self._clone_into(h, chain, first_user):
                            group_of[clone] = h

    def _recomputable(self, v: SSAValue, g: Group) -> list[Operation] | None:
        """The ops of g computing v from function arguments and constants only (pointwise
        ops and broadcast views), in program order, if few and cheap enough; else None."""
        chain: list[Operation] = []
        seen: set[Operation] = set()
        pending = [v]
        in_bytes = 0
        domain = self._shape(v)
        while pending:
            x = pending.pop()
            owner = x.owner
            if not isinstance(owner, Operation):
                if isinstance(x.type, TensorType) and self._shape(x) == domain:
                    in_bytes += _element_bytes(x.type)
                continue
            if isinstance(owner, arith.ConstantOp) or owner in seen or not isinstance(x.type, TensorType):
                continue  # scalars (index sizes, constants) live outside segments
            if self.owner.get(x) is not g or isinstance(
                owner, (*REDUCTIONS, *GATHERS, *LAYOUT_VIEWS, *LIBRARY, *SCANS, *SORTS)
            ):
                return None
            if not isinstance(owner, fusion.FusionOp):
                return None
            seen.add(owner)
            chain.append(owner)
            if len(chain) > self.RECOMPUTE_MAX_OPS:
                return None
            pending.extend(owner.operands)
        if not isinstance(v.type, TensorType) or in_bytes > _element_bytes(v.type):
            return None
        return sorted(chain, key=lambda o: self.position[o])

    def _clone_into(self, h: Group, chain: list[Operation], first_user: Operation) -> list[Operation]:
        """Copies `chain` into h before the first op of h that uses any of its values (at
        the latest `first_user`), points h's uses at the copies, and returns them."""
        members = set(h.ops)
        users = [u.operation for op in chain for r in op.results for u in r.uses if u.operation in members]
        first_user = min([first_user, *users], key=lambda o: self.position[o])
        mapping: dict[SSAValue, SSAValue] = {}
        base = self.position[first_user]
        clones: list[Operation] = []
        for k, op in enumerate(chain):
            clone = op.clone(value_mapper=dict(mapping))
            for old, new in zip(op.results, clone.results):
                mapping[old] = new
                new.name_hint = old.name_hint
                self.shapes.extents[new] = self.shapes.extents[old]
                self.owner[new] = h
            first_user.parent_block().insert_op_before(clone, first_user)
            self.position[clone] = base - 1 + (k + 1) / (len(chain) + 1)
            clones.append(clone)
        members = set(h.ops)
        for old, new in mapping.items():
            for use in list(old.uses):
                if use.operation in members:
                    use.operation.operands[use.index] = new
        h.ops = sorted(h.ops + clones, key=lambda o: self.position[o])
        return clones

    RECOMPUTE_MAX_OPS = 16
    RECOMPUTE_MAX_INPUTS = 4

    def _recomputable_input(self, op: Operation) -> list[Operation] | None:
        """The ops of another group that compute a reduction's input from that group's own
        inputs only (elementwise ops, casts and broadcast-like views: no reduced value), in
        program order, when the reduction starts a group of its own over other dims (the
        column sum of RMSNorm backward's dw, next to its row reductions). Recomputing them
        reads those inputs again instead of writing and reading the input in a buffer."""
        v = op.operands[0]
        g = self.owner.get(v)
        if g is None or g.kind != "compute" or v in g.reduced:
            return None
        chain: dict[Operation, None] = {}
        leaves: set[SSAValue] = set()
        stack = [v]
        while stack:
            x = stack.pop()
            owner = x.owner
            if not isinstance(x.type, TensorType) or self.owner.get(x) is not g:
                if isinstance(x.type, TensorType):
                    leaves.add(x)
                continue
            if x in g.reduced or isinstance(owner, REDUCTIONS) or not isinstance(owner, (fusion.ElementwiseOp, fusion.CastOp, *BROADCAST_VIEWS)):
                return None
            if owner not in chain:
                chain[owner] = None
                stack.extend(owner.operands)
            if len(chain) > self.RECOMPUTE_MAX_OPS or len(leaves) > self.RECOMPUTE_MAX_INPUTS:
                return None
        return sorted(chain, key=lambda o: self.position[o])

    def _recompute(self, op: Operation, chain: list[Operation], domain: tuple[Extent, ...]) -> Group:
        """A new group for reduction `op` whose input chain (`_recomputable_input`) is cloned
        into it; the originals stay where other users need them, or are erased."""
        mapping: dict[SSAValue, SSAValue] = {}
        clones = []
        for k, o in enumerate(chain):
            clone = _clone(o, mapping)
            for old, new in zip(o.results, clone.results):
                mapping[old] = new
                new.name_hint = old.name_hint
            op.parent_block().insert_op_before(clone, op)
            self.position[clone] = self.position[op] - 1 + (k + 1) / (len(chain) + 1)
            clones.append(clone)
        op.operands = [mapping.get(x, x) for x in op.operands]
        g = self._new("compute", clones[0], domain)
        for clone in clones[1:]:
            self._add(g, clone)
        self._add(g, op)
        source = self.owner[chain[-1].results[0]]
        for o in reversed(chain):  # the originals nobody reads any more
            if all(not r.uses for r in o.results):
                source.ops.remove(o)
                o.parent_block().erase_op(o)
        if not source.ops:  # nothing left to compute: no group waits for it
            source.kind = "merged"
            for i in self.succs.get(source.index, ()):
                self.groups[i].preds.discard(source.index)
        return g

    def _externalize_member_views(self) -> None:
        """A broadcast view used outside its group becomes a view segment of its own.

        Its source is then the group's output and the view costs nothing; keeping
        it as an output would store the broadcast (and could leave the group's
        iteration domain).
        """
        group_of = {op: h for h in self.groups for op in h.ops}
        for g in list(self.groups):
            if g.kind != "compute":
                continue
            members = set(g.ops)
            # last first: a view used only by a later view that leaves the group leaves it too
            for op in reversed([o for o in g.ops if isinstance(o, BROADCAST_VIEWS)]):
                external = [u for u in op.results[0].uses if u.operation not in members]
                if not external:
                    continue
                clone = _clone(op)
                op.parent_block().insert_op_after(clone, op)
                self.position[clone] = self.position[op]
                for use in external:
                    use.operation.operands = [
                        clone.results[0] if x is op.results[0] else x for x in use.operation.operands
                    ]
                view = self._new("view", clone)
                group_of[clone] = view
                for use in clone.results[0].uses:  # the groups that read the view wait for it
                    h = group_of.get(use.operation)
                    if h is not None and h is not view:
                        self._link(h, view.index)
                if not op.results[0].uses:
                    g.ops.remove(op)
                    op.parent_block().erase_op(op)

    def _absorb_into_consumers(self) -> None:
        """Index views and pointwise producers used by one kernel only move into it.

        A view segment of a computed value (slice with static steps, permute, or a
        reshape that only inserts or removes size-1 dims) whose uses are all in one
        compute group becomes index arithmetic in that group; so does a pointwise
        group (no reduction, nothing returned) whose values are all used in one
        compute group: it is recomputed at the indices that group reads it at
        (a rotary embedding's slices, neg and cat become one kernel). Walks the
        groups last first, so a chain of producers moves in one pass.
        """
        returned: set[SSAValue] = set()
        for op in self.f.body.block.ops:
            if isinstance(op, func.ReturnOp):
                returned.update(op.operands)
        group_of = {op: g for g in self.groups for op in g.ops}
        for h in sorted((g for g in self.groups if g.ops), key=lambda g: -g.first):
            if not h.ops or any(r in returned for op in h.ops for r in op.results):
                continue
            if h.kind == "view":
                if not self._index_view(h.ops[0]):
                    continue
            elif h.kind != "compute" or h.has_reduction or h.scan_dim is not None:
                continue  # a scan's rows are computed once, in its own kernel
            users = {group_of.get(u.operation) for op in h.ops for r in op.results for u in r.uses}
            users.discard(h)
            if len(users) > 1 and self._recompute_per_consumer(h, users, group_of):
                continue
            if len(users) != 1:
                continue
            (g,) = users
            if g is None or g.kind != "compute" or self._separate(g, h):
                continue
            self._merge(g, h)
            for op in g.ops:
                group_of[op] = g

    def _recompute_per_consumer(self, h: Group, users: set[Group | None], group_of: dict[Operation, Group]) -> bool:
        """A pointwise group read by several kernels, that reads only function arguments and
        constants, with at most RECOMPUTE_MAX_OPS ops and no more input bytes per element
        than output bytes, is recomputed in each consumer instead of written to memory and
        read back by each: never more memory traffic, and no intermediate buffer at all
        (RMSNorm backward's x * rstd and dy * w, read by the dx and the dw kernels).
        Returns whether it did."""
        if None in users or any(g.kind != "compute" for g in users if g is not None):
            return False
        if h.preds or len(h.ops) > self.RECOMPUTE_MAX_OPS or any(isinstance(op, GATHERS) for op in h.ops):
            return False
        if any(self._indexes_into(g, h) for g in users if g is not None):
            return False
        inside = {r for op in h.ops for r in op.results}
        domain = tuple(map(self.shapes.canonical, h.domain))
        in_bytes = out_bytes = 0
        for op in h.ops:
            for v in op.operands:
                if v in inside or not isinstance(v.type, TensorType):
                    continue
                if not isinstance(v.owner, Block) and isinstance(v.owner, Operation):
                    return False  # reads a value some other op computes
                if self._shape(v) == domain:
                    in_bytes += _element_bytes(v.type)
            for r in op.results:
                if any(group_of.get(u.operation) is not h for u in r.uses):
                    out_bytes += _element_bytes(r.type)
        if in_bytes > out_bytes:
            return False
        consumers = sorted((g for g in users if g is not None), key=lambda g: g.first)
        # Each consumer's uses of h's results, found once: a value read by thousands of
        # kernels (a broadcast weight) is not scanned again for each of them.
        uses_in: dict[int, list[tuple[SSAValue, Operation, int]]] = {}
        for op in h.ops:
            for r in op.results:
                for use in r.uses:
                    user_group = group_of.get(use.operation)
                    if user_group is not None:
                        uses_in.setdefault(id(user_group), []).append((r, use.operation, use.index))
        for g in consumers[:-1]:
            mapping: dict[SSAValue, SSAValue] = {}
            clones: list[Operation] = []
            for op in h.ops:
                clone = op.clone(value_mapper=dict(mapping))
                for old, new in zip(op.results, clone.results):
                    mapping[old] = new
                    new.name_hint = old.name_hint
                    self.shapes.extents[new] = self.shapes.extents[old]
                op.parent_block().insert_op_before(clone, op)
                self.position[clone] = self.position[op]
                clones.append(clone)
            for old, user, index in uses_in.get(id(g), ()):
                user.operands[index] = mapping[old]
            copy = Group(len(self.groups), "compute", clones, h.domain, None, set(), h.first, h.last)
            self.groups.append(copy)
            for op in clones:
                for r in op.results:
                    self.owner[r] = copy
            self._merge(g, copy, fresh=True)
            g.preds.discard(h.index)
            for op in g.ops:
                group_of[op] = g
        last = consumers[-1]
        self._merge(last, h)
        for op in last.ops:
            group_of[op] = last
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

    def _merge_broadcast_sources(self) -> None:
        """Merges pointwise groups used only through broadcast views by one group."""
        users: dict[int, set[int]] = {}
        used_in: dict[int, set[int]] = {}  # g -> the h whose users held g: `users` reversed (a superset)
        via_views: dict[int, bool] = {}
        returned: set[int] = set()
        for g in self.groups:
            for op in g.ops:
                for v in op.operands:
                    h = self.owner.get(v)
                    if h is None or h is g:
                        continue
                    users.setdefault(h.index, set()).add(g.index)
                    used_in.setdefault(g.index, set()).add(h.index)
                    ok = isinstance(v.owner, BROADCAST_VIEWS)
                    via_views[h.index] = via_views.get(h.index, True) and ok
        for op in self.f.body.block.ops:
            if isinstance(op, func.ReturnOp):
                returned.update(self.owner[v].index for v in op.operands if v in self.owner)
        for h in list(self.groups):
            if h.kind != "compute" or h.has_reduction or h.scan_dim is not None or h.index in returned:
                continue
            target = users.get(h.index, set())
            if len(target) != 1 or not via_views.get(h.index, False):
                continue
            g = self.groups[next(iter(target))]
            if g.kind != "compute" or self._separate(g, h):
                continue
            self._merge(g, h)
            # users of h are users of g now
            for k in used_in.get(h.index, ()):
                us = users[k]
                if h.index in us:
                    us.discard(h.index)
                    us.add(g.index)
                    used_in.setdefault(g.index, set()).add(k)

    # -- inner-outer kernels (`analysis/inner_outer.py`) ---------------------------

    def _merge_inner_outer(self) -> None:
        """Merges each column-reduction group into a row-reduction group of the same
        [rows..., N] domain when the merged kernel's rows fit on chip (a `?` N: alloc-place
        decides at run time): the kernel then reads the shared inputs once."""
        rows = [g for g in self.groups if self._row_group(g)]
        returned = {v for op in self.f.body.block.ops if isinstance(op, func.ReturnOp) for v in op.operands}
        for h in [h for h in self.groups if self._column_group(h, returned)]:
            for g in rows:
                if g.ops and self._inner_outer_ok(g, h):
                    self._merge(g, h)
                    g.rdims = tuple(next(op for op in g.ops if isinstance(op, REDUCTIONS)).reduced_dims())
                    g.inner_outer = True
                    break
        # A column reduction beside outputs of its own domain and no row reduction (a bias
        # gradient beside dx) stays a `reduction` segment: `split_reduction` splits it across
        # CTAs, its first stage writing the outputs as it streams the rows.

    def _row_group(self, g: Group) -> bool:
        rank = len(g.domain)
        return (g.kind == "compute" and g.rdims == (rank - 1,) and rank >= 2 and g.scan_dim is None
                and not self._closed(g)
                and all(inner_outer.is_row_reduction(op, rank) for op in g.ops if isinstance(op, REDUCTIONS)))

    def _column_group(self, h: Group, returned: set[SSAValue]) -> bool:
        """Sums and means of floats over every dim but the last, whose values used outside
        the group are all computed from those sums (the partials add up to them); `returned`:
        the values the function returns."""
        rank = len(h.domain)
        if h.kind != "compute" or h.rdims != tuple(range(rank - 1)) or rank < 2 or h.scan_dim is not None:
            return False
        if any(isinstance(op, (*GATHERS, *SCANS)) for op in h.ops):
            return False
        reductions = [op for op in h.ops if isinstance(op, REDUCTIONS)]
        if not reductions or not all(inner_outer.is_column_reduction(op, rank) for op in reductions):
            return False
        members = set(h.ops)
        reduced = set(h.reduced)
        for op in h.ops:
            if any(x in reduced for x in op.operands if op in reductions):
                return False  # a reduction of another's result: two levels
            for r in op.results:
                used_outside = r in returned or any(u.operation not in members for u in r.uses)
                if used_outside and r not in reduced:
                    return False
        return True

    def _inner_outer_ok(self, g: Group, h: Group) -> bool:
        """Same domain, no path between the two through a third group, h does not feed g,
        and the rows fit on chip (static N) or are left to alloc-place (a `?` N)."""
        assert self.cap is not None
        if tuple(map(self.shapes.canonical, g.domain)) != tuple(map(self.shapes.canonical, h.domain)):
            return False
        if h.index in g.preds or self._separate(g, h):
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
        return inner_outer.fits_on_chip(n.value, acc, self.cap)

    def segment_kind(self, g: Group) -> str:
        if g.kind in ("view", "library", "collective", "sort", "aten"):
            return g.kind
        if g.inner_outer:
            return "inner_outer"
        if g.scan_dim is not None:
            return "scan"
        if g.has_reduction:
            return "normalization" if g.normalization else "reduction"
        return "pointwise"


def _may_be_strided(v: SSAValue, memo: dict[SSAValue, bool]) -> bool:
    """Whether a tensor value may be a non-contiguous view once allocated."""
    if v in memo:
        return memo[v]
    owner = v.owner
    if isinstance(owner, fusion.ReshapeOp | fusion.SqueezeOp):
        result = _may_be_strided(owner.operands[0], memo)
    else:
        result = isinstance(owner, VIEWS)
    memo[v] = result
    return result


def _insert_reshape_copies(block: Block) -> None:
    """A reshape of a possibly strided value reads a contiguous copy instead: one copy per
    value, shared by every reshape of it (inserted before the first, which precedes the rest)."""
    memo: dict[SSAValue, bool] = {}
    copies: dict[SSAValue, SSAValue] = {}
    for op in list(block.ops):
        if isinstance(op, fusion.ReshapeOp) and _may_be_strided(op.input, memo):
            copied = copies.get(op.input)
            if copied is None:
                copy = fusion.SetOp(op.input)
                copy.result.name_hint = f"{op.input.name_hint or 'view'}_contiguous"
                block.insert_op_before(copy, op)
                copied = copies[op.input] = copy.result
            op.operands = (copied, *op.operands[1:])


def _rewrite_intermediate_dims(f: func.FuncOp, shapes: ShapeAnalysis) -> None:
    """`tensor.dim` of an intermediate becomes arithmetic on the arguments' dims."""
    block = f.body.block
    args = list(block.args)
    for op in list(block.ops):
        if isinstance(op, tensor.DimOp) and op.source not in args:
            builder = SizeBuilder(args, use_tensor_dim=True)
            value = builder.value(shapes.scalar(op.result))
            for new in builder.ops:
                block.insert_op_before(new, op)
            op.result.replace_all_uses_with(value)
            block.erase_op(op)


def _clone(op: Operation, mapping: dict[SSAValue, SSAValue] | None = None) -> Operation:
    """`op.clone(mapping)`, keeping the source location of `op` for later diagnostics."""
    clone = op.clone(mapping)
    span = SOURCE_SPANS.get(op)
    if span is not None:
        SOURCE_SPANS[clone] = span
    return clone


def _check_flat(f: func.FuncOp) -> None:
    """A fusion is one block of ops without regions: anything else is a located error."""
    if len(f.body.blocks) != 1:
        raise PassFailedException(located_message(f, "fusion-segment: a fusion function has one block"))
    for op in f.body.block.ops:
        if op.regions:
            raise PassFailedException(
                located_message(op, "fusion-segment: an op with regions cannot be part of a fusion")
            )


def segment_function(f: func.FuncOp, eager: bool = False, cap: Capacity | None = None, expose: bool = False) -> None:
    """Replaces the body of `f` by scalars, segments and the return; `cap`: the on-chip
    budget of inner-outer kernels (None: none are made); `expose`: first apply the
    rewrites of `fusion-expose` (`passes/fusion_expose.py`; not in eager mode).

    Raises PassFailedException (located) for a body that is not one block of ops
    without regions."""
    _check_flat(f)
    block = f.body.block
    if expose and not eager:
        expose_fusion(f)
    _insert_reshape_copies(block)
    shapes = reify_shapes(f)
    _rewrite_intermediate_dims(f, shapes)
    for op in reversed(list(block.ops)):  # values nobody uses need no kernel
        if is_trivially_dead(op):
            block.erase_op(op)
    ops = list(block.ops)
    grouping = _Grouping(f, shapes, eager, cap)
    grouping.run(ops)
    ops = list(block.ops)  # grouping may have split views off

    grouped = {op for g in grouping.groups for op in g.ops}
    scalars = [op for op in ops if op not in grouped and not isinstance(op, func.ReturnOp)]
    for op in scalars:
        for r in op.results:
            if isinstance(r.type, TensorType):
                raise PassFailedException(f"fusion-segment: cannot place {op.name} in a segment")
    order = _topological(grouping)

    new_ops: list[Operation] = []
    mapping: dict[SSAValue, SSAValue] = {}
    for op in scalars:
        new_ops.append(_clone(op, mapping))
        for old, new in zip(op.results, new_ops[-1].results):
            mapping[old] = new
    counters = {"view": 0, "kernel": 0}
    for g in order:
        kind = grouping.segment_kind(g)
        prefix = "v" if kind == "view" else "k"
        key = "view" if kind == "view" else "kernel"
        name = f"{prefix}{counters[key]}"
        counters[key] += 1
        new_ops.append(_build_segment(name, kind, g, grouping, mapping, ops))
        if kind == "inner_outer":  # the two groups' copies of the shared casts and loads become one
            cse(new_ops[-1].body)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    new_ops.append(_clone(ret, mapping))

    for op in reversed(ops):
        if op.parent is not block:
            continue  # moved into its segment (`_build_segment`)
        op.detach()
        op.erase(safe_erase=False)
    block.add_ops(new_ops)
    for op in reversed(new_ops[: len(scalars)]):
        if is_trivially_dead(op):
            block.erase_op(op)


def _topological(grouping: _Grouping) -> list[Group]:
    live = [g for g in grouping.groups if g.ops]
    indegree = {g.index: len(g.preds) for g in live}
    succs: dict[int, list[int]] = {}
    for g in live:
        for p in g.preds:
            succs.setdefault(p, []).append(g.index)
    import heapq

    ready = [(g.first, g.index) for g in live if indegree[g.index] == 0]
    heapq.heapify(ready)
    order: list[Group] = []
    while ready:
        _, i = heapq.heappop(ready)
        g = grouping.groups[i]
        order.append(g)
        for s in succs.get(i, []):
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, (grouping.groups[s].first, s))
    if len(order) != len(live):
        raise PassFailedException("fusion-segment: internal error, the segments form a cycle")
    return order


def _build_segment(
    name: str,
    kind: str,
    g: Group,
    grouping: _Grouping,
    mapping: dict[SSAValue, SSAValue],
    all_ops: Sequence[Operation],
) -> fusion.SegmentOp:
    members = set(g.ops)
    found_inputs: dict[SSAValue, None] = {}  # insertion-ordered sets: linear in the segment's size
    found_constants: dict[Operation, None] = {}
    for op in g.ops:
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner in members:
                continue
            if isinstance(owner, arith.ConstantOp):
                found_constants.setdefault(owner)
            else:
                found_inputs.setdefault(v)
    inputs, constants = list(found_inputs), list(found_constants)
    outputs: list[SSAValue] = []
    for op in g.ops:
        for r in op.results:
            if any(use.operation not in members for use in r.uses):
                outputs.append(r)
    block = Block(arg_types=[v.type for v in inputs])
    inner: dict[SSAValue, SSAValue] = {}
    for v, arg in zip(inputs, block.args):
        inner[v] = arg
        if v.name_hint:
            arg.name_hint = v.name_hint
    for c in constants:
        clone = _clone(c)
        block.add_op(clone)
        inner[c.result] = clone.result
    for op in g.ops:  # moved, not cloned: the function's own ops are discarded after
        op.detach()
        op.operands = [inner.get(v, v) for v in op.operands]
        block.add_op(op)
        for r in op.results:
            inner[r] = r
    block.add_op(fusion.YieldOp(*[inner[v] for v in outputs]))
    seg = fusion.SegmentOp(
        name, kind, [mapping.get(v, v) for v in inputs], [v.type for v in outputs], Region(block)
    )
    for old, new in zip(outputs, seg.results):
        mapping[old] = new
        if old.name_hint:
            new.name_hint = old.name_hint
    return seg


@dataclass(frozen=True)
class FusionSegmentPass(ModulePass):
    """Groups every fusion function's ops into `fusion.segment` kernel regions."""

    name = "fusion-segment"

    one_op_per_kernel: bool = False

    inner_outer: bool = True
    """Merge column reductions into row-reduction kernels of the same domain where the rows
    fit on chip (`analysis/inner_outer.py`); false keeps them separate kernels."""

    target: str = "h200"
    """The capacity model inner-outer kernels must fit (`analysis/capacity.py`), as `alloc-place`'s."""

    on_chip_row_bytes: int = 0
    """Overrides the target's budget for one reduced row, in bytes (0: the target's)."""

    expose: bool = False
    """First apply `fusion-expose`'s rewrites (casts and elementwise ops moved across
    reshapes so that they fuse); false (the default) segments the function as written."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Segments every function with a body; runs on a deep stack (`allotment.limits`),
        as xDSL's cloning and erasing recurse per nested region."""
        call_with_deep_stack(lambda: self._apply(op))

    def _apply(self, op: ModuleOp) -> None:
        cap: Capacity | None = None
        if self.inner_outer and not self.one_op_per_kernel:
            try:
                cap = capacity(self.target, self.on_chip_row_bytes)
            except ValueError as e:
                raise PassFailedException(f"fusion-segment: {e}") from None
        with gc_paused():
            for f in [f for f in walk_ops(op) if isinstance(f, func.FuncOp)]:
                if not f.is_declaration:
                    if len(f.body.blocks) != 1:
                        raise PassFailedException(message_at(
                            f, f"fusion-segment: @{f.sym_name.data} has {len(f.body.blocks)} blocks; a fusion is "
                               "one block of ops (no control flow)"))
                    if any(o.name in ("fusion.segment", "alloc.kernel") for o in f.body.block.ops):
                        continue  # already segmented (or allocated)
                    try:
                        segment_function(f, eager=self.one_op_per_kernel, cap=cap, expose=self.expose)
                    except ShapeError as e:
                        raise PassFailedException(message_at(e.op, f"fusion-segment: {e}")) from None
