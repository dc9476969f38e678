"""The Triton kernels torch.compile (Inductor) generates for a suite case, to read beside
Allotment's (`offline_kernels.py`, `exe.source("cuda")`) where Inductor is faster:

    python3 benchmarks/inductor_kernels.py "alibi_epilogue bf16 static odd" [--unseen] [--out DIR]

One case per argument (FUSION DTYPE {static,dynamic} SIZE, as `offline_kernels.py`), compiled
with torch.compile(dynamic=False or True) on the GPU, its generated module printed (or
written to DIR/<case>.py). `--unseen` adds `unseen_fusions.py`'s fusions to the suite's.
Needs a CUDA device: Inductor generates Triton only for one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from suite_fusions import FUSIONS  # noqa: E402


def inductor_code(case: str) -> str:
    """The source of every module Inductor generated for one call of the case."""
    from torch._inductor.utils import run_and_get_code

    fusion, dtype, kind, size = case.split()
    f = FUSIONS[fusion]
    xs = f.make_inputs(size, dtype, "cuda")
    torch._dynamo.reset()
    fn = torch.compile(f.torch_fn, dynamic=kind == "dynamic")
    _, codes = run_and_get_code(fn, *xs)
    return "\n\n".join(codes)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cases", nargs="+")
    p.add_argument("--unseen", action="store_true")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("inductor_kernels: needs a CUDA device")
        return 2
    if a.unseen:
        import unseen_fusions

        unseen_fusions.register()
    for case in a.cases:
        code = inductor_code(case)
        if a.out:
            Path(a.out).mkdir(parents=True, exist_ok=True)
            (Path(a.out) / (case.replace(" ", "_") + ".py")).write_text(code)
            print(f"{case}: {len(code.splitlines())} lines")
        else:
            print(f"# ---- {case}\n{code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
