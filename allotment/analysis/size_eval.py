"""Evaluates the sizes of an allocated function for concrete input shapes.

`evaluate_sizes(func, arg_values, device_id)` interprets the function's size
arithmetic (`arith` on `index`, `memref.dim` of arguments), runs its
`alloc.check`s, and returns every `alloc.alloc` with its concrete shape and
byte size. Nothing is compiled, allocated or launched: this is what
`alloc-evaluate`, `plan_sizes` and `allocate_intermediates` are built on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, IntegerType, MemRefType, Signedness, i1
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import SymbolTable

from allotment.analysis import packing
from allotment.dialects import alloc, fusion
from allotment.dtypes import buffer_torch_dtype_name, element_nbytes
from allotment.errors import ShapeError, UnsupportedError
from allotment.extents import size_arith


class SizeError(ShapeError):
    """A size that cannot be evaluated, or an `alloc.check` that fails.

    `op` is the op at fault where there is one (a pass locates it)."""

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(message)
        self.op = op


def is_size_scalar_type(t: Attribute) -> bool:
    """Whether a scalar of type `t` can give an extent: `index`, or a signless
    integer of at least 2 bits (through `arith.index_cast`, which sign-extends)."""
    return isinstance(t, IndexType) or (
        isinstance(t, IntegerType) and t.width.data > 1 and t.signedness.data == Signedness.SIGNLESS
    )


def element_bytes(t: Attribute) -> int:
    """Bytes per element of `t` (the `allotment.dtypes` table; a SizeError for others)."""
    try:
        return element_nbytes(t)
    except UnsupportedError as e:
        raise SizeError(str(e)) from None


@dataclass(frozen=True)
class BufferPlan:
    """A buffer of the plan: its local shape, dtype, memory space and bytes.

    `dtype` is the torch dtype name it is allocated with, `on_device` whether the
    device planned for holds it (its `nbytes` are 0 where not), `kernel` the kernel
    an on-chip buffer belongs to. `element_type` (the IR's) and `op` (the
    `alloc.alloc`, or for an arena slot its `memref.view`) are for the passes and
    the memory plan: they are neither compared nor printed."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    memory: str
    nbytes: int
    on_device: bool
    kernel: str | None
    element_type: Attribute = field(compare=False, repr=False)
    op: alloc.AllocOp | memref.ViewOp = field(compare=False, repr=False)

    @staticmethod
    def of(name: str, shape: tuple[int, ...], element_type: Attribute, memory: str, nbytes: int, on_device: bool,
           op: alloc.AllocOp | memref.ViewOp) -> BufferPlan:
        """The plan of the buffer `op` allocates (its dtype and kernel read from the IR)."""
        parent = op.parent_op()
        kernel = parent.sym_name.data if isinstance(parent, alloc.KernelOp) else None
        return BufferPlan(name, shape, buffer_torch_dtype_name(element_type), memory, nbytes, on_device, kernel,
                          element_type, op)


def evaluate_index_values(
    f: func.FuncOp, arg_values: Sequence[Sequence[int] | int | float | None]
) -> dict[SSAValue, int]:
    """Values of the function's top-level `index` ops (memref args give shapes;
    `index` and integer scalar arguments their values, an integer one reaching
    sizes through `arith.index_cast`)."""
    block = f.body.block
    if len(arg_values) != len(block.args):
        raise SizeError(f"@{f.sym_name.data} takes {len(block.args)} arguments, got {len(arg_values)}")
    values: dict[SSAValue, int] = {}
    for arg, v in zip(block.args, arg_values):
        if isinstance(arg.type, IndexType):
            if not isinstance(v, int):
                raise SizeError(f"index argument %{arg.name_hint} needs an integer value, got {v!r}")
            values[arg] = v
        elif is_size_scalar_type(arg.type) and v is not None:
            assert isinstance(arg.type, IntegerType)
            values[arg] = _integer_argument(arg, v, arg.type.width.data)
    shapes = {arg: v for arg, v in zip(block.args, arg_values) if isinstance(arg.type, MemRefType)}
    for op in block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.result.type, IndexType):
            attr = op.value
            assert isinstance(attr, IntegerAttr)
            values[op.result] = attr.value.data
        elif isinstance(op, memref.DimOp):
            shape = shapes.get(op.source)
            if shape is None or isinstance(shape, int | float):
                raise SizeError("memref.dim of a value that is not a function argument")
            values[op.result] = int(shape[values[op.index]])
        elif (name := size_arith.arith_op_name(op.name)) and isinstance(op.results[0].type, IndexType):
            a, b = (values[v] for v in op.operands)
            try:
                values[op.results[0]] = size_arith.apply(name, a, b)
            except size_arith.SizeArithmeticError as e:
                raise SizeError(f"{e} while evaluating sizes", op) from None
        elif isinstance(op, arith.IndexCastOp):
            _index_cast(op, values)
        elif isinstance(op, alloc.CheckOp):
            _check(op, values[op.lhs], values[op.rhs])
        elif isinstance(op, arith.CmpiOp) and isinstance(op.lhs.type, IndexType):
            values[op.result] = int(_CMPI[op.predicate.value.data](values[op.lhs], values[op.rhs]))
        elif isinstance(op, arith.AndIOp | arith.OrIOp) and op.result.type == i1:
            a, b = values[op.lhs], values[op.rhs]
            values[op.result] = int(bool(a and b) if isinstance(op, arith.AndIOp) else bool(a or b))
        elif isinstance(op, alloc.PackOp):
            total, offsets = packing.pack([values[v] for v in op.sizes], op.lifetime_pairs(), op.alignment.value.data)
            for r, v in zip(op.results, (total, *offsets)):
                values[r] = v
    return values


_CMPI = {0: int.__eq__, 1: int.__ne__, 2: int.__lt__, 3: int.__le__, 4: int.__gt__, 5: int.__ge__,
         6: int.__lt__, 7: int.__le__, 8: int.__gt__, 9: int.__ge__}
"""arith.cmpi predicates on index values (non-negative sizes: signed and unsigned agree)."""


def _integer_argument(arg: SSAValue, v: object, width: int) -> int:
    """The value of an integer scalar argument: an int that fits its width."""
    name = f"%{arg.name_hint}" if arg.name_hint else "an integer argument"
    if isinstance(v, bool) or not isinstance(v, int):
        raise SizeError(f"integer argument {name} needs an integer value, got {v!r}")
    if not -(1 << (width - 1)) <= v < 1 << (width - 1):
        raise SizeError(f"integer argument {name} = {v} does not fit in i{width}")
    return v


def _index_cast(op: arith.IndexCastOp, values: dict[SSAValue, int]) -> None:
    """`arith.index_cast`: sign-extends to `index`, truncates to a narrower integer."""
    source = values.get(op.input)
    if source is None:
        if isinstance(op.input, BlockArgument) and isinstance(op.result.type, IndexType):
            name = f"%{op.input.name_hint}" if op.input.name_hint else "an integer argument"
            raise SizeError(f"scalar argument {name} gives a size: it needs an integer value", op)
        return  # not a size (a scalar the kernels read)
    t = op.result.type
    values[op.result] = source if isinstance(t, IndexType) else size_arith.wrapping("addi", source, 0, t.width.data)


def placed_off_chip(op: alloc.AllocOp, values: Mapping[SSAValue, int]) -> bool:
    """Whether an on-chip buffer of a `schedule(persistent if %fits else looped)` kernel
    is not allocated for these sizes (the kernel streams its rows)."""
    kernel = op.parent_op()
    if not isinstance(kernel, alloc.KernelOp) or kernel.fits is None:
        return False
    fits = values.get(kernel.fits)
    return fits is not None and not fits


def _check(op: alloc.CheckOp, a: int, b: int) -> None:
    if not size_arith.check_holds(op.predicate.data, a, b):
        raise SizeError(f"{op.message.data} (got {a} and {b})", op)


def mesh_devices(op: alloc.AllocOp) -> list[int] | None:
    if op.mesh is None:
        return None
    mesh = SymbolTable.lookup_symbol(op, op.mesh)
    assert isinstance(mesh, fusion.MeshOp)
    return mesh.device_ids


def evaluate_sizes(
    f: func.FuncOp,
    arg_values: Sequence[Sequence[int] | int | float | None],
    device_id: int | None = None,
) -> list[BufferPlan]:
    """Every buffer the function allocates (global and on-chip), with its size.

    `device_id`: the device this evaluation is for; a buffer whose mesh does not
    contain it is marked `on_device=False` and counts 0 bytes.
    """
    return buffer_sizes(f, evaluate_index_values(f, arg_values), device_id)


def buffer_sizes(f: func.FuncOp, values: Mapping[SSAValue, int], device_id: int | None = None) -> list[BufferPlan]:
    """Every `alloc.alloc` of `f` with its concrete shape, given the values of
    the function's entry sizes (`evaluate_index_values`). A negative extent, or
    more bytes than a 64-bit index holds, is a `SizeError` naming the alloc."""
    out: list[BufferPlan] = []
    names: dict[str, int] = {}
    arenas = {op.source.owner for op in f.body.block.ops if isinstance(op, memref.ViewOp)}
    for op in f.body.walk():
        if isinstance(op, memref.ViewOp) and op.source.owner in arenas:
            out.append(_slot_size(op, values, device_id))
            out += _reused(out[-1], op)
            continue
        if not isinstance(op, alloc.AllocOp) or placed_off_chip(op, values):
            continue
        t = op.result.type
        assert isinstance(t, MemRefType)
        dyn = iter(op.sizes)
        shape = []
        for e in t.get_shape():
            if e == DYNAMIC_INDEX:
                v = next(dyn)
                if v not in values:
                    raise SizeError(f"the size of {op.result.name_hint or 'a buffer'} is not computed at entry")
                shape.append(values[v])
            else:
                shape.append(e)
        if any(e < 0 for e in shape):
            raise SizeError(f"buffer {op.result.name_hint} would have negative extents {shape}", op)
        devices = mesh_devices(op)
        on_device = device_id is None or devices is None or device_id in devices
        try:
            nbytes = size_arith.byte_size(shape, element_bytes(t.element_type))
        except size_arith.SizeArithmeticError:
            raise SizeError(
                f"buffer {op.result.name_hint} of shape {shape} has more than {size_arith.INDEX_MAX} bytes", op
            ) from None
        base = op.buffer_name.data if op.buffer_name else (op.result.name_hint or "buffer")
        count = names.get(base, 0)
        names[base] = count + 1
        name = base if count == 0 else f"{base}_{count}"
        out.append(
            BufferPlan.of(
                name,
                tuple(shape),
                t.element_type,
                op.memory_space.value,
                nbytes if on_device else 0,
                on_device,
                op,
            )
        )
        out += _reused(out[-1], op)
    return out


def _reused(buffer: BufferPlan, op: alloc.AllocOp | memref.ViewOp) -> list[BufferPlan]:
    """The tensors written in place into `buffer` once its own tensor is dead (alloc-plan's
    reuse, `alloc.reused_by`), each by its name with memory `reused` (its bytes are the
    buffer's, counted once there)."""
    return [BufferPlan.of(name, buffer.shape, buffer.element_type, REUSED, buffer.nbytes, buffer.on_device, op)
            for name in alloc.reused_names(op)]


REUSED = "reused"
"""The memory of a tensor written in place into a dead tensor's buffer (`_reused`)."""


def _slot_size(view: memref.ViewOp, values: Mapping[SSAValue, int], device_id: int | None) -> BufferPlan:
    """An arena slot as a buffer of the plan: memory `arena` (its bytes are the arena's)."""
    t = view.result.type
    assert isinstance(t, MemRefType)
    dyn = iter(view.sizes)
    shape = tuple(values[next(dyn)] if e == DYNAMIC_INDEX else e for e in t.get_shape())
    arena = view.source.owner
    assert isinstance(arena, alloc.AllocOp)
    devices = mesh_devices(arena)
    on_device = device_id is None or devices is None or device_id in devices
    nbytes = size_arith.byte_size(list(shape), element_bytes(t.element_type))
    return BufferPlan.of(view.result.name_hint or "slot", shape, t.element_type, "arena", nbytes if on_device else 0,
                      on_device, view)


def slot_sizes(f: func.FuncOp, values: Mapping[SSAValue, int]) -> dict[Operation, int]:
    """The bytes of every arena slot (`memref.view` of an `alloc.pack`ed arena) for
    these sizes, after checking the concrete packing: two slots whose lifetimes
    intersect never share a byte, and each slot fits the bytes it was packed as
    (a SizeError naming the pack otherwise)."""
    out: dict[Operation, int] = {}
    for pack in (op for op in f.body.block.ops if isinstance(op, alloc.PackOp)):
        sizes = [values[v] for v in pack.sizes]
        offsets = [values[v] for v in pack.offsets]
        lifetimes = pack.lifetime_pairs()
        bad = packing.overlapping_slots(sizes, offsets, lifetimes)
        if bad:
            raise SizeError(f"arena slots #{bad[0][0]} and #{bad[0][1]} are live together and overlap", pack)
        for k, offset in enumerate(pack.offsets):
            for use in offset.uses:
                view = use.operation
                if not isinstance(view, memref.ViewOp):
                    continue
                t = view.result.type
                assert isinstance(t, MemRefType)
                dyn = iter(view.sizes)
                shape = [values[next(dyn)] if e == DYNAMIC_INDEX else e for e in t.get_shape()]
                nbytes = size_arith.byte_size(shape, element_bytes(t.element_type))
                if nbytes > sizes[k] or offsets[k] + nbytes > values[pack.total]:
                    raise SizeError(f"arena slot {view.result.name_hint or k} needs {nbytes} bytes past its place", pack)
                out[view] = nbytes
    return out


def parse_shape_spec(spec: str) -> dict[str, tuple[int, ...] | int]:
    """`"x=8x4096,w=4096,n=3"` -> {"x": (8, 4096), "w": (4096,), "n": (3,)}; `s=` is a 0-d shape."""
    out: dict[str, tuple[int, ...] | int] = {}
    for item in filter(None, (p.strip() for p in spec.replace(";", ",").split(","))):
        if "=" not in item:
            raise SizeError(f"shape entry '{item}' must look like name=8x4096")
        name, dims = (s.strip() for s in item.split("=", 1))
        try:
            out[name] = tuple(int(d) for d in dims.split("x")) if dims else ()
        except ValueError:
            raise SizeError(f"shape entry '{item}': extents must be integers separated by 'x'") from None
        if any(d < 0 for d in out[name]):
            raise SizeError(f"shape entry '{item}': extents must be non-negative")
    return out


def parse_scalar_spec(spec: str) -> dict[str, int]:
    """`"n=5,m=-2"` -> {"n": 5, "m": -2}: values of `index` and integer scalar arguments."""
    out: dict[str, int] = {}
    for item in filter(None, (p.strip() for p in spec.replace(";", ",").split(","))):
        if "=" not in item:
            raise SizeError(f"scalar entry '{item}' must look like name=5")
        name, value = (s.strip() for s in item.split("=", 1))
        try:
            out[name] = int(value)
        except ValueError:
            raise SizeError(f"scalar entry '{item}': the value must be an integer") from None
    return out


def argument_values(
    f: func.FuncOp, shapes: Mapping[str, Sequence[int] | int], local: Callable[[int, Sequence[int]], Sequence[int]] | None = None
) -> list[Sequence[int] | int | None]:
    """Orders named shapes (and the values of `index` and integer scalars) as the
    function's arguments; an integer argument not given is None (an error only
    where it gives a size)."""
    values: list[Sequence[int] | int | None] = []
    names = [a.name_hint or f"arg{i}" for i, a in enumerate(f.body.block.args)]
    unknown = set(shapes) - set(names)
    if unknown:
        raise SizeError(
            f"no argument named {', '.join(sorted(unknown))}; @{f.sym_name.data} takes {', '.join(names)}"
        )
    for i, (arg, name) in enumerate(zip(f.body.block.args, names)):
        given = shapes.get(name)
        if is_size_scalar_type(arg.type):
            if given is None:
                if isinstance(arg.type, IntegerType):
                    values.append(None)  # needed only where it gives a size (index_cast)
                    continue
                raise SizeError(f"missing a value for index argument {name}")
            if not isinstance(given, int) and len(given) != 1:
                raise SizeError(f"argument {name} is a scalar: give one integer, not {'x'.join(map(str, given))}")
            values.append(given[0] if not isinstance(given, int) else given)
        elif isinstance(arg.type, MemRefType):
            static = arg.type.get_shape()
            if given is None:
                if DYNAMIC_INDEX in static:
                    raise SizeError(f"missing a shape for argument {name} ({'x'.join('?' if e == DYNAMIC_INDEX else str(e) for e in static)})")
                given = tuple(static)
            given = tuple(given) if not isinstance(given, int) else (given,)
            if local:
                given = tuple(local(i, given))
            if len(given) != len(static) or any(
                s != DYNAMIC_INDEX and s != g for s, g in zip(static, given)
            ):
                want = "x".join("?" if e == DYNAMIC_INDEX else str(e) for e in static) or "a 0-d shape"
                raise SizeError(
                    f"argument {name}: shape {'x'.join(map(str, given)) or '0-d'} does not fit {want}"
                )
            values.append(given)
        else:
            values.append(None)
    return values
