"""The input of every `alloc-*` pass: allocated functions, the output of `fusion-allocate`.

An allocated function holds no tensor value outside its `alloc.kernel`s: its
arguments and results are buffers (`memref`) or scalars, and the ops between its
kernels compute sizes and make, view, check and free buffers. Tensor values exist
only inside kernel bodies (the logical tensor a buffer holds). A function still in
tensor form (a fusion, segmented or not) is what `fusion-allocate` takes, not what
`alloc-alias`, `alloc-place`, `alloc-plan`, `alloc-verify`, `alloc-evaluate` or
`alloc-to-mlir` take: each of them checks `require_allocated` first and refuses such
a function with a located `VerifyError` that says to allocate it first, instead of
misreading tensors as buffers (or passing it through unplanned).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from allotment.diagnostics import located_message
from allotment.dialects import alloc
from allotment.dialects.fusion_rules import type_name
from allotment.errors import VerifyError

ALLOCATE_FIRST = "run fusion-segment and fusion-allocate first"
"""What a pass that takes allocated functions tells the user to do with a tensor-form one."""


def tensor_form(f: func.FuncOp) -> tuple[Operation, str] | None:
    """Where `f` is still in tensor form: (the op to locate the error at, what is a tensor),
    or None for an allocated function (see the module docstring). Kernel bodies are not
    looked into: tensors belong there."""
    args = f.body.blocks.first.args if f.body.blocks.first is not None else ()
    for i, t in enumerate(f.function_type.inputs.data):
        if isinstance(t, TensorType):
            name = f" %{args[i].name_hint}" if i < len(args) and args[i].name_hint else ""
            return f, f"argument #{i}{name} is a {type_name(t)}"
    for i, t in enumerate(f.function_type.outputs.data):
        if isinstance(t, TensorType):
            return f, f"result #{i} is a {type_name(t)}"
    stack: list[Operation] = [op for block in f.body.blocks for op in block.ops][::-1]  # the first op on top
    while stack:
        op = stack.pop()
        if isinstance(op, alloc.KernelOp):
            continue
        for r in op.results:
            if isinstance(r.type, TensorType):
                return op, f"{op.name} makes a {type_name(r.type)} outside any alloc.kernel"
        stack += [inner for region in op.regions for block in region.blocks for inner in block.ops][::-1]
    return None


def require_allocated(f: func.FuncOp, pass_name: str) -> None:
    """Refuses `f` unless it is allocated: a located `VerifyError` naming `pass_name`, the
    function and the first tensor found, saying to allocate the function first."""
    found = tensor_form(f)
    if found is None:
        return
    at, what = found
    raise VerifyError(located_message(
        at, f"{pass_name}: @{f.sym_name.data} must be allocated first: {what} ({pass_name} runs on "
            f"allocated functions; {ALLOCATE_FIRST})"))


def allocated_definitions(module: Operation, pass_name: str) -> list[func.FuncOp]:
    """The function definitions in `module`, each checked by `require_allocated`."""
    functions = [f for f in module.walk() if isinstance(f, func.FuncOp) and not f.is_declaration]
    for f in functions:
        require_allocated(f, pass_name)
    return functions


__all__ = ["ALLOCATE_FIRST", "allocated_definitions", "require_allocated", "tensor_form"]
