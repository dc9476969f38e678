"""The `alloc` dialect: explicit buffers with symbolic sizes, and kernels over them.

`fusion-allocate` produces it. Buffers are builtin `memref` values; views of
buffers are upstream `memref.reinterpret_cast`s. Every `alloc.alloc` takes its
dynamic extents as `index` operands computed (by `arith`) from `memref.dim` of
the function's own arguments, and says which memory it lives in. Kernels are
`alloc.kernel` regions in destination-passing style: they read their `ins` and
write their `outs`, and declare the on-chip buffers they need with
`alloc.alloc` in shared or local memory, sized in the same terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import prod

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    ArrayAttr,
    DenseArrayBase,
    FlatSymbolRefAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    OpResult,
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
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, SymbolTable
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from allotment.dialects.fusion import (
    SEGMENT_KINDS,
    MeshOp,
    ShardingAttr,
    SliceOp,
    YieldValues,
    constant_index,
    verify_extents,
)
from allotment.dialects.fusion_rules import type_name
from allotment.extents import size_arith, view_extents


class MemorySpace(StrEnum):
    """Where a buffer lives: device memory, on-chip shared or per-thread memory, host."""

    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    HOST = "host"


@irdl_attr_definition
class MemorySpaceAttr(EnumAttribute[MemorySpace]):
    """`#alloc.memory<global>`: the memory a buffer is allocated in."""

    name = "alloc.memory"

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.data.value)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> MemorySpace:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(MemorySpace)


ON_CHIP = (MemorySpace.SHARED, MemorySpace.LOCAL)


@lru_cache(maxsize=4096)
def memref_type(
    element_type: Attribute, shape: tuple[int, ...], layout: Attribute = NoneAttr()  # noqa: B008 (immutable)
) -> MemRefType:
    """A memref type, built once per (element type, shape, layout): xDSL's
    MemRefType constructor checks its shape argument slowly."""
    return MemRefType(element_type, ArrayAttr([IntAttr(e) for e in shape]), layout)


def shard_count(mesh: MeshOp, axes: Sequence[int]) -> int:
    shape = mesh.shape_values
    return prod(shape[a] for a in axes)


REUSED_BY = "alloc.reused_by"
"""The attribute of an arena slot (`memref.view`) whose buffer had `reused_by` names."""


def reused_names(op: Operation) -> tuple[str, ...]:
    """The names of tensors written in place into the buffer of `op` (an `alloc.alloc`'s
    `reused_by`, or an arena slot's `alloc.reused_by`), in order."""
    attr = op.reused_by if isinstance(op, AllocOp) else op.attributes.get(REUSED_BY)
    return tuple(a.data for a in attr.data if isinstance(a, StringAttr)) if isinstance(attr, ArrayAttr) else ()


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A new buffer of the memref result type, in `memory`.

    One `index` operand per dynamic extent, in order. Optional properties:
    `mesh` (a `fusion.mesh`: devices outside it allocate nothing), `sharding`
    (the tensor's sharding; the memref's extents are then the local shard's,
    and `global_shape` keeps the global extents, `?` where dynamic), `order`
    (the allocation order: dims from outermost to innermost stride, default
    row-major), `zero_init`, `alignment` (bytes), `name` (the tensor it holds) and
    `reused_by` (the names of tensors that later kernels write into this buffer in place
    of a buffer of their own, once the tensor it was made for is dead: alloc-plan's
    reuse; `plan_sizes` and `memory_plan` list each of them by name).

    `by_call`: the buffer is made by the one library call that writes it (an ATen call with
    no `out=` variant, `fusion.AtenOp`), not by the host program. It is planned as any
    other buffer (its size counts from where the alloc stands to its dealloc), but it is
    never an arena slot and its memory comes from whatever allocator the call uses.
    `any_layout` (with `by_call` only): the buffer keeps the layout the call gives its
    result where that layout is dense without overlaps (a permutation of row-major, as
    attention's outputs come back), not a row-major copy: every user of the buffer
    (generated kernels and ATen calls, which index through strides) takes any such
    layout, so there is no view, no other writer and no return of it (alloc-plan sets it).
    """

    name = "alloc.alloc"

    sizes = var_operand_def(IndexType)
    memory = prop_def(MemorySpaceAttr)
    mesh = opt_prop_def(FlatSymbolRefAttr)
    sharding = opt_prop_def(ShardingAttr)
    global_shape = opt_prop_def(DenseArrayBase)
    order = opt_prop_def(DenseArrayBase)
    zero_init = opt_prop_def(UnitAttr)
    alignment = opt_prop_def(IntegerAttr[I64])
    buffer_name = opt_prop_def(StringAttr, prop_name="name")
    reused_by = opt_prop_def(ArrayAttr[StringAttr])
    by_call = opt_prop_def(UnitAttr)
    any_layout = opt_prop_def(UnitAttr)
    result = result_def(MemRefType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "`(` $sizes `)` attr-dict `:` type($result)"

    def __init__(
        self,
        result_type: MemRefType,
        sizes: Sequence[SSAValue],
        memory: MemorySpace,
        *,
        name: str | None = None,
        mesh: str | None = None,
        sharding: ShardingAttr | None = None,
        global_shape: Sequence[int] | None = None,
    ):
        props: dict[str, Attribute] = {"memory": MemorySpaceAttr(memory)}
        if name:
            props["name"] = StringAttr(name)
        if mesh:
            props["mesh"] = FlatSymbolRefAttr(mesh)
        if sharding is not None:
            props["sharding"] = sharding
        if global_shape is not None:
            props["global_shape"] = DenseArrayBase.from_list(i64, list(global_shape))
        super().__init__(operands=[list(sizes)], result_types=[result_type], properties=props)

    @property
    def memory_space(self) -> MemorySpace:
        return self.memory.data

    @property
    def reused_names(self) -> tuple[str, ...]:
        """The `reused_by` names, in the order their tensors take the buffer."""
        return reused_names(self)

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, MemRefType)
        shape = t.get_shape()
        ndyn = sum(1 for e in shape if e == DYNAMIC_INDEX)
        if ndyn != len(self.sizes):
            raise VerifyException(
                f"{type_name(t)} has {ndyn} dynamic extents but {len(self.sizes)} size operands"
            )
        verify_extents(t, lambda: type_name(t))
        if self.any_layout is not None and self.by_call is None:
            raise VerifyException("any_layout is only meaningful with by_call (a buffer the call makes)")
        for i, v in enumerate(self.sizes):
            value = constant_index(v)
            if value is not None and value < 0:
                raise VerifyException(f"size operand #{i} is the constant {value}: an extent cannot be negative")
        if self.order is not None:
            order = list(self.order.get_values())
            if sorted(order) != list(range(len(shape))):
                raise VerifyException(f"order {order} is not a permutation of the {len(shape)} dims")
        if self.alignment is not None:
            a = self.alignment.value.data
            if a <= 0 or a & (a - 1):
                raise VerifyException(f"alignment {a} must be a positive power of two")
        self._verify_sharding(shape)

    def _verify_sharding(self, shape: Sequence[int]) -> None:
        if self.mesh is not None and not isinstance(SymbolTable.lookup_symbol(self, self.mesh), MeshOp):
            raise VerifyException(f"mesh @{self.mesh.root_reference.data} is not defined")
        if self.sharding is None:
            if self.global_shape is not None:
                raise VerifyException("global_shape is only meaningful with a sharding")
            return
        sharding = self.sharding
        if self.mesh is None or self.mesh != sharding.mesh:
            raise VerifyException(
                f"the sharding's mesh @{sharding.mesh.root_reference.data} must be the alloc's mesh"
            )
        if len(sharding.axes) != len(shape):
            raise VerifyException(
                f"the sharding lists {len(sharding.axes)} dims for a buffer of rank {len(shape)}"
            )
        mesh = SymbolTable.lookup_symbol(self, sharding.mesh)
        if not isinstance(mesh, MeshOp):
            raise VerifyException(f"mesh @{sharding.mesh.root_reference.data} is not defined")
        mesh_rank = len(mesh.shape_values)
        if any(a >= mesh_rank for dim in sharding.axes for a in dim):
            raise VerifyException(f"the sharding uses an axis beyond the mesh's rank {mesh_rank}")
        if self.global_shape is None:
            raise VerifyException("a sharded alloc must carry global_shape")
        global_shape = list(self.global_shape.get_values())
        if len(global_shape) != len(shape):
            raise VerifyException("global_shape must have the buffer's rank")
        for d, (g, local, axes) in enumerate(zip(global_shape, shape, sharding.axes)):
            if g == DYNAMIC_INDEX or local == DYNAMIC_INDEX:
                continue
            k = shard_count(mesh, axes)
            if not view_extents.shard_divides(g, k, sharding.allows_uneven):
                raise VerifyException(
                    f"dimension {d}: global extent {g} does not divide evenly over {k} shards"
                )
            expected = view_extents.local_extent(g, k, sharding.allows_uneven)
            if local != expected:
                raise VerifyException(
                    f"dimension {d}: local extent {local} should be {expected} "
                    f"(global {g} over {k} shards)"
                )


@irdl_op_definition
class PackOp(IRDLOperation):
    """Packs slots with known lifetimes into one arena (IREE's `stream.resource.pack`).

    `%total, %offsets:N = alloc.pack align A ([s0, e0] = %bytes0, [s1, e1] = %bytes1, ...)`:
    slot i needs `%bytes_i` bytes (an `index` value) from step `s_i` to step `e_i`
    (closed; steps number the function's kernels in order). The results are the
    arena's size and each slot's byte offset, multiples of `A`, computed when the
    sizes are known by `analysis.packing.pack`: two slots whose lifetimes
    intersect never share a byte. `alloc-verify` checks that the lifetimes cover
    every use of each slot.

    The verifier guarantees one lifetime (an interval of steps, `0 <= s_i <= e_i`) and one
    offset result per slot, a positive power-of-two alignment, and no slot size that is a
    negative `arith.constant` (a size computed negative at run time is refused by
    `analysis.packing.pack`)."""

    name = "alloc.pack"

    sizes = var_operand_def(IndexType)
    lifetimes = prop_def(DenseArrayBase)
    alignment = prop_def(IntegerAttr[I64])
    results_ = var_result_def(IndexType)

    def __init__(self, sizes: Sequence[SSAValue], lifetimes: Sequence[tuple[int, int]], alignment: int):
        flat = [v for pair in lifetimes for v in pair]
        super().__init__(
            operands=[list(sizes)],
            result_types=[[IndexType()] * (len(sizes) + 1)],
            properties={"lifetimes": DenseArrayBase.from_list(i64, flat), "alignment": IntegerAttr(alignment, i64)},
        )

    @property
    def total(self) -> SSAValue:
        return self.results[0]

    @property
    def offsets(self) -> Sequence[SSAValue]:
        return self.results[1:]

    def lifetime_pairs(self) -> list[tuple[int, int]]:
        flat = list(self.lifetimes.get_values())
        return [(flat[k], flat[k + 1]) for k in range(0, len(flat), 2)]

    def verify_(self) -> None:
        flat = list(self.lifetimes.get_values())
        if len(flat) != 2 * len(self.sizes):
            raise VerifyException(f"{len(flat) // 2} lifetimes for {len(self.sizes)} slots")
        if len(self.results) != len(self.sizes) + 1:
            raise VerifyException(f"{len(self.results)} results for {len(self.sizes)} slots: want the size and one offset each")
        for k, (start, end) in enumerate(self.lifetime_pairs()):
            if not 0 <= start <= end:
                raise VerifyException(f"slot #{k}: lifetime [{start}, {end}] is not an interval of steps")
        for k, v in enumerate(self.sizes):
            value = constant_index(v)
            if value is not None and value < 0:
                raise VerifyException(f"slot #{k}: size operand is the constant {value}: a slot cannot have a negative size")
        a = self.alignment.value.data
        if a <= 0 or a & (a - 1):
            raise VerifyException(f"alignment {a} must be a positive power of two")

    @classmethod
    def parse(cls, parser: Parser) -> PackOp:
        parser.parse_keyword("align")
        alignment = parser.parse_integer(allow_negative=False, allow_boolean=False)

        def slot() -> tuple[tuple[int, int], SSAValue]:
            parser.parse_punctuation("[")
            start = parser.parse_integer(allow_negative=False, allow_boolean=False)
            parser.parse_punctuation(",")
            end = parser.parse_integer(allow_negative=False, allow_boolean=False)
            parser.parse_punctuation("]")
            parser.parse_punctuation("=")
            return (start, end), parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())

        slots = parser.parse_comma_separated_list(parser.Delimiter.PAREN, slot)
        attrs = parser.parse_optional_attr_dict()
        op = cls([v for _, v in slots], [lt for lt, _ in slots], alignment)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" align {self.alignment.value.data} (")
        for k, ((start, end), v) in enumerate(zip(self.lifetime_pairs(), self.sizes)):
            if k:
                printer.print_string(", ")
            printer.print_string(f"[{start}, {end}] = ")
            printer.print_operand(v)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class DeallocOp(IRDLOperation):
    """Ends the life of a buffer made by `alloc.alloc`; it is not used afterwards."""

    name = "alloc.dealloc"

    buffer = operand_def(MemRefType)
    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue):
        super().__init__(operands=[buffer])


CHECK_PREDICATES = tuple(size_arith.CHECK_PREDICATES)
"""The predicates of `alloc.check`; `size_arith.check_holds` says whether one holds."""


@irdl_op_definition
class CheckOp(IRDLOperation):
    """A run-time requirement on sizes, checked before anything runs.

    `alloc.check eq %a, %b, "message"`: fails with the message and both values
    unless the predicate holds (`eq`: a == b, `divisible`: b != 0 and a remsi b == 0,
    `ge`: a >= b; `extents.size_arith.check_holds` is the one definition).
    """

    name = "alloc.check"

    lhs = operand_def(IndexType)
    rhs = operand_def(IndexType)
    predicate = prop_def(StringAttr)
    message = prop_def(StringAttr)

    def __init__(self, predicate: str, lhs: SSAValue, rhs: SSAValue, message: str):
        super().__init__(
            operands=[lhs, rhs],
            properties={"predicate": StringAttr(predicate), "message": StringAttr(message)},
        )

    def verify_(self) -> None:
        if self.predicate.data not in CHECK_PREDICATES:
            raise VerifyException(
                f"predicate '{self.predicate.data}' is not one of {', '.join(CHECK_PREDICATES)}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> CheckOp:
        predicate = parser.parse_identifier()
        lhs = parser.parse_operand(IndexType())
        parser.parse_punctuation(",")
        rhs = parser.parse_operand(IndexType())
        parser.parse_punctuation(",")
        message = parser.parse_str_literal()
        attrs = parser.parse_optional_attr_dict()
        op = cls(predicate, lhs, rhs, message)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate.data} ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_string(", ")
        printer.print_string_literal(self.message.data)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class YieldOp(YieldValues):
    """Ends an `alloc.kernel` body: value i is written to the kernel's out i."""

    name = "alloc.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(KernelOp)))


def views_buffer(value_type: Attribute, buffer_type: Attribute) -> bool:
    """Whether a kernel's tensor value can stand for a buffer (or scalar) operand.

    Same element type and rank; the same static extents unless the tensor is
    sharded (its type then has the global extents, the buffer the local ones).
    """
    if not isinstance(buffer_type, MemRefType):
        return value_type == buffer_type
    if not isinstance(value_type, TensorType):
        return False
    if value_type.element_type != buffer_type.element_type:
        return False
    vs, bs = value_type.get_shape(), buffer_type.get_shape()
    if len(vs) != len(bs):
        return False
    if isinstance(value_type.encoding, ShardingAttr):
        return True
    return all(a == b or DYNAMIC_INDEX in (a, b) for a, b in zip(vs, bs))


def _check_fit(inner: Sequence[SSAValue], outer: Sequence[SSAValue], count: str, misfit: str) -> None:
    """Each value of a kernel body (`inner`) stands for its operand of the kernel (`outer`,
    `views_buffer`); else a VerifyException: `count` when their numbers differ, `misfit`
    (formatted with the index `i` and the two type names `inner`, `outer`) for a pair."""
    if len(inner) != len(outer):
        raise VerifyException(count)
    for i, (a, b) in enumerate(zip(inner, outer)):
        if not views_buffer(a.type, b.type):
            raise VerifyException(misfit.format(i=i, inner=type_name(a.type), outer=type_name(b.type)))


def tensor_view_type(t: Attribute) -> Attribute:
    """The value a kernel body sees for an operand: a tensor for a buffer, else itself."""
    if isinstance(t, MemRefType):
        return TensorType(t.element_type, t.get_shape())
    return t


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One generated kernel (or library call) in destination-passing style.

    `ins` are buffers and scalars the kernel reads; the entry block has one
    argument per in (the logical tensor a buffer holds, the scalar itself
    otherwise). `outs` are buffers it writes: the body's `alloc.yield` gives
    one tensor per out. A sharded tensor's type keeps its global extents and
    its sharding while the buffer has the local ones; every device computes
    its shard. The body
    holds fusion ops and the on-chip buffers it needs (`alloc.alloc` in shared
    or local memory); values from outside other than through `ins` may only be
    `index` sizes. `kind` is the `fusion.segment` kind it came from.

    `domain [%n, 4096]` (set by `fusion-allocate` on every kernel that the backend
    generates: all kinds but library, aten and collective) is the kernel's iteration
    domain (`analysis.kernel_domain`): its static extents, and one `index` operand of the
    host program per dynamic extent, the same SSA size values its buffers' `alloc.alloc`s
    take. The backend reads them from here: it never works an extent out again. Extents
    of values computed inside the body that the generated code needs (a cat's pieces, a
    pad's input, a random tensor, where a slice starts) are `alloc.extents` ops in the
    body. An inner split (`partials`, rows of few kept indices) carries
    `inner_split_align`: its chunks of the reduced axis are multiples of it.

    `schedule` (set by `alloc-place` on kernels that reduce) says how the
    kernel holds a reduced row, and the backend follows it:

    - `schedule(persistent)`: the whole row is on chip (its `local` row
      buffers), one pass over memory;
    - `schedule(looped)`: the row is streamed in tiles, several passes; the
      body then declares no on-chip buffer;
    - `schedule(persistent if %fits else looped)`: decided at run time by the
      `i1` operand `%fits`, computed in the IR from the symbolic row size; the
      on-chip buffers exist only on the persistent side.

    On a `library` kernel (one matmul or linear) the schedule says who computes it:

    - `schedule(tiled)`: a generated Triton kernel of output tiles (small
      problems, where a vendor library call costs more host time than the work);
    - `schedule(vendor)`: the vendor library, through torch (cuBLAS on a GPU);
    - `schedule(tiled if %fits else vendor)`: decided at run time by `%fits`,
      computed in the IR from the symbolic extents.

    A library kernel without a schedule calls the vendor library. An `aten` kernel (one
    `fusion.aten`) calls that ATen operator, writing its outs through the operator's
    `out=` overload, or taking the call's results as its `by_call` outs.
    """

    name = "alloc.kernel"

    ins = var_operand_def()
    outs = var_operand_def(MemRefType)
    extents = var_operand_def(IndexType)
    fits = opt_operand_def(i1)
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    schedule = opt_prop_def(StringAttr)
    domain = opt_prop_def(DenseArrayBase)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        name: str,
        kind: str,
        ins: Sequence[SSAValue],
        outs: Sequence[SSAValue],
        body: Region,
        *,
        schedule: str | None = None,
        fits: SSAValue | None = None,
        domain: Sequence[int] | None = None,
        extents: Sequence[SSAValue] = (),
    ):
        """`domain`: the static extents of the iteration domain (`DYNAMIC_INDEX` for a
        dynamic one), `extents` the `index` values of its dynamic extents, in order."""
        props: dict[str, Attribute] = {"sym_name": StringAttr(name), "kind": StringAttr(kind)}
        if schedule is not None:
            props["schedule"] = StringAttr(schedule)
        if domain is not None:
            props["domain"] = DenseArrayBase.from_list(i64, list(domain))
        super().__init__(
            operands=[list(ins), list(outs), list(extents), [fits] if fits is not None else []],
            properties=props,
            regions=[body],
        )

    @property
    def static_domain(self) -> tuple[int, ...] | None:
        """The iteration domain's static extents (`DYNAMIC_INDEX` where dynamic), or None."""
        return None if self.domain is None else tuple(int(e) for e in self.domain.get_values())

    @property
    def inner_split_align(self) -> int | None:
        """An inner split's chunk alignment (`analysis.split_reduction.inner_split_align`,
        decided when the kernel was built), or None."""
        attr = self.attributes.get("inner_split_align")
        return attr.value.data if isinstance(attr, IntegerAttr) else None

    @property
    def schedule_name(self) -> str | None:
        """`persistent`, `looped`, `persistent_if` (decided by `fits`), `tiled`, `vendor`,
        `tiled_if` (decided by `fits`), or None (not placed)."""
        return self.schedule.data if self.schedule is not None else None

    def set_schedule(self, schedule: str, fits: SSAValue | None = None) -> None:
        """Places the kernel (`alloc-place`): `persistent_if` and `tiled_if` take the `i1` `fits`."""
        self.properties["schedule"] = StringAttr(schedule)
        self.operands = [*self.ins, *self.outs, *self.extents, *([fits] if fits is not None else [])]
        self.properties["operandSegmentSizes"] = DenseArrayBase.from_list(
            i32, [len(self.ins), len(self.outs), len(self.extents), 1 if fits is not None else 0]
        )

    def verify_(self) -> None:
        if self.kind.data not in SEGMENT_KINDS:
            raise VerifyException(f"kernel kind '{self.kind.data}' is not one of {', '.join(SEGMENT_KINDS)}")
        self._verify_schedule()
        self._verify_domain()
        block = self.body.block
        _check_fit(block.args, self.ins, f"the body has {len(block.args)} arguments for {len(self.ins)} ins",
                   "body argument #{i} ({inner}) does not fit in #{i} ({outer})")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("the body must end with alloc.yield")
        _check_fit(last.values, self.outs, f"alloc.yield gives {len(last.values)} values for {len(self.outs)} outs",
                   "yielded value #{i} ({inner}) does not fit out #{i} ({outer})")
        inside = {id(o) for o in self.body.walk()}
        for op in self.body.walk():
            if isinstance(op, AllocOp) and op.memory_space not in ON_CHIP:
                raise VerifyException(f"a kernel may only allocate shared or local memory, not {op.memory_space}")
            for v in op.operands:
                if isinstance(v, OpResult):
                    defined_inside = id(v.op) in inside
                else:
                    assert isinstance(v, BlockArgument)
                    parent = v.block.parent_op()
                    defined_inside = parent is self or id(parent) in inside
                if not defined_inside and not isinstance(v.type, IndexType):
                    raise VerifyException(
                        f"{op.name} inside the kernel uses a {type_name(v.type)} value from outside; "
                        "only index sizes may come from outside, everything else through ins"
                    )

    def _verify_domain(self) -> None:
        domain = self.static_domain
        if domain is None:
            if self.extents:
                raise VerifyException(f"{len(self.extents)} extents for a kernel without a domain")
        else:
            if any(e < 0 and e != DYNAMIC_INDEX for e in domain):
                raise VerifyException(f"the domain's extents must be >= 0 or dynamic, got {list(domain)}")
            dynamic = sum(1 for e in domain if e == DYNAMIC_INDEX)
            if dynamic != len(self.extents):
                raise VerifyException(
                    f"the domain has {dynamic} dynamic extents but the kernel takes {len(self.extents)} extents"
                )
        align = self.attributes.get("inner_split_align")
        if align is not None:
            if not isinstance(align, IntegerAttr) or align.value.data < 1:
                raise VerifyException(f"inner_split_align must be a positive integer, got {align}")
            if "partials" not in self.attributes:
                raise VerifyException("inner_split_align is for a kernel split across CTAs (with partials)")

    def _verify_schedule(self) -> None:
        schedule = self.schedule_name
        if schedule is None:
            if self.fits is not None:
                raise VerifyException("a run-time placement condition needs schedule persistent_if or tiled_if")
            return
        problem = schedule_problem(self.kind.data, schedule)
        if problem is not None:
            raise VerifyException(problem)
        if (schedule in ("persistent_if", "tiled_if")) != (self.fits is not None):
            raise VerifyException("schedules persistent_if and tiled_if, and only they, take the i1 condition %fits")
        if schedule == "looped":
            for op in self.body.walk():
                if isinstance(op, AllocOp):
                    raise VerifyException(
                        "a looped kernel streams its rows: it holds no on-chip buffer, but the body "
                        f"allocates {op.result.name_hint or 'one'}"
                    )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_str_literal()
        kind = parser.parse_identifier()
        ins = _parse_operand_group(parser, "ins")
        outs = _parse_operand_group(parser, "outs")
        domain: list[int] | None = None
        extents: list[SSAValue] = []
        if parser.parse_optional_keyword("domain") is not None:
            domain, extents = _parse_mixed(parser)
        schedule, fits = _parse_schedule(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        op = cls(name, kind, ins, outs, body, schedule=schedule, fits=fits, domain=domain, extents=extents)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.sym_name.data)  # any string, escaped: it parses back as it was
        printer.print_string(f" {self.kind.data}")
        for keyword, values in (("ins", self.ins), ("outs", self.outs)):
            printer.print_string(f" {keyword}(")
            printer.print_list(values, printer.print_operand)
            if values:
                printer.print_string(" : ")
                printer.print_list([v.type for v in values], printer.print_attribute)
            printer.print_string(")")
        if self.static_domain is not None:
            printer.print_string(" domain ")
            _print_mixed(printer, self.static_domain, self.extents)
        schedule = self.schedule_name
        if schedule in ("persistent_if", "tiled_if") and self.fits is not None:
            first, other = ("persistent", "looped") if schedule == "persistent_if" else ("tiled", "vendor")
            printer.print_string(f" schedule({first} if ")
            printer.print_operand(self.fits)
            printer.print_string(f" else {other})")
        elif schedule is not None:
            printer.print_string(f" schedule({schedule})")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)


SCHEDULES = ("persistent", "looped", "persistent_if")
"""How a reducing kernel holds its rows (see `KernelOp`)."""

LIBRARY_SCHEDULES = ("tiled", "vendor", "tiled_if")
"""Who computes a library kernel's matmul or linear (see `KernelOp`)."""


def schedule_problem(kind: str, schedule: str) -> str | None:
    """Why a kernel of `kind` cannot take `schedule`, or None where it can: the rule that
    `KernelOp`'s verifier checks, for a pass to ask before it places a kernel. A library
    kernel takes `LIBRARY_SCHEDULES`; a pointwise or view kernel reduces nothing and takes
    none; every other kind takes `SCHEDULES`."""
    if schedule not in SCHEDULES + LIBRARY_SCHEDULES:
        return f"schedule '{schedule}' is not one of {', '.join(SCHEDULES + LIBRARY_SCHEDULES)}"
    if kind == "library":
        if schedule not in LIBRARY_SCHEDULES:
            return f"a library kernel takes schedule tiled, vendor or tiled_if, not '{schedule}'"
    elif schedule in LIBRARY_SCHEDULES:
        return f"schedule '{schedule}' is for library kernels, not a {kind} kernel"
    elif kind in ("pointwise", "view"):
        return f"a {kind} kernel reduces nothing: it takes no schedule"
    return None


_CONDITIONAL = {"persistent": ("looped", "persistent_if"), "tiled": ("vendor", "tiled_if")}
"""The schedule that may be conditional: (its alternative, the conditional schedule's name)."""


def _parse_schedule(parser: Parser) -> tuple[str | None, SSAValue | None]:
    """`schedule(persistent)`, `schedule(looped)`, `schedule(persistent if %c else looped)`,
    `schedule(tiled)`, `schedule(vendor)` or `schedule(tiled if %c else vendor)`."""
    if parser.parse_optional_keyword("schedule") is None:
        return None, None
    parser.parse_punctuation("(")
    pos = parser.pos
    name = parser.parse_identifier()
    if name not in ("persistent", "looped", "tiled", "vendor"):
        parser.raise_error(f"schedule '{name}' is not persistent, looped, tiled or vendor", pos, parser.pos)
    fits = None
    if name in _CONDITIONAL and parser.parse_optional_keyword("if") is not None:
        unresolved = parser.parse_unresolved_operand()
        fits = parser.resolve_operand(unresolved, i1)
        parser.parse_keyword("else")
        other, name = _CONDITIONAL[name]
        parser.parse_keyword(other)
    parser.parse_punctuation(")")
    return name, fits


def _parse_mixed(parser: Parser) -> tuple[list[int], list[SSAValue]]:
    """`[%n, 4096]`: static extents (DYNAMIC_INDEX for each `index` operand) and the operands."""
    static: list[int] = []
    values: list[SSAValue] = []

    def entry() -> None:
        unresolved = parser.parse_optional_unresolved_operand()
        if unresolved is None:
            static.append(parser.parse_integer(allow_boolean=False))
        else:
            static.append(DYNAMIC_INDEX)
            values.append(parser.resolve_operand(unresolved, IndexType()))

    parser.parse_comma_separated_list(parser.Delimiter.SQUARE, entry)
    return static, values


def _print_mixed(printer: Printer, static: Sequence[int], values: Sequence[SSAValue]) -> None:
    dynamic = iter(values)
    printer.print_string("[")
    for k, e in enumerate(static):
        if k:
            printer.print_string(", ")
        if e == DYNAMIC_INDEX:
            printer.print_operand(next(dynamic))
        else:
            printer.print_string(str(e))
    printer.print_string("]")


@irdl_op_definition
class ExtentsOp(IRDLOperation):
    """The extents of a tensor value computed inside an `alloc.kernel`, as host sizes:
    `alloc.extents %v [%n, 4] : tensor<?x4xf32>`; with `starts`, on a `fusion.slice`'s
    result, where each of its dims starts in the slice's input (negative starts counted from
    the end, clamped to the input's extent): `alloc.extents %s starts [%first, 0] : ...`.

    `fusion-allocate` puts one after each value whose extents the generated code needs (a
    cat's pieces, a pad's input, a random tensor; each slice's starts), computed by the same
    `SizeBuilder` as every other size, so that the backend reads them instead of working
    them out again from the body. Each dynamic entry is an `index` value of the host program."""

    name = "alloc.extents"

    value = operand_def(TensorType)
    sizes = var_operand_def(IndexType)
    static_sizes = prop_def(DenseArrayBase)
    starts = opt_prop_def(UnitAttr)
    traits = lazy_traits_def(lambda: (HasParent(KernelOp),))

    def __init__(self, value: SSAValue, static: Sequence[int], sizes: Sequence[SSAValue], *, starts: bool = False):
        props: dict[str, Attribute] = {"static_sizes": DenseArrayBase.from_list(i64, list(static))}
        if starts:
            props["starts"] = UnitAttr()
        super().__init__(operands=[value, list(sizes)], properties=props)

    def entries(self) -> list[int | SSAValue]:
        """One per dim of the value: a static extent (or start) or its host `index` value."""
        dynamic = iter(self.sizes)
        return [next(dynamic) if e == DYNAMIC_INDEX else int(e) for e in self.static_sizes.get_values()]

    def verify_(self) -> None:
        static = [int(e) for e in self.static_sizes.get_values()]
        shape = self.value.type.get_shape()
        what = "starts" if self.starts is not None else "extents"
        if len(static) != len(shape):
            raise VerifyException(f"{len(static)} {what} for a value of rank {len(shape)}")
        if sum(1 for e in static if e == DYNAMIC_INDEX) != len(self.sizes):
            raise VerifyException(f"the {what} name {len(self.sizes)} index values for "
                                  f"{sum(1 for e in static if e == DYNAMIC_INDEX)} dynamic entries")
        if any(e < 0 and e != DYNAMIC_INDEX for e in static):
            raise VerifyException(f"{what} must be >= 0, got {static}")
        if self.starts is not None:
            if not isinstance(self.value.owner, SliceOp):
                raise VerifyException("starts are those of a fusion.slice's result")
            return
        for d, (e, s) in enumerate(zip(static, shape)):
            if s != DYNAMIC_INDEX and e != s:
                raise VerifyException(f"extent {d} is {s} in the value's type, not {'dynamic' if e < 0 else e}")

    @classmethod
    def parse(cls, parser: Parser) -> ExtentsOp:
        unresolved = parser.parse_unresolved_operand()
        starts = parser.parse_optional_keyword("starts") is not None
        static, sizes = _parse_mixed(parser)
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        op = cls(value, static, sizes, starts=starts)
        attrs = parser.parse_optional_attr_dict()
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        if self.starts is not None:
            printer.print_string(" starts")
        printer.print_string(" ")
        _print_mixed(printer, [int(e) for e in self.static_sizes.get_values()], self.sizes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_op_attributes(self.attributes)


def _parse_operand_group(parser: Parser, keyword: str) -> list[SSAValue]:
    parser.parse_keyword(keyword)
    parser.parse_punctuation("(")
    if parser.parse_optional_punctuation(")"):
        return []
    pos = parser.pos
    operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    return list(parser.resolve_operands(operands, types, pos))


Alloc = Dialect(
    "alloc",
    [AllocOp, DeallocOp, CheckOp, ExtentsOp, KernelOp, PackOp, YieldOp],
    [MemorySpaceAttr],
)


# Function-argument attributes ------------------------------------------------------------

DONATED = "alloc.donated"
"""Argument attribute: the caller hands the buffer over (AOTAutograd's boxed calling
convention keeps no reference to it), so the program frees it after its last use."""

UNCHECKED = "alloc.unchecked"
"""Argument attribute: a tensor that only `aten` kernels read (an opaque RNG state whose
device, dtype or shape the frontend does not know exactly): no entry check."""


def donated_arguments(f: func.FuncOp) -> list[int]:
    """Positions of the arguments marked `alloc.donated`."""
    if f.arg_attrs is None:
        return []
    return [i for i, attrs in enumerate(f.arg_attrs.data) if DONATED in attrs.data]


def unchecked_arguments(f: func.FuncOp) -> set[int]:
    """Positions of the arguments marked `alloc.unchecked`."""
    if f.arg_attrs is None:
        return set()
    return {i for i, attrs in enumerate(f.arg_attrs.data) if UNCHECKED in attrs.data}
