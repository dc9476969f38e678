"""benchmarks/skeptic_session.sh on the CPU (`CPU_CHECK=1`): the session's shell path, with
the options that split one run over two device calls (`SIZES`, `SKIP_MEMORY`) and warm
max-autotune's builds first (`MAX_AUTOTUNE=1`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _session(out: Path, **env: str) -> str:
    full = {**os.environ, "CPU_CHECK": "1", **env,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "benchmarks/skeptic_session.sh", str(out), "400"], cwd=ROOT, env=full,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_one_size_without_the_memory_table(tmp_path: Path) -> None:
    """SIZES=odd SKIP_MEMORY=1: only the odd groups run (the rest are "not run" rows, which
    a second call's file fills in `--merge`), no memory table, and no max-autotune warm-up,
    since no large group runs."""
    log = _session(tmp_path, SIZES="odd", SKIP_MEMORY="1", MAX_AUTOTUNE="1")
    rows = json.loads((tmp_path / "skeptic_suite.json").read_text())["results"]
    ran = [r for r in rows if r["status"] != "not run"]
    assert ran and {r["size"] for r in ran} == {"odd"} and all(r["status"] == "ok" for r in ran)
    assert not (tmp_path / "memory.json").exists()
    assert "warmed" not in log


def test_max_autotune_is_warmed_before_the_suite(tmp_path: Path) -> None:
    """MAX_AUTOTUNE=1 with the large size in the run: warm-up processes build each large
    group's max-autotune compile before the suite, and the results say so."""
    log = _session(tmp_path, SIZES="large", SKIP_MEMORY="1", MAX_AUTOTUNE="1", WARM_PROCS="1", WARM_S="60")
    assert "max-autotune warmed at" in log and "1 builds" in log, log
    meta = json.loads((tmp_path / "skeptic_suite.json").read_text())["meta"]
    assert meta["max_autotune_warmed"] is True
