"""Matrix products: `matmul` and `linear`."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion.base import FusionOp, _expect_tensor, _tensor, retype_results
from allotment.dialects.fusion.pointwise import _placeholder
from allotment.dialects.fusion.reductions import _require_float
from allotment.dialects.fusion_rules import DYNAMIC, fmt_shape, type_name

# --------------------------------------------------------------------------- #
# Matrix products                                                             #
# --------------------------------------------------------------------------- #


def _check_contraction(k_a: int, k_b: int, what: str) -> None:
    if k_a != k_b and DYNAMIC not in (k_a, k_b):
        raise VerifyException(f"{what}: contracted extents {k_a} and {k_b} differ")


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """`torch.matmul`'s result shape (batch dims broadcast like elementwise ops)."""
    if not a or not b:
        raise VerifyException("matmul operands must have rank >= 1")
    if len(a) == 1 and len(b) == 1:
        _check_contraction(a[0], b[0], "matmul")
        return []
    if len(b) == 1:
        _check_contraction(a[-1], b[0], "matmul")
        return list(a[:-1])
    if len(a) == 1:
        _check_contraction(a[0], b[-2], "matmul")
        return list(b[:-2]) + [b[-1]]
    _check_contraction(a[-1], b[-2], "matmul")
    ba, bb = list(a[:-2]), list(b[:-2])
    n = max(len(ba), len(bb))
    ba, bb = [1] * (n - len(ba)) + ba, [1] * (n - len(bb)) + bb
    batch = rules.broadcast_shapes([ba, bb], ["lhs batch", "rhs batch"]) if n else ()
    return list(batch) + [a[-2], b[-1]]


def _require_same_float(types: Sequence[TensorType], op: str) -> Attribute:
    et = types[0].element_type
    _require_float(et, op)
    for i, t in enumerate(types[1:], 1):
        if t.element_type != et:
            raise VerifyException(
                f"{op} operands must share one element type: operand #0 is "
                f"{type_name(et)}, operand #{i} is {type_name(t.element_type)}"
            )
    return et


@irdl_op_definition
class MatmulOp(FusionOp):
    """`torch.matmul(lhs, rhs)`: 1-D, 2-D and batched, batch dims broadcast.

    Both operands share one floating-point element type, which the result has.
    """

    name = "fusion.matmul"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[_placeholder()])
        retype_results(self)

    def infer_result_types(self) -> list[Attribute]:
        a = _expect_tensor(self.lhs, "lhs")
        b = _expect_tensor(self.rhs, "rhs")
        et = _require_same_float([a, b], "matmul")
        return [_tensor(et, matmul_shape(a.get_shape(), b.get_shape()))]


@irdl_op_definition
class LinearOp(FusionOp):
    """`input @ weight^T (+ bias)`: input [..., in], weight [out, in], bias [out].

    A 1-D weight [in] gives the result [...] (and then bias is 0-d). All
    operands share one floating-point element type.
    """

    name = "fusion.linear"

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight) "
        "(`,` type($bias)^)? `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "input")
        w = _expect_tensor(self.weight, "weight")
        types = [x, w] + ([_expect_tensor(self.bias, "bias")] if self.bias else [])
        et = _require_same_float(types, "linear")
        xs, ws = x.get_shape(), w.get_shape()
        if not xs:
            raise VerifyException("linear input must have rank >= 1")
        if len(ws) not in (1, 2):
            raise VerifyException(f"linear weight must have rank 1 or 2, got {len(ws)}")
        _check_contraction(xs[-1], ws[-1], "linear")
        out_features = list(ws[:1]) if len(ws) == 2 else []
        if self.bias:
            bs = self.bias.type.get_shape()
            if len(bs) != len(out_features) or (
                bs and DYNAMIC not in (bs[0], ws[0]) and bs[0] != ws[0]
            ):
                raise VerifyException(
                    f"bias shape {fmt_shape(bs)} does not match the weight's "
                    f"out features {fmt_shape(out_features)}"
                )
        return [_tensor(et, list(xs[:-1]) + out_features)]
