"""The `fusion` dialect: tensor programs that Allotment fuses, allocates and runs.

A fusion is a `func.func` whose arguments are builtin `tensor` values (static or
`?` extents; element types f64, f32, f16, bf16, i64, i32, i1) and builtin
scalars, and whose body is made of the ops below. Scalars inside a fusion are
function arguments or `arith.constant`s; `tensor.dim` reads an extent.

Every op infers its result type from its operands and properties; the verifier
checks the declared result type against the inferred one (shape and element
type; a sharding encoding on the result is checked on its own). Typing rules
(promotion, broadcasting) live in `fusion_rules` and are documented there.

Sharding: `fusion.mesh` declares a device mesh with explicit device ids, and
`#fusion.sharding<@mesh, [[axes of dim 0], [axes of dim 1], ...]>` used as a
tensor encoding says which tensor dimension is split over which mesh axes.
xDSL's `shard.grid` has no device ids (a grid is only a shape), so the mesh is
our own op; the split-axes list follows `shard.sharding`'s `split_axes`.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import lru_cache
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    ArrayAttr,
    DenseArrayBase,
    FlatSymbolRefAttr,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.dialects.utils import DimensionList, DynamicIndexList
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from allotment import dtypes
from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion_rules import (
    DYNAMIC,
    Category,
    element_type_of,
    fmt_shape,
    type_name,
)
from allotment.extents import size_arith, view_extents

ALIAS_ATTR = "fusion.alias_input"
"""Result attribute of a fusion function: the input an output is written into (an in-place
output, nvFuser's `add_output(out, alias_input)`), which alloc-alias honours."""

STRIDE_ORDER_ATTR = "fusion.stride_order"
"""Result attribute: nvFuser's stride order of an output (`stride_order[d]` is dim d's place
counted from the innermost), which fusion-allocate turns into the output alloc's `order`."""

_SHARDING_CHECKS: list[Callable[[Operation], str | None]] = []
"""What the verifier of an op with a sharded tensor runs: `sharding_rules.op_sharding_problem`,
registered when that module loads (it reads this module's ops, so this module cannot import
it) and by `allotment.dialects.ALL_DIALECTS`, which loads the two together."""


def register_sharding_check(check: Callable[[Operation], str | None]) -> None:
    """Adds `check` (why an op's sharded tensors disagree, or None) to `_SHARDING_CHECKS`, once."""
    if check not in _SHARDING_CHECKS:
        _SHARDING_CHECKS.append(check)


# --------------------------------------------------------------------------- #
# Attributes                                                                  #
# --------------------------------------------------------------------------- #


@irdl_attr_definition
class ShardingAttr(ParametrizedAttribute):
    """How a tensor is split over a device mesh; used as a `tensor` encoding.

    `#fusion.sharding<@tp, [[], [0]]>` on a rank-2 tensor: dimension 0 is
    replicated, dimension 1 is split over axis 0 of mesh `@tp`. A dimension
    split over several axes is split over their product, major axis first.
    A mesh axis splits at most one dimension. Trailing `, uneven` allows the
    last shard to be smaller (local extent = ceildiv(global, shards));
    without it the global extent must divide evenly.
    """

    name = "fusion.sharding"

    mesh: FlatSymbolRefAttr
    split_axes: ArrayAttr[ArrayAttr[IntAttr]]
    uneven: IntAttr

    def __init__(
        self, mesh: str | StringAttr, split_axes: Sequence[Sequence[int]], uneven: bool = False
    ):
        sym = FlatSymbolRefAttr(mesh) if isinstance(mesh, str | StringAttr) else mesh
        axes = ArrayAttr([ArrayAttr([IntAttr(a) for a in dim]) for dim in split_axes])
        super().__init__(sym, axes, IntAttr(int(uneven)))

    @property
    def axes(self) -> list[list[int]]:
        return [[a.data for a in dim.data] for dim in self.split_axes.data]

    @property
    def allows_uneven(self) -> bool:
        return bool(self.uneven.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            mesh = FlatSymbolRefAttr(parser.parse_symbol_name())
            parser.parse_punctuation(",")
            axes_start = parser.pos
            dims = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE,
                lambda: parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
                ),
            )
            axes_end = parser.pos
            uneven = False
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("uneven")
                uneven = True
        axes = ArrayAttr([ArrayAttr([IntAttr(a) for a in dim]) for dim in dims])
        params = (mesh, axes, IntAttr(int(uneven)))
        try:  # report invalid axes at their source location, not unlocated later
            cls.new(params)
        except VerifyException as e:
            parser.raise_error(str(e), axes_start, axes_end)
        return params

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"@{self.mesh.root_reference.data}, [")
            printer.print_string(
                ", ".join("[" + ", ".join(str(a) for a in dim) + "]" for dim in self.axes)
            )
            printer.print_string("]")
            if self.allows_uneven:
                printer.print_string(", uneven")

    def verify(self) -> None:
        used: list[int] = []
        for dim in self.axes:
            for a in dim:
                if a < 0:
                    raise VerifyException(f"sharding mesh axis {a} is negative")
                if a in used:
                    raise VerifyException(
                        f"sharding uses mesh axis {a} for more than one dimension"
                    )
                used.append(a)


# --------------------------------------------------------------------------- #
# Custom directives                                                           #
# --------------------------------------------------------------------------- #


@irdl_custom_directive
class IntList(CustomDirective):
    """A bracketed list of integers, `[1, 0, -1]`, stored as a `DenseArrayBase` of i64."""

    values: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        ints = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
        self.values.set(state, DenseArrayBase.from_list(i64, ints))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = self.values.get(op)
        assert isinstance(attr, DenseArrayBase)
        printer.print_string("[" + ", ".join(str(v) for v in attr.get_values()) + "]")


def int_list(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _ints(attr: DenseArrayBase) -> list[int]:
    return [int(v) for v in attr.get_values()]


# --------------------------------------------------------------------------- #
# Verification helpers                                                        #
# --------------------------------------------------------------------------- #


def _shape(t: Attribute) -> tuple[int, ...]:
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def _tensor(element_type: Attribute, shape: Sequence[int]) -> TensorType:
    return TensorType(element_type, list(shape))


def verify_sharding(op: Operation, t: TensorType, what: str) -> None:
    """Checks a tensor's sharding encoding against its rank and its mesh."""
    enc = t.encoding
    if not isinstance(enc, ShardingAttr):
        if isinstance(enc, NoneAttr):
            return
        raise VerifyException(
            f"{what} has encoding {type_name(enc)}; only #fusion.sharding is supported"
        )
    rank = len(t.get_shape())
    if len(enc.axes) != rank:
        raise VerifyException(
            f"{what}: sharding lists {len(enc.axes)} dimensions for a tensor of rank {rank}"
        )
    mesh_name = enc.mesh.root_reference.data
    mesh = SymbolTable.lookup_symbol(op, enc.mesh)
    if not isinstance(mesh, MeshOp):
        found = "not defined" if mesh is None else f"a {mesh.name}, not a fusion.mesh"
        raise VerifyException(f"{what}: sharding names mesh @{mesh_name}, which is {found}")
    mesh_rank = len(mesh.mesh_shape)
    for dim in enc.axes:
        for a in dim:
            if a >= mesh_rank:
                raise VerifyException(
                    f"{what}: sharding uses axis {a} of mesh @{mesh_name}, which has rank {mesh_rank}"
                )
    if not enc.allows_uneven:
        mesh_shape = mesh.shape_values
        for d, (e, axes) in enumerate(zip(t.get_shape(), enc.axes)):
            shards = prod(mesh_shape[a] for a in axes)
            if e != DYNAMIC and not view_extents.shard_divides(e, shards, enc.allows_uneven):
                raise VerifyException(
                    f"{what}: dimension {d} has extent {e}, which does not divide evenly over "
                    f"{shards} shards of mesh @{mesh_name}; mark the sharding `uneven` to allow it"
                )


def verify_extents(t: TensorType | MemRefType, what: str | Callable[[], str]) -> None:
    """A tensor or buffer type whose static extents can exist: each in [0, 2^63 - 1],
    and their bytes at most 2^63 - 1 (`size_arith.shape_problem`). `what` names the type
    in the message (a callable is called only on failure: verification is on the hot path)."""
    problem = _extents_problem(t)
    if problem is not None:
        raise VerifyException(f"{what() if callable(what) else what}: {problem}")


@lru_cache(maxsize=8192)
def _extents_problem(t: TensorType | MemRefType) -> str | None:
    name = dtypes.ir_name(t.element_type)
    nbytes = dtypes.BY_IR[name].nbytes if name is not None else 1  # an unsupported type is reported apart
    return size_arith.shape_problem(t.get_shape(), nbytes, DYNAMIC)


def verify_signature(f: Operation) -> None:
    """A function whose argument and result tensor types can exist (`verify_extents`):
    no op verifier sees the types of a function that only returns its argument."""
    function_type = f.properties.get("function_type") or f.attributes.get("function_type")
    name = f.properties.get("sym_name") or f.attributes.get("sym_name")
    label = f"@{name.data}" if isinstance(name, StringAttr) else "the function"
    inputs = getattr(function_type, "inputs", None)
    outputs = getattr(function_type, "outputs", None)
    for kind, types in (("argument", inputs), ("result", outputs)):
        for i, t in enumerate(types.data if types is not None else ()):
            if isinstance(t, TensorType):
                verify_extents(t, lambda kind=kind, i=i, t=t: f"{label} {kind} #{i} ({type_name(t)})")


def _describe(i: int, t: Attribute) -> str:
    return f"operand #{i} ({type_name(t)})"


_PLAIN_TENSOR_TYPES: dict[int, TensorType] = {}
"""Tensor types with a supported element type, extents that can exist and no encoding,
by `id` (each entry keeps its type alive, so an id is never reused while it is here)."""


def _remember_plain(t: TensorType) -> None:
    if len(_PLAIN_TENSOR_TYPES) >= 65536:
        _PLAIN_TENSOR_TYPES.clear()
    _PLAIN_TENSOR_TYPES[id(t)] = t


class FusionOp(IRDLOperation, ABC):
    """Base of fusion ops: types are checked, then the result type is inferred.

    Subclasses implement `infer_result_types`, which returns the result types
    (without encoding) implied by the operands and properties, raising
    `VerifyException` on invalid combinations.
    """

    @abstractmethod
    def infer_result_types(self) -> list[Attribute]:
        """The result types the operands and properties imply (no encoding)."""

    COMPLEX: ClassVar[bool] = False
    """Whether the op takes complex (`complex<f32>`, `complex<f64>`) tensors and scalars."""

    def verify_(self) -> None:
        # Messages are built only on failure: verification is on the hot path. A tensor
        # type already found valid and without an encoding (`_PLAIN_TENSOR_TYPES`, by
        # identity: the parser and the passes share type objects) is not checked again.
        plain = _PLAIN_TENSOR_TYPES
        if not self.COMPLEX:
            for v in (*self.operands, *self.results):
                if rules.is_complex(element_type_of(v.type)):
                    raise VerifyException(
                        f"{self.name} does not take complex values ({type_name(v.type)}); the complex "
                        "ops are add, sub, mul, div, neg, exp, sqrt, rsqrt, abs, real, imag, where, "
                        "cast, set, sum and the views")
        for i, v in enumerate(self.operands):
            t = v.type
            if plain.get(id(t)) is t:
                continue
            if isinstance(t, TensorType):
                if not rules.is_element_type(t.element_type):
                    rules.verify_element_type(t.element_type, _describe(i, t))
                verify_extents(t, lambda i=i, t=t: _describe(i, t))
                if not isinstance(t.encoding, NoneAttr):
                    verify_sharding(self, t, _describe(i, t))
                else:
                    _remember_plain(t)
        for i, r in enumerate(self.results):
            t = r.type
            if plain.get(id(t)) is t:
                continue
            if isinstance(t, TensorType):
                if not rules.is_element_type(t.element_type):
                    rules.verify_element_type(t.element_type, f"result #{i}")
                verify_extents(t, lambda i=i, t=t: f"result #{i} ({type_name(t)})")
                if not isinstance(t.encoding, NoneAttr):
                    verify_sharding(self, t, f"result #{i} ({type_name(t)})")
                else:
                    _remember_plain(t)
        try:
            inferred_types = self.infer_result_types()
        except size_arith.SizeArithmeticError as e:  # a static extent past a 64-bit index
            raise VerifyException(str(e)) from None
        # -- sharding agreement (allotment.dialects.sharding_rules) --
        if any(isinstance(getattr(v.type, "encoding", None), ShardingAttr) for v in (*self.operands, *self.results)):
            for check in _SHARDING_CHECKS:
                problem = check(self)
                if problem is not None:
                    raise VerifyException(problem)
        # -- end sharding agreement --
        for i, (res, inferred) in enumerate(zip(self.results, inferred_types)):
            declared = res.type
            if isinstance(declared, TensorType) and isinstance(inferred, TensorType):
                same = (
                    declared.element_type == inferred.element_type
                    and tuple(declared.get_shape()) == tuple(inferred.get_shape())
                )
            else:
                same = declared == inferred
            if not same:
                raise VerifyException(
                    f"result #{i} has type {type_name(declared)}, "
                    f"but the operands imply {type_name(inferred)}"
                )


def retype_results(op: FusionOp) -> None:
    """Gives a freshly built op (no uses yet) its inferred result types."""
    from xdsl.rewriter import Rewriter

    for result, inferred in zip(list(op.results), op.infer_result_types()):
        if result.type != inferred:
            Rewriter.replace_value_with_new_type(result, inferred)


def _expect_tensor(v: SSAValue, what: str) -> TensorType:
    if not isinstance(v.type, TensorType):
        raise VerifyException(f"{what} must be a tensor, got {type_name(v.type)}")
    return v.type


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
        t = element_type_of(operand_types[0])
        if not rules.is_float(t):
            raise VerifyException(
                f"it takes floating-point tensors, got {type_name(t)}"
            )
        return t


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
    """`lhs ** rhs`, elementwise, in the promoted type. Not defined on i1."""

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
        t = rules.promote(operand_types)
        if not rules.is_float(t):
            raise VerifyException(
                f"it takes floating-point operands, got the promoted type {type_name(t)}"
            )
        return t


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


@irdl_op_definition
class FullOp(FusionOp):
    """A new tensor of the given extents with every element equal to `value`.

    Extents are static integers or `index` SSA values (`[%n, 4]`); the value is
    a scalar converted to the result's element type.
    """

    name = "fusion.full"

    value = operand_def()
    sizes = var_operand_def(IndexType)
    static_sizes = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$value custom<DynamicIndexList>($sizes, $static_sizes) attr-dict "
        "`:` type($value) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        rules.verify_scalar_type(self.value.type, "the fill value")
        static = _ints(self.static_sizes)
        _verify_sizes(static, self.sizes, "sizes")
        _verify_constant_extents(self.sizes, "sizes")
        return [_tensor(self.result.type.element_type, _sizes_shape(static, "sizes"))]


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


# --------------------------------------------------------------------------- #
# Shape ops                                                                   #
# --------------------------------------------------------------------------- #


@irdl_op_definition
class BroadcastInDimOp(FusionOp):
    """Places the input's dimensions at `dims` of a tensor of the given shape.

    `dims` (strictly increasing, one per input dimension) says where each
    input dimension goes; the other result dimensions are new. A mapped input
    dimension of static extent 1 is expanded to the result extent; any other
    mapped extent must equal the result extent (checked at run time for `?`).
    """

    name = "fusion.broadcast_in_dim"
    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    shape = var_operand_def(IndexType)
    static_shape = prop_def(DenseArrayBase)
    broadcast_dims = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList, IntList)
    assembly_format = (
        "$input custom<DynamicIndexList>($shape, $static_shape) `dims` "
        "custom<IntList>($broadcast_dims) attr-dict `:` type($input) `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        static = _ints(self.static_shape)
        _verify_sizes(static, self.shape, "shape")
        _verify_constant_extents(self.shape, "shape")
        out = _sizes_shape(static, "shape")
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
class ExpandOp(FusionOp):
    """Expands static size-1 dimensions to the given extents (same rank, no copy).

    Every other dimension keeps its extent; its entry in the shape must equal
    it (checked at run time for `?`).
    """

    name = "fusion.expand"
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

    def infer_result_types(self) -> list[Attribute]:
        t = _expect_tensor(self.input, "the input")
        static = _ints(self.static_shape)
        _verify_sizes(static, self.shape, "shape")
        _verify_constant_extents(self.shape, "shape")
        out = _sizes_shape(static, "shape")
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
class ReshapeOp(FusionOp):
    """The input's elements (row-major) viewed with a new shape.

    Entries are static extents, `index` values, or at most one `-1`, inferred
    as numel / product(other extents), which must divide exactly.
    """

    name = "fusion.reshape"
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


@irdl_op_definition
class PermuteOp(FusionOp):
    """Reorders dimensions: result dimension i is input dimension `dims[i]`."""

    name = "fusion.permute"
    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)
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
class SqueezeOp(FusionOp):
    """Removes the listed dimensions, each of static extent 1."""

    name = "fusion.squeeze"
    COMPLEX: ClassVar[bool] = True

    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (IntList,)
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


# --------------------------------------------------------------------------- #
# Reductions                                                                  #
# --------------------------------------------------------------------------- #


def _reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> list[int]:
    if keepdim:
        return [1 if d in dims else e for d, e in enumerate(shape)]
    return [e for d, e in enumerate(shape) if d not in dims]


class ReductionOp(FusionOp, ABC):
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

    def reduced_dims(self) -> list[int]:
        t = _expect_tensor(self.input, "the input")
        return rules.normalize_dims(_ints(self.dims), len(t.get_shape()))

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
class VarMeanOp(FusionOp):
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
        dims = rules.normalize_dims(_ints(self.dims), len(t.get_shape()))
        out = _tensor(t.element_type, _reduced_shape(t.get_shape(), dims, self.keepdim is not None))
        return [out, out]


@irdl_op_definition
class WelfordOp(FusionOp):
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
        dims = rules.normalize_dims(_ints(self.dims), len(t.get_shape()))
        shape = _reduced_shape(t.get_shape(), dims, self.keepdim is not None)
        return [_tensor(et, shape), _tensor(et, shape), _tensor(i64, shape)]


# --------------------------------------------------------------------------- #
# Random numbers                                                              #
# --------------------------------------------------------------------------- #


class RandomOp(FusionOp, ABC):
    """A new tensor of random numbers: a pure function of (seed, offset, the element's
    row-major linear index, the result type), the same on every target and in every
    kernel that computes it (blocks, segmentation and recomputation do not matter).

    Each element runs Philox-4x32-10 on the counter (index low 32 bits, index high 32
    bits, offset low, offset high) with the key (seed low, seed high); `seed` and
    `offset` are i64 scalars (two offsets give independent streams). Extents are
    static or `index` values, as `fusion.full`'s. The result's element type is a
    float (f16, bf16, f32, f64); the mapping from Philox's four words to a value is
    on each op. Syntax: `%r = fusion.rand %seed, %offset [%n, 4] : tensor<?x4xf32>`.
    """

    seed = operand_def(i64)
    offset = operand_def(i64)
    sizes = var_operand_def(IndexType)
    static_sizes = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$seed `,` $offset custom<DynamicIndexList>($sizes, $static_sizes) attr-dict `:` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        what = self.name.removeprefix("fusion.")
        for v, role in ((self.seed, "seed"), (self.offset, "offset")):
            if v.type != i64:
                raise VerifyException(f"the {role} must be an i64 scalar, got {type_name(v.type)}")
        et = self.result.type.element_type
        if not rules.is_float(et):
            raise VerifyException(f"{what} produces floating-point elements (f16, bf16, f32, f64), got {type_name(et)}")
        static = _ints(self.static_sizes)
        _verify_sizes(static, self.sizes, "sizes")
        _verify_constant_extents(self.sizes, "sizes")
        return [_tensor(et, _sizes_shape(static, "sizes"))]


@irdl_op_definition
class RandOp(RandomOp):
    """Uniform random numbers in [0, 1) (`torch.rand`), exactly representable: from
    Philox's first word w0 (and second w1 for f64), f32 is `(w0 >> 8) * 2^-24`, f64
    `((w0 << 21) | (w1 >> 11)) * 2^-53`, f16 `(w0 >> 21) * 2^-11`, bf16 `(w0 >> 24) * 2^-8`.
    Bit-identical on every target."""

    name = "fusion.rand"


@irdl_op_definition
class RandnOp(RandomOp):
    """Standard normal random numbers (`torch.randn`) by Box-Muller in f64:
    `sqrt(-2 log u1) * cos(2 pi u2)` with u1 in (0, 1] from Philox's words 0 and 1
    (`(53 bits + 1) * 2^-53`) and u2 in [0, 1) from words 2 and 3 (53 bits * 2^-53),
    then rounded to the result type (16-bit types through f32). Targets differ only
    where their f64 log and cos differ (an f64 ulp or two: for f32 and narrower
    results, the same value except in rare double-rounding cases)."""

    name = "fusion.randn"


# --------------------------------------------------------------------------- #
# Matrix products                                                             #
# --------------------------------------------------------------------------- #


def _check_contraction(k_a: int, k_b: int, what: str) -> None:
    if k_a != k_b and DYNAMIC not in (k_a, k_b):
        raise VerifyException(f"{what}: contracted extents {k_a} and {k_b} differ")


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """`torch.matmul`'s result shape (batch dims broadcast like elementwise ops)."""
    if not a or not b:
        raise VerifyException("matmul operands must have rank >= 1")
    if len(a) == 1 and len(b) == 1:
        _check_contraction(a[0], b[0], "matmul")
        return []
    if len(b) == 1:
        _check_contraction(a[-1], b[0], "matmul")
        return list(a[:-1])
    if len(a) == 1:
        _check_contraction(a[0], b[-2], "matmul")
        return list(b[:-2]) + [b[-1]]
    _check_contraction(a[-1], b[-2], "matmul")
    ba, bb = list(a[:-2]), list(b[:-2])
    n = max(len(ba), len(bb))
    ba, bb = [1] * (n - len(ba)) + ba, [1] * (n - len(bb)) + bb
    batch = rules.broadcast_shapes([ba, bb], ["lhs batch", "rhs batch"]) if n else ()
    return list(batch) + [a[-2], b[-1]]


def _require_same_float(types: Sequence[TensorType], op: str) -> Attribute:
    et = types[0].element_type
    _require_float(et, op)
    for i, t in enumerate(types[1:], 1):
        if t.element_type != et:
            raise VerifyException(
                f"{op} operands must share one element type: operand #0 is "
                f"{type_name(et)}, operand #{i} is {type_name(t.element_type)}"
            )
    return et


@irdl_op_definition
class MatmulOp(FusionOp):
    """`torch.matmul(lhs, rhs)`: 1-D, 2-D and batched, batch dims broadcast.

    Both operands share one floating-point element type, which the result has.
    """

    name = "fusion.matmul"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[_placeholder()])
        retype_results(self)

    def infer_result_types(self) -> list[Attribute]:
        a = _expect_tensor(self.lhs, "lhs")
        b = _expect_tensor(self.rhs, "rhs")
        et = _require_same_float([a, b], "matmul")
        return [_tensor(et, matmul_shape(a.get_shape(), b.get_shape()))]


@irdl_op_definition
class LinearOp(FusionOp):
    """`input @ weight^T (+ bias)`: input [..., in], weight [out, in], bias [out].

    A 1-D weight [in] gives the result [...] (and then bias is 0-d). All
    operands share one floating-point element type.
    """

    name = "fusion.linear"

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight) "
        "(`,` type($bias)^)? `->` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "input")
        w = _expect_tensor(self.weight, "weight")
        types = [x, w] + ([_expect_tensor(self.bias, "bias")] if self.bias else [])
        et = _require_same_float(types, "linear")
        xs, ws = x.get_shape(), w.get_shape()
        if not xs:
            raise VerifyException("linear input must have rank >= 1")
        if len(ws) not in (1, 2):
            raise VerifyException(f"linear weight must have rank 1 or 2, got {len(ws)}")
        _check_contraction(xs[-1], ws[-1], "linear")
        out_features = list(ws[:1]) if len(ws) == 2 else []
        if self.bias:
            bs = self.bias.type.get_shape()
            if len(bs) != len(out_features) or (
                bs and DYNAMIC not in (bs[0], ws[0]) and bs[0] != ws[0]
            ):
                raise VerifyException(
                    f"bias shape {fmt_shape(bs)} does not match the weight's "
                    f"out features {fmt_shape(out_features)}"
                )
        return [_tensor(et, list(xs[:-1]) + out_features)]


# --------------------------------------------------------------------------- #
# Indexing: gathers and scatters at computed indices                          #
# --------------------------------------------------------------------------- #


def _index_tensor(v: SSAValue, what: str) -> TensorType:
    """An index operand: a tensor of i32 or i64."""
    t = _expect_tensor(v, what)
    if not (isinstance(t.element_type, IntegerType) and t.element_type.width.data in (32, 64)):
        raise VerifyException(f"{what} must have element type i32 or i64, got {type_name(t)}")
    return t


def _static_le(a: int, b: int) -> bool:
    """a <= b where both are static (a dynamic extent is checked at run time)."""
    return a == DYNAMIC or b == DYNAMIC or a <= b


def _static_eq(a: int, b: int) -> bool:
    return a == DYNAMIC or b == DYNAMIC or a == b


INDEX_CHECK = "index_check"
"""The attribute of an indexing op that says where its indices are checked (`IndexingOp`)."""
INDEX_CHECKS = ("host", "device")
"""Its values: `host` (the default, also when absent) and `device`."""


class IndexingOp(FusionOp, ABC):
    """An op that reads or writes a tensor at indices held in another tensor.

    Every index must lie in `[0, extent)` of the dimension it indexes: negative
    indices are errors (as in torch.gather and torch.index_select), not counted
    from the end. `source_operand` is the tensor read or written at computed
    indices: `fusion-segment` keeps it (and the index) a buffer.

    Where the indices are checked is the op's `index_check` attribute:
    - `"host"` (the default, and what an op without the attribute means): the generated
      host program checks the index tensor before the kernel that uses it runs (one
      min/max per index tensor, read on the host: on a GPU a synchronization) and
      raises a RunError naming the op, its index operand, the bad index and the extent;
    - `"device"`: the kernel that reads or writes at the indices checks each index
      before its load or store (`tl.device_assert`, as torch's CUDA kernels and
      Inductor check indirect indexing): nothing is read on the host. An index out of
      range stops the kernel: on a GPU a device-side assert (a CUDA error at the next
      synchronization, after which the CUDA context is unusable, as in torch), in
      Triton's interpreter a RunError naming the op and its operands before any
      element is read or written out of range. `fusion-index-checks{where=device}`
      sets it; the torch.compile frontend does.
    The reference evaluator raises either way."""

    index_check = opt_attr_def(StringAttr, attr_name=INDEX_CHECK)

    def verify_(self) -> None:
        check = self.index_check
        if check is not None and check.data not in INDEX_CHECKS:
            raise VerifyException(f"index_check must be one of {', '.join(map(repr, INDEX_CHECKS))}, "
                                  f"got {check.data!r}")
        super().verify_()

    @property
    def checks_on_device(self) -> bool:
        """Whether the kernel checks the indices (`index_check = "device"`)."""
        return self.index_check is not None and self.index_check.data == "device"

    @property
    @abstractmethod
    def index_operand(self) -> SSAValue:
        """The tensor of indices."""

    @property
    @abstractmethod
    def source_operand(self) -> SSAValue:
        """The tensor addressed through the indices."""

    def indexed_dim(self) -> int:
        """The dimension of `source_operand` the indices address."""
        rank = len(_expect_tensor(self.source_operand, "the source").get_shape())
        return rules.normalize_dims([self.dim.value.data], rank, "dim")[0]


@irdl_op_definition
class IndexSelectOp(IndexingOp):
    """torch.index_select: `result[..., i, ...] = input[..., index[i], ...]` along `dim`.

    `index` is 1-D (i32 or i64); the result is the input with extent `dim`
    replaced by the index's length."""

    name = "fusion.index_select"

    input = operand_def(TensorType)
    index = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $index `dim` $dim attr-dict `:` type($input) `,` type($index) `->` type($result)"

    @property
    def index_operand(self) -> SSAValue:
        return self.index

    @property
    def source_operand(self) -> SSAValue:
        return self.input

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "the input")
        idx = _index_tensor(self.index, "the index")
        if len(idx.get_shape()) != 1:
            raise VerifyException(f"the index must be 1-D, got {type_name(idx)}")
        if not x.get_shape():
            raise VerifyException("the input must have rank >= 1")
        dim = self.indexed_dim()
        out = list(x.get_shape())
        out[dim] = idx.get_shape()[0]
        return [_tensor(x.element_type, out)]


class _AlongDimOp(IndexingOp, ABC):
    """gather and take_along_axis: `result[i..., j, k...] = input[i..., index[i..., j, k...], k...]`."""

    input = operand_def(TensorType)
    index = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input `,` $index `dim` $dim attr-dict `:` type($input) `,` type($index) `->` type($result)"

    EXACT: ClassVar[bool] = False
    """Whether the extents other than `dim` must equal the input's (take_along_axis)."""

    @property
    def index_operand(self) -> SSAValue:
        return self.index

    @property
    def source_operand(self) -> SSAValue:
        return self.input

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "the input")
        idx = _index_tensor(self.index, "the index")
        xs, js = x.get_shape(), idx.get_shape()
        if len(xs) != len(js) or not xs:
            raise VerifyException(
                f"the index must have the input's rank (>= 1): {type_name(x)} and {type_name(idx)}"
            )
        dim = self.indexed_dim()
        for d, (a, b) in enumerate(zip(js, xs)):
            if d == dim:
                continue
            if self.EXACT and not _static_eq(a, b):
                raise VerifyException(f"dimension {d}: the index extent {a} must equal the input's {b}")
            if not _static_le(a, b):
                raise VerifyException(f"dimension {d}: the index extent {a} exceeds the input's {b}")
        return [_tensor(x.element_type, js)]


@irdl_op_definition
class GatherOp(_AlongDimOp):
    """torch.gather: the result has the index's shape; `index.size(d) <= input.size(d)`
    for every `d != dim` (checked at run time where dynamic)."""

    name = "fusion.gather"


@irdl_op_definition
class TakeAlongAxisOp(_AlongDimOp):
    """numpy.take_along_axis (nvFuser's takeAlongAxis): gather whose index extents equal
    the input's in every dimension but `dim` (checked at run time where dynamic)."""

    name = "fusion.take_along_axis"
    EXACT: ClassVar[bool] = True


@irdl_op_definition
class EmbeddingOp(IndexingOp):
    """torch.nn.functional.embedding's forward: `result[i..., :] = weight[index[i...], :]`.

    `weight` is 2-D [num_embeddings, embedding_dim]; the result has shape
    `index.shape + [embedding_dim]`. (padding_idx only changes the gradient;
    max_norm renormalization is not an op of this dialect.)"""

    name = "fusion.embedding"

    index = operand_def(TensorType)
    weight = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$index `,` $weight attr-dict `:` type($index) `,` type($weight) `->` type($result)"

    @property
    def index_operand(self) -> SSAValue:
        return self.index

    @property
    def source_operand(self) -> SSAValue:
        return self.weight

    def indexed_dim(self) -> int:
        return 0

    def infer_result_types(self) -> list[Attribute]:
        idx = _index_tensor(self.index, "the index")
        w = _expect_tensor(self.weight, "the weight")
        if len(w.get_shape()) != 2:
            raise VerifyException(f"the weight must be 2-D [num_embeddings, embedding_dim], got {type_name(w)}")
        if not idx.get_shape():
            raise VerifyException("the index must have rank >= 1")
        return [_tensor(w.element_type, [*idx.get_shape(), w.get_shape()[1]])]


@irdl_op_definition
class ScatterOp(IndexingOp):
    """torch.scatter without reduce, out of place: the result is `input` with
    `result[i..., index[i..., j, k...], k...] = src[i..., j, k...]` along `dim`.

    `index` and `src` have equal shapes (a restriction of torch's `<=`), of the
    input's rank, with `index.size(d) <= input.size(d)` for `d != dim`. Where two
    positions of `index` name the same element, which `src` value lands there is
    unspecified (as in torch); the generated kernel's stores race."""

    name = "fusion.scatter"

    input = operand_def(TensorType)
    index = operand_def(TensorType)
    src = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $index `,` $src `dim` $dim attr-dict `:` type($input) `,` type($index) `,` type($src) "
        "`->` type($result)"
    )

    @property
    def index_operand(self) -> SSAValue:
        return self.index

    @property
    def source_operand(self) -> SSAValue:
        return self.input

    def infer_result_types(self) -> list[Attribute]:
        x = _expect_tensor(self.input, "the input")
        idx = _index_tensor(self.index, "the index")
        src = _expect_tensor(self.src, "the source")
        xs, js, ss = x.get_shape(), idx.get_shape(), src.get_shape()
        if not (len(xs) == len(js) == len(ss)) or not xs:
            raise VerifyException(
                f"input, index and source must have one rank (>= 1): {type_name(x)}, {type_name(idx)}, {type_name(src)}"
            )
        if src.element_type != x.element_type:
            raise VerifyException(f"the source's element type must be the input's: {type_name(src)} and {type_name(x)}")
        dim = self.indexed_dim()
        for d, (a, b, c) in enumerate(zip(js, xs, ss)):
            if not _static_eq(a, c):
                raise VerifyException(f"dimension {d}: the index extent {a} must equal the source's {c}")
            if d != dim and not _static_le(a, b):
                raise VerifyException(f"dimension {d}: the index extent {a} exceeds the input's {b}")
        return [_tensor(x.element_type, xs)]


@irdl_op_definition
class IndexPutAccumulateOp(IndexingOp):
    """torch.index_put_(acc, (index,), value, accumulate=True), out of place:
    `result = acc` then `result[index[i], k...] += value[i, k...]` for every i.

    `index` is 1-D; `value` has shape `[len(index)] + acc.shape[1:]`. Duplicate
    indices all add. The generated kernel adds with atomics, so float sums
    with duplicates depend on the order the adds land in (not deterministic, as
    torch's CUDA kernel). The accumulator is a float or integer tensor (not i1)."""

    name = "fusion.index_put_accumulate"

    acc = operand_def(TensorType)
    index = operand_def(TensorType)
    value = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$acc `,` $index `,` $value attr-dict `:` type($acc) `,` type($index) `,` type($value) `->` type($result)"
    )

    @property
    def index_operand(self) -> SSAValue:
        return self.index

    @property
    def source_operand(self) -> SSAValue:
        return self.acc

    def indexed_dim(self) -> int:
        return 0

    def infer_result_types(self) -> list[Attribute]:
        acc = _expect_tensor(self.acc, "the accumulator")
        idx = _index_tensor(self.index, "the index")
        val = _expect_tensor(self.value, "the value")
        if acc.element_type == IntegerType(1):
            raise VerifyException("the accumulator must be a float or integer tensor, not i1")
        if val.element_type != acc.element_type:
            raise VerifyException(
                f"the value's element type must be the accumulator's: {type_name(val)} and {type_name(acc)}"
            )
        if len(idx.get_shape()) != 1:
            raise VerifyException(f"the index must be 1-D, got {type_name(idx)}")
        a, v = acc.get_shape(), val.get_shape()
        if not a or len(v) != len(a):
            raise VerifyException(
                f"the value must have the accumulator's rank (>= 1): {type_name(val)} and {type_name(acc)}"
            )
        if not _static_eq(v[0], idx.get_shape()[0]):
            raise VerifyException(f"dimension 0: the value extent {v[0]} must equal the index length {idx.get_shape()[0]}")
        for d in range(1, len(a)):
            if not _static_eq(v[d], a[d]):
                raise VerifyException(f"dimension {d}: the value extent {v[d]} must equal the accumulator's {a[d]}")
        return [_tensor(acc.element_type, a)]


INDEXING_GATHERS = (IndexSelectOp, GatherOp, TakeAlongAxisOp, EmbeddingOp)
"""Indexing ops that read at computed indices: gather loads in a pointwise kernel."""
INDEXING_SCATTERS = (ScatterOp, IndexPutAccumulateOp)
"""Indexing ops that write at computed indices: a kernel of their own."""


# --------------------------------------------------------------------------- #
# Device meshes                                                               #
# --------------------------------------------------------------------------- #


@irdl_op_definition
class MeshOp(IRDLOperation):
    """A named device mesh: an n-D grid of explicit device ids.

    `fusion.mesh @tp shape 2x2 devices [0, 1, 2, 3]` lays the ids out
    row-major over the shape. Ids are distinct and non-negative; their count
    is the product of the shape. A tensor sharded over a mesh exists only on
    its devices.
    """

    name = "fusion.mesh"

    sym_name = prop_def(SymbolNameConstraint())
    mesh_shape = prop_def(DenseArrayBase, prop_name="shape")
    devices = prop_def(DenseArrayBase)
    traits = traits_def(SymbolOpInterface())
    custom_directives = (DimensionList, IntList)
    assembly_format = (
        "$sym_name `shape` custom<DimensionList>($shape) `devices` custom<IntList>($devices) "
        "attr-dict"
    )

    def __init__(self, name: str, shape: Sequence[int], devices: Sequence[int]):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "shape": int_list(shape),
                "devices": int_list(devices),
            }
        )

    @property
    def shape_values(self) -> list[int]:
        return _ints(self.mesh_shape)

    @property
    def device_ids(self) -> list[int]:
        return _ints(self.devices)

    def verify_(self) -> None:
        shape, ids = self.shape_values, self.device_ids
        if not shape or any(s <= 0 for s in shape):
            raise VerifyException(f"mesh shape {shape} must be non-empty and positive")
        if len(ids) != prod(shape):
            raise VerifyException(
                f"mesh of shape {'x'.join(map(str, shape))} needs {prod(shape)} device ids, "
                f"got {len(ids)}"
            )
        if len(set(ids)) != len(ids):
            raise VerifyException(f"mesh device ids {ids} are not distinct")
        if any(i < 0 for i in ids):
            raise VerifyException(f"mesh device ids {ids} must be non-negative")


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


# --------------------------------------------------------------------------- #
# Segments (kernel regions at the tensor level)                               #
# --------------------------------------------------------------------------- #


SEGMENT_KINDS = ("pointwise", "reduction", "normalization", "scan", "sort", "view", "library", "collective",
                 "inner_outer", "aten")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `fusion.segment` body: its operands are the segment's results."""

    name = "fusion.yield"

    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(SegmentOp)))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class SegmentOp(IRDLOperation):
    """A group of fusion ops that one generated kernel (or one library call) executes.

    `fusion-segment` produces these. The body is isolated from above: every value
    it uses comes in through the operands (tensors and scalars), which the entry
    block's arguments stand for; constants are cloned inside. The body yields the
    segment's results: the values used after the segment or returned.

    Kinds and what each body may contain:
    - `pointwise`: elementwise ops, cast, set, full, iota, pad, cat and the
      broadcast-like views (broadcast_in_dim, expand, squeeze) of values computed
      inside; one iteration domain (the shape of its largest result). Values
      inside may also be off that domain: slices (static steps), permutes,
      reshapes that only insert or remove size-1 dims, pads and cats of values
      computed inside are index arithmetic on the domain's indices, and the ops
      they read are recomputed at those indices; no buffer holds them.
    - `reduction`: one or more reductions over the same dims of one domain, with
      pointwise ops before them (on that domain) and after them (on the reduced
      domain).
    - `normalization`: a reduction kind whose reduced values are broadcast back
      and consumed by pointwise ops on the full domain (RMSNorm, LayerNorm,
      softmax); its reduced dims are the trailing dims of the domain.
    - `inner_outer`: a normalization (or reduction) over the last dim of a
      [rows..., N] domain (row reductions, keeping the rows) together with column
      reductions of values on the same domain (sums or means of floats over every
      row dim, keeping the last dim: RMSNorm and LayerNorm backward's dw, db),
      made only where the row fits on chip (`analysis/inner_outer.py`). The kernel
      reads each row once: it computes the row reductions' outputs and adds the
      row's column terms to partial sums it keeps on chip, one [programs, N]
      partials row per program; a second small kernel reduces the partials in a
      fixed order and computes the column reductions' outputs.
    - `scan`: cumsum, cumprod, cummax, cummin along one dim of one domain, with
      pointwise ops before them (recomputed at the scan's indices) and after them
      (on the same domain); the kernel streams each row once in chunks, carrying
      the running value from chunk to chunk.
    - `sort`: one argsort or topk; the kernel sorts each whole row in registers.
    - `view`: one view op (reshape, permute, slice, broadcast_in_dim, expand,
      squeeze) of a value computed elsewhere; no kernel, no allocation. A view
      is a segment (its source materialized in a buffer) only where a consumer
      needs that buffer: a view of a function argument (a free strided view);
      a view that is returned or used by more than one segment or by a library
      call; a view of a value that is itself needed in memory (returned, or
      used by several segments); a reshape that merges or splits dims, or a
      slice with a dynamic step (these need div/mod or run-time strides in
      index arithmetic). A reduction's result read by another segment is in
      a buffer (a kernel holds its own rows' reduced values only); views of it
      in the reading kernel are index arithmetic on that buffer.
    - `library`: one matmul or linear, executed by a library call.
    - `aten`: one `fusion.aten`, a call of that ATen operator (out= into its buffers,
      or buffers the call makes: `alloc.AllocOp`'s `by_call`).
    - `collective`: one `comm` op (a resharding between devices), executed by
      torch.distributed (`dialects/comm.py`).

    Syntax: `%r0, %r1 = fusion.segment "k0" kind (%a, %b) : (Ta, Tb) -> (Tr0, Tr1)
    attributes {...}? { ^bb0(%a_1: Ta, %b_1: Tb): ... fusion.yield %v0, %v1 : Tr0, Tr1 }`
    (one result type may go without parentheses).
    """

    name = "fusion.segment"

    inputs = var_operand_def()
    outputs = var_result_def()
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove())

    def __init__(
        self,
        name: str,
        kind: str,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={"sym_name": StringAttr(name), "kind": StringAttr(kind)},
            regions=[body],
        )

    def verify_(self) -> None:
        if self.kind.data not in SEGMENT_KINDS:
            raise VerifyException(
                f"segment kind '{self.kind.data}' is not one of {', '.join(SEGMENT_KINDS)}"
            )
        block = self.body.block
        arg_types = [a.type for a in block.args]
        in_types = [v.type for v in self.inputs]
        if arg_types != in_types:
            raise VerifyException(
                f"the body's arguments ({', '.join(map(type_name, arg_types))}) must match "
                f"the inputs ({', '.join(map(type_name, in_types))})"
            )
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("the body must end with fusion.yield")
        yielded = [v.type for v in last.values]
        out_types = [r.type for r in self.outputs]
        if yielded != out_types:
            raise VerifyException(
                f"fusion.yield gives ({', '.join(map(type_name, yielded))}) but the segment "
                f"returns ({', '.join(map(type_name, out_types))})"
            )

    @classmethod
    def parse(cls, parser: Parser) -> SegmentOp:
        name = parser.parse_str_literal()
        kind = parser.parse_identifier()
        pos = parser.pos
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        in_types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        if parser.parse_optional_punctuation("("):
            out_types: list[Attribute] = []
            if not parser.parse_optional_punctuation(")"):
                out_types = parser.parse_comma_separated_list(
                    parser.Delimiter.NONE, parser.parse_type
                )
                parser.parse_punctuation(")")
        else:
            out_types = [parser.parse_type()]
        inputs = parser.resolve_operands(operands, in_types, pos)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        op = cls(name, kind, inputs, out_types, body)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f' "{self.sym_name.data}" {self.kind.data} (')
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(") : (")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(") -> ")
        out_types = [r.type for r in self.outputs]
        if len(out_types) == 1:
            printer.print_attribute(out_types[0])
        else:
            printer.print_string("(")
            printer.print_list(out_types, printer.print_attribute)
            printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)


ATEN_NAME = re.compile(r"(aten|prims)\.[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*")
"""What an `fusion.aten` target looks like: `namespace.op.overload` (`aten.convolution.default`)."""


@irdl_op_definition
class AtenOp(IRDLOperation):
    """One call of an ATen (or prims) operator whose result the fusion dialect does not
    express: a convolution, an attention, any op a frontend could not translate.

    `target` names the operator overload (`aten.convolution.default`). `call` is a JSON
    object: `args` and `kwargs` (the call's arguments: `{"t": i}` is tensor operand i,
    `{"s": i}` scalar operand i, `{"dtype": "float32"}`, `{"device": null}` the program's
    device, `{"float": "inf"}` a non-finite float, lists and JSON scalars as they are) and
    `results` (null: the call returns the one result; else the positions of the results in
    the tuple it returns). Operands: the tensors it reads, the scalars its arguments use,
    and one `index` value per `?` extent of the results, in order (`sizes`): a frontend
    knows every result's shape and dtype when it builds the op (from fake tensors), so the
    allocation pass sizes its buffers as any other's. `out` names the overload with `out=`
    arguments (`out_args`, one per result) that writes into those buffers; without it the
    call allocates its results itself. The op is a kernel of its own kind (`aten`): it
    never fuses with its neighbours.
    """

    name = "fusion.aten"

    inputs = var_operand_def(TensorType)
    scalars = var_operand_def()
    sizes = var_operand_def(IndexType)
    target = prop_def(StringAttr)
    call = prop_def(StringAttr)
    out = opt_prop_def(StringAttr)
    out_args = opt_prop_def(ArrayAttr[StringAttr])
    res = var_result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$target `(` $inputs `)` (`scalars` `(` $scalars^ `:` type($scalars) `)`)? "
        "(`sizes` `(` $sizes^ `)`)? attr-dict `:` functional-type($inputs, $res)"
    )

    def __init__(
        self,
        target: str,
        call: str,
        inputs: Sequence[SSAValue],
        scalars: Sequence[SSAValue],
        sizes: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        out: tuple[str, Sequence[str]] | None = None,
    ):
        props: dict[str, Attribute] = {"target": StringAttr(target), "call": StringAttr(call)}
        if out is not None:
            props["out"] = StringAttr(out[0])
            props["out_args"] = ArrayAttr([StringAttr(a) for a in out[1]])
        super().__init__(
            operands=[list(inputs), list(scalars), list(sizes)],
            result_types=[list(result_types)],
            properties=props,
        )

    @property
    def decoded_call(self) -> dict:
        """The `call` property as Python data (verified to be a JSON object)."""
        return json.loads(self.call.data)

    def verify_(self) -> None:
        if not ATEN_NAME.fullmatch(self.target.data):
            raise VerifyException(f"target '{self.target.data}' is not namespace.op.overload of aten or prims")
        try:
            call = self.decoded_call
        except ValueError as e:
            raise VerifyException(f"call is not JSON: {e}") from None
        if not isinstance(call, dict) or not isinstance(call.get("args", []), list) or not isinstance(
            call.get("kwargs", {}), dict
        ):
            raise VerifyException("call must be a JSON object with a list 'args' and an object 'kwargs'")
        results = call.get("results")
        if results is None and len(self.res) != 1:
            raise VerifyException(f"a call with results null returns one tensor, not {len(self.res)}")
        if results is not None and (
            not isinstance(results, list) or len(results) != len(self.res)
            or not all(isinstance(i, int) and i >= 0 for i in results)
        ):
            raise VerifyException(f"results must list one position per result ({len(self.res)})")
        _verify_call_refs(call, len(self.inputs), len(self.scalars))
        dynamic = sum(1 for r in self.res for e in r.type.get_shape() if e == DYNAMIC_INDEX)
        if dynamic != len(self.sizes):
            raise VerifyException(f"the results have {dynamic} dynamic extents but {len(self.sizes)} sizes")
        for i, r in enumerate(self.res):
            rules.verify_element_type(r.type.element_type, f"result #{i}")
        if (self.out is None) != (self.out_args is None):
            raise VerifyException("out and out_args come together")
        if self.out_args is not None and len(self.out_args) != len(self.res):
            raise VerifyException(f"out_args names {len(self.out_args)} arguments for {len(self.res)} results")
        for s in self.scalars:
            if isinstance(s.type, TensorType):
                raise VerifyException("scalars must not be tensors")


def _verify_call_refs(value: object, n_inputs: int, n_scalars: int) -> None:
    """Every `{"t": i}` and `{"s": i}` of a call names an operand that exists."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            if "t" in v and (not isinstance(v["t"], int) or not 0 <= v["t"] < n_inputs):
                raise VerifyException(f"call refers to tensor operand {v['t']!r} of {n_inputs}")
            if "s" in v and (not isinstance(v["s"], int) or not 0 <= v["s"] < n_scalars):
                raise VerifyException(f"call refers to scalar operand {v['s']!r} of {n_scalars}")
            stack.extend(v.values())


Fusion = Dialect(
    "fusion",
    [
        NegOp, AbsOp, RealOp, ImagOp, ReluOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, TanhOp,
        SigmoidOp, SinOp, CosOp, ErfOp, LogicalNotOp,
        AcosOp, AcoshOp, AsinOp, AsinhOp, AtanOp, AtanhOp, CoshOp, SinhOp, TanOp, Exp2Op,
        Expm1Op, Log2Op, Log10Op, Log1pOp, ErfcOp, ErfinvOp, ErfcinvOp, LgammaOp,
        CeilOp, FloorOp, RoundOp, TruncOp, FracOp, SignOp, SignbitOp, BitwiseNotOp,
        TriuOp, TrilOp,
        AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp,
        Atan2Op, NextafterOp, FmodOp, RemainderOp, FloorDivideOp,
        BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitwiseLeftShiftOp, BitwiseRightShiftOp,
        LogicalRightShiftOp, GcdOp,
        EqOp, NeOp, LtOp, LeOp, GtOp, GeOp, LogicalAndOp, LogicalOrOp, WhereOp,
        CastOp, SetOp, FullOp, IotaOp,
        BroadcastInDimOp, ExpandOp, ReshapeOp, PermuteOp, SqueezeOp, SliceOp, PadOp, CatOp,
        SumOp, ProdOp, MaxOp, MinOp, MeanOp, VarMeanOp,
        WelfordOp, RandOp, RandnOp,
        MatmulOp, LinearOp, AtenOp,
        IndexSelectOp, GatherOp, TakeAlongAxisOp, EmbeddingOp, ScatterOp, IndexPutAccumulateOp,
        MeshOp,
        CumsumOp, CumprodOp, CummaxOp, CumminOp, ArgsortOp, TopkOp,
        SegmentOp, YieldOp,
    ],
    [ShardingAttr],
)
