"""Merges fusion-suite result files: later files' cases replace earlier ones with the same
(fusion, dtype, extents, size), e.g. a full run followed by re-runs of the cases a fix
touched. Prints the merged summary (`fusion_suite.summarize`) and, with --markdown, writes
the merged table, each case marked with the file it came from.

    python3 benchmarks/suite_merge.py RUN.json [RERUN.json ...] [--markdown OUT.md]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from fusion_suite import markdown, summarize  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("files", nargs="+")
    p.add_argument("--markdown", default=None)
    a = p.parse_args()
    merged: dict[tuple, dict] = {}
    for f in a.files:
        for r in json.loads(Path(f).read_text())["results"]:
            merged[(r["fusion"], r["dtype"], r["extents"], r["size"])] = dict(r, source=Path(f).name)
    rows = list(merged.values())
    summary = summarize(rows)
    print(json.dumps({k: v for k, v in summary.items() if k not in ("skipped",)}, indent=1, default=str))
    if a.markdown:
        Path(a.markdown).write_text(markdown(rows, summary, {"merged from": ", ".join(Path(f).name for f in a.files)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
