"""Scans and sorts along one dimension: cumsum, cumprod, cummax, cummin, argsort, topk."""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import I64, IntegerAttr, IntegerType, TensorType, UnitAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion.base import FusionOp, _expect_tensor, _tensor
from allotment.dialects.fusion_rules import DYNAMIC, type_name

# --------------------------------------------------------------------------- #
# Scans and sorts along one dimension                                         #
# --------------------------------------------------------------------------- #


SORT_MAX_EXTENT = 16384
"""The longest row `argsort` and `topk` sort: one program sorts a whole row in registers
(bitonic, padded to a power of 2). A longer static row is a verifier error; a dynamic one
is checked at run time (`analysis.shapes` records an `alloc.check`)."""

SORT_MAX_EXTENT_64 = 4096
"""The longest row of 64-bit elements (i64, f64) `argsort` and `topk` sort: such rows
are ranked (quadratic work), as a 64-bit value leaves no room for its index in a key."""


def sort_max_extent(element_type: Attribute) -> int:
    """The longest row `argsort` and `topk` sort for elements of this type."""
    from xdsl.dialects.builtin import Float64Type

    wide = isinstance(element_type, Float64Type) or (
        isinstance(element_type, IntegerType) and element_type.width.data > 32
    )
    return SORT_MAX_EXTENT_64 if wide else SORT_MAX_EXTENT


def _scan_dim(op: IRDLOperation, t: TensorType) -> int:
    """The op's `dim`, normalized (negative counts from the end), for a tensor of rank >= 1."""
    rank = len(t.get_shape())
    if rank == 0:
        raise VerifyException(f"{op.name.removeprefix('fusion.')} needs a tensor of rank >= 1, got a 0-d tensor")
    (dim,) = rules.normalize_dims([op.dim.value.data], rank, "dim")
    return dim


class ScanOp(FusionOp, ABC):
    """An inclusive scan along `dim`: element i of a row is the combination of elements
    0..i of that row (torch.cumsum and friends). Rank >= 1; every extent may be 0."""

    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())

    def scan_dim(self) -> int:
        return _scan_dim(self, _expect_tensor(self.input, "the input"))


class AccumulatingScanOp(ScanOp, ABC):
    """cumsum, cumprod: floats keep their type (f16 and bf16 accumulate in f32 and each
    result is rounded once, as torch does); bool and integers accumulate in i64, which is
    the result type (torch's rule). Integer overflow wraps."""

    result = result_def(TensorType)
    assembly_format = "$input `dim` $dim attr-dict `:` type($input) `->` type($result)"

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        self.scan_dim()
        et = t.element_type if rules.is_float(t.element_type) else i64
        return [_tensor(et, t.get_shape())]


@irdl_op_definition
class CumsumOp(AccumulatingScanOp):
    """Inclusive running sum along `dim` (torch.cumsum)."""

    name = "fusion.cumsum"


@irdl_op_definition
class CumprodOp(AccumulatingScanOp):
    """Inclusive running product along `dim` (torch.cumprod)."""

    name = "fusion.cumprod"


class SelectingScanOp(ScanOp, ABC):
    """cummax, cummin (torch's): `values` (the input's type) and `indices` (i64): the
    running extremum along `dim` and where in the row it was last found. As torch on
    CPU: an element equal to the running extremum takes its place (ties give the LAST
    index), and a NaN is larger and smaller than everything: from the first NaN on
    the value is NaN and the index that of the latest NaN."""

    values = result_def(TensorType)
    indices = result_def(TensorType)
    assembly_format = (
        "$input `dim` $dim attr-dict `:` type($input) `->` type($values) `,` type($indices)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        self.scan_dim()
        return [_tensor(t.element_type, t.get_shape()), _tensor(i64, t.get_shape())]


@irdl_op_definition
class CummaxOp(SelectingScanOp):
    """Running maximum along `dim` and its index (torch.cummax)."""

    name = "fusion.cummax"


@irdl_op_definition
class CumminOp(SelectingScanOp):
    """Running minimum along `dim` and its index (torch.cummin)."""

    name = "fusion.cummin"


class SortOp(FusionOp, ABC):
    """A sort of every row along `dim` (rank >= 1). The order is total: NaN is larger
    than every number (all NaNs equal), -0.0 equals 0.0, and equal elements keep
    their order in the row (the sort is always stable, whatever `stable` says; in
    descending order too, as torch's stable sort). A row holds at most
    `SORT_MAX_EXTENT` elements, `SORT_MAX_EXTENT_64` of i64 or f64 (a static longer
    row is an error, a dynamic one a run-time check)."""

    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())

    def sort_dim(self) -> int:
        t = _expect_tensor(self.input, "the input")
        dim = _scan_dim(self, t)
        n, limit = t.get_shape()[dim], sort_max_extent(t.element_type)
        if n != DYNAMIC and n > limit:
            raise VerifyException(
                f"{self.name.removeprefix('fusion.')} sorts rows of at most {limit} "
                f"{type_name(t.element_type)} elements in one program; dimension {dim} has {n}"
            )
        return dim


@irdl_op_definition
class ArgsortOp(SortOp):
    """The i64 indices that sort every row along `dim` (torch.argsort): ascending, or
    descending with `descending`; `stable` is accepted (the sort is stable anyway)."""

    name = "fusion.argsort"

    descending = opt_prop_def(UnitAttr)
    stable = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    assembly_format = (
        "$input `dim` $dim (`descending` $descending^)? (`stable` $stable^)? attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        self.sort_dim()
        return [_tensor(i64, t.get_shape())]


@irdl_op_definition
class TopkOp(SortOp):
    """The `k` largest (with `largest`) or smallest elements of every row along `dim`
    and their i64 indices (torch.topk), best first. `k` is static, 0 <= k <= the extent
    (a dynamic extent is checked at run time). The results are always sorted (`sorted`
    is accepted); among equal elements the earlier index comes first; NaN is largest."""

    name = "fusion.topk"

    k = prop_def(IntegerAttr[I64])
    largest = opt_prop_def(UnitAttr)
    sorted = opt_prop_def(UnitAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    assembly_format = (
        "$input `k` $k `dim` $dim (`largest` $largest^)? (`sorted` $sorted^)? attr-dict "
        "`:` type($input) `->` type($values) `,` type($indices)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        dim = self.sort_dim()
        k = self.k.value.data
        n = t.get_shape()[dim]
        if k < 0:
            raise VerifyException(f"k must be non-negative, got {k}")
        if n != DYNAMIC and k > n:
            raise VerifyException(f"k = {k} is larger than dimension {dim} ({n})")
        shape = list(t.get_shape())
        shape[dim] = k
        return [_tensor(t.element_type, shape), _tensor(i64, shape)]


SCAN_OPS = (CumsumOp, CumprodOp, CummaxOp, CumminOp)
SORT_OPS = (ArgsortOp, TopkOp)
