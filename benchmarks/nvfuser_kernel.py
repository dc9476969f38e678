"""nvFuser's generated CUDA kernels for one suite case, to read where nvFuser wins and why.

    NVFUSER_DUMP=cuda_kernel python3 benchmarks/nvfuser_kernel.py FUSION DTYPE {static,dynamic} SIZE

Defines the case with real nvFuser (`nvfuser_direct`, made importable by
`benchmarks/nvfuser_env.sh`) through the same build function as the suite
(`suite_fd.define`), runs it once on the case's inputs and prints nvFuser's kernels
(NVFUSER_DUMP=cuda_kernel is set here when not given), then checks the outputs against
the torch function. Needs a GPU.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("NVFUSER_DUMP", "cuda_kernel")
sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

import suite_fd  # noqa: E402
import torch  # noqa: E402
from suite_fusions import FUSIONS, add_case_arguments, check_outputs  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_case_arguments(p)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("nvfuser_kernel: needs a CUDA device")
        return 0
    import nvfuser_direct  # type: ignore[import-not-found]

    f = FUSIONS[a.fusion]
    fd = suite_fd.define(f, nvfuser_direct, a.dtype, a.extents == "dynamic", f.sizes[a.size])
    xs = f.make_inputs(a.size, a.dtype, "cuda")
    outs = fd.execute(xs)
    torch.cuda.synchronize()
    why = check_outputs(outs, f.torch_fn(*xs), a.dtype)
    print(f"{a.fusion} {a.dtype} {a.extents} {a.size}: " + ("outputs match torch" if why is None else f"MISMATCH: {why}"))
    return 0 if why is None else 1


if __name__ == "__main__":
    sys.exit(main())
