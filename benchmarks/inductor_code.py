"""Prints the Triton kernels torch.compile (Inductor) generates for one suite fusion, with
their launch configurations (block sizes, warps), on the GPU:

    python3 benchmarks/inductor_code.py mean_3d_dim1 f16 static large

For reading how Inductor tiles a case where it is faster than Allotment.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import torch
from torch._inductor.utils import run_and_get_code

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import suite_fusions  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    suite_fusions.add_case_arguments(p)
    args = p.parse_args(argv)
    f = suite_fusions.FUSIONS[args.fusion]
    xs = f.make_inputs(args.size, args.dtype, "cuda")
    compiled = torch.compile(f.torch_fn, dynamic=args.extents == "dynamic")
    _, codes = run_and_get_code(compiled, *xs)
    for code in codes:
        keep = False
        for line in code.splitlines():
            if line.startswith("@triton_heuristics") or line.startswith("@triton.jit"):
                keep = True
            if keep:
                print(line)
            if keep and line.startswith("''', device_str="):
                keep = False
            elif re.search(r"\.run\(|grid=|num_warps", line) and not keep:
                print(line.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
