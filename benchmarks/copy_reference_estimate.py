"""Re-reads a skeptic-suite results file whose % of copy predates the whole-block copy
reference (`skeptic_suite.COPY_BLOCK_ELEMENTS`): which cases' copy was timed at an element
count that is not whole 4096-element blocks (torch's slow copy path), the bandwidth each
reference ran at, and an ESTIMATE of each such case's % of copy against the fast path,
scaling by the case's reference bandwidth over a fast copy's (given on the command line;
2.97 TB/s for 2**26 elements and 2.89 for 2**25 on an H100, `copy_reference_probe.py`).
An estimate, not a measurement: the fast copy's bandwidth at each case's own size is not
known from the file. A rerun of the suite measures it.

    python3 benchmarks/copy_reference_estimate.py benchmarks/results/skeptic_suite_h100_2026-12-07_1720.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

import skeptic_suite  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results")
    p.add_argument("--fast-large", type=float, default=2.97, help="TB/s of the fast copy at the large size")
    p.add_argument("--fast-odd", type=float, default=2.89, help="TB/s of the fast copy at the odd size")
    a = p.parse_args(argv)
    rows = [r for r in json.load(open(a.results))["results"]
            if r.get("memory_bound") and r.get("size") in ("odd", "large") and r.get("copy_us")]
    for size, fast in (("large", a.fast_large), ("odd", a.fast_odd)):
        cases = []
        for r in (r for r in rows if r["size"] == size):
            n = max(1, min(r["bytes"], skeptic_suite.COPY_REFERENCE_MAX_BYTES) // 4)
            whole = n % skeptic_suite.COPY_BLOCK_ELEMENTS == 0
            bw = r["bytes"] / r["copy_us"] / 1e6
            cases.append((r["pct_copy"] * (1.0 if whole else bw / fast), r, whole, bw))
        if not cases:
            continue
        slow = [c for c in cases if not c[2]]
        print(f"{size}: {len(cases)} memory-bound cases; {len(slow)} references not whole blocks "
              f"(median {statistics.median(c[3] for c in slow) if slow else float('nan'):.2f} TB/s), "
              f"{len(cases) - len(slow)} whole "
              f"(median {statistics.median([c[3] for c in cases if c[2]] or [float('nan')]):.2f} TB/s)")
        print(f"  median % of copy as recorded {statistics.median(c[1]['pct_copy'] for c in cases):.0f}%, "
              f"estimated against the fast copy {statistics.median(c[0] for c in cases):.0f}%")
        low = sorted(cases, key=lambda c: c[0])[:5]
        print("  lowest five (estimated): " + ", ".join(
            f"{c[1]['fusion']} {c[1]['dtype']} {'`?`' if c[1]['extents'] == 'dynamic' else 'static'} {c[0]:.0f}%" for c in low))
        if size == "large":
            below = [c for c in cases if c[0] < 70]
            print("  below 70% (estimated): " + (", ".join(
                f"{c[1]['fusion']} {c[1]['dtype']} {'`?`' if c[1]['extents'] == 'dynamic' else 'static'} {c[0]:.0f}%"
                for c in below) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
