"""Probe of the % of copy reference: a device copy of n bf16 elements into n others, timed
as the skeptic suite times its copy reference (`kernel_timing`: CUDA graphs over rotating
input sets >= 3x L2, interleaved repeats), for element counts near the suite's 2**26 and
2**25. On an H100 the suite's copy of exactly 2**26 elements read 90.7 us while
`l2_order_probe.py`'s copy of BatchNorm's bytes (2**26 + about 1,000 elements) read 111.6,
in the same session; this tells whether the element count alone explains that.

    python3 benchmarks/copy_reference_probe.py            # GPU, < 30 s
    python3 benchmarks/copy_reference_probe.py --cpu-check
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path[:0] = [str(Path(__file__).resolve().parent)]

import kernel_timing as kt  # noqa: E402

COUNTS = (2**26, 2**26 + 1, 2**26 + 1024, 2**26 + 4096, 2**26 - 1024, 2**25, 2**25 + 1024, 3 * 2**24)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cpu-check", action="store_true")
    a = p.parse_args(argv)
    dev = "cpu" if a.cpu_check or not torch.cuda.is_available() else "cuda"
    counts = [c // 2**16 for c in COUNTS] if dev == "cpu" else list(COUNTS)
    print(f"# copy_reference_probe: {torch.cuda.get_device_name() if dev == 'cuda' else 'cpu'}, "
          f"torch {torch.__version__}, repeats {a.repeats}; us median [min-max], TB/s of 4n bytes", flush=True)
    sides = []
    for n in counts:
        k = kt.input_sets_needed(4 * n, kt.l2_bytes()) if dev == "cuda" else 1
        sets = [[torch.randn(n, device=dev, dtype=torch.bfloat16), torch.empty(n, device=dev, dtype=torch.bfloat16)]
                for _ in range(k)]
        side = kt.Side(f"n={n}", lambda s: s[1].copy_(s[0]))
        kt.prepare(side, sets, dev)
        kt.interleave([side], a.repeats)
        kt.release([side])
        sp = kt.spread(side.samples)
        sides.append(side)
        if sp is None:
            print(f"n={n:>10d} not timed: {side.error}", flush=True)
            continue
        print(f"n={n:>10d} sets {k}  {sp['median']:8.1f} [{sp['min']:.1f}-{sp['max']:.1f}] us  "
              f"{4 * n / sp['median'] / 1e6:5.2f} TB/s", flush=True)
        del sets
    return 0


if __name__ == "__main__":
    sys.exit(main())
