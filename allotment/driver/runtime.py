"""Executables and their programs: compile once (`compiler.compile`), cache, call many times.

An `Executable` holds one fusion function. Called on tensors, it picks the
target from the inputs' device (CUDA tensors: generated Triton kernels on the
GPU; CPU tensors: the same kernels through Triton's interpreter), builds the
program for that target once (fusion-segment, fusion-allocate, host and
Triton code generation) and runs it. The fusion's types fix dtypes, ranks and
static extents, so a program is keyed by (code generator version, target,
options, function, module text): a new value of a `?` extent never recompiles.

The fusion is parsed once (`compiler.compile`), kept, and never printed and parsed
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
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from allotment.analysis.library_matmul import TILED_ENV
from allotment.analysis.split_reduction import INNER_SPLIT_ENV
from allotment.backend import launch as _launch
from allotment.backend import program_cache
from allotment.backend.cuda_graphs import GraphedProgram
from allotment.backend.host_codegen import emit_program, poison_enabled
from allotment.backend.host_runtime import check_arity
from allotment.backend.kernel_plan import CodegenError
from allotment.backend.native import replay_module
from allotment.backend.program_cache import CacheDirectoryWarning, cache_dir
from allotment.backend.replay import replayer_for
from allotment.errors import ArgumentError, CompileError, InputTypeError, RunError, first_line, is_allocation_failure
from allotment.ir import find_function
from allotment.limits import call_with_deep_stack
from allotment.passes import pipeline as passes
from allotment.passes.alloc_alias import aliased_results

TARGETS = ("cpu", "cuda")
"""Program targets: `cpu` (kernels in Triton's interpreter) and `cuda`."""


def _codegen_version() -> str:
    """A hash of the code that generates programs: part of the cache key, so that
    a changed code generator never loads a stale program from the disk cache."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for rel in sorted(("analysis", "backend", "dialects", "driver", "extents", "passes")):
        for path in sorted((root / rel).rglob("*.py")):
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
            raise_allocation_failure(e, self.target)
            raise

    def after_replay(self, args: tuple[Any, ...], answer: Any) -> tuple[torch.Tensor, ...]:
        """A call whose replay the executor declined (`answer`: `Replayer.missed`)."""
        try:
            return self.replayer.missed(args, answer)
        except RuntimeError as e:
            raise_allocation_failure(e, self.target)
            raise


def raise_allocation_failure(e: RuntimeError, target: str) -> None:
    """Raises a RunError if `e` (torch's, not an `allotment.Error`, which are RuntimeErrors
    too) says a buffer could not be allocated (else returns)."""
    if is_allocation_failure(e):
        raise RunError(f"cannot allocate a buffer of the fusion on {target}: {first_line(e)}") from None


_PROGRAMS: dict[str, Program] = {}
"""Loaded programs by cache key (this process)."""
COMPILATIONS = 0
"""Programs generated in this process (not counting loads from the disk cache)."""
_lock = threading.Lock()
_key_locks: dict[str, threading.Lock] = {}

__all__ = [
    "CODEGEN_VERSION",
    "TARGETS",
    "CacheDirectoryWarning",
    "Executable",
    "Program",
    "build_program",
    "cache_dir",
    "intercept_launches",
    "key_lock",
    "load_program",
    "program_key",
    "replay_executor",
    "run_pipeline",
]


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


def key_lock(key: str) -> threading.Lock:
    """The lock that builds the program of cache key `key` once, whatever the threads."""
    with _lock:
        return _key_locks.setdefault(key, threading.Lock())


def program_knobs() -> tuple[str, ...]:
    """The environment variables that change a generated program (the pipeline's decisions or
    the generated text): each is part of the program cache key (`program_key`), so that a
    program built under one setting is never handed out under another. ALLOT_POISON counts
    by `poison_enabled()`; the others by their text."""

    return ("ALLOT_TANH", "ALLOT_POISON", "ALLOT_ON_CHIP_ROW_BYTES", "ALLOT_STREAM_ELEMENTS", "ALLOT_SPLIT_PROGRAMS",
            *INNER_SPLIT_ENV, "ALLOT_INNER_OUTER", "ALLOT_INNER_OUTER_PROGRAMS", "ALLOT_ROW_STAGES", *TILED_ENV)


def program_key(text: str, function: str, target: str) -> str:
    """The cache key of the program of `function` in module `text` for `target`: the code
    generator's version, the target and every knob of `program_knobs`."""
    options = " ".join(f"{k}={poison_enabled() if k == 'ALLOT_POISON' else os.environ.get(k, '')}"
                       for k in program_knobs())
    return hashlib.sha256(f"{CODEGEN_VERSION}\n{target}\n{options}\n{function}\n{text}".encode()).hexdigest()[:24]


class Executable:
    """A fusion function ready to run: `exe(*inputs) -> tuple[Tensor, ...]`.

    Safe to call from many threads; the fusion IR it holds is its own copy."""

    def __init__(
        self, module: ModuleOp, function: func.FuncOp, device: str | None, cuda_graphs: bool = False,
        planning: bool = True,
    ) -> None:
        self._module = module
        self.planning = planning
        """alloc-plan reorders kernels, reuses dead inputs and packs an arena (False: program
        order, one allocation per buffer, each freed after its last use)."""
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
        self._boxed_runs: dict[bool, tuple[Program, Callable[[list[Any]], tuple[torch.Tensor, ...]], str]] = {}
        """By whether the target is CUDA (`call_boxed`'s hot path): the program, what `call_boxed`
        calls (its replayer's `call_boxed`, else its `run_boxed`) and the target."""
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
                prog = build_program(self, target)
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

    def call_boxed(self, args: list[Any]) -> tuple[torch.Tensor, ...]:
        """Runs with the inputs in a list, which it empties (AOTAutograd's boxed calling
        convention): a program with donated arguments (`alloc.donated`) then holds the only
        references to them and frees each after its last use (`run_boxed`), and so does a
        replay of a recorded call (`Replayer.call_boxed`). CUDA graphs and pinned devices
        take the ordinary call."""
        if self._hot and len(args) == self.arity:  # the hot path: a program of this device already loaded
            first = args[self._tensor_args[0]]
            loaded = self._boxed_runs.get(first.is_cuda) if isinstance(first, torch.Tensor) else None
            if loaded is not None and self.programs.get(loaded[2]) is loaded[0]:  # still the program loaded
                del first  # the program must hold the only reference
                try:
                    return loaded[1](args)
                except RuntimeError as e:
                    raise_allocation_failure(e, loaded[2])
                    raise
        if len(args) != self.arity:
            check_arity(f"@{self.function}", self.arg_names, tuple(args))
        first = next((args[i] for i in self._tensor_args if isinstance(args[i], torch.Tensor)), None)
        if self.device is not None or self.cuda_graphs or first is None:
            inputs = tuple(args)
            args.clear()
            return self(*inputs)
        cuda = first.is_cuda
        prog = self.program("cuda" if cuda else "cpu")
        del first  # the program must hold the only reference
        run_boxed = getattr(prog.module, "run_boxed", None)
        if run_boxed is None:
            inputs = tuple(args)
            args.clear()
            return prog(*inputs)
        call = prog.replayer.call_boxed if prog.replayer is not None else run_boxed
        if self._hot:
            self._boxed_runs[cuda] = (prog, call, prog.target)
        try:
            return call(args)
        except RuntimeError as e:
            raise_allocation_failure(e, prog.target)
            raise

    def _graph_program(self) -> Any:
        graphed = self._graphed
        if graphed is None:
            with self._lock:
                if self._graphed is None:
                    aliases = aliased_results(find_function(self._module, self.function))
                    self._graphed = GraphedProgram(self.program("cuda"), aliases, names=self.arg_names)
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
                key = program_key(self.text, self.function, self.key_target(target))
                entry = program_cache.read_entry(key, CODEGEN_VERSION)
                source = entry[1] if entry is not None else self.generate(target)
                self._sources[target] = source
        return source

    def key_target(self, target: str) -> str:
        """The target as the program cache keys it (an unplanned program is another program)."""
        return target if self.planning else f"{target}/unplanned"

    def generate(self, target: str) -> str:
        """Runs the passes (once per executable and target) and generates the program text for `target`."""
        with self._lock:
            allocated = self._allocated.get(target)
            if allocated is None:
                allocated = self._allocated[target] = run_pipeline(self._module, target, self.planning)
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
    stream = io.StringIO()
    call_with_deep_stack(lambda: Printer(stream=stream).print_op(module))
    return stream.getvalue()


# --------------------------------------------------------------------------- #
# passes                                                                      #
# --------------------------------------------------------------------------- #


def pipeline(target: str = "cuda", planning: bool = True) -> tuple[ModulePass, ...]:
    """The passes that turn a fusion into planned, allocated IR for `target`, in order
    (`passes.pipeline`)."""
    return tuple(passes.compile_passes(target) if planning else passes.compile_passes(target, planning))


def run_pipeline(module: ModuleOp, target: str = "cuda", planning: bool = True) -> ModuleOp:
    """The planned, allocated IR of `module` for `target` (a clone: `module` itself is
    not modified)."""
    return passes.run_pipeline(module, list(pipeline(target) if planning else pipeline(target, planning)))


# --------------------------------------------------------------------------- #
# programs: caches and loading                                                #
# --------------------------------------------------------------------------- #


def build_program(exe: Executable, target: str) -> Program:
    """The program of `exe` for `target`: from memory, from the disk cache, or generated."""
    global COMPILATIONS
    key = program_key(exe.text, exe.function, exe.key_target(target))
    with key_lock(key):
        prog = _PROGRAMS.get(key)
        if prog is not None:
            return prog
        entry = program_cache.read_entry(key, CODEGEN_VERSION)
        prog = load_entry(entry, key, target) if entry is not None else None
        if prog is None:
            source = exe.generate(target)
            try:
                path = program_cache.write_entry(key, source, CODEGEN_VERSION)
            except OSError as e:  # not even a private temporary directory could be written
                raise CompileError(f"@{exe.function}: cannot write the generated program to any file: {e}") from None
            try:
                prog = load_program(path, source, key, target)
            except Exception as e:  # a bug of the code generator, reported as such
                raise CompileError(f"@{exe.function}: the generated {target} program does not load: {e!r}") from e
            with _lock:
                COMPILATIONS += 1
        _PROGRAMS[key] = prog
        return prog


def load_entry(entry: tuple[Path, str], key: str, target: str) -> Program | None:
    """The program of a verified disk entry, or None if it does not load (it is then regenerated)."""
    path, source = entry
    try:
        return load_program(path, source, key, target)
    except Exception:  # a verified entry that does not import: regenerate it, as for any bad entry
        return None


def load_program(path: Path, source: str, key: str, target: str) -> Program:
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

        replayer = replayer_for(module)
    return Program(module, source, target, replayer)


def replay_executor() -> Any:
    """The native replay executor (`backend/native`: the C module that matches a call's whole
    signature and replays its recorded launches), or None where it cannot be built."""
    return replay_module()
