"""What every fusion op shares: the attribute names, the custom syntax of integer lists, the
verification helpers and `FusionOp`; device meshes (`fusion.mesh`) and the sharding attribute
that names them, with its check.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import lru_cache
from math import prod
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FlatSymbolRefAttr,
    IntAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
    i64,
)
from xdsl.dialects.utils import DimensionList
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_attr_definition, irdl_op_definition, prop_def, traits_def
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from allotment import dtypes
from allotment.diagnostics import register_op_check
from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion_rules import DYNAMIC, element_type_of, type_name
from allotment.extents import size_arith, view_extents

ALIAS_ATTR = "fusion.alias_input"
"""Result attribute of a fusion function: the input an output is written into (an in-place
output, nvFuser's `add_output(out, alias_input)`), which alloc-alias honours."""

STRIDE_ORDER_ATTR = "fusion.stride_order"
"""Result attribute: nvFuser's stride order of an output (`stride_order[d]` is dim d's place
counted from the innermost), which fusion-allocate turns into the output alloc's `order`.
Argument attribute: the order in which the caller passes the argument, dense
(`orders.argument_order`): the program plans its views for that layout and copies an
argument that comes otherwise into it."""

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
    """The tensor type of `shape` and `element_type` (no encoding). Types are immutable
    values: one object per (element type, shape) is built and shared (the verifiers infer
    result types for every op, and building a TensorType costs xDSL's attribute checks)."""
    return _tensor_of(element_type, tuple(shape))


@lru_cache(maxsize=8192)
def _tensor_of(element_type: Attribute, shape: tuple[int, ...]) -> TensorType:
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
    mesh = _lookup_symbol(op, enc.mesh)
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


def _lookup_symbol(op: Operation, ref: FlatSymbolRefAttr) -> Operation | None:
    """The op that `ref` names in the symbol table around `op`, or None (also where there is
    none: a function verified outside any module)."""
    anchor: Operation | None = op
    while anchor is not None and not anchor.has_trait(SymbolTable):
        anchor = anchor.parent_op()
    return SymbolTable.lookup_symbol(anchor, ref) if anchor is not None else None


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
    label = _function_label(f)
    inputs = getattr(function_type, "inputs", None)
    outputs = getattr(function_type, "outputs", None)
    for kind, types in (("argument", inputs), ("result", outputs)):
        for i, t in enumerate(types.data if types is not None else ()):
            if isinstance(t, TensorType):
                verify_extents(t, lambda kind=kind, i=i, t=t: f"{label} {kind} #{i} ({type_name(t)})")
    arg_attrs = f.properties.get("arg_attrs") or f.attributes.get("arg_attrs")
    for i, (attrs, t) in enumerate(zip(getattr(arg_attrs, "data", ()), inputs.data if inputs is not None else ())):
        order = attrs.data.get(STRIDE_ORDER_ATTR) if isinstance(attrs, DictionaryAttr) else None
        if order is None:
            continue
        if not isinstance(t, TensorType):
            raise VerifyException(f"{label} argument #{i}: {STRIDE_ORDER_ATTR} is for a tensor argument")
        if not isinstance(t.encoding, NoneAttr):
            raise VerifyException(f"{label} argument #{i}: {STRIDE_ORDER_ATTR} on a sharded argument is not supported")
        problem = stride_order_problem(order, len(t.get_shape()))
        if problem is not None:
            raise VerifyException(f"{label} argument #{i}: {problem}")


def verify_signature_shardings(f: Operation) -> None:
    """Each sharded tensor type in a function's signature (its arguments and results) names
    a `fusion.mesh`, with mesh axes that exist and extents that divide over them
    (`verify_sharding`), as for the operands and results of fusion ops: no op verifier
    sees the type of an argument that nothing uses, and `fusion-allocate` sizes its shards.
    Added to xDSL's `func.func` verifier (`diagnostics.register_op_check`)."""
    function_type = f.properties.get("function_type") or f.attributes.get("function_type")
    for kind, types in (("argument", getattr(function_type, "inputs", None)),
                        ("result", getattr(function_type, "outputs", None))):
        for i, t in enumerate(types.data if isinstance(types, ArrayAttr) else ()):
            if isinstance(t, TensorType) and isinstance(t.encoding, ShardingAttr):
                verify_sharding(f, t, f"{_function_label(f)} {kind} #{i} ({type_name(t)})")


def _function_label(f: Operation) -> str:
    name = f.properties.get("sym_name") or f.attributes.get("sym_name")
    return f"@{name.data}" if isinstance(name, StringAttr) else "the function"


def stride_order_problem(attr: Attribute, rank: int) -> str | None:
    """What is wrong with a `fusion.stride_order` for a tensor of `rank` dims, or None."""
    values = list(attr.get_values()) if isinstance(attr, DenseArrayBase) else None
    if values is None or sorted(values) != list(range(rank)):
        return (f"{STRIDE_ORDER_ATTR} must be an array<i64> permutation of 0..{rank - 1} "
                f"(one entry per dimension), got {attr}")
    return None


def _describe(i: int, t: Attribute) -> str:
    return f"operand #{i} ({type_name(t)})"


_PLAIN_TENSOR_TYPES: dict[int, TensorType] = {}
"""Tensor types with a supported element type, extents that can exist and no encoding,
by `id` (each entry keeps its type alive, so an id is never reused while it is here)."""


def _remember_plain(t: TensorType) -> None:
    if len(_PLAIN_TENSOR_TYPES) >= 65536:
        _PLAIN_TENSOR_TYPES.clear()
    _PLAIN_TENSOR_TYPES[id(t)] = t


def _verify_tensor_type(op: Operation, t: TensorType, element: Callable[[], str], what: Callable[[], str]) -> None:
    """Checks a tensor type of one of op's operands or results: its element type (a
    VerifyException naming it `element()`), its extents and its sharding (naming it
    `what()`); a type without an encoding is then remembered as valid (`_remember_plain`)."""
    if not rules.is_element_type(t.element_type):
        rules.verify_element_type(t.element_type, element())
    verify_extents(t, what)
    if not isinstance(t.encoding, NoneAttr):
        verify_sharding(op, t, what())
    else:
        _remember_plain(t)


class FusionOp(IRDLOperation, ABC):
    """Base of fusion ops: types are checked, then the result type is inferred and compared
    with the declared one, then the shardings are checked to agree (`_SHARDING_CHECKS`, which
    may so rely on result types of the rank and shape the operands imply).

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
            if plain.get(id(t)) is not t and isinstance(t, TensorType):
                operand = lambda i=i, t=t: _describe(i, t)
                _verify_tensor_type(self, t, operand, operand)
        for i, r in enumerate(self.results):
            t = r.type
            if plain.get(id(t)) is not t and isinstance(t, TensorType):
                _verify_tensor_type(self, t, lambda i=i: f"result #{i}", lambda i=i, t=t: f"result #{i} ({type_name(t)})")
        try:
            inferred_types = self.infer_result_types()
        except size_arith.SizeArithmeticError as e:  # a static extent past a 64-bit index
            raise VerifyException(str(e)) from None
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
        # -- sharding agreement (allotment.dialects.sharding_rules), once the types are
        # known to agree: the rules index the result's dimensions by the operands' --
        if any(isinstance(getattr(v.type, "encoding", None), ShardingAttr) for v in (*self.operands, *self.results)):
            for check in _SHARDING_CHECKS:
                problem = check(self)
                if problem is not None:
                    raise VerifyException(problem)
        # -- end sharding agreement --


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


register_op_check(func.FuncOp, verify_signature_shardings)
