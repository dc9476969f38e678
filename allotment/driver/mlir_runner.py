"""Running fusions through upstream MLIR on the CPU: `alloc-to-mlir`, `mlir-opt`, `mlir-runner`.

`lower(text)` plans a fusion with the compile pipeline (CPU capacity model) and
lowers it with `alloc-to-mlir`: upstream IR, as text. `run(text, inputs)` runs it:
it appends a `main` that holds the torch inputs as (writable) `memref.global`s
with their exact bytes, calls the fusion, and prints every output and every input
afterwards bit for bit (`printMemrefI32`/`I64` of the bits, floats through f32);
`mlir-opt` lowers the whole module to the LLVM dialect with `LOWER_PIPELINE` and
`mlir-runner` runs it. The outputs come back as torch tensors; an input that an
in-place output (`fusion.alias_input`) overwrote is updated in the caller's tensor,
and no other input is touched. `run_many` runs many fusions in one `mlir-opt` and one
`mlir-runner` call (CI cost), falling back to one call per fusion when one fails.

The tools are found on PATH or in /usr/lib/llvm-22/bin (`find_tool`); without
them `MLIRToolsMissing` says how to install them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from allotment import errors
from allotment.dtypes import ir_name

TOOL_DIRS = ("/usr/lib/llvm-22/bin",)
INSTALL_HINT = (
    "the MLIR 22 tools (mlir-opt, mlir-runner) are not installed: on Debian or Ubuntu run "
    "`apt-get install -y mlir-22-tools` as root (`make mlir-tools` does it), or put a directory "
    "holding mlir-opt and mlir-runner of LLVM 22 on PATH"
)

LOWER_PIPELINE = (
    "--convert-linalg-to-loops",
    "--convert-scf-to-cf",
    "--arith-expand",
    "--convert-math-to-funcs=convert-ctlz=false",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--expand-strided-metadata",
    "--lower-affine",
    "--finalize-memref-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-cf-to-llvm",
    "--convert-func-to-llvm",
    "--convert-index-to-llvm",
    "--reconcile-unrealized-casts",
)
"""The `mlir-opt` flags that lower `alloc-to-mlir`'s output to the LLVM dialect (docs/mlir.md)."""


class MLIRToolsMissing(errors.Error):
    """mlir-opt or mlir-runner (LLVM 22) is not installed."""


class MLIRRunError(errors.RunError):
    """mlir-opt or mlir-runner failed on a lowered program."""


def find_tool(name: str) -> str | None:
    """The path of an MLIR tool: PATH first (`name`, then `name-22`), then /usr/lib/llvm-22/bin."""
    for candidate in (name, f"{name}-22"):
        found = shutil.which(candidate)
        if found:
            return found
    for d in TOOL_DIRS:
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return None


def runner_libraries() -> list[str]:
    """The runner utility libraries next to the tools (printMemref*)."""
    tool = find_tool("mlir-runner")
    if tool is None:
        return []
    libdir = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(tool))), "lib")
    out = []
    for stem in ("libmlir_runner_utils", "libmlir_c_runner_utils"):
        names = sorted(f for f in os.listdir(libdir) if f.startswith(stem + ".so")) if os.path.isdir(libdir) else []
        if names:
            out.append(os.path.join(libdir, names[0]))
    return out


def tools() -> tuple[str, str]:
    """(mlir-opt, mlir-runner), or MLIRToolsMissing."""
    opt, runner = find_tool("mlir-opt"), find_tool("mlir-runner")
    if opt is None or runner is None or len(runner_libraries()) < 2:
        raise MLIRToolsMissing(INSTALL_HINT)
    return opt, runner


def available() -> str | None:
    """None when the tools are there, else the reason they are not (for pytest skips)."""
    try:
        tools()
    except MLIRToolsMissing as e:
        return str(e)
    return None


# --------------------------------------------------------------------------- #
# Lowering                                                                    #
# --------------------------------------------------------------------------- #


def lower_module(text: str, arena_always: bool = False, then: Sequence[ModulePass] = ()) -> ModuleOp:
    """The fusion planned (the compile pipeline, CPU capacity model; with `arena_always`,
    transient buffers always packed into an arena) and lowered by `alloc-to-mlir`: a
    module of upstream dialects. `then`: passes applied after the lowering (for example
    xDSL's `MLIROptPass`, an upstream mlir-opt pipeline parsed back), with every xDSL
    dialect loaded."""
    from allotment.ir import parse_module
    from allotment.passes.alloc_plan import AllocPlanPass
    from allotment.passes.alloc_to_mlir import AllocToMLIRPass
    from allotment.passes.pipeline import compile_passes, run_pipeline

    passes = compile_passes("cpu")
    if arena_always:
        passes = [AllocPlanPass(arena_always=True) if isinstance(p, AllocPlanPass) else p for p in passes]
    module = run_pipeline(parse_module(text), [*passes, AllocToMLIRPass()])
    if then:
        from xdsl.context import Context
        from xdsl.dialects import get_all_dialects

        ctx = Context()
        for name, factory in get_all_dialects().items():
            ctx.register_dialect(name, factory)
        for p in then:
            p.apply(ctx, module)
    return module


def lower(text: str, arena_always: bool = False) -> str:
    """`lower_module` as text, which mlir-opt 22 parses."""
    return str(lower_module(text, arena_always))


# --------------------------------------------------------------------------- #
# A main that feeds torch inputs and prints the outputs' bits                 #
# --------------------------------------------------------------------------- #

_TORCH = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.bool: "i1",
}
_FROM = {v: k for k, v in _TORCH.items()}
_BITS = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
         torch.float64: torch.int64}


def _et(t: Attribute) -> str:
    """The element type's IR name (`dtypes.ir_name`), which the runner's inputs and outputs
    take; complex ones are split into their parts before they reach it."""
    name = ir_name(t)
    if name is None or name.startswith("complex"):
        raise errors.UnsupportedError(f"no MLIR runner support for element type {t}")
    return name


def _print_kind(et: str) -> str:
    """The integer type an element's bits are printed as."""
    return "i64" if et in ("f64", "i64") else "i32"


def _dense(x: torch.Tensor) -> str:
    flat = x.detach().contiguous().reshape(-1)
    if x.dtype == torch.bool:  # i1 has no hex form: nested lists of the tensor's shape
        def nested(v: object) -> str:
            return "[" + ", ".join(nested(e) for e in v) + "]" if isinstance(v, list) else ("true" if v else "false")

        return f"dense<{nested(x.tolist())}>"
    if x.dtype in _BITS:
        flat = flat.view(_BITS[x.dtype])
    data = flat.numpy().tobytes() if flat.numel() else b""
    return f'dense<"0x{data.hex().upper()}">'


def _memref(shape: Sequence[int], et: str) -> str:
    return "memref<" + "".join(f"{e}x" for e in shape) + et + ">"


def _dyn_strided(rank: int, et: str) -> str:
    dims = "".join("?x" for _ in range(rank))
    strides = ", ".join("?" for _ in range(rank))
    return f"memref<{dims}{et}, strided<[{strides}], offset: ?>>"


def _printer(rank: int, et: str) -> str:
    """`@__allot_print_<rank>_<et>`: copies the bits of a strided memref, row-major,
    into a flat buffer and prints it."""
    pk = _print_kind(et)
    t = _dyn_strided(rank, et)
    lines = [f"func.func private @__allot_print_{rank}_{et}(%m: {t}) {{"]
    lines.append("  %c0 = arith.constant 0 : index")
    lines.append("  %c1 = arith.constant 1 : index")
    n = "%c1"
    for d in range(rank):
        lines.append(f"  %cd{d} = arith.constant {d} : index")
        lines.append(f"  %e{d} = memref.dim %m, %cd{d} : {t}")
        lines.append(f"  %n{d} = arith.muli {n}, %e{d} : index")
        n = f"%n{d}"
    lines.append(f"  %sizes = memref.alloc() : memref<{max(rank, 1)}xi64>")
    lines.append(f"  %s_one = arith.constant {rank} : i64")
    lines.append(f"  memref.store %s_one, %sizes[%c0] : memref<{max(rank, 1)}xi64>")
    for d in range(rank):
        lines.append(f"  %s{d} = arith.index_cast %e{d} : index to i64")
        lines.append(f"  memref.store %s{d}, %sizes[%cd{d}] : memref<{max(rank, 1)}xi64>")
    lines.append(f"  %su = memref.cast %sizes : memref<{max(rank, 1)}xi64> to memref<*xi64>")
    lines.append("  func.call @printMemrefI64(%su) : (memref<*xi64>) -> ()")
    lines.append(f"  memref.dealloc %sizes : memref<{max(rank, 1)}xi64>")
    lines.append(f"  %flat = memref.alloc({n}) : memref<?x{pk}>")
    ivs = [f"%i{d}" for d in range(rank)]
    for d in range(rank):
        lines.append(f"  {'  ' * d}scf.for %i{d} = %c0 to %e{d} step %c1 {{")
    ind = "  " * (rank + 1)
    lines.append(f"{ind}%x = memref.load %m[{', '.join(ivs)}] : {t}")
    lines.append(f"{ind}%lin0 = arith.constant 0 : index")
    lin = "%lin0"
    for d in range(rank):
        lines.append(f"{ind}%l{d}a = arith.muli {lin}, %e{d} : index")
        lines.append(f"{ind}%l{d} = arith.addi %l{d}a, %i{d} : index")
        lin = f"%l{d}"
    bits = _bits_of("%x", et, pk, ind, lines)
    lines.append(f"{ind}memref.store {bits}, %flat[{lin}] : memref<?x{pk}>")
    for d in reversed(range(rank)):
        lines.append(f"  {'  ' * d}}}")
    lines.append(f"  %u = memref.cast %flat : memref<?x{pk}> to memref<*x{pk}>")
    lines.append(f"  func.call @printMemref{pk.upper()}(%u) : (memref<*x{pk}>) -> ()")
    lines.append(f"  memref.dealloc %flat : memref<?x{pk}>")
    lines.append("  func.return")
    lines.append("}")
    return "\n".join(lines)


def _bits_of(x: str, et: str, pk: str, ind: str, lines: list[str]) -> str:
    if et in ("bf16", "f16"):
        lines.append(f"{ind}%xf = arith.extf {x} : {et} to f32")
        lines.append(f"{ind}%xb = arith.bitcast %xf : f32 to i32")
        return "%xb"
    if et == "f32":
        lines.append(f"{ind}%xb = arith.bitcast {x} : f32 to i32")
        return "%xb"
    if et == "f64":
        lines.append(f"{ind}%xb = arith.bitcast {x} : f64 to i64")
        return "%xb"
    if et == pk:
        return x
    ext = "extui" if et == "i1" else "extsi"
    lines.append(f"{ind}%xb = arith.{ext} {x} : {et} to {pk}")
    return "%xb"


def _scalar_literal(x: object, et: str) -> str:
    if et in ("f32", "f64", "f16", "bf16"):
        return repr(float(x)).replace("inf", "0x7F800000") if False else f"{float(x):.17e}"
    if et == "i1":
        return "true" if x else "false"
    return str(int(x))


@dataclass
class _Case:
    name: str
    func: func.FuncOp
    inputs: list[object]
    module_text: str


def _case_main(k: int, case: _Case, printers: set[tuple[int, str]], globals_: list[str]) -> list[str]:
    """The body of main for one case: its globals, the call, the prints."""
    f = case.func
    ins, outs = f.function_type.inputs.data, f.function_type.outputs.data
    lines = []
    args = []
    for i, (t, x) in enumerate(zip(ins, case.inputs)):
        if isinstance(t, MemRefType):
            assert isinstance(x, torch.Tensor)
            et = _et(t.element_type)
            static = _memref(tuple(x.shape), et)
            g = f"@__allot_c{k}_in{i}"
            if x.numel():
                globals_.append(f'memref.global "private" {g} : {static} = {_dense(x)}')
                lines.append(f"  %c{k}_g{i} = memref.get_global {g} : {static}")
            else:
                lines.append(f"  %c{k}_g{i} = memref.alloc() : {static}")
            lines.append(f"  %c{k}_a{i} = memref.cast %c{k}_g{i} : {static} to {t}")
        else:
            et = _et(t)
            lines.append(f"  %c{k}_a{i} = arith.constant {_scalar_literal(x, et)} : {et}")
        args.append(f"%c{k}_a{i}")
    results = ", ".join(f"%c{k}_r{j}" for j in range(len(outs)))
    sig = f"({', '.join(str(t) for t in ins)}) -> ({', '.join(str(t) for t in outs)})"
    call = f"func.call @{case.name}({', '.join(args)}) : {sig}"
    lines.append(f"  {results} = {call}" if outs else f"  {call}")
    for j, t in enumerate(outs):
        lines += _print_value(f"%c{k}_r{j}", t, printers)
    for i, t in enumerate(ins):
        if isinstance(t, MemRefType):
            lines += _print_value(f"%c{k}_a{i}", t, printers)
    return lines


def _print_value(v: str, t: Attribute, printers: set[tuple[int, str]]) -> list[str]:
    assert isinstance(t, MemRefType)
    rank, et = len(t.get_shape()), _et(t.element_type)
    printers.add((rank, et))
    cast = v + "_s"
    return [
        f"  {cast} = memref.cast {v} : {t} to {_dyn_strided(rank, et)}",
        f"  func.call @__allot_print_{rank}_{et}({cast}) : ({_dyn_strided(rank, et)}) -> ()",
    ]


def _program(cases: Sequence[_Case]) -> str:
    printers: set[tuple[int, str]] = set()
    globals_: list[str] = []
    body: list[str] = []
    for k, c in enumerate(cases):
        body += _case_main(k, c, printers, globals_)
    parts = ["module {"]
    parts += [c.module_text for c in cases]
    parts += globals_
    parts += [_printer(r, et) for r, et in sorted(printers)]
    parts.append("func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}")
    parts.append("func.func private @printMemrefI64(memref<*xi64>) attributes {llvm.emit_c_interface}")
    parts.append("func.func @main() {")
    parts += body
    parts.append("  func.return")
    parts.append("}")
    parts.append("}")
    return "\n".join(parts)


def _prepare(k: int, text: str, inputs: Sequence[object], arena_always: bool, then: Sequence[ModulePass]) -> _Case:
    module = lower_module(text, arena_always, then)
    funcs = [op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.body.blocks.first is not None]
    if len(funcs) != 1:
        raise errors.ArgumentError(f"expected one fusion function, found {len(funcs)}")
    f = funcs[0]
    name = f"__allot_case{k}_{f.sym_name.data}"
    f.sym_name = type(f.sym_name)(name)
    if len(inputs) != len(f.function_type.inputs.data):
        raise errors.ArgumentError(
            f"@{f.sym_name.data} takes {len(f.function_type.inputs.data)} inputs, got {len(inputs)}"
        )
    # the lowered function alone: every case's symbols are prefixed, so they never clash
    return _Case(name, f, list(inputs), str(f))


def _run_text(program: str, timeout: float) -> str:
    opt, runner = tools()
    libs = ",".join(runner_libraries())
    with tempfile.TemporaryDirectory(prefix="allot-mlir-") as d:
        src = os.path.join(d, "program.mlir")
        with open(src, "w") as fh:
            fh.write(program)
        lowered = subprocess.run([opt, src, *LOWER_PIPELINE], capture_output=True, text=True, timeout=timeout)
        if lowered.returncode:
            raise MLIRRunError(f"mlir-opt failed:\n{lowered.stderr.strip()[:4000]}")
        ran = subprocess.run(
            [runner, "-e", "main", "-entry-point-result=void", f"-shared-libs={libs}"],
            input=lowered.stdout, capture_output=True, text=True, timeout=timeout,
        )
        if ran.returncode:
            raise MLIRRunError(f"mlir-runner failed (status {ran.returncode}):\n{ran.stderr.strip()[-4000:]}")
        return ran.stdout


_DATA = re.compile(r"sizes = \[([^\]]*)\] strides = \[[^\]]*\] data =\s*\[(.*?)\]\s*(?=Unranked|\Z)", re.S)


def _decode(sizes: str, data: str, t: Attribute) -> torch.Tensor:
    """A tensor from a printed flat bit buffer and its printed extents."""
    et = _et(t.element_type)
    shape = [int(v) for v in sizes.replace("[", " ").replace("]", " ").replace(",", " ").split()]
    if not t.get_shape():
        shape = []  # a rank-0 value prints its rank, 0, in place of its extents
    values = [int(v) for v in data.replace("[", " ").replace("]", " ").replace(",", " ").split()]
    if 0 in shape:
        values = []  # printMemref shows one stray element of an empty buffer
    pk = torch.int64 if _print_kind(et) == "i64" else torch.int32
    bits = torch.tensor(values, dtype=pk)
    if et in ("bf16", "f16"):
        x = bits.view(torch.float32).to(_FROM[et])
    elif et == "f32":
        x = bits.view(torch.float32)
    elif et == "f64":
        x = bits.view(torch.float64)
    else:
        x = bits.to(_FROM[et])
    return x.reshape(shape)


def _parse(stdout: str, cases: Sequence[_Case]) -> list[tuple[list[torch.Tensor], list[torch.Tensor]]]:
    """Per case: (outputs, memref inputs after the call), from main's prints in order
    (each value prints its extents, then its bits)."""
    blocks = [m.group(2) for m in _DATA.finditer(stdout)]
    results = []
    pos = 0
    for c in cases:
        ins, outs = c.func.function_type.inputs.data, c.func.function_type.outputs.data
        types = [*outs, *[t for t in ins if isinstance(t, MemRefType)]]
        chunk = blocks[pos:pos + 2 * len(types)]
        if len(chunk) != 2 * len(types):
            raise MLIRRunError(f"mlir-runner printed {len(blocks)} buffers, expected more:\n{stdout[-2000:]}")
        pos += 2 * len(types)
        values = [_decode(chunk[2 * i], chunk[2 * i + 1], t) for i, t in enumerate(types)]
        results.append((values[: len(outs)], values[len(outs):]))
    return results


def run_many(
    fusions: Sequence[tuple[str, Sequence[object]]], timeout: float = 600.0, arena_always: bool = False,
    then: Sequence[ModulePass] = (),
) -> list[list[torch.Tensor] | Exception]:
    """Runs each (fusion text, inputs) through alloc-to-mlir, mlir-opt and mlir-runner,
    all in one program; returns each fusion's outputs, or the exception it raised (a
    fusion that fails alone is run alone, so that one failure names its fusion)."""
    prepared: list[_Case | Exception] = []
    for k, (text, inputs) in enumerate(fusions):
        try:
            prepared.append(_prepare(k, text, inputs, arena_always, then))
        except Exception as e:  # noqa: BLE001 (reported per fusion)
            prepared.append(e)
    good = [c for c in prepared if isinstance(c, _Case)]
    outcome: dict[str, list[torch.Tensor] | Exception] = {}
    if good:
        try:
            for c, r in zip(good, _execute(good, timeout)):
                outcome[c.name] = r
        except (MLIRRunError, subprocess.TimeoutExpired):
            if len(good) == 1:
                raise
            for c in good:
                try:
                    outcome[c.name] = _execute([c], timeout)[0]
                except (MLIRRunError, subprocess.TimeoutExpired) as e:
                    outcome[c.name] = e
    return [c if isinstance(c, Exception) else outcome[c.name] for c in prepared]


def _execute(cases: Sequence[_Case], timeout: float) -> list[list[torch.Tensor]]:
    stdout = _run_text(_program(cases), timeout)
    return [_finish(c, outs, after) for c, (outs, after) in zip(cases, _parse(stdout, cases))]


def _finish(c: _Case, outs: list[torch.Tensor], after: list[torch.Tensor]) -> list[torch.Tensor]:
    """The outputs; an input an in-place output overwrote is updated in the caller's
    tensor (and returned as that output). Any other input that changed is an error."""
    from allotment.passes.alloc_alias import ALIAS_ATTR

    f = c.func
    arg_types = f.function_type.inputs.data
    positions = [i for i, t in enumerate(arg_types) if isinstance(t, MemRefType)]
    aliased: dict[int, int] = {}
    if f.res_attrs is not None:
        for j, attrs in enumerate(f.res_attrs.data):
            a = attrs.data.get(ALIAS_ATTR)
            if a is not None:
                aliased[j] = a.value.data
    for k, i in enumerate(positions):
        x = c.inputs[i]
        if i in aliased.values():
            x.copy_(after[k])
        elif not torch.equal(after[k].view(-1).view(torch.uint8) if x.dtype != torch.bool else after[k],
                             x.contiguous().view(-1).view(torch.uint8) if x.dtype != torch.bool else x):
            raise MLIRRunError(f"@{c.name}: input #{i} was modified, though no output is in place on it")
    return [c.inputs[aliased[j]] if j in aliased else x for j, x in enumerate(outs)]


def run(
    text: str, inputs: Sequence[object], timeout: float = 600.0, arena_always: bool = False,
    then: Sequence[ModulePass] = (),
) -> list[torch.Tensor]:
    """Runs one fusion on torch inputs through mlir-opt and mlir-runner; its outputs as
    torch tensors (see the module docstring; `arena_always` and `then` as in `lower_module`)."""
    (result,) = run_many([(text, inputs)], timeout, arena_always, then)
    if isinstance(result, Exception):
        raise result
    return result
