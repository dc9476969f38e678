"""How a looped softmax-style row reduction should stream its row, on the GPU.

    python3 benchmarks/softmax_loop_variants.py [--shapes 4096x32000,1234x50257] [--quick]

Cross-entropy over a vocabulary row (the suite's `cross_entropy`: the row's max, the
sum of exp(x - max), the label's logit by `iota == label`) written by hand as Triton
kernels that differ in one decision each, timed against each other, against
Allotment's generated kernels and against torch.compile, in one process:

- `lane`: per-lane online softmax (each lane keeps its own max and rescales its own
  sum every step: two exps per element), every tile masked, the label loaded every
  step: the shape of the looped kernel Allotment generated before this measurement;
- `row`: the running max is the row's (a tile max per step, one exp per element for
  the tile and one per row for the rescale);
- `*_even`: full tiles without masks, the last partial tile masked after the loop;
- `two_pass`: the max in one loop, the sum of exps in a second (the row read twice).

Each with BLOCK_N columns a step and `warps` warps, one row a program. Prints µs and
TB/s (bytes read once over time). Nothing here is a target figure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from measure import kernel_ms  # noqa: E402


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def ce_lane(x_ptr, lab_ptr, out_ptr, N, stride, BLOCK_N: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    m = tl.full((1, BLOCK_N), float("-inf"), tl.float32)
    s = tl.zeros((1, BLOCK_N), tl.float32)
    p = tl.zeros((1, BLOCK_N), tl.float32)
    lab = tl.load(lab_ptr + row)
    full = (N // BLOCK_N) * BLOCK_N if EVEN else 0
    for start in range(0, full, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        x = tl.load(base + cols).to(tl.float32)
        new = _max_nan(m, x)
        s = tl.where(new == float("-inf"), 0.0, s * tl.exp(m - new) + tl.exp(x - new))
        m = new
        p = p + tl.where(cols.to(tl.int64) == lab, x, 0.0)
    for start in range(full, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        mask = cols < N
        x = tl.load(base + cols, mask=mask, other=0).to(tl.float32)
        xr = tl.where(mask, x, float("-inf"))
        new = _max_nan(m, xr)
        s = tl.where(new == float("-inf"), 0.0, s * tl.exp(m - new) + tl.exp(xr - new))
        m = new
        lab_i = tl.load(lab_ptr + row + tl.zeros((1, 1), tl.int32))  # every step, as generated
        p = p + tl.where(mask, tl.where(cols.to(tl.int64) == lab_i, x, 0.0), 0.0)
    mx = tl.max(m, 1)[:, None]
    tot = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - mx)), 1)[:, None]
    loss = tl.log(tot) + mx - tl.sum(p, 1)[:, None]
    tl.store(out_ptr + row + tl.zeros((1, 1), tl.int32), loss)


@triton.jit
def ce_row(x_ptr, lab_ptr, out_ptr, N, stride, BLOCK_N: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    m = tl.full((1, 1), float("-inf"), tl.float32)
    s = tl.zeros((1, BLOCK_N), tl.float32)
    p = tl.zeros((1, BLOCK_N), tl.float32)
    lab = tl.load(lab_ptr + row)
    full = (N // BLOCK_N) * BLOCK_N if EVEN else 0
    for start in range(0, full, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        x = tl.load(base + cols).to(tl.float32)
        new = _max_nan(m, tl.max(x, 1)[:, None])
        s = s * tl.exp(m - new) + tl.exp(x - new)
        s = tl.where(new == float("-inf"), 0.0, s)
        m = new
        p = p + tl.where(cols.to(tl.int64) == lab, x, 0.0)
    for start in range(full, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        mask = cols < N
        x = tl.load(base + cols, mask=mask, other=float("-inf")).to(tl.float32)
        new = _max_nan(m, tl.max(x, 1)[:, None])
        s = s * tl.exp(m - new) + tl.exp(x - new)
        s = tl.where(new == float("-inf"), 0.0, s)
        m = new
        p = p + tl.where(cols.to(tl.int64) == lab, tl.where(mask, x, 0.0), 0.0)
    loss = tl.log(tl.sum(s, 1)[:, None]) + m - tl.sum(p, 1)[:, None]
    tl.store(out_ptr + row + tl.zeros((1, 1), tl.int32), loss)


@triton.jit
def ce_two_pass(x_ptr, lab_ptr, out_ptr, N, stride, BLOCK_N: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * stride
    m = tl.full((1, BLOCK_N), float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        x = tl.load(base + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m = _max_nan(m, x)
    mx = tl.max(m, 1)[:, None]
    lab = tl.load(lab_ptr + row)
    s = tl.zeros((1, BLOCK_N), tl.float32)
    p = tl.zeros((1, BLOCK_N), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        mask = cols < N
        x = tl.load(base + cols, mask=mask, other=float("-inf")).to(tl.float32)
        s = s + tl.exp(x - mx)
        p = p + tl.where(cols.to(tl.int64) == lab, tl.where(mask, x, 0.0), 0.0)
    loss = tl.log(tl.sum(s, 1)[:, None]) + mx - tl.sum(p, 1)[:, None]
    tl.store(out_ptr + row + tl.zeros((1, 1), tl.int32), loss)


KERNELS = {"lane": (ce_lane, False), "lane_even": (ce_lane, True), "row": (ce_row, False),
           "row_even": (ce_row, True), "two_pass": (ce_two_pass, False)}


def _one_shape(m: int, n: int, quick: bool, only: str) -> None:
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    lab = torch.randint(0, n, (m,), device="cuda")
    ref = torch.nn.functional.cross_entropy(x.float(), lab, reduction="none")
    out = torch.empty(m, device="cuda", dtype=torch.float32)
    gb = x.numel() * x.element_size() / 1e9
    if only:
        name, bn, w = only.split(":")
        k, even = KERNELS[name]
        for _ in range(20):
            k[(m,)](x, lab, out, n, x.stride(0), BLOCK_N=int(bn), EVEN=even, num_warps=int(w))
        torch.cuda.synchronize()
        return

    def eager() -> torch.Tensor:
        return torch.nn.functional.cross_entropy(x.float(), lab, reduction="none")

    comp = torch.compile(eager)
    comp()
    print(f"{m}x{n} bf16: eager {kernel_ms(eager) * 1e3:.1f} us, torch.compile {kernel_ms(comp) * 1e3:.1f} us")
    configs = [(2048, 8)] if quick else [(bn, w) for bn in (1024, 2048, 4096) for w in (4, 8, 16)]
    for name, (k, even) in KERNELS.items():
        for bn, w in configs:
            def run(k=k, even=even, bn=bn, w=w) -> None:  # noqa: ANN001
                k[(m,)](x, lab, out, n, x.stride(0), BLOCK_N=bn, EVEN=even, num_warps=w)
            run()
            err = (out - ref).abs().max().item()
            ms = kernel_ms(run, rep=60)
            print(f"  {name:10s} {bn:5d} x {w:2d} warps {ms * 1e3:8.1f} us {gb / ms:6.2f} TB/s  max err {err:.1e}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default="4096x32000,1234x50257")
    p.add_argument("--quick", action="store_true", help="2048 x 8 warps only")
    p.add_argument("--only", default="", help="one variant:BN:warps, run 20 times (for ncu)")
    args = p.parse_args()
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    for shape in args.shapes.split(","):
        m, n = (int(v) for v in shape.split("x"))
        _one_shape(m, n, args.quick, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
