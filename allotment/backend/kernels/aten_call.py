"""The host code of an `aten` kernel: one call of an ATen operator (`fusion.AtenOp`).

`emit(kernel, ins, outs, host_value)` returns the lines of the host program that make
the call. The operator is looked up by name at run time (`host_runtime.aten_call`, which
accepts only `aten.`/`prims.` overload names); the arguments are Python source built from
the op's `call` JSON: tensors and scalars by the host program's own names, numbers by
`repr`, strings by `identifiers.literal`, dtypes, layouts and memory formats by name after
checking that torch has them. Nothing of the IR's text becomes code any other way.

With an `out` overload the call writes the kernel's planned buffers (`out=` arguments
named by `out_args`); without one the buffers are `by_call` (`alloc.AllocOp`) and take
the call's results, made dense where the call returned another layout (the host
program's views index buffers row-major), or in the buffer's `order` where fusion-allocate
planned it in the order the call returns it (`host_runtime.in_order`: kept as it is when it
comes back so), unless the buffer is `any_layout` (alloc-plan: only kernels that index
through strides read it): then a result that is dense without overlaps is kept as it is
(`host_runtime.call_layout`), with no copy.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IntegerAttr, TensorType
from xdsl.ir import SSAValue

from allotment.backend.identifiers import literal
from allotment.backend.kernel_plan import CodegenError
from allotment.backend.kernels.emitter import float_literal
from allotment.dialects import alloc, fusion
from allotment.dtypes import torch_dtype_source

_ENUMS = {"dtype": torch.dtype, "layout": torch.layout, "memory_format": torch.memory_format}
"""Tagged JSON objects naming a torch attribute of this type (`{"dtype": "bfloat16"}`)."""


_CARRIER = {"uint64": "int64", "uint32": "int32", "uint8": "bool", "int8": "bool"}
"""A result of one of these dtypes is held in a buffer of the other (the same width)."""


def aten_op(kernel: alloc.KernelOp) -> fusion.AtenOp:
    """The one `fusion.aten` of an `aten` kernel (constants aside)."""
    body = [o for o in kernel.body.block.ops if not isinstance(o, alloc.YieldOp | arith.ConstantOp)]
    if len(body) != 1 or not isinstance(body[0], fusion.AtenOp):
        raise CodegenError(f"aten kernel {kernel.sym_name.data!r} must hold one fusion.aten")
    return body[0]


def emit(kernel: alloc.KernelOp, ins: list[str], outs: list[str], host_value: Callable[[SSAValue], str]) -> list[str]:
    """The host lines of the kernel's call (module docstring)."""
    op = aten_op(kernel)
    names = {a: n for a, n in zip(kernel.body.block.args, ins)}

    def value(v: SSAValue) -> str:
        if v in names:
            return names[v]
        owner = v.owner
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, IntegerAttr):
                return repr(attr.value.data)
            if isinstance(attr, FloatAttr):
                return float_literal(float(attr.value.data))
        return host_value(v)

    def source(x: object) -> str:
        if isinstance(x, list):
            return "[" + ", ".join(source(e) for e in x) + "]"
        if isinstance(x, dict):
            return tagged(x)
        if isinstance(x, bool) or x is None or isinstance(x, int):
            return repr(x)
        if isinstance(x, float):
            return float_literal(x)
        if isinstance(x, str):
            return literal(x)
        raise CodegenError(f"aten kernel {kernel.sym_name.data!r}: cannot pass {type(x).__name__}")

    def tagged(x: dict) -> str:
        if "t" in x:
            if "view" in x:  # a carried tensor (a dtype with no fusion type) viewed back
                return f"{value(op.inputs[x['t']])}.view({tagged({'dtype': x['view']})})"
            return value(op.inputs[x["t"]])
        if "s" in x:
            return value(op.scalars[x["s"]])
        if "device" in x:
            return "device"
        if "float" in x:
            return float_literal(float(x["float"]))
        for tag, kind in _ENUMS.items():
            if tag in x:
                name = x[tag]
                if not isinstance(name, str) or not name.isidentifier() or not isinstance(getattr(torch, name, None), kind):
                    raise CodegenError(f"aten kernel {kernel.sym_name.data!r}: torch has no {tag} {name!r}")
                return f"torch.{name}"
        raise CodegenError(f"aten kernel {kernel.sym_name.data!r}: unknown argument {sorted(x)}")

    call = op.decoded_call
    args = [source(a) for a in call.get("args", [])]
    kwargs = {k: source(v) for k, v in call.get("kwargs", {}).items()}
    for k in kwargs:
        if not k.isidentifier():
            raise CodegenError(f"aten kernel {kernel.sym_name.data!r}: {k!r} is not an argument name")
    target = op.target.data
    lines = [f"# {literal(target)}"]
    # the kernel writes only the results used after it (fusion-segment yields those)
    yielded = list(kernel.body.block.last_op.operands)
    written = [outs[yielded.index(r)] if r in yielded else None for r in op.res]
    if op.out is not None and op.out_args is not None:
        packet = target.rsplit(".", 1)[0]
        for name, out, r in zip(op.out_args, written, op.res):
            # an unused result goes to an empty tensor, which the call resizes
            kwargs[name.data] = out or f"torch.empty(0, dtype={tagged({'dtype': _torch_name(r.type)})}, device=device)"
        name = literal(packet + "." + op.out.data)
        lines.append(f"rt.aten_call({name}, {_call_args(args, kwargs)})")
        for k, (out, r) in enumerate(zip(written, op.res)):  # torch resizes an out= tensor it disagrees with
            if out is not None:
                buffer = kernel.outs[yielded.index(r)].owner
                lines.append(f"rt.call_result({out}, {name}, {k}, None, {_shape_source(buffer, r.type, host_value)}, "
                             f"{tagged({'dtype': _torch_name(r.type)})})")
        return lines
    result = "aten_result"
    lines.append(f"{result} = rt.aten_call({literal(target)}, {_call_args(args, kwargs)})")
    positions = call.get("results")
    views = call.get("views") or [None] * len(op.res)
    for k, out in enumerate(written):
        if out is None:
            continue
        buffer = kernel.outs[yielded.index(op.res[k])].owner
        position = None if positions is None else int(positions[k])
        dtype = tagged({"dtype": views[k] or _torch_name(op.res[k].type)})
        got = (f"rt.call_result({result}, {literal(target)}, {k}, {position!r}, "
               f"{_shape_source(buffer, op.res[k].type, host_value)}, {dtype})")
        carrier = f".view({tagged({'dtype': _CARRIER[views[k]]})})" if views[k] else ""
        keep = isinstance(buffer, alloc.AllocOp) and buffer.any_layout is not None  # alloc-plan's decision
        order = list(buffer.order.get_values()) if isinstance(buffer, alloc.AllocOp) and buffer.order else None
        if keep:
            lines.append(f"{out} = rt.call_layout({got}){carrier}")
        elif order is not None and order != list(range(len(order))):  # fusion-allocate's plan
            lines.append(f"{out} = rt.in_order({got}, {tuple(int(d) for d in order)!r}){carrier}")
        else:
            lines.append(f"{out} = rt.dense({got}){carrier}")
    lines.append(f"del {result}")
    return lines


def _shape_source(buffer: object, t: TensorType, host_value: Callable[[SSAValue], str]) -> str:
    """The result's shape as the host program knows it: the planned buffer's extents (its
    dynamic ones by the host values of its `alloc.alloc` sizes), else the IR type's, which
    then must be static."""
    if isinstance(buffer, alloc.AllocOp):
        sizes = iter(buffer.sizes)
        shape = buffer.result.type.get_shape()  # type: ignore[attr-defined]
        extents = [host_value(next(sizes)) if e == DYNAMIC_INDEX else repr(int(e)) for e in shape]
    elif all(e != DYNAMIC_INDEX for e in t.get_shape()):
        extents = [repr(int(e)) for e in t.get_shape()]
    else:
        raise CodegenError("an aten call's result of dynamic shape must go to a buffer of its own")
    return "(" + ", ".join(extents) + ("," if len(extents) == 1 else "") + ")"


def _torch_name(t: TensorType) -> str:
    """The torch dtype name of a result's element type (`float32`)."""
    return torch_dtype_source(t.element_type).removeprefix("torch.")


def _call_args(args: list[str], kwargs: dict[str, str]) -> str:
    """`(a, b), {'k': v}` for `rt.aten_call`."""
    tup = "(" + ", ".join(args) + ("," if len(args) == 1 else "") + ")"
    return tup + ", {" + ", ".join(f"{literal(k)}: {v}" for k, v in kwargs.items()) + "}"
