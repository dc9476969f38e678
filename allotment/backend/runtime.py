"""`allotment.compile(fusion) -> Executable`: compile once, cache, call many times.

An `Executable` holds one fusion function. Called on tensors, it picks the
target from the inputs' device (CUDA tensors: generated Triton kernels on the
GPU; CPU tensors: the same kernels through Triton's interpreter), builds the
program for that target once (fusion-segment, fusion-allocate, host and
Triton code generation) and runs it. The fusion's types fix dtypes, ranks and
static extents, so a program is keyed by (code generator version, target,
options, function, module text): a new value of a `?` extent never recompiles.

The fusion is parsed once (`compile`), kept, and never printed and parsed
again; a ModuleOp or FuncOp passed in is cloned, so the passes never modify
the caller's IR. The IR is verified after every pass.

Generated programs are cached in memory (per process) and on disk
(`program_cache`: entries are checked against the hash they were stored under
before anything in them runs; any bad entry is regenerated).

Triton's interpreter is chosen per program, not per process: a CPU program's
kernels are bound to `triton.runtime.interpreter.InterpretedFunction` and a
CUDA program's to `triton.runtime.jit.JITFunction` (`launch.bind_kernels`),
whatever `TRITON_INTERPRET` says and whether Triton was imported first.
Generating a program's source (`Executable.source`) imports no Triton and
needs no GPU.

Threads: an `Executable` may be called from many threads at once. Each
program is built once (a lock per cache key), the in-memory caches are
guarded, and launches in Triton's interpreter, which keeps global state, run
one at a time (`launch`).
"""

from __future__ import annotations

import builtins
import hashlib
import io
import linecache
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from allotment.backend import launch as _launch
from allotment.backend import program_cache
from allotment.backend.host_runtime import InputTypeError, check_arity
from allotment.backend.program_cache import CacheDirectoryWarning, cache_dir
from allotment.errors import ArgumentError, CompileError, RunError

TARGETS = ("cpu", "cuda")
"""Program targets: `cpu` (kernels in Triton's interpreter) and `cuda`."""


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


@dataclass(frozen=True)
class Program:
    """A loaded program for one target: its module and its generated source."""

    module: ModuleType
    source: str
    target: str
    replayer: Any = None
    """The `replay.Replayer` of a CUDA program whose calls may be replayed, else None."""

    def __call__(self, *args: Any) -> tuple[torch.Tensor, ...]:
        try:
            replayer = self.replayer
            if replayer is not None:
                return replayer(args)
            return self.module.run(*args)
        except RuntimeError as e:  # torch.cuda.OutOfMemoryError included
            _raise_allocation_failure(e, self.target)
            raise

    def after_replay(self, args: tuple[Any, ...], answer: Any) -> tuple[torch.Tensor, ...]:
        """A call whose replay the executor declined (`answer`: `Replayer.missed`)."""
        try:
            return self.replayer.missed(args, answer)
        except RuntimeError as e:
            _raise_allocation_failure(e, self.target)
            raise


_ALLOCATION_FAILURES = ("can't allocate memory", "Storage size calculation overflowed", "out of memory")
"""What torch says when a buffer cannot be allocated (too large for memory or for its size type)."""


def _raise_allocation_failure(e: RuntimeError, target: str) -> None:
    """Raises a RunError if `e` says a buffer could not be allocated (else returns)."""
    if any(m in str(e) for m in _ALLOCATION_FAILURES):
        raise RunError(f"cannot allocate a buffer of the fusion on {target}: {_first_line(e)}") from None


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


_PROGRAMS: dict[str, Program] = {}
"""Loaded programs by cache key (this process)."""
COMPILATIONS = 0
"""Programs generated in this process (not counting loads from the disk cache)."""
_lock = threading.Lock()
_key_locks: dict[str, threading.Lock] = {}

__all__ = ["TARGETS", "CacheDirectoryWarning", "Executable", "Program", "cache_dir", "compile", "intercept_launches"]


def interpreting(target: str = "cpu") -> bool:
    """Whether the kernels of `target` run in Triton's interpreter (the CPU target's always do)."""
    return target == "cpu"


@contextmanager
def intercept_launches(hook: Callable[..., None]) -> Iterator[None]:
    """Within this context (this thread only), every Triton kernel launch of a generated
    program calls `hook(kernel, grid, args, constexprs, num_warps)` instead of running the kernel
    (e.g. `allot-run --bench` times the host program alone)."""
    with _launch.intercepted(hook):
        yield


def _key_lock(key: str) -> threading.Lock:
    with _lock:
        return _key_locks.setdefault(key, threading.Lock())


def _program_key(text: str, function: str, target: str) -> str:
    from allotment.analysis.library_matmul import TILED_ENV
    from allotment.backend.host_codegen import poison_enabled
    from allotment.passes.split_reduction import INNER_SPLIT_ENV

    options = (f"tanh={os.environ.get('ALLOT_TANH', 'exp')} poison={poison_enabled()} "
               f"row={os.environ.get('ALLOT_ON_CHIP_ROW_BYTES', '')}:{os.environ.get('ALLOT_STREAM_ELEMENTS', '')} "
               f"split={os.environ.get('ALLOT_SPLIT_PROGRAMS', '')} "
               f"inner_split={':'.join(os.environ.get(k, '') for k in INNER_SPLIT_ENV)} "
               f"inner_outer={os.environ.get('ALLOT_INNER_OUTER', '')}:{os.environ.get('ALLOT_INNER_OUTER_PROGRAMS', '')} "
               f"stages={os.environ.get('ALLOT_ROW_STAGES', '')} "
               f"tiled_matmul={':'.join(os.environ.get(k, '') for k in TILED_ENV)}")
    return hashlib.sha256(f"{CODEGEN_VERSION}\n{target}\n{options}\n{function}\n{text}".encode()).hexdigest()[:24]


class Executable:
    """A fusion function ready to run: `exe(*inputs) -> tuple[Tensor, ...]`.

    Safe to call from many threads; the fusion IR it holds is its own copy."""

    def __init__(
        self, module: ModuleOp, function: func.FuncOp, device: str | None, cuda_graphs: bool = False
    ) -> None:
        self._module = module
        self.cuda_graphs = cuda_graphs
        """CUDA calls replay a captured graph per input signature (`backend/cuda_graphs.py`)."""
        self._graphed: Any = None
        self._allocated: dict[str, ModuleOp] = {}
        """The planned IR, by target (placement depends on the target's capacity)."""
        self.function = function.sym_name.data
        self.signature = _signature(function)
        self.arg_names = tuple(a.name_hint or f"arg{i}" for i, a in enumerate(function.args))
        self.arity = len(function.args)
        self._tensor_args = tuple(i for i, a in enumerate(function.args) if isinstance(a.type, TensorType))
        self.device = device
        self._hot = device is None and not cuda_graphs and bool(self._tensor_args)
        """Calls pick their program from the first tensor input alone (`__call__`)."""
        self.text = _module_text(module)
        self.programs: dict[str, Program] = {}
        """Loaded programs by target."""
        self.compilations = 0
        """Programs built for this executable (generated, or loaded from the disk cache)."""
        self._sources: dict[str, str] = {}
        self._lock = threading.RLock()
        self._replay: tuple[Any, Any] | None = None
        """(the executor's `call`, the table) of the CUDA program's `Replayer`, once it is loaded."""

    def __repr__(self) -> str:
        targets = ", ".join(sorted(self.programs))
        device = f" device={self.device}" if self.device is not None else ""
        return f"<allotment.Executable @{self.function}({self.signature}){device} targets=[{targets}]>"

    def target_for(self, inputs: tuple[Any, ...]) -> str:
        """The target that runs `inputs`: the pinned device's, else the first tensor's, else cuda if available."""
        if self.device is not None:
            return "cuda" if self.device.startswith("cuda") else "cpu"
        for x in inputs:
            if isinstance(x, torch.Tensor):
                return "cuda" if x.is_cuda else "cpu"
        return "cuda" if torch.cuda.is_available() else "cpu"

    def program(self, target: str) -> Program:
        """The loaded program for `target`, built on first use (once, whatever the threads)."""
        prog = self.programs.get(target)
        if prog is not None:
            return prog
        _check_target(target, "Executable.program")
        with self._lock:
            prog = self.programs.get(target)
            if prog is None:
                prog = _build_program(self, target)
                self.programs[target] = prog
                self.compilations += 1
                if prog.replayer is not None and self._hot:
                    self._replay = (prog.replayer._call, prog.replayer.table)
        return prog

    def __call__(self, *inputs: Any) -> tuple[torch.Tensor, ...]:
        replay = self._replay
        if replay is not None:  # a recorded call (backend/replay.py): the executor matches the whole signature
            out = replay[0](replay[1], inputs)
            if type(out) is tuple:
                return out
        if len(inputs) != self.arity:
            check_arity(f"@{self.function}", self.arg_names, inputs)
        if self._hot and type(first := inputs[self._tensor_args[0]]) is torch.Tensor:
            # the hot path: no pinned device, no graphs, a plain tensor first (the program checks the rest)
            if replay is not None and first.is_cuda:  # not replayed: record it, or run the program
                return self.programs["cuda"].after_replay(inputs, out)
            return (self.programs.get("cuda" if first.is_cuda else "cpu")
                    or self.program("cuda" if first.is_cuda else "cpu"))(*inputs)
        first = None
        for i in self._tensor_args:
            x = inputs[i]
            if type(x) is not torch.Tensor and not isinstance(x, torch.Tensor):
                raise InputTypeError(f"input {self.arg_names[i]}: expected a tensor, got {type(x).__name__}")
            if first is None:
                first = x
        if self.device is None and first is not None and not self.cuda_graphs:  # the hot path: no pinned device
            target = "cuda" if first.is_cuda else "cpu"
            return (self.programs.get(target) or self.program(target))(*inputs)
        target = self.target_for(inputs)
        if target == "cuda" and not torch.cuda.is_available():
            raise RunError(f"@{self.function}: CUDA is not available on this machine (device {self.device})")
        if self.device is not None:
            dev = torch.device(self.device)
            inputs = tuple(x.to(dev) if isinstance(x, torch.Tensor) else x for x in inputs)
        if self.cuda_graphs and target == "cuda":
            return self._graph_program()(*inputs)
        return self.program(target)(*inputs)

    def _graph_program(self) -> Any:
        graphed = self._graphed
        if graphed is None:
            from allotment.backend.cuda_graphs import GraphedProgram
            from allotment.ir import find_function
            from allotment.passes.alloc_alias import aliased_results

            with self._lock:
                if self._graphed is None:
                    aliases = aliased_results(find_function(self._module, self.function))
                    self._graphed = GraphedProgram(self.program("cuda"), aliases)
                graphed = self._graphed
        return graphed

    def source(self, target: str | None = None) -> str:
        """The generated host program (with its Triton kernels) for `target` ("cpu" or "cuda";
        default: where this executable runs). Generates it without loading or running it: the
        CUDA program's source needs no GPU."""
        if target is None:
            target = self.target_for(())
        _check_target(target, "Executable.source")
        prog = self.programs.get(target)
        if prog is not None:
            return prog.source
        with self._lock:
            source = self._sources.get(target)
            if source is None:
                key = _program_key(self.text, self.function, target)
                entry = program_cache.read_entry(key, CODEGEN_VERSION)
                source = entry[1] if entry is not None else self.generate(target)
                self._sources[target] = source
        return source

    def generate(self, target: str) -> str:
        """Runs the passes (once per executable and target) and generates the program text for `target`."""
        from allotment.backend.host_codegen import emit_program
        from allotment.backend.kernel_plan import CodegenError
        from allotment.ir import find_function

        with self._lock:
            allocated = self._allocated.get(target)
            if allocated is None:
                allocated = self._allocated[target] = run_pipeline(self._module, target)
        try:
            return emit_program(find_function(allocated, self.function), target).source
        except CodegenError as e:
            raise CompileError(f"@{self.function}: {e}") from None


def _check_target(target: Any, where: str) -> None:
    if not isinstance(target, str) or target not in TARGETS:
        raise ArgumentError(f"{where}: unknown target {target!r}: the targets are {', '.join(TARGETS)}")


def _signature(f: func.FuncOp) -> str:
    names = [a.name_hint or f"arg{i}" for i, a in enumerate(f.args)]
    return ", ".join(f"{n}: {t}" for n, t in zip(names, f.function_type.inputs.data, strict=True))


def _module_text(module: ModuleOp) -> str:
    """The module printed (on a deep stack: xDSL prints nested regions recursively)."""
    from allotment.limits import call_with_deep_stack

    stream = io.StringIO()
    call_with_deep_stack(lambda: Printer(stream=stream).print_op(module))
    return stream.getvalue()


# --------------------------------------------------------------------------- #
# compile                                                                     #
# --------------------------------------------------------------------------- #


def compile(
    fusion: str | os.PathLike[str] | ModuleOp | func.FuncOp,
    *,
    function: str | None = None,
    device: str | None = None,
    cuda_graphs: bool = False,
) -> Executable:
    """Prepares a fusion for execution (code is generated on the first call per target).

    `fusion` is IR text, a `pathlib.Path` to a .mlir file, a `ModuleOp` or a `func.FuncOp`
    (cloned: the caller's IR is never modified); `function` picks a function of a module
    (default: the first); `device` pins where it runs ("cpu", "cuda", "cuda:N"; default:
    where the inputs are). `cuda_graphs=True`: CUDA calls capture one CUDA graph per input
    signature and replay it (outputs are reused by the next call with the same signature:
    see `backend/cuda_graphs.py`). Raises ArgumentError for arguments of the wrong type or value,
    ParseError/VerifyError for bad IR, CompileError for a fusion that cannot run.
    """
    from allotment.ir import find_function

    if function is not None and not isinstance(function, str):
        raise ArgumentError(f"compile: function must be a str (a function name), got {type(function).__name__}")
    _check_device(device)
    module, function = _own_module(fusion, function)
    f = find_function(module, function)
    if f.is_declaration:
        raise ArgumentError(f"compile: @{f.sym_name.data} is a declaration; a fusion needs a body to compile")
    from allotment.passes.complex_parts import has_complex

    if has_complex(f):
        raise CompileError(
            f"compile: @{f.sym_name.data} has complex values, which the kernels hold as their real "
            "parts: split it first (allotment.passes.complex_parts.split_complex, as "
            "FusionDefinition.execute does) and pass the parts")
    if _is_sharded(f):  # one program per rank, collectives through torch.distributed
        from allotment.backend.distributed import DistributedExecutable

        return DistributedExecutable(module, f, device)
    if not isinstance(cuda_graphs, bool):
        raise ArgumentError(f"compile: cuda_graphs must be True or False, got {cuda_graphs!r}")
    return Executable(module, f, device, cuda_graphs)


def _check_device(device: Any) -> None:
    if device is None:
        return
    if not isinstance(device, str):
        raise ArgumentError(f"compile: device must be a str (cpu, cuda or cuda:N), got {type(device).__name__}")
    if device != "cpu" and not (device == "cuda" or device.startswith("cuda:") and device[5:].isdigit()):
        raise ArgumentError(f"compile: unknown device {device!r}: use cpu, cuda or cuda:N")


def _own_module(fusion: Any, function: str | None) -> tuple[ModuleOp, str | None]:
    """A module that belongs to the executable (parsed, or a verified clone) and the function to use."""
    from allotment.diagnostics import clone_located, verify_located
    from allotment.ir import parse_module

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
    from allotment.passes.sharding_propagation import is_sharded_function

    return is_sharded_function(f)


# --------------------------------------------------------------------------- #
# passes                                                                      #
# --------------------------------------------------------------------------- #


def pipeline(target: str = "cuda") -> tuple[ModulePass, ...]:
    """The passes that turn a fusion into planned, allocated IR for `target`, in order
    (`passes.pipeline`)."""
    from allotment.passes.pipeline import compile_passes

    return tuple(compile_passes(target))


def run_pipeline(module: ModuleOp, target: str = "cuda") -> ModuleOp:
    """The planned, allocated IR of `module` for `target` (a clone: `module` itself is
    not modified)."""
    from allotment.passes import pipeline as passes

    return passes.run_pipeline(module, list(pipeline(target)))


# --------------------------------------------------------------------------- #
# programs: caches and loading                                                #
# --------------------------------------------------------------------------- #


def _build_program(exe: Executable, target: str) -> Program:
    """The program of `exe` for `target`: from memory, from the disk cache, or generated."""
    global COMPILATIONS
    key = _program_key(exe.text, exe.function, target)
    with _key_lock(key):
        prog = _PROGRAMS.get(key)
        if prog is not None:
            return prog
        entry = program_cache.read_entry(key, CODEGEN_VERSION)
        prog = _load_entry(entry, key, target) if entry is not None else None
        if prog is None:
            source = exe.generate(target)
            try:
                path = program_cache.write_entry(key, source, CODEGEN_VERSION)
            except OSError as e:  # not even a private temporary directory could be written
                raise CompileError(f"@{exe.function}: cannot write the generated program to any file: {e}") from None
            try:
                prog = _load(path, source, key, target)
            except Exception as e:  # a bug of the code generator, reported as such
                raise CompileError(f"@{exe.function}: the generated {target} program does not load: {e!r}") from e
            with _lock:
                COMPILATIONS += 1
        _PROGRAMS[key] = prog
        return prog


def _load_entry(entry: tuple[Path, str], key: str, target: str) -> Program | None:
    """The program of a verified disk entry, or None if it does not load (it is then regenerated)."""
    path, source = entry
    try:
        return _load(path, source, key, target)
    except Exception:  # a verified entry that does not import: regenerate it, as for any bad entry
        return None


def _load(path: Path, source: str, key: str, target: str) -> Program:
    """Executes the verified `source` as the module stored at `path`.

    What runs is `source`, not what the file holds now: the file's text is put in
    `linecache` (where `inspect`, and so Triton, reads kernel sources) from
    `source` itself, and the kernels are bound to their target before returning.
    The module is not registered in `sys.modules` (nothing imports it by name), so
    that threads loading programs never see one half-executed."""
    text = program_cache.entry_text(key, source, CODEGEN_VERSION)
    filename = str(path)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    module = ModuleType(f"allotment_program_{key}")
    module.__file__ = filename
    exec(builtins.compile(text, filename, "exec"), module.__dict__)  # noqa: S102 (verified generated code)
    _launch.bind_kernels(module.__dict__, target)
    replayer = None
    if target == "cuda":
        from allotment.backend.replay import replayer_for

        replayer = replayer_for(module)
    return Program(module, source, target, replayer)
