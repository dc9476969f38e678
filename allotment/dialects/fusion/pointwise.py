"""Elementwise ops (unary, binary, predicates, `fma`, `where`; size-1 broadcasting, type promotion),
`cast` and `set`.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, IntegerType, TensorType, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_attr_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion.base import FusionOp, _describe, _expect_tensor, _tensor, retype_results
from allotment.dialects.fusion_rules import Category, element_type_of, type_name

# --------------------------------------------------------------------------- #
# Elementwise ops (shared custom syntax)                                      #
# --------------------------------------------------------------------------- #


_ELEMENTWISE_RESULTS: dict[tuple, Attribute] = {}
"""Inferred result types of elementwise ops by (op class, operand types, properties)."""


class ElementwiseOp(FusionOp, ABC):
    """An op applied element by element, with broadcasting of static size-1 dims.

    Syntax: `%r = fusion.op %a, %b : T` when every operand and the result have
    type T, else `%r = fusion.op %a, %b : Ta, Tb -> Tr`.
    """

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return rules.promote(operand_types)

    def infer_result_types(self) -> list[Attribute]:
        # A pure function of the op's class, operand types and properties: cached, since
        # every pass's verification repeats it.
        types = tuple(v.type for v in self.operands)
        key = (type(self), types, tuple(self.properties.items()) if self.properties else ())
        cached = _ELEMENTWISE_RESULTS.get(key)
        if cached is not None:
            return [cached]
        result = self._infer_result_type(list(types))
        if len(_ELEMENTWISE_RESULTS) < 65536:
            _ELEMENTWISE_RESULTS[key] = result
        return [result]

    def _infer_result_type(self, types: list[Attribute]) -> Attribute:
        for i, t in enumerate(types):
            if not isinstance(t, TensorType):
                rules.verify_scalar_type(t, f"operand #{i}")
        tensors = [(i, t) for i, t in enumerate(types) if isinstance(t, TensorType)]
        if not tensors:
            raise VerifyException("expected at least one tensor operand")
        shape = rules.broadcast_shapes(
            [t.get_shape() for _, t in tensors], lambda: [_describe(i, t) for i, t in tensors]
        )
        return _tensor(self.result_element_type(types), shape)

    @classmethod
    def parse(cls, parser: Parser) -> ElementwiseOp:
        pos = parser.pos
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if parser.parse_optional_punctuation("->"):
            result_type = parser.parse_type()
        elif len(types) == 1:
            result_type = types[0]
            types = types * len(operands)
        else:
            parser.raise_error("expected '->' and the result type")
        resolved = parser.resolve_operands(operands, types, pos)
        op = cls.create(operands=resolved, result_types=[result_type], attributes=attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        types = [v.type for v in self.operands]
        res = self.results[0].type
        if all(t == res for t in types):
            printer.print_attribute(res)
        else:
            printer.print_list(types, printer.print_attribute)
            printer.print_string(" -> ")
            printer.print_attribute(res)


class UnaryOp(ElementwiseOp, ABC):
    """Elementwise op of one tensor operand; same type by default."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    ALLOWS_BOOL: ClassVar[bool] = True

    def __init__(self, input: SSAValue | Operation, result_type: Attribute | None = None):
        super().__init__(operands=[input], result_types=[result_type or _placeholder()])
        if result_type is None:
            retype_results(self)

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = element_type_of(operand_types[0])
        if not self.ALLOWS_BOOL and t == i1:
            raise VerifyException(f"{self.name} does not accept i1 (bool) tensors")
        return t


def _floating(t: Attribute, what: str) -> Attribute:
    """t, a float type; else a VerifyException `it takes floating-point {what} {t}`."""
    if not rules.is_float(t):
        raise VerifyException(f"it takes floating-point {what} {type_name(t)}")
    return t


def _placeholder() -> Attribute:
    return TensorType(i1, [])


class FloatUnaryOp(UnaryOp, ABC):
    """Elementwise math function; integer and bool inputs give f32 (as torch does)."""

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = element_type_of(operand_types[0])
        return t if rules.is_float(t) or rules.is_complex(t) else rules.default_type(Category.FLOAT)


@irdl_op_definition
class NegOp(UnaryOp):
    """`-x`, elementwise. Not defined on i1."""

    name = "fusion.neg"
    ALLOWS_BOOL: ClassVar[bool] = False
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class AbsOp(UnaryOp):
    """`|x|`, elementwise. Not defined on i1; of a complex tensor, its modulus (the real
    type of its parts)."""

    name = "fusion.abs"
    ALLOWS_BOOL: ClassVar[bool] = False
    COMPLEX: ClassVar[bool] = True

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return rules.component_type(super().result_element_type(operand_types))


@irdl_op_definition
class RealOp(UnaryOp):
    """The real part of a complex tensor (of its parts' type); a real tensor itself."""

    name = "fusion.real"
    COMPLEX: ClassVar[bool] = True

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return rules.component_type(element_type_of(operand_types[0]))


@irdl_op_definition
class ImagOp(UnaryOp):
    """The imaginary part of a complex tensor (of its parts' type)."""

    name = "fusion.imag"
    COMPLEX: ClassVar[bool] = True

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = element_type_of(operand_types[0])
        if not rules.is_complex(t):
            raise VerifyException(f"{self.name} takes a complex tensor, got {type_name(operand_types[0])}")
        return rules.component_type(t)


@irdl_op_definition
class ReluOp(UnaryOp):
    """`max(x, 0)`, elementwise. Not defined on i1."""

    name = "fusion.relu"
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """`e^x`, elementwise."""

    name = "fusion.exp"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """Natural logarithm, elementwise (NaN below 0, -inf at 0)."""

    name = "fusion.log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """Square root, elementwise (NaN below 0)."""

    name = "fusion.sqrt"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """`1 / sqrt(x)`, elementwise."""

    name = "fusion.rsqrt"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class ReciprocalOp(FloatUnaryOp):
    """`1 / x`, elementwise."""

    name = "fusion.reciprocal"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """Hyperbolic tangent, elementwise."""

    name = "fusion.tanh"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`1 / (1 + e^-x)`, elementwise."""

    name = "fusion.sigmoid"


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """Sine, elementwise."""

    name = "fusion.sin"


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """Cosine, elementwise."""

    name = "fusion.cos"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """Gauss error function, elementwise."""

    name = "fusion.erf"


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """`x == 0`, elementwise; the result is i1 whatever the input type."""

    name = "fusion.logical_not"

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return i1


@irdl_op_definition
class AcosOp(FloatUnaryOp):
    """Inverse cosine, elementwise, in radians (NaN outside [-1, 1])."""

    name = "fusion.acos"


@irdl_op_definition
class AcoshOp(FloatUnaryOp):
    """Inverse hyperbolic cosine, elementwise (NaN below 1)."""

    name = "fusion.acosh"


@irdl_op_definition
class AsinOp(FloatUnaryOp):
    """Inverse sine, elementwise, in radians (NaN outside [-1, 1])."""

    name = "fusion.asin"


@irdl_op_definition
class AsinhOp(FloatUnaryOp):
    """Inverse hyperbolic sine, elementwise."""

    name = "fusion.asinh"


@irdl_op_definition
class AtanOp(FloatUnaryOp):
    """Inverse tangent, elementwise, in radians."""

    name = "fusion.atan"


@irdl_op_definition
class AtanhOp(FloatUnaryOp):
    """Inverse hyperbolic tangent, elementwise (+-inf at +-1, NaN beyond)."""

    name = "fusion.atanh"


@irdl_op_definition
class CoshOp(FloatUnaryOp):
    """Hyperbolic cosine, elementwise."""

    name = "fusion.cosh"


@irdl_op_definition
class SinhOp(FloatUnaryOp):
    """Hyperbolic sine, elementwise."""

    name = "fusion.sinh"


@irdl_op_definition
class TanOp(FloatUnaryOp):
    """Tangent, elementwise."""

    name = "fusion.tan"


@irdl_op_definition
class Exp2Op(FloatUnaryOp):
    """`2^x`, elementwise."""

    name = "fusion.exp2"


@irdl_op_definition
class Expm1Op(FloatUnaryOp):
    """`e^x - 1`, elementwise, accurate near 0."""

    name = "fusion.expm1"


@irdl_op_definition
class Log2Op(FloatUnaryOp):
    """Base-2 logarithm, elementwise (NaN below 0, -inf at 0)."""

    name = "fusion.log2"


@irdl_op_definition
class Log10Op(FloatUnaryOp):
    """Base-10 logarithm, elementwise (NaN below 0, -inf at 0)."""

    name = "fusion.log10"


@irdl_op_definition
class Log1pOp(FloatUnaryOp):
    """`log(1 + x)`, elementwise, accurate near 0 (NaN below -1)."""

    name = "fusion.log1p"


@irdl_op_definition
class ErfcOp(FloatUnaryOp):
    """Complementary error function `1 - erf(x)`, elementwise, accurate for large x."""

    name = "fusion.erfc"


@irdl_op_definition
class ErfinvOp(FloatUnaryOp):
    """Inverse error function, elementwise (+-inf at +-1, NaN outside [-1, 1])."""

    name = "fusion.erfinv"


@irdl_op_definition
class ErfcinvOp(FloatUnaryOp):
    """Inverse complementary error function, elementwise (+inf at 0, -inf at 2, NaN outside [0, 2])."""

    name = "fusion.erfcinv"


@irdl_op_definition
class LgammaOp(FloatUnaryOp):
    """`log|gamma(x)|`, elementwise (+inf at the poles 0, -1, -2, ...)."""

    name = "fusion.lgamma"


class RoundingOp(UnaryOp, ABC):
    """Rounds floats to an integral value in the same type; integers are returned
    unchanged (as torch does); not defined on i1."""

    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class CeilOp(RoundingOp):
    """The smallest integral value not below x, elementwise."""

    name = "fusion.ceil"


@irdl_op_definition
class FloorOp(RoundingOp):
    """The largest integral value not above x, elementwise."""

    name = "fusion.floor"


@irdl_op_definition
class RoundOp(RoundingOp):
    """x rounded to the nearest integral value, halves to even (torch.round), elementwise."""

    name = "fusion.round"


@irdl_op_definition
class TruncOp(RoundingOp):
    """x rounded toward zero, elementwise."""

    name = "fusion.trunc"


@irdl_op_definition
class FracOp(UnaryOp):
    """`x - trunc(x)`, elementwise, with the sign of x. Floating-point tensors only
    (torch.frac is not defined on integers)."""

    name = "fusion.frac"

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return _floating(element_type_of(operand_types[0]), "tensors, got")


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 by the sign of x, in x's type (0 for NaN and for +-0; x itself on i1)."""

    name = "fusion.sign"


@irdl_op_definition
class SignbitOp(UnaryOp):
    """Whether the sign bit of x is set (true for -0.0 and negative NaNs; `x < 0` on
    integers; false on i1); the result is i1."""

    name = "fusion.signbit"

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return i1


@irdl_op_definition
class BitwiseNotOp(UnaryOp):
    """`~x`, elementwise: every bit flipped (logical not on i1). Integer and i1 tensors only."""

    name = "fusion.bitwise_not"

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = element_type_of(operand_types[0])
        if rules.is_float(t):
            raise VerifyException(
                f"it takes integer or i1 tensors, got {type_name(t)}"
            )
        return t



class TriangularOp(UnaryOp, ABC):
    """Keeps the elements on one side of a diagonal of the last two dimensions (a
    batch of matrices) and zeroes the others; same type (i1 included), rank >= 2.

    `diagonal` (an optional i64 attribute, 0 when absent) shifts the diagonal: 0 is
    the main one, positive values go above it, negative below, as in torch.
    Syntax: `%r = fusion.triu %x {diagonal = 1 : i64} : tensor<?x4x4xf32>`.
    """

    diagonal = opt_attr_def(IntegerAttr[I64])

    def __init__(self, input: SSAValue | Operation, diagonal: int = 0):
        super().__init__(input)
        if diagonal:
            self.attributes["diagonal"] = IntegerAttr(diagonal, i64)

    @property
    def diagonal_value(self) -> int:
        """The diagonal offset (0 when the attribute is absent)."""
        return 0 if self.diagonal is None else self.diagonal.value.data

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = operand_types[0]
        if isinstance(t, TensorType) and len(t.get_shape()) < 2:
            raise VerifyException(
                f"it takes a tensor of rank 2 or more (matrices in its last two dimensions), "
                f"got {type_name(t)}"
            )
        return element_type_of(t)


@irdl_op_definition
class TriuOp(TriangularOp):
    """The upper triangle: x[..., i, j] where j - i >= diagonal, else 0 (torch.triu)."""

    name = "fusion.triu"


@irdl_op_definition
class TrilOp(TriangularOp):
    """The lower triangle: x[..., i, j] where j - i <= diagonal, else 0 (torch.tril)."""

    name = "fusion.tril"


ScalarOrTensor = TensorType | IntegerType | IndexType | Attribute


class BinaryOp(ElementwiseOp, ABC):
    """Elementwise op of two operands, tensors or scalars (at least one tensor).

    The result element type is the promoted type of the operands
    (`fusion_rules.promote`), the result shape their broadcast shape.
    """

    lhs = operand_def()
    rhs = operand_def()
    result = result_def(TensorType)
    traits = traits_def(Pure())
    ALLOWS_BOOL: ClassVar[bool] = True

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        result_type: Attribute | None = None,
    ):
        super().__init__(operands=[lhs, rhs], result_types=[result_type or _placeholder()])
        if result_type is None:
            retype_results(self)

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = rules.promote(operand_types)
        if not self.ALLOWS_BOOL and t == i1:
            raise VerifyException(
                f"{self.name} of i1 (bool) operands is not defined; cast them first"
            )
        return t


@irdl_op_definition
class AddOp(BinaryOp):
    """`lhs + rhs`, elementwise; on i1 it is a logical or."""

    name = "fusion.add"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class SubOp(BinaryOp):
    """`lhs - rhs`, elementwise. Not defined on i1."""

    name = "fusion.sub"
    COMPLEX: ClassVar[bool] = True
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class MulOp(BinaryOp):
    """`lhs * rhs`, elementwise; on i1 it is a logical and."""

    name = "fusion.mul"
    COMPLEX: ClassVar[bool] = True


@irdl_op_definition
class DivOp(BinaryOp):
    """`lhs / rhs`, elementwise, in the promoted type.

    On floating types this is true division. On integer types it truncates
    toward zero (C semantics, as nvFuser's `div`); cast to a float type first
    for true division. An integer zero divisor gives 0 in generated kernels (the
    reference evaluator reports it as an error, as torch does); the integer
    minimum divided by -1 wraps to itself.
    """

    name = "fusion.div"
    COMPLEX: ClassVar[bool] = True
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class PowOp(BinaryOp):
    """`lhs ** rhs`, elementwise, in the promoted type. Not defined on i1. Generated Triton kernels
    compute a float base to a constant exponent of 1, 2, 3, -2, 0.5, -0.5 or -1 as torch's
    pow kernels do: products, sqrt, rsqrt, a reciprocal."""

    name = "fusion.pow"
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class MaximumOp(BinaryOp):
    """Elementwise maximum; NaN if either operand is NaN."""

    name = "fusion.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """Elementwise minimum; NaN if either operand is NaN."""

    name = "fusion.minimum"


@irdl_op_definition
class Atan2Op(BinaryOp):
    """The angle of the point (rhs, lhs) in radians, in [-pi, pi], elementwise (C's
    `atan2(lhs, rhs)`, signed zeros and infinities included). Integer and i1 operands
    give f32, as torch does."""

    name = "fusion.atan2"

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = rules.promote(operand_types)
        return t if rules.is_float(t) else rules.default_type(Category.FLOAT)


@irdl_op_definition
class NextafterOp(BinaryOp):
    """The next value of the result type after lhs in the direction of rhs (rhs if
    they are equal), elementwise. Floating-point results only."""

    name = "fusion.nextafter"

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return _floating(rules.promote(operand_types), "operands, got the promoted type")


@irdl_op_definition
class FmodOp(BinaryOp):
    """`lhs - trunc(lhs / rhs) * rhs`, exactly (C's fmod; on integers C's `%`): the
    result has the sign of lhs. Not defined on i1.

    An integer zero divisor gives lhs in generated kernels (so that
    `lhs == trunc_div(lhs, rhs) * rhs + fmod(lhs, rhs)` holds with a quotient of 0);
    the reference evaluator reports it as an error, as torch does."""

    name = "fusion.fmod"
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class RemainderOp(BinaryOp):
    """`lhs - floor(lhs / rhs) * rhs` (Python's `%`, torch.remainder): the result has
    the sign of rhs. Not defined on i1.

    An integer zero divisor gives lhs in generated kernels (the quotient
    `fusion.floor_divide` gives there is 0); the reference evaluator reports it as an
    error, as torch does."""

    name = "fusion.remainder"
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class FloorDivideOp(BinaryOp):
    """`floor(lhs / rhs)`, elementwise, in the promoted type (torch.div with
    rounding_mode="floor"). Not defined on i1.

    Integer zero divisors give 0 in generated kernels; the reference evaluator
    reports them as an error, as torch does. The integer minimum divided by -1
    wraps to itself."""

    name = "fusion.floor_divide"
    ALLOWS_BOOL: ClassVar[bool] = False


class IntegerBinaryOp(BinaryOp, ABC):
    """A binary op on integer operands (and i1 where ALLOWS_BOOL), in the promoted type;
    a floating-point operand is refused."""

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        t = rules.promote(operand_types)
        if rules.is_float(t):
            kinds = "integer or i1" if self.ALLOWS_BOOL else "integer"
            raise VerifyException(
                f"it takes {kinds} operands, got the promoted type {type_name(t)}"
            )
        if not self.ALLOWS_BOOL and t == i1:
            raise VerifyException(f"{self.name} of i1 (bool) operands is not defined; cast them first")
        return t


@irdl_op_definition
class BitwiseAndOp(IntegerBinaryOp):
    """`lhs & rhs`, bit by bit (logical and on i1)."""

    name = "fusion.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(IntegerBinaryOp):
    """`lhs | rhs`, bit by bit (logical or on i1)."""

    name = "fusion.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(IntegerBinaryOp):
    """`lhs ^ rhs`, bit by bit (logical xor on i1)."""

    name = "fusion.bitwise_xor"


@irdl_op_definition
class BitwiseLeftShiftOp(IntegerBinaryOp):
    """`lhs << rhs` in the promoted type, bits shifted out dropped; a shift amount
    that is negative or at least the bit width gives 0 (as torch does)."""

    name = "fusion.bitwise_left_shift"
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class BitwiseRightShiftOp(IntegerBinaryOp):
    """`lhs >> rhs`, arithmetic (the sign bit is shifted in); a shift amount that is
    negative or at least the bit width gives -1 for negative lhs and 0 otherwise (as
    torch does)."""

    name = "fusion.bitwise_right_shift"
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class LogicalRightShiftOp(IntegerBinaryOp):
    """`lhs >> rhs` on lhs's bits read as an unsigned number (zeros shifted in), as
    nvFuser's `logical_right_shift`; a shift amount that is negative or at least the
    bit width gives 0."""

    name = "fusion.logical_right_shift"
    ALLOWS_BOOL: ClassVar[bool] = False


@irdl_op_definition
class GcdOp(IntegerBinaryOp):
    """The greatest common divisor of |lhs| and |rhs| (0 for two zeros), as torch.gcd
    computes it (Euclid's algorithm on absolute values: a result involving the
    integer minimum, whose absolute value wraps, is torch's)."""

    name = "fusion.gcd"
    ALLOWS_BOOL: ClassVar[bool] = False


class PredicateOp(BinaryOp, ABC):
    """A binary op whose result is i1; the operands are compared after promotion."""

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        rules.promote(operand_types)
        return i1


@irdl_op_definition
class EqOp(PredicateOp):
    """`lhs == rhs`, elementwise, giving i1."""

    name = "fusion.eq"


@irdl_op_definition
class NeOp(PredicateOp):
    """`lhs != rhs`, elementwise, giving i1."""

    name = "fusion.ne"


@irdl_op_definition
class LtOp(PredicateOp):
    """`lhs < rhs`, elementwise, giving i1."""

    name = "fusion.lt"


@irdl_op_definition
class LeOp(PredicateOp):
    """`lhs <= rhs`, elementwise, giving i1."""

    name = "fusion.le"


@irdl_op_definition
class GtOp(PredicateOp):
    """`lhs > rhs`, elementwise, giving i1."""

    name = "fusion.gt"


@irdl_op_definition
class GeOp(PredicateOp):
    """`lhs >= rhs`, elementwise, giving i1."""

    name = "fusion.ge"


@irdl_op_definition
class LogicalAndOp(PredicateOp):
    """`(lhs != 0) and (rhs != 0)`, elementwise, giving i1."""

    name = "fusion.logical_and"


@irdl_op_definition
class LogicalOrOp(PredicateOp):
    """`(lhs != 0) or (rhs != 0)`, elementwise, giving i1."""

    name = "fusion.logical_or"


@irdl_op_definition
class FmaOp(ElementwiseOp):
    """`lhs * rhs + addend`, elementwise, rounded once: a fused multiply-add, whose product
    is not rounded before the addition (C's `fma`, IEEE 754's fusedMultiplyAdd, what
    `prims.fma` documents).

    The three operands are tensors or scalars (at least one tensor) and broadcast
    together; the result type is their promoted type (`fusion_rules.promote`), which must
    be floating-point: an integer fma is exact, a `fusion.mul` and a `fusion.add`. 16-bit
    floats compute in f32 as every elementwise op does: one f32 fma, then one rounding to
    the result type.
    """

    name = "fusion.fma"

    lhs = operand_def()
    rhs = operand_def()
    addend = operand_def()
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        addend: SSAValue | Operation,
        result_type: Attribute | None = None,
    ):
        super().__init__(
            operands=[lhs, rhs, addend], result_types=[result_type or _placeholder()]
        )
        if result_type is None:
            retype_results(self)

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        return _floating(rules.promote(operand_types), "operands, got the promoted type")


@irdl_op_definition
class WhereOp(ElementwiseOp):
    """`pred ? on_true : on_false`, elementwise.

    `pred` is an i1 tensor or scalar; the three operands broadcast together.
    The result type is the promoted type of `on_true` and `on_false`; when both
    are scalars, their promoted type as if they were tensors (`index` counting as i64):
    nvFuser's where of two Double scalars is Double, of two Int32 scalars Int32.
    """

    name = "fusion.where"
    COMPLEX: ClassVar[bool] = True

    pred = operand_def()
    on_true = operand_def()
    on_false = operand_def()
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self,
        pred: SSAValue | Operation,
        on_true: SSAValue | Operation,
        on_false: SSAValue | Operation,
        result_type: Attribute | None = None,
    ):
        super().__init__(
            operands=[pred, on_true, on_false], result_types=[result_type or _placeholder()]
        )
        if result_type is None:
            retype_results(self)

    def result_element_type(self, operand_types: Sequence[Attribute]) -> Attribute:
        if element_type_of(operand_types[0]) != i1:
            raise VerifyException(
                f"the predicate must be i1, got {type_name(operand_types[0])}"
            )
        values = list(operand_types[1:])
        if any(isinstance(t, TensorType) for t in values):
            return rules.promote(values)
        a, b = (i64 if isinstance(t, IndexType) else t for t in values)
        return rules.promote_pair(a, b)


# --------------------------------------------------------------------------- #
# Cast and copy                                                               #
# --------------------------------------------------------------------------- #


@irdl_op_definition
class CastOp(FusionOp):
    """Converts every element to the result's element type (same shape).

    Float to integer truncates toward zero; anything to i1 is `x != 0`.
    """

    name = "fusion.cast"
    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue | Operation, element_type: Attribute):
        t = SSAValue.get(input).type
        assert isinstance(t, TensorType)
        super().__init__(operands=[input], result_types=[_tensor(element_type, t.get_shape())])

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        return [_tensor(self.result.type.element_type, t.get_shape())]


@irdl_op_definition
class SetOp(ElementwiseOp):
    """A copy of the input into a new tensor (nvFuser's `set`).

    The result may carry another sharding than the input (a resharding copy).
    """

    name = "fusion.set"
    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])

    def infer_result_types(self) -> list[Attribute]:
        return [self.input.type]
