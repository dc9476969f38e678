"""Sharded fusions on 2, 4 and 8 local gloo ranks (CPU), against the single-process reference.

Each group of cases runs in one process group started by `backend.launcher.launch`,
whose deadline turns a hang into a failure. Every rank compares each of its output
shards with the same shard of the reference evaluator's output, and its program's
allocations (`torch.empty` calls) with the plan for that rank: a buffer on a mesh
without the rank is planned at 0 bytes and not allocated. The 8-rank cases (a 2x4 mesh)
and `allot-run --nproc 4` are marked slow (`--run-slow`): eight processes on a small CPU.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import distributed_cases as cases
import pytest

from allotment.backend.launcher import launch
from allotment.errors import RunError
from allotment.tools.distributed_check import RankReport, run_cases

TIMEOUT_S = 240.0
ROOT = Path(__file__).resolve().parents[1]


def _run(group: list[tuple[str, str, str]], nproc: int) -> dict[str, list[RankReport]]:
    per_rank = launch(run_cases, nproc, ([(text, fn, {}) for _, text, fn in group],), timeout=TIMEOUT_S)
    return {cid: [reports[i] for reports in per_rank] for i, (cid, _, _) in enumerate(group)}


@pytest.fixture(scope="module")
def two_ranks() -> dict[str, list[RankReport]]:
    return _run(cases.TWO_RANK_CASES, 2)


@pytest.fixture(scope="module")
def four_ranks() -> dict[str, list[RankReport]]:
    return _run(cases.cases_for(4), 4)


@pytest.fixture(scope="module")
def eight_ranks() -> dict[str, list[RankReport]]:
    return _run(cases.cases_for(8), 8)


def _check(case: str, reports: list[RankReport], nproc: int) -> None:
    problems = cases.check_reports(case, reports, nproc)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", [c[0] for c in cases.TWO_RANK_CASES])
def test_two_ranks(two_ranks: dict[str, list[RankReport]], case: str) -> None:
    _check(case, two_ranks[case], 2)


@pytest.mark.parametrize("case", [c[0] for c in cases.cases_for(4)])
def test_four_ranks(four_ranks: dict[str, list[RankReport]], case: str) -> None:
    _check(case, four_ranks[case], 4)


@pytest.mark.many_ranks
@pytest.mark.parametrize("case", [c[0] for c in cases.cases_for(8)])
def test_eight_ranks(eight_ranks: dict[str, list[RankReport]], case: str) -> None:
    _check(case, eight_ranks[case], 8)


def test_grid_programs_communicate_within_mesh_rows_and_columns() -> None:
    """On a 2x4 mesh, each collective's group is the ranks that vary along its mesh axes:
    a row's 4 ranks along axis 1, a column's 2 along axis 0, all 8 along both (rank 5's
    programs; no processes)."""
    import allotment

    text = dict((c, t) for c, t, _ in cases.grid_cases(2, 4))
    reduce_src = allotment.compile(text["grid_all_reduce"]).rank_source("cpu", 5, 8)
    assert "drt.all_reduce_plan('sum', (4, 5, 6, 7))" in reduce_src
    assert "drt.all_reduce_plan('max', (1, 5))" in reduce_src
    assert "drt.all_reduce_plan('mean', (0, 1, 2, 3, 4, 5, 6, 7))" in reduce_src
    gather_src = allotment.compile(text["grid_all_gather"]).rank_source("cpu", 5, 8)
    assert "drt.all_gather_plan([(0, (1, 5)), (1, (4, 5, 6, 7))])" in gather_src
    scatter_src = allotment.compile(text["grid_reduce_scatter"]).rank_source("cpu", 5, 8)
    assert "drt.reduce_scatter_plan('sum', 1, (4, 5, 6, 7), 1)" in scatter_src  # shard 1 of its row


def test_collectives_used(two_ranks: dict[str, list[RankReport]]) -> None:
    """Each case communicates the way it should (the generated programs' calls)."""
    for case, calls in cases.EXPECTED_COLLECTIVES.items():
        if case not in two_ranks:
            continue  # a GPU-only case (tests/gpu/check_distributed.py)
        made = set().union(*(cases.runtime_calls(r.source) for r in two_ranks[case]))
        for call in cases.RUNTIME_CALLS:
            assert (call in made) == (call in calls), (case, call)


def test_collective_plans_fast_path_with_data() -> None:
    """The plans' fast path (the process group's own methods, as on NCCL) gives the
    reference's shards: on gloo, whose groups have those methods too."""
    group = [(text, fn, {}) for case, text, fn in cases.TWO_RANK_CASES if case in cases.NATIVE_CASES]
    per_rank = launch(cases.run_cases_native, 2, (group,), timeout=TIMEOUT_S)
    for rank, (_, native) in enumerate(per_rank):
        assert native == 6, f"rank {rank}: {native} plans took the fast path, want 6"  # 3 + 1 + 1 + 1
    for i, case in enumerate(c for c, _, _ in cases.TWO_RANK_CASES if c in cases.NATIVE_CASES):
        _check(case, [reports[i] for reports, _ in per_rank], 2)


def test_off_mesh_rank_allocates_nothing(two_ranks: dict[str, list[RankReport]]) -> None:
    """Pipeline stage 0 lives on rank 0 only, stage 1 on rank 1 only."""
    r0, r1 = two_ranks["pipeline"]
    assert r0.planned["h1"] == (0, False) and r1.planned["h"] == (0, False)
    assert not cases.off_mesh_problems("pipeline", two_ranks["pipeline"])
    assert not cases.off_mesh_problems("widen_mesh", two_ranks["widen_mesh"])


def test_hang_fails_within_the_deadline() -> None:
    with pytest.raises(RunError, match=r"did not finish within 5 s"):
        launch(cases.hang_unless_rank_zero, 2, timeout=5.0)


def test_too_few_ranks_is_an_error() -> None:
    with pytest.raises(RunError, match=r"mesh @four names device 2, but the process group has 2 ranks"):
        launch(run_cases, 2, ([(cases.TOO_FEW_RANKS, "needs_four", {})],), timeout=TIMEOUT_S)


def test_allot_run_nproc_check() -> None:
    exe = Path(sys.executable).with_name("allot-run")
    out = subprocess.run(
        [str(exe), str(ROOT / "examples" / "sharded_mlp.mlir"), "--nproc", "2", "--device", "cpu", "--check",
         "--timeout", str(TIMEOUT_S)],
        capture_output=True, text=True, timeout=TIMEOUT_S + 60,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "@column_parallel_mlp on 2 ranks (gloo)"
    assert len(lines) == 3 and all(line.endswith("PASS") for line in lines[1:]), lines
    assert "Traceback" not in out.stderr


@pytest.mark.many_ranks
@pytest.mark.parametrize("function", ["grid_mlp", "grid_logits"])
def test_allot_run_four_ranks_on_a_grid(function: str) -> None:
    """A 2x2 mesh: reduce_scatter within each mesh row, and an uneven all_gather along it."""
    exe = Path(sys.executable).with_name("allot-run")
    out = subprocess.run(
        [str(exe), str(ROOT / "examples" / "sharded_2x2.mlir"), "--func", function, "--nproc", "4",
         "--device", "cpu", "--check", "--timeout", str(TIMEOUT_S)],
        capture_output=True, text=True, timeout=TIMEOUT_S + 60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"@{function} on 4 ranks (gloo)"
    assert len(lines) == 5 and all(line.endswith("PASS") for line in lines[1:]), lines


def test_allot_run_nproc_uneven_shard_is_an_error(tmp_path: Path) -> None:
    """A dynamic extent that does not divide over its shards: one message naming it, exit 1."""
    path = tmp_path / "rows.mlir"
    path.write_text(cases.TP + """
func.func @rows(%x: tensor<?x16xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<?x16xf32, #fusion.sharding<@tp, [[0], []]>> {
  %y = fusion.neg %x : tensor<?x16xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %y : tensor<?x16xf32, #fusion.sharding<@tp, [[0], []]>>
}
""")
    exe = Path(sys.executable).with_name("allot-run")
    out = subprocess.run(
        [str(exe), str(path), "--nproc", "2", "--device", "cpu", "--shapes", "x=7x16", "--check",
         "--timeout", str(TIMEOUT_S)],
        capture_output=True, text=True, timeout=TIMEOUT_S + 60,
    )
    assert out.returncode == 1, out.stdout
    assert "Traceback" not in out.stderr
    assert "dimension 0 has extent 7, which does not divide evenly over 2 shards of mesh @tp" in out.stderr


def test_frontend_multidevice_execute() -> None:
    """FusionDefinition with DeviceMesh/parallelize/outer_split: execute takes each rank's shards."""
    assert launch(cases.frontend_multidevice, 2, timeout=TIMEOUT_S) == [[], []]


def test_mesh_groups_and_shard_indices() -> None:
    """Process groups vary along the communicating axes, in shard order (no processes)."""
    from allotment.backend.distributed_codegen import coordinates, group_along, shard_index
    from allotment.dialects.fusion import MeshOp

    mesh = MeshOp("grid", [2, 3], [5, 4, 3, 2, 1, 0])  # row-major ids, reversed
    assert coordinates(mesh, 5) == (0, 0) and coordinates(mesh, 0) == (1, 2)
    assert group_along(mesh, 3, [1]) == (5, 4, 3)  # row 0: 5, 4, 3
    assert group_along(mesh, 3, [0]) == (3, 0)  # column 2
    assert group_along(mesh, 1, [0, 1]) == (5, 4, 3, 2, 1, 0)
    assert [shard_index(mesh, d, [1]) for d in (5, 4, 3)] == [0, 1, 2]
    assert shard_index(mesh, 1, [0, 1]) == 4 and shard_index(mesh, 1, [1, 0]) == 3
