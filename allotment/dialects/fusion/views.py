"""Shape ops: broadcast_in_dim, expand, reshape, permute, squeeze, slice, pad, cat."""

from __future__ import annotations

from abc import ABC
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import I64, DenseArrayBase, IndexType, IntegerAttr, TensorType
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
from allotment.dialects.fusion.base import FusionOp, IntList, _expect_tensor, _ints, _tensor
from allotment.dialects.fusion.creation import _verify_sizes, checked_extents, constant_index
from allotment.dialects.fusion_rules import DYNAMIC, fmt_shape, type_name
from allotment.extents import view_extents

# --------------------------------------------------------------------------- #
# Shape ops                                                                   #
# --------------------------------------------------------------------------- #


class ShapeViewOp(FusionOp, ABC):
    """A view of `input` at a new shape given as a dynamic index list (`shape`: static
    extents or `index` values): the fields of broadcast_in_dim, expand and reshape."""

    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    shape = var_operand_def(IndexType)
    static_shape = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$input custom<DynamicIndexList>($shape, $static_shape) attr-dict "
        "`:` type($input) `->` type($result)"
    )


@irdl_op_definition
class BroadcastInDimOp(ShapeViewOp):
    """Places the input's dimensions at `dims` of a tensor of the given shape.

    `dims` (strictly increasing, one per input dimension) says where each
    input dimension goes; the other result dimensions are new. A mapped input
    dimension of static extent 1 is expanded to the result extent; any other
    mapped extent must equal the result extent (checked at run time for `?`).
    """

    name = "fusion.broadcast_in_dim"

    broadcast_dims = prop_def(DenseArrayBase)
    custom_directives = (DynamicIndexList, IntList)
    assembly_format = (
        "$input custom<DynamicIndexList>($shape, $static_shape) `dims` "
        "custom<IntList>($broadcast_dims) attr-dict `:` type($input) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        out = checked_extents(self.static_shape, self.shape, "shape")
        dims = _ints(self.broadcast_dims)
        in_shape = t.get_shape()
        if len(dims) != len(in_shape):
            raise VerifyException(
                f"dims has {len(dims)} entries for an input of rank {len(in_shape)}"
            )
        if any(b <= a for a, b in zip(dims, dims[1:])):
            raise VerifyException(f"dims {dims} must be strictly increasing")
        for src, d in enumerate(dims):
            if not 0 <= d < len(out):
                raise VerifyException(
                    f"dims entry {d} is out of range for a result of rank {len(out)}"
                )
            e = in_shape[src]
            if e != 1 and e != out[d] and not (e == DYNAMIC or out[d] == DYNAMIC):
                raise VerifyException(
                    f"input dimension {src} has extent {e} but result dimension {d} "
                    f"has extent {rules.fmt_extent(out[d])}; only extent 1 broadcasts"
                )
        return [_tensor(t.element_type, out)]


@irdl_op_definition
class ExpandOp(ShapeViewOp):
    """Expands static size-1 dimensions to the given extents (same rank, no copy).

    Every other dimension keeps its extent; its entry in the shape must equal
    it (checked at run time for `?`).
    """

    name = "fusion.expand"

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        out = checked_extents(self.static_shape, self.shape, "shape")
        in_shape = t.get_shape()
        if len(out) != len(in_shape):
            raise VerifyException(
                f"expand keeps the rank: shape has {len(out)} entries, input rank {len(in_shape)}"
            )
        for d, (e, o) in enumerate(zip(in_shape, out)):
            if e != 1 and e != o and e != DYNAMIC and o != DYNAMIC:
                raise VerifyException(
                    f"dimension {d} has extent {e}, which cannot expand to {o}; "
                    "only static size-1 dimensions expand"
                )
        return [_tensor(t.element_type, out)]


@irdl_op_definition
class ReshapeOp(ShapeViewOp):
    """The input's elements (row-major) viewed with a new shape.

    Entries are static extents, `index` values, or at most one `-1`, inferred
    as numel / product(other extents), which must divide exactly.
    """

    name = "fusion.reshape"

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        static = _ints(self.static_shape)
        _verify_sizes(static, self.shape, "shape")
        if static.count(-1) > 1:
            raise VerifyException("reshape allows at most one inferred (-1) extent")
        for s in static:
            if s != DYNAMIC and s < -1:
                raise VerifyException(f"shape: extent {s} is negative")
        in_shape = t.get_shape()
        in_static = DYNAMIC not in in_shape
        known = [s for s in static if s not in (DYNAMIC, -1)]
        all_known = DYNAMIC not in static
        out = list(static)
        if -1 in static:
            idx = static.index(-1)
            out[idx] = DYNAMIC
            if in_static and all_known:
                rest = prod(known)
                inferred = view_extents.reshape_inferred(prod(in_shape), rest)
                if inferred is None:
                    raise VerifyException(
                        f"cannot infer the -1 extent: {prod(in_shape)} elements are not "
                        f"divisible by {rest}"
                    )
                out[idx] = inferred
        elif in_static and all_known and prod(in_shape) != prod(known):
            raise VerifyException(
                f"reshape of {fmt_shape(in_shape)} ({prod(in_shape)} elements) to "
                f"{fmt_shape(out)} ({prod(known)} elements)"
            )
        return [_tensor(t.element_type, out)]


class DimsViewOp(FusionOp, ABC):
    """A view of `input` given by a list of its dimensions (`dims`): the fields of
    permute and squeeze."""

    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)


@irdl_op_definition
class PermuteOp(DimsViewOp):
    """Reorders dimensions: result dimension i is input dimension `dims[i]`."""

    name = "fusion.permute"

    assembly_format = "$input custom<IntList>($dims) attr-dict `:` type($input) `->` type($result)"

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        shape = t.get_shape()
        dims = rules.normalize_dims(_ints(self.dims), len(shape))
        if len(dims) != len(shape):
            raise VerifyException(
                f"permutation has {len(dims)} entries for a tensor of rank {len(shape)}"
            )
        return [_tensor(t.element_type, [shape[d] for d in dims])]


@irdl_op_definition
class SqueezeOp(DimsViewOp):
    """Removes the listed dimensions, each of static extent 1."""

    name = "fusion.squeeze"

    assembly_format = (
        "$input `dims` custom<IntList>($dims) attr-dict `:` type($input) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        shape = t.get_shape()
        dims = rules.normalize_dims(_ints(self.dims), len(shape))
        for d in dims:
            if shape[d] != 1:
                raise VerifyException(
                    f"cannot squeeze dimension {d} of extent {rules.fmt_extent(shape[d])}; "
                    "only static size-1 dimensions squeeze"
                )
        return [_tensor(t.element_type, [e for d, e in enumerate(shape) if d not in dims])]


slice_extent = view_extents.slice_extent
"""Extent of `x[start:stop:step]` along a dimension (torch's rule: `view_extents`)."""


@irdl_op_definition
class SliceOp(FusionOp):
    """`input[start_0:stop_0:step_0, ...]`, one entry per dimension.

    Entries are static integers or `index` values; step >= 1. As in torch, a
    negative start or stop counts from the end (`+ extent`), then both are
    clamped to [0, extent]; the result extent is ceildiv(max(stop - start, 0),
    step) (`extents.view_extents.slice_sym`, the one definition).
    """

    name = "fusion.slice"
    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    start = var_operand_def(IndexType)
    stop = var_operand_def(IndexType)
    step = var_operand_def(IndexType)
    static_start = prop_def(DenseArrayBase)
    static_stop = prop_def(DenseArrayBase)
    static_step = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$input custom<DynamicIndexList>($start, $static_start) `to` "
        "custom<DynamicIndexList>($stop, $static_stop) `step` "
        "custom<DynamicIndexList>($step, $static_step) attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        shape = t.get_shape()
        lists = {}
        for name in ("start", "stop", "step"):
            static = _ints(getattr(self, f"static_{name}"))
            _verify_sizes(static, getattr(self, name), name)
            if len(static) != len(shape):
                raise VerifyException(
                    f"{name} has {len(static)} entries for a tensor of rank {len(shape)}"
                )
            if name == "step":
                for v in static:
                    if v != DYNAMIC and v < 1:
                        raise VerifyException(f"step entry {v} must be at least 1")
                for v in self.step:
                    value = constant_index(v)
                    if value is not None and value < 1:
                        raise VerifyException(f"step entry {value} (a constant) must be at least 1")
            lists[name] = static
        out = []
        for d, size in enumerate(shape):
            s, e, st = lists["start"][d], lists["stop"][d], lists["step"][d]
            if DYNAMIC in (s, e, st):
                out.append(DYNAMIC)
            else:
                known = view_extents.slice_static_extent(None if size == DYNAMIC else size, s, e, st)
                out.append(DYNAMIC if known is None else known)
        return [_tensor(t.element_type, out)]


@irdl_op_definition
class PadOp(FusionOp):
    """Pads each dimension with `low[d]` elements before and `high[d]` after.

    Widths are static integers or `index` values (`low [%n, 1]`), as in
    `fusion.slice`. A negative width crops, as torch.nn.functional.pad does:
    the result extent is `low[d] + extent + high[d]` (`view_extents.pad_extent_sym`),
    which must be >= 0 (a verify error when static, an `alloc.check` at run
    time otherwise), and result element `i` is input element `i - low[d]`
    where that lies inside the input. New elements take `value` (a scalar
    converted to the element type).
    """

    name = "fusion.pad"

    input = operand_def(TensorType)
    value = operand_def()
    dynamic_low = var_operand_def(IndexType)
    dynamic_high = var_operand_def(IndexType)
    low = prop_def(DenseArrayBase)
    high = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$input `low` custom<DynamicIndexList>($dynamic_low, $low) "
        "`high` custom<DynamicIndexList>($dynamic_high, $high) `value` $value "
        "attr-dict `:` type($input) `,` type($value) `->` type($result)"
    )

    def widths(self) -> tuple[list[int | SSAValue], list[int | SSAValue]]:
        """(low, high): per dimension a static width or the `index` value giving it."""
        out: list[list[int | SSAValue]] = []
        for static, dynamic in ((self.low, self.dynamic_low), (self.high, self.dynamic_high)):
            it = iter(dynamic)
            out.append([next(it) if w == DYNAMIC else w for w in _ints(static)])
        return out[0], out[1]

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        rules.verify_scalar_type(self.value.type, "the padding value")
        shape = t.get_shape()
        for name in ("low", "high"):
            static = _ints(getattr(self, name))
            _verify_sizes(static, getattr(self, f"dynamic_{name}"), name)
            if len(static) != len(shape):
                raise VerifyException(
                    f"{name} has {len(static)} entries for a tensor of rank {len(shape)}"
                )
        low, high = self.widths()
        out = []
        for d, (e, lo, hi) in enumerate(zip(shape, low, high)):
            lo_c = lo if isinstance(lo, int) else constant_index(lo)
            hi_c = hi if isinstance(hi, int) else constant_index(hi)
            if e == DYNAMIC or lo_c is None or hi_c is None:
                out.append(DYNAMIC)
                continue
            extent = view_extents.pad_extent(e, lo_c, hi_c)
            if extent < 0:
                raise VerifyException(
                    f"dimension {d}: padded extent {lo_c} + {e} + {hi_c} = {extent} is negative"
                )
            out.append(extent if isinstance(lo, int) and isinstance(hi, int) else DYNAMIC)
        return [_tensor(t.element_type, out)]


@irdl_op_definition
class CatOp(FusionOp):
    """Concatenates the inputs along `dim`; the other extents must agree."""

    name = "fusion.cat"
    COMPLEX: ClassVar[bool] = True

    inputs = var_operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        if not self.inputs:
            raise VerifyException("cat needs at least one input")
        types = [_expect_tensor(v, f"operand #{i}") for i, v in enumerate(self.inputs)]
        et = types[0].element_type
        rank = len(types[0].get_shape())
        (dim,) = rules.normalize_dims([self.dim.value.data], rank, "dim")
        out = list(types[0].get_shape())
        source = [0] * rank  # which operand gave out[d] its static extent
        for i, t in enumerate(types[1:], 1):
            if t.element_type != et:
                raise VerifyException(
                    f"operand #{i} has element type {type_name(t.element_type)}, "
                    f"operand #0 has {type_name(et)}; cat needs equal element types"
                )
            shape = t.get_shape()
            if len(shape) != rank:
                raise VerifyException(f"operand #{i} has rank {len(shape)}, operand #0 {rank}")
            for d, e in enumerate(shape):
                if d == dim:
                    out[d] = DYNAMIC if DYNAMIC in (out[d], e) else view_extents.cat_extent([out[d], e])
                elif e != out[d] and DYNAMIC not in (e, out[d]):
                    raise VerifyException(
                        f"operand #{i} has extent {e} in dimension {d}, operand #{source[d]} "
                        f"has {out[d]}; only dimension {dim} may differ"
                    )
                elif out[d] == DYNAMIC:
                    out[d], source[d] = e, i
        return [_tensor(et, out)]
