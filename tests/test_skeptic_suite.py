"""The skeptic's benchmark method (benchmarks/skeptic_suite.py, kernel_timing.py, suite_fd.py,
memory_suite.py's bounds), on the CPU.

- every suite fusion written through `suite_fd.FdBuilder` (the builder nvFuser's column
  uses) on Allotment's `FusionDefinition` matches its torch function, static and `?`;
- interleaved repeats take every side's sample in turn and report min/median/max;
- the summary's headline, targets, % of copy distribution and memory-bound check on
  made-up rows (a peak under the bound is flagged and the exit status is 2);
- the library-matmul bound of memory_suite counts a matmul's non-input operands;
- `--cpu-check` end to end on two fusions: eager, torch.compile (aot_eager: the dynamo
  path, not Inductor's C++ compile, to stay quick), Allotment through Triton's
  interpreter, the nvFuser column recording that it does not import; one JSON with the
  commit, the Markdown generated from it, and a merge of it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import kernel_timing as kt  # noqa: E402
import memory_suite  # noqa: E402
import skeptic_suite  # noqa: E402
import suite_fd  # noqa: E402
from suite_fusions import FUSIONS, check_outputs  # noqa: E402

import allotment  # noqa: E402


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_the_fd_builder_writes_every_fusion(dynamic: bool) -> None:
    for name, f in FUSIONS.items():
        fd = suite_fd.define(f, allotment, "bf16", dynamic, f.sizes["tiny"])
        xs = f.make_inputs("tiny", "bf16", "cpu")
        assert check_outputs(fd.execute(xs), f.torch_fn(*xs), "bf16") is None, name


class _Fake(kt.Timer):
    method = "fake"

    def __init__(self, log: list[str], name: str, values: list[float]) -> None:
        self.log, self.name, self.values = log, name, list(values)

    def prepare(self, call: Any, sets: Any) -> None:
        pass

    def sample(self) -> float:
        self.log.append(self.name)
        return self.values.pop(0)


def test_repeats_are_interleaved_with_their_spread() -> None:
    log: list[str] = []
    a = kt.Side("a", lambda s: None, timer=_Fake(log, "a", [0.003, 0.001, 0.002]))
    b = kt.Side("b", lambda s: None, timer=_Fake(log, "b", [0.01, 0.03, 0.02]))
    kt.interleave([a, b], 3)
    assert log == ["a", "b"] * 3
    assert kt.spread(a.samples) == pytest.approx({"min": 1.0, "median": 2.0, "max": 3.0, "n": 3})
    assert kt.spread([]) is None
    assert kt.input_sets_needed(10 << 20, 50 << 20) == 6
    assert kt.input_sets_needed(1 << 30, 50 << 20) == 1


def _row(fusion: str, ext: str, size: str, allot: float, **cols: float) -> dict[str, Any]:
    times = {"allotment": {"min": allot * 0.9, "median": allot, "max": allot * 1.1, "n": 5}}
    times.update({c: {"min": v, "median": v, "max": v, "n": 5} for c, v in cols.items()})
    r: dict[str, Any] = {"fusion": fusion, "dtype": "bf16", "extents": ext, "size": size, "memory_bound": True,
                         "status": "ok", "times": times, "vs": {c: v / allot for c, v in cols.items()}}
    comp = {c: v for c, v in cols.items() if c.startswith("compile")}
    best = min(comp, key=lambda c: comp[c])
    r["best_compile"], r["vs"]["compile_best"] = best, comp[best] / allot
    r["pct_copy"] = 100 * 50 / allot
    r["memory"] = {"inputs": 100, "outputs": 50, "lower_bound": 150, "peak_total": {"allotment": 150, "eager": 300},
                   "peak_over_in_out": {"allotment": 1.0, "eager": 2.0}, "violations": []}
    return r


def test_summary_uses_medians_and_flags_a_peak_under_the_bound() -> None:
    rows = [_row("a", "static", "large", 100, compile=130, nvfuser=90),
            _row("a", "dynamic", "large", 100, compile=200, compile_static=80),
            _row("b", "static", "odd", 50, compile=60)]
    s = skeptic_suite.summarize(rows)
    assert s["static_geomean_vs_compile"] == pytest.approx((1.3 * 1.2) ** 0.5)
    assert s["dynamic_geomean_vs_compile_static"] == pytest.approx(0.8)
    assert s["worst_vs_best_compile"][0] == pytest.approx(0.8)
    assert len(s["below_09_vs_best_compile"]) == 1 and "[90.0-110.0]" in s["below_09_vs_best_compile"][0]
    assert s["nvfuser_geomean"] == pytest.approx(0.9) and len(s["nvfuser_wins"]) == 1
    assert s["pct_copy_large"]["median"] == pytest.approx(50) and s["pct_copy_odd"]["n"] == 1
    assert s["targets"]["no case below 0.9x the fastest compile"].startswith("NOT met")
    assert skeptic_suite._status(s) == 0
    rows[0]["memory"]["violations"] = ["eager"]
    s = skeptic_suite.summarize(rows)
    assert s["memory_bound_violations"] == ["a bf16 static large: eager"] and skeptic_suite._status(s) == 2
    text = skeptic_suite.markdown(rows, s, {"commit": "x"})
    assert "## Targets" in text and "130.0 [130.0-130.0]" in text


def test_the_library_bound_counts_a_matmuls_operands() -> None:
    case = {c.name: c for c in memory_suite.CASES}["attention"]
    xs = case.inputs(0.002, "cpu")  # q [1, 8, 64], kt [1, 64, 8], v [1, 8, 64], bf16
    out = sum(o.numel() * o.element_size() for o in case.torch_fn(*xs))
    b = memory_suite.bounds(case, xs, out)
    assert b["bound"] == 3 * 8 * 64 * 2 + out
    assert b["bound_library"] == 3 * 8 * 64 * 2 + 8 * 8 * 2 + out  # p [1, 8, 8] bf16 beside the output
    row = dict(b)
    memory_suite.check_bounds(row, {"allotment": out - 1, "eager": 8 * 8 * 2 + out})
    assert row["violations"] == ["allotment"] and row["under_library_bound"] == ["allotment"]


def test_cpu_check_runs_the_whole_harness(tmp_path: Path) -> None:
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    status = skeptic_suite.main(["--cpu-check", "--fusions", "rmsnorm_fwd,kv_cat", "--dtypes", "bf16",
                                 "--repeats", "2", "--host-calls", "3", "--compile-backend", "aot_eager",
                                 "--out", str(out), "--markdown", str(md)])
    assert status == 0
    d = json.loads(out.read_text())
    assert d["meta"]["commit"] and d["meta"]["nvfuser"].startswith(("not importable", "nvfuser_direct"))
    rows = d["results"]
    assert len(rows) == 10 and {r["status"] for r in rows} == {"ok"}, [r.get("error") for r in rows]
    for r in rows:
        cols = {"eager", "compile", "allotment"} | ({"compile_static"} if r["extents"] == "dynamic" else set())
        assert cols <= set(r["times"]), r["times"].keys()
        assert all(r["times"][c]["n"] == 2 for c in cols)
        assert r["memory"]["lower_bound"] == r["bytes"]
        if d["meta"]["nvfuser"].startswith("not importable"):
            assert r["errors"]["nvfuser"].startswith("not importable")
    small = [r for r in rows if r["size"] == "small"]
    assert small and small[0]["host"]["kernels"] >= 1
    assert "## Cases" in md.read_text()
    merged = tmp_path / "m.json"
    assert skeptic_suite.main(["--merge", str(out), "--fill-plan", "--out", str(merged)]) == 0
    m = json.loads(merged.read_text())
    assert len(m["results"]) == 210 and m["summary"]["ok"] == 10


def test_a_merged_run_keeps_each_commands_metadata() -> None:
    small = {"commit": "c", "date": "d1", "argv": "--sizes small,odd", "elapsed_s": 174.4, "max_autotune_warmed": False}
    large = {"commit": "c", "date": "d2", "argv": "--sizes large", "elapsed_s": 300.0, "max_autotune_warmed": True}
    m = skeptic_suite.merged_meta([small, large], ["a.json", "b.json"])
    assert m["max_autotune_warmed"] and m["elapsed_s"] == 474.4 and m["merged_from"] == "a.json, b.json"
    assert [p["argv"] for p in m["parts"]] == ["--sizes small,odd", "--sizes large"]
    assert not skeptic_suite.merged_meta([small], ["a.json"])["max_autotune_warmed"]


def test_fresh_functions_compile_apart() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    g = skeptic_suite.fresh_function(f, "tag")
    assert g.__code__ is not f.__code__ and g(torch.ones(2)).tolist() == [2.0, 2.0]


def test_each_case_is_compared_with_a_copy_of_its_own_bytes() -> None:
    timed: list[int] = []

    def copy_4_bytes_a_ns(n: int) -> float:  # a copy at 4 TB/s: 4n bytes in n / 1000 µs
        timed.append(n)
        return n / 1000

    # row_sum (134 MB) after softmax (268 MB): once both read the 268 MB copy's time (206%)
    row_sum, softmax = 16384 * 4096 * 2 + 16384 * 2, 2 * 16384 * 4096 * 2
    assert skeptic_suite.copy_reference_us(softmax, copy_4_bytes_a_ns) == pytest.approx(softmax / 4000)
    assert skeptic_suite.copy_reference_us(row_sum, copy_4_bytes_a_ns) == pytest.approx(row_sum / 4000)
    assert timed == [softmax // 4, row_sum // 4]
    # above the largest copy timed whole: that copy's bandwidth, linearly
    big = 3 * skeptic_suite.COPY_REFERENCE_MAX_BYTES + 2
    assert skeptic_suite.copy_reference_us(big, copy_4_bytes_a_ns) == pytest.approx(big / 4000)
    assert timed[-1] == skeptic_suite.COPY_REFERENCE_MAX_BYTES // 4
    assert skeptic_suite.copy_reference_us(3, copy_4_bytes_a_ns) == pytest.approx(3 / 4000)
    assert skeptic_suite.copy_reference_us(0, copy_4_bytes_a_ns) is None
    # a count that is not whole 4096-element blocks is timed at the next whole one (torch's
    # copy at its fastest), and scaled back to the case's bytes
    odd = 4 * (2**20 + 1000)
    assert skeptic_suite.copy_reference_us(odd, copy_4_bytes_a_ns) == pytest.approx(odd / 4000)
    assert timed[-1] == 2**20 + 4096
    assert skeptic_suite.copy_reference_us(4 * 5000, copy_4_bytes_a_ns) == pytest.approx(5000 / 1000)
    assert timed[-1] == 5000  # a small copy is timed as it is


def test_the_runner_times_one_copy_per_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skeptic_suite, "import_nvfuser", lambda: (None, "not imported"))
    runner = skeptic_suite.Runner(argparse.Namespace(cpu_check=True, repeats=2))
    samples = iter([1.0, 2.0, 3.0, 4.0])
    monkeypatch.setattr(kt, "interleave", lambda sides, repeats: [s.samples.append(next(samples) / 1e3) for s in sides])
    a, b = runner.copy_us(4096), runner.copy_us(4000)  # one power of two, two sizes
    assert sorted(runner._copy) == [1000, 1024] and a != b
    assert runner.copy_us(4096) == a  # cached by size


def test_sizes_pick_a_subset_of_the_groups() -> None:
    """`--sizes` (a sweep's subset): only the groups of those sizes, in the plan's order."""
    groups = skeptic_suite.plan(["rmsnorm_fwd", "kv_cat"], ["bf16"], ["odd"])
    assert groups and {g.size for g in groups} == {"odd"}
    assert [g.fusion for g in groups] == ["rmsnorm_fwd", "kv_cat"]
    assert len(skeptic_suite.plan(["rmsnorm_fwd"], ["bf16"])) > len(skeptic_suite.plan(["rmsnorm_fwd"], ["bf16"], ["odd"]))


def test_warming_max_autotune_builds_each_large_group_once(capsys: pytest.CaptureFixture[str]) -> None:
    """`--warm-max-autotune` compiles and calls each large group's max-autotune build (one
    definition with the run's column, `max_autotune_compile`) and times nothing; on the CPU
    (`--cpu-check`) at the tiny extents."""
    status = skeptic_suite.main(["--warm-max-autotune", "--cpu-check", "--fusions", "rmsnorm_fwd,kv_cat",
                                 "--dtypes", "bf16", "--compile-backend", "aot_eager"])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("warm: ")]
    assert status == 0 and len(lines) == 2, out
    assert all(line.endswith(" s") for line in lines), lines


def test_the_copy_reference_estimate_scales_only_references_that_are_not_whole_blocks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`copy_reference_estimate.py` on a results file: a case whose copy reference was timed
    at whole 4096-element blocks keeps its % of copy; one timed at another count is scaled by
    its reference's bandwidth over the fast copy's."""
    import copy_reference_estimate

    whole, other = 4 * 2**20, 4 * (2**20 + 1000)
    rows = [  # references at 2.0 TB/s; the fast copy given as 4.0
        {"fusion": "a", "dtype": "bf16", "extents": "static", "size": "odd", "memory_bound": True,
         "bytes": whole, "copy_us": whole / 2e6, "pct_copy": 90.0},
        {"fusion": "b", "dtype": "bf16", "extents": "static", "size": "odd", "memory_bound": True,
         "bytes": other, "copy_us": other / 2e6, "pct_copy": 80.0},
    ]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"results": rows}))
    assert copy_reference_estimate.main([str(path), "--fast-odd", "4.0"]) == 0
    out = capsys.readouterr().out
    assert "1 references not whole blocks" in out
    assert "lowest five (estimated): b bf16 static 40%, a bf16 static 90%" in out
