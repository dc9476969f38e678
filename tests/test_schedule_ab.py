"""benchmarks/schedule_ab.py, the GPU A/B of a schedule rule, on the CPU (`--cpu-check`):
each case is built with the old rule and the new in one process, both checked against
torch, and the two programs differ where the rule applies (the old build has no second
tile); the old rule's patch is undone after the build."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import schedule_ab  # noqa: E402

from allotment.backend import host_codegen, host_runtime  # noqa: E402
from allotment.backend.kernels import row_reduction  # noqa: E402


def test_cpu_check_builds_both_rules_checks_and_times_them(capsys: pytest.CaptureFixture[str]) -> None:
    rc = schedule_ab.main(["--cpu-check", "--rules", "two_tile_rows", "--cases", "layernorm_fwd:odd,row_sum:odd", "--repeats", "2"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.split()[:1] == ["two_tile_rows"]]
    assert rc == 0 and len(rows) == 2, out
    for row in rows:
        assert " 2x1111 " in row and " yes " in row and " ok " in row, row


def test_the_old_build_holds_the_row_in_one_tile_and_the_patch_is_undone() -> None:
    rule = schedule_ab.RULES["two_tile_rows"]
    ext = schedule_ab.case_extents("rmsnorm_fwd", "odd", True)
    old = schedule_ab.build(rule, "rmsnorm_fwd", "bf16", ext, True, "cpu")
    new = schedule_ab.build(rule, "rmsnorm_fwd", "bf16", ext, False, "cpu")
    assert "BLOCK_T" not in old.source and "rt.persistent_blocks(M, N)" in old.source
    assert "BLOCK_T: tl.constexpr = 128" in new.source and "rt.persistent_blocks(M, N, 1024)" in new.source
    assert row_reduction.row_tiles is host_runtime.row_tiles


def test_a_rule_of_the_host_runtime_changes_the_launches_of_the_old_build_only() -> None:
    """`final_spread` changes no program text, only the launcher's blocks at run time: the
    old build's calls run with the old rule (64-column tiles), the new build's with the new."""
    rule = schedule_ab.RULES["final_spread"]
    ext = schedule_ab.case_extents("rmsnorm_bwd", "odd", True)
    builds = {tag: schedule_ab.build(rule, "rmsnorm_bwd", "bf16", ext, tag == "old", "cpu") for tag in ("old", "new")}
    xs = schedule_ab.FUSIONS["rmsnorm_bwd"].make_inputs(ext, "bf16", "cpu")
    finals = {tag: [c["BLOCK_N"] for name, _, c, _ in schedule_ab.launches(b, xs) if "column_final" in name]
              for tag, b in builds.items()}
    assert finals == {"old": [64], "new": [16]}
    assert schedule_ab.changed(builds, xs)
    assert host_runtime.inner_outer_final_blocks(1111, 264)[1] == 16


def test_a_case_the_rule_does_not_change_is_not_timed(capsys: pytest.CaptureFixture[str]) -> None:
    """Rows of 4096 fill one power-of-two tile: `two_tile_rows` leaves them alone, and the
    A/B says so instead of timing one program twice."""
    rc = schedule_ab.main(["--cpu-check", "--rules", "two_tile_rows", "--cases", "row_sum:large", "--repeats", "2"])
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if line.startswith("two_tile_rows")]
    assert rc == 0 and " no " in row and "not timed" in row, row


def test_the_row_major_rule_sets_the_flag_false_in_the_old_build_only() -> None:
    """`row_major`'s old build is the strided addressing before the linear form: the same
    kernel text, its launches with ROW_MAJOR False (the constexpr drops the linear form)."""
    rule = schedule_ab.RULES["row_major"]
    ext = schedule_ab.case_extents("amax_3d_dim2", "odd", True)
    builds = {tag: schedule_ab.build(rule, "amax_3d_dim2", "bf16", ext, tag == "old", "cpu") for tag in ("old", "new")}
    xs = schedule_ab.FUSIONS["amax_3d_dim2"].make_inputs(ext, "bf16", "cpu")
    flags = {tag: [c.get("ROW_MAJOR") for _, _, c, _ in schedule_ab.launches(b, xs)] for tag, b in builds.items()}
    assert flags == {"old": [False], "new": [True]}
    assert host_codegen._row_major_condition is not rule.old


def test_global_access_counts_loads_and_stores_by_vector_width() -> None:
    ptx = """
    ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
    @%p1 ld.global.L1::evict_last.v4.b32 { %r5, %r6, %r7, %r8 }, [ %rd2 + 0 ];
    ld.global.b16 { %rs1 }, [ %rd3 + 0 ];
    st.global.v2.b32 [ %rd4 + 0 ], { %r9, %r10 };
    """
    assert schedule_ab.global_access(ptx) == "ld v4:2 v1:1 st v2:1"
    assert schedule_ab.global_access("mov.u32 %r1, 0;") == "none"


def test_the_unrolled_outer_rule_launches_the_looped_tile_in_the_old_build_only() -> None:
    """`unrolled_outer`: the old build's calls launch the looped kernel, the new build's the
    unrolled one, from the same program text; the patch is undone after each call."""
    import torch

    rule = schedule_ab.RULES["unrolled_outer"]
    ext = {"B": 7, "S": 3, "H": 16}
    old = schedule_ab.build(rule, "sum_3d_dim0", "f32", ext, True, "cpu")
    new = schedule_ab.build(rule, "sum_3d_dim0", "f32", ext, False, "cpu")
    xs = [torch.randn(7, 3, 16)]
    assert [k for k, *_ in schedule_ab.launches(old, xs)] == ["k0_looped_"]
    assert [k for k, *_ in schedule_ab.launches(new, xs)] == ["k0_unrolled_"]
    assert host_runtime.unrolled_outer_blocks(4096, 7) is not None


def test_offline_kernels_reads_registers_and_accesses_without_a_gpu() -> None:
    """benchmarks/offline_kernels.py: one line per launch with registers and global accesses
    of the kernel compiled for sm_90 by Triton's own ptxas (no GPU)."""
    import offline_kernels

    lines = offline_kernels.case_lines("sum_3d_dim0 bf16 static small")
    assert len(lines) == 1 and "k0_unrolled_" in lines[0], lines
    regs = int(lines[0].split(" regs")[0].split()[-1])
    assert 8 <= regs <= 255 and " ld v" in lines[0] and " st v" in lines[0], lines


def test_offline_kernels_reads_a_rules_old_and_new_builds() -> None:
    """`offline_kernels.py --rule magic_division`: the old build of a BatchNorm statistics
    kernel over `?` extents divides with `//` (no FAST_DIV constexpr reaches its launch), the
    new one launches the multiply-high branch, with fewer SASS instructions."""
    import offline_kernels

    old = offline_kernels.case_lines("bn_stats bf16 dynamic tiny", "magic_division", old=True)
    new = offline_kernels.case_lines("bn_stats bf16 dynamic tiny", "magic_division", old=False)
    assert old and new and all(" old " in line for line in old) and all(" new " in line for line in new)
    sass = [int(lines[0].split(" sass ")[1].split()[0]) for lines in (old, new)]
    assert sass[1] < sass[0], (old, new)


def test_an_old_build_of_one_rule_is_never_another_rules_old_build() -> None:
    """The program cache keys programs by their text: were old builds of two rules named
    alike, the second rule's old build of a case would be the first rule's (a two-tile row
    where the old rule holds one tile), and its A/B would compare a program with itself."""
    ext = schedule_ab.case_extents("add_rmsnorm", "odd", True)
    cap = schedule_ab.RULES["register_cap"]
    tiles = schedule_ab.RULES["two_tile_rows"]
    first = schedule_ab.build(cap, "add_rmsnorm", "bf16", ext, True, "cpu")
    second = schedule_ab.build(tiles, "add_rmsnorm", "bf16", ext, True, "cpu")
    assert schedule_ab.old_suffix(cap) != schedule_ab.old_suffix(tiles)
    assert "BLOCK_T: tl.constexpr = 128" in first.source  # the register cap leaves the text alone
    assert "BLOCK_T" not in second.source  # two_tile_rows' own old form: one tile


def test_a_case_may_give_extents_of_its_own() -> None:
    """"NAME=VALUE/..." in place of a suite size: a shape from the field, checked against the
    fusion's extents."""
    assert schedule_ab.case_extents("layernorm_fwd", "M=32768/N=768", False) == {"M": 32768, "N": 768}
    assert schedule_ab.case_extents("layernorm_fwd", "M=32768/N=768", True) == {"M": 2, "N": 768}
    with pytest.raises(ValueError, match="layernorm_fwd: extents"):
        schedule_ab.case_extents("layernorm_fwd", "M=4/K=8", False)


def test_a_candidate_rules_new_build_runs_the_candidate_under_a_name_of_its_own() -> None:
    """A rule with `new` (a candidate, not the code's rule) builds and calls its new form with
    the candidate patched in, named apart from the code's own build of the case."""
    rule = schedule_ab.RULES["rows_within_8"]
    ext = {"B": 2, "S": 999}
    builds = {tag: schedule_ab.build(rule, "attention_epilogue", "bf16", ext, tag == "old", "cpu", True)
              for tag in ("old", "new")}
    xs = schedule_ab.FUSIONS["attention_epilogue"].make_inputs(ext, "bf16", "cpu")
    rows = {tag: [c["BLOCK_M"] for _, _, c, _ in schedule_ab.launches(b, xs)] for tag, b in builds.items()}
    assert rows == {"old": [4], "new": [2]}
    assert schedule_ab.new_suffix(rule) in builds["new"].source
    assert schedule_ab.old_suffix(rule) in builds["old"].source
    assert host_runtime.persistent_blocks(1998, 999) == (4, 1024, 8)  # the patch is undone


def test_the_inner_outer_sweep_builds_the_one_tile_form_it_names() -> None:
    """benchmarks/inner_outer_sweep.py: a configuration marked `one` holds a row of 1111 in one
    power-of-two tile (no BLOCK_T), the rule's own in 1024 + 128 lanes; both match torch."""
    import inner_outer_sweep
    from suite_fusions import check_outputs

    f = inner_outer_sweep.FUSIONS["layernorm_bwd"]
    ext = {"M": 2, "N": 1111}
    xs = f.make_inputs(ext, "bf16", "cpu")
    for tiles, split in (("one", False), ("", True)):
        cfg = inner_outer_sweep.Config("layernorm_bwd", "bf16", ext, "auto", "default", "cpu", tiles)
        assert ("BLOCK_T: tl.constexpr = 128" in cfg.exe.source("cpu")) == split
        assert check_outputs(cfg(*xs), f.torch_fn(*xs), "bf16") is None
