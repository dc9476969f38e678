"""Differential test of `alloc-to-mlir`: planned programs lowered to upstream MLIR, run
by mlir-opt 22 and mlir-runner on the CPU, against the reference evaluator and torch.

The examples, the memory-planning suite's fusions (concat in place, in-place outputs,
the hazard and copy fallbacks, frees out of order) and 200 random fusions
(tests/random_fusion.py, seeds 0..199, none filtered out) run with the default plan;
100 more (seeds 200..299) with every transient buffer packed into an arena. Many
fusions go through one mlir-opt and one mlir-runner call (`mlir_runner.run_many`).
Skipped, with the reason, where the MLIR tools are not installed (`make mlir-tools`).
"""

from __future__ import annotations

import random
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch
from backend_check import compare, tolerance
from random_fusion import random_fusion

from allotment.driver import mlir_runner
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate, random_inputs

warnings.filterwarnings("ignore", message=".*encountered in", category=RuntimeWarning)

MISSING = mlir_runner.available()
needs_mlir = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

EXAMPLE_SHAPES = {
    "scale": {"x": (9,)},
    "add_rmsnorm": {"x": (3, 64), "r": (3, 64)},
    "bias_gelu": {"x": (3, 64)},
    "dynamic_shapes": {"x": (12,)},
    "layernorm": {"x": (3, 64)},
    "rmsnorm": {"x": (3, 64)},
    "softmax": {"x": (3, 128)},
}


def _check(cases: list[tuple[str, list, list]], arena_always: bool = False) -> float:
    """Runs (text, inputs, expected) cases in one batch; every one must match. Returns
    the seconds per case."""
    start = time.perf_counter()
    results = mlir_runner.run_many([(t, x) for t, x, _ in cases], arena_always=arena_always)
    per_case = (time.perf_counter() - start) / max(len(cases), 1)
    failures = []
    for (text, _, expected), got in zip(cases, results):
        try:
            if isinstance(got, Exception):
                raise got
            compare(got, expected, tolerance(text))
        except Exception as e:  # noqa: BLE001 (every mismatch listed)
            failures.append(f"{find_function(parse_module(text)).sym_name.data}: {type(e).__name__}: {e}"[:800])
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures)
    return per_case


def _case(text: str, inputs: list) -> tuple[str, list, list]:
    f = find_function(parse_module(text))
    expected = evaluate(f, [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    return text, inputs, expected


@needs_mlir
def test_examples_match_the_reference_and_torch() -> None:
    cases = []
    torch_checks = {}
    for name, shapes in EXAMPLE_SHAPES.items():
        text = (EXAMPLES / f"{name}.mlir").read_text()
        inputs = random_inputs(find_function(parse_module(text)), shapes, seed=1)
        cases.append(_case(text, inputs))
        torch_checks[name] = inputs
    _check(cases)
    # torch itself, for the normalizations (the reference evaluator is checked against torch elsewhere)
    x, w, b = torch_checks["layernorm"]
    (y,) = mlir_runner.run((EXAMPLES / "layernorm.mlir").read_text(), [x, w, b])
    want = torch.nn.functional.layer_norm(x.float(), (64,), w.float(), b.float(), eps=1e-5).to(torch.bfloat16)
    torch.testing.assert_close(y, want, atol=5e-2, rtol=5e-2)
    (x,) = torch_checks["softmax"]
    (y,) = mlir_runner.run((EXAMPLES / "softmax.mlir").read_text(), [x])
    torch.testing.assert_close(y, torch.softmax(x.float(), -1).to(torch.bfloat16), atol=5e-2, rtol=5e-2)


@needs_mlir
def test_mlp_example_within_bf16_rounding() -> None:
    """examples/mlp.mlir (two bf16 linears of 1024 and 4096 terms around a GELU): the
    hidden activation is rounded to bf16, so one rounding of it that falls the other way
    moves an output by several bf16 ulps after the 4096-term second projection. All but
    0.5% of the outputs are within the bf16 tolerance, and the whole output within 1% (norm)."""
    text = (EXAMPLES / "mlp.mlir").read_text()
    f = find_function(parse_module(text))
    inputs = random_inputs(f, {"x": (2, 1024)}, seed=1)
    (expected,) = evaluate(f, inputs)
    (got,) = mlir_runner.run(text, inputs)
    diff = (got.float() - expected.float()).abs()
    close = diff <= 5e-2 + 5e-2 * expected.float().abs()
    relative = (diff.norm() / expected.float().norm()).item()
    assert close.float().mean() >= 0.995 and relative <= 1e-2, (close.float().mean(), relative)


@needs_mlir
def test_sharded_example_is_refused_naming_the_op() -> None:
    text = (EXAMPLES / "sharded_mlp.mlir").read_text()
    with pytest.raises(Exception, match=r"alloc-to-mlir cannot lower it") as e:
        mlir_runner.lower(text)
    assert "sharded_mlp.mlir" in str(e.value) or "fusion.mesh" in str(e.value) or "alloc.alloc" in str(e.value)


INNER_OUTER = """
func.func @rmsnorm_bwd(%dy: tensor<?x64xf32>, %x: tensor<?x64xf32>, %w: tensor<64xf32>, %rstd: tensor<?x1xf32>) -> (tensor<?x64xf32>, tensor<64xf32>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %wb = fusion.broadcast_in_dim %w [%m, 64] dims [1] : tensor<64xf32> -> tensor<?x64xf32>
  %g = fusion.mul %dy, %wb : tensor<?x64xf32>
  %gx = fusion.mul %g, %x : tensor<?x64xf32>
  %s = fusion.mean %gx dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %x, %k : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %d = fusion.sub %g, %xk : tensor<?x64xf32>
  %dx = fusion.mul %d, %rstd : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %xr = fusion.mul %x, %rstd : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %dwr = fusion.mul %dy, %xr : tensor<?x64xf32>
  %dw = fusion.sum %dwr dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  func.return %dx, %dw : tensor<?x64xf32>, tensor<64xf32>
}
"""
"""An RMSNorm backward: one inner_outer kernel (row reductions and a column sum)."""


def _planning_suite() -> list[tuple[str, list[tuple[int, ...]]]]:
    import test_memory_planning_run as mp

    return [
        (mp.CAT, [(3, 4), (3, 6)]),
        (mp.CAT3D, [(2, 3, 8), (2, 3, 8), (2, 3, 8)]),
        (mp.STEP, [(7,), (7,), (7,)]),
        (mp.HAZARD, [(5, 4), (4, 4)]),
        (mp.COPIED, [(8, 4)]),
        (mp.BAD_ORDER, [(3, 8), (16, 8), (16, 8), (16, 8)]),
        (mp.OVERWRITE_FIRST, [(30,), (30,)]),
        (mp.ROTARY, [(3, 6, 8), (6, 8), (6, 8)]),
        (INNER_OUTER, [(40, 64), (40, 64), (64,), (40, 1)]),
    ]


@needs_mlir
@pytest.mark.parametrize("arena_always", [False, True])
def test_memory_planning_suite(arena_always: bool) -> None:
    cases = []
    for k, (text, shapes) in enumerate(_planning_suite()):
        g = torch.Generator().manual_seed(k)
        cases.append(_case(text, [torch.randn(s, generator=g) for s in shapes]))
    _check(cases, arena_always=arena_always)


@needs_mlir
def test_in_place_outputs_write_the_callers_tensor() -> None:
    import test_memory_planning_run as mp

    g = torch.Generator().manual_seed(0)
    p, grad = torch.randn(30, generator=g), torch.randn(30, generator=g)
    p0 = p.clone()
    out_p, r = mlir_runner.run(mp.OVERWRITE_FIRST, [p, grad])
    assert out_p.data_ptr() == p.data_ptr()
    torch.testing.assert_close(p, grad * 3)
    torch.testing.assert_close(r, p0 + grad + 1)


def _random_cases(seeds: range) -> list[tuple[str, list, list]]:
    cases = []
    for seed in seeds:
        text, shapes, _ = random_fusion(random.Random(seed))
        inputs = random_inputs(find_function(parse_module(text)), shapes, seed=seed)
        cases.append(_case(text, inputs))
    return cases


@needs_mlir
@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")
def test_random_fusions() -> None:
    """200 random fusions, default plan: all match (the time per case is printed with -s)."""
    per_case = _check(_random_cases(range(200)))
    print(f"\nalloc-to-mlir random fusions: {per_case * 1000:.0f} ms per case through mlir-opt + mlir-runner")


@needs_mlir
@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")
def test_random_fusions_in_arenas() -> None:
    """100 more, every plan's transients packed into an arena (offsets computed in the IR)."""
    _check(_random_cases(range(200, 300)), arena_always=True)


@needs_mlir
def test_mlir_opt_pass_inside_an_allotment_pipeline() -> None:
    """xDSL's MLIROptPass (xdsl.transforms.mlir_opt) after alloc-to-mlir: upstream
    mlir-opt canonicalizes, CSEs and hoists the lowered softmax, xDSL parses the result
    back, and the program still allocates one buffer and computes the same values."""
    from xdsl.transforms.mlir_opt import MLIROptPass

    opt = MLIROptPass(
        executable=mlir_runner.find_tool("mlir-opt") or "mlir-opt",
        arguments=("--canonicalize", "--cse", "--loop-invariant-code-motion", "--mlir-print-op-generic"),
    )
    text = (EXAMPLES / "softmax.mlir").read_text()
    module = mlir_runner.lower_module(text, then=[opt])
    printed = str(module)
    assert printed.count("memref.alloc(") == 1 and "fusion." not in printed and "alloc.kernel" not in printed
    inputs = random_inputs(find_function(parse_module(text)), {"x": (3, 128)}, seed=2)
    (expected,) = evaluate(find_function(parse_module(text)), inputs)
    (got,) = mlir_runner.run(text, inputs, then=[opt])
    compare([got], [expected], tolerance(text))


@needs_mlir
def test_allot_run_backend_mlir(capsys: pytest.CaptureFixture[str]) -> None:
    from allotment.tools import allot_run

    status = allot_run.main([str(EXAMPLES / "rmsnorm.mlir"), "--shapes", "x=4x64", "--backend", "mlir", "--check"])
    out = capsys.readouterr().out
    assert status == 0 and "out0: shape=4x64 dtype=bfloat16" in out and "PASS" in out
    assert allot_run.main([str(EXAMPLES / "rmsnorm.mlir"), "--backend", "mlir", "--dump"]) == 0
    assert "llvm.emit_c_interface" in capsys.readouterr().out


def test_without_the_tools_the_error_says_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mlir_runner, "find_tool", lambda name: None)
    assert "apt-get install -y mlir-22-tools" in (mlir_runner.available() or "")
    with pytest.raises(mlir_runner.MLIRToolsMissing, match="mlir-22-tools"):
        mlir_runner.run((EXAMPLES / "rmsnorm.mlir").read_text(), [torch.zeros(2, 64, dtype=torch.bfloat16),
                                                                  torch.ones(64, dtype=torch.bfloat16)])


def _elementwise_cases() -> list[tuple[str, list, list]]:
    """One fusion per elementwise op with a scalar lowering, f32 and bf16 (i32 for the
    bitwise ops), on random inputs; the result type is the one the op infers."""
    from xdsl.dialects.builtin import TensorType, bf16, f32, i32
    from xdsl.ir import Block

    from allotment.dialects import fusion
    from allotment.passes import mlir_scalar

    cases = []
    g = torch.Generator().manual_seed(3)
    for k, cls in enumerate([*mlir_scalar.UNARY, *mlir_scalar.BINARY, fusion.NextafterOp, fusion.GcdOp]):
        binary = cls in mlir_scalar.BINARY or cls in (fusion.NextafterOp, fusion.GcdOp)
        integer = "bitwise" in cls.name or "shift" in cls.name or cls is fusion.GcdOp
        for t in ["i32"] if integer else ["f32", "bf16"]:
            ty = f"tensor<3x4x{t}>"
            block = Block(arg_types=[TensorType({"f32": f32, "bf16": bf16, "i32": i32}[t], [3, 4])] * 2)
            rt = str((cls(block.args[0], block.args[1]) if binary else cls(block.args[0])).results[0].type)
            operands, types = ("%a, %b", f"{ty}, {ty}") if binary else ("%a", ty)
            text = (f"func.func @op{k}_{t}(%a: {ty}, %b: {ty}) -> {rt} {{\n"
                    f"  %y = {cls.name} {operands} : {types} -> {rt}\n  func.return %y : {rt}\n}}\n")
            if integer:
                inputs = [torch.randint(-50, 50, (3, 4), generator=g, dtype=torch.int32),
                          torch.randint(-20 if cls is fusion.GcdOp else 0, 5, (3, 4), generator=g, dtype=torch.int32)]
            else:
                dt = torch.float32 if t == "f32" else torch.bfloat16
                inputs = [torch.randn(3, 4, generator=g).to(dt), torch.randn(3, 4, generator=g).to(dt)]
                if cls is fusion.NextafterOp:  # equal operands and zeros too
                    inputs[1][0, :2] = inputs[0][0, :2]
                    inputs[0][1, 0] = 0.0
            cases.append(_case(text, inputs))
    return cases


@needs_mlir
@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")
def test_every_elementwise_op() -> None:
    _check(_elementwise_cases())


SCANS_AND_GATHERS = """
func.func @scans(%x: tensor<3x5xf32>, %h: tensor<2x?xbf16>, %n: tensor<3x5xi32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x?xbf16>, tensor<3x5xi64>, tensor<3x5xf32>, tensor<3x5xi64>, tensor<3x5xf32>, tensor<3x5xi64>) {
  %s = fusion.cumsum %x dim 1 : tensor<3x5xf32> -> tensor<3x5xf32>
  %p = fusion.cumprod %x dim 0 : tensor<3x5xf32> -> tensor<3x5xf32>
  %sh = fusion.cumsum %h dim 1 : tensor<2x?xbf16> -> tensor<2x?xbf16>
  %si = fusion.cumsum %n dim 0 : tensor<3x5xi32> -> tensor<3x5xi64>
  %mv, %mi = fusion.cummax %x dim 1 : tensor<3x5xf32> -> tensor<3x5xf32>, tensor<3x5xi64>
  %nv, %ni = fusion.cummin %x dim 0 : tensor<3x5xf32> -> tensor<3x5xf32>, tensor<3x5xi64>
  func.return %s, %p, %sh, %si, %mv, %mi, %nv, %ni : tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x?xbf16>, tensor<3x5xi64>, tensor<3x5xf32>, tensor<3x5xi64>, tensor<3x5xf32>, tensor<3x5xi64>
}
"""

GATHERS = """
func.func @gathers(%x: tensor<?x4xf32>, %i: tensor<?xi64>, %j: tensor<?x3xi32>, %ids: tensor<2x?xi64>, %w: tensor<10x8xbf16>) -> (tensor<?x4xf32>, tensor<?x3xf32>, tensor<2x?x8xbf16>, tensor<?x4xf32>) {
  %sel = fusion.index_select %x, %i dim 0 : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x4xf32>
  %g = fusion.gather %x, %j dim 0 : tensor<?x4xf32>, tensor<?x3xi32> -> tensor<?x3xf32>
  %e = fusion.embedding %ids, %w : tensor<2x?xi64>, tensor<10x8xbf16> -> tensor<2x?x8xbf16>
  %t = fusion.exp %sel : tensor<?x4xf32>
  func.return %sel, %g, %e, %t : tensor<?x4xf32>, tensor<?x3xf32>, tensor<2x?x8xbf16>, tensor<?x4xf32>
}
"""


SCATTERS = """
func.func @scatters(%x: tensor<?x4xf32>, %j: tensor<2x3xi64>, %s: tensor<2x3xf32>, %i: tensor<?xi32>, %v: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %sc = fusion.scatter %x, %j, %s dim 0 : tensor<?x4xf32>, tensor<2x3xi64>, tensor<2x3xf32> -> tensor<?x4xf32>
  %acc = fusion.index_put_accumulate %x, %i, %v : tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %sc, %acc : tensor<?x4xf32>, tensor<?x4xf32>
}
"""


@needs_mlir
def test_scans_and_gathers() -> None:
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, 5, generator=g)
    x[1, 2] = float("nan")
    scans = [x, torch.randn(2, 6, generator=g).to(torch.bfloat16), torch.randint(-9, 9, (3, 5), generator=g, dtype=torch.int32)]
    gathers = [torch.randn(5, 4, generator=g), torch.tensor([4, 0, 3, 2]), torch.tensor([[0, 1, 4], [2, 3, 0]], dtype=torch.int32),
               torch.randint(0, 10, (2, 3), generator=g), torch.randn(10, 8, generator=g).to(torch.bfloat16)]
    scatters = [torch.randn(5, 4, generator=g), torch.tensor([[0, 3, 4], [1, 2, 2]]), torch.randn(2, 3, generator=g),
                torch.tensor([1, 4, 1, 0], dtype=torch.int32), torch.randn(4, 4, generator=g)]
    _check([_case(SCANS_AND_GATHERS, scans), _case(GATHERS, gathers), _case(SCATTERS, scatters)])


RANDOM = """
func.func @random(%seed: i64, %offset: i64, %x: tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xbf16>, tensor<?x5xf32>, tensor<?x5xf16>, tensor<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x5xf32>
  %u = fusion.rand %seed, %offset [%n, 5] : tensor<?x5xf32>
  %ub = fusion.rand %seed, %offset [%n, 5] : tensor<?x5xbf16>
  %g = fusion.randn %seed, %offset [%n, 5] : tensor<?x5xf32>
  %gh = fusion.randn %seed, %offset [%n, 5] : tensor<?x5xf16>
  %y = fusion.add %x, %g : tensor<?x5xf32>
  func.return %u, %ub, %g, %gh, %y : tensor<?x5xf32>, tensor<?x5xbf16>, tensor<?x5xf32>, tensor<?x5xf16>, tensor<?x5xf32>
}
"""


@needs_mlir
def test_random_numbers_are_the_references_philox() -> None:
    x = torch.randn(7, 5, generator=torch.Generator().manual_seed(5))
    _check([_case(RANDOM, [123456789012345, (1 << 40) + 7, x]), _case(RANDOM, [0, 0, x])])


@needs_mlir
def test_nextafter_is_exact() -> None:
    """One ulp is below any tolerance: compared bit for bit with torch.nextafter."""
    text = """
func.func @next(%a: tensor<6xf32>, %b: tensor<6xf32>, %c: tensor<6xbf16>, %d: tensor<6xbf16>) -> (tensor<6xf32>, tensor<6xbf16>) {
  %x = fusion.nextafter %a, %b : tensor<6xf32>
  %y = fusion.nextafter %c, %d : tensor<6xbf16>
  func.return %x, %y : tensor<6xf32>, tensor<6xbf16>
}
"""
    a = torch.tensor([1.0, -2.5, 0.0, 0.0, 3.0, float("nan")])
    b = torch.tensor([2.0, -3.0, 1.0, -1.0, 3.0, 1.0])
    x, y = mlir_runner.run(text, [a, b, a.bfloat16(), b.bfloat16()])
    assert torch.equal(x.view(torch.int32)[:5], torch.nextafter(a, b).view(torch.int32)[:5]) and x[5].isnan()
    assert torch.equal(y.view(torch.int16)[:5], torch.nextafter(a.bfloat16(), b.bfloat16()).view(torch.int16)[:5])


MISC = """
func.func @misc(%x: tensor<?x4xf32>, %h: tensor<3x4xbf16>, %n: tensor<3x4xi32>, %s: f32) -> (tensor<?xf32>, tensor<4xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xi64>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<3xi64>, tensor<4xbf16>, tensor<3x4xbf16>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %p = fusion.prod %x dims [1] : tensor<?x4xf32> -> tensor<?xf32>
  %m = fusion.min %x dims [0] : tensor<?x4xf32> -> tensor<4xf32>
  %avg, %m2, %cnt = fusion.welford %x dims [1] keepdim : tensor<?x4xf32> -> tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xi64>
  %u = fusion.triu %x {diagonal = 1 : i64} : tensor<?x4xf32>
  %l = fusion.tril %x : tensor<?x4xf32>
  %pos = fusion.gt %x, %s : tensor<?x4xf32>, f32 -> tensor<?x4xi1>
  %w = fusion.where %pos, %x, %s : tensor<?x4xi1>, tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  %start = arith.constant 2.0 : f32
  %step = arith.constant 0.5 : f32
  %io = fusion.iota [%c7] start %start step %step : f32, f32 -> tensor<?xf32>
  %ni = fusion.sum %n dims [1] : tensor<3x4xi32> -> tensor<3xi64>
  %hm = fusion.max %h dims [0] : tensor<3x4xbf16> -> tensor<4xbf16>
  %hs = fusion.set %h : tensor<3x4xbf16> -> tensor<3x4xbf16>
  func.return %p, %m, %avg, %m2, %cnt, %u, %l, %w, %io, %ni, %hm, %hs : tensor<?xf32>, tensor<4xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xi64>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<3xi64>, tensor<4xbf16>, tensor<3x4xbf16>
}
"""


@needs_mlir
def test_other_reductions_and_creations() -> None:
    """prod, min, welford, triu/tril, where with a scalar, iota, integer sums, bf16 max, set."""
    g = torch.Generator().manual_seed(6)
    inputs = [torch.randn(5, 4, generator=g), torch.randn(3, 4, generator=g).bfloat16(),
              torch.randint(-9, 9, (3, 4), generator=g, dtype=torch.int32), 0.25]
    _check([_case(MISC, inputs)])


README = (EXAMPLES.parent / "README.md").read_text()


def test_readme_shows_the_lowered_example_as_it_prints() -> None:
    """The README's `mlir` block after the alloc-to-mlir command is that command's output."""
    import re
    import shlex
    import subprocess
    import sys

    section = README.split("## Upstream MLIR", 1)[1]
    command = re.search(r"```sh\n(.*?)\n```", section, re.S).group(1)
    printed = re.search(r"```mlir\n(.*?)```", section, re.S).group(1)
    argv = shlex.split(command)
    argv[0] = str(Path(sys.executable).parent / "allot-opt")
    out = subprocess.run(argv, cwd=EXAMPLES.parent, capture_output=True, text=True, check=True).stdout
    assert out == printed


@needs_mlir
def test_readme_mlir_commands_run() -> None:
    """The README's `bash` block (it needs the MLIR tools, so test_readme leaves it out)."""
    import re
    import subprocess

    section = README.split("## Upstream MLIR", 1)[1]
    lines = re.search(r"```bash\n(.*?)\n```", section, re.S).group(1).splitlines()
    for line in lines:
        r = subprocess.run(["bash", "-o", "pipefail", "-c", line.replace(".venv/bin/", f"{Path(sys.executable).parent}/")
                            .replace("/usr/lib/llvm-22/bin/mlir-opt", mlir_runner.find_tool("mlir-opt") or "mlir-opt")],
                           cwd=EXAMPLES.parent, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout, f"{line}\n{r.stderr}"
        if "mlir-opt" in line:
            assert "llvm.func @_mlir_ciface_scale" in r.stdout


def test_docs_show_the_lowered_softmax_as_it_prints() -> None:
    import re
    import subprocess

    doc = (EXAMPLES.parent / "docs" / "mlir.md").read_text()
    printed = re.search(r"```mlir\n(.*?)```", doc, re.S).group(1)
    from allotment.passes.pipeline import PIPELINE

    out = subprocess.run([str(Path(sys.executable).parent / "allot-opt"), "examples/softmax.mlir", "-p",
                          f"{PIPELINE},alloc-to-mlir"], cwd=EXAMPLES.parent, capture_output=True, text=True, check=True)
    assert out.stdout == printed


SORTS = """
func.func @sorts(%x: tensor<?x7xf32>, %n: tensor<3x?xi64>) -> (tensor<?x7xi64>, tensor<?x7xi64>, tensor<?x3xf32>, tensor<?x3xi64>, tensor<2x?xi64>, tensor<2x?xi64>, tensor<3x?xi64>) {
  %a = fusion.argsort %x dim 1 : tensor<?x7xf32> -> tensor<?x7xi64>
  %d = fusion.argsort %x dim 1 descending stable : tensor<?x7xf32> -> tensor<?x7xi64>
  %tv, %ti = fusion.topk %x k 3 dim -1 largest sorted : tensor<?x7xf32> -> tensor<?x3xf32>, tensor<?x3xi64>
  %sv, %si = fusion.topk %n k 2 dim 0 : tensor<3x?xi64> -> tensor<2x?xi64>, tensor<2x?xi64>
  %c = fusion.argsort %n dim 0 : tensor<3x?xi64> -> tensor<3x?xi64>
  func.return %a, %d, %tv, %ti, %sv, %si, %c : tensor<?x7xi64>, tensor<?x7xi64>, tensor<?x3xf32>, tensor<?x3xi64>, tensor<2x?xi64>, tensor<2x?xi64>, tensor<3x?xi64>
}
"""


@needs_mlir
def test_sorts_with_ties_nans_and_signed_zeros() -> None:
    x = torch.tensor([[3.0, 1.0, float("nan"), 1.0, -0.0, 0.0, -2.0],
                      [float("nan"), 5.0, 5.0, float("nan"), -1.0, 2.0, 2.0]])
    n = torch.tensor([[4, 1, 1, 9], [0, 1, 7, 9], [4, 2, 7, -3]])
    _check([_case(SORTS, [x, n])])


SPECIAL = """
func.func @special(%x: tensor<12xf32>, %y: tensor<12xf32>, %g: tensor<10xf32>, %h: tensor<6xbf16>) -> (tensor<12xf32>, tensor<12xf32>, tensor<10xf32>, tensor<6xbf16>) {
  %a = fusion.erfinv %x : tensor<12xf32>
  %b = fusion.erfcinv %y : tensor<12xf32>
  %c = fusion.lgamma %g : tensor<10xf32>
  %d = fusion.lgamma %h : tensor<6xbf16>
  func.return %a, %b, %c, %d : tensor<12xf32>, tensor<12xf32>, tensor<10xf32>, tensor<6xbf16>
}
"""


@needs_mlir
def test_erfinv_erfcinv_lgamma() -> None:
    """The functions upstream math lacks, with the Triton kernels' approximations: the
    centre, the tails, the ends and beyond them."""
    x = torch.tensor([-1.0, -0.999, -0.7, -0.3, -1e-3, 0.0, 0.2, 0.49, 0.51, 0.9999, 1.0, 1.5])
    y = torch.tensor([0.0, 1e-30, 1e-6, 0.3, 0.6, 1.0, 1.2, 1.7, 1.999999, 2.0, 2.5, -0.1])
    g = torch.tensor([0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 9.5, 30.0, -0.5, -2.3])
    h = torch.tensor([0.3, 1.0, 2.5, 7.0, 12.0, -1.5]).bfloat16()
    _check([_case(SPECIAL, [x, y, g, h])])


INPUT_KINDS = """
func.func @kinds(%p: tensor<?x3xi1>, %x: tensor<?x3xf64>, %e: tensor<?x3xf32>, %k: i64, %n: index) -> (tensor<?x3xf64>, tensor<?x3xf32>, tensor<?xi1>, tensor<?xf64>) {
  %kf = arith.sitofp %k : i64 to f64
  %y = fusion.where %p, %x, %kf : tensor<?x3xi1>, tensor<?x3xf64>, f64 -> tensor<?x3xf64>
  %z = fusion.exp %e : tensor<?x3xf32>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x3xf64>
  %r = fusion.reshape %p [-1] : tensor<?x3xi1> -> tensor<?xi1>
  %f = fusion.full %kf [%n] : f64 -> tensor<?xf64>
  func.return %y, %z, %r, %f : tensor<?x3xf64>, tensor<?x3xf32>, tensor<?xi1>, tensor<?xf64>
}
"""


@needs_mlir
def test_bool_f64_empty_and_scalar_inputs() -> None:
    """i1 and f64 tensors, an empty tensor (0 rows), i64 and index scalars go in and come out."""
    g = torch.Generator().manual_seed(7)
    p = torch.rand(4, 3, generator=g) > 0.5
    x = torch.randn(4, 3, generator=g, dtype=torch.float64)
    _check([_case(INPUT_KINDS, [p, x, torch.zeros(0, 3), -3, 5])])


def test_the_lowering_allocates_exactly_the_plans_buffers() -> None:
    """For 50 random fusions and the planning suite (with and without arenas): one memref.alloc per
    global alloc.alloc of the plan, one memref.alloca per on-chip one, nothing else, and
    no alloc or fusion op left."""
    from allotment.dialects import alloc
    from allotment.passes.alloc_plan import AllocPlanPass
    from allotment.passes.alloc_to_mlir import AllocToMLIRPass
    from allotment.passes.pipeline import compile_passes, run_pipeline

    texts = [random_fusion(random.Random(seed))[0] for seed in range(50)] + [t for t, _ in _planning_suite()]
    for arena in (False, True):
        passes = [AllocPlanPass(arena_always=True) if arena and isinstance(p, AllocPlanPass) else p
                  for p in compile_passes("cpu")]
        for text in texts:
            planned = run_pipeline(parse_module(text), passes)
            allocs = [op for op in planned.walk() if isinstance(op, alloc.AllocOp)]
            lowered = run_pipeline(planned, [AllocToMLIRPass()])
            names = [op.name for op in lowered.walk()]
            assert names.count("memref.alloc") == sum(op.memory_space not in alloc.ON_CHIP for op in allocs)
            assert names.count("memref.alloca") == sum(op.memory_space in alloc.ON_CHIP for op in allocs)
            assert not [n for n in names if n.split(".")[0] in ("alloc", "fusion", "comm", "tensor", "bufferization")]
