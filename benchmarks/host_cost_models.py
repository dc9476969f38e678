"""Host cost of the torch.compile programs on the CPU: a training step and an inference call
of tiny GPT-2 and Llama-style models under `torch.compile(backend="allotment")`, with every
Triton launch intercepted (a no-op hook), so that what is timed is host work only.

    python benchmarks/host_cost_models.py [--models llama,gpt2] [--modes train,infer]
        [--steps 200] [--repeats 5] [--profile 25] [--out F.json]

The models have the GPU benchmark's structure (`torch_compile_models.make_model`) at
tiny sizes (default hidden 64, 4 layers, batch 2, seq 16, vocab 128; f32, random weights,
no download). Matmuls run as library calls (torch.mm), as they do in the GPU benchmark's
programs at its sizes (`ALLOT_TILED_MATMUL_OUTPUTS=0`; `--tiled` keeps the size rule, which
at these sizes makes them Triton kernels). Each model and mode is compiled and run twice for real (Triton's
interpreter) to warm up, then timed with launches intercepted: `--repeats` runs of
`--steps` steps each, reported as min / median / max of (CPU time of this thread,
`time.thread_time`, so that other processes on a shared machine count less than in wall time;
torch runs on this one thread):

- `step_us`: host µs of a whole step (zero_grad, forward with the loss, backward; or a
  no_grad forward), torch's eager work and autograd included;
- `graphs_us`: µs a step spends inside Allotment's compiled graphs (`CompiledGraph.__call__`:
  the boxed wrapper, the generated host program, its ATen calls on tiny CPU tensors);
- `us_per_kernel`: `graphs_us` over the kernels a step launches (Triton launches plus
  library ATen calls, counted with launches intercepted).

`--profile N` prints a cProfile top-N (by self time) of `--steps` intercepted steps of
each model and mode. Launches intercepted means `launch.launch_kernel`'s GPU-side work
(the specialization key, `data_ptr` reads, Triton's C launcher) is not counted: that is
the same for any host program and is measured on the GPU (`host_cost.py`).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from torch_compile_models import git_commit, make_model, step_fn  # noqa: E402

from allotment.backend import host_runtime  # noqa: E402
from allotment.backend.launch import intercepted  # noqa: E402
from allotment.frontend.torch_compile.compiled import CompiledGraph  # noqa: E402


def size_of(args: argparse.Namespace) -> dict[str, int]:
    """The model's sizes: the GPU benchmark's structure (`torch_compile_models.sizes`) at `args`' sizes."""
    return {"hidden": args.hidden, "layers": args.layers, "heads": max(1, args.hidden // 32),
            "kv_heads": max(1, args.hidden // 64), "intermediate": 8 * args.hidden // 3 // 16 * 16,
            "vocab": args.vocab, "seq": args.seq, "batch": args.batch}


_clock = time.thread_time
"""CPU time of this thread (`module docstring`)."""


class GraphClock:
    """Time spent inside `CompiledGraph.__call__` (patched on the class while installed)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._real: Any = None

    def install(self) -> None:
        real = self._real = CompiledGraph.__call__
        clock = self

        def timed(graph: CompiledGraph, args: list[Any]) -> list[Any]:
            t = _clock()
            try:
                return real(graph, args)
            finally:
                clock.seconds += _clock() - t

        CompiledGraph.__call__ = timed  # type: ignore[method-assign]

    def remove(self) -> None:
        CompiledGraph.__call__ = self._real  # type: ignore[method-assign]


def count_kernels(fn: Callable[[], None]) -> tuple[int, int]:
    """(Triton launches, library torch calls) of one call of `fn`, launches intercepted."""
    seen: list[Any] = []
    calls: list[Any] = []
    real = host_runtime._torch_call

    def counted(f: Any, a: Any, k: Any) -> Any:
        calls.append(f)
        return real(f, a, k)

    host_runtime._torch_call = counted
    try:
        with intercepted(lambda *a: seen.append(a)):
            fn()
    finally:
        host_runtime._torch_call = real
    return len(seen), len(calls)


def _noop(*_: Any) -> None:
    return None


def timed_repeats(fn: Callable[[], None], steps: int, repeats: int) -> tuple[list[float], list[float]]:
    """(µs per step, µs per step inside the compiled graphs) of each repeat, launches intercepted."""
    clock = GraphClock()
    clock.install()
    step_us, graph_us = [], []
    try:
        with intercepted(_noop):
            for _ in range(3):
                fn()
            for _ in range(repeats):
                clock.seconds = 0.0
                t = _clock()
                for _ in range(steps):
                    fn()
                step_us.append((_clock() - t) * 1e6 / steps)
                graph_us.append(clock.seconds * 1e6 / steps)
    finally:
        clock.remove()
    return step_us, graph_us


def profile(fn: Callable[[], None], steps: int, top: int) -> str:
    """cProfile's self time over `steps` intercepted steps, µs a step: by group (`group_of`),
    then its top `top` functions."""
    prof = cProfile.Profile()
    with intercepted(_noop):
        prof.enable()
        for _ in range(steps):
            fn()
        prof.disable()
    stats = pstats.Stats(prof)
    groups: dict[str, float] = {}
    for (path, _, name), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        g = group_of(path, name)
        groups[g] = groups.get(g, 0.0) + tottime
    lines = ["self µs a step (profiled) by group:"]
    lines += [f"  {us * 1e6 / steps:9.1f}  {g}" for g, us in sorted(groups.items(), key=lambda kv: -kv[1])]
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(top)
    return "\n".join(lines) + "\n" + out.getvalue()


def group_of(path: str, name: str) -> str:
    """Where a profiled function belongs: the generated program (its entry and body, its
    launchers), Allotment's modules by file, torch's builtins by name, or the rest by package."""
    if "allotment/program_" in path or "/allotment_program" in path:
        return "generated: launchers" if name.startswith("launch_") else f"generated: {name}"
    if "/allotment/" in path and "site-packages" not in path:
        return "allotment: " + path.split("/allotment/", 1)[1]
    if path == "~":
        for prefix in ("torch.as_strided", "torch.empty", "torch.matmul", "torch.mm"):
            if prefix.split(".")[1] in name and "built-in method" in name:
                return f"torch builtin: {name.split()[-1].rstrip('>}')}"
        if "torch" in name or "TensorBase" in name:
            return "torch builtin: other"
        return "python builtins"
    for package in ("transformers", "torch/_dynamo", "torch/_functorch", "torch/autograd", "torch/nn", "torch"):
        if f"/{package}/" in path:
            return package
    return "other"


def spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def run_model(name: str, mode: str, args: argparse.Namespace) -> dict[str, Any]:
    size = size_of(args)
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = make_model(name, size)
    params = list(model.parameters())
    ids = torch.randint(0, size["vocab"], (size["batch"], size["seq"]))
    fn = step_fn(torch.compile(model, backend="allotment"), ids, mode, lambda: torch.autocast("cpu", enabled=False),
                 params)
    for _ in range(2):  # compiles, then runs for real (Triton's interpreter)
        fn()
    triton, library = count_kernels(fn)
    step_us, graph_us = timed_repeats(fn, args.steps, args.repeats)
    kernels = triton + library
    row: dict[str, Any] = {
        "triton_launches": triton, "library_calls": library, "step_us": spread(step_us),
        "graphs_us": spread(graph_us), "us_per_kernel": spread([g / kernels for g in graph_us]),
    }
    if args.profile:
        row["profile"] = profile(fn, args.steps, args.profile)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="llama,gpt2")
    p.add_argument("--modes", default="train,infer")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--vocab", type=int, default=128)
    p.add_argument("--tiled", action="store_true", help="small matmuls as Triton kernels (the size rule)")
    p.add_argument("--profile", type=int, default=0, metavar="N", help="print a cProfile top N of each case")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    if not args.tiled:
        os.environ["ALLOT_TILED_MATMUL_OUTPUTS"] = "0"
    report: dict[str, Any] = {"commit": git_commit(), "load": os.getloadavg(), "size": size_of(args),
                              "steps": args.steps, "repeats": args.repeats, "tiled": args.tiled, "cases": {}}
    print(f"commit {report['commit'][:10]}  load {' '.join(f'{x:.2f}' for x in report['load'])}")
    print(f"{'case':<12} {'kernels':>8} {'step µs min/med/max':>26} {'graphs µs min/med/max':>26} "
          f"{'µs/kernel med':>14}")
    for name in args.models.split(","):
        for mode in args.modes.split(","):
            row = run_model(name, mode, args)
            report["cases"][f"{name} {mode}"] = row
            s, g = row["step_us"], row["graphs_us"]
            print(f"{name + ' ' + mode:<12} {row['triton_launches']:>4}+{row['library_calls']:<3} "
                  f"{s['min']:>8.0f} {s['median']:>8.0f} {s['max']:>8.0f} "
                  f"{g['min']:>8.0f} {g['median']:>8.0f} {g['max']:>8.0f} {row['us_per_kernel']['median']:>14.1f}",
                  flush=True)
            if "profile" in row:
                print(row["profile"])
    report["load_after"] = os.getloadavg()
    print(f"load after {' '.join(f'{x:.2f}' for x in report['load_after'])}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
