"""Library kernels (`kind = "library"`: one matmul or linear): a vendor call on the host
(`rt.matmul`, `rt.linear`: cuBLAS through torch), or, where alloc-place scheduled the
kernel `tiled` (or `tiled_if` a run-time condition holds), the generated tiled matmul
(`tiled_matmul`).
"""

from __future__ import annotations

from typing import Protocol

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from allotment.analysis.library_matmul import tileable
from allotment.backend.identifiers import Namespace
from allotment.backend.kernel_plan import CodegenError
from allotment.backend.kernels import tiled_matmul
from allotment.dialects import alloc, fusion


class Host(Protocol):
    """What a host-side kernel uses of the host program's emitter (`host_codegen`)."""

    ns: Namespace
    target: str
    tiled: list[tiled_matmul.TiledMatmulKernel]
    launchers: list[str]
    layouts: list[str]
    host_work: list[str]

    def line(self, text: str) -> None: ...
    def v(self, value: SSAValue) -> str: ...


def emit(host: Host, op: alloc.KernelOp, ins: list[str], outs: list[str]) -> None:
    """Writes the library kernel's call (and a tiled kernel's launcher) into the host program."""
    body = [o for o in op.body.block.ops if not isinstance(o, alloc.YieldOp | arith.ConstantOp)]
    if len(body) != 1 or len(outs) != 1:
        raise CodegenError(f"library kernel {op.sym_name.data!r} must hold one matmul or linear")
    lib = body[0]
    args = {a: n for a, n in zip(op.body.block.args, ins)}
    (out,) = outs
    if not isinstance(lib, fusion.MatmulOp | fusion.LinearOp):
        raise CodegenError(f"library kernel {op.sym_name.data!r}: {lib.name} is not a library op")
    schedule = op.schedule_name
    indent = ""
    if schedule in ("tiled", "tiled_if"):  # alloc-place's choice: the generated tiled matmul
        lm = tileable(op)
        if lm is None:
            raise CodegenError(f"library kernel {op.sym_name.data!r} is scheduled {schedule}, but the tiled "
                               f"matmul does not compute its {lib.name} (2-D operands of one float type)")
        kname = op.sym_name.data
        launch = host.ns.name(f"launch_{kname}")
        tiled = tiled_matmul.generate(lm, kname, host.ns.name(f"{kname}_tiled"), launch, host.target, len(ins))
        host.tiled.append(tiled)
        host.launchers.append(tiled.launcher)
        host.layouts.append(tiled.layout)
        if schedule == "tiled_if":
            host.line(f"if {host.v(op.fits)}:")
            host.line(f"    {launch}({', '.join(ins + outs)}, huge)")
            host.line("else:")
            indent = "    "
        else:
            host.line(f"{launch}({', '.join(ins + outs)}, huge)")
            return
    if isinstance(lib, fusion.MatmulOp):
        host.line(f"{indent}rt.matmul({args[lib.lhs]}, {args[lib.rhs]}, {out})")
    else:
        bias = args[lib.bias] if lib.bias is not None else "None"
        host.line(f"{indent}rt.linear({args[lib.input]}, {args[lib.weight]}, {bias}, {out})")
