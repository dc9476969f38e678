"""Shape reification: every extent of every tensor as an expression of the inputs.

`reify_shapes(func)` walks a fusion-level function in order and gives, for each
tensor value, its extents as `Extent` expressions over the function's own
arguments (their extents, and `index` or integer scalar arguments), and for
each `index` value (and each integer scalar argument or `arith.index_cast` of
one) its expression. Where an op requires two extents to be equal at run time
(an elementwise op over two `?` dims, a `?` that the type says is 4, a
contraction), the two are unified and a `ShapeCheck` records the requirement,
so that it can be checked once at entry. Reshape with an inferred dim records a
divisibility check; dynamic extents taken from scalars record a non-negativity
check (a negative constant one is an error); a `max`/`min` records that each
reduced extent is >= 1. Slice bounds follow torch (`view_extents`): they may be
negative, so index values are not otherwise required to be >= 0.

This is a pure analysis: it reads the IR and returns data.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import Float32Type, Float64Type, FloatAttr, IndexType, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from allotment import errors
from allotment.analysis.size_eval import is_size_scalar_type
from allotment.dialects import fusion
from allotment.dialects.fusion_rules import DYNAMIC
from allotment.dtypes import torch_dtype
from allotment.extents import size_arith, view_extents
from allotment.extents import symbolic as sym
from allotment.extents.dims import dim_set, normalize_dim
from allotment.extents.symbolic import ArgDim, ArgScalar, Const, Extent, ExtentEquivalence


class ShapeError(errors.ShapeError):
    """A shape that cannot be reified (an unsupported op or index value).

    `op` is the op at fault (set by `reify_shapes`), so that a pass can locate it."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.op = op


@dataclass(frozen=True)
class ShapeCheck:
    """A run-time requirement on extents.

    `predicate` is one of `size_arith.CHECK_PREDICATES` ("eq", "divisible",
    "ge"); `size_arith.check_holds` says whether it holds. `message` names the
    op and the extents at fault.
    """

    predicate: str
    lhs: Extent
    rhs: Extent
    message: str
    op: Operation | None = field(default=None, compare=False)
    """The op that requires it (None for the function's own arguments)."""


@dataclass
class ShapeAnalysis:
    """Result of `reify_shapes`: extents of tensors, values of index scalars."""

    func: func.FuncOp
    equivalence: ExtentEquivalence = field(default_factory=ExtentEquivalence)
    extents: dict[SSAValue, tuple[Extent, ...]] = field(default_factory=dict)
    scalars: dict[SSAValue, Extent] = field(default_factory=dict)
    checks: list[ShapeCheck] = field(default_factory=list)
    float_constants: dict[SSAValue, float] = field(default_factory=dict)
    """Floating-point scalars computed from constants alone (a size may come from one
    through `arith.fptosi`, as `pad` widths of `cast(2.5 * 7, Int)` do)."""

    def shape(self, value: SSAValue) -> tuple[Extent, ...]:
        """The canonical extents of a tensor value (representatives of their class)."""
        return tuple(self.canonical(e) for e in self.extents[value])

    def scalar(self, value: SSAValue) -> Extent:
        return self.canonical(self.scalars[value])

    def canonical(self, e: Extent) -> Extent:
        """`e` with every subexpression replaced by its class representative."""
        e = self.equivalence.find(e)
        if isinstance(e, sym.BinOp):
            lhs, rhs = self.canonical(e.lhs), self.canonical(e.rhs)
            if lhs is not e.lhs or rhs is not e.rhs:
                e = self.equivalence.find(sym._binop(e.op, lhs, rhs))
        return e

    # ------------------------------------------------------------------ #

    def require_equal(self, a: Extent, b: Extent, message: str) -> Extent:
        ra, rb = self.equivalence.find(a), self.equivalence.find(b)
        if ra == rb:
            return ra
        if isinstance(ra, Const) and isinstance(rb, Const):
            raise ShapeError(f"{message}: {ra.value} != {rb.value}")
        self.checks.append(ShapeCheck("eq", ra, rb, message))
        return self.equivalence.union(ra, rb)


def value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"


def reify_shapes(f: func.FuncOp) -> ShapeAnalysis:
    """Reifies the extents of every tensor and index value of `f`."""
    analysis = ShapeAnalysis(f)
    for i, arg in enumerate(f.body.block.args):
        name = arg.name_hint or f"arg{i}"
        if isinstance(arg.type, TensorType):
            shape = arg.type.get_shape()
            analysis.extents[arg] = tuple(
                Const(e) if e != DYNAMIC else ArgDim(i, d, name) for d, e in enumerate(shape)
            )
        elif is_size_scalar_type(arg.type):
            # No sign requirement of its own: a slice bound may be negative; an
            # index value used as an extent is checked where it is used. An
            # integer argument becomes an extent through `arith.index_cast`.
            analysis.scalars[arg] = ArgScalar(i, name)
    for op in f.body.block.ops:
        _reify_op(analysis, op)
    return analysis


# ---------------------------------------------------------------------- #
# Per-op rules                                                           #
# ---------------------------------------------------------------------- #


def _mixed(analysis: ShapeAnalysis, static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Extent]:
    out: list[Extent] = []
    it = iter(dynamic)
    for s in static:
        out.append(analysis.scalars[next(it)] if s == DYNAMIC else Const(s))
    return out


def _set_result(analysis: ShapeAnalysis, op: Operation, value: SSAValue, extents: Sequence[Extent]) -> None:
    """Records a result's extents, unifying with the static extents of its type."""
    assert isinstance(value.type, TensorType)
    shape = value.type.get_shape()
    out: list[Extent] = []
    for d, (e, s) in enumerate(zip(extents, shape)):
        if s != DYNAMIC and analysis.equivalence.find(e) != Const(s):
            analysis.require_equal(
                e, Const(s), f"{op.name}: result dimension {d} is {s} by its type but computes to {e}"
            )
            e = Const(s)
        out.append(e)
    analysis.extents[value] = tuple(out)


def _elementwise(analysis: ShapeAnalysis, op: Operation) -> None:
    tensors = [(i, v) for i, v in enumerate(op.operands) if isinstance(v.type, TensorType)]
    rank = len(op.results[0].type.get_shape())
    out: list[Extent] = []
    find = analysis.equivalence.find

    def describe(i: int, v: SSAValue, d: int, e: Extent) -> str:
        return f"operand #{i} ({value_name(v)}) dimension {d} = {analysis.canonical(e)}"

    for d in range(rank):
        chosen: Extent | None = None
        first: tuple[int, SSAValue, Extent] | None = None
        chosen_desc: str | None = None
        for i, v in tensors:
            if v.type.get_shape()[d] == 1:
                continue
            e = analysis.extents[v][d]
            if chosen is None:
                chosen, first = e, (i, v, e)
                continue
            if find(chosen) == find(e):  # `require_equal`'s own fast path: no message needed
                chosen = find(chosen)
                continue
            # The messages are built only where two extents are not known equal (nothing
            # is unified before the first such pair: the first operand's text is the same
            # as if it were built when that operand was chosen).
            if chosen_desc is None:
                assert first is not None
                chosen_desc = describe(first[0], first[1], d, first[2])
            chosen = analysis.require_equal(chosen, e, f"{op.name}: {chosen_desc} must equal {describe(i, v, d, e)}")
        out.append(Const(1) if chosen is None else chosen)
    _set_result(analysis, op, op.results[0], out)


def _reduction(analysis: ShapeAnalysis, op: Operation, dims: Sequence[int], keepdim: bool) -> None:
    src = analysis.extents[op.operands[0]]
    rank = len(src)
    dims = [normalize_dim(d, rank) for d in dims]
    if keepdim:
        out = [Const(1) if d in dims else e for d, e in enumerate(src)]
    else:
        out = [e for d, e in enumerate(src) if d not in dims]
    if isinstance(op, fusion.SelectingReductionOp):
        for d in dims:
            analysis.checks.append(ShapeCheck(
                "ge", src[d], Const(1),
                f"{op.name}: dimension {d} of {value_name(op.operands[0])} ({src[d]}) must not be empty: "
                f"{op.name.removeprefix('fusion.')} has no identity",
            ))
    for r in op.results:
        _set_result(analysis, op, r, out)


def _scan_or_sort(analysis: ShapeAnalysis, op: Operation) -> None:
    """Scans and argsort keep the input's extents; topk has `k` along its dim. A sorted row
    must fit one program (`fusion.SORT_MAX_EXTENT`), and topk's k must not exceed it."""
    src = analysis.extents[op.operands[0]]
    if isinstance(op, fusion.SortOp):
        dim = op.sort_dim()
        name = value_name(op.operands[0])
        limit = fusion.sort_max_extent(op.operands[0].type.element_type)
        analysis.checks.append(ShapeCheck(
            "ge", Const(limit), src[dim],
            f"{op.name}: dimension {dim} of {name} ({src[dim]}) is longer than the "
            f"{limit} elements one program sorts",
        ))
        if isinstance(op, fusion.TopkOp):
            k = op.k.value.data
            analysis.checks.append(ShapeCheck(
                "ge", src[dim], Const(k), f"{op.name}: k = {k} exceeds dimension {dim} of {name} ({src[dim]})",
            ))
            out = [Const(k) if d == dim else e for d, e in enumerate(src)]
            for r in op.results:
                _set_result(analysis, op, r, out)
            return
    for r in op.results:
        _set_result(analysis, op, r, src)


def _reshape(analysis: ShapeAnalysis, op: fusion.ReshapeOp) -> None:
    src = analysis.extents[op.input]
    numel = sym.product(src)
    static = list(op.static_shape.get_values())
    entries = _mixed(analysis, [s if s != -1 else 0 for s in static], op.shape)
    known = [e for s, e in zip(static, entries) if s != -1]
    known_numel = sym.product(known)
    out = list(entries)
    if -1 in static:
        idx = static.index(-1)
        # a run-time divisor is clamped to 1, as a slice's step: the quotient may be computed
        # before the `divisible` check below (false for 0) reports a product of 0
        divisor = known_numel if isinstance(known_numel, Const) else sym.maximum(known_numel, Const(1))
        out[idx] = view_extents.reshape_inferred_sym(numel, divisor)
        if not (isinstance(numel, Const) and isinstance(known_numel, Const)):
            analysis.checks.append(
                ShapeCheck(
                    "divisible", numel, known_numel,
                    f"{op.name}: the input's {numel} elements must be divisible by {known_numel} "
                    "to infer the -1 extent",
                )
            )
    else:
        analysis.require_equal(
            numel, known_numel,
            f"{op.name}: the input has {numel} elements but the shape has {known_numel}",
        )
    _set_result(analysis, op, op.result, out)


def _slice(analysis: ShapeAnalysis, op: fusion.SliceOp) -> None:
    src = analysis.extents[op.input]
    starts = _mixed(analysis, op.static_start.get_values(), op.start)
    stops = _mixed(analysis, op.static_stop.get_values(), op.stop)
    steps = _mixed(analysis, op.static_step.get_values(), op.step)
    # a run-time step is clamped to 1 in the extent's arithmetic: the extent may be computed
    # before the check below runs, and must not divide by zero first (it is used only once
    # the check has passed, where the clamp changes nothing)
    out = [
        view_extents.slice_sym(size, start, stop, step if isinstance(step, Const) else sym.maximum(step, Const(1)))[1]
        for size, start, stop, step in zip(src, starts, stops, steps)
    ]
    for d, v in enumerate(steps):
        if not isinstance(v, Const):
            analysis.checks.append(
                ShapeCheck("ge", v, Const(1), f"{op.name}: step of dimension {d} must be >= 1")
            )
    _set_result(analysis, op, op.result, out)


def _pad(analysis: ShapeAnalysis, op: fusion.PadOp) -> None:
    """`low + extent + high` per dimension; where a width is negative or a value, the
    result extent must be >= 0 at run time (an `alloc.check` naming the widths)."""
    src = analysis.extents[op.input]
    lows = _mixed(analysis, op.low.get_values(), op.dynamic_low)
    highs = _mixed(analysis, op.high.get_values(), op.dynamic_high)
    out = []
    for d, (e, lo, hi) in enumerate(zip(src, lows, highs)):
        extent = view_extents.pad_extent_sym(e, lo, hi)
        if isinstance(extent, Const):
            if extent.value < 0:
                raise ShapeError(f"{op.name}: dimension {d}: padded extent {extent} is negative", op)
        elif not all(isinstance(w, Const) and w.value >= 0 for w in (lo, hi)):
            analysis.checks.append(
                ShapeCheck(
                    "ge", extent, Const(0),
                    f"{op.name}: dimension {d}: low + extent + high = {lo} + {e} + {hi} must be >= 0",
                )
            )
        out.append(extent)
    _set_result(analysis, op, op.result, out)


def _broadcast_like(analysis: ShapeAnalysis, op: Operation, src_dims: Sequence[int | None], out: Sequence[Extent]) -> None:
    """Result dim d takes input dim src_dims[d] (None: a new dim)."""
    src_val = op.operands[0]
    src = analysis.extents[src_val]
    in_shape = src_val.type.get_shape()
    for d, s in enumerate(src_dims):
        if s is not None and in_shape[s] != 1:
            analysis.require_equal(
                src[s], out[d],
                f"{op.name}: input dimension {s} ({src[s]}) must equal result dimension {d} ({out[d]})",
            )
    _set_result(analysis, op, op.results[0], out)


def _cat(analysis: ShapeAnalysis, op: fusion.CatOp) -> None:
    shapes = [analysis.extents[v] for v in op.inputs]
    rank = len(shapes[0])
    dim = op.dim.value.data
    dim = normalize_dim(dim, rank)
    out = list(shapes[0])
    for i, s in enumerate(shapes[1:], 1):
        for d in range(rank):
            if d != dim:
                out[d] = analysis.require_equal(
                    out[d], s[d], f"{op.name}: operand #{i} dimension {d} must equal operand #0's"
                )
    out[dim] = view_extents.cat_extent_sym([s[dim] for s in shapes])
    _set_result(analysis, op, op.result, out)


def _matmul(analysis: ShapeAnalysis, op: fusion.MatmulOp) -> None:
    a, b = analysis.extents[op.lhs], analysis.extents[op.rhs]
    msg = f"{op.name}: contracted extents of {value_name(op.lhs)} and {value_name(op.rhs)} must be equal"
    if len(a) == 1 and len(b) == 1:
        analysis.require_equal(a[0], b[0], msg)
        out: list[Extent] = []
    elif len(b) == 1:
        analysis.require_equal(a[-1], b[0], msg)
        out = list(a[:-1])
    elif len(a) == 1:
        analysis.require_equal(a[0], b[-2], msg)
        out = list(b[:-2]) + [b[-1]]
    else:
        analysis.require_equal(a[-1], b[-2], msg)
        ta, tb = op.lhs.type.get_shape()[:-2], op.rhs.type.get_shape()[:-2]
        n = max(len(ta), len(tb))
        ea = [Const(1)] * (n - len(ta)) + list(a[:-2])
        eb = [Const(1)] * (n - len(tb)) + list(b[:-2])
        sa = [1] * (n - len(ta)) + list(ta)
        sb = [1] * (n - len(tb)) + list(tb)
        batch: list[Extent] = []
        for d in range(n):
            if sa[d] == 1:
                batch.append(eb[d])
            elif sb[d] == 1:
                batch.append(ea[d])
            else:
                batch.append(analysis.require_equal(ea[d], eb[d], f"{op.name}: batch dimension {d} must agree"))
        out = batch + [a[-2], b[-1]]
    _set_result(analysis, op, op.result, out)


def _linear(analysis: ShapeAnalysis, op: fusion.LinearOp) -> None:
    x, w = analysis.extents[op.input], analysis.extents[op.weight]
    analysis.require_equal(
        x[-1], w[-1], f"{op.name}: in features of {value_name(op.input)} and {value_name(op.weight)} must be equal"
    )
    out_features = [w[0]] if len(w) == 2 else []
    if op.bias is not None and out_features:
        analysis.require_equal(
            analysis.extents[op.bias][0], w[0], f"{op.name}: bias extent must equal the weight's out features"
        )
    _set_result(analysis, op, op.result, list(x[:-1]) + out_features)


def _is_i64(t: object) -> bool:
    return isinstance(t, IntegerType) and t.width.data == size_arith.INDEX_BITS


_FLOAT_FOLDS = {
    arith.AddfOp: lambda a, b: a + b, arith.SubfOp: lambda a, b: a - b,
    arith.MulfOp: lambda a, b: a * b, arith.DivfOp: lambda a, b: a / b if b != 0 else None,
}


def _rounded(x: float, t: object) -> float:
    """`x` rounded to float type `t` (f64 values are Python's own)."""
    if isinstance(t, Float64Type):
        return x
    if isinstance(t, Float32Type):
        return struct.unpack("f", struct.pack("f", x))[0] if math.isfinite(x) and abs(x) < 3.4e38 else x
    return float(torch.tensor(x, dtype=torch_dtype(t)).item())  # type: ignore[arg-type]


def _float_constant(analysis: ShapeAnalysis, op: Operation) -> bool:
    """Folds a floating-point scalar op whose operands are constants (or an integer
    constant converted, or such a float truncated to an integer); whether it did."""
    known = analysis.float_constants
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr):
        known[op.result] = op.value.value.data
        return True
    if isinstance(op, arith.SIToFPOp) and isinstance(analysis.scalars.get(op.input), Const):
        known[op.result] = _rounded(float(analysis.scalars[op.input].value), op.result.type)  # type: ignore[union-attr]
        return True
    if isinstance(op, arith.ExtFOp | arith.TruncFOp) and op.input in known:
        known[op.result] = _rounded(known[op.input], op.result.type)
        return True
    fold = _FLOAT_FOLDS.get(type(op))
    if fold is not None and all(v in known for v in op.operands):
        x = fold(*(known[v] for v in op.operands))
        if x is not None:  # a division by zero is left to the run (no size comes from it)
            known[op.results[0]] = _rounded(x, op.results[0].type)
        return True
    if isinstance(op, arith.FPToSIOp) and op.input in known and is_size_scalar_type(op.result.type):
        x = known[op.input]
        if math.isfinite(x):
            analysis.scalars[op.result] = Const(int(x))  # truncated toward zero
        return True
    return False


def _index_scalar(analysis: ShapeAnalysis, op: Operation) -> None:
    """Expression of an `index` value computed by arith or tensor.dim."""
    if _float_constant(analysis, op):
        return
    if isinstance(op, arith.ConstantOp):
        if is_size_scalar_type(op.result.type):  # an integer one may become a size through index_cast
            value = op.value
            assert isinstance(value, IntegerAttr)
            analysis.scalars[op.result] = Const(value.value.data)
        return
    if isinstance(op, arith.IndexCastOp):
        # index_cast sign-extends to `index` (exact) or truncates from it: only a
        # cast that cannot truncate (to index, or to a 64-bit integer) keeps the
        # operand's value.
        source = analysis.scalars.get(op.input)
        result_type = op.result.type
        if source is not None and (
            isinstance(result_type, IndexType)
            or (isinstance(result_type, IntegerType) and result_type.width.data >= size_arith.INDEX_BITS)
        ):
            analysis.scalars[op.result] = source
            return
    if isinstance(op, tensor.DimOp):
        index = analysis.scalars.get(op.index)
        if not isinstance(index, Const):
            raise ShapeError("tensor.dim: the dimension index must be a constant")
        extents = analysis.extents[op.source]
        if not 0 <= index.value < len(extents):  # never Python's negative indexing: -1 is no dimension
            raise ShapeError(f"tensor.dim: index {index.value} is out of range for a tensor of rank {len(extents)}")
        analysis.scalars[op.result] = extents[index.value]
        return
    name = size_arith.arith_op_name(op.name)
    if name is not None and isinstance(op.results[0].type, IndexType):
        lhs, rhs = (analysis.scalars.get(v) for v in op.operands)
        if lhs is None or rhs is None:
            raise ShapeError(f"{op.name}: an index operand has no known value")
        analysis.scalars[op.results[0]] = sym.binop(name, lhs, rhs)
        return
    if name is not None and _is_i64(op.results[0].type):
        # 64-bit integer arithmetic that may become a size through index_cast: as a
        # size it means what `index` arithmetic means (overflow is an error, never a
        # wrapped extent: docs/dynamic-shapes.md). One that cannot be a size (it
        # overflows on constants) is simply not recorded.
        lhs, rhs = (analysis.scalars.get(v) for v in op.operands)
        if lhs is not None and rhs is not None:
            try:
                analysis.scalars[op.results[0]] = sym.binop(name, lhs, rhs)
            except size_arith.SizeArithmeticError:
                pass
        return
    if any(isinstance(r.type, IndexType) for r in op.results):
        raise ShapeError(f"{op.name}: cannot express this index value in terms of the inputs")


def _indexing(analysis: ShapeAnalysis, op: fusion.IndexingOp) -> None:
    """Result extents of the indexing ops, and the run-time checks of their extents."""
    src = analysis.extents[op.source_operand]
    idx = analysis.extents[op.index_operand]
    dim = op.indexed_dim()
    name = f"{op.name}: {value_name(op.index_operand)}"

    def at_most(a: Extent, b: Extent, d: int) -> None:  # a <= b
        ra, rb = analysis.canonical(a), analysis.canonical(b)
        if ra == rb:
            return
        if isinstance(ra, Const) and isinstance(rb, Const):
            if ra.value > rb.value:
                raise ShapeError(f"{name} dimension {d} extent {ra.value} exceeds {rb.value}")
            return
        analysis.checks.append(ShapeCheck("ge", rb, ra, f"{name} dimension {d} must not exceed "
                                                        f"{value_name(op.source_operand)}'s"))

    if isinstance(op, fusion.IndexSelectOp):
        out = list(src)
        out[dim] = idx[0]
    elif isinstance(op, fusion.EmbeddingOp):
        out = [*idx, src[1]]
    elif isinstance(op, fusion.GatherOp | fusion.TakeAlongAxisOp | fusion.ScatterOp):
        for d in range(len(src)):
            if d == dim:
                continue
            if isinstance(op, fusion.TakeAlongAxisOp):
                analysis.require_equal(idx[d], src[d], f"{name} dimension {d} must equal {value_name(op.input)}'s")
            else:
                at_most(idx[d], src[d], d)
        if isinstance(op, fusion.ScatterOp):
            s = analysis.extents[op.src]
            for d in range(len(src)):
                analysis.require_equal(idx[d], s[d], f"{name} dimension {d} must equal {value_name(op.src)}'s")
            out = list(src)
        else:
            out = list(idx)
    else:
        assert isinstance(op, fusion.IndexPutAccumulateOp)
        v = analysis.extents[op.value]
        analysis.require_equal(v[0], idx[0], f"{op.name}: {value_name(op.value)} dimension 0 must equal the index length")
        for d in range(1, len(src)):
            analysis.require_equal(v[d], src[d], f"{op.name}: {value_name(op.value)} dimension {d} must equal "
                                                 f"{value_name(op.acc)}'s")
        out = list(src)
    _set_result(analysis, op, op.results[0], out)


def _aten(analysis: ShapeAnalysis, op: fusion.AtenOp) -> None:
    """An ATen call's results: static extents from their types, `?` ones from `sizes` in order."""
    sizes = iter(op.sizes)
    for r in op.res:
        shape = r.type.get_shape()
        _set_result(analysis, op, r, _mixed(analysis, shape, [next(sizes) for e in shape if e == DYNAMIC]))


def _segment(analysis: ShapeAnalysis, op: fusion.SegmentOp) -> None:
    """A segment's body is reified in terms of the enclosing function's values."""
    block = op.body.block
    for outer, inner in zip(op.operands, block.args):
        if isinstance(outer.type, TensorType):
            analysis.extents[inner] = analysis.extents[outer]
        elif outer in analysis.scalars:
            analysis.scalars[inner] = analysis.scalars[outer]
    for inner_op in block.ops:
        if isinstance(inner_op, fusion.YieldOp):
            for result, value in zip(op.results, inner_op.operands):
                analysis.extents[result] = analysis.extents[value]
        else:
            _reify_op(analysis, inner_op)


_OWN_RULES: tuple[tuple[type[Operation], Callable[[ShapeAnalysis, Any], None]], ...] = (
    (fusion.SliceOp, _slice),
    (fusion.PadOp, _pad),
    (fusion.CatOp, _cat),
    (fusion.MatmulOp, _matmul),
    (fusion.LinearOp, _linear),
    (fusion.IndexingOp, _indexing),
    (fusion.AtenOp, _aten),
    (fusion.SegmentOp, _segment),
)
"""The ops whose shape rule is a function of its own (the first class op is an instance of)."""


def _reify_op(analysis: ShapeAnalysis, op: Operation) -> None:
    """Reifies one op; its checks and errors name it (`ShapeCheck.op`, `ShapeError.op`)."""
    first = len(analysis.checks)
    try:
        analysis.checks.extend(_negative_extent_checks(analysis, op))
        _reify_op_rules(analysis, op)
    except ShapeError as e:
        if e.op is None:
            e.op = op
        raise
    for i in range(first, len(analysis.checks)):
        if analysis.checks[i].op is None:
            analysis.checks[i] = replace(analysis.checks[i], op=op)


def _reify_op_rules(analysis: ShapeAnalysis, op: Operation) -> None:
    if isinstance(op, fusion.ElementwiseOp) and not isinstance(op, fusion.SetOp):
        _elementwise(analysis, op)
    elif isinstance(op, fusion.SetOp | fusion.CastOp) or op.dialect_name() == "comm":  # comm: a resharding
        _set_result(analysis, op, op.results[0], analysis.extents[op.operands[0]])
    elif isinstance(op, fusion.ReductionOp | fusion.VarMeanOp | fusion.WelfordOp):
        _reduction(analysis, op, list(op.dims.get_values()), op.keepdim is not None)
    elif isinstance(op, fusion.SizedOp):  # full, rand, randn
        _set_result(analysis, op, op.result, _mixed(analysis, op.static_sizes.get_values(), op.sizes))
    elif isinstance(op, fusion.ScanOp | fusion.SortOp):
        _scan_or_sort(analysis, op)
    elif isinstance(op, fusion.IotaOp):
        _set_result(analysis, op, op.result, _mixed(analysis, op.static_length.get_values(), op.length))
    elif isinstance(op, fusion.BroadcastInDimOp):
        out = _mixed(analysis, op.static_shape.get_values(), op.shape)
        dims = list(op.broadcast_dims.get_values())
        src_dims: list[int | None] = [dims.index(d) if d in dims else None for d in range(len(out))]
        _broadcast_like(analysis, op, src_dims, out)
    elif isinstance(op, fusion.ExpandOp):
        out = _mixed(analysis, op.static_shape.get_values(), op.shape)
        _broadcast_like(analysis, op, list(range(len(out))), out)
    elif isinstance(op, fusion.ReshapeOp):
        _reshape(analysis, op)
    elif isinstance(op, fusion.PermuteOp):
        src = analysis.extents[op.input]
        rank = len(src)
        _set_result(analysis, op, op.result, [src[normalize_dim(d, rank)] for d in op.dims.get_values()])
    elif isinstance(op, fusion.SqueezeOp):
        src = analysis.extents[op.input]
        rank = len(src)
        dims = set(dim_set(op.dims.get_values(), rank))
        _set_result(analysis, op, op.result, [e for d, e in enumerate(src) if d not in dims])
    elif isinstance(op, func.ReturnOp):
        return
    else:
        rule = next((rule for cls, rule in _OWN_RULES if isinstance(op, cls)), None)
        if rule is not None:
            rule(analysis, op)
            return
        _index_scalar(analysis, op)
        for r in op.results:
            if isinstance(r.type, TensorType):
                raise ShapeError(f"{op.name}: cannot reify the shape of its result")


def _negative_extent_checks(analysis: ShapeAnalysis, op: Operation) -> list[ShapeCheck]:
    """Extents taken from index scalars (full, iota, broadcast shapes) must be >= 0."""
    if not isinstance(op, fusion.FullOp | fusion.RandomOp | fusion.IotaOp | fusion.BroadcastInDimOp | fusion.ExpandOp | fusion.ReshapeOp | fusion.AtenOp):
        return []
    checks = []
    for v in op.operands:
        if isinstance(v.type, IndexType):
            e = analysis.scalars[v]
            if isinstance(e, Const) and e.value < 0:
                raise ShapeError(f"{op.name}: extent {e} is negative", op)
            if not isinstance(e, Const | ArgDim):  # a tensor's extent is never negative
                checks.append(ShapeCheck("ge", e, Const(0), f"{op.name}: extent {e} must be >= 0"))
    return checks
