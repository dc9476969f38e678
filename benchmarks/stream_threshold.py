"""Where streaming a one-pass row beats holding it on chip, on the GPU.

    python3 benchmarks/stream_threshold.py [--rows 4096] [--cols 4096,8192,...] [--fusions cross_entropy]

For suite fusions whose streamed kernel reads the row once (cross-entropy: a max, the
sum of exp(x - max) and the label's logit), at a fixed row count and several row
lengths, bf16, static extents: Allotment's kernel time with the row held on chip where
it fits (`ALLOT_STREAM_ELEMENTS=0`) and with it streamed (`ALLOT_STREAM_ELEMENTS=1`),
the default placement (`analysis/capacity.py`'s threshold), and torch.compile, in one
process. Prints µs and TB/s (input bytes over time); the crossing point is the
threshold `alloc-place` uses.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import suite_fusions  # noqa: E402
from measure import kernel_ms  # noqa: E402

import allotment  # noqa: E402


def _compiled(text: str, stream: str | None, xs: list[torch.Tensor]) -> tuple[allotment.Executable, torch.Tensor]:
    """The executable and its first output, built (on the first call) under
    ALLOT_STREAM_ELEMENTS=stream (None: the default threshold)."""
    old = os.environ.pop("ALLOT_STREAM_ELEMENTS", None)
    if stream is not None:
        os.environ["ALLOT_STREAM_ELEMENTS"] = stream
    try:
        exe = allotment.compile(text)
        return exe, exe(*xs)[0]
    finally:
        os.environ.pop("ALLOT_STREAM_ELEMENTS", None)
        if old is not None:
            os.environ["ALLOT_STREAM_ELEMENTS"] = old


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", default="4096,8192,12288,16384,24576,32000")
    p.add_argument("--fusions", default="cross_entropy")
    p.add_argument("--dtype", default="bf16")
    args = p.parse_args()
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for name in args.fusions.split(","):
        f = suite_fusions.FUSIONS[name]
        for n in (int(c) for c in args.cols.split(",")):
            size = {"M": args.rows, "N": n}
            xs = f.make_inputs(size, args.dtype, "cuda")
            text = f.text(args.dtype, False, size)
            gb = sum(x.numel() * x.element_size() for x in xs) / 1e9
            ref = f.torch_fn(*xs)[0].float()
            line = [f"{name} {args.rows}x{n} {args.dtype}:"]
            for label, stream in (("held", "0"), ("streamed", "1"), ("default", None)):
                exe, out = _compiled(text, stream, xs)
                source = exe.programs["cuda"].source
                kinds = ",".join(sorted(set(re.findall(r"def k0_(persistent|looped)_?\(", source))))
                out = out.float()
                err = (out - ref).abs().max().item()
                ms = kernel_ms(lambda exe=exe, xs=xs: exe(*xs), rep=60)
                line.append(f"{label} {ms * 1e3:7.1f} us {gb / ms:5.2f} TB/s (err {err:.1e}; {kinds or '?'})")
            comp = torch.compile(f.torch_fn)
            comp(*xs)
            ms = kernel_ms(lambda comp=comp, xs=xs: comp(*xs), rep=60)
            line.append(f"torch.compile {ms * 1e3:7.1f} us")
            print("\n    ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
