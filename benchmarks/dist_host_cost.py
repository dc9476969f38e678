"""Host time per call of a distributed fusion, beside torch.distributed's own calls (CPU).

On torch's fake process group (`torch.testing._internal.distributed.fake_pg`:
every collective returns at once and moves nothing) this process is rank 0 of a
group of `--world` ranks, so what is timed is only the host's work of issuing a
call: for all_gather, reduce_scatter and all_reduce of bf16 tensors (`--sizes`,
the whole tensor's bytes as in benchmarks/collectives.py),

- `allotment`: the compiled one-collective fusion of `collectives.fusion_text`,
  called like any fusion (the executable's checks, the rank program, its output
  allocated per call);
- `torch`: `dist.all_gather_into_tensor` / `dist.reduce_scatter_tensor` /
  `dist.all_reduce` on the same buffers, the output preallocated;
- `torch+empty`: the same with the output allocated by `torch.empty` at each
  call (the work a fusion that returns a new tensor cannot skip; all_reduce is
  in place, so it is its input cloned).

Each figure is the least of `--repeats` means over batches of calls (each batch about
2 ms long), the implementations interleaved batch by batch: on a shared machine the
least mean is the one the other processes disturbed least, and every side gets the
same chances. `--profile OP` also prints where Allotment's call of
OP spends its time (cProfile, by own time).

    .venv/bin/python benchmarks/dist_host_cost.py                    # worlds 2 and 8, 4 KiB and 64 KiB
    .venv/bin/python benchmarks/dist_host_cost.py --world 8 --profile all_gather

The buffers are CPU tensors, so what a GPU would do asynchronously is done here by the
host at once: a copy (all_reduce's out-of-place output) or a large `torch.empty` (an
mmap past a few MiB) costs the CPU its memory time. The default sizes are small for
that reason; the host's issue work does not depend on the size.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from collectives import fusion_text, parse_size  # noqa: E402

OPS = ("all_gather", "reduce_scatter", "all_reduce")
IMPLS = ("allotment", "torch", "torch+empty")


def _per_call_us(fn: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def _calls(fn: Callable[[], Any], batch_us: float) -> int:
    """How many calls of `fn` last about `batch_us` microseconds."""
    return max(5, int(batch_us / max(min(_per_call_us(fn, 20) for _ in range(5)), 1e-3)))


def cases(size: int, world: int) -> dict[tuple[str, str], Callable[[], Any]]:
    """The calls to time, by (op, impl), on the initialized (fake) group of `world` ranks."""
    import torch
    import torch.distributed as dist

    import allotment

    elements = size // 2
    width = 4096 if elements >= 4096 * world else 64
    rows = elements // width
    text = fusion_text(rows, width, world)
    local = torch.randn(rows // world, width, dtype=torch.bfloat16)
    partial = torch.randn(rows, width, dtype=torch.bfloat16)
    whole = torch.empty(rows, width, dtype=torch.bfloat16)
    mine = torch.empty(rows // world, width, dtype=torch.bfloat16)
    bf16 = torch.bfloat16
    gather = allotment.compile(text, function="all_gather")
    scatter = allotment.compile(text, function="reduce_scatter")
    reduce = allotment.compile(text, function="all_reduce")
    return {
        ("all_gather", "allotment"): lambda: gather(local),
        ("all_gather", "torch"): lambda: dist.all_gather_into_tensor(whole, local),
        ("all_gather", "torch+empty"):
            lambda: dist.all_gather_into_tensor(torch.empty((rows, width), dtype=bf16), local),
        ("reduce_scatter", "allotment"): lambda: scatter(partial),
        ("reduce_scatter", "torch"): lambda: dist.reduce_scatter_tensor(mine, partial),
        ("reduce_scatter", "torch+empty"):
            lambda: dist.reduce_scatter_tensor(torch.empty((rows // world, width), dtype=bf16), partial),
        ("all_reduce", "allotment"): lambda: reduce(partial),
        ("all_reduce", "torch"): lambda: dist.all_reduce(whole),
        ("all_reduce", "torch+empty"): lambda: dist.all_reduce(partial.clone()),
    }


def measure(world: int, sizes: list[int], batch_us: float, repeats: int, profile: str | None) -> list[dict[str, Any]]:
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    rows = []
    try:
        for size in sizes:
            fns = cases(size, world)
            for fn in fns.values():  # compile, create the groups, warm up
                for _ in range(10):
                    fn()
            counts = {key: _calls(fn, batch_us) for key, fn in fns.items()}
            best = {key: float("inf") for key in fns}
            for _ in range(repeats):  # interleaved: a slow moment of a shared machine hits every side
                for key, fn in fns.items():
                    best[key] = min(best[key], _per_call_us(fn, counts[key]))
            for (op, impl), us in best.items():
                rows.append({"op": op, "impl": impl, "bytes": size, "world": world, "us_per_call": us})
            if profile is not None:
                _profile(fns[(profile, "allotment")], 20_000)
    finally:
        dist.destroy_process_group()
    return rows


def _profile(fn: Callable[[], Any], calls: int) -> None:
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(18)


def table(rows: list[dict[str, Any]]) -> str:
    by = {(r["world"], r["bytes"], r["op"], r["impl"]): r["us_per_call"] for r in rows}
    lines = [f"{'world':>5} {'bytes':>10} {'op':<15}{'allotment us':>13}{'torch us':>10}{'torch+empty':>12}"
             f"{'vs torch+empty':>15}"]
    for world, size, op in sorted({k[:3] for k in by}, key=lambda k: (k[0], k[1], OPS.index(k[2]))):
        a, t, te = (by[(world, size, op, impl)] for impl in IMPLS)
        lines.append(f"{world:>5} {size:>10} {op:<15}{a:>13.2f}{t:>10.2f}{te:>12.2f}{a / te:>15.2f}")
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--world", default="2,8", help="comma-separated group sizes (default 2,8)")
    p.add_argument("--sizes", default="4KiB,64KiB", help="comma-separated sizes (default 4KiB,64KiB)")
    p.add_argument("--batch-us", type=float, default=2000.0, help="length of a batch of calls (default 2000 us)")
    p.add_argument("--repeats", type=int, default=40, help="batches per figure, the least mean kept (default 40)")
    p.add_argument("--profile", choices=OPS, help="also profile Allotment's call of this op")
    p.add_argument("--out", help="also write the rows as JSON to this file")
    args = p.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)  # torch 2.13 renames the *_tensor calls
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    rows = []
    for world in (int(w) for w in args.world.split(",") if w.strip()):
        rows += measure(world, sizes, args.batch_us, args.repeats, args.profile)
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
