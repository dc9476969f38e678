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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Attribute

from allotment.analysis.size_eval import BufferSize, SizeError, evaluate_sizes
from allotment.dialects import fusion
from allotment.dialects.fusion_rules import type_name


@dataclass(frozen=True)
class BufferPlan:
    """A buffer of the plan: its local shape, dtype, memory space and bytes."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    memory: str
    nbytes: int
    on_device: bool
    kernel: str | None


FusionLike = str | ModuleOp | func.FuncOp


def _module_and_name(fusion_ir: FusionLike, name: str | None) -> tuple[ModuleOp, str | None]:
    from allotment.ir import parse_module

    if isinstance(fusion_ir, str):
        return parse_module(fusion_ir), name
    if isinstance(fusion_ir, func.FuncOp):
        module = fusion_ir.parent_op()
        if not isinstance(module, ModuleOp):
            module = ModuleOp([fusion_ir.clone()])
        return module.clone(), name or fusion_ir.sym_name.data
    return fusion_ir.clone(), name


def _find(module: ModuleOp, name: str | None) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if not funcs:
        raise SizeError("no function to plan")
    if name is None:
        return funcs[0]
    for f in funcs:
        if f.sym_name.data == name:
            return f
    raise SizeError(f"no function @{name}; the module has {', '.join('@' + f.sym_name.data for f in funcs)}")


def _local_shape(f: func.FuncOp, arg: int, shape: Sequence[int]) -> list[int]:
    """The local shard's shape of a sharded argument (the global shape otherwise)."""
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
    from xdsl.traits import SymbolTable

    mesh = SymbolTable.lookup_symbol(f, enc.mesh)
    assert isinstance(mesh, fusion.MeshOp)
    out = []
    for d, (g, axes) in enumerate(zip(shape, enc.axes)):
        k = 1
        for a in axes:
            k *= mesh.shape_values[a]
        if k == 1:
            out.append(g)
        elif enc.allows_uneven:
            out.append(-(-g // k))
        elif g % k:
            raise SizeError(f"argument {name}: dimension {d} has extent {g}, which does not divide evenly over {k} shards")
        else:
            out.append(g // k)
    return out


def _allocated(fusion_ir: FusionLike, function: str | None) -> tuple[func.FuncOp, func.FuncOp]:
    """The fusion function and its allocated copy (the input is never modified)."""
    from xdsl.context import Context

    from allotment.passes.fusion_allocate import FusionAllocatePass
    from allotment.passes.fusion_segment import FusionSegmentPass

    module, name = _module_and_name(fusion_ir, function)
    original = _find(module, name)
    work = module.clone()
    ctx = Context()
    FusionSegmentPass().apply(ctx, work)
    FusionAllocatePass().apply(ctx, work)
    return original, _find(work, original.sym_name.data)


def plan_buffers(
    fusion_ir: FusionLike,
    input_shapes: Mapping[str, Sequence[int] | int],
    *,
    function: str | None = None,
    device_id: int | None = None,
) -> list[BufferSize]:
    """Every buffer of the allocated fusion with its concrete size (internal form)."""
    original, allocated = _allocated(fusion_ir, function)
    global_values = argument_values_global(original, input_shapes)
    local = [
        _local_shape(original, i, v) if isinstance(v, tuple) else v
        for i, v in enumerate(global_values)
    ]
    return evaluate_sizes(allocated, local, device_id)


def argument_values_global(f: func.FuncOp, shapes: Mapping[str, Sequence[int] | int]) -> list:
    names = [a.name_hint or f"arg{i}" for i, a in enumerate(f.body.block.args)]
    unknown = set(shapes) - set(names)
    if unknown:
        raise SizeError(f"no argument named {', '.join(sorted(unknown))}; @{f.sym_name.data} takes {', '.join(names)}")
    out: list = []
    for arg, name in zip(f.body.block.args, names):
        t = arg.type
        given = shapes.get(name)
        if isinstance(t, TensorType):
            if given is None:
                if DYNAMIC_INDEX in t.get_shape():
                    raise SizeError(f"missing a shape for argument {name} ({type_name(t)})")
                given = tuple(t.get_shape())
            out.append(tuple(given) if not isinstance(given, int) else (given,))
        elif given is not None:
            out.append(given if isinstance(given, int) else given[0])
        else:
            out.append(None)
    return out


def _kernel_of(buf: BufferSize) -> str | None:
    from allotment.dialects.alloc import KernelOp

    parent = buf.op.parent_op()
    return parent.sym_name.data if isinstance(parent, KernelOp) else None


def plan_sizes(
    fusion_ir: FusionLike,
    input_shapes: Mapping[str, Sequence[int] | int],
    *,
    function: str | None = None,
    device_id: int | None = None,
) -> dict[str, BufferPlan]:
    """The byte size of every buffer of a fusion for the given input shapes.

    Keys are buffer names (the tensor a global buffer holds; `<kernel>_row_<x>`
    for an on-chip row buffer). Nothing is allocated.
    """
    return {
        b.name: BufferPlan(
            b.name, b.shape, torch_dtype_name(b.element_type), b.memory, b.nbytes, b.on_device, _kernel_of(b)
        )
        for b in plan_buffers(fusion_ir, input_shapes, function=function, device_id=device_id)
    }


def torch_dtype_name(t: Attribute) -> str:
    from allotment.dialects.fusion_rules import type_name as tn

    return {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16",
            "i64": "int64", "i32": "int32", "i1": "bool", "index": "int64"}.get(tn(t), tn(t))


def allocate_intermediates(
    fusion_ir: FusionLike,
    input_shapes: Mapping[str, Sequence[int] | int],
    *,
    device: object = "cpu",
    function: str | None = None,
    device_id: int | None = None,
) -> dict:
    """Allocates every global buffer of a fusion (intermediates and outputs).

    Returns {buffer name: torch.empty(local shape, dtype, device)}, computed
    from the input shapes only: nothing is compiled or launched. Buffers whose
    mesh does not contain `device_id` are not allocated.
    """
    import torch

    out: dict = {}
    for b in plan_buffers(fusion_ir, input_shapes, function=function, device_id=device_id):
        if b.memory != "global" or not b.on_device:
            continue
        out[b.name] = torch.empty(b.shape, dtype=getattr(torch, torch_dtype_name(b.element_type)), device=device)
    return out
