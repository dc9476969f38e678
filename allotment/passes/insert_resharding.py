"""`fusion-insert-resharding`: the communication a sharded fusion needs, as `comm` ops.

Runs after `fusion-propagate-sharding` and before `fusion-segment`, on sharded
functions only. It guarantees:

- Every `fusion.set` whose result is sharded otherwise than its input becomes
  a chain of `comm` ops (`dialects/comm.py`), in steps:
  within one mesh, split dims that must become whole are gathered
  (`comm.all_gather`), then whole dims that must become split are sliced
  locally (`comm.shard`; a split moving from one dim to another is thus an
  all-gather and a slice, where an all-to-all would move less); between meshes, a split input is first gathered on
  its mesh, moved whole (`comm.transfer`: sends and receives, a broadcast to a
  larger mesh), then sliced on the target mesh. A tensor without sharding is
  already whole on every rank: it only needs `comm.shard`. A `fusion.set`
  between equal types stays a copy.
- Every reduction (sum, prod, max, min, mean) over a split dim, and every
  matmul or linear whose contraction dim is split, computes a partial result
  on each device; a `comm.all_reduce` over the contraction's mesh axes
  completes it, and is then its only use (a partial result already used only
  by collectives is left as it is: the pass is idempotent). An all-reduce whose only use slices
  one whole dim over the same axes is fused into a `comm.reduce_scatter`.
- Located errors, at the op at fault, for what cannot be completed by a
  collective: var_mean over a split dim, a linear with a bias over a split
  contraction (the bias would be added once per device), and a reduction or
  contraction over an unevenly split dim (the padding of the last shard would
  be reduced with the data).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from allotment.diagnostics import SOURCE_SPANS
from allotment.dialects import comm, fusion
from allotment.dialects import sharding_rules as sr
from allotment.passes.sharding_propagation import ShardedFunctionPass, check_propagated, fail

NAME = "fusion-insert-resharding"

REDUCTION_KIND: dict[type, str] = {
    fusion.SumOp: "sum", fusion.ProdOp: "prod", fusion.MaxOp: "max", fusion.MinOp: "min", fusion.MeanOp: "mean",
    fusion.MatmulOp: "sum", fusion.LinearOp: "sum",
}


def _typed(v: SSAValue, s: fusion.ShardingAttr | None) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType)
    return sr.with_sharding(t, s)


class _Resharding:
    def __init__(self, f: func.FuncOp) -> None:
        self.f = f

    def run(self) -> None:
        for op in list(self.f.body.block.ops):
            if isinstance(op, fusion.SetOp):
                self._set(op)
        for op in list(self.f.body.block.ops):
            if isinstance(op, fusion.FusionOp):
                self._partial(op)

    # -- fusion.set -> comm ops --------------------------------------------------

    def _set(self, op: fusion.SetOp) -> None:
        src, dst = sr.sharding_of(op.input.type), sr.sharding_of(op.result.type)
        if sr.equivalent(src, dst):
            return
        chain: list[comm.CommOp] = []
        value = op.input

        def step(cls: type[comm.CommOp], s: fusion.ShardingAttr | None) -> None:
            nonlocal value
            new = cls(value, _typed(value, s))
            new.result.name_hint = f"{op.result.name_hint or 'v'}_{cls.name.removeprefix('comm.')}"
            chain.append(new)
            value = new.result

        same_mesh = src is not None and dst is not None and src.mesh == dst.mesh
        if same_mesh:
            assert src is not None and dst is not None
            gathered = [[] if a and a != b else list(a) for a, b in zip(src.axes, dst.axes)]
            if gathered != src.axes:
                step(comm.AllGatherOp, sr.make(src.mesh.root_reference.data, gathered, src.allows_uneven))
            if not sr.equivalent(sr.sharding_of(value.type), dst):
                step(comm.ShardOp, dst)
        elif src is None:
            step(comm.ShardOp, dst)
        else:
            rank = len(src.axes)
            mesh = src.mesh.root_reference.data
            if sr.is_split(src):
                step(comm.AllGatherOp, sr.replicated(mesh, rank))
            whole_dst = None if dst is None else sr.replicated(dst.mesh.root_reference.data, rank)
            step(comm.TransferOp, whole_dst)
            if dst is not None and not sr.equivalent(dst, whole_dst):
                step(comm.ShardOp, dst)
        Rewriter.insert_op(chain, InsertPoint.before(op))
        for c in chain:
            if op in SOURCE_SPANS:
                SOURCE_SPANS[c] = SOURCE_SPANS[op]
        chain[-1].result.name_hint = op.result.name_hint
        op.result.replace_all_uses_with(chain[-1].result)
        Rewriter.erase_op(op)

    # -- partial results -> all_reduce / reduce_scatter ---------------------------

    def _partial(self, op: fusion.FusionOp) -> None:
        rules = sr.operand_dims(op)
        if rules is None or not any(sr.sharding_of(v.type) for v in op.operands):
            return
        axes = sorted({a for k in sr.contraction_axes(op, rules).values() for a in k})
        if not axes:
            return
        users = [u.operation for r in op.results for u in r.uses]
        if users and all(isinstance(u, comm.AllReduceOp | comm.ReduceScatterOp) for u in users):
            return  # already completed (the pass ran before, or the IR says so)
        if isinstance(op, fusion.VarMeanOp | fusion.WelfordOp):
            what = op.name.removeprefix("fusion.")
            raise fail(op, NAME, f"{what} over a split dim is not supported: reshard its input whole first")
        if isinstance(op, fusion.LinearOp) and op.bias is not None:
            raise fail(op, NAME, "a linear with a bias over a split contraction dim would add the bias once per "
                                 "device: drop the bias from the linear and add it after")
        kind = REDUCTION_KIND.get(type(op))
        if kind is None:
            raise fail(op, NAME, f"{op.name} over a split dim has no collective to complete it")
        uneven = [v for v in op.operands if (s := sr.sharding_of(v.type)) is not None and s.allows_uneven]
        if uneven:
            raise fail(op, NAME, "a reduction over an unevenly split dim would reduce the last shard's padding: "
                                 "shard that dim evenly")
        result = op.results[0]
        uses = list(result.uses)
        reduce = comm.AllReduceOp(result, result.type, kind, axes)
        Rewriter.insert_op(reduce, InsertPoint.after(op))
        if op in SOURCE_SPANS:
            SOURCE_SPANS[reduce] = SOURCE_SPANS[op]
        reduce.result.name_hint = result.name_hint
        result.name_hint = f"{result.name_hint}_partial" if result.name_hint else None
        for use in uses:
            use.operation.operands[use.index] = reduce.result
        self._fuse_scatter(reduce)

    def _fuse_scatter(self, reduce: comm.AllReduceOp) -> None:
        uses = list(reduce.result.uses)
        if len(uses) != 1 or not isinstance(uses[0].operation, comm.ShardOp):
            return
        shard = uses[0].operation
        src, dst = shard.source, shard.target
        assert src is not None and dst is not None
        changed = [d for d, (a, b) in enumerate(zip(src.axes, dst.axes)) if a != b]
        if len(changed) != 1 or dst.axes[changed[0]] != reduce.axis_list or src.axes[changed[0]]:
            return
        scatter = comm.ReduceScatterOp(reduce.input, shard.result.type, reduce.kind.data, reduce.axis_list)
        Rewriter.insert_op(scatter, InsertPoint.before(shard))
        if reduce in SOURCE_SPANS:
            SOURCE_SPANS[scatter] = SOURCE_SPANS[reduce]
        scatter.result.name_hint = shard.result.name_hint
        shard.result.replace_all_uses_with(scatter.result)
        Rewriter.erase_op(shard)
        Rewriter.erase_op(reduce)


def check_resharded(f: func.FuncOp) -> None:
    """No resharding `fusion.set` is left, and every partial result is completed."""
    for op in f.body.block.ops:
        if isinstance(op, fusion.SetOp) and not sr.equivalent(sr.sharding_of(op.input.type), sr.sharding_of(op.result.type)):
            raise fail(op, NAME, "a resharding fusion.set is left")
        if isinstance(op, fusion.FusionOp) and not isinstance(op, fusion.SetOp):
            rules = sr.operand_dims(op)
            if rules is None or not any(sr.contraction_axes(op, rules).values()):
                continue
            users = [u.operation for r in op.results for u in r.uses]
            if not users or not all(isinstance(u, comm.AllReduceOp | comm.ReduceScatterOp) for u in users):
                raise fail(op, NAME, "a partial result must be used only by comm.all_reduce or comm.reduce_scatter")


@dataclass(frozen=True)
class InsertReshardingPass(ShardedFunctionPass):
    """Turns reshardings and partial results of sharded fusions into `comm` collectives."""

    name = "fusion-insert-resharding"

    def run_on(self, f: func.FuncOp) -> None:
        check_propagated(f, NAME)
        _Resharding(f).run()
        check_resharded(f)

