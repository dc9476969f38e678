"""Sizes from shapes alone: plan and allocate a fusion's buffers without compiling it.

`plan_sizes(fusion, input_shapes)` runs `fusion-segment` and `fusion-allocate`
on a copy of the fusion and evaluates every buffer's size for the given input
shapes; `allocate_intermediates` then makes those buffers with `torch.empty`.
No kernel is generated, compiled or launched, and the fusion passed in is not
modified. Input shapes are the global (logical) shapes of the fusion's tensor
arguments; `device_id` selects the device of a mesh, whose local shards are
planned (buffers of meshes that do not contain it take no memory).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from allotment import dtypes
from allotment.analysis.memory_profile import memory_profile
from allotment.analysis.size_eval import (
    BufferPlan,
    SizeError,
    buffer_sizes,
    evaluate_index_values,
    evaluate_sizes,
    slot_sizes,
)
from allotment.diagnostics import SOURCE_SPANS, located_message, verify_located
from allotment.dialects import fusion
from allotment.dialects.alloc import shard_count
from allotment.dialects.fusion_rules import type_name
from allotment.errors import ArgumentError, CompileError, Error, RunError, VerifyError
from allotment.extents import size_arith, view_extents
from allotment.ir import parse_module
from allotment.limits import call_with_deep_stack
from allotment.passes import pipeline

if TYPE_CHECKING:
    import torch

    from allotment.analysis.memory_profile import MemoryProfile


FusionLike = str | ModuleOp | func.FuncOp

Shapes = Mapping[str, Sequence[int] | int]


# --------------------------------------------------------------------------- #
# Arguments                                                                   #
# --------------------------------------------------------------------------- #


def _check_fusion_ir(fusion_ir: object) -> None:
    if isinstance(fusion_ir, bool) or not isinstance(fusion_ir, str | ModuleOp | func.FuncOp):
        raise ArgumentError(
            f"fusion_ir must be IR text (str), a ModuleOp or a func.FuncOp, not {type(fusion_ir).__name__}"
        )


def _extent(value: object, what: str) -> int:
    """An int (or an integer-like such as a numpy integer) that fits a 64-bit
    index, never a bool."""
    if isinstance(value, bool):
        raise ArgumentError(f"{what} must be an int, not bool")
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ArgumentError(f"{what} must be an int, not {type(value).__name__}") from None
    if not -size_arith.INDEX_MAX - 1 <= n <= size_arith.INDEX_MAX:
        raise ArgumentError(f"{what} = {n} does not fit in a 64-bit index")
    return n


def _check_shapes(input_shapes: object) -> dict[str, tuple[int, ...] | int]:
    """`input_shapes` as {argument name: shape tuple, or an int}; an ArgumentError
    naming the entry at fault otherwise. Shape entries must be non-negative."""
    if not isinstance(input_shapes, Mapping):
        raise ArgumentError(
            "input_shapes must be a mapping of argument name to a shape (a sequence of ints) "
            f"or an int, not {type(input_shapes).__name__}"
        )
    out: dict[str, tuple[int, ...] | int] = {}
    for name, given in input_shapes.items():
        if not isinstance(name, str):
            raise ArgumentError(f"input_shapes: keys must be argument names (str), not {type(name).__name__}")
        what = f"input_shapes[{name!r}]"
        if isinstance(given, str | bytes) or not isinstance(given, Sequence):
            try:
                out[name] = _extent(given, what)  # an int (an index argument's value, or a 1-d shape)
            except ArgumentError:
                raise ArgumentError(
                    f"{what} must be a shape (a sequence of ints, e.g. (8, 64)) or an int, "
                    f"not {type(given).__name__} {given!r}"
                ) from None
            continue
        shape = tuple(_extent(e, f"{what}[{d}]") for d, e in enumerate(given))
        negative = [e for e in shape if e < 0]
        if negative:
            raise ArgumentError(f"{what}: extents must be non-negative, got {negative[0]}")
        out[name] = shape
    return out


def _check_options(function: object, device_id: object) -> None:
    if function is not None and not isinstance(function, str):
        raise ArgumentError(f"function must be a function name (str) or None, not {type(function).__name__}")
    if device_id is not None:
        if isinstance(device_id, bool) or not isinstance(device_id, int):
            raise ArgumentError(f"device_id must be an int or None, not {type(device_id).__name__}")
        if device_id < 0:
            raise ArgumentError(f"device_id must be non-negative, got {device_id}")


def _check_device(device: object) -> torch.device:
    """`device` as a torch.device that exists here: an ArgumentError naming it
    otherwise (one torch cannot parse, or one this machine does not have, such
    as `cuda` without CUDA)."""
    import torch

    if not isinstance(device, str | torch.device):
        raise ArgumentError(f"device must be a str or a torch.device, not {type(device).__name__}")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError) as e:
        raise ArgumentError(f"device {device!r} is not a torch device: {e}") from None
    try:
        torch.empty(0, device=dev)
    except (RuntimeError, AssertionError, AttributeError) as e:
        raise ArgumentError(f"device {str(dev)!r} is not available on this machine: {e}") from None
    return dev


# --------------------------------------------------------------------------- #
# Planning                                                                    #
# --------------------------------------------------------------------------- #


def _module_and_name(fusion_ir: FusionLike, name: str | None) -> tuple[ModuleOp, str | None]:
    """A verified copy of the IR passed in (which is never modified)."""
    if isinstance(fusion_ir, str):
        copy = parse_module(fusion_ir)  # verified
    elif isinstance(fusion_ir, func.FuncOp):
        module = fusion_ir.parent_op()
        copy = module.clone() if isinstance(module, ModuleOp) else ModuleOp([fusion_ir.clone()])
        name = name or fusion_ir.sym_name.data
        verify_located(copy)
    else:
        copy = fusion_ir.clone()
        verify_located(copy)
    for f in copy.walk():
        if isinstance(f, func.FuncOp):
            try:
                fusion.verify_signature(f)
            except VerifyException as e:
                raise VerifyError(located_message(f, str(e)) if f in SOURCE_SPANS else str(e)) from None
    return copy, name


def _find(module: ModuleOp, name: str | None) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if not funcs:
        raise ArgumentError("fusion_ir: no function to plan")
    if name is None:
        return funcs[0]
    for f in funcs:
        if f.sym_name.data == name:
            return f
    raise ArgumentError(
        f"function: no function @{name}; the module has {', '.join('@' + f.sym_name.data for f in funcs)}"
    )


def _local_shape(f: func.FuncOp, arg: int, shape: Sequence[int]) -> list[int]:
    """The local shard's shape of a sharded argument (the global shape otherwise),
    by `view_extents.local_extent`, the rule fusion-allocate sizes buffers by."""
    t = f.function_type.inputs.data[arg]
    if not isinstance(t, TensorType):
        return list(shape)
    static = t.get_shape()
    name = f.body.block.args[arg].name_hint or f"arg{arg}"
    if len(static) != len(shape) or any(s != DYNAMIC_INDEX and s != g for s, g in zip(static, shape)):
        raise SizeError(f"argument {name}: shape {'x'.join(map(str, shape)) or '0-d'} does not fit {type_name(t)}")
    enc = t.encoding
    if not isinstance(enc, fusion.ShardingAttr):
        return list(shape)
    mesh = SymbolTable.lookup_symbol(f, enc.mesh)
    assert isinstance(mesh, fusion.MeshOp)  # the verifier checked the sharding's mesh
    out = []
    for d, (g, axes) in enumerate(zip(shape, enc.axes)):
        k = shard_count(mesh, axes)
        if not view_extents.shard_divides(g, k, enc.allows_uneven):
            raise SizeError(
                f"argument {name}: dimension {d} has extent {g}, which does not divide evenly over {k} shards"
            )
        out.append(view_extents.local_extent(g, k, enc.allows_uneven))
    return out


def _allocated(fusion_ir: FusionLike, function: str | None, planned: bool = True) -> tuple[func.FuncOp, func.FuncOp]:
    """The fusion function and its allocated copy: the compile pipeline (`passes.pipeline`),
    so the buffers are the ones a compiled program allocates, or with `planned=False`
    the same up to `alloc-alias` (no order, reuse or frees). The input is never modified."""
    module, name = _module_and_name(fusion_ir, function)
    original = _find(module, name)
    passes = pipeline.compile_passes()
    if not planned:
        passes = [p for p in passes if p.name != "alloc-plan"]
    try:
        work = pipeline.run_pipeline(module, passes)
    except Error:
        raise
    except DiagnosticException as e:  # a pass cannot segment or allocate this fusion
        raise CompileError(str(e)) from None
    return original, _find(work, original.sym_name.data)


def plan_buffers(
    fusion_ir: FusionLike,
    input_shapes: Shapes,
    *,
    function: str | None = None,
    device_id: int | None = None,
) -> list[BufferPlan]:
    """Every buffer of the allocated fusion with its concrete size, in the order of the IR.

    ArgumentError for arguments of the wrong type or value (naming the
    argument), ShapeError (`SizeError`) for shapes that do not fit the fusion,
    ParseError/VerifyError for bad IR, CompileError for IR the passes cannot
    segment or allocate (an unsupported op, say)."""
    _check_fusion_ir(fusion_ir)
    shapes = _check_shapes(input_shapes)
    _check_options(function, device_id)

    def plan() -> list[BufferPlan]:
        original, allocated = _allocated(fusion_ir, function)
        global_values = argument_values_global(original, shapes)
        local = [
            _local_shape(original, i, v) if isinstance(v, tuple) else v
            for i, v in enumerate(global_values)
        ]
        return evaluate_sizes(allocated, local, device_id)

    return call_with_deep_stack(plan)  # xDSL clones, walks and verifies recursively


def argument_values_global(f: func.FuncOp, shapes: Mapping[str, Sequence[int] | int]) -> list:
    """The arguments' global shapes (tensors) and values (index and integer scalars), in order."""
    names = [a.name_hint or f"arg{i}" for i, a in enumerate(f.body.block.args)]
    unknown = set(shapes) - set(names)
    if unknown:
        raise ArgumentError(
            f"input_shapes: no argument named {', '.join(sorted(unknown))}; @{f.sym_name.data} takes {', '.join(names)}"
        )
    out: list = []
    for arg, name in zip(f.body.block.args, names):
        t = arg.type
        given = shapes.get(name)
        if isinstance(t, TensorType):
            if given is None:
                if DYNAMIC_INDEX in t.get_shape():
                    raise SizeError(f"missing a shape for argument {name} ({type_name(t)})")
                given = tuple(t.get_shape())
            if isinstance(given, int):
                raise ArgumentError(
                    f"input_shapes[{name!r}]: argument {name} is a tensor ({type_name(t)}): give its shape "
                    f"as a sequence of ints, e.g. ({given},), not the int {given}"
                )
            shape = tuple(given)
            if any(e < 0 for e in shape):
                raise ArgumentError(f"input_shapes[{name!r}]: extents must be non-negative, got {shape}")
            out.append(shape)
        elif given is not None:
            if not isinstance(given, int):
                raise ArgumentError(
                    f"input_shapes[{name!r}]: argument {name} is a scalar ({type_name(t)}): give its value as "
                    f"one int, not the sequence {tuple(given)}"
                )
            out.append(given)
        else:
            out.append(None)
    return out


def plan_sizes(
    fusion_ir: FusionLike,
    input_shapes: Shapes,
    *,
    function: str | None = None,
    device_id: int | None = None,
) -> dict[str, BufferPlan]:
    """The byte size of every buffer of a fusion for the given input shapes.

    Keys are buffer names (the tensor a global buffer holds; `<kernel>_row_<x>`
    for an on-chip row buffer; `arena` for the arena alloc-plan packs transients
    into, and each tensor in it with memory `arena`, its bytes being the arena's;
    `<kernel>_partials_<x>` for a split reduction's partials). Nothing is allocated. `fusion_ir` (IR text, a
    ModuleOp or a func.FuncOp) is not modified; `input_shapes` maps argument
    names to shapes (sequences of non-negative ints: `(4,)` for a 1-d tensor) or,
    for `index` and integer scalar arguments, ints (`{"x": (4, 8), "n": 5}`); an int
    for a tensor or a sequence for a scalar is an ArgumentError. Arguments of the wrong type or value raise ArgumentError
    naming them; shapes that do not fit the fusion raise ShapeError.
    """
    return {b.name: b for b in plan_buffers(fusion_ir, input_shapes, function=function, device_id=device_id)}


def allocate_intermediates(
    fusion_ir: FusionLike,
    input_shapes: Shapes,
    *,
    device: object = "cpu",
    function: str | None = None,
    device_id: int | None = None,
) -> dict:
    """Allocates every global buffer of a fusion (intermediates and outputs).

    Returns {buffer name: torch.empty(local shape, dtype, device)}, computed
    from the input shapes only: nothing is compiled or launched. Buffers whose
    mesh does not contain `device_id` are not allocated. `device` must be a
    torch device this machine has (ArgumentError if torch cannot parse it,
    RunError if it is absent, e.g. "cuda" without CUDA); the other arguments are
    checked as `plan_sizes` checks them.
    """
    import torch

    _check_fusion_ir(fusion_ir)
    shapes = _check_shapes(input_shapes)
    _check_options(function, device_id)
    dev = _check_device(device)
    out: dict = {}
    for b in plan_buffers(fusion_ir, shapes, function=function, device_id=device_id):
        if b.memory != "global" or not b.on_device:
            continue
        try:
            out[b.name] = torch.empty(b.shape, dtype=getattr(torch, b.dtype), device=dev)
        except (RuntimeError, MemoryError) as e:
            raise RunError(f"cannot allocate buffer {b.name} ({b.nbytes} bytes) on {dev}: {e}") from None
    return out


def _argument_nbytes(f: func.FuncOp, i: int, shape: object) -> int:
    """The bytes of tensor argument `i` of the allocated `f` at its local `shape` (0 for a scalar)."""
    t = f.function_type.inputs.data[i]
    if not isinstance(shape, tuple | list) or not hasattr(t, "element_type"):
        return 0
    n = 1
    for e in shape:
        n *= e
    return n * dtypes.element_nbytes(t.element_type)


def memory_plan(
    fusion_ir: FusionLike,
    input_shapes: Shapes,
    *,
    function: str | None = None,
    device_id: int | None = None,
    block_bytes: int = 1,
) -> MemoryProfile:
    """The memory plan of a fusion for the given input shapes: every global buffer's
    size expression, bytes, placement and live range over the planned schedule,
    and the plan's figures (`planned_peak`, `lower_bound`, `without_reuse`, in bytes;
    `summary()` prints them on one line). Arguments are checked as `plan_sizes`
    checks them; nothing is compiled, allocated or launched.

    `block_bytes`: the allocator's granularity; every buffer's bytes are rounded up to
    a multiple of it in all three figures (torch's CUDA caching allocator rounds each
    block to 512 bytes, so `block_bytes=512` gives what `torch.cuda.max_memory_allocated`
    can measure; 1, the default, gives exact bytes)."""
    if not isinstance(block_bytes, int) or isinstance(block_bytes, bool) or block_bytes < 1:
        raise ArgumentError(f"memory_plan: block_bytes must be a positive int, got {block_bytes!r}")
    rounded = (lambda n: -(-n // block_bytes) * block_bytes)

    _check_fusion_ir(fusion_ir)
    shapes = _check_shapes(input_shapes)
    _check_options(function, device_id)

    def plan() -> MemoryProfile:
        original, allocated = _allocated(fusion_ir, function)
        global_values = argument_values_global(original, shapes)
        local = [_local_shape(original, i, v) if isinstance(v, tuple) else v for i, v in enumerate(global_values)]
        values = evaluate_index_values(allocated, local)
        sizes = buffer_sizes(allocated, values, device_id)
        slots = slot_sizes(allocated, values)
        _, unplanned = _allocated(fusion_ir, function, planned=False)
        before = [(b.name, rounded(b.nbytes)) for b in evaluate_sizes(unplanned, local, device_id) if b.memory == "global"]
        nbytes = {**{b.op: rounded(b.nbytes) for b in sizes}, **{op: rounded(n) for op, n in slots.items()}}
        arguments = [rounded(_argument_nbytes(allocated, i, v)) for i, v in enumerate(local)]
        return memory_profile(allocated, nbytes, sum(n for _, n in before), before, arguments)

    return call_with_deep_stack(plan)
