"""GPU check of 64-bit indexing (not collected by pytest): tensors of more than 2^31 elements.

A pointwise fusion and a normalization over bf16 tensors of 2^31 + 2^20
elements (4.3 GB each), compiled and compared with eager torch on a sample of
rows (first, last, and around the 2^31 boundary).

    python3 tests/gpu/check_large.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from gpu_suite import fusion_text, rmsnorm_torch  # noqa: E402

import allotment  # noqa: E402


def main() -> int:
    hidden = 4096
    rows = (2**31 + 2**20) // hidden
    x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
    print(f"x: {x.numel()} elements ({x.numel() >= 2**31 and 'over' or 'under'} 2^31)", flush=True)
    boundary = 2**31 // hidden
    sample = torch.cat([torch.arange(0, 4), torch.arange(boundary - 2, boundary + 2), torch.arange(rows - 4, rows)]).cuda()
    (y,) = allotment.compile(fusion_text("bias_gelu", hidden))(x, b)
    expect = torch.nn.functional.gelu(x[sample].float() + b.float(), approximate="tanh").to(torch.bfloat16)
    torch.testing.assert_close(y[sample], expect, rtol=2e-2, atol=2e-2)
    print("bias_gelu over 2^31 elements: sampled rows match", flush=True)
    del y
    (z,) = allotment.compile(fusion_text("rmsnorm", hidden))(x, b)
    torch.testing.assert_close(z[sample], rmsnorm_torch(x[sample], b)[0], rtol=2e-2, atol=2e-2)
    print("rmsnorm over 2^31 elements: sampled rows match", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
