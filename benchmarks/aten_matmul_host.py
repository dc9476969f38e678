"""Host µs per call and GPU µs of torch's matmul entries (addmm, mm, F.linear) on the
GPU, at small to large sizes: what a library kernel's vendor call costs.

    python3 benchmarks/aten_matmul_host.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path[:0] = [str(Path(__file__).resolve().parent)]

import measure  # noqa: E402

SHAPES = ((16, 8, 32), (16, 32, 8), (32, 64, 256), (256, 1024, 4096), (8192, 4096, 16384))


def entries(t: int, k: int, n: int) -> dict[str, Any]:
    x = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    o = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    wt = w.t()
    return {
        "addmm(out=)": lambda: torch.addmm(b, x, wt, out=o),
        "mm(out=)": lambda: torch.mm(x, wt, out=o),
        "mm(out=) + add_": lambda: (torch.mm(x, wt, out=o), o.add_(b)),
        "F.linear": lambda: F.linear(x, w, b),
        "F.linear nobias": lambda: F.linear(x, w),
        "addmm 2-D bias(out=)": lambda: torch.addmm(b.expand(t, n), x, wt, out=o),
    }


def main() -> None:
    for t, k, n in SHAPES:
        line = []
        for name, fn in entries(t, k, n).items():
            host = measure.host_us(fn, 3000 if t < 8192 else 50)
            gpu = do_bench(fn, warmup=10, rep=50) * 1e3
            line.append(f"{name} host {host:.1f} gpu {gpu:.1f}")
        print(f"[{t}x{k}] @ [{k}x{n}]: " + " | ".join(line), flush=True)


if __name__ == "__main__":
    main()
