"""`fusion-expose`: rewrites that let `fusion-segment` fuse what a decomposed graph splits.

AOTAutograd's decompositions of a language-model loss (`log_softmax` + `nll_loss` and
their backwards) reach the fusion dialect in a form whose literal grouping materializes
full-size f32 copies of the logits: a cast separated from its reduction by a reshape
(`[B, S, V] -> [B*S, V]`), and elementwise ops split from their producers by reshapes.
Each becomes a buffer of the logits' size (8192 x 32000 x 4 B = 1 GiB at batch 8, sequence 1024). These rewrites, applied to a
fixed point, remove them without changing any value:

- **reshape of a reshape**: one reshape of the first one's input, or that input itself
  where the shapes are equal.
- **reshape of a cast** (`reshape(cast(x))`, the cast used only by reshapes, `x` not
  computed by an elementwise op): `cast(reshape(x))`. The reshape becomes a view of `x`'s
  buffer and the cast joins the kernel of its consumer.
- **reshape of a reduction that drops unit dims** (`[1, N] -> [N]`, the view of a `keepdim`
  reduction that an ATen graph writes as `view`): `fusion.squeeze` of those dims, which
  `fusion-segment` fuses into the reduction's kernel as it fuses any squeeze (a bias
  gradient's sum and the cast after its view, two kernels, become one). Only of a
  reduction: a reshape of an elementwise result is the next rule's, which moves the
  consumer into the producer's kernel instead (a squeeze there would keep them apart).
- **elementwise of a reshape** (`P(reshape(y), w...)` with `y` computed by an elementwise
  op or cast, every other tensor operand of `P`'s result shape): `reshape(P(y,
  reshape(w)...))`, so `P` joins `y`'s kernel. (The two rules never undo each other: one
  needs `y` elementwise, the other needs it not.)
- **a narrowing cast of a copied view** (`cast(L1(...Lk(y)))`, the `L` broadcasts,
  expands, reshapes, permutes or squeezes each used once, at least one of them repeating
  elements, the cast to a type no wider, `y` computed by an elementwise op or cast):
  `L1(...Lk(cast(y)))`. The cast joins `y`'s kernel, and the copy that materializes the
  repeated elements (the `fusion.set` of a reshape that merges an expanded dim, as a
  grouped-query attention's `repeat_kv` before its bf16 cast) moves the narrow type,
  not the wide one, in one kernel fewer. Casting each element once before it is repeated
  gives the same values as casting every copy. (It needs `y` elementwise, as the rule
  before; `reshape of a cast` needs it not, so neither undoes the other.)

Gathers and scatters are not this pass's: `fusion-sink-gather` (the gather of one element
a row) and `fusion-scatter-select` (the one-hot of `nll_loss_backward`) run before
`fusion-segment` and keep the indexing ops' index checks.

Ops with sharded types are left alone. Values nobody uses afterwards are erased.
The torch.compile frontend applies them to every graph (`expose_module`);
`fusion-segment{expose=true}` applies them first to any input, and the pass exists on its
own so that FileCheck sees each one. Text IR is segmented as written by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, NoneAttr, TensorType, i1
from xdsl.ir import Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from allotment.analysis.shapes import ShapeAnalysis, ShapeError, reify_shapes
from allotment.diagnostics import walk_ops
from allotment.dialects import fusion
from allotment.dtypes import element_nbytes
from allotment.errors import UnsupportedError
from allotment.extents.symbolic import Const, Extent
from allotment.limits import call_with_deep_stack
from allotment.passes.size_builder import SizeBuilder

MAX_SWEEPS = 64
"""Each sweep rewrites every match it finds; a chain of n views needs at most n sweeps."""


def _elementwise(op: Operation | None) -> bool:
    """An op computed element by element (a copy, `fusion.set`, is a deliberate buffer)."""
    return isinstance(op, fusion.ElementwiseOp | fusion.CastOp) and not isinstance(op, fusion.SetOp)


_LAYOUT = (fusion.BroadcastInDimOp, fusion.ExpandOp, fusion.ReshapeOp, fusion.PermuteOp, fusion.SqueezeOp)
"""Ops that move or repeat elements without computing: a cast commutes with each."""


def _repeats(op: Operation) -> bool:
    """A broadcast or expand that repeats elements: an extent-1 dim made wider (or `?`),
    or a new dim that is not of static extent 1."""
    if not isinstance(op, fusion.BroadcastInDimOp | fusion.ExpandOp):
        return False
    src, out = op.input.type.get_shape(), op.result.type.get_shape()
    if isinstance(op, fusion.ExpandOp):
        return any(a == 1 and b != 1 for a, b in zip(src, out, strict=True))
    dims = [int(d) for d in op.broadcast_dims.get_values()]
    new = [out[d] for d in range(len(out)) if d not in dims]
    return any(e != 1 for e in new) or any(src[i] == 1 and out[d] != 1 for i, d in enumerate(dims))


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

    def reshape_dropping_units(self, op: fusion.ReshapeOp) -> bool:
        """A reshape of a reduction whose result is its input less some static extent-1 dims:
        a squeeze."""
        if not isinstance(op.input.owner, fusion.ReductionOp):
            return False
        src, out = self.shape(op.input), self.shape(op.result)
        if src is None or out is None or len(out) >= len(src):
            return False
        dropped, j = [], 0
        for d, e in enumerate(src):
            if j < len(out) and e == out[j]:
                j += 1
            elif e == Const(1):
                dropped.append(d)
            else:
                return False
        if j != len(out):
            return False
        squeeze = _build(fusion.SqueezeOp, [op.input], {"dims": fusion.int_list(dropped)})
        if squeeze.result.type != op.result.type:  # a `?` the reshape knew static: keep it
            return False
        self.block.insert_op_before(squeeze, op)
        op.result.replace_all_uses_with(squeeze.result)
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

    def cast_of_copied_view(self, op: fusion.CastOp) -> bool:
        chain: list[Operation] = []  # the layout ops from the cast up to y
        v = op.input
        while isinstance(v.owner, _LAYOUT) and v.has_one_use() and _plain(v.owner):
            chain.append(v.owner)
            v = v.owner.input
        if not chain or not _elementwise(v.owner) or not any(_repeats(o) for o in chain):
            return False
        wide, narrow = op.input.type.element_type, op.result.type.element_type
        try:
            if element_nbytes(narrow) > element_nbytes(wide):
                return False
        except UnsupportedError:  # a type allotment.dtypes has no row for: left alone
            return False
        cast = fusion.CastOp(v, narrow)
        self.block.insert_op_before(cast, op)
        value: SSAValue = cast.result
        for layout in reversed(chain):
            new = layout.clone()
            new.operands = [value, *layout.operands[1:]]
            new.results[0]._type = TensorType(narrow, layout.results[0].type.get_shape())  # noqa: SLF001
            self.block.insert_op_before(new, op)
            value = new.results[0]
        op.result.replace_all_uses_with(value)
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
                changed = (self.reshape_of_reshape(op) or self.reshape_of_cast(op)
                           or self.reshape_dropping_units(op))
            elif _elementwise(op):
                changed = self.elementwise_of_reshape(op) or (
                    isinstance(op, fusion.CastOp) and self.cast_of_copied_view(op))
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
    if not any(isinstance(op, fusion.ReshapeOp | fusion.ExpandOp | fusion.BroadcastInDimOp) for op in f.body.block.ops):
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


def expose_module(module: ModuleOp) -> int:
    """Applies the rewrites to every function of `module` (on a deep stack); returns how many
    were made."""
    return sum(call_with_deep_stack(lambda: [expose_fusion(f) for f in list(walk_ops(module))
                                             if isinstance(f, func.FuncOp)]))


@dataclass(frozen=True)
class FusionExposePass(ModulePass):
    """The rewrites of the module docstring on every fusion function."""

    name = "fusion-expose"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expose_module(op)
