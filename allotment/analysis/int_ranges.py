"""Integer value ranges inside one kernel body, and which 64-bit integer ops fit in 32 bits.

A fusion's integer arithmetic is usually index arithmetic: `fusion.iota` columns and rows,
their differences and comparisons (causal masks, ALiBi distances, one-hot labels, position
ids). Torch types it `i64`, and a kernel that computes it in 64 bits pays two or more
instructions a value for each add, compare and abs, and a slow conversion to float. Where
every value provably fits in 32 bits, the kernel can compute in its index type instead
(Inductor narrows its index expressions the same way, by value ranges).

`value_ranges(block)` gives an interval [lo, hi] for every integer tensor value of a kernel
body that it can bound, by interval arithmetic over:

- block arguments of types narrower than 64 bits (their type's range); 64-bit ones are
  unbounded;
- `fusion.iota` with constant `start` and `step`: `start + k * step` for k below its static
  length, or below `INDEX_LIMIT` where the length is dynamic (the kernel computes k in its
  index type, 32-bit only when every extent is below 2**31: past that, in 64 bits, and so
  is everything computed from k);
- `fusion.full` of a constant, integer `fusion.cast` and `fusion.set`;
- the views (broadcast, expand, squeeze, slice, permute, reshape): their input's range;
- `add`, `sub`, `mul`, `neg`, `abs`, `maximum`, `minimum` and `where`, with constant or
  integer scalar operands;
- integer `floor_divide`, `div` (truncating), `remainder` and `fmod` by a positive constant
  (a head index `i // d`, a position `i % n`).

Anything else (a 64-bit load, a reduction, a division by anything but a positive constant,
a bitwise op, a runtime scalar of 64 bits) is unbounded, and so is everything computed
from it.

`narrow_ops(block)` is the decision the `kernel-index-ranges` pass records: the ops with a
64-bit integer result whose range fits in int32, the conversions of such values to other
types, and the comparisons whose integer operands all fit (at least one of them 64-bit),
each with its range (for a conversion, its input's; for a comparison, the hull of its
operands'). Converting a value that fits in int32 from 32 bits gives what converting it
from 64 does (a float rounds the same integer to nearest). It is sound under the kernel's indexing: a range that depends on a
dynamic length assumes 32-bit indexing, and where the kernel indexes in 64 bits the values
computed from its indices are 64-bit too.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from allotment.dialects import fusion
from allotment.dialects.fusion_rules import element_type_of

Range = tuple[int, int]

INT32: Range = (-(2**31), 2**31 - 1)
INT64: Range = (-(2**63), 2**63 - 1)
INDEX_RANGE = "index_range"
"""The attribute `kernel-index-ranges` records `narrow_ops` in: `array<i64: lo, hi>`."""
INDEX_LIMIT = 2**31 - 1
"""The largest index a 32-bit indexed kernel computes (an int32): a dynamic iota's index is at most it."""

VIEWS = (fusion.BroadcastInDimOp, fusion.ExpandOp, fusion.SqueezeOp, fusion.SliceOp, fusion.PermuteOp,
         fusion.ReshapeOp)
ARITHMETIC = (fusion.AddOp, fusion.SubOp, fusion.MulOp, fusion.NegOp, fusion.AbsOp, fusion.MaximumOp,
              fusion.MinimumOp, fusion.WhereOp, fusion.FloorDivideOp, fusion.DivOp, fusion.RemainderOp,
              fusion.FmodOp)
"""The integer ops a kernel may compute in its index type (`narrow_ops`), with the casts and
the constant fills, and the comparisons of their results."""


def is_wide(t: Attribute) -> bool:
    """A 64-bit integer element type (`i64` or `index`)."""
    et = element_type_of(t)
    return isinstance(et, IndexType) or (isinstance(et, IntegerType) and et.width.data == 64)


def type_range(t: Attribute) -> Range | None:
    """The values an integer element type holds (i1: 0 and 1), or None (not an integer)."""
    et = element_type_of(t)
    if isinstance(et, IndexType):
        return INT64
    if not isinstance(et, IntegerType):
        return None
    w = et.width.data
    return (0, 1) if w == 1 else (-(2 ** (w - 1)), 2 ** (w - 1) - 1)


def within(r: Range | None, bounds: Range) -> bool:
    return r is not None and bounds[0] <= r[0] and r[1] <= bounds[1]


def fits_int32(r: Range | None) -> bool:
    return within(r, INT32)


def hull(*rs: Range) -> Range:
    return min(r[0] for r in rs), max(r[1] for r in rs)


def _checked(r: Range, t: Attribute) -> Range | None:
    """r where the result type holds all of it, else None (the op may wrap)."""
    bounds = type_range(t)
    return r if bounds is not None and within(r, bounds) else None


def _constant(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return int(owner.value.value.data)
    return None


def _product(a: Range, b: Range) -> Range:
    ends = [x * y for x in a for y in b]
    return min(ends), max(ends)


BINARY: dict[type[Operation], Callable[[Range, Range], Range]] = {
    fusion.AddOp: lambda a, b: (a[0] + b[0], a[1] + b[1]),
    fusion.SubOp: lambda a, b: (a[0] - b[1], a[1] - b[0]),
    fusion.MulOp: _product,
    fusion.MaximumOp: lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
    fusion.MinimumOp: lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
}


def _divided(op: Operation, a: Range, c: int) -> Range | None:
    """The range of `op` (an integer division or remainder) of values in `a` by the positive
    constant c (None for any other divisor: a zero or negative one is left unbounded)."""
    if c <= 0:
        return None
    if isinstance(op, fusion.FloorDivideOp):
        return a[0] // c, a[1] // c
    if isinstance(op, fusion.DivOp):  # truncates toward zero
        return _trunc(a[0], c), _trunc(a[1], c)
    if isinstance(op, fusion.RemainderOp):  # the divisor's sign: [0, c)
        return (a[0], a[1]) if 0 <= a[0] and a[1] < c else (0, c - 1)
    if isinstance(op, fusion.FmodOp):  # the dividend's sign
        if 0 <= a[0] and a[1] < c:
            return a
        return (0 if a[0] >= 0 else -(c - 1)), (0 if a[1] <= 0 else c - 1)
    return None


def _trunc(x: int, c: int) -> int:
    return x // c if x >= 0 else -(-x // c)


DIVISIONS = (fusion.FloorDivideOp, fusion.DivOp, fusion.RemainderOp, fusion.FmodOp)
"""Integer divisions and remainders, bounded where the divisor is a positive constant."""


def _abs(a: Range) -> Range:
    if a[0] >= 0:
        return a
    if a[1] <= 0:
        return -a[1], -a[0]
    return 0, max(-a[0], a[1])


class _Ranges:
    """The ranges of one body's values, computed in program order."""

    def __init__(self) -> None:
        self.known: dict[SSAValue, Range] = {}

    def of(self, v: SSAValue) -> Range | None:
        """v's range: a tensor's computed one, a constant scalar's value, a narrower
        integer scalar's type range; None where unbounded or not an integer."""
        if v in self.known:
            return self.known[v]
        c = _constant(v)
        if c is not None:
            return c, c
        return None if is_wide(v.type) else type_range(v.type)

    def visit(self, op: Operation) -> None:
        if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
            return
        result = op.results[0]
        if type_range(result.type) is None:
            return
        r = self.compute(op)
        if r is not None:
            r = _checked(r, result.type)
        if r is not None:
            self.known[result] = r

    def compute(self, op: Operation) -> Range | None:
        if isinstance(op, fusion.IotaOp):
            start, step = _constant(op.start), _constant(op.step)
            if start is None or step is None:
                return None
            (length,) = (int(e) for e in op.static_length.get_values())
            last = max(length, 1) - 1 if length != DYNAMIC_INDEX else INDEX_LIMIT
            return hull((start, start), (start + last * step, start + last * step))
        if isinstance(op, fusion.FullOp):
            return self.of(op.value)
        if isinstance(op, fusion.CastOp) and element_type_of(op.results[0].type) == IntegerType(1):
            return 0, 1
        if isinstance(op, VIEWS) or isinstance(op, fusion.CastOp | fusion.SetOp):
            r = self.of(op.operands[0])
            if r is None and isinstance(op, fusion.CastOp) and not is_wide(op.results[0].type):
                return type_range(op.results[0].type)  # wraps or truncates into its type
            return r
        if isinstance(op, fusion.WhereOp):
            a, b = self.of(op.on_true), self.of(op.on_false)
            return hull(a, b) if a is not None and b is not None else None
        if isinstance(op, fusion.NegOp | fusion.AbsOp):
            a = self.of(op.operands[0])
            if a is None:
                return None
            return (-a[1], -a[0]) if isinstance(op, fusion.NegOp) else _abs(a)
        if isinstance(op, DIVISIONS):
            a, c = self.of(op.operands[0]), _constant(op.operands[1])
            return _divided(op, a, c) if a is not None and c is not None else None
        rule = BINARY.get(type(op))
        if rule is not None:
            a, b = self.of(op.operands[0]), self.of(op.operands[1])
            return rule(a, b) if a is not None and b is not None else None
        return None


def value_ranges(block: Block) -> dict[SSAValue, Range]:
    """The range of every integer tensor value of `block` (and the blocks nested in it) that
    the rules above bound; values it cannot bound are absent."""
    ranges = _Ranges()
    for op in block.walk():
        ranges.visit(op)
    return ranges.known


def narrow_ops(block: Block) -> dict[Operation, Range]:
    """The ops of `block` a kernel computes in its index type, each with its range: a
    64-bit integer `iota`, `full`, cast, set or `ARITHMETIC` op whose result fits in int32
    (its range); a cast of a 64-bit integer that fits in int32 to another type (a float, i1,
    i32: its input's range); a comparison whose integer operands all fit in int32, one of them
    64-bit (the hull of theirs)."""
    ranges = _Ranges()
    out: dict[Operation, Range] = {}
    for op in block.walk():
        ranges.visit(op)
        if isinstance(op, fusion.CastOp) and is_wide(op.input.type) and not is_wide(op.result.type):
            r = ranges.of(op.input)  # a conversion of a value that fits: its input's range
            if fits_int32(r):
                assert r is not None
                out[op] = r
            continue
        if isinstance(op, fusion.PredicateOp):
            operands = [ranges.of(x) for x in op.operands]
            if any(is_wide(x.type) for x in op.operands) and all(fits_int32(r) for r in operands):
                out[op] = hull(*(r for r in operands if r is not None))
            continue
        if not isinstance(op, (fusion.IotaOp, fusion.FullOp, fusion.CastOp, fusion.SetOp, *ARITHMETIC)):
            continue
        result = op.results[0]
        r = ranges.known.get(result)
        if is_wide(result.type) and fits_int32(r):
            assert r is not None
            out[op] = r
    return out
