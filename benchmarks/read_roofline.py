"""What a kernel that only reads can reach on this GPU, beside the copy bandwidth.

    python3 benchmarks/read_roofline.py [--mib 128,512]

`fusion_suite.py` reports each fusion's (input + output bytes) / time as a percent of
a device-to-device copy's bandwidth (bytes read + written). A reduction writes almost
nothing, so its ceiling is the read bandwidth, which need not equal the copy's. This
times, on buffers of `--mib` MiB: the copy (`measure.copy_tbps`); torch's own full
reductions (`sum` of f32, of bf16 accumulated in f32, `amax`), which are tuned read
loops; and a Triton kernel that reads with 128-bit loads and sums into registers, one
persistent program per SM x 8 (the grid `split_reduction` aims for). Prints TB/s
(bytes read / time) and each as a percent of the copy. Nothing here is a target figure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

from measure import copy_tbps, kernel_ms  # noqa: E402


@triton.jit
def _read_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(pid * BLOCK, n, programs * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc, 0))


def _one_size(mib: int, sms: int) -> None:
    """Times every reader on buffers of `mib` MiB."""
    nbytes = mib * 2**20
    copy = copy_tbps(nbytes)  # as fusion_suite.py: a copy moving the same bytes in all
    print(f"{mib} MiB read: copy {copy:.2f} TB/s (read + written)")
    f32 = torch.randn(nbytes // 4, device="cuda")
    bf16 = torch.randn(nbytes // 2, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(sms * 8, device="cuda")
    cases = {
        "torch sum f32": (lambda: f32.sum(), nbytes),
        "torch sum bf16 -> f32": (lambda: bf16.sum(dtype=torch.float32), nbytes),
        "torch amax bf16": (lambda: bf16.amax(), nbytes),
        "triton read bf16 4096x8": (lambda: _read_sum[(sms * 8,)](bf16, out, bf16.numel(), BLOCK=4096, num_warps=8), nbytes),
        "triton read bf16 2048x4": (lambda: _read_sum[(sms * 8,)](bf16, out, bf16.numel(), BLOCK=2048, num_warps=4), nbytes),
        "triton read f32 2048x8": (lambda: _read_sum[(sms * 8,)](f32, out, f32.numel(), BLOCK=2048, num_warps=8), nbytes),
    }
    for name, (fn, b) in cases.items():
        fn()
        ms = kernel_ms(fn)
        tbps = b / (ms * 1e-3) / 1e12
        print(f"  {name:26s} {ms * 1e3:8.1f} us {tbps:6.2f} TB/s  {100 * tbps / copy:5.1f}% of copy")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", default="128,512")
    args = p.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"device: {torch.cuda.get_device_name()}, {sms} SMs, torch {torch.__version__}, triton {triton.__version__}")
    for mib in (int(v) for v in args.mib.split(",")):
        _one_size(mib, sms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
