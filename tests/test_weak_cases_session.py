"""benchmarks/weak_cases_session.sh on the CPU (`CPU_CHECK=1`): each A/B step builds the old
and the new rule, checks them against torch and reports a changed program; the GPU-only steps
say they were not run; the weak fusions' suite step runs its path and writes its table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_cpu_check_runs_every_ab_step(tmp_path: Path) -> None:
    env = {**os.environ, "CPU_CHECK": "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "benchmarks/weak_cases_session.sh", str(tmp_path), "300"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "ab_unrolled: ok" in out and "ab_two_tile: ok" in out and "ab_magic: ok" in out, out
    assert "reread, ncu and cuda_tests not run" in out, out
    for rule, log in (("unrolled_outer", "ab_unrolled.log"), ("two_tile_rows_at_run_time", "ab_two_tile.log"),
                      ("magic_division", "ab_magic.log")):
        rows = [line for line in (tmp_path / log).read_text().splitlines() if line.startswith(rule + " ")]
        assert len(rows) == 1 and " yes " in rows[0] and " ok " in rows[0], rows
    assert (tmp_path / "session.log").read_text().rstrip().splitlines()[-1].startswith("session: ")


def test_cpu_check_runs_the_weak_fusions_suite(tmp_path: Path) -> None:
    env = {**os.environ, "CPU_CHECK": "1", "STEPS": "cuda_tests suite_weak", "WEAK_FUSIONS": "bn_stats",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "benchmarks/weak_cases_session.sh", str(tmp_path), "300"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "suite_weak: ok" in out, out
    assert not (tmp_path / "cuda_tests.log").exists(), out
    table = (tmp_path / "weak_suite.md").read_text()
    assert "bn_stats bf16 `?` odd" in table, table
