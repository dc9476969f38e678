"""The command-line tools: allot-run, allot-opt, and the stock xdsl-opt with our dialect.

A few runs go through real subprocesses (exit status, no traceback, stderr);
the rest call `allot_run.main(argv)` in-process to stay fast.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402

from allotment.tools import allot_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RMSNORM = str(ROOT / "examples" / "rmsnorm.mlir")
BIN = Path(sys.executable).parent

OUTPUT_LINE = re.compile(
    r"^out(\d+): shape=(\S+) dtype=(\w+) sum=(\S+) abs_sum=(\S+)$"
)

INVALID = """func.func @f(%a: tensor<?xf32>) -> tensor<?xi32> {
  %c = fusion.add %a, %a : tensor<?xf32>, tensor<?xf32> -> tensor<?xi32>
  func.return %c : tensor<?xi32>
}
"""
MALFORMED = """func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  %c = fusion.add %a, : tensor<?xf32>
}
"""
ADD = """func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = fusion.add %a, %b : tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}
"""
TWO_FUNCS = """func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.neg %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @second(%x: tensor<4xf32>, %s: f32, %n: index) -> (tensor<4xf32>, tensor<f32>, tensor<?xi64>) {
  %y = fusion.mul %x, %s : tensor<4xf32>, f32 -> tensor<4xf32>
  %t = fusion.sum %y dims [0] : tensor<4xf32> -> tensor<f32>
  %i = fusion.iota [%n] start %n step %n : index, index -> tensor<?xi64>
  func.return %y, %t, %i : tensor<4xf32>, tensor<f32>, tensor<?xi64>
}
"""


def write(tmp_path: Path, text: str, name: str = "f.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    modules = {"allot-run": "allotment.tools.allot_run", "allot-opt": "allotment.tools.allot_opt"}
    cmd = [sys.executable, "-m", modules[name]] if name in modules else [str(BIN / name)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = allot_run.main(list(args))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


# --------------------------------------------------------------------------- #
# allot-run in subprocesses                                                   #
# --------------------------------------------------------------------------- #


def test_allot_run_reference_on_the_rmsnorm_example() -> None:
    proc = tool("allot-run", RMSNORM, "--reference", "--shapes", "x=8x64")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    (line,) = proc.stdout.splitlines()
    m = OUTPUT_LINE.match(line)
    assert m and m.group(2, 3) == ("8x64", "bfloat16")
    assert float(m.group(5)) > 0


def test_allot_run_console_script_is_installed() -> None:
    assert (BIN / "allot-run").exists(), "allot-run is not installed next to this interpreter (pip install -e .)"
    proc = tool("allot-run", "--help")
    assert proc.returncode == 0
    assert "--reference" in proc.stdout and "--shapes" in proc.stdout


CHECK_LINE = re.compile(
    r"^out(\d+): shape=(\S+) dtype=(\w+) max_abs=(\S+) max_rel=(\S+) tol=(\S+) (PASS|FAIL)$"
)


def test_allot_run_compiled_check_on_the_rmsnorm_example() -> None:
    proc = tool("allot-run", RMSNORM, "--shapes", "x=8x64", "--device", "cpu", "--check")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    (line,) = proc.stdout.splitlines()
    m = CHECK_LINE.match(line)
    assert m and m.group(2, 3, 6, 7) == ("8x64", "bfloat16", "0.05", "PASS")
    assert float(m.group(4)) <= 0.25 and float(m.group(5)) <= 0.05


def test_allot_run_compile_error_is_reported(tmp_path: Path) -> None:
    proc = tool("allot-run", str(ROOT / "examples" / "sharded_mlp.mlir"), "--shapes", "x=4x64", "--check")
    assert proc.returncode == 1
    assert proc.stderr.startswith("allot-run: error: @column_parallel_mlp has sharded tensors")
    assert "Traceback" not in proc.stderr


def test_allot_run_missing_file() -> None:
    proc = tool("allot-run", "no/such/file.mlir", "--reference")
    assert proc.returncode == 1
    assert "no/such/file.mlir" in proc.stderr and "Traceback" not in proc.stderr


def test_allot_run_invalid_ir_is_located(tmp_path: Path) -> None:
    proc = tool("allot-run", write(tmp_path, INVALID, "bad.mlir"), "--reference")
    assert proc.returncode == 1
    assert re.search(r"bad\.mlir:2:3: error: fusion\.add: result #0 has type", proc.stderr)
    assert "Traceback" not in proc.stderr


def test_allot_run_parse_error(tmp_path: Path) -> None:
    proc = tool("allot-run", write(tmp_path, MALFORMED, "bad.mlir"), "--reference")
    assert proc.returncode == 1
    assert "bad.mlir:2:23" in proc.stderr and "operand expected" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_allot_run_run_time_error(tmp_path: Path) -> None:
    path = write(tmp_path, ADD, "add.mlir")
    proc = tool("allot-run", path, "--reference", "--shapes", "a=8x4,b=5x4")
    assert proc.returncode == 1
    assert proc.stderr.startswith("allot-run: error: fusion.add: dimension 0 extents differ at run time")
    assert "operand #0 (%a) has 8, operand #1 (%b) has 5" in proc.stderr
    assert "add.mlir:2:3" in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- #
# allot-run in-process                                                        #
# --------------------------------------------------------------------------- #


def test_compiled_matches_reference_output(capsys: pytest.CaptureFixture[str]) -> None:
    rc_c, compiled, err = in_process(capsys, RMSNORM, "--shapes", "x=8x64")
    rc_r, reference, _ = in_process(capsys, RMSNORM, "--shapes", "x=8x64", "--reference")
    assert rc_c == rc_r == 0, err
    (c,), (r,) = compiled.splitlines(), reference.splitlines()
    mc, mr = OUTPUT_LINE.match(c), OUTPUT_LINE.match(r)
    assert mc and mr and mc.group(2, 3) == mr.group(2, 3) == ("8x64", "bfloat16")
    assert float(mc.group(5)) == pytest.approx(float(mr.group(5)), rel=1e-2)


def test_compiled_run_time_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = in_process(capsys, write(tmp_path, ADD, "add.mlir"), "--shapes", "a=8x4,b=5x4")
    assert rc == 1 and out == ""
    assert err.startswith("allot-run: error: fusion.add: operand #0 (%a)")
    assert "(got 8 and 5)" in err


def test_shapes_too_large_for_an_input_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An input of 2^64 elements (torch: "Storage size calculation overflowed") is a user error
    naming the input and its shape, not an internal error."""
    rc, out, err = in_process(capsys, write(tmp_path, ADD, "add.mlir"), "--device", "cpu", "--shapes",
                              "a=4611686018427387904x4,b=4611686018427387904x4")
    assert rc == 1 and out == ""
    assert err.startswith("allot-run: error: @f: cannot make input a of shape 4611686018427387904x4"), err
    assert "internal error" not in err


def test_output_depends_only_on_the_seed(capsys: pytest.CaptureFixture[str]) -> None:
    runs = [in_process(capsys, RMSNORM, "--reference", "--shapes", "x=4x64", "--seed", s) for s in ("1", "1", "2")]
    assert all(rc == 0 for rc, _, _ in runs)
    assert runs[0][1] == runs[1][1] != runs[2][1]


def test_func_scalars_and_several_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, TWO_FUNCS)
    rc, out, err = in_process(capsys, path, "--reference", "--func", "second", "--scalars", "s=0,n=3")
    assert rc == 0, err
    lines = out.splitlines()
    assert [OUTPUT_LINE.match(line).group(1, 2, 3) for line in lines] == [
        ("0", "4", "float32"), ("1", "scalar", "float32"), ("2", "3", "int64"),
    ]
    assert lines[0].endswith("sum=0.0 abs_sum=0.0")
    assert lines[2].endswith("sum=18.0 abs_sum=18.0")  # 3, 6, 9


def test_default_scalars_and_first_function(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, TWO_FUNCS)
    rc, out, _ = in_process(capsys, path, "--reference")
    assert rc == 0 and out.startswith("out0: shape=4 dtype=float32")
    rc, out, _ = in_process(capsys, path, "--reference", "--func", "@second")
    assert rc == 0 and out.splitlines()[2] == "out2: shape=1 dtype=int64 sum=1.0 abs_sum=1.0"


def test_unknown_function(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = in_process(capsys, write(tmp_path, TWO_FUNCS), "--reference", "--func", "third")
    assert rc == 1
    assert err.strip() == "allot-run: error: no function named @third; available: @first, @second"


def test_shapes_may_be_repeated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, ADD)
    rc, out, _ = in_process(capsys, path, "--reference", "--shapes", "a=3x4", "--shapes", "b=3x4")
    assert rc == 0 and out.startswith("out0: shape=3x4 dtype=float32")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--shapes", "x=8xq"], "--shapes: cannot read the shape '8xq' of x"),
        (["--shapes", "x"], "--shapes: expected NAME=VALUE, got 'x'"),
        (["--shapes", "x=8x64,x=4x64"], "--shapes: x is given more than once"),
        (["--shapes", "x=8x64", "--scalars", "eps=small"], "--scalars: cannot read the value 'small' of eps"),
        (["--shapes", "x=8x64", "--scalars", "eps=1e-5"], "@rmsnorm has no scalar argument named eps"),
        (["--shapes", "x=8,64"], "--shapes: expected NAME=VALUE, got '64': extents are separated by 'x', "
                                 "arguments by ',' (did you mean x=8x64?)"),
        (["--shapes", "x=8x64", "--func", "nope"], "no function named @nope; available: @rmsnorm"),
    ],
)
def test_input_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    rc, out, err = in_process(capsys, RMSNORM, "--reference", *args)
    assert rc == 1 and out == ""
    assert err.startswith("allot-run: error: ") and message in err


def test_a_dynamic_extent_not_given_is_8_in_every_mode(capsys: pytest.CaptureFixture[str]) -> None:
    note = "allot-run: x: shape 8x64 (? extents default to 8; --shapes chooses)"
    for mode in (["--reference"], ["--memory-report"]):
        rc, out, err = in_process(capsys, RMSNORM, *mode)
        assert rc == 0, err
        assert err.strip() == note
    rc, out, _ = in_process(capsys, RMSNORM, "--reference")
    assert out.startswith("out0: shape=8x64 dtype=bfloat16")
    rc, _, err = in_process(capsys, RMSNORM, "--reference", "--shapes", "x=2x64")
    assert rc == 0 and err == ""  # a shape given is not announced


def test_help_says_what_a_missing_shape_becomes(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = in_process(capsys, "--help")
    assert rc == 0 and "required" not in out and "a ? extent not given is 8" in " ".join(out.split())


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = in_process(capsys, RMSNORM, "--reference", "--bogus")
    assert rc == 2 and "unrecognized arguments: --bogus" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_device_without_cuda(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = in_process(capsys, RMSNORM, "--reference", "--shapes", "x=2x64", "--device", "cuda")
    assert rc == 1 and "CUDA is not available" in err


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_device(capsys: pytest.CaptureFixture[str]) -> None:
    rc, cuda_out, err = in_process(capsys, RMSNORM, "--reference", "--shapes", "x=8x64", "--device", "cuda")
    assert rc == 0, err
    assert cuda_out.startswith("out0: shape=8x64 dtype=bfloat16 sum=")


EXAMPLE_SHAPES = {
    "rmsnorm.mlir": "x=4x64", "layernorm.mlir": "x=4x64", "softmax.mlir": "x=3x128",
    "bias_gelu.mlir": "x=4x64", "add_rmsnorm.mlir": "x=4x64,r=4x64",
}
"""Not mlp.mlir: its bf16 GELU output feeds a 4096-term matmul, which amplifies the interpreter's
bf16 truncation past the tolerance (exact once the interpreter rounds to nearest, as GPUs do;
tests/backend_check.py); tests/test_memory_planning_run.py checks it that way."""


@pytest.mark.parametrize("name", sorted(EXAMPLE_SHAPES))
def test_every_example_passes_check(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(ROOT / "examples" / name)
    rc, out, err = in_process(capsys, path, "--device", "cpu", "--check", "--shapes", EXAMPLE_SHAPES[name])
    assert rc == 0, out + err
    lines = out.splitlines()
    assert lines and all(CHECK_LINE.match(line).group(7) == "PASS" for line in lines), out


def test_check_reports_a_mismatch(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import allotment.reference

    evaluate = allotment.reference.evaluate
    monkeypatch.setattr(allotment.reference, "evaluate", lambda *a, **k: [t + 1 for t in evaluate(*a, **k)])
    rc, out, err = in_process(capsys, RMSNORM, "--check", "--shapes", "x=2x64")
    assert rc == 1
    m = CHECK_LINE.match(out.strip())
    assert m and m.group(7) == "FAIL" and float(m.group(4)) >= 0.5
    assert "1 of 1 outputs differ from the reference" in err


def test_check_of_integer_outputs_is_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, TWO_FUNCS)
    rc, out, err = in_process(capsys, path, "--func", "second", "--scalars", "s=0.5,n=3", "--check")
    assert rc == 0, err
    lines = [CHECK_LINE.match(line) for line in out.splitlines()]
    assert [m.group(1, 2, 3, 6, 7) for m in lines] == [
        ("0", "4", "float32", "0.0001", "PASS"), ("1", "scalar", "float32", "0.0001", "PASS"),
        ("2", "3", "int64", "exact", "PASS"),
    ]


def test_compiled_scalars_and_several_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, TWO_FUNCS)
    rc, out, err = in_process(capsys, path, "--func", "second", "--scalars", "s=0,n=3")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].endswith("sum=0.0 abs_sum=0.0")
    assert lines[2] == "out2: shape=3 dtype=int64 sum=18.0 abs_sum=18.0"


def test_bench(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = in_process(capsys, RMSNORM, "--bench", "--shapes", "x=2x64", "--device", "cpu")
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 3
    assert re.match(r"^time per call: [0-9.]+ us \(", lines[0])
    assert re.match(r"^bandwidth: [0-9.e+-]+ GB/s \(640 bytes of inputs and outputs\)$", lines[1])
    assert re.match(r"^host time per call: [0-9.]+ us \(", lines[2])


def test_dump_needs_no_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = in_process(capsys, RMSNORM, "--dump", "--device", "cpu")
    assert rc == 0, err
    assert re.search(r"^def run\(x_?, w_?\):$", out, re.MULTILINE), out  # IR names, sanitized
    assert "@triton.jit" in out and "torch.empty(" in out


def test_dump_check_and_bench_combine(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = in_process(capsys, RMSNORM, "--dump", "--check", "--bench", "--shapes", "x=2x64")
    assert rc == 0, err
    assert out.index("def run(") < out.index("out0: shape=2x64") < out.index("time per call:")


def test_reference_combines_with_no_other_mode(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = in_process(capsys, RMSNORM, "--reference", "--check", "--shapes", "x=2x64")
    assert rc == 2 and out == ""
    assert "--reference combines with no other mode" in err


def test_unsupported_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "func.func @f(%s: f32) -> f32 {\n  %r = math.exp %s : f32\n  func.return %r : f32\n}\n")
    rc, _, err = in_process(capsys, path, "--reference")
    assert rc == 1 and "not supported by the reference evaluator: math.exp" in err


def test_parse_helpers() -> None:
    assert allot_run.parse_shapes(["x=8x4096,w=4096", "s="]) == {"x": (8, 4096), "w": (4096,), "s": ()}
    assert allot_run.parse_scalars(["eps=1e-5,n=4", "flag=true"]) == {"eps": 1e-5, "n": 4, "flag": True}


# --------------------------------------------------------------------------- #
# allot-opt and xdsl-opt                                                      #
# --------------------------------------------------------------------------- #


def test_allot_opt_valid() -> None:
    proc = tool("allot-opt", RMSNORM)
    assert proc.returncode == 0, proc.stderr
    assert "fusion.mean %sq dims [1] keepdim" in proc.stdout


def test_allot_opt_invalid_ir_is_located(tmp_path: Path) -> None:
    proc = tool("allot-opt", write(tmp_path, INVALID, "bad.mlir"))
    assert proc.returncode == 1
    assert re.search(r"bad\.mlir:2:3: error: fusion\.add: result #0 has type tensor<\?xi32>", proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_allot_opt_parse_error(tmp_path: Path) -> None:
    proc = tool("allot-opt", write(tmp_path, MALFORMED, "bad.mlir"))
    assert proc.returncode == 1
    assert re.match(r"\S*bad\.mlir:2:23: error: ", proc.stderr), proc.stderr
    assert "Traceback" not in proc.stderr


def test_allot_opt_pass_error_is_located(tmp_path: Path) -> None:
    src = "func.func @f(%x: tensor<4xf32>) {\n  scf.execute_region {\n    scf.yield\n  }\n  func.return\n}\n"
    proc = tool("allot-opt", write(tmp_path, src, "regions.mlir"), "-p", "fusion-segment")
    assert proc.returncode == 1 and proc.stdout == ""
    assert re.match(r"\S*regions\.mlir:2:3: error: scf\.execute_region: fusion-segment: ", proc.stderr), proc.stderr
    assert "Traceback" not in proc.stderr


def test_allot_debug_shows_the_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOT_DEBUG", "1")
    proc = tool("allot-opt", write(tmp_path, INVALID, "bad.mlir"))
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "bad.mlir:2:3: error: fusion.add" in proc.stderr


def test_allot_opt_version() -> None:
    from importlib.metadata import version

    import allotment

    proc = tool("allot-opt", "--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"allot-opt: Allotment {allotment.__version__}, xDSL {version('xdsl')}"


def test_allot_opt_help_lists_allotments_passes() -> None:
    from allotment.universe import ALL_PASSES

    proc = tool("allot-opt", "--help")
    assert proc.returncode == 0 and proc.stderr == ""
    passes = proc.stdout[proc.stdout.index("Allotment's passes"):]
    for name in ALL_PASSES:
        assert f"\n  {name}" in passes
    assert ('fusion-segment{one-op-per-kernel=false inner-outer=true target="h200" on-chip-row-bytes=0 expose=false}\n'
            "      Groups every fusion function's ops") in passes
    assert "expected-error" in proc.stdout  # the help of --verify-diagnostics


def test_allot_opt_missing_file() -> None:
    proc = tool("allot-opt", "no/such/file.mlir")
    assert proc.returncode == 1
    assert "no/such/file.mlir" in proc.stderr and "Traceback" not in proc.stderr


def test_allot_opt_unknown_pass() -> None:
    proc = tool("allot-opt", "-p", "no-such-pass", RMSNORM)
    assert proc.returncode == 1
    assert "no-such-pass" in proc.stderr and "Traceback" not in proc.stderr


def test_a_pass_typo_gets_the_closest_pass() -> None:
    proc = tool("allot-opt", "-p", "fusion-segmnt", RMSNORM)
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("allot-opt: error: unknown pass 'fusion-segmnt' (did you mean 'fusion-segment'?) "
                                   "(allot-opt --help lists them)")


@pytest.mark.parametrize("option", ["on-chip-row-byte", "on_chip_row_byte"])
def test_an_option_typo_is_echoed_as_typed_with_the_closest_option(option: str) -> None:
    proc = tool("allot-opt", "-p", f"alloc-place{{{option}=3}}", RMSNORM)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"allot-opt: error: alloc-place: unknown option '{option}' (did you mean "
                                   "'on-chip-row-bytes'?); its options: target, on-chip-row-bytes")


def test_an_option_of_the_wrong_type_names_the_pipeline() -> None:
    proc = tool("allot-opt", "-p", "alloc-place{on-chip-row-bytes=x}", RMSNORM)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("allot-opt: error: -p alloc-place{on-chip-row-bytes=x}: ")


def test_every_pass_summary_in_the_help_is_a_whole_sentence() -> None:
    from allotment.tools.allot_opt import first_paragraph, passes_help
    from allotment.universe import ALL_PASSES

    text = passes_help()
    for name, factory in ALL_PASSES.items():
        summary = first_paragraph(factory().__doc__)
        assert summary.endswith("."), f"{name}: {summary!r}"
        assert " ".join(summary.split()) in " ".join(text.split()), name
    assert "picks who computes each library kernel" in " ".join(text.split())  # was cut after "computes"


def test_a_bare_allot_opt_on_a_terminal_says_it_reads_standard_input() -> None:
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "allotment.tools.allot_opt"], stdin=follower,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    os.close(follower)
    os.write(leader, b"builtin.module {}\n\x04")  # a module, then Ctrl-D
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(leader)
    assert err.startswith("allot-opt: reading the IR from standard input (end it with Ctrl-D;"), err
    assert proc.returncode == 0 and out.strip() == "builtin.module {\n}"


def test_allot_opt_reading_a_pipe_says_nothing() -> None:
    proc = subprocess.run([sys.executable, "-m", "allotment.tools.allot_opt"], input="builtin.module {}\n", capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""


def test_allot_run_version() -> None:
    from importlib.metadata import version

    import allotment

    proc = tool("allot-run", "--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == (f"allot-run: Allotment {allotment.__version__}, xDSL {version('xdsl')}, "
                                   f"torch {version('torch')}, Triton {version('triton')}")


def test_stock_xdsl_opt_loads_the_fusion_dialect(tmp_path: Path) -> None:
    assert (BIN / "xdsl-opt").exists(), "xdsl-opt is not installed next to this interpreter"
    src = "func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n  %y = fusion.exp %x : tensor<?x4xf32>\n  func.return %y : tensor<?x4xf32>\n}\n"
    proc = tool("xdsl-opt", write(tmp_path, src))
    assert proc.returncode == 0, proc.stderr
    assert "fusion.exp %x : tensor<?x4xf32>" in proc.stdout
