"""`allotment.compile(fusion) -> Executable`: compile once, cache, call many times.

An `Executable` holds one fusion function. Called on tensors, it picks the
target from the inputs' device (CUDA tensors: generated Triton kernels on the
GPU; CPU tensors: the same kernels through Triton's interpreter), builds the
program for that target once (fusion-segment, fusion-allocate, host and
Triton code generation) and runs it. The fusion's types fix dtypes, ranks and
static extents, so a program is keyed by (fusion text, target, code
generator version): a new value of a `?` extent never recompiles.

Generated programs are cached in memory (per process) and on disk, under
$ALLOT_CACHE_DIR or ~/.cache/allotment, as importable Python files (Triton
needs kernel sources in real files).

Triton's interpreter must be chosen before Triton is imported: without a GPU,
importing this module sets TRITON_INTERPRET=1 unless the variable is set.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

if "triton" not in sys.modules and not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from xdsl.context import Context  # noqa: E402
from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import ModuleOp, TensorType  # noqa: E402
from xdsl.printer import Printer  # noqa: E402

from allotment.errors import CompileError  # noqa: E402

def _codegen_version() -> str:
    """A hash of the code that generates programs: part of the cache key, so that
    a changed code generator never loads a stale program from the disk cache."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for rel in sorted(("backend", "passes", "analysis", "dialects")):
        for path in sorted((root / rel).glob("*.py")):
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


CODEGEN_VERSION = _codegen_version()

_PROGRAMS: dict[str, ModuleType] = {}
COMPILATIONS = 0
"""Programs generated in this process (not counting loads from the disk cache)."""


def cache_dir() -> Path:
    root = os.environ.get("ALLOT_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "allotment"


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _module_text(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


@dataclass
class Program:
    """A compiled program for one target: its module and host source."""

    module: ModuleType
    source: str
    target: str

    def __call__(self, *args: Any) -> tuple[torch.Tensor, ...]:
        return self.module.run(*args)


@dataclass
class Executable:
    """A fusion function ready to run; `exe(*inputs) -> tuple[Tensor, ...]`."""

    text: str
    function: str
    device: str | None = None
    arity: int | None = None
    programs: dict[str, Program] = field(default_factory=dict)
    compilations: int = 0

    def target_for(self, inputs: tuple[Any, ...]) -> str:
        if self.device is not None:
            return "cuda" if self.device.startswith("cuda") else "cpu"
        for x in inputs:
            if isinstance(x, torch.Tensor):
                return "cuda" if x.is_cuda else "cpu"
        return "cuda" if torch.cuda.is_available() else "cpu"

    def program(self, target: str) -> Program:
        prog = self.programs.get(target)
        if prog is None:
            prog = build_program(self.text, self.function, target)
            self.programs[target] = prog
            self.compilations += 1
        return prog

    def __call__(self, *inputs: Any) -> tuple[torch.Tensor, ...]:
        if self.arity is not None and len(inputs) != self.arity:
            from allotment.backend.host_runtime import AllotmentRuntimeError

            raise AllotmentRuntimeError(f"@{self.function} takes {self.arity} inputs, got {len(inputs)}")
        target = self.target_for(inputs)
        if self.device is not None:
            dev = torch.device(self.device)
            inputs = tuple(x.to(dev) if isinstance(x, torch.Tensor) else x for x in inputs)
        return self.program(target)(*inputs)

    def source(self, target: str | None = None) -> str:
        """The generated host program (with its Triton kernels) for a target."""
        return self.program(target or self.target_for(())).source


def compile(
    fusion: str | ModuleOp | func.FuncOp, *, function: str | None = None, device: str | None = None
) -> Executable:
    """Prepares a fusion for execution (code is generated on the first call per target)."""
    from allotment.ir import find_function, parse_module

    if isinstance(fusion, str):
        module = parse_module(fusion)
    elif isinstance(fusion, func.FuncOp):
        parent = fusion.parent_op()
        module = parent if isinstance(parent, ModuleOp) else ModuleOp([fusion.clone()])
        function = function or fusion.sym_name.data
    else:
        module = fusion
    f = find_function(module, function)
    _check_supported(f)
    if device is not None and not (device == "cpu" or device.startswith("cuda")):
        raise CompileError(f"unknown device '{device}': use cpu or cuda")
    return Executable(_module_text(module), f.sym_name.data, device, len(f.body.block.args))


def _check_supported(f: func.FuncOp) -> None:
    for t in list(f.function_type.inputs.data) + list(f.function_type.outputs.data):
        if isinstance(t, TensorType) and not isinstance(t.encoding, type(TensorType(t.element_type, []).encoding)):
            raise CompileError(
                f"@{f.sym_name.data} has sharded tensors: running them needs the distributed backend, "
                "which does not exist yet (plan_sizes and allocate_intermediates do handle shardings)"
            )


def build_program(text: str, function: str, target: str) -> Program:
    """Generates (or loads from the caches) the program of one function for one target."""
    global COMPILATIONS
    if target == "cpu" and not interpreting():
        raise CompileError(
            "CPU tensors run through Triton's interpreter, which must be chosen before Triton is "
            "imported: set TRITON_INTERPRET=1 (on a machine with a GPU, pass CUDA tensors instead)"
        )
    if target == "cuda" and interpreting():
        raise CompileError("CUDA tensors cannot run while TRITON_INTERPRET=1 is set")
    options = os.environ.get("ALLOT_TANH", "exp")
    key = hashlib.sha256(f"{CODEGEN_VERSION}\n{target}\n{options}\n{function}\n{text}".encode()).hexdigest()[:24]
    module = _PROGRAMS.get(key)
    path = cache_dir() / f"program_{key}.py"
    if module is None:
        if not path.exists():
            source = generate_source(text, function, target)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(source)
            tmp.replace(path)
            COMPILATIONS += 1
        module = _load(path, f"allotment_program_{key}")
        _PROGRAMS[key] = module
    return Program(module, path.read_text(), target)


def generate_source(text: str, function: str, target: str) -> str:
    """fusion-segment, fusion-allocate and code generation for one function."""
    from allotment.backend.host_codegen import emit_program
    from allotment.backend.kernel_plan import CodegenError
    from allotment.ir import find_function, parse_module
    from allotment.passes.fusion_allocate import FusionAllocatePass
    from allotment.passes.fusion_segment import FusionSegmentPass

    module = parse_module(text)
    FusionSegmentPass().apply(Context(), module)
    FusionAllocatePass().apply(Context(), module)
    f = find_function(module, function)
    try:
        return emit_program(f, target).source
    except CodegenError as e:
        raise CompileError(str(e)) from None


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
