"""Which launches get ALIGN > 1 (`Emitter.aligned`): every fusion of the suite and of
`unseen_fusions.py`, at every size, dtype, static and `?`, called on the CPU with its
launches intercepted (no kernel runs). One line per case with such a launch:

    python3 benchmarks/align_cases.py > benchmarks/results/align_hint_cases_DATE.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

import unseen_fusions  # noqa: E402
from suite_fusions import FUSIONS, SuiteFusion  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402


def aligned_launches(f: SuiteFusion, size: str, dtype: str, dynamic: bool) -> list[tuple[str, int]]:
    """(function, ALIGN) of each launch of one call that takes ALIGN > 1."""
    seen: list[tuple[str, object]] = []
    exe = allotment.compile(f.text(dtype, dynamic, size))
    xs = f.make_inputs(size, dtype, "cpu")
    with launch.intercepted(lambda k, g, a, c, w: seen.append((getattr(k, "__name__", "") or k.fn.__name__,
                                                               c.get("ALIGN")))):
        exe(*xs)
    return [(name, a) for name, a in seen if isinstance(a, int) and a > 1]


def main() -> int:
    unseen_fusions.register()
    for name, f in FUSIONS.items():
        for size in ("small", "odd", "large"):
            if size not in f.sizes:
                continue
            for dtype in ("bf16", "f32"):
                for dynamic in (False, True):
                    hit = aligned_launches(f, size, dtype, dynamic)
                    if hit:
                        print(name, size, dtype, "?" if dynamic else "static", hit, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
