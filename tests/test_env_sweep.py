"""benchmarks/env_sweep.sh on the CPU (`CPU_CHECK=1`): each configuration runs the skeptic
suite's path in a process of its own with its settings, and its table lines are printed; a
configuration that fails says so and the next one runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_cpu_check_runs_each_configuration(tmp_path: Path) -> None:
    env = {**os.environ, "CPU_CHECK": "1", "FUSIONS": "bn_stats",
           "CONFIGS": "default p2112:ALLOT_SPLIT_PROGRAMS=2112 bad:ALLOT_INNER_SPLIT_BLOCKS=not-blocks",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "benchmarks/env_sweep.sh", str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    for name in ("default", "p2112"):
        lines = [line for line in done.stdout.splitlines() if line.startswith(name + " ") and " bn_stats " in line]
        assert len(lines) == 5 and all(" us " in line for line in lines), out  # 2 extents x 2 sizes + `?` small
        cases = json.loads((tmp_path / f"{name}.json").read_text())["results"]
        assert all(c["status"] == "ok" for c in cases), cases
    assert "bad: FAILED" in done.stdout, out
