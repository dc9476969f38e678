"""Reductions over dims: sum, prod, max, min, mean, var_mean, welford."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, DenseArrayBase, Float32Type, IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from allotment import dtypes
from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion.base import FusionOp, IntList, _expect_tensor, _ints, _tensor
from allotment.dialects.fusion_rules import type_name

# --------------------------------------------------------------------------- #
# Reductions                                                                  #
# --------------------------------------------------------------------------- #


def _reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> list[int]:
    if keepdim:
        return [1 if d in dims else e for d, e in enumerate(shape)]
    return [e for d, e in enumerate(shape) if d not in dims]


class ReducesOverDims:
    """An op that reduces its `input` over the dimensions its `dims` property lists
    (`ReductionOp`, var_mean, welford): the one home of which dimensions those are."""

    def reduced_dims(self) -> list[int]:
        """The reduced dimensions counted from the front, in increasing order (a
        VerifyException for an entry out of range or repeated)."""
        t = _expect_tensor(self.input, "the input")
        return sorted(rules.normalize_dims(_ints(self.dims), len(t.get_shape())))

    def accumulation_type(self) -> Attribute:
        """The element type the reduction accumulates in (and its partials are stored in):
        the compute type of its result (sums, products, means, variances: i64 for bool
        and integer sums), of its input for max and min (`fusion_rules.compute_type`)."""
        selecting = isinstance(self, SelectingReductionOp)
        source = self.input if selecting else self.results[0]
        return rules.compute_type(_expect_tensor(source, "the input").element_type)


class ReductionOp(ReducesOverDims, FusionOp, ABC):
    """Reduces the input over `dims` (an empty list reduces nothing).

    With `keepdim` the reduced dimensions stay with extent 1. Syntax:
    `%r = fusion.sum %x dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>`.
    """

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase)
    keepdim = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)
    assembly_format = (
        "$input `dims` custom<IntList>($dims) (`keepdim` $keepdim^)? attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def result_element_type(self, input_type: Attribute) -> Attribute:
        return input_type

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        dims = self.reduced_dims()
        et = self.result_element_type(t.element_type)
        return [_tensor(et, _reduced_shape(t.get_shape(), dims, self.keepdim is not None))]


class AccumulatingReductionOp(ReductionOp, ABC):
    """Sum-like reduction: bool and integer inputs accumulate in i64 (torch's rule).

    The result may also be any float type: the input is converted to it before
    reducing (torch's `dtype=` argument).
    """

    def result_element_type(self, input_type: Attribute) -> Attribute:
        declared = self.result.type.element_type
        if rules.is_complex(input_type):  # complex sums stay complex (of the declared width)
            return declared if rules.is_complex(declared) else input_type
        if rules.is_float(declared):
            return declared
        return input_type if rules.is_float(input_type) else i64


@irdl_op_definition
class SumOp(AccumulatingReductionOp):
    """Sum over `dims`."""

    name = "fusion.sum"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class ProdOp(AccumulatingReductionOp):
    """Product over `dims`."""

    name = "fusion.prod"


class SelectingReductionOp(ReductionOp, ABC):
    """A reduction without an identity (max, min): as in torch, every reduced
    dimension must be non-empty. A static extent 0 is a verifier error; a
    dynamic one is checked at run time (`analysis.shapes` records the check,
    `fusion-allocate` emits it as an `alloc.check ge`)."""

    def infer_result_types(self) -> list[Attribute]:
        shape = _expect_tensor(self.input, "the input").get_shape()
        for d in self.reduced_dims():
            if shape[d] == 0:
                raise VerifyException(
                    f"cannot reduce dimension {d} of extent 0: {self.name.removeprefix('fusion.')} "
                    "has no identity (torch raises too)"
                )
        return super().infer_result_types()


@irdl_op_definition
class MaxOp(SelectingReductionOp):
    """Maximum over `dims` (NaN propagates); the input's element type. Every
    reduced dimension must be non-empty."""

    name = "fusion.max"


@irdl_op_definition
class MinOp(SelectingReductionOp):
    """Minimum over `dims` (NaN propagates); the input's element type. Every
    reduced dimension must be non-empty."""

    name = "fusion.min"


def _require_float(t: Attribute, op: str) -> None:
    if not rules.is_float(t):
        raise VerifyException(f"{op} needs a floating-point input, got {type_name(t)}")


@irdl_op_definition
class MeanOp(ReductionOp):
    """Arithmetic mean over `dims`; floating-point inputs only."""

    name = "fusion.mean"

    def result_element_type(self, input_type: Attribute) -> Attribute:
        _require_float(input_type, "mean")
        return input_type


@irdl_op_definition
class VarMeanOp(ReducesOverDims, FusionOp):
    """Variance and mean over `dims`; floating-point inputs only.

    var = sum((x - mean)^2) / max(N - correction, 0), N the number of reduced
    elements (correction 1 is Bessel's, 0 the population variance); as in
    torch, correction >= N gives inf (or NaN where the sum is 0).
    """

    name = "fusion.var_mean"

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase)
    correction = prop_def(IntegerAttr[I64])
    keepdim = opt_prop_def(UnitAttr)
    var = result_def(TensorType)
    mean = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)
    assembly_format = (
        "$input `dims` custom<IntList>($dims) `correction` $correction "
        "(`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($var) `,` type($mean)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        _require_float(t.element_type, "var_mean")
        if self.correction.value.data < 0:
            raise VerifyException(f"correction {self.correction.value.data} is negative")
        out = _tensor(t.element_type, _reduced_shape(t.get_shape(), self.reduced_dims(), self.keepdim is not None))
        return [out, out]


@irdl_op_definition
class WelfordOp(ReducesOverDims, FusionOp):
    """Welford's triple over `dims`, as nvFuser's `welford`: the mean `avg`, the sum
    of squared deviations from it `var_sum` (M2: `var = var_sum / (n - correction)`)
    and the count `n` of reduced elements (i64, the same in every element).

    Floating-point inputs only; avg and var_sum are f32 for f16/bf16 inputs (computed
    in f32, as nvFuser), else the input's type. The kernel computes them with
    var_mean's two passes over the row (the mean, then the squared deviations), at
    least as accurate as Welford's one-pass update. With no reduced elements avg is
    NaN, var_sum 0 and n 0.
    """

    name = "fusion.welford"

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase)
    keepdim = opt_prop_def(UnitAttr)
    avg = result_def(TensorType)
    var_sum = result_def(TensorType)
    n = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)
    assembly_format = (
        "$input `dims` custom<IntList>($dims) (`keepdim` $keepdim^)? attr-dict "
        "`:` type($input) `->` type($avg) `,` type($var_sum) `,` type($n)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        _require_float(t.element_type, "welford")
        et = Float32Type() if dtypes.element_nbytes(t.element_type) == 2 else t.element_type
        shape = _reduced_shape(t.get_shape(), self.reduced_dims(), self.keepdim is not None)
        return [_tensor(et, shape), _tensor(et, shape), _tensor(i64, shape)]
