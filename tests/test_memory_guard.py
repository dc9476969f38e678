"""`allot-run` refuses a CPU run that cannot fit in memory before it draws its inputs
(`allotment.tools.memory_guard`): on Linux such a run is otherwise killed by the operating
system, with no message."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.allocation import memory_plan
from allotment.errors import RunError
from allotment.ir import find_function, load_module
from allotment.tools import allot_run, memory_guard

ROOT = Path(__file__).resolve().parents[1]
RMSNORM = str(ROOT / "examples" / "rmsnorm.mlir")


def test_available_is_the_lower_of_meminfo_and_the_cgroup(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n")
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    assert memory_guard.available_bytes(meminfo, cgroup) == 20000000 * 1024  # no cgroup files
    (cgroup / "memory.max").write_text("max\n")
    (cgroup / "memory.current").write_text("1000\n")
    assert memory_guard.available_bytes(meminfo, cgroup) == 20000000 * 1024  # no limit
    (cgroup / "memory.max").write_text(f"{8 * 2**30}\n")
    (cgroup / "memory.current").write_text(f"{2**30}\n")
    assert memory_guard.available_bytes(meminfo, cgroup) == 7 * 2**30
    assert memory_guard.available_bytes(tmp_path / "none", tmp_path / "none") is None


def test_what_a_run_needs_at_least() -> None:
    fn = find_function(load_module(RMSNORM), None)
    profile = memory_plan(fn, {"x": (4096, 64)})
    arguments = sum(a.nbytes for a in profile.arguments)
    assert arguments >= 4096 * 64 * 2
    compiled = memory_guard.run_needs(profile, compiled=True, reference=False)
    reference = memory_guard.run_needs(profile, compiled=False, reference=True)
    assert compiled == profile.peak_with_arguments() >= arguments
    assert reference == arguments + profile.without_reuse
    assert memory_guard.run_needs(profile, compiled=True, reference=True) == max(compiled, reference)


def test_a_run_larger_than_memory_is_refused_with_both_figures() -> None:
    with pytest.raises(RunError, match=r"needs at least 2\.0 GiB .*\(x=8x8\).* 1\.0 GiB is available"):
        memory_guard.require_fits(2 * 2**30, "x=8x8", lambda: 2**30)
    memory_guard.require_fits(2**30, "x=8x8", lambda: 2**30)  # fits exactly
    memory_guard.require_fits(2**40, "x=8x8", lambda: None)  # unknown: never refused


@pytest.mark.parametrize("mode", [[], ["--check"], ["--reference"], ["--bench"]])
def test_allot_run_refuses_before_drawing_inputs(mode: list[str], monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    drawn: list[int] = []
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: 100_000)
    monkeypatch.setattr("allotment.reference.random_inputs", lambda *a, **k: drawn.append(1) or [])
    rc = allot_run.main([RMSNORM, "--shapes", "x=4096x64", *mode])
    err = capsys.readouterr().err
    assert rc == 1 and not drawn
    assert "needs at least" in err and "x=4096x64" in err and "Traceback" not in err, err


def test_allot_run_runs_what_fits(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: 2**30)
    rc = allot_run.main([RMSNORM, "--shapes", "x=4x64", "--check"])
    assert rc == 0, capsys.readouterr().err


def test_planning_only_modes_are_never_refused(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: 1)
    rc = allot_run.main([RMSNORM, "--shapes", "x=4096x64", "--memory-report"])
    assert rc == 0, capsys.readouterr().err


def test_a_gpu_run_needs_its_largest_input_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on a GPU draws each input on the CPU before moving it: the guard then asks for
    the largest input's bytes there, whatever the modes (the GPU reports its own OOM)."""
    import argparse

    import torch

    fn = find_function(load_module(RMSNORM), None)
    profile = memory_plan(fn, {"x": (4096, 64)})
    assert memory_guard.staging_needs(profile) == max(a.nbytes for a in profile.arguments) == 4096 * 64 * 2
    args = argparse.Namespace(device=torch.device("cuda"), parsed_shapes={"x": (4096, 64)}, parsed_scalars={})
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: 4096 * 64 * 2 - 1)
    with pytest.raises(RunError, match=r"x=4096x64.*use smaller --shapes\)"):
        allot_run._require_memory(args, fn, [allot_run.run_check])
    monkeypatch.setattr(memory_guard, "available_bytes", lambda: 4096 * 64 * 2)
    allot_run._require_memory(args, fn, [allot_run.run_check])  # the reference's need is not the cpu's here
