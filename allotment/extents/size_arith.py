"""Integer and `index` arithmetic on Python ints: the one definition of what `arith` means.

Every layer that computes with sizes asks this module: the symbolic folder
(`extents.symbolic`), the size evaluator (`analysis.size_eval`, hence
`alloc-evaluate` and `plan_sizes`), the size materializer (`passes.size_builder`),
the generated host program (`backend.host_codegen` emits `rt.size_arith.<op>(a, b)`,
and `backend.host_runtime.size_arith` is this module) and the reference
evaluator. So `remsi` truncates, and a zero divisor is an error, in all of them.

Semantics, as MLIR's `arith` defines them (operands are signed Python ints that
fit the width, results are given back the same way):

- `addi`, `subi`, `muli`, `andi`, `ori`, `xori`: two's complement.
- `divsi`, `remsi`: truncate toward zero (the remainder has the dividend's sign).
- `floordivsi` floors, `ceildivsi` rounds up.
- `divui`, `remui`, `ceildivui`, `minui`, `maxui`: the operands' bits read as
  unsigned (`-1` is 2^width - 1); the result's bits read back as signed.
- `minsi`, `maxsi`: signed.

Overflow (a result that does not fit the width: `muli` past 2^63 - 1, `divsi`
of the minimum by -1): for `index` (width 64, `wrap=False`, the default) it is
an error, because a wrapped size is never what was meant, and MLIR makes such
overflow poison for sizes (`nsw`); with `wrap=True` (the reference evaluator's
`i32`/`i64` scalars) it wraps around, as plain MLIR `arith` does.

A zero divisor is always an error. Errors are `SizeArithmeticError`, a
`ShapeError` and a `RunError` at once: the message names the op and both values.

This module is a leaf (it imports only `allotment.errors`), so the dialects'
verifiers may use it too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from allotment.errors import RunError, ShapeError

INDEX_BITS = 64
"""Width of `index`: sizes are signed 64-bit integers."""

INDEX_MAX = 2 ** (INDEX_BITS - 1) - 1
"""The largest `index` value (and so the largest extent, element count or byte size)."""


class SizeArithmeticError(ShapeError, RunError):
    """Integer arithmetic that has no result: a zero divisor, or `index` overflow."""


def _to_unsigned(v: int, width: int) -> int:
    return v & ((1 << width) - 1)


def _to_signed(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_SIGNED: dict[str, Callable[[int, int], int]] = {
    "addi": lambda a, b: a + b,
    "subi": lambda a, b: a - b,
    "muli": lambda a, b: a * b,
    "andi": lambda a, b: a & b,
    "ori": lambda a, b: a | b,
    "xori": lambda a, b: a ^ b,
    "divsi": _trunc_div,
    "remsi": lambda a, b: a - b * _trunc_div(a, b),
    "floordivsi": lambda a, b: a // b,
    "ceildivsi": lambda a, b: -(-a // b),
    "minsi": min,
    "maxsi": max,
}
_UNSIGNED: dict[str, Callable[[int, int], int]] = {
    "divui": lambda a, b: a // b,
    "remui": lambda a, b: a % b,
    "ceildivui": lambda a, b: -(-a // b),
    "minui": min,
    "maxui": max,
}
DIVISIONS = frozenset({"divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui", "ceildivui"})
"""The ops whose right operand must not be zero."""

OPS: tuple[str, ...] = tuple(_SIGNED) + tuple(_UNSIGNED)
"""Every binary integer op this module defines (the `arith` op names without `arith.`)."""

SYMBOLS: dict[str, str] = {"addi": "+", "subi": "-", "muli": "*"}
"""Infix spellings, for messages and printed expressions (other ops print as calls)."""


def apply(op: str, a: int, b: int, width: int = INDEX_BITS, *, wrap: bool = False) -> int:
    """`arith.<op>` of `a` and `b` at `width` bits (see the module docstring).

    Raises `SizeArithmeticError` for a zero divisor, and for a result that does
    not fit unless `wrap`. `op` must be one of `OPS` (a KeyError otherwise: a bug
    of the caller, which looks the name up)."""
    if op in DIVISIONS and b == 0:
        raise SizeArithmeticError(f"arith.{op}: division by zero ({a} by {b})")
    if op in _UNSIGNED:
        return _to_signed(_UNSIGNED[op](_to_unsigned(a, width), _to_unsigned(b, width)), width)
    result = _SIGNED[op](a, b)
    if not -(1 << (width - 1)) <= result < (1 << (width - 1)):
        if wrap:
            return _to_signed(result, width)
        raise SizeArithmeticError(
            f"arith.{op}: {a} {SYMBOLS.get(op, op)} {b} = {result} overflows {width}-bit index"
        )
    return result


def _index_op(op: str) -> Callable[[int, int], int]:
    def fn(a: int, b: int) -> int:
        return apply(op, a, b)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"`arith.{op}` on `index` values (an error on a zero divisor or overflow)."
    return fn


addi = _index_op("addi")
subi = _index_op("subi")
muli = _index_op("muli")
andi = _index_op("andi")
ori = _index_op("ori")
xori = _index_op("xori")
divsi = _index_op("divsi")
remsi = _index_op("remsi")
floordivsi = _index_op("floordivsi")
ceildivsi = _index_op("ceildivsi")
minsi = _index_op("minsi")
maxsi = _index_op("maxsi")
divui = _index_op("divui")
remui = _index_op("remui")
ceildivui = _index_op("ceildivui")
minui = _index_op("minui")
maxui = _index_op("maxui")


def wrapping(op: str, a: int, b: int, width: int) -> int:
    """`arith.<op>` on `iN` scalars (N = width): overflow wraps around, a zero divisor is an error."""
    return apply(op, a, b, width, wrap=True)


def element_count(shape: tuple[int, ...] | list[int]) -> int:
    """The product of `shape`'s extents; `SizeArithmeticError` if it overflows `index`."""
    n = 1
    for e in shape:
        n = apply("muli", n, e)
    return n


def byte_size(shape: tuple[int, ...] | list[int], element_bytes: int) -> int:
    """Bytes of a row-major buffer of `shape`; `SizeArithmeticError` past `INDEX_MAX`."""
    return apply("muli", element_count(shape), element_bytes)


# --------------------------------------------------------------------------- #
# Run-time checks (`alloc.check` and the shape analysis's requirements)        #
# --------------------------------------------------------------------------- #

CHECK_PREDICATES: dict[str, str] = {
    "eq": "lhs == rhs",
    "divisible": "rhs != 0 and lhs remsi rhs == 0",
    "ge": "lhs >= rhs",
}
"""Every predicate of `alloc.check`, with its meaning."""


def check_holds(predicate: str, lhs: int, rhs: int) -> bool:
    """Whether `alloc.check <predicate> lhs, rhs` passes (the one definition).

    `divisible` takes the truncated remainder (`remsi`), so -6 is divisible by 3;
    nothing is divisible by 0."""
    if predicate == "eq":
        return lhs == rhs
    if predicate == "ge":
        return lhs >= rhs
    if predicate == "divisible":
        return rhs != 0 and remsi(lhs, rhs) == 0
    raise KeyError(f"unknown check predicate '{predicate}' (one of {', '.join(CHECK_PREDICATES)})")


def arith_op_name(op_name: str) -> str | None:
    """`divsi` for the op name `arith.divsi`; None for an op this module does not define."""
    name = op_name.removeprefix("arith.")
    return name if op_name.startswith("arith.") and name in OPS else None


def shape_problem(shape: Sequence[int], element_bytes: int, dynamic: int) -> str | None:
    """Why a tensor or buffer type's static extents cannot exist, or None if they can.

    Each static extent must be in [0, INDEX_MAX] and the static extents' bytes
    (their product times `element_bytes`) at most INDEX_MAX; entries equal to
    `dynamic` (the `?` marker) are not known yet and are skipped."""
    static = [e for e in shape if e != dynamic]
    for e in static:
        if e < 0:
            return f"extent {e} is negative"
        if e > INDEX_MAX:
            return f"extent {e} does not fit in a 64-bit index (at most {INDEX_MAX})"
    try:
        byte_size(static, element_bytes)
    except SizeArithmeticError:
        n = 1
        for e in static:
            n *= e
        return f"{n} elements of {element_bytes} bytes do not fit in a 64-bit index of bytes (at most {INDEX_MAX})"
    return None
