"""benchmarks/unseen_fusions.py on the CPU: its fusions match torch (static and `?`, f32 and
bf16), join the suite's table only when registered, and run through the skeptic suite's
CPU path."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks")]

import suite_fusions as sf  # noqa: E402
import unseen_fusions as unseen  # noqa: E402


def test_every_unseen_fusion_matches_torch_at_the_tiny_size(capsys) -> None:  # noqa: ANN001
    assert unseen.check(("tiny",)) == 0, capsys.readouterr().out


def test_the_suite_runs_them_on_the_cpu(tmp_path: Path) -> None:
    out = tmp_path / "unseen.json"
    unseen.main(["suite", "--cpu-check", "--fusions", "softcap_softmax", "--dtypes", "bf16", "--sizes", "small",
                 "--repeats", "2", "--host-calls", "2", "--compile-backend", "aot_eager", "--out", str(out)])
    rows = json.load(open(out))["results"]
    assert {r["fusion"] for r in rows} == {"softcap_softmax"}
    assert rows and all(r["status"] == "ok" and "allotment" in r["times"] for r in rows), rows


def test_registering_adds_them_without_replacing_a_suite_fusion() -> None:
    unseen.register()
    assert all(sf.FUSIONS[name] is f for name, f in unseen.UNSEEN.items())
    assert "batchnorm_fwd" in sf.FUSIONS and "batchnorm_fwd" not in unseen.UNSEEN
