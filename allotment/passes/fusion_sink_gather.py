"""`fusion-sink-gather`: a gather of one element per slice is computed from the gathered
inputs, not from a materialized tensor.

A `fusion.gather` reads its source from a buffer (`fusion-segment` keeps the source of an
indexing op a kernel output). When the source is computed elementwise from wider
tensors, that buffer is the whole computed tensor, written only to be read at a few
positions. The negative log-likelihood of a cross-entropy loss is the case that matters:
the ATen graph gathers the label's entry of `log_softmax(logits)`, so the row kernel of the
log-softmax stores every row ([tokens, vocabulary] in f32: 1 GiB for 8192 tokens of a
32000-word vocabulary) and the row is held on chip to be stored; Inductor instead computes
the picked entries from the logits and the row's max and log-sum.

This pass rewrites `gather(f(a, b, ...), index, dim d)` into `f(gather(a, index),
gather(b, index), ...)`, recursively, when the index has extent 1 along `d` and the
gather's other extents equal the source's (static): one element of each slice along `d`
(nll_loss, `take_along_axis` of a label). Each operand of an elementwise op (or cast) is
either

- of the op's shape: it is gathered in turn;
- of extent 1 along `d` and, in every other dim, 1 or the op's extent (a per-row value
  such as the row's max, broadcast along `d`): it is used as it is, since its value is the
  same at every position of the slice;
- a scalar: used as it is;

and anything else stops the rewrite at that op (its result is gathered). A reshape that
keeps `d` as its last dim with the same extent, and only regroups the dims before it, is
passed too (the gather goes to its input, through reshapes of the index and of the
result). Where the rewrite stops, the gather reads that value; ops left without uses
are erased.

The gathered values are computed by the same ops on the same operands as the
elements they replace, so the results are bit for bit those of the original gather. A
gather remains at every leaf, on a tensor of the same extent along `d` as the original
source (elementwise ops broadcast static extents of 1 only), so the host program's check
of the index against that extent is unchanged. Shapes must be static and no tensor may be
sharded; otherwise the function is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, IntegerAttr, ModuleOp, NoneAttr, TensorType, i64
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from allotment.dialects import fusion
from allotment.ir import ops_in_flat_functions

MAX_SUNK_OPS = 64
"""At most this many ops are rebuilt on the gathered elements per gather (a bound on the
work of one rewrite; past it the gather stays where it is)."""


def _static(t: object) -> bool:
    return isinstance(t, TensorType) and DYNAMIC_INDEX not in t.get_shape() and isinstance(t.encoding, NoneAttr)


@dataclass
class _Sinker:
    """Rebuilds the values a gather reads on the gathered elements, before `at`."""

    index: SSAValue
    dim: int
    at: Operation
    budget: int = MAX_SUNK_OPS
    checks: dict[str, Attribute] = field(default_factory=dict)
    """The rewritten gather's `index_check` (where it is set), carried to every gather made."""

    def __post_init__(self) -> None:
        self.memo: dict[SSAValue, SSAValue] = {}
        self.rewriter = Rewriter()

    def insert(self, op: Operation) -> Operation:
        self.rewriter.insert_op(op, InsertPoint.before(self.at))
        return op

    def gathered(self, v: SSAValue) -> SSAValue:
        """A value of the index's shape: `gather(v, index, dim)` computed from v's inputs
        where the rules of the module docstring allow it."""
        if v in self.memo:
            return self.memo[v]
        out = self._rebuilt(v)
        if out is None:
            out = self.insert(fusion.GatherOp.create(
                operands=[v, self.index], result_types=[self._like(v)],
                properties={"dim": IntegerAttr(self.dim, i64)}, attributes=dict(self.checks))).results[0]
        self.memo[v] = out
        return out

    def _like(self, v: SSAValue) -> TensorType:
        t = v.type
        assert isinstance(t, TensorType)
        return TensorType(t.element_type, self.index.type.get_shape())

    def _rebuilt(self, v: SSAValue) -> SSAValue | None:
        op = v.owner
        if not isinstance(op, Operation) or self.budget <= 0 or not _static(v.type):
            return None
        shape = list(v.type.get_shape())
        if isinstance(op, fusion.CastOp):
            self.budget -= 1
            return self.insert(fusion.CastOp(self.gathered(op.input), v.type.element_type)).results[0]
        if isinstance(op, fusion.ReshapeOp):
            return self._through_reshape(op, shape)
        if not isinstance(op, fusion.ElementwiseOp) or len(op.results) != 1:
            return None
        operands: list[SSAValue] = []
        for x in op.operands:
            t = x.type
            if not isinstance(t, TensorType):
                operands.append(x)
            elif not _static(t) or len(t.get_shape()) != len(shape):
                return None
            elif list(t.get_shape()) == shape:
                operands.append(x)  # gathered below, once the op is known to qualify
            elif t.get_shape()[self.dim] == 1 and all(
                    e in (1, s) for d, (e, s) in enumerate(zip(t.get_shape(), shape)) if d != self.dim):
                operands.append(x)
            else:
                return None
        self.budget -= 1
        operands = [self.gathered(x) if isinstance(x.type, TensorType) and list(x.type.get_shape()) == shape
                    else x for x in operands]
        new = type(op).create(operands=operands, result_types=[self._like(v)],
                              properties=dict(op.properties), attributes=dict(op.attributes))
        return self.insert(new).results[0]

    def _through_reshape(self, op: fusion.ReshapeOp, shape: list[int]) -> SSAValue | None:
        """`gather(reshape(y))` as `reshape(gather(y, reshape(index)))` where the reshape keeps
        the gathered dim last, with its extent, and only regroups the dims before it."""
        src = op.input.type
        if not _static(src) or op.shape:
            return None
        ys = list(src.get_shape())
        if self.dim != len(shape) - 1 or not ys or ys[-1] != shape[-1]:
            return None
        self.budget -= 1
        index_shape = [*ys[:-1], 1]
        idx = self.insert(fusion.ReshapeOp.create(
            operands=[self.index], result_types=[TensorType(self.index.type.element_type, index_shape)],
            properties={"static_shape": DenseArrayBase.from_list(i64, index_shape)})).results[0]
        inner = _Sinker(idx, len(ys) - 1, self.at, self.budget, self.checks)
        g = inner.gathered(op.input)
        self.budget = inner.budget
        out = list(self.index.type.get_shape())
        return self.insert(fusion.ReshapeOp.create(
            operands=[g], result_types=[TensorType(src.element_type, out)],
            properties={"static_shape": DenseArrayBase.from_list(i64, out)})).results[0]


def index_checks_of(op: Operation) -> dict[str, Attribute]:
    """The `index_check` attribute of an indexing op, for the indexing ops that replace it
    (where its indices are checked was decided on the op, by `fusion-index-checks`)."""
    check = op.attributes.get(fusion.INDEX_CHECK)
    return {fusion.INDEX_CHECK: check} if check is not None else {}


def one_per_slice(op: fusion.GatherOp) -> bool:
    """Whether `op` gathers one element of each slice along its dim (index extent 1 there,
    the source's extents elsewhere), every shape static and unsharded."""
    src, idx = op.input.type, op.index.type
    if not (_static(src) and _static(idx) and _static(op.result.type)):
        return False
    d = op.indexed_dim()
    return idx.get_shape()[d] == 1 and all(
        a == b for k, (a, b) in enumerate(zip(idx.get_shape(), src.get_shape())) if k != d)


def sink_gather(op: fusion.GatherOp) -> bool:
    """Rewrites one gather (module docstring); returns whether anything changed."""
    if not one_per_slice(op) or not isinstance(op.input, OpResult):
        return False
    sinker = _Sinker(op.index, op.indexed_dim(), op, checks=index_checks_of(op))
    new = sinker._rebuilt(op.input)
    if new is None:
        return False
    dead = [op.input.owner]
    op.result.replace_all_uses_with(new)
    op.detach()
    op.erase()
    _erase_dead(dead)
    return True


def _erase_dead(pending: list[Operation]) -> None:
    while pending:
        op = pending.pop()
        if op.parent is None or any(r.uses for r in op.results) or not is_side_effect_free(op):
            continue
        producers = [x.owner for x in op.operands if isinstance(x.owner, Operation)]
        op.detach()
        op.erase()
        pending.extend(producers)


@dataclass(frozen=True)
class FusionSinkGatherPass(ModulePass):
    """Computes one-element-per-slice gathers from their elementwise inputs (module
    docstring)."""

    name = "fusion-sink-gather"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in ops_in_flat_functions(op, fusion.GatherOp):
            sink_gather(g)
