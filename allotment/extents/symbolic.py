"""Symbolic extents: integer expressions over a fusion's input extents.

An `Extent` is an immutable, hashable expression tree: constants, the extent of
dimension d of function argument a (`ArgDim`), the value of an `index`
argument (`ArgScalar`), and `arith` integer ops (`BinOp`: addi, floordivsi,
remsi, minsi, ... each meaning exactly what `extents.size_arith` says).
Constructors fold constants and trivial identities, so structurally equal
expressions compare equal.

`ExtentEquivalence` is a union-find over extents: where an op requires two
extents to be equal at run time (an elementwise op over two `?` dims), they are
merged, and `find` picks the representative every later size is written in
(a constant if the class has one, otherwise the simplest, earliest expression).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from allotment.extents import size_arith


class Extent:
    """Base of symbolic extent expressions."""

    def __add__(self, other: Extent | int) -> Extent:
        return add(self, lift(other))

    def __sub__(self, other: Extent | int) -> Extent:
        return sub(self, lift(other))

    def __mul__(self, other: Extent | int) -> Extent:
        return mul(self, lift(other))

    @property
    def is_const(self) -> bool:
        return isinstance(self, Const)

    def size(self) -> int:
        return 1


@dataclass(frozen=True)
class Const(Extent):
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class ArgDim(Extent):
    """Extent of dimension `dim` of the function argument number `arg`."""

    arg: int
    dim: int
    name: str = field(compare=False, default="")

    def __str__(self) -> str:
        return f"{self.name or f'arg{self.arg}'}.shape[{self.dim}]"


@dataclass(frozen=True)
class ArgScalar(Extent):
    """Value of the `index` function argument number `arg`."""

    arg: int
    name: str = field(compare=False, default="")

    def __str__(self) -> str:
        return self.name or f"arg{self.arg}"


@dataclass(frozen=True)
class BinOp(Extent):
    """`op` is an `arith` integer op name of `size_arith.OPS` (`addi`, `floordivsi`,
    `remsi`, `minsi`, ...): the expression means exactly what that op computes."""

    op: str
    lhs: Extent
    rhs: Extent

    def __str__(self) -> str:
        symbol = size_arith.SYMBOLS.get(self.op)
        if symbol is None:
            return f"{self.op}({self.lhs}, {self.rhs})"
        return f"({self.lhs} {symbol} {self.rhs})"

    def size(self) -> int:
        return 1 + self.lhs.size() + self.rhs.size()


def lift(v: Extent | int) -> Extent:
    return v if isinstance(v, Extent) else Const(int(v))


_COMMUTATIVE = frozenset({"addi", "muli", "minsi", "maxsi", "minui", "maxui", "andi", "ori", "xori"})
_DIVIDES_BY_ONE = frozenset({"floordivsi", "ceildivsi", "divsi", "divui", "ceildivui"})


def binop(op: str, a: Extent, b: Extent) -> Extent:
    """`arith.<op>` of two extents, folded where both are constants (through
    `size_arith`, so folding means what the op means at run time: an op with no
    result, such as a division by zero, is left for run time to report) and
    simplified where an operand is an identity."""
    if op not in size_arith.OPS:
        raise KeyError(f"no integer op '{op}' (one of {', '.join(size_arith.OPS)})")
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return Const(size_arith.apply(op, a.value, b.value))
        except size_arith.SizeArithmeticError:
            return BinOp(op, a, b)
    if op in _COMMUTATIVE and isinstance(a, Const):
        a, b = b, a  # constants on the right
    if isinstance(b, Const):
        v = b.value
        if (op in ("addi", "subi") and v == 0) or ((op == "muli" or op in _DIVIDES_BY_ONE) and v == 1):
            return a
        if op == "muli" and v == 0:
            return Const(0)
    if op in ("minsi", "maxsi", "minui", "maxui") and a == b:
        return a
    if op == "subi" and a == b:
        return Const(0)
    return BinOp(op, a, b)


_binop = binop  # the name older callers use


# a + b, a - b, a * b, floor and ceiling division, min and max of two extents, folded as `binop` folds
add = partial(binop, "addi")
sub = partial(binop, "subi")
mul = partial(binop, "muli")
floordiv = partial(binop, "floordivsi")
ceildiv = partial(binop, "ceildivsi")
minimum = partial(binop, "minsi")
maximum = partial(binop, "maxsi")


def product(extents: Sequence[Extent]) -> Extent:
    result: Extent = Const(1)
    for e in extents:
        result = mul(result, e)
    return result


def evaluate(e: Extent, arg_shapes: Sequence[Sequence[int] | int]) -> int:
    """Value of `e` given each argument's concrete shape (or scalar value)."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, ArgDim):
        shape = arg_shapes[e.arg]
        assert not isinstance(shape, int)
        return int(shape[e.dim])
    if isinstance(e, ArgScalar):
        value = arg_shapes[e.arg]
        assert isinstance(value, int)
        return value
    assert isinstance(e, BinOp)
    return size_arith.apply(e.op, evaluate(e.lhs, arg_shapes), evaluate(e.rhs, arg_shapes))


class ExtentEquivalence:
    """Union-find over extents that must be equal at run time."""

    def __init__(self) -> None:
        self._parent: dict[Extent, Extent] = {}
        self._order: dict[Extent, int] = {}

    def _rank(self, e: Extent) -> tuple[int, int, int]:
        order = self._order.setdefault(e, len(self._order))
        return (0 if e.is_const else 1, e.size(), order)

    def find(self, e: Extent) -> Extent:
        root = e
        while (parent := self._parent.get(root)) is not None:
            root = parent
        while (parent := self._parent.get(e)) is not None and parent is not root:
            self._parent[e] = root
            e = parent
        return root

    def union(self, a: Extent, b: Extent) -> Extent:
        """Merges the classes of a and b; returns the new representative."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        rank_a = self._rank(ra)  # first, so that of two new extents the first is the earlier
        if self._rank(rb) < rank_a:
            ra, rb = rb, ra
        self._parent[rb] = ra
        return ra

    def canonical(self, shape: Sequence[Extent]) -> tuple[Extent, ...]:
        return tuple(self.find(e) for e in shape)


def substitute(e: Extent, mapping: Mapping[Extent, Extent]) -> Extent:
    """Rebuilds `e` with leaves replaced through `mapping` (and re-folded)."""
    if e in mapping:
        return mapping[e]
    if isinstance(e, BinOp):
        return binop(e.op, substitute(e.lhs, mapping), substitute(e.rhs, mapping))
    return e
