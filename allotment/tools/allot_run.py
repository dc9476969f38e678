"""`allot-run`: runs a fusion from a .mlir file on random inputs.

    allot-run FILE.mlir --shapes x=8x4096,w=4096 [--scalars eps=1e-5] [--func NAME]
              [--seed N] [--device cpu|cuda] [--check] [--bench] [--dump] [--reference]
              [--nproc N [--timeout SECONDS]]

The file is parsed and verified (errors are located, `file:line:col: error:`)
and inputs are drawn by `allotment.reference.random_inputs` on the device
(`--device`, default cuda where CUDA is available, else cpu: on the CPU the
generated Triton kernels run through Triton's interpreter, so keep shapes small).
Modes (each a function of (args, function, inputs) registered in `_MODES`;
`--check`, `--bench` and `--dump` combine, and run in that order: dump, check, bench):

- default: the fusion is compiled (`allotment.compile`) and run; one line per output:
      out0: shape=8x64 dtype=bfloat16 sum=-3.4375 abs_sum=405.1875
  with `sum` and `abs_sum` accumulated in float64 (`shape=scalar` for a 0-d result).
- `--reference`: the same lines from the reference evaluator (op by op with
  torch) instead of compiled code; it combines with no other mode.
- `--check`: compiled and reference outputs on the same inputs, one line per output:
      out0: shape=8x64 dtype=bfloat16 max_abs=0.0078125 max_rel=0.0039 tol=0.05 PASS
  tolerance (rtol = atol) by the least precise float type in the function
  (bf16 5e-2, f16 5e-3, else 1e-4; integers and bools exact; NaN equals NaN);
  exit status 1 if any output FAILs.
- `--bench`: times the compiled call and prints time per call, bandwidth
  ((bytes of inputs + outputs) / time) and host time per call. On CUDA the time
  is the kernels' (triton.testing.do_bench, CUDA events) and host time is wall
  time per call with the GPU work queued; on the CPU both are wall times, host
  time with the Triton kernels' launches skipped (the host program's own work,
  through `allotment.driver.runtime.intercept_launches`).
- `--dump`: prints the generated program (host code and its Triton kernels).
- `--nproc N`: a sharded fusion on N local ranks of torch.distributed that the
  tool starts itself (a rendezvous on a free local port; gloo on cpu, NCCL on
  cuda), every rank on its own shards of the same random inputs; each rank's
  lines are printed prefixed `[rank R]` (`out0: not on rank R` for an output on a
  mesh without it); with `--check` each rank compares its shards with the
  reference. Ranks that have not finished after `--timeout` seconds are killed
  (exit 1).

In every mode a `?` extent of a tensor argument that `--shapes` does not give is
8 (`DEFAULT_EXTENT`), and the shape chosen is said on stderr:
      allot-run: x: shape 8x64 (? extents default to 8; --shapes chooses)

On the CPU, inputs of more than 1e5 elements in all get one warning on stderr
(Triton's interpreter is slow), and what the tool is doing (compiling, running,
timing) is said on stderr: at once on a terminal, else past 20 seconds. stdout
keeps the formats above.

Every failure is one message on stderr and exit status 1 (argparse usage
errors, and `--reference` combined with another mode: 2).
"""

from __future__ import annotations

import argparse
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from allotment.errors import ArgumentError as UsageError
from allotment.tools.errors import run_reporting_errors

if TYPE_CHECKING:
    import torch
    from xdsl.dialects.func import FuncOp

    from allotment.analysis.memory_profile import MemoryProfile
    from allotment.driver.runtime import Executable

TOOL = "allot-run"
EXIT_USAGE = 2


def version_text() -> str:
    """`allot-run: Allotment V, xDSL V, torch V, Triton V` (from the installed distributions)."""
    from importlib.metadata import PackageNotFoundError, version

    from allotment import __version__

    def of(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "not installed"

    return f"{TOOL}: Allotment {__version__}, xDSL {of('xdsl')}, torch {of('torch')}, Triton {of('triton')}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=TOOL,
        description="Run a fusion from a .mlir file on random inputs.",
    )
    p.add_argument("file", metavar="FILE.mlir", help="the fusion to run")
    p.add_argument("--version", action="version", version=version_text(),
                   help="print the versions of Allotment, xDSL, torch and Triton")
    p.add_argument(
        "--reference",
        action="store_true",
        help="run on the reference evaluator (op by op with torch) instead of compiling",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="also run the reference evaluator and compare each output (exit 1 on a mismatch)",
    )
    p.add_argument(
        "--bench",
        action="store_true",
        help="time the compiled call: time per call, bandwidth, host time per call",
    )
    p.add_argument(
        "--dump",
        action="store_true",
        help="print the generated program (host code and Triton kernels)",
    )
    p.add_argument(
        "--memory-report",
        action="store_true",
        help="print the memory plan for these shapes (each buffer's size, bytes, placement and live "
        "range, then planned peak, lower bound and bytes without reuse); nothing is run",
    )
    p.add_argument(
        "--memory-plot",
        metavar="FILE.png",
        help="draw the plan's timeline (one bar per buffer, the peak marked) with matplotlib; nothing is run",
    )
    p.add_argument(
        "--shapes",
        action="append",
        default=[],
        metavar="NAME=AxB,...",
        help="shapes of tensor arguments (e.g. x=8x4096,w=4096: extents separated by x, "
        "arguments by a comma; a 0-d tensor is NAME=); a ? extent not given is 8; repeatable",
    )
    p.add_argument(
        "--scalars",
        action="append",
        default=[],
        metavar="NAME=VALUE,...",
        help="values of scalar arguments (e.g. eps=1e-5,n=4,flag=true); others default "
        "to 1.0, 1 or true; repeatable",
    )
    p.add_argument(
        "--backend",
        choices=["triton", "mlir"],
        default="triton",
        help="triton (default): the generated host program and Triton kernels; mlir: the plan lowered "
        "by alloc-to-mlir, run on the CPU by mlir-opt 22 and mlir-runner (docs/mlir.md; --dump prints "
        "the lowered MLIR)",
    )
    p.add_argument("--func", metavar="NAME", help="the function to run (default: the first)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs, 0 to 2**64-1 (default 0)")
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default=None,
        help="where inputs are made and the function runs (default: cuda if available, else cpu)",
    )
    p.add_argument(
        "--nproc",
        type=int,
        metavar="N",
        help="run a sharded fusion on N local ranks of torch.distributed (gloo on cpu, NCCL on cuda), "
        "each on its own shards; with --check each rank compares its shards with the reference",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="with --nproc: fail if the ranks have not all finished by then (default 300)",
    )
    return p


def _seed(text: str) -> int:
    """`--seed`: an integer a torch generator takes (0 to 2**64 - 1), else a usage error."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{seed} is not between 0 and 2**64 - 1")
    return seed


DEFAULT_EXTENT = 8
"""A `?` extent of a tensor argument that --shapes does not give, in every mode."""


def default_shapes(fn: FuncOp, shapes: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """`shapes` and, for each tensor argument with `?` extents that it does not name, the
    argument's type with each `?` replaced by `DEFAULT_EXTENT` (said on stderr)."""
    from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

    shapes = dict(shapes)
    for a in fn.args:
        name = a.name_hint or ""
        if isinstance(a.type, TensorType) and name and name not in shapes and DYNAMIC_INDEX in a.type.get_shape():
            shapes[name] = tuple(DEFAULT_EXTENT if e == DYNAMIC_INDEX else e for e in a.type.get_shape())
            print(f"{TOOL}: {name}: shape {'x'.join(map(str, shapes[name]))} (? extents default to "
                  f"{DEFAULT_EXTENT}; --shapes chooses)", file=sys.stderr)
    return shapes


def run_distributed(args: argparse.Namespace, fn: FuncOp, shapes: dict, scalars: dict) -> int:
    """`--nproc N`: the fusion on N local ranks (`backend.launcher`, `tools.distributed_check`);
    prints each rank's lines, prefixed `[rank R]`; exit status 1 if a rank's check fails."""
    from allotment.backend.launcher import launch
    from allotment.passes.sharding_propagation import is_sharded_function
    from allotment.tools.distributed_check import run_rank

    if args.nproc < 1:
        raise UsageError(f"--nproc must be at least 1, got {args.nproc}")
    if not is_sharded_function(fn):
        raise UsageError(f"--nproc: @{fn.sym_name.data} has no sharded tensor; run it without --nproc")
    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    device = args.device.type
    backend = "nccl" if device == "cuda" else "gloo"
    reports = launch(
        run_rank, args.nproc, (text, fn.sym_name.data, shapes, scalars, args.seed, bool(args.check), device),
        timeout=args.timeout, backend=backend,
    )
    print(f"@{fn.sym_name.data} on {args.nproc} ranks ({backend})")
    for r in reports:
        for line in r.lines:
            print(f"[rank {r.rank}] {line}")
    return 0 if all(r.passed for r in reports) else 1


def _assignments(items: Sequence[str], option: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            name, eq, value = part.partition("=")
            if not eq or not name.strip():
                hint = ""
                if option == "--shapes" and out and not eq and part.strip().replace("x", "").isdigit():
                    prev, extents = out[-1]
                    hint = (f": extents are separated by 'x', arguments by ',' "
                            f"(did you mean {prev}={extents}x{part.strip()}?)")
                raise UsageError(f"{option}: expected NAME=VALUE, got {part!r}{hint}")
            out.append((name.strip().removeprefix("%"), value.strip()))
    seen: set[str] = set()
    for name, _ in out:
        if name in seen:
            raise UsageError(f"{option}: {name} is given more than once")
        seen.add(name)
    return out


def parse_shapes(items: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """`["x=8x4096,w=4096"]` -> `{"x": (8, 4096), "w": (4096,)}`."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name, text in _assignments(items, "--shapes"):
        try:
            extents = tuple(int(e) for e in text.split("x")) if text else ()
        except ValueError:
            extents = (-1,)
        if any(e < 0 for e in extents):
            raise UsageError(
                f"--shapes: cannot read the shape {text!r} of {name}: expected "
                "non-negative extents separated by 'x' (e.g. 8x4096)"
            )
        shapes[name] = extents
    return shapes


def _scalar(name: str, text: str) -> int | float | bool:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    raise UsageError(f"--scalars: cannot read the value {text!r} of {name}: expected a number, true or false")


def parse_scalars(items: Sequence[str]) -> dict[str, int | float | bool]:
    """`["eps=1e-5,n=4"]` -> `{"eps": 1e-05, "n": 4}`."""
    return {name: _scalar(name, text) for name, text in _assignments(items, "--scalars")}


def resolve_device(name: str | None) -> torch.device:
    import torch

    if name is None:
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: CUDA is not available on this machine")
    return torch.device(name)


def describe_output(name: str, t: torch.Tensor) -> str:
    """`out0: shape=8x64 dtype=bfloat16 sum=... abs_sum=...`, sums in float64."""
    import torch

    shape = "x".join(str(e) for e in t.shape) or "scalar"
    dtype = str(t.dtype).removeprefix("torch.")
    values = t.detach().to(device="cpu", dtype=torch.float64)
    total = values.sum().item()
    abs_total = values.abs().sum().item()
    return f"{name}: shape={shape} dtype={dtype} sum={total!r} abs_sum={abs_total!r}"


def run_reference(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    from allotment.reference import evaluate

    outputs = evaluate(fn, inputs, device=args.device)
    for i, out in enumerate(outputs):
        print(describe_output(f"out{i}", out))
    return 0


PROGRESS_AFTER_S = 20.0
"""On a stderr that is not a terminal, what the tool is doing is said only past this many seconds."""
LARGE_FOR_INTERPRETER = 100_000
"""Input elements (in all) above which a CPU run warns that Triton's interpreter will be slow."""


@contextmanager
def _announce(message: str) -> Iterator[None]:
    """Says `message` on stderr: at once on a terminal, else only once the work has taken
    PROGRESS_AFTER_S seconds (stdout is never touched)."""
    isatty = getattr(sys.stderr, "isatty", None)
    if isatty is not None and isatty():
        print(f"{TOOL}: {message}", file=sys.stderr, flush=True)
        yield
        return
    stderr = sys.stderr
    timer = threading.Timer(PROGRESS_AFTER_S, lambda: print(f"{TOOL}: {message}", file=stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _warn_if_large(inputs: list, device: torch.device) -> None:
    """One warning on stderr when CPU inputs are large for Triton's interpreter."""
    import torch

    elements = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
    if device.type == "cpu" and elements > LARGE_FOR_INTERPRETER:
        print(
            f"{TOOL}: warning: {elements} input elements on the CPU, where kernels run in Triton's "
            "interpreter (about a thousand times slower than a GPU): this will take long "
            "(use smaller --shapes, or --device cuda)",
            file=sys.stderr,
            flush=True,
        )


def _executable(args: argparse.Namespace, fn: FuncOp, load: bool = True) -> Executable:
    """The compiled fusion (once per run of the tool), its program loaded for the device if `load`."""
    if getattr(args, "executable", None) is None:
        import allotment

        args.executable = allotment.compile(fn, function=fn.sym_name.data, device=args.device.type)
    exe = args.executable
    if load and args.device.type not in exe.programs:
        where = "cpu (Triton interpreter)" if args.device.type == "cpu" else args.device.type
        with _announce(f"compiling @{fn.sym_name.data} for {where}..."):
            exe.program(args.device.type)
    return exe


def _run_compiled_once(args: argparse.Namespace, fn: FuncOp, inputs: list) -> tuple[torch.Tensor, ...]:
    """The compiled fusion's outputs on `inputs` (said on stderr if a CPU run takes long)."""
    if args.backend == "mlir":
        from allotment.driver import mlir_runner

        with _announce(f"running @{fn.sym_name.data} through mlir-opt and mlir-runner..."):
            return tuple(mlir_runner.run(str(fn), inputs))
    exe = _executable(args, fn)
    if args.device.type != "cpu":
        return exe(*inputs)
    with _announce(f"running @{fn.sym_name.data} on cpu (Triton interpreter)..."):
        return exe(*inputs)


def run_compiled(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    outputs = _run_compiled_once(args, fn, inputs)
    for i, out in enumerate(outputs):
        print(describe_output(f"out{i}", out))
    return 0


def run_dump(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    if args.backend == "mlir":
        from allotment.driver import mlir_runner

        print(mlir_runner.lower(str(fn)))
        return 0
    print(_executable(args, fn, load=False).source(args.device.type))
    return 0


def run_check(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    from allotment.reference import evaluate
    from allotment.tools.output_check import compare_output, tolerance

    expected = evaluate(fn, inputs, device=args.device)
    actual = _run_compiled_once(args, fn, inputs)
    tol = tolerance(fn)
    failed = 0
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        ok, line = compare_output(f"out{i}", a, e, tol)
        print(line)
        failed += not ok
    if failed:
        print(f"{TOOL}: {failed} of {len(expected)} outputs differ from the reference", file=sys.stderr)
    return 1 if failed else 0


def _bytes(values) -> int:
    import torch

    return sum(x.numel() * x.element_size() for x in values if isinstance(x, torch.Tensor))


def _wall_per_call(call, budget_s: float = 1.0, min_calls: int = 3, max_calls: int = 10000) -> float:
    """Seconds per call, repeating for about `budget_s` (after one warm-up call)."""
    import time

    call()
    t0 = time.perf_counter()
    call()
    one = max(time.perf_counter() - t0, 1e-9)
    n = max(min_calls, min(max_calls, int(budget_s / one)))
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t0) / n


def run_bench(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    import torch

    exe = _executable(args, fn)
    outputs = _run_compiled_once(args, fn, inputs)
    nbytes = _bytes(inputs) + _bytes(outputs)
    if args.device.type == "cuda":
        import triton.testing

        kernel_s = triton.testing.do_bench(lambda: exe(*inputs)) * 1e-3

        def queued() -> None:
            exe(*inputs)

        host_s = _wall_per_call(queued)
        torch.cuda.synchronize()
        what, host_what = "kernels, CUDA events", "wall, GPU work queued"
    else:
        from allotment.driver.runtime import intercept_launches

        with _announce(f"timing @{fn.sym_name.data} on cpu (Triton interpreter)..."):
            kernel_s = _wall_per_call(lambda: exe(*inputs))
        skipped: list[int] = []
        with intercept_launches(lambda *a: skipped.append(1)):  # the host program alone
            host_s = _wall_per_call(lambda: exe(*inputs))
        what = "wall, kernels in Triton's interpreter"
        host_what = "wall, kernel launches skipped" if skipped else "wall"
    print(f"time per call: {kernel_s * 1e6:.1f} us ({what})")
    print(f"bandwidth: {nbytes / kernel_s / 1e9:.4g} GB/s ({nbytes} bytes of inputs and outputs)")
    print(f"host time per call: {host_s * 1e6:.1f} us ({host_what})")
    return 0


def _require_memory(args: argparse.Namespace, fn: FuncOp, modes: list[Mode]) -> None:
    """Refuses (`memory_guard.require_fits`) a run that needs more CPU memory than the
    machine has, before its inputs are drawn (a GPU run: the inputs drawn on the CPU). Where
    the fusion cannot be planned at these shapes, the run itself reports why; nothing is
    refused here (the guard is a lower bound of what the run needs, never a reason of its
    own to stop one)."""
    from allotment.tools import memory_guard

    try:
        profile = _memory_profile(args, fn)
    except Exception:  # noqa: BLE001 (bad shapes, or a fusion the planner does not take: the run says which)
        return
    shown = ", ".join(f"{k}={'x'.join(map(str, v))}" for k, v in args.parsed_shapes.items()) or "the types' shapes"
    if args.device.type != "cpu":  # only the inputs pass through the cpu, one at a time
        memory_guard.require_fits(memory_guard.staging_needs(profile), shown, advice="use smaller --shapes")
        return
    compiled = bool(set(modes) - {run_reference, run_dump, run_memory_report, run_memory_plot})
    reference = bool(set(modes) & {run_reference, run_check})
    memory_guard.require_fits(memory_guard.run_needs(profile, compiled, reference), shown)


def _memory_profile(args: argparse.Namespace, fn: FuncOp) -> MemoryProfile:
    """The plan of `fn` for `--shapes` (static extents from the types) and integer `--scalars`."""
    from allotment.allocation import memory_plan

    sizes: dict[str, tuple[int, ...] | int] = dict(args.parsed_shapes)
    sizes.update({k: v for k, v in args.parsed_scalars.items() if type(v) is int})
    return memory_plan(fn, sizes)


def run_memory_report(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    """`--memory-report`: one line per global buffer, then the summary line."""
    profile = _memory_profile(args, fn)
    kernels = ", ".join(name for _, name in profile.kernels)
    print(f"@{profile.function}: {len(profile.buffers)} buffers, {len(profile.kernels)} kernel(s) ({kernels}) "
          f"over {profile.steps} steps")
    for b in profile.buffers:
        if b.memory.startswith(("local", "shared")):  # on chip: placed per kernel, in no figure
            print(f"  {b.name}: {b.size} = {b.nbytes} bytes, {b.memory}")
            continue
        end = "end" if b.returned else str(b.last_use)
        freed = "returned" if b.returned else (f"freed at {b.freed}" if b.freed is not None else "never freed")
        print(f"  {b.name}: {b.size} = {b.nbytes} bytes, {b.memory}, held during {profile.kernel_names(b)} "
              f"(steps: alloc {b.start}, live {b.start}..{end}, {freed})")
    if profile.unplanned:
        listed = ", ".join(f"{name} {n}" for name, n in profile.unplanned)
        hosts = {b.name: b.memory.removeprefix("in place of ") for b in profile.buffers
                 if b.memory.startswith("in place of ")}
        reused = [f"{name} into {hosts[name]}" for name, _ in profile.unplanned if name in hosts]
        note = f"; the plan writes {', '.join(reused)}" if reused else ""
        print(f"without reuse: the unplanned program's {len(profile.unplanned)} global buffer(s): {listed}{note}")
    print(profile.summary())
    return 0


def run_memory_plot(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    """`--memory-plot FILE.png`: the plan's timeline, drawn with matplotlib."""
    from allotment.analysis.memory_plot import plot_profile

    profile = _memory_profile(args, fn)
    plot_profile(profile, args.memory_plot)
    print(f"{args.memory_plot}: {len(profile.buffers)} buffers; {profile.summary()}")
    return 0


Mode = Callable[[argparse.Namespace, "FuncOp", list], int]
_MODES: dict[str, Mode] = {
    "reference": run_reference, "dump": run_dump, "check": run_check, "bench": run_bench,
    "memory_report": run_memory_report, "memory_plot": run_memory_plot,
}
"""Run modes by their flag (`--reference`, `--dump`, ...); the selected ones run in this order."""
DEFAULT_MODE: Mode = run_compiled
"""What runs when no mode flag is given: the compiled fusion, printing its outputs."""


def _selected_modes(args: argparse.Namespace) -> list[Mode]:
    modes = [mode for flag, mode in _MODES.items() if getattr(args, flag, False)]
    return modes or [DEFAULT_MODE]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()

    def body() -> int:
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help, or a usage error already printed
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        modes = _selected_modes(args)
        if args.reference and len(modes) > 1:
            print(f"{TOOL}: error: --reference combines with no other mode (use --check to compare)", file=sys.stderr)
            return EXIT_USAGE
        warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
        warnings.filterwarnings("ignore", message=".*encountered in", category=RuntimeWarning)
        shapes, scalars = parse_shapes(args.shapes), parse_scalars(args.scalars)
        device = resolve_device(args.device or ("cpu" if args.backend == "mlir" else None))
        from allotment.ir import find_function, load_module
        from allotment.reference import random_inputs

        fn = find_function(load_module(args.file), args.func)
        if fn.is_declaration:
            raise UsageError(f"@{fn.sym_name.data} is only declared (it has no body): nothing to run")
        shapes = default_shapes(fn, shapes)
        if args.nproc is not None:
            if set(modes) - {run_check, DEFAULT_MODE}:
                print(f"{TOOL}: error: --nproc combines only with --check", file=sys.stderr)
                return EXIT_USAGE
            args.device = device
            return run_distributed(args, fn, shapes, scalars)
        if args.backend == "mlir" and (device.type != "cpu" or args.bench):
            print(f"{TOOL}: error: --backend mlir runs on the cpu, without --bench", file=sys.stderr)
            return EXIT_USAGE
        args.device = device
        args.parsed_shapes, args.parsed_scalars = shapes, scalars
        planning_only = set(modes) <= {run_dump, run_memory_report, run_memory_plot}
        if not planning_only:
            _require_memory(args, fn, modes)
        inputs = [] if planning_only else random_inputs(fn, shapes, scalars, seed=args.seed, device=device)
        if set(modes) - {run_reference, run_memory_report, run_memory_plot}:
            _warn_if_large(inputs, device)
        status = 0
        for mode in modes:
            status = max(status, mode(args, fn, inputs))
        return status

    return run_reporting_errors(TOOL, body)


if __name__ == "__main__":
    sys.exit(main())
