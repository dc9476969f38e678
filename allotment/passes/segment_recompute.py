"""Recomputation in `fusion-segment`'s grouping (`passes/fusion_segment.py`): a short chain of
pointwise ops whose value another kernel would otherwise read from memory is cloned into
that kernel instead (a reduction's input, a value shared by several kernels, a pointwise
group read by several consumers), when that never adds memory traffic. Bounded by
RECOMPUTE_MAX_OPS ops and RECOMPUTE_MAX_INPUTS inputs."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from allotment.dialects import fusion
from allotment.dtypes import element_nbytes
from allotment.extents.symbolic import Extent
from allotment.passes.segment_groups import (
    BROADCAST_VIEWS,
    GATHERS,
    INDEXING,
    LAYOUT_VIEWS,
    LIBRARY,
    REDUCTIONS,
    SCANS,
    SORTS,
    Group,
    clone_op,
)
from allotment.passes.segment_rules import GroupRules


def _element_bytes(t: TensorType) -> int:
    return element_nbytes(t.element_type)


class Recomputation(GroupRules):
    """The recomputing moves of the grouping, over the state and rules of `GroupRules`."""

    RECOMPUTE_MAX_OPS = 16
    RECOMPUTE_MAX_INPUTS = 4

    def _recompute_shared_inputs(self) -> None:
        """A kernel that reads a value another kernel computes (and would write to memory
        for it) recomputes it instead, when the value is a chain of at most
        RECOMPUTE_MAX_OPS pointwise ops and broadcasts of function arguments whose
        full-domain inputs take no more bytes per element than the value: the producer's
        kernel keeps it in registers, nothing is written, and the consumer reads fewer
        bytes (RMSNorm backward: the dw column sum computes x * rstd and dy * w, which the
        dx normalization kernel then recomputes instead of reading two f32 buffers)."""
        returned = self.returned_values()
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
            clone = clone_op(o, mapping)
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
