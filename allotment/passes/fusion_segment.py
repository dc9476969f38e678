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
  reshape of a value that may not be contiguous gets a `fusion.set` copy first, unless
  it only splits dims (`view_extents.reshape_splits`), which is a view of any strides.
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
  of row reductions (over the last dim) of the same domain, when the row
  group reads nothing computed from the column sums (a value the column group
  computes before its sums is computed per row tile, and may also be a row
  output: Llama's RMSNorm backward with its residual gradient) and the rows fit
  on chip (the capacity model of
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
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import ModuleOp, NoneAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import PassFailedException

from allotment.analysis.capacity import Capacity, capacity
from allotment.analysis.shapes import ShapeAnalysis, ShapeError, reify_shapes
from allotment.diagnostics import located_message, message_at, walk_ops
from allotment.dialects import fusion
from allotment.extents import view_extents
from allotment.extents.dims import normalize_dim
from allotment.limits import call_with_deep_stack
from allotment.passes.fusion_expose import expose_fusion
from allotment.passes.gc_pause import gc_paused
from allotment.passes.segment_groups import (
    BROADCAST_VIEWS,
    COLLECTIVES,
    GATHERS,
    LIBRARY,
    REDUCTIONS,
    SCANS,
    SORTS,
    VIEWS,
    Group,
    clone_op,
    is_compute,
)
from allotment.passes.segment_recompute import Recomputation
from allotment.passes.size_builder import SizeBuilder


class _Grouping(Recomputation):
    """The grouping of one function: the walk in program order (`run`), then the merges
    after it. The state is `segment_groups.GroupTable`'s, the rules `segment_rules.GroupRules`',
    the recomputing moves `segment_recompute.Recomputation`'s."""

    def __init__(self, f: func.FuncOp, shapes: ShapeAnalysis, eager: bool, cap: Capacity | None = None) -> None:
        super().__init__(f, shapes)
        self.eager = eager
        self.cap = cap
        """The on-chip budget inner-outer kernels must fit (None: no inner-outer kernels)."""

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
        returned = self.returned_values()
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
                clone = clone_op(op)
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

    def _merge_inner_outer(self) -> None:
        """Merges each column-reduction group into a row-reduction group of the same
        [rows..., N] domain when the merged kernel's rows fit on chip (a `?` N: alloc-place
        decides at run time): the kernel then reads the shared inputs once."""
        assert self.cap is not None
        rows = [g for g in self.groups if self._row_group(g)]
        returned = self.returned_values()
        for h in list(self.groups):
            for g in rows:
                if (g.ops and h.ops and self._column_group(h, returned, g)
                        and self._inner_outer_ok(g, h, self.cap)):
                    self._merge(g, h)
                    g.rdims = tuple(next(op for op in g.ops if isinstance(op, REDUCTIONS)).reduced_dims())
                    g.inner_outer = True
                    break
        # A column reduction beside outputs of its own domain and no row reduction (a bias
        # gradient beside dx) stays a `reduction` segment: `split_reduction` splits it across
        # CTAs, its first stage writing the outputs as it streams the rows.

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
    elif isinstance(owner, fusion.PermuteOp) and _undoes_memory_order(owner):
        result = False
    elif isinstance(v, BlockArgument):
        result = fusion.argument_order(v) is not None  # passed dense in another order
    else:
        result = isinstance(owner, VIEWS)
    memo[v] = result
    return result


def _undoes_memory_order(op: fusion.PermuteOp) -> bool:
    """Whether the permute makes a value that lies in another memory order row-major: its
    source is an argument passed in an order (`fusion.stride_order`) or a library call's
    result returned in one (`fusion.aten`'s `orders`), and this permutation lists that order
    (attention's [batch, heads, seq, dim] output in [batch, seq, heads, dim] order, or the
    backward's saved copy of it, transposed back)."""
    src = op.input
    order = fusion.memory_order(src)
    rank = len(src.type.get_shape())
    return order is not None and [normalize_dim(d, rank) for d in op.dims.get_values()] == order


def _splits_only(op: fusion.ReshapeOp) -> bool:
    """A reshape that only splits dims (`view_extents.reshape_splits`) of an unsharded
    tensor: a view of its source whatever the source's strides, so it needs no copy (a
    slice of a fused q/k/v projection split into heads, GPT-2's attention)."""
    src, out = op.input.type, op.result.type
    if not isinstance(src.encoding, NoneAttr) or not isinstance(out.encoding, NoneAttr):
        return False
    return view_extents.reshape_splits(src.get_shape(), out.get_shape()) is not None


def _returned(v: SSAValue, memo: dict[SSAValue, bool]) -> bool:
    """Whether `v` reaches the function's results through views alone (its buffer then
    outlives the call)."""
    if v not in memo:
        memo[v] = any(isinstance(u.operation, func.ReturnOp)
                      or (isinstance(u.operation, VIEWS) and u.index == 0 and _returned(u.operation.results[0], memo))
                      for u in v.uses)
    return memo[v]


def _view_root(v: SSAValue) -> SSAValue:
    """The value whose buffer `v` views (itself where it is no view)."""
    while isinstance(v.owner, VIEWS):
        v = v.owner.operands[0]
    return v


def _pins_more_than_returned(op: fusion.ReshapeOp, memo: dict[SSAValue, bool]) -> bool:
    """Whether keeping this split a view would make a result of the function a view of a
    buffer of the call that the results do not wholly cover: the reshape's result is
    returned (through views) and the buffer it views is not wholly returned
    (`_wholly_returned`). The result would then keep the whole buffer alive past the call
    (GPT-2's inference returns the k and v of its fused q/k/v projection, not q: as views
    they hold 3/2 of their bytes a layer), so it is copied, as torch's clone of k and v
    does; where every use is returned (q, k and v saved for the backward) the views hold
    nothing more than copies would. A view of an argument holds nothing of the call."""
    if not _returned(op.result, memo):
        return False
    root = _view_root(op.input)
    return isinstance(root.owner, Operation) and not _wholly_returned(root, {})


def _wholly_returned(v: SSAValue, memo: dict[SSAValue, bool]) -> bool:
    """Whether every byte of `v` outlives the call as part of a result: `v` is returned
    itself, or each of its uses is a view whose result is wholly returned."""
    if v not in memo:
        memo[v] = any(isinstance(u.operation, func.ReturnOp) for u in v.uses) or (
            bool(v.uses) and all(isinstance(u.operation, VIEWS) and u.index == 0
                                 and _wholly_returned(u.operation.results[0], memo) for u in v.uses))
    return memo[v]


def _insert_reshape_copies(block: Block) -> None:
    """A reshape of a possibly strided value reads a contiguous copy instead: one copy per
    value, shared by every reshape of it (inserted before the first, which precedes the rest),
    unless the reshape only splits dims and the view would keep no more of a buffer alive
    than the function returns (`_pins_more_than_returned`)."""
    memo: dict[SSAValue, bool] = {}
    returned: dict[SSAValue, bool] = {}
    copies: dict[SSAValue, SSAValue] = {}
    for op in list(block.ops):
        if isinstance(op, fusion.ReshapeOp) and _may_be_strided(op.input, memo) and (
                not _splits_only(op) or _pins_more_than_returned(op, returned)):
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
        new_ops.append(clone_op(op, mapping))
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
    new_ops.append(clone_op(ret, mapping))

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
        clone = clone_op(c)
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
