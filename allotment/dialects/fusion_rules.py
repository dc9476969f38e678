"""Typing rules of the `fusion` dialect: element types, promotion, broadcasting.

These are pure functions over xDSL types, shared by the op verifiers (which
check a declared result type against the inferred one) and by builders (which
infer it). Each raises `VerifyException` with a message that names the
offending operand or extent.

Promotion follows `torch.result_type`: element types form three categories,
bool < integer < floating. Among tensor operands the highest category wins;
inside a category the wider type wins, and f16 with bf16 gives f32. A scalar
operand (a builtin `f32`, `i64`, `index`... SSA value, torch's "wrapped
number") never widens a tensor's type inside its category; a scalar of a
higher category promotes to that category's default type (f32 for floating,
i64 for integer).

Broadcasting: elementwise operands that are tensors must have equal ranks.
Per dimension, a static extent 1 broadcasts to the other operands' extent;
otherwise all extents must agree: equal static values, or `?` extents, which
must be equal at run time (a static extent and a `?` extent give the static
one, checked at run time too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from allotment.extents import dims as dim_rules

c64 = ComplexType(f32)
c128 = ComplexType(f64)

ELEMENT_TYPES: tuple[Attribute, ...] = (c128, c64, f64, f32, f16, bf16, i64, i32, i1)
"""Element types a fusion tensor may have. The complex ones (`complex<f32>`, `complex<f64>`,
torch's complex64 and complex128) go through the ops `COMPLEX_OPS` lists only."""

SCALAR_TYPES: tuple[Attribute, ...] = ELEMENT_TYPES + (IndexType(),)
"""Types a scalar operand may have (`index` counts as an integer)."""

DYNAMIC = DYNAMIC_INDEX


class Category(IntEnum):
    """Promotion category of an element type."""

    BOOL = 0
    INTEGER = 1
    FLOAT = 2
    COMPLEX = 3


def type_name(t: Attribute) -> str:
    """Short spelling of a type for error messages (`f32`, `tensor<?x4xf32>`)."""
    import io

    from xdsl.printer import Printer

    stream = io.StringIO()
    Printer(stream=stream).print_attribute(t)
    return stream.getvalue()


def is_element_type(t: Attribute) -> bool:
    return t in ELEMENT_TYPES


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def is_complex(t: Attribute) -> bool:
    return isinstance(t, ComplexType)


def compute_type(t: Attribute) -> Attribute:
    """The element type arithmetic on elements of type `t` happens in, and a reduction of
    them accumulates in: f32 for f16 and bf16 (as torch does op by op), else `t` itself."""
    return f32 if isinstance(t, Float16Type | BFloat16Type) else t


def component_type(t: Attribute) -> Attribute:
    """The real type of a complex type's parts (the type itself for a real one)."""
    return t.element_type if isinstance(t, ComplexType) else t


def complex_of(t: Attribute) -> Attribute:
    """The complex type whose parts have float type `t` (c128 for f64, else c64)."""
    return c128 if t == f64 else c64


def category(t: Attribute) -> Category:
    if is_complex(t):
        return Category.COMPLEX
    if is_float(t):
        return Category.FLOAT
    if t == i1:
        return Category.BOOL
    if isinstance(t, IntegerType | IndexType):
        return Category.INTEGER
    raise VerifyException(f"unsupported element type {type_name(t)}")


def _bitwidth(t: Attribute) -> int:
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, ComplexType):
        return 2 * _bitwidth(t.element_type)
    assert isinstance(t, IntegerType | Float16Type | BFloat16Type | Float32Type | Float64Type)
    return t.bitwidth


def promote_pair(a: Attribute, b: Attribute) -> Attribute:
    """Promoted type of two tensor element types (both "dimensioned")."""
    if a == b:
        return a
    ca, cb = category(a), category(b)
    if Category.COMPLEX in (ca, cb):  # torch: the complex type of the wider float part
        parts = [component_type(t) for t in (a, b) if category(t) >= Category.FLOAT]
        return c128 if f64 in parts else c64
    if ca != cb:
        return a if ca > cb else b
    if {a, b} == {f16, bf16}:
        return f32
    return a if _bitwidth(a) >= _bitwidth(b) else b


def default_type(c: Category) -> Attribute:
    return {Category.BOOL: i1, Category.INTEGER: i64, Category.FLOAT: f32, Category.COMPLEX: c64}[c]


def element_type_of(t: Attribute) -> Attribute:
    """The element type of a tensor type, or the scalar type itself."""
    return t.element_type if isinstance(t, TensorType) else t


def promote(operand_types: Sequence[Attribute]) -> Attribute:
    """Result element type of an elementwise op over tensors and scalars."""
    tensors = [t.element_type for t in operand_types if isinstance(t, TensorType)]
    scalars = [t for t in operand_types if not isinstance(t, TensorType)]
    if not tensors:
        raise VerifyException("expected at least one tensor operand")
    result = tensors[0]
    for t in tensors[1:]:
        result = promote_pair(result, t)
    for s in scalars:
        if category(s) > category(result):
            if category(s) == Category.COMPLEX and category(result) == Category.FLOAT:
                result = complex_of(result)  # torch: f64 tensor * complex scalar is c128
            else:
                result = default_type(category(s))
    return result


def verify_element_type(t: Attribute, what: str) -> None:
    if not is_element_type(t):
        allowed = ", ".join(type_name(e) for e in ELEMENT_TYPES)
        raise VerifyException(
            f"{what} has element type {type_name(t)}; expected one of {allowed}"
        )


def verify_scalar_type(t: Attribute, what: str) -> None:
    if t not in SCALAR_TYPES:
        allowed = ", ".join(type_name(e) for e in SCALAR_TYPES)
        raise VerifyException(
            f"{what} has type {type_name(t)}; a scalar must be one of {allowed}"
        )


def fmt_extent(e: int) -> str:
    return "?" if e == DYNAMIC else str(e)


def fmt_shape(shape: Sequence[int]) -> str:
    return "x".join(fmt_extent(e) for e in shape) or "scalar"


def broadcast_shapes(
    shapes: Sequence[Sequence[int]], names: Sequence[str] | Callable[[], Sequence[str]]
) -> tuple[int, ...]:
    """Result shape of an elementwise op over equal-rank tensor shapes.

    `names` describe the operands in error messages (a callable is only called
    on failure)."""
    if len(shapes) == 2 and shapes[0] == shapes[1] and DYNAMIC not in shapes[0]:
        return tuple(shapes[0])
    ranks = {len(s) for s in shapes}
    if callable(names):
        if len(ranks) <= 1 and _broadcasts(shapes):
            names = [""] * len(shapes)
        else:
            names = names()
    if len(ranks) > 1:
        listed = ", ".join(f"{n} has rank {len(s)}" for n, s in zip(names, shapes))
        raise VerifyException(
            f"elementwise operands must have equal ranks ({listed}); "
            "use fusion.broadcast_in_dim to add dimensions"
        )
    rank = ranks.pop() if ranks else 0
    result: list[int] = []
    for d in range(rank):
        extents = [s[d] for s in shapes]
        static = {e for e in extents if e != DYNAMIC and e != 1}
        if len(static) > 1:
            listed = ", ".join(f"{n}: {fmt_extent(s[d])}" for n, s in zip(names, shapes))
            raise VerifyException(
                f"extents of dimension {d} do not broadcast ({listed}); "
                "only static size-1 dimensions broadcast"
            )
        if static:
            result.append(static.pop())
        elif DYNAMIC in extents:
            result.append(DYNAMIC)
        else:
            result.append(1)
    return tuple(result)


def _broadcasts(shapes: Sequence[Sequence[int]]) -> bool:
    for extents in zip(*shapes):
        if len({e for e in extents if e != DYNAMIC and e != 1}) > 1:
            return False
    return True


def normalize_dims(dims: Sequence[int], rank: int, what: str = "dims") -> list[int]:
    """Checks a list of dimension indices (negative counts from the end: `extents.dims`)."""
    try:
        return dim_rules.normalize_dims(dims, rank)
    except dim_rules.DimsError as e:
        raise VerifyException(f"{what} {e}") from None
