"""A/B of edits to a split reduction's first stage or an inner-outer kernel, on the GPU.

    python3 benchmarks/split_loop_variants.py [--cases bn_stats:large,full_sum:large]
        [--dtype bf16] [--blocks gen,1024x4,2x4096x16] [--sass-only]

For each case (a suite fusion at one size, static extents, whose first kernel is a
split reduction's first stage or an inner-outer row kernel) this compiles the fusion with Allotment, captures the
arguments of that launch and times the kernel as generated and with each edit applied
to its source text:

- `full`: the loop over the program's chunk runs as two loops, the tiles wholly inside
  [lo, min(lo + chunk, N)) with no mask on the reduced index, then the last partial
  tile masked (what `row_loop` does for a looped row kernel);
- `rcp`: a one-pass var_mean's per-step weights 1 / k and k / (k + 1) come from
  `rcp.approx.ftz` (two instructions each), not from IEEE divisions;
- `full_n` (inner-outer, a static row that fills BLOCK_N): the row's mask a constant;
- `hoist`: loads indexed by the column only (a weight) before the loop over row blocks;

at each BLOCK_N x warps (or BLOCK_M x BLOCK_N x warps) of `--blocks` (`gen`: the
generated blocks), every output
buffer checked against the generated kernel's. torch.compile and the whole Allotment
call are timed in the same process. `--sass-only` compiles each variant for sm_90
offline (no GPU) and prints its SASS instruction count per loop instead. Nothing here
is a target figure: it decides what the code generator emits. Since commit fe5af0d the
generated kernels have `full` (inner splits with a var_mean), `hoist` and three stages
for rows of 4096+ (`backend/kernels/inner_outer.py`), so those edits find nothing to change
there; the figures of the decisions are in
`benchmarks/results/split_loop_variants_h200_2026-12-01_0518.txt` and
`split_loop_variants_inner_outer_h200_2026-12-01_0526.txt`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from looped_kernel_variants import (  # noqa: E402
    _header,
    _load,
    _sass_count,
    apply_edits,
    capture_first_launch,
    cli,
    start_case,
)

RCP_HELPER = '''
@triton.jit
def _rcp_approx(x):
    return tl.inline_asm_elementwise("rcp.approx.ftz.f32 $0, $1;", "=r,r", [x],
                                     dtype=tl.float32, is_pure=True, pack=1)
'''

LOOP = "    for step in range(0, chunk, BLOCK_N):\n"


def _full(src: str) -> str:
    assert LOOP in src, "no single masked loop over the chunk"
    start = src.index(LOOP)
    end = start + len(LOOP)
    lines = src[end:].split("\n")
    n = next(i for i, line in enumerate(lines) if line and not line.startswith("        "))
    body = "\n".join(lines[:n]) + "\n"
    rest = "\n".join(lines[n:])
    full = body.replace("mask_n = (rn < N)[None, :]", "mask_n = tl.full((1, BLOCK_N), 1, tl.int1)")
    full = full.replace("        mask_n = mask_n & (rn < lo + chunk)[None, :]\n", "")
    assert full != body, "no reduced-index mask in the loop"
    head = ("    clen = tl.maximum(tl.minimum(N - lo, chunk), 0)\n"
            "    n_full = clen // BLOCK_N * BLOCK_N\n"
            "    for step in range(0, n_full, BLOCK_N):\n")
    return src[:start] + head + full + "    for step in range(n_full, clen, BLOCK_N):\n" + body + rest


def _rcp(src: str) -> str:
    src, n1 = re.subn(r"(wr\d+) = 1\.0 / tl\.maximum\((wn\d+), 1\.0\)", r"\1 = _rcp_approx(tl.maximum(\2, 1.0))", src)
    src, n2 = re.subn(r"(wf\d+) = (wn\d+) / \((wn\d+) \+ 1\.0\)", r"\1 = 1.0 - _rcp_approx(\2 + 1.0)", src)
    assert n1 and n2, "no one-pass var_mean step"
    return src


def _full_n(src: str) -> str:
    old = "    mask_n = (rn < N)[None, :]\n"
    assert old in src, "no row mask before the loop"
    return src.replace(old, "    mask_n = tl.full((1, BLOCK_N), 1, tl.int1)\n", 1)


def _hoist(src: str) -> str:
    pat = re.compile(r"        (ld\d+) = tl\.load\((in\d+_ptr) \+ \(i1 \* in\d+_s0\), mask=mask_n, other=0\)\n"
                     r"        (t\d+) = \1\.to\(tl\.float32\)\n")
    found = pat.findall(src)
    assert found, "no column-only load in the loop"
    for m in pat.finditer(src):
        line = m.group(0)
        src = src.replace(line, "")
        src = src.replace("    for tile in", line.replace("        ", "    ") + "    for tile in", 1)
    return src


def _stages(n: int) -> Callable[[str], str]:
    def edit(src: str) -> str:
        old = "tl.range(pid, tiles_m, programs, num_stages=2)"
        assert old in src, "no pipelined row loop"
        return src.replace(old, f"tl.range(pid, tiles_m, programs, num_stages={n})" if n > 1 else "range(pid, tiles_m, programs)")

    return edit


EDITS = {
    "split_partial": {"generated": [], "full": [_full], "full+rcp": [_full, _rcp]},
    "persistent": {"generated": [], "full_n": [_full_n], "hoist": [_hoist], "full_n+hoist": [_full_n, _hoist],
                   "hoist+stages1": [_hoist, _stages(1)], "hoist+stages3": [_hoist, _stages(3)]},
}


def _one_case(case: str, args: argparse.Namespace, tmp: Path, dev: str) -> None:
    """Times (or compiles, `--sass-only`) every variant of one case's first kernel."""
    c = capture_first_launch(case, args.dtype, dev)
    program, name, grid, kargs, cx, warps, xs = c.program, c.name, c.grid, c.args, c.constexprs, c.warps, c.inputs
    kind = next((k for k in EDITS if k in name), None)
    if kind is None:
        print(f"{case}: first kernel {name} is neither a split's first stage nor an inner-outer kernel; skipped")
        return
    src = start_case(c, case, args)
    inputs = {x.data_ptr() for x in xs}  # every other tensor argument is written by the kernel
    outs = [i for i, a in enumerate(kargs) if isinstance(a, torch.Tensor) and a.data_ptr() not in inputs]
    ref = None
    for tag, edits in EDITS[kind].items():
        text = apply_edits(src, tag, edits)
        if text is None:
            continue
        k = _load(_header(program) + RCP_HELPER, text, name, tmp, f"split_{tag.replace('+', '_')}")
        for blocks in args.blocks.split(","):
            if blocks == "gen":
                consts, w = dict(cx), warps
            elif blocks.count("x") == 2:
                bm, bn, w = (int(v) for v in blocks.split("x"))
                consts = dict(cx, BLOCK_M=bm, BLOCK_N=bn)
            else:
                bn, w = (int(v) for v in blocks.split("x"))
                consts = dict(cx, BLOCK_N=bn)
            label = f"{consts['BLOCK_M']}x{consts['BLOCK_N']}x{w}"
            if args.sass_only:
                print(f"  {tag:10s} {label:12s} {_sass_count(k, kargs, consts, w)}")
                continue
            from measure import kernel_ms

            run = lambda k=k, consts=consts, w=w: k[grid](*kargs, **consts, num_warps=w)  # noqa: E731
            run()
            got = [kargs[i].clone() for i in outs]
            if ref is None:
                ref = got
            err = max(((g.float() - r.float()).abs() / (r.float().abs() + 1)).max().item() for g, r in zip(got, ref, strict=True))
            us = kernel_ms(run, rep=100) * 1e3
            print(f"  {tag:10s} {label:12s} {us:8.1f} us  max rel diff vs generated {err:.1e}")


def main() -> int:
    return cli(__doc__, _one_case, "bn_stats:large,bn_stats:odd,full_sum:large,bias_grad:large",
               "gen,1024x4,2048x4,2048x8,4096x8")


if __name__ == "__main__":
    sys.exit(main())
