"""`allotment.compile` and `Executable`: argument errors, repr, sources, no global side effects.

Bad arguments raise the right `allotment.Error` subclass with a message that
names the argument; the caller's IR is never modified; Triton's interpreter is
chosen per program (CPU tensors run whatever was imported first and whatever
TRITON_INTERPRET says), and a CUDA program's source is generated without a GPU.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from xdsl.context import Context  # noqa: E402
from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402
from xdsl.passes import ModulePass  # noqa: E402
from xdsl.printer import Printer  # noqa: E402

import allotment  # noqa: E402
from allotment import ArgumentError, CompileError, RunError  # noqa: E402
from allotment.driver import runtime  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import evaluate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RMSNORM_PATH = ROOT / "examples" / "rmsnorm.mlir"
RMSNORM = RMSNORM_PATH.read_text()


def rms_inputs(rows: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(rows)
    return torch.randn(rows, 64, generator=g).bfloat16(), torch.randn(64, generator=g).bfloat16()


def printed(op: object) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(op)  # type: ignore[arg-type]
    return stream.getvalue()


# --------------------------------------------------------------------------- #
# compile's arguments                                                         #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "fusion, kwargs, message",
    [
        (None, {}, "fusion must be IR text .* got NoneType"),
        (42, {}, "fusion must be IR text .* got int"),
        (b"func.func", {}, "got bytes"),
        ("examples/rmsnorm.mlir", {}, r"looks like a file path; pass the text, e.g. compile\(open\(path\)\.read\(\)\)"),
        (RMSNORM, {"function": 3}, "function must be a str"),
        (RMSNORM, {"function": "nope"}, "no function named @nope; available: @rmsnorm"),
        (RMSNORM, {"device": "tpu"}, "unknown device 'tpu'"),
        (RMSNORM, {"device": 0}, "device must be a str"),
        (ROOT / "no" / "such.mlir", {}, "cannot read"),
    ],
    ids=["none", "int", "bytes", "path-string", "function-type", "function-name", "device", "device-type",
         "missing-path"],
)
def test_bad_compile_arguments(fusion: object, kwargs: dict, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        allotment.compile(fusion, **kwargs)  # type: ignore[arg-type]


def test_a_pathlib_path_is_read() -> None:
    exe = allotment.compile(RMSNORM_PATH)
    assert exe.function == "rmsnorm"


# --------------------------------------------------------------------------- #
# calling an executable                                                       #
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def rmsnorm() -> allotment.Executable:
    return allotment.compile(RMSNORM)


def test_a_list_for_a_tensor(rmsnorm: allotment.Executable) -> None:
    _, w = rms_inputs()
    with pytest.raises(ArgumentError, match="input x: expected a tensor, got list") as info:
        rmsnorm([1, 2], w)
    assert isinstance(info.value, RunError)


@pytest.mark.parametrize("count", [0, 1, 3])
def test_wrong_arity(rmsnorm: allotment.Executable, count: int) -> None:
    x, w = rms_inputs()
    with pytest.raises(ArgumentError, match=rf"@rmsnorm takes 2 inputs \(x, w\), got {count}"):
        rmsnorm(*[x, w, w][:count])


def test_a_wrong_dtype_is_a_run_error(rmsnorm: allotment.Executable) -> None:
    x, w = rms_inputs()
    with pytest.raises(RunError, match="input x: dtype torch.float32") as info:
        rmsnorm(x.float(), w)
    assert not isinstance(info.value, ArgumentError)


def test_repr_is_one_line(rmsnorm: allotment.Executable) -> None:
    exe = allotment.compile(RMSNORM)
    assert repr(exe) == "<allotment.Executable @rmsnorm(x: tensor<?x64xbf16>, w: tensor<64xbf16>) targets=[]>"
    exe(*rms_inputs())
    assert repr(exe) == "<allotment.Executable @rmsnorm(x: tensor<?x64xbf16>, w: tensor<64xbf16>) targets=[cpu]>"
    pinned = allotment.compile(RMSNORM, device="cpu")
    assert repr(pinned).endswith("device=cpu targets=[]>") and "\n" not in repr(pinned)


# --------------------------------------------------------------------------- #
# sources                                                                     #
# --------------------------------------------------------------------------- #


def test_the_cuda_source_needs_no_gpu(rmsnorm: allotment.Executable) -> None:
    src = rmsnorm.source("cuda")
    assert "libdevice" in src and "@triton.jit" in src
    assert "cuda" not in rmsnorm.programs  # generated, not loaded
    assert "libdevice" not in rmsnorm.source("cpu")


@pytest.mark.parametrize("target", ["tpu", "CPU", 3])
def test_an_unknown_target_is_an_argument_error(rmsnorm: allotment.Executable, target: object) -> None:
    with pytest.raises(ArgumentError, match="unknown target .*: the targets are cpu, cuda"):
        rmsnorm.source(target)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- #
# the caller's IR                                                             #
# --------------------------------------------------------------------------- #


def test_the_callers_module_and_function_are_not_modified() -> None:
    module = parse_module(RMSNORM)
    before = printed(module)
    x, w = rms_inputs(4)
    (y,) = allotment.compile(module)(x, w)
    f = find_function(module)
    (y2,) = allotment.compile(f)(x, w)
    assert printed(module) == before
    assert f.parent_op() is module
    (expected,) = evaluate(find_function(parse_module(RMSNORM)), [x, w])
    torch.testing.assert_close(y, expected, rtol=5e-2, atol=5e-2)
    assert torch.equal(y, y2)


def test_a_later_change_to_the_callers_module_does_not_reach_the_executable() -> None:
    module = parse_module(RMSNORM)
    exe = allotment.compile(module)
    f = find_function(module)
    f.sym_name = type(f.sym_name)("renamed")
    assert exe.function == "rmsnorm" and "@rmsnorm" in exe.source("cpu")


@pytest.mark.parametrize("where", ["after", "in"])
def test_a_pass_that_breaks_the_ir_is_a_compile_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, where: str
) -> None:
    class DropReturnValues(ModulePass):
        name = "drop-return-values"

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            for ret in op.walk():
                if isinstance(ret, func.ReturnOp):
                    ret.operands = ()
            if where == "in":
                op.verify()

    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
    monkeypatch.setattr(runtime, "pipeline", lambda target="cuda": (DropReturnValues(),))
    with pytest.raises(CompileError, match="pass drop-return-values"):
        allotment.compile(RMSNORM.replace("1.000000e-05", "2.000000e-05")).source("cpu")


# --------------------------------------------------------------------------- #
# no process-wide choice of Triton's interpreter                              #
# --------------------------------------------------------------------------- #

SUBPROCESS = """
import os, sys, torch
{first}
import allotment
from allotment.driver import runtime
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate
assert os.environ.get("TRITON_INTERPRET") == {interpret!r}, os.environ.get("TRITON_INTERPRET")
text = open(sys.argv[1]).read()
x, w = torch.randn(3, 64).bfloat16(), torch.randn(64).bfloat16()
(y,) = allotment.compile(text)(x, w)
(e,) = evaluate(find_function(parse_module(text)), [x, w])
torch.testing.assert_close(y, e, rtol=5e-2, atol=5e-2)
print("ok")
"""


@pytest.mark.parametrize(
    "first, interpret",
    [("import triton", None), ("import triton", "0"), ("import triton", "1"), ("", None)],
    ids=["triton-first-unset", "triton-first-0", "triton-first-1", "allotment-first-unset"],
)
def test_cpu_tensors_run_whatever_was_imported_first(first: str, interpret: str | None, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret is not None:
        env["TRITON_INTERPRET"] = interpret
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(ALLOT_CACHE_DIR=str(tmp_path), PYTHONPATH=pythonpath)
    code = SUBPROCESS.format(first=first, interpret=interpret)
    proc = subprocess.run([sys.executable, "-c", code, str(RMSNORM_PATH)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


# --------------------------------------------------------------------------- #
# allot-run on the runtime's launch hook                                      #
# --------------------------------------------------------------------------- #


def test_allot_run_bench_skips_launches_through_the_hook(capsys: pytest.CaptureFixture[str]) -> None:
    from allotment.backend import host_runtime
    from allotment.tools import allot_run

    launch = host_runtime.launch
    rc = allot_run.main([str(RMSNORM_PATH), "--shapes", "x=2x64", "--device", "cpu", "--bench"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "host time per call:" in out and "(wall, kernel launches skipped)" in out
    assert host_runtime.launch is launch
    assert err == ""


def test_allot_run_warns_once_about_large_cpu_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    from allotment.tools import allot_run

    allot_run._warn_if_large([torch.empty(400, 256), torch.empty(256), 1.0], torch.device("cpu"))
    allot_run._warn_if_large([torch.empty(300, 256)], torch.device("cpu"))
    allot_run._warn_if_large([torch.empty(400, 256)], torch.device("cuda"))
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("warning:") == 1 and "102656 input elements" in err and "interpreter" in err


def test_allot_run_says_what_it_does_on_long_cpu_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Past PROGRESS_AFTER_S (here 0) on a stderr that is not a terminal; stdout keeps its format."""
    from allotment.tools import allot_run

    monkeypatch.setattr(allot_run, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})  # so that the program is compiled here
    rc = allot_run.main([str(RMSNORM_PATH), "--shapes", "x=2x64", "--device", "cpu"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert out.startswith("out0: shape=2x64 dtype=bfloat16 sum=") and len(out.splitlines()) == 1
    assert "allot-run: compiling @rmsnorm for cpu (Triton interpreter)..." in err  # seconds: the timer fires


def test_cuda_graphs_option_runs_cpu_calls_as_usual() -> None:
    text = """
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = fusion.exp %x : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
"""
    exe = allotment.compile(text, cuda_graphs=True)
    x = torch.randn(3, 4)
    (y,) = exe(x)
    torch.testing.assert_close(y, torch.exp(x))
    assert exe._graphed is None  # nothing is captured for the CPU target
    with pytest.raises(allotment.ArgumentError, match="cuda_graphs must be True or False"):
        allotment.compile(text, cuda_graphs="yes")


def test_graph_signature_keys_on_layout_and_scalars() -> None:
    from allotment.backend.cuda_graphs import signature

    x = torch.randn(4, 6)
    assert signature([x, 2.0]) == signature([torch.randn(4, 6), 2.0])
    assert signature([x, 2.0]) != signature([x, 3.0])
    assert signature([x]) != signature([x.t().contiguous().t()])
    assert signature([x]) != signature([x.double()])


def test_error_classes_are_also_the_builtin_classes_nvfuser_and_torch_raise() -> None:
    """Code catching what nvFuser's frontend or torch raise keeps working: a shape that
    disagrees, a fusion that cannot compile or run, and a definition used out of order are
    RuntimeErrors; a bad argument a TypeError and a ValueError; a missing feature a
    NotImplementedError."""
    from allotment import errors as E

    for cls in (E.ShapeError, E.CompileError, E.RunError, E.UsageError):
        assert issubclass(cls, E.Error) and issubclass(cls, RuntimeError), cls
    assert issubclass(E.ArgumentError, TypeError) and issubclass(E.ArgumentError, ValueError)
    assert issubclass(E.UnsupportedError, NotImplementedError)
    assert allotment.UsageError is E.UsageError
    exe = allotment.compile("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                            "  %y = fusion.exp %x : tensor<4xf32>\n  func.return %y : tensor<4xf32>\n}\n")
    with pytest.raises(RuntimeError, match="dimension 0 has extent 5"):
        exe(torch.zeros(5))
