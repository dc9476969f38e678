"""Collective bandwidth: Allotment's generated programs next to torch.distributed's own.

For all_gather, reduce_scatter and all_reduce of bf16 tensors of 1 MiB, 64 MiB
and 1 GiB (the whole tensor: all_gather's output, reduce_scatter's and
all_reduce's input, as nccl-tests counts), on 2, 4 or 8 ranks, it times

- `allotment`: the program Allotment generates for a one-op fusion: a
  `fusion.set` from a row split to replicated (lowered to `comm.all_gather`),
  a `comm.reduce_scatter` and a `comm.all_reduce` of a partial tensor, called
  like any compiled fusion (its output allocated per call, as the program does;
  the all_reduce's output is a new tensor, so it copies its input first);
- `torch`: `dist.all_gather_into_tensor` / `dist.reduce_scatter_tensor` on the
  same input buffers into a preallocated output, `dist.all_reduce` in place;

and reports time per call, algorithm bandwidth (bytes / time) and bus bandwidth
(algbw * (n - 1) / n for all_gather and reduce_scatter, 2 (n - 1) / n for
all_reduce: nccl-tests' convention), and Allotment's bus bandwidth
over torch's, twice: per call between barriers (latency: the host's time to
issue the call is on the clock), and back to back (`b2b`: `--iters` calls
queued after one barrier, nccl-tests' own method, where the host issues the
next call while the GPUs communicate). Rank 0 prints a table, then one JSON
document.

    torchrun --nproc-per-node 2 benchmarks/collectives.py             # NCCL, one GPU per rank
    python benchmarks/collectives.py --nproc 8                        # starts its own ranks
    python benchmarks/collectives.py --nproc 2 --device cpu --sizes 64KiB,1MiB   # gloo, a smoke test

Times are medians over `--iters` calls after `--warmup`, each call between two
barriers, measured with CUDA events on the GPU (wall time on the CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_SIZES = "1MiB,64MiB,1GiB"
UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)(KiB|MiB|GiB)?", text.strip())
    if not m:
        raise SystemExit(f"collectives.py: bad size {text!r} (e.g. 64MiB)")
    return int(m.group(1)) * UNITS.get(m.group(2) or "", 1)


def fusion_text(rows: int, width: int, world: int) -> str:
    """The three one-collective fusions over a mesh of every rank."""
    ids = ", ".join(map(str, range(world)))
    split = f"tensor<{rows}x{width}xbf16, #fusion.sharding<@world, [[0], []]>>"
    whole = f"tensor<{rows}x{width}xbf16, #fusion.sharding<@world, [[], []]>>"
    return f"""
fusion.mesh @world shape {world} devices [{ids}]
func.func @all_gather(%x: {split}) -> {whole} {{
  %y = fusion.set %x : {split} -> {whole}
  func.return %y : {whole}
}}
func.func @reduce_scatter(%p: {whole}) -> {split} {{
  %y = comm.reduce_scatter %p "sum" over [0] : {whole} -> {split}
  func.return %y : {split}
}}
func.func @all_reduce(%p: {whole}) -> {whole} {{
  %y = comm.all_reduce %p "sum" over [0] : {whole} -> {whole}
  func.return %y : {whole}
}}
"""


def _timer(device: str) -> Any:
    import torch

    if device == "cuda":
        def run(fn: Any) -> float:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
    else:
        def run(fn: Any) -> float:
            t = time.perf_counter()
            fn()
            return time.perf_counter() - t
    return run


def _median(fn: Any, device: str, warmup: int, iters: int) -> float:
    import torch
    import torch.distributed as dist

    timer = _timer(device)
    # NCCL's barrier on this rank's own GPU (set by the launcher or from LOCAL_RANK)
    barrier = {"device_ids": [torch.cuda.current_device()]} if device == "cuda" else {}
    for _ in range(warmup):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        dist.barrier(**barrier)
        times.append(timer(fn))
    # every rank reports the slowest rank's time of each call: a collective ends when all do
    t = torch.tensor(times, dtype=torch.float64,
                     device=torch.device("cuda", torch.cuda.current_device()) if device == "cuda" else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return statistics.median(t.tolist())


def _back_to_back(fn: Any, device: str, iters: int) -> float:
    """Time per call of `iters` calls queued back to back after one barrier (nccl-tests'
    method: the host enqueues while the GPU communicates), the slowest rank's."""
    import torch
    import torch.distributed as dist

    barrier = {"device_ids": [torch.cuda.current_device()]} if device == "cuda" else {}
    dist.barrier(**barrier)
    timer = _timer(device)
    def loop() -> None:
        for _ in range(iters):  # each output dropped as a caller would: no allocation piles up
            fn()

    t = timer(loop) / iters
    worst = torch.tensor([t], dtype=torch.float64,
                         device=torch.device("cuda", torch.cuda.current_device()) if device == "cuda" else "cpu")
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return float(worst.item())


def bench_rank(sizes: list[int], device: str, warmup: int, iters: int) -> list[dict[str, Any]]:
    """Runs on every rank of an initialized process group; returns the rows (same on every rank)."""
    import torch
    import torch.distributed as dist

    world = dist.get_world_size()
    # the GPU the launcher (rank r: cuda:r) or the torchrun branch of main (LOCAL_RANK) set
    dev = torch.device("cuda", torch.cuda.current_device()) if device == "cuda" else torch.device("cpu")
    rows_out = []
    for size in sizes:
        rows_out += _bench_size(size, dev, world, device, warmup, iters)
        if device == "cuda":
            torch.cuda.empty_cache()
    return rows_out


BUS_FACTOR = {"all_gather": 1.0, "reduce_scatter": 1.0, "all_reduce": 2.0}
"""nccl-tests' bus bandwidth = algbw x factor x (n - 1) / n."""


def _bench_size(size: int, dev: Any, world: int, device: str, warmup: int, iters: int) -> list[dict[str, Any]]:
    """The six timings (three ops, two implementations) at one size."""
    import torch
    import torch.distributed as dist

    import allotment

    elements = size // 2
    width = 4096 if elements >= 4096 * world else 64
    rows = elements // width
    if rows % world or rows == 0:
        raise SystemExit(f"collectives.py: {size} bytes do not split into {world} equal bf16 row blocks")
    text = fusion_text(rows, width, world)
    gather = allotment.compile(text, function="all_gather")
    scatter = allotment.compile(text, function="reduce_scatter")
    reduce = allotment.compile(text, function="all_reduce")
    local = torch.randn(rows // world, width, dtype=torch.bfloat16, device=dev)
    partial = torch.randn(rows, width, dtype=torch.bfloat16, device=dev)
    whole = torch.empty(rows, width, dtype=torch.bfloat16, device=dev)
    mine = torch.empty(rows // world, width, dtype=torch.bfloat16, device=dev)
    summed = partial.clone()
    if device == "cuda":
        torch_gather = lambda: dist.all_gather_into_tensor(whole, local)  # noqa: E731
        torch_scatter = lambda: dist.reduce_scatter_tensor(mine, partial)  # noqa: E731
        torch_reduce = lambda: dist.all_reduce(summed)  # noqa: E731
    else:  # gloo has neither: its list all_gather, and an all_reduce (of a copy in f32)
        torch_gather = lambda: dist.all_gather(list(whole.chunk(world)), local)  # noqa: E731
        torch_scatter = lambda: dist.all_reduce(partial.float())  # noqa: E731
        torch_reduce = lambda: dist.all_reduce(partial.float())  # noqa: E731
    (check,) = gather(local)
    torch_gather()
    if not torch.equal(check, whole):
        raise SystemExit(f"collectives.py: rank {dist.get_rank()}: Allotment's all_gather differs from torch's")
    (total,) = reduce(partial)
    if device == "cuda":
        dist.all_reduce(summed)  # the same sum as Allotment's, from the same partials
        if not torch.equal(total, summed):
            raise SystemExit(f"collectives.py: rank {dist.get_rank()}: Allotment's all_reduce differs from torch's")
    cases = {
        ("all_gather", "allotment"): lambda: gather(local),
        ("all_gather", "torch"): torch_gather,
        ("reduce_scatter", "allotment"): lambda: scatter(partial),
        ("reduce_scatter", "torch"): torch_scatter,
        ("all_reduce", "allotment"): lambda: reduce(partial),
        ("all_reduce", "torch"): torch_reduce,
    }
    out = []
    for (op, impl), fn in cases.items():
        t = _median(fn, device, warmup, iters)
        algbw = size / t / 1e9
        t_b2b = _back_to_back(fn, device, iters)
        bus = BUS_FACTOR[op] * (world - 1) / world
        out.append({"op": op, "impl": impl, "bytes": size, "ranks": world, "seconds": t,
                    "algbw_GBps": algbw, "busbw_GBps": algbw * bus,
                    "seconds_b2b": t_b2b, "busbw_b2b_GBps": size / t_b2b / 1e9 * bus})
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'ranks':>5} {'op':<15}{'bytes':>12}{'impl':>11}{'time us':>12}{'algbw GB/s':>12}{'busbw GB/s':>12}"
             f"{'vs torch':>10}{'b2b us':>10}{'b2b busbw':>11}{'vs torch':>10}"]
    key = ("ranks", "op", "bytes")
    torch_bw = {tuple(r[k] for k in key): r for r in rows if r["impl"] == "torch"}
    for r in sorted(rows, key=lambda r: (r["ranks"], r["op"], r["bytes"], r["impl"])):
        ref = torch_bw.get(tuple(r[k] for k in key))
        ratio = r["busbw_GBps"] / ref["busbw_GBps"] if ref else float("nan")
        ratio_b2b = r["busbw_b2b_GBps"] / ref["busbw_b2b_GBps"] if ref else float("nan")
        lines.append(
            f"{r['ranks']:>5} {r['op']:<15}{r['bytes']:>12}{r['impl']:>11}{r['seconds'] * 1e6:>12.1f}"
            f"{r['algbw_GBps']:>12.2f}{r['busbw_GBps']:>12.2f}{ratio:>10.3f}"
            f"{r['seconds_b2b'] * 1e6:>10.1f}{r['busbw_b2b_GBps']:>11.2f}{ratio_b2b:>10.3f}"
        )
    return "\n".join(lines)


def report(rows: list[dict[str, Any]], device: str, out: str | None) -> None:
    print(table(rows))
    doc = {"device": device, "rows": rows}
    print(json.dumps(doc))
    if out:
        Path(out).write_text(json.dumps(doc, indent=1) + "\n")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default=DEFAULT_SIZES, help=f"comma-separated sizes (default {DEFAULT_SIZES})")
    p.add_argument("--device", choices=["cuda", "cpu"], default=None, help="default: cuda if available")
    p.add_argument("--nproc", type=int, default=2, help="ranks to start when not run by torchrun (default 2)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before self-started ranks are killed")
    p.add_argument("--out", help="also write the JSON document to this file")
    args = p.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    backend = "nccl" if device == "cuda" else "gloo"
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # started by torchrun
        import torch.distributed as dist

        options = {}
        if device == "cuda":
            local_rank = int(os.environ.get("LOCAL_RANK", "0"))
            torch.cuda.set_device(local_rank)
            options["device_id"] = torch.device("cuda", local_rank)
        dist.init_process_group(backend, **options)
        try:
            rows = bench_rank(sizes, device, args.warmup, args.iters)
            if dist.get_rank() == 0:
                report(rows, device, args.out)
        finally:
            dist.destroy_process_group()
        return 0
    from allotment.backend.launcher import launch

    rows = launch(bench_rank, args.nproc, (sizes, device, args.warmup, args.iters), timeout=args.timeout,
                  backend=backend)[0]
    report(rows, device, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
