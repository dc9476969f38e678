"""`fusion-expose`: rewrites that let `fusion-segment` fuse what a decomposed graph splits.

AOTAutograd's decompositions of a language-model loss (`log_softmax` + `nll_loss` and
their backwards) reach the fusion dialect in a form whose literal grouping materializes
full-size f32 copies of the logits: a cast separated from its reduction by a reshape
(`[B, S, V] -> [B*S, V]`), a `gather` that reads the log-softmax at one index per row,
and a `scatter` of a one-hot into a `full` of zeros. Each becomes a buffer of the logits'
size (8192 x 32000 x 4 B = 1 GiB at batch 8, sequence 1024). These rewrites, applied to a
fixed point, remove them without changing any value:

- **reshape of a reshape**: one reshape of the first one's input, or that input itself
  where the shapes are equal.
- **reshape of a cast** (`reshape(cast(x))`, the cast used only by reshapes, `x` not
  computed by an elementwise op): `cast(reshape(x))`. The reshape becomes a view of `x`'s
  buffer and the cast joins the kernel of its consumer.
- **elementwise of a reshape** (`P(reshape(y), w...)` with `y` computed by an elementwise
  op or cast, every other tensor operand of `P`'s result shape): `reshape(P(y,
  reshape(w)...))`, so `P` joins `y`'s kernel. (The two rules never undo each other: one
  needs `y` elementwise, the other needs it not.)
- **gather of an elementwise op** (`gather(P(a, b...), idx, dim d)`, `idx` of the source's
  extents except at `d`, each operand of `P` either of the source's shape or of extent 1
  at `d` and broadcast along it): `P(gather(a, idx), b...)`. Gathering one element of a
  row of `x - max - log(sum)` reads one element of `x`: the log-softmax is never written.
- **scatter into a full** (`scatter(full(c), idx, src, dim d)`, `idx` of extent 1 at `d`
  and of the full's extents elsewhere): `where(iota_d == idx, src, c)`, a pointwise op
  (Inductor's `scatter_upon_const_tensor`). The one-hot of `nll_loss_backward` fuses
  into the log-softmax backward.

Ops with sharded types are left alone. Values nobody uses afterwards are erased.
`fusion-segment` runs these rewrites first (`expose=false` turns them off); the pass
exists on its own so that FileCheck sees each one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, ModuleOp, NoneAttr, TensorType, i1, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from allotment.analysis.shapes import ShapeAnalysis, ShapeError, reify_shapes
from allotment.diagnostics import walk_ops
from allotment.dialects import fusion
from allotment.extents.symbolic import Const, Extent
from allotment.limits import call_with_deep_stack
from allotment.passes.size_builder import SizeBuilder

MAX_SWEEPS = 64
"""Each sweep rewrites every match it finds; a chain of n views needs at most n sweeps."""


def _elementwise(op: Operation | None) -> bool:
    """An op computed element by element (a copy, `fusion.set`, is a deliberate buffer)."""
    return isinstance(op, fusion.ElementwiseOp | fusion.CastOp) and not isinstance(op, fusion.SetOp)


def _plain(op: Operation) -> bool:
    """No operand or result carries a sharding."""
    return all(not isinstance(v.type, TensorType) or isinstance(v.type.encoding, NoneAttr)
               for v in (*op.operands, *op.results))


def _build(cls: type[IRDLOperation], operands: list, properties: dict, result_types: list | None = None) -> Any:
    """A fusion op from the generic builder (grouped operands), with its inferred result types."""
    op = cls.__new__(cls)
    IRDLOperation.__init__(op, operands=operands, result_types=result_types or [TensorType(i1, [])],
                           properties=properties)
    fusion.retype_results(op)
    return op


class _Rewriter:
    """One sweep over a function: the shape analysis of its state at the sweep's start."""

    def __init__(self, f: func.FuncOp) -> None:
        self.f = f
        self.block: Block = f.body.block
        self.shapes: ShapeAnalysis = reify_shapes(f)
        self.sizes = SizeBuilder(list(self.block.args), use_tensor_dim=True)
        self.first = self.block.first_op

    def shape(self, v: SSAValue) -> tuple[Extent, ...] | None:
        return self.shapes.shape(v) if v in self.shapes.extents else None

    def _reshape(self, v: SSAValue, extents: tuple[Extent, ...], before: Operation) -> SSAValue:
        """`fusion.reshape` of `v` to `extents`, its `?` sizes built from the arguments."""
        t = v.type
        assert isinstance(t, TensorType)
        static = [e.value if isinstance(e, Const) else DYNAMIC_INDEX for e in extents]
        dynamic = [self.sizes.value(e) for e in extents if not isinstance(e, Const)]
        for op in self.sizes.ops:
            self.block.insert_op_before(op, self.first)
        self.sizes.ops.clear()
        op = fusion.ReshapeOp.create(operands=[v, *dynamic], result_types=[TensorType(t.element_type, static)],
                                     properties={"static_shape": fusion.int_list(static)})
        self.block.insert_op_before(op, before)
        return op.result

    def _rebuild(self, op: Operation, operands: list[SSAValue], shape: list[int], before: Operation) -> SSAValue:
        """A copy of elementwise `op` on new operands, its result of `shape` (static, `?`)."""
        t = op.results[0].type
        assert isinstance(t, TensorType)
        new = op.clone()
        new.operands = operands
        for r in new.results:  # no uses yet: retype in place
            r._type = TensorType(t.element_type, shape)  # noqa: SLF001 (xdsl has no setter for a fresh value)
        self.block.insert_op_before(new, before)
        return new.results[0]

    # -- the rules -------------------------------------------------------

    def reshape_of_reshape(self, op: fusion.ReshapeOp) -> bool:
        """A reshape to its input's own shape is the input; a reshape of a reshape, one reshape."""
        if self.shape(op.result) == self.shape(op.input):
            op.result.replace_all_uses_with(op.input)
            return True
        inner = op.input.owner
        if not isinstance(inner, fusion.ReshapeOp):
            return False
        if self.shape(op.result) == self.shape(inner.input):
            op.result.replace_all_uses_with(inner.input)
            return True
        merged = fusion.ReshapeOp.create(operands=[inner.input, *op.shape], properties=dict(op.properties),
                                         result_types=[op.result.type])
        self.block.insert_op_before(merged, op)
        op.result.replace_all_uses_with(merged.result)
        return True

    def reshape_of_cast(self, op: fusion.ReshapeOp) -> bool:
        src = op.input.owner
        if not isinstance(src, fusion.CastOp) or _elementwise(src.input.owner):
            return False
        if not all(isinstance(u.operation, fusion.ReshapeOp) for u in src.result.uses):
            return False
        moved = fusion.ReshapeOp.create(operands=[src.input, *op.shape], properties=dict(op.properties),
                                        result_types=[TensorType(src.input.type.element_type,
                                                                 op.result.type.get_shape())])
        self.block.insert_op_before(moved, op)
        cast = fusion.CastOp(moved.result, op.result.type.element_type)
        self.block.insert_op_before(cast, op)
        op.result.replace_all_uses_with(cast.result)
        return True

    def elementwise_of_reshape(self, op: Operation) -> bool:
        out = self.shape(op.results[0])
        if out is None:
            return False
        views = [v for v in op.operands if isinstance(v.owner, fusion.ReshapeOp) and _elementwise(v.owner.input.owner)]
        if not views:
            return False
        inner = self.shape(views[0].owner.input)
        if inner is None:
            return False
        operands: list[SSAValue] = []
        for v in op.operands:
            if not isinstance(v.type, TensorType):
                operands.append(v)
                continue
            if self.shape(v) != out:
                return False
            if isinstance(v.owner, fusion.ReshapeOp) and self.shape(v.owner.input) == inner:
                operands.append(v.owner.input)
            else:
                operands.append(self._reshape(v, inner, op))
        inner_static = [e.value if isinstance(e, Const) else DYNAMIC_INDEX for e in inner]
        computed = self._rebuild(op, operands, inner_static, op)
        view = views[0].owner
        back = fusion.ReshapeOp.create(operands=[computed, *view.shape], properties=dict(view.properties),
                                       result_types=[TensorType(computed.type.element_type,
                                                                op.results[0].type.get_shape())])
        self.block.insert_op_before(back, op)
        op.results[0].replace_all_uses_with(back.result)
        return True

    def gather_of_elementwise(self, op: fusion.GatherOp) -> bool:
        src = op.input.owner
        if not _elementwise(src):
            return False
        d = op.indexed_dim()
        xs, js = self.shape(op.input), self.shape(op.index)
        if xs is None or js is None or any(a != b for k, (a, b) in enumerate(zip(xs, js)) if k != d):
            return False
        operands: list[SSAValue] = []
        for v in src.operands:
            if not isinstance(v.type, TensorType):
                operands.append(v)
                continue
            vs = self.shape(v)
            if vs == xs:
                g = fusion.GatherOp.create(operands=[v, op.index], properties=dict(op.properties),
                                           result_types=[TensorType(v.type.element_type, op.result.type.get_shape())])
                self.block.insert_op_before(g, op)
                operands.append(g.result)
            elif (vs is not None and len(vs) == len(xs) and vs[d] == Const(1)
                  and all(a in (b, Const(1)) for k, (a, b) in enumerate(zip(vs, xs)) if k != d)):
                operands.append(v)
            else:
                return False
        r = self._rebuild(src, operands, list(op.result.type.get_shape()), op)
        op.result.replace_all_uses_with(r)
        return True

    def scatter_into_full(self, op: fusion.ScatterOp) -> bool:
        full = op.input.owner
        if not isinstance(full, fusion.FullOp):
            return False
        d = op.indexed_dim()
        xs, js = self.shape(op.input), self.shape(op.index)
        if xs is None or js is None or js[d] != Const(1):
            return False
        if any(a != b for k, (a, b) in enumerate(zip(xs, js)) if k != d):
            return False
        rank = len(xs)
        length = xs[d]
        zero = arith.ConstantOp(IntegerAttr(0, i64))
        one = arith.ConstantOp(IntegerAttr(1, i64))
        self.block.insert_op_before(zero, self.first)
        self.block.insert_op_before(one, self.first)
        if isinstance(length, Const):
            lengths: list[SSAValue] = []
            static = [length.value]
        else:
            lengths = [self.sizes.value(length)]
            for s in self.sizes.ops:
                self.block.insert_op_before(s, self.first)
            self.sizes.ops.clear()
            static = [DYNAMIC_INDEX]
        iota = _build(fusion.IotaOp, [lengths, zero.result, one.result], {"static_length": fusion.int_list(static)},
                      [TensorType(i64, static)])
        self.block.insert_op_before(iota, op)
        column = [1] * rank
        column[d] = DYNAMIC_INDEX if not isinstance(length, Const) else length.value
        bcast = _build(fusion.BroadcastInDimOp, [iota.result, lengths],
                       {"static_shape": fusion.int_list(column), "broadcast_dims": fusion.int_list([d])})
        self.block.insert_op_before(bcast, op)
        eq = fusion.EqOp(bcast.result, op.index)
        self.block.insert_op_before(eq, op)
        where = fusion.WhereOp(eq.result, op.src, full.value)
        self.block.insert_op_before(where, op)
        result: SSAValue = where.result
        t = op.result.type
        if result.type != t:
            if result.type.element_type != t.element_type:
                cast = fusion.CastOp(result, t.element_type)
                self.block.insert_op_before(cast, op)
                result = cast.result
            if tuple(result.type.get_shape()) != tuple(t.get_shape()):
                return self._abandon([where, eq, bcast, iota] + ([result.owner] if result is not where.result else []))
        op.result.replace_all_uses_with(result)
        return True

    def _abandon(self, ops: list[Operation]) -> bool:
        for o in ops:
            self.block.erase_op(o)
        return False

    def sweep(self) -> int:
        done = 0
        for op in list(self.block.ops):
            if op.parent is None or not isinstance(op, fusion.FusionOp) or not _plain(op):
                continue
            if any(r not in self.shapes.extents for r in op.results if isinstance(r.type, TensorType)):
                continue  # made in this sweep
            if isinstance(op, fusion.ReshapeOp):
                changed = self.reshape_of_reshape(op) or self.reshape_of_cast(op)
            elif isinstance(op, fusion.GatherOp):
                changed = self.gather_of_elementwise(op)
            elif isinstance(op, fusion.ScatterOp):
                changed = self.scatter_into_full(op)
            elif _elementwise(op):
                changed = self.elementwise_of_reshape(op)
            else:
                changed = False
            if changed:
                done += 1
        return done


def expose_fusion(f: func.FuncOp) -> int:
    """Applies the rewrites to `f` until none applies; returns how many were made. A body
    whose shapes cannot be reified is left as it is (`fusion-segment` reports it)."""
    if f.is_declaration or len(f.body.blocks) != 1 or any(op.regions for op in f.body.block.ops):
        return 0
    if not any(isinstance(op, fusion.ReshapeOp | fusion.GatherOp | fusion.ScatterOp) for op in f.body.block.ops):
        return 0
    total = 0
    for _ in range(MAX_SWEEPS):
        try:
            made = _Rewriter(f).sweep()
        except ShapeError:
            return total
        if not made:
            break
        total += made
        block = f.body.block
        for op in reversed(list(block.ops)):
            if is_trivially_dead(op):
                block.erase_op(op)
    return total


@dataclass(frozen=True)
class FusionExposePass(ModulePass):
    """The rewrites of the module docstring on every fusion function."""

    name = "fusion-expose"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        call_with_deep_stack(lambda: [expose_fusion(f) for f in list(walk_ops(op)) if isinstance(f, func.FuncOp)])
