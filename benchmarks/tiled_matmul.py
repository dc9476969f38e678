"""Tiled matmul against the vendor library, for the library kernels that `alloc-place`
may schedule `tiled` (`analysis/library_matmul.py`), on the GPU.

    python3 benchmarks/tiled_matmul.py [--shapes 16x32x8,...] [--dtype bf16]

For each M x N x K (a linear: x [M, K], weight [N, K], bias [N]), in one process and on
the same inputs: the fusion compiled with its default schedule and with
ALLOT_TILED_MATMUL_OUTPUTS=0 (always the vendor library, through torch), plus torch
eager's `F.linear` and torch.compile of it. Per variant: GPU time (`measure.kernel_ms`,
median, µs) and host µs per call (`measure.host_us`: calls queued, one synchronize).
The schedule each compiled fusion got is printed beside it; outputs are checked against
eager first.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import measure  # noqa: E402

import allotment  # noqa: E402

SHAPES = "16x32x8,32x256x64,16x1024x1024,16x4096x1024,64x1024x1024,256x256x256,256x256x4096,128x512x2048,512x512x512"
DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def text(m: int, n: int, k: int, ty: str) -> str:
    x, w, b, y = f"tensor<{m}x{k}x{ty}>", f"tensor<{n}x{k}x{ty}>", f"tensor<{n}x{ty}>", f"tensor<{m}x{n}x{ty}>"
    return (f"func.func @lin(%x: {x}, %w: {w}, %b: {b}) -> {y} {{\n"
            f"  %y = fusion.linear %x, %w, %b : {x}, {w}, {b} -> {y}\n  func.return %y : {y}\n}}\n")


def compiled(src: str, vendor: bool):  # noqa: ANN201
    old = os.environ.get("ALLOT_TILED_MATMUL_OUTPUTS")
    if vendor:
        os.environ["ALLOT_TILED_MATMUL_OUTPUTS"] = "0"
    try:
        exe = allotment.compile(src)
        schedule = "tiled" if "_tiled_" in exe.program("cuda").source else "vendor"
        return exe, schedule
    finally:
        if old is None:
            os.environ.pop("ALLOT_TILED_MATMUL_OUTPUTS", None)
        else:
            os.environ["ALLOT_TILED_MATMUL_OUTPUTS"] = old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    a = ap.parse_args()
    print(f"linear {a.dtype} on {torch.cuda.get_device_name()}: GPU us (median) / host us per call", flush=True)
    for spec in a.shapes.split(","):
        m, n, k = (int(v) for v in spec.split("x"))
        print(f"{m}x{n}x{k}: " + " | ".join(_time_shape(m, n, k, a.dtype)), flush=True)


def _time_shape(m: int, n: int, k: int, ty: str) -> list[str]:
    dt = DTYPES[ty]
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(m, k, device="cuda", generator=g).to(dt)
    w = (torch.randn(n, k, device="cuda", generator=g) * k**-0.5).to(dt)
    b = torch.randn(n, device="cuda", generator=g).to(dt)
    want = F.linear(x, w, b)
    comp = torch.compile(lambda x, w, b: F.linear(x, w, b))
    cells = []
    for name, fn in (("default", None), ("vendor", None), ("eager", lambda: F.linear(x, w, b)),
                     ("compile", lambda: comp(x, w, b))):
        label = name
        if fn is None:
            exe, schedule = compiled(text(m, n, k, ty), vendor=name == "vendor")
            fn = (lambda exe=exe: exe(x, w, b))
            label = f"{name}({schedule})"
        got = fn()
        got = got[0] if isinstance(got, (tuple, list)) else got
        tol = 2e-2 if dt != torch.float32 else 1e-4
        ok = torch.allclose(got.float(), want.float(), rtol=tol, atol=tol * 4)
        gpu = measure.kernel_ms(fn) * 1e3
        host = measure.host_us(fn, 1000)
        cells.append(f"{label} {gpu:6.1f} / {host:5.1f}{'' if ok else ' WRONG'}")
    return cells

if __name__ == "__main__":
    main()
