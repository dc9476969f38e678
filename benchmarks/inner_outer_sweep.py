"""Sweep of the inner-outer kernel's two knobs (LayerNorm and RMSNorm backward: dx per row,
dw and db as column sums) on the GPU, at the suite's sizes and at the models' (rows of
1024 and 768), with torch eager and torch.compile (static) timed beside it in the same
process (nvFuser is not: `skeptic_suite.py` times it at the suite's sizes).

    python3 benchmarks/inner_outer_sweep.py [--shapes 8192x1024,12345x1111] [--programs 132,264,528]
        [--blocks default,1x1x4,2x1x8] [--configs 264:default,528:1x1x4:one] [--fusions ...] [--dtype bf16]

The knobs: the number of row programs (`analysis/inner_outer.INNER_OUTER_PROGRAMS` and `SHORT_PROGRAMS`,
baked into the IR as `%programs`, so each value is its own compile; `auto` is the rule's) and the row kernel's blocks
(`host_runtime.inner_outer_blocks`, read at launch: `BMxBNxWARPS`, where BN 1 means the
row's power of two, or where the row is held as two tiles the first tile's width; `default` is
the heuristic), and, as a third field of `--configs`, `one`: a static row that
`host_runtime.inner_outer_tiles` would hold as two tiles (rows of 1111 in 1024 + 128 lanes)
held as one power-of-two tile instead (the rule's `split=False`, the form before the
inner-outer kernel had two tiles). Every configuration's outputs are checked
against the suite's torch function before it is timed. Timing is `kernel_timing`'s
(CUDA-graph replay over input sets at least 3x the L2), `--repeats` interleaved samples of
every configuration and of torch.compile; one line per configuration: min, median and max
in us, GB/s moved (inputs plus outputs over the median) and the median over
torch.compile's. `--cpu-check` runs the path on the CPU with 2 rows (times mean nothing).
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from unittest import mock

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import kernel_timing as kt  # noqa: E402
from suite_fusions import FUSIONS, check_outputs  # noqa: E402

import allotment  # noqa: E402
from allotment.analysis import inner_outer  # noqa: E402
from allotment.backend import host_runtime  # noqa: E402
from allotment.backend.kernels import inner_outer as io_kernels  # noqa: E402


def blocks(spec: str) -> tuple[int, int, int] | None:
    """`default` -> None (the heuristic), else (BM, BN, WARPS) from BMxBNxWARPS."""
    return None if spec == "default" else host_runtime.parse_blocks(spec)


class Config:
    """One (programs, blocks) configuration of one fusion and shape, compiled."""

    def __init__(self, fusion: str, dtype: str, extents: dict[str, int], programs: str, spec: str, dev: str,
                 tiles: str = "") -> None:
        self.name = f"P{programs} {spec}" + (f" {tiles}" if tiles else "")
        self.blocks = blocks(spec)
        old = inner_outer.INNER_OUTER_PROGRAMS, inner_outer.SHORT_PROGRAMS
        if programs != "auto":  # `auto`: the rule's own count (`inner_outer.most_programs`)
            inner_outer.INNER_OUTER_PROGRAMS = inner_outer.SHORT_PROGRAMS = int(programs)
        one = (mock.patch.object(io_kernels, "inner_outer_tiles", functools.partial(host_runtime.inner_outer_tiles, split=False))
               if tiles == "one" else nullcontext())
        try:
            with one:
                text = FUSIONS[fusion].text(dtype, False, extents)
                tag = f"_p{programs}_" + spec.replace("x", "_") + tiles  # its own program: replays are per program
                self.exe = allotment.compile(text.replace(f"@{fusion}(", f"@{fusion}{tag}(", 1))
                self.exe.program(dev)
        finally:
            inner_outer.INNER_OUTER_PROGRAMS, inner_outer.SHORT_PROGRAMS = old

    def __call__(self, *xs: Any) -> Any:
        old = host_runtime._IO
        host_runtime._IO = self.blocks
        host_runtime.inner_outer_blocks.cache_clear()  # it is cached per (m, n)
        try:
            return self.exe(*xs)
        finally:
            host_runtime._IO = old
            host_runtime.inner_outer_blocks.cache_clear()


def sweep_case(fusion: str, shape: str, args: argparse.Namespace) -> list[str]:
    f = FUSIONS[fusion]
    dev = "cpu" if args.cpu_check else "cuda"
    m, n = (int(v) for v in shape.split("x"))
    if args.cpu_check:
        m = 2
    extents = dict(zip(f.sizes["large"], (m, n)))
    xs = f.make_inputs(extents, args.dtype, dev)
    want = f.torch_fn(*xs)
    per_call = sum(t.numel() * t.element_size() for t in (*xs, *want))
    n_sets = kt.input_sets_needed(per_call, kt.l2_bytes()) if dev == "cuda" else 1
    sets = [xs] + [f.make_inputs(extents, args.dtype, dev, seed=i) for i in range(1, n_sets)]
    lines, sides = [], []
    pairs = ([tuple(c.split(":")) for c in args.configs.split(",")] if args.configs else
             [(p, spec) for p in args.programs.split(",") for spec in args.blocks.split(",")])
    for p, spec, *tiles in pairs:
        cfg = Config(fusion, args.dtype, extents, p, spec, dev, *tiles)
        why = check_outputs(cfg(*xs), want, args.dtype)
        if why is not None:
            lines.append(f"{fusion:14s} {shape:11s} {cfg.name:14s} WRONG: {why}")
            continue
        sides.append(kt.Side(cfg.name, lambda s, c=cfg: c(*s)))
    if not args.cpu_check:
        compiled = torch.compile(f.torch_fn, dynamic=False)
        sides.append(kt.Side("compile", lambda s: compiled(*s)))
    sides.append(kt.Side("eager", lambda s: f.torch_fn(*s)))
    for s in sides:
        kt.prepare(s, sets, dev)
    kt.interleave(sides, args.repeats)
    kt.release(sides)
    t = {s.name: kt.spread(s.samples) for s in sides}
    ref = t.get("compile")
    for s in sides:
        r = t[s.name]
        if r is None:
            lines.append(f"{fusion:14s} {shape:11s} {s.name:14s} not timed: {s.error}")
            continue
        gbs = per_call / (r["median"] * 1e-6) / 1e9
        vs = f"{ref['median'] / r['median']:.2f}x" if ref else "-"
        lines.append(f"{fusion:14s} {shape:11s} {s.name:14s} {r['median']:8.1f} [{r['min']:.1f}-{r['max']:.1f}] us "
                     f"{gbs:7.0f} GB/s  {vs:>6s} vs compile")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusions", default="layernorm_bwd,rmsnorm_bwd")
    p.add_argument("--shapes", default="8192x1024,12345x1111,16384x4096,4096x768")
    p.add_argument("--programs", default="132,264,528")
    p.add_argument("--blocks", default="default,1x1x4,2x1x4,2x1x8,4x1x8")
    p.add_argument("--configs", default="", help="PROGRAMS:BLOCKS pairs (instead of --programs x --blocks)")
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cpu-check", action="store_true")
    args = p.parse_args(argv)
    commit = os.environ.get("ALLOT_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    print(f"commit {commit or 'unknown'} torch {torch.__version__} dtype {args.dtype}", flush=True)
    for fusion in args.fusions.split(","):
        for shape in args.shapes.split(","):
            for line in sweep_case(fusion, shape, args):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
