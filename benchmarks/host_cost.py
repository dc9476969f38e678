"""Host cost per call at small sizes, through `FusionDefinition.execute` and the compiled executable.

    python3 benchmarks/host_cost.py [--calls 2000] [--only rmsnorm_bwd,adam] [--no-compile] [--out F.json]

The twelve fusions of `memory_suite.py` (written with nvFuser's Python API, `?`
extents except rotary's), at a small size (`--scale`, default 0.002: 16 to 32 rows of
8 to 32 columns). For each, in one process and on the same inputs, host µs per call
(`measure.host_us`: calls queued, one synchronize at the end) of:

- `execute`: `fd.execute(inputs)`, the nvFuser-compatible entry (its checks included);
- `exe`: the compiled executable (`fd.executable_for`), `exe(*args)`;
- `python`: the generated host program itself (`exe.program("cuda").module.run`),
  which is what a call costs when it is not replayed (`backend/replay.py`);
- `graphs`: the same fusion compiled with `cuda_graphs=True` (`backend/cuda_graphs.py`);
- torch eager and torch.compile of the torch twin: its default mode (`compile`) and
  `mode="reduce-overhead"` (`compile_ro`: CUDA graphs replayed by torch, the mode a user who
  cares about host cost picks).

Kernels per call are counted with launches intercepted (Triton kernels, plus one per
library torch call: a matmul or linear); µs per kernel is `execute`'s per call over that count. Outputs are checked against the torch twin before the timings,
and again after them on fresh inputs (calls then replayed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import measure  # noqa: E402
import memory_suite  # noqa: E402
from skeptic_suite import fresh_function  # noqa: E402

import allotment  # noqa: E402
from allotment import FusionDefinition  # noqa: E402
from allotment.driver.runtime import intercept_launches  # noqa: E402


def _kernels(fn: Any) -> tuple[int, int]:
    """(Triton kernels, library torch calls) of one call (kernels not run; a library call
    launches at least one kernel of its own)."""
    from allotment.backend import host_runtime

    seen: list[Any] = []
    calls: list[Any] = []
    real = host_runtime._torch_call
    host_runtime._torch_call = lambda f, args, kwargs: calls.append(f)
    try:
        with intercept_launches(lambda *a: seen.append(a)):
            fn()
    finally:
        host_runtime._torch_call = real
    return len(seen), len(calls)


def run_case(case: memory_suite.Case, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"fusion": case.name}
    inputs = case.inputs(args.scale, "cuda")
    row["shapes"] = [list(x.shape) for x in inputs]
    with FusionDefinition() as fd:
        case.define(fd, inputs)
    out = fd.execute(inputs)
    want = case.torch_fn(*inputs)
    for o, w in zip(out, want):
        torch.testing.assert_close(o.float(), w.float(), rtol=case.tol, atol=case.tol)
    exe, xs = fd.executable_for(inputs)
    program = exe.program("cuda")
    triton_kernels, library = _kernels(lambda: program.module.run(*xs))
    row["kernels"] = triton_kernels + library
    row["library_calls"] = library
    row["replayed"] = bool(program.replayer is not None)
    graphed = allotment.compile(fd.ir(), cuda_graphs=True)
    variants: dict[str, Any] = {
        "execute": lambda: fd.execute(inputs),
        "exe": lambda: exe(*xs),
        "python": lambda: program.module.run(*xs),
        "graphs": lambda: graphed(*xs),
        "eager": lambda: case.torch_fn(*inputs),
    }
    if not args.no_compile:
        compiled = torch.compile(case.torch_fn)
        compiled(*inputs)
        variants["compile"] = lambda: compiled(*inputs)
        try:
            ro = torch.compile(fresh_function(case.torch_fn, "ro"), mode="reduce-overhead")  # a cache of its own
            for _ in range(3):  # cudagraph trees record on the first calls
                ro(*inputs)
            variants["compile_ro"] = lambda: ro(*inputs)
        except Exception as e:  # noqa: BLE001 (torch.compile's failure is not Allotment's)
            row["compile_ro_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    for label, fn in variants.items():
        row[f"host_us_{label}"] = measure.host_us(fn, args.calls)
    fresh = case.inputs(args.scale, "cuda")  # replayed calls on other tensors: still right
    for o, w in zip(fd.execute(fresh), case.torch_fn(*fresh)):
        torch.testing.assert_close(o.float(), w.float(), rtol=case.tol, atol=case.tol)
    if row["kernels"]:
        row["host_us_per_kernel_execute"] = row["host_us_execute"] / row["kernels"]
        row["host_us_per_kernel_exe"] = row["host_us_exe"] / row["kernels"]
    return row


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    labels = [k[len("host_us_"):] for k in rows[0] if k.startswith("host_us_") and "per_kernel" not in k]
    lines = [f"Host µs per call at the small size ({meta['device']}, torch {meta['torch']}, "
             f"triton {meta['triton']}, {meta['date']}).", "",
             "| fusion | kernels (library) | replayed | " + " | ".join(labels) + " | execute µs/kernel |",
             "| --- | ---: | --- | " + " | ".join("---:" for _ in labels) + " | ---: |"]
    for r in rows:
        cells = [f"{r.get(f'host_us_{k}', float('nan')):.1f}" for k in labels]
        per = r.get("host_us_per_kernel_execute")
        lines.append(f"| {r['fusion']} | {r['kernels']} ({r['library_calls']}) | {'yes' if r['replayed'] else 'no'} | "
                     + " | ".join(cells) + (f" | {per:.1f} |" if per else " | |"))
    per_kernel = [r["host_us_per_kernel_execute"] for r in rows if r.get("host_us_per_kernel_execute")]
    per_exe = [r["host_us_per_kernel_exe"] for r in rows if r.get("host_us_per_kernel_exe")]
    if per_kernel:
        lines += ["", f"µs per launched kernel through execute: median {statistics.median(per_kernel):.1f}, "
                  f"max {max(per_kernel):.1f}; through the executable: median {statistics.median(per_exe):.1f}, "
                  f"max {max(per_exe):.1f}"]
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=float, default=0.002)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--only", default="")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--out", default=None)
    p.add_argument("--markdown", default=None)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("host_cost: needs a CUDA device")
        return 0
    import triton

    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    only = set(filter(None, args.only.split(",")))
    rows = []
    for case in memory_suite.CASES:
        if only and case.name not in only:
            continue
        try:
            row = run_case(case, args)
        except Exception as e:  # noqa: BLE001 (a case that cannot run is reported, the others go on)
            row = {"fusion": case.name, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        print(json.dumps(row), flush=True)
        rows.append(row)
    ok = [r for r in rows if "error" not in r]
    text = markdown(ok, meta) if ok else "no case ran\n"
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps({"meta": meta, "results": rows}, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
