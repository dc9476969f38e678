"""`allotment.compile(fusion) -> Executable`: a fusion, parsed or cloned, ready to run.

`compile` owns its IR (text is parsed once; a ModuleOp or FuncOp passed in is
verified and cloned, so the passes never modify the caller's IR) and returns
an `Executable` (`runtime`), or a `DistributedExecutable` (`distributed`) for
a fusion with sharded tensors. Nothing is generated until the first call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from allotment.diagnostics import clone_located, verify_located
from allotment.driver.distributed import DistributedExecutable
from allotment.driver.runtime import Executable
from allotment.errors import ArgumentError, CompileError
from allotment.ir import find_function, parse_module
from allotment.passes.complex_parts import has_complex
from allotment.passes.sharding_propagation import is_sharded_function

__all__ = ["compile"]


def compile(
    fusion: str | os.PathLike[str] | ModuleOp | func.FuncOp,
    *,
    function: str | None = None,
    device: str | None = None,
    cuda_graphs: bool = False,
    planning: bool = True,
) -> Executable:
    """Prepares a fusion for execution (code is generated on the first call per target).

    `fusion` is IR text, a `pathlib.Path` to a .mlir file, a `ModuleOp` or a `func.FuncOp`
    (cloned: the caller's IR is never modified); `function` picks a function of a module
    (default: the first); `device` pins where it runs ("cpu", "cuda", "cuda:N"; default:
    where the inputs are). `cuda_graphs=True`: CUDA calls capture one CUDA graph per input
    signature and replay it (outputs are the graph's buffers, reused by the next call with
    the same signature unless one is still held: see `backend/cuda_graphs.py`). `planning=False`: alloc-plan keeps program order, reuses
    no buffer and packs no arena (each buffer is still freed after its last use). Raises ArgumentError for arguments of the wrong type or value,
    ParseError/VerifyError for bad IR, CompileError for a fusion that cannot run.
    """
    if function is not None and not isinstance(function, str):
        raise ArgumentError(f"compile: function must be a str (a function name), got {type(function).__name__}")
    _check_device(device)
    module, function = _own_module(fusion, function)
    f = find_function(module, function)
    if f.is_declaration:
        raise ArgumentError(f"compile: @{f.sym_name.data} is a declaration; a fusion needs a body to compile")
    if has_complex(f):
        raise CompileError(
            f"compile: @{f.sym_name.data} has complex values, which the kernels hold as their real "
            "parts: split it first (allotment.passes.complex_parts.split_complex, as "
            "FusionDefinition.execute does) and pass the parts")
    if _is_sharded(f):  # one program per rank, collectives through torch.distributed
        return DistributedExecutable(module, f, device)
    if not isinstance(cuda_graphs, bool):
        raise ArgumentError(f"compile: cuda_graphs must be True or False, got {cuda_graphs!r}")
    if not isinstance(planning, bool):
        raise ArgumentError(f"compile: planning must be True or False, got {planning!r}")
    return Executable(module, f, device, cuda_graphs, planning)


def _check_device(device: Any) -> None:
    if device is None:
        return
    if not isinstance(device, str):
        raise ArgumentError(f"compile: device must be a str (cpu, cuda or cuda:N), got {type(device).__name__}")
    if device != "cpu" and not (device == "cuda" or device.startswith("cuda:") and device[5:].isdigit()):
        raise ArgumentError(f"compile: unknown device {device!r}: use cpu, cuda or cuda:N")


def _own_module(fusion: Any, function: str | None) -> tuple[ModuleOp, str | None]:
    """A module that belongs to the executable (parsed, or a verified clone) and the function to use."""
    if isinstance(fusion, str):
        if _looks_like_a_path(fusion):
            raise ArgumentError(
                f"compile: fusion {fusion!r} looks like a file path; pass the text, e.g. "
                "compile(open(path).read()), or a pathlib.Path"
            )
        return parse_module(fusion), function
    if isinstance(fusion, os.PathLike):
        path = Path(fusion)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ArgumentError(f"compile: cannot read {str(path)!r}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise ArgumentError(f"compile: {str(path)!r} is not UTF-8 text") from None
        return parse_module(text, str(path)), function
    if isinstance(fusion, func.FuncOp):
        parent = fusion.parent_op()
        origin: Operation = parent if isinstance(parent, ModuleOp) else fusion
        function = function or fusion.sym_name.data
    elif isinstance(fusion, ModuleOp):
        origin = fusion
    else:
        raise ArgumentError(
            "compile: fusion must be IR text (str), a pathlib.Path, a ModuleOp or a func.FuncOp, "
            f"got {type(fusion).__name__}"
        )
    verify_located(origin)
    copy = clone_located(origin)
    return (copy if isinstance(copy, ModuleOp) else ModuleOp([copy])), function


def _looks_like_a_path(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and "\n" not in stripped and (
        stripped.endswith(".mlir") or ("{" not in stripped and os.path.exists(stripped))
    )


def _is_sharded(f: func.FuncOp) -> bool:
    """Whether a fusion has sharded tensors (it then runs on torch.distributed)."""
    return is_sharded_function(f)
