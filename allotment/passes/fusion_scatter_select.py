"""`fusion-scatter-select`: a scatter of one element per slice into a fill is a select.

`scatter(full(c), index, src, dim d)` with an index of extent 1 along `d` (and the
input's extents elsewhere, all static) writes one element of each slice along `d`: the
result is `c` but at `index`, where it is `src`. The gradient of nll_loss is this scatter
(`-grad / N` at each label, 0 elsewhere, [tokens, vocabulary] in f32); as a scatter it is
a kernel of its own that fills and writes the whole tensor (a scatter's result is complete
only once its kernel has run: `fusion-segment` keeps it apart), which the log-softmax
backward then reads back. This pass rewrites it as

    where(iota_d == index', src, full(c))

an elementwise value that fuses into its consumers: nothing is stored. `iota_d` is the
iota along `d` (broadcast to the input's shape) and `index'` the index read through
`fusion.index_select` of an iota of the extent of `d`: the same values, but an index
outside `[0, extent)` is still an error of the program, raised before any kernel, naming
the scatter's index operand, as the scatter's own check did. The values are the
scatter's: `src` where the column is the index, `c` elsewhere (one index per slice, so no
two writes meet).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from allotment.dialects import fusion
from allotment.ir import ops_in_flat_functions
from allotment.passes.fusion_sink_gather import _erase_dead, _static, index_checks_of


def one_per_slice(op: fusion.ScatterOp) -> bool:
    """Whether `op` scatters one element per slice along its dim into a `fusion.full`
    (index extent 1 there, the input's extents elsewhere), every shape static."""
    x, idx = op.input.type, op.index.type
    if not (isinstance(op.input.owner, fusion.FullOp) and _static(x) and _static(idx) and _static(op.src.type)):
        return False
    d = op.indexed_dim()
    return idx.get_shape()[d] == 1 and all(a == b for k, (a, b) in enumerate(zip(idx.get_shape(), x.get_shape()))
                                           if k != d)


def scatter_to_select(op: fusion.ScatterOp) -> bool:
    """Rewrites one scatter (module docstring); returns whether anything changed."""
    if not one_per_slice(op):
        return False
    rewriter = Rewriter()
    new: list[Operation] = []

    def add(o: Operation) -> SSAValue:
        new.append(o)
        return o.results[0]

    x, idx = op.input.type, op.index.type
    shape, jshape, d = list(x.get_shape()), list(idx.get_shape()), op.indexed_dim()
    it = idx.element_type
    zero = add(arith.ConstantOp(IntegerAttr(0, it)))
    one = add(arith.ConstantOp(IntegerAttr(1, it)))

    def iota() -> SSAValue:
        return add(fusion.IotaOp.build(operands=[[], zero, one], result_types=[TensorType(it, [shape[d]])],
                                       properties={"static_length": DenseArrayBase.from_list(i64, [shape[d]])}))

    flat = add(fusion.ReshapeOp.create(
        operands=[op.index], result_types=[TensorType(it, [math.prod(jshape)])],
        properties={"static_shape": DenseArrayBase.from_list(i64, [math.prod(jshape)])}))
    checked = add(fusion.IndexSelectOp.create(operands=[iota(), flat], result_types=[TensorType(it, [math.prod(jshape)])],
                                              properties={"dim": IntegerAttr(0, i64)}, attributes=index_checks_of(op)))
    label = add(fusion.ReshapeOp.create(operands=[checked], result_types=[TensorType(it, jshape)],
                                        properties={"static_shape": DenseArrayBase.from_list(i64, jshape)}))
    if op.index.name_hint:
        flat.name_hint = op.index.name_hint  # the index check names the scatter's index operand
    columns = add(fusion.BroadcastInDimOp.create(
        operands=[iota()], result_types=[TensorType(it, shape)],  # computed in the kernel, not read
        properties={"static_shape": DenseArrayBase.from_list(i64, shape),
                    "broadcast_dims": DenseArrayBase.from_list(i64, [d])}))
    hit = add(fusion.EqOp(columns, label))
    result = add(fusion.WhereOp(hit, op.src, op.input, op.result.type))
    rewriter.insert_op(new, InsertPoint.before(op))
    op.result.replace_all_uses_with(result)
    op.detach()
    op.erase()
    _erase_dead([result.owner])
    return True


@dataclass(frozen=True)
class FusionScatterSelectPass(ModulePass):
    """Rewrites one-element-per-slice scatters into a fill as selects (module docstring)."""

    name = "fusion-scatter-select"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for s in ops_in_flat_functions(op, fusion.ScatterOp):
            scatter_to_select(s)
