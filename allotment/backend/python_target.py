"""`allot-opt -t python`: the host program (with its Triton kernels) of allocated IR.

Runs on a module whose functions went through `fusion-segment,fusion-allocate,alloc-place`
and prints, for each, the Python module that `allotment.compile` would load.
`-t python{device=cpu}` generates the interpreter flavour (no libdevice).
What it prints is what `emit_program` makes: IR names appear only as
sanitized identifiers, `repr` strings and escaped comments (`identifiers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from allotment.backend.host_codegen import emit_program
from allotment.backend.identifiers import literal
from allotment.errors import Error


@dataclass(frozen=True)
class PythonTarget(Target):
    """Prints the generated host program of every allocated function."""

    name = "python"

    device: str = "cuda"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        funcs = [
            f for f in module.walk()
            if isinstance(f, func.FuncOp) and not f.is_declaration
            and any(isinstance(t, MemRefType) for t in (*f.function_type.inputs.data, *f.function_type.outputs.data))
        ]
        if not funcs:
            raise DiagnosticException(
                "-t python needs allocated, placed functions: run -p fusion-segment,fusion-allocate,alloc-place first"
            )
        for f in funcs:
            try:
                output.write(emit_program(f, "cuda" if self.device.startswith("cuda") else "cpu").source)
            except Error as e:  # CodegenError, or an element type with no torch/Triton spelling
                raise DiagnosticException(f"-t python: @{literal(f.sym_name.data)}: {e}") from None
            output.write("\n")
