"""Tensors made from sizes: `full` and `iota`."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, IndexType, IntegerAttr, TensorType, i1
from xdsl.dialects.utils import DynamicIndexList
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion.base import FusionOp, _ints, _tensor
from allotment.dialects.fusion_rules import DYNAMIC

# --------------------------------------------------------------------------- #
# Creation                                                                    #
# --------------------------------------------------------------------------- #


def _verify_sizes(static: Sequence[int], dynamic: Sequence[SSAValue], what: str) -> None:
    ndyn = sum(1 for s in static if s == DYNAMIC)
    if ndyn != len(dynamic):
        raise VerifyException(
            f"{what}: {ndyn} dynamic entries but {len(dynamic)} values"
        )
    for v in dynamic:
        if not isinstance(v.type, IndexType):
            raise VerifyException(f"{what}: dynamic extents must be index values")


def _verify_constant_extents(dynamic: Sequence[SSAValue], what: str) -> None:
    """Dynamic extents that are `arith.constant`s must be non-negative (an extent
    is a size: a negative constant can only fail at run time)."""
    for v in dynamic:
        value = constant_index(v)
        if value is not None and value < 0:
            raise VerifyException(f"{what}: extent {value} (a constant) is negative")


def checked_extents(static_attr: DenseArrayBase, dynamic: Sequence[SSAValue], what: str) -> list[int]:
    """The extents of a dynamic index list (`static_attr` with `DYNAMIC` where a value of
    `dynamic` stands), checked: one index value per `?`, no negative static or constant
    extent; `what` names the list in messages."""
    static = _ints(static_attr)
    _verify_sizes(static, dynamic, what)
    _verify_constant_extents(dynamic, what)
    return _sizes_shape(static, what)


def constant_index(v: SSAValue) -> int | None:
    """The value of an `index` SSA value defined by `arith.constant`, else None."""
    owner = v.owner
    if getattr(owner, "name", None) == "arith.constant" and isinstance(v.type, IndexType):
        attr = owner.properties.get("value")
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def _sizes_shape(static: Sequence[int], what: str) -> list[int]:
    for s in static:
        if s != DYNAMIC and s < 0:
            raise VerifyException(f"{what}: extent {s} is negative")
    return list(static)


class SizedOp(FusionOp, ABC):
    """An op that makes a new tensor whose extents are its `sizes` (a dynamic index list:
    static integers or `index` values, `[%n, 4]`), after its own operands: the fields of
    `full`, `rand` and `randn`."""

    sizes = var_operand_def(IndexType)
    static_sizes = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)

    def extents(self) -> list[int]:
        """The result's extents (`checked_extents`)."""
        return checked_extents(self.static_sizes, self.sizes, "sizes")


@irdl_op_definition
class FullOp(SizedOp):
    """A new tensor of the given extents with every element equal to `value`.

    Extents are static integers or `index` SSA values (`[%n, 4]`); the value is
    a scalar converted to the result's element type.
    """

    name = "fusion.full"

    value = operand_def()
    assembly_format = (
        "$value custom<DynamicIndexList>($sizes, $static_sizes) attr-dict "
        "`:` type($value) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        rules.verify_scalar_type(self.value.type, "the fill value")
        return [_tensor(self.result.type.element_type, self.extents())]


@irdl_op_definition
class IotaOp(FusionOp):
    """The 1-D tensor `[start, start + step, ..., start + (length - 1) * step]`.

    `length` is static or an `index` value; `start` and `step` are scalars
    converted to the result's element type, which must not be i1.
    """

    name = "fusion.iota"

    length = var_operand_def(IndexType)
    static_length = prop_def(DenseArrayBase)
    start = operand_def()
    step = operand_def()
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "custom<DynamicIndexList>($length, $static_length) `start` $start `step` $step "
        "attr-dict `:` type($start) `,` type($step) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        static = _ints(self.static_length)
        if len(static) != 1:
            raise VerifyException(f"iota takes one length, got {len(static)}")
        _verify_sizes(static, self.length, "length")
        _verify_constant_extents(self.length, "length")
        rules.verify_scalar_type(self.start.type, "start")
        rules.verify_scalar_type(self.step.type, "step")
        et = self.result.type.element_type
        if et == i1:
            raise VerifyException("iota cannot produce i1 (bool) elements")
        return [_tensor(et, _sizes_shape(static, "length"))]
