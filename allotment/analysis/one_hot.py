"""One-hot sums: a sum over a row that picks at most one element of it.

nvFuser's cross-entropy (and any loss written without a gather) takes the label's
logit as

    sum_j where(j == label, x[..., j], 0)        (iota == label, reduced over j)

Every column but one contributes 0, so the sum is `x[..., label]` when
`0 <= label < N` and 0 otherwise. A kernel that streams the row would compare
every column with the label and add (five instructions an element on an H200);
`one_hot_pick` recognizes the pattern so that the code generator reads the one
element instead (`row_reduction.RowEmitter.pick_one_hot`), once per row.

The match, on the ops of one kernel body (or a fusion function):

- `fusion.sum` over exactly one dim d of a `fusion.where(pred, x, 0)`, or of
  `fusion.where(pred', 0, x)` with `pred'` a `fusion.ne`; the 0 is an
  `arith.constant` zero (of either sign);
- `pred` is `fusion.eq` (or `ne`) of a column index and a row value, in either
  order:
  - the column index is `fusion.iota` with constant start 0 and step 1, either
    itself (a 1-D row) or through one `fusion.broadcast_in_dim` that puts the
    iota's dim on d, with the iota's length the broadcast's extent at d (the same
    static extent or the same `index` value), so that column j holds j;
  - the row value is an integer tensor of the domain's rank whose extent at d is
    the static 1 (it is constant along the row);
- x is a tensor.

It is an analysis: it reads the IR and returns the parts (`OneHot`), and the
sum's value is unchanged by reading x at the label: x[label] + 0.0 (+0.0 for a
picked -0.0, as the sum gives), NaN and inf included; 0 for a label out of range.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from allotment.dialects import fusion
from allotment.dialects.fusion_rules import DYNAMIC


@dataclass(frozen=True)
class OneHot:
    """`sum` picks `value[..., label]` along `dim` (0 where the label is out of range)."""

    value: SSAValue
    label: SSAValue
    dim: int


def _constant(v: SSAValue) -> float | int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr | IntegerAttr):
        return op.value.value.data
    return None


def _extent(static: list[int], dynamic: tuple[SSAValue, ...], i: int) -> int | SSAValue:
    """Extent i of a `DynamicIndexList` (its static value, or its `index` operand)."""
    if static[i] != DYNAMIC:
        return static[i]
    return dynamic[sum(1 for s in static[:i] if s == DYNAMIC)]


def _counts_columns(v: SSAValue, dim: int, rank: int) -> bool:
    """Whether v holds j at every index whose coordinate along `dim` is j."""
    op = v.owner
    if isinstance(op, fusion.BroadcastInDimOp):
        dims = [int(x) for x in op.broadcast_dims.get_values()]
        out = [int(x) for x in op.static_shape.get_values()]
        iota = op.input.owner
        if dims != [dim] or len(out) != rank or not isinstance(iota, fusion.IotaOp):
            return False
        length = _extent([int(x) for x in iota.static_length.get_values()], tuple(iota.length), 0)
        if length != _extent(out, tuple(op.shape), dim):  # a length-1 iota would broadcast 0
            return False
        op = iota
    elif not (isinstance(op, fusion.IotaOp) and rank == 1 and dim == 0):
        return False
    return _constant(op.start) == 0 and _constant(op.step) == 1


def _row_value(v: SSAValue, dim: int, rank: int) -> bool:
    t = v.type
    if not isinstance(t, TensorType) or not isinstance(t.element_type, IntegerType):
        return False
    shape = t.get_shape()
    return len(shape) == rank and shape[dim] == 1 and t.element_type.width.data > 1


def one_hot_pick(op: Operation) -> OneHot | None:
    """The parts of a one-hot sum (module docstring), or None where `op` is not one."""
    if not isinstance(op, fusion.SumOp):
        return None
    dims = op.reduced_dims()
    w = op.input.owner
    if len(dims) != 1 or not isinstance(w, fusion.WhereOp):
        return None
    (dim,) = dims
    rank = len(op.input.type.get_shape())
    pred = w.operands[0].owner
    if isinstance(pred, fusion.EqOp) and _constant(w.operands[2]) == 0:
        value = w.operands[1]
    elif isinstance(pred, fusion.NeOp) and _constant(w.operands[1]) == 0:
        value = w.operands[2]
    else:
        return None
    if not isinstance(value.type, TensorType) or len(value.type.get_shape()) != rank:
        return None
    a, b = pred.operands
    for cols, label in ((a, b), (b, a)):
        if _counts_columns(cols, dim, rank) and _row_value(label, dim, rank):
            return OneHot(value, label, dim)
    return None
