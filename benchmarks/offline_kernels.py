"""What each kernel launch of a suite case costs the GPU's resources, offline (no GPU):

    python3 benchmarks/offline_kernels.py "residual_layernorm bf16 dynamic odd" "sum_3d_dim0 bf16 static odd"
    PYTHONPATH=/tmp/t36 python3 benchmarks/offline_kernels.py ...   # with the GPU machine's Triton

For each case (FUSION DTYPE {static,dynamic} SIZE, SIZE a suite size or extents of its own,
"M=8192/N=768"), the fusion's program is generated for
the GPU, one call is run with every launch intercepted (`launch.intercepted`: no kernel
runs, the inputs are CPU tensors of the case's real size), and each launched function is
compiled for sm_90 as the JIT would specialize those arguments (`schedule_ab._resources`:
Triton's own ptxas). One line a launch: grid, blocks and warps, registers a thread, spill,
programs an SM by registers and threads, SASS instructions, and the global loads and stores
by vector width. The register counts of Triton 3.6 (the GPU machine's; install it beside
with `pip install --no-deps --target /tmp/t36 triton==3.6.0`) matched Nsight Compute's on the
H200 for the looped column sum (64). Nothing here is a time: it explains one, or tells two
forms apart before a GPU is had.

`--rule NAME` prints each case twice, built and called with a rule of `schedule_ab.RULES`
in its old form ("old", the rule function patched as the A/B patches it) and as it is
("new"): the A/B's two builds read offline.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import schedule_ab as sab  # noqa: E402
from suite_fusions import FUSIONS  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch, register_cap, resident_rows  # noqa: E402


def sass_instructions(cubin: bytes) -> int:
    """Instructions in a cubin's SASS (cuobjdump of Triton's wheel)."""
    import triton

    tool = Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(cubin)
        fh.flush()
        sass = subprocess.run([str(tool), "-sass", fh.name], capture_output=True, text=True, check=True).stdout
    return len(re.findall(r"/\*[0-9a-f]{4}\*/\s+\S", sass))


def case_lines(case: str, rule: str | None = None, old: bool = False) -> list[str]:
    """One line per kernel launch of one call of the case (see the module docstring); with
    `rule` and `old`, built and called under that rule's old form. A launch that the
    register cap (`register_cap.occupancy_cap`, H100/H200 limits) would recompile gets its
    capped build after `cap N:`, whether or not it spills (the launcher keeps it only where
    it does not); a persistent row launch that `resident_rows.halve` would try at half its
    rows gets that build after `rows N:`, and whether `resident_rows.keep_halved` keeps it."""
    fusion, dtype, extents, size = case.split()
    f = FUSIONS[fusion]
    if "=" in size:  # extents of the case's own
        size = sab.case_extents(fusion, size, False)
    text = f.text(dtype, extents == "dynamic", size)
    seen: list[tuple[Any, tuple, tuple, dict, int]] = []
    with sab.RULES[rule].applied(old) if rule else contextlib.nullcontext():
        if rule and (old or sab.RULES[rule].new):  # its own name: the program cache keys the builds apart
            suffix = sab.old_suffix(sab.RULES[rule]) if old else sab.new_suffix(sab.RULES[rule])
            text = text.replace(f"@{f.name}(", f"@{f.name}{suffix}(", 1)
        exe = allotment.compile(text)
        source = exe.source("cuda")
        module = sab._load_program(source, Path(tempfile.mkdtemp()), "offline")
        with launch.intercepted(lambda k, g, a, c, w: seen.append((k, g, a, c, w))):
            exe(*f.make_inputs(size, dtype, "cpu"))
    if rule:
        case = f"{case} {'old' if old else 'new'}"
    lines = []
    row_kernels = set(re.findall(r"kernel, \(bm, bn, warps\) = (\w+), rt\.persistent_blocks\(", source))
    for k, grid, kargs, consts, warps in seen:
        name = k.fn.__name__ if hasattr(k, "fn") else k.__name__
        r = sab._resources(getattr(module, name), kargs, consts, warps, keep_cubin=True)
        blocks = f"{consts.get('BLOCK_M', 1)}x{consts.get('BLOCK_N', 0)}"
        per_sm = sab.programs_per_sm(r["regs"], warps, r["shared"])
        line = (f"{case:40s} {name:22s} grid {grid[0]:7d} {blocks:>9s} {warps:2d} warps {r['regs']:3d} regs "
                f"spill {r['stack']:3d} B {per_sm:2d} programs/SM  sass {sass_instructions(r['cubin']):5d}  "
                f"{r['access']}")
        programs = grid[0] * (grid[1] if len(grid) > 1 else 1) * (grid[2] if len(grid) > 2 else 1)
        cap = register_cap.occupancy_cap(r["regs"], warps, r["shared"], programs, register_cap.SMLimits(), allowed=True)
        if cap is not None:
            c = sab._resources(getattr(module, name), kargs, consts, warps, keep_cubin=True, maxnreg=cap)
            capped = sab.programs_per_sm(c["regs"], warps, c["shared"])
            line += (f"  | cap {cap}: {c['regs']} regs spill {c['stack']} B {capped} programs/SM "
                     f"sass {sass_instructions(c['cubin'])}")
        bm = consts.get("BLOCK_M", 1)
        if (name in row_kernels and
                resident_rows.halve(r["regs"], warps, r["shared"], bm, programs, register_cap.SMLimits(), allowed=True)):
            h = sab._resources(getattr(module, name), kargs, {**consts, "BLOCK_M": bm // 2}, warps, keep_cubin=True)
            kept = resident_rows.keep_halved((r["regs"], warps, r["shared"]), (h["regs"], warps, h["shared"]),
                                             h["stack"], register_cap.SMLimits())
            line += (f"  | rows {bm // 2}: {h['regs']} regs spill {h['stack']} B "
                     f"{sab.programs_per_sm(h['regs'], warps, h['shared'])} programs/SM, {'kept' if kept else 'not kept'}")
        lines.append(line)
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cases", nargs="+", help='"FUSION DTYPE {static,dynamic} SIZE"')
    p.add_argument("--rule", choices=sorted(sab.RULES), help="each case in the rule's old form and as it is")
    args = p.parse_args(argv)
    import triton

    print(f"# offline_kernels: sm_90, triton {triton.__version__}, torch {torch.__version__}"
          + (f", rule {args.rule} old and new" if args.rule else ""))
    for case in args.cases:
        for old in ((True, False) if args.rule else (False,)):
            for line in case_lines(case, args.rule, old):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
