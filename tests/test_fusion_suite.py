"""The broad benchmark suite (benchmarks/suite_fusions.py, benchmarks/fusion_suite.py).

Every fusion of the suite, compiled by Allotment with static and with `?` extents at a
tiny size (bf16; Triton's interpreter on the CPU, or the GPU with ALLOT_TEST_DEVICE=cuda),
matches its torch function on the same inputs; the `?` program also runs a second size
without recompiling. The suite's plan, summary (geomean, worst case, misses) and markdown
are checked on fake results, and its runner end to end on the CPU with the GPU
measurements replaced.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from backend_check import TEST_DEVICE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import fusion_suite  # noqa: E402
import measure  # noqa: E402
import suite_fusions  # noqa: E402
from suite_fusions import FUSIONS, SuiteFusion, check_outputs  # noqa: E402

import allotment  # noqa: E402

NAMES = list(FUSIONS)


def test_the_suite_is_broad() -> None:
    assert len(FUSIONS) >= 24
    for f in FUSIONS.values():
        assert f.source, f.name
        assert {"tiny", "small", "large", "odd"} <= set(f.sizes), f.name
        odd = f.sizes["odd"].values()
        assert any(v & (v - 1) for v in odd), f"{f.name}: the odd size has only powers of two"
        assert any(v % 2 for v in odd), f"{f.name}: the odd size has no odd extent"
    tags = {t for f in FUSIONS.values() for t in f.tags}
    assert {"norm", "softmax", "bwd", "reduction", "view", "pointwise", "attention", "residual"} <= tags


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", NAMES)
def test_fusion_matches_torch(name: str, dynamic: bool) -> None:
    f = FUSIONS[name]
    text = f.text("bf16", dynamic, "tiny")
    signature = text.splitlines()[0]
    extents = set(re.findall(r"tensor<([^>]*)>", signature))
    dims = {d for t in extents for d in t.split("x")[:-1]}
    if dynamic:
        assert dims <= {"?", "1"}, f"{name}: static extents in the `?` fusion: {signature}"
    else:
        assert "?" not in dims, signature
    exe = allotment.compile(text)
    sizes = ["tiny", "small"] if dynamic else ["tiny"]  # one `?` program serves every size
    for size in sizes:
        xs = f.make_inputs(size, "bf16", TEST_DEVICE)
        outs = exe(*xs)
        expected = f.torch_fn(*xs)
        assert check_outputs(outs, expected, "bf16") is None, f"{name} {size}: {check_outputs(outs, expected, 'bf16')}"
    assert exe.compilations == 1


def test_fusion_matches_torch_in_f16_and_f32() -> None:
    for name, dtype in (("layernorm_bwd", "f32"), ("cross_entropy", "f16"), ("rotary", "f32"), ("bn_stats", "f16")):
        f = FUSIONS[name]
        xs = f.make_inputs("tiny", dtype, TEST_DEVICE)
        outs = allotment.compile(f.text(dtype, True, "tiny"))(*xs)
        assert check_outputs(outs, f.torch_fn(*xs), dtype) is None, name


def test_check_outputs_finds_errors() -> None:
    e = torch.linspace(-3, 3, 12).reshape(3, 4).to(torch.bfloat16)
    assert check_outputs([e.clone()], [e], "bf16") is None
    assert check_outputs([e + 0.25], [e], "bf16") is not None
    assert check_outputs([e.float()], [e], "bf16") is not None  # dtype
    assert check_outputs([e.reshape(4, 3)], [e], "bf16") is not None  # shape
    assert check_outputs([e, e], [e], "bf16") is not None  # count
    nan = e.clone()
    nan[0, 0] = float("nan")
    assert check_outputs([nan], [e], "bf16") is not None


def test_builder_rejects_mismatched_extents() -> None:
    b = suite_fusions.Builder("bad", "f32", {"M": 2, "N": 3}, dynamic=False)
    x, y = b.arg("x", "M N"), b.arg("y", "N M")
    with pytest.raises(suite_fusions.BuilderError, match="extents"):
        b.add(x, y)


def test_plan() -> None:
    dtypes, sizes, extents = list(suite_fusions.DTYPES), list(fusion_suite.SIZES), list(fusion_suite.EXTENTS)
    standard = fusion_suite.plan(NAMES, dtypes, sizes, extents, "standard")
    assert len(standard) == 5 * len(NAMES)
    assert sum(len(u.sizes) for u in standard) == 7 * len(NAMES)
    assert standard[0] == fusion_suite.Unit(NAMES[0], "bf16", "dynamic", ("large", "odd", "small"))
    large = {(u.dtype, u.extents) for u in standard if "large" in u.sizes}
    assert {d for d, _ in large} == set(dtypes) and {e for _, e in large} == set(extents)
    full = fusion_suite.plan(NAMES, dtypes, sizes, extents, "full")
    assert sum(len(u.sizes) for u in full) == 18 * len(NAMES)
    assert all(len(u.sizes) == 1 for u in full if u.extents == "static")
    only = fusion_suite.plan(["softmax_fwd"], ["f16"], ["large"], ["static"], "full")
    assert only == [fusion_suite.Unit("softmax_fwd", "f16", "static", ("large",))]
    assert fusion_suite.plan(NAMES, ["f16"], ["small"], extents, "standard") == []


def _row(fusion: str, size: str, ratio: float | None, pct: float | None = None, **kw: Any) -> dict[str, Any]:
    r = {"fusion": fusion, "dtype": "bf16", "extents": "static", "size": size, "status": "ok", "memory_bound": True,
         "vs_compile": ratio, "pct_copy": pct, "allotment_ms": 1.0, "compile_ms": ratio, "eager_ms": 2.0,
         "kernels": 1, "shape": "8x128"}
    r.update(kw)
    return r


def test_summary_and_markdown_of_fake_results() -> None:
    rows = [
        _row("softmax_fwd", "large", 2.0, 90.0),
        _row("rmsnorm_fwd", "large", 0.5, 70.0),
        _row("bias_gelu", "large", 1.0, 40.0, memory_bound=False),
        _row("rmsnorm_fwd", "odd", 1.0),
        _row("rmsnorm_fwd", "small", 0.1, host_us_allotment=30.0, host_us_eager=9.0, host_us_compile=40.0,
             host_us_per_kernel=15.0, kernels=2),
        _row("layernorm_fwd", "large", None, status="mismatch", error="output 0: error 1"),
        _row("kv_cat", "large", None, status="oom", error="out of memory"),
    ]
    s = fusion_suite.summarize(rows)
    assert s["cases"] == 7 and s["ok"] == 5
    assert s["timed_cases"] == 4  # the small size and the failed cases are left out
    assert math.isclose(s["geomean_vs_compile"], (2.0 * 0.5 * 1.0 * 1.0) ** 0.25)
    assert s["worst_vs_compile"] == 0.5 and s["worst_case"] == "rmsnorm_fwd bf16 static large"
    assert s["below_085"] == ["rmsnorm_fwd bf16 static large (0.50)"]
    assert math.isclose(s["geomean_vs_compile_small"], 0.1)
    assert s["large_memory_bound_cases"] == 2  # bias_gelu is not memory-bound
    assert math.isclose(s["large_memory_bound_mean_pct_copy"], 80.0)
    assert s["large_memory_bound_min_pct_copy"] == 70.0
    assert s["large_memory_bound_below_85"] == ["rmsnorm_fwd bf16 static large (70%)"]
    assert s["max_host_us_per_kernel"] == 15.0
    assert len(s["failures"]) == 1 and "layernorm_fwd" in s["failures"][0]
    assert len(s["skipped"]) == 1 and "kv_cat" in s["skipped"][0]
    md = fusion_suite.markdown(rows, s, {"device": "fake"})
    assert "geomean 1.00x, worst 0.50x (rmsnorm_fwd bf16 static large)" in md
    assert "below 0.85x: 1: rmsnorm_fwd bf16 static large (0.50)" in md
    assert "| rmsnorm_fwd | bf16 | static | small | 8x128 | 2 |" in md
    assert "9.0/40.0/30.0" in md
    assert md.count("\n| softmax_fwd |") == 2  # its case and its line in the fusion list
    empty = fusion_suite.summarize([])
    assert math.isnan(empty["geomean_vs_compile"]) and empty["worst_case"] is None
    assert "n/a" in fusion_suite.markdown([], empty)


def test_runner_end_to_end_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's path through a case (compile, check, count launches, bytes, summary),
    with the GPU measurements replaced by fixed numbers; a wrong torch function is a failure."""
    calls: list[str] = []

    def fake_kernel_ms(fn: Any, warmup: int = 0, rep: int = 0) -> float:
        fn()
        calls.append("kernel")
        return 0.5

    monkeypatch.setattr(measure, "kernel_ms", fake_kernel_ms)
    monkeypatch.setattr(measure, "host_us", lambda fn, calls=0: 12.0)
    monkeypatch.setattr(measure, "peak_over_outputs", lambda fn: 1.0)
    monkeypatch.setattr(measure, "copy_tbps", lambda nbytes, warmup=0, rep=0: 1e-6)
    good = FUSIONS["rmsnorm_bwd"]
    wrong = SuiteFusion("wrong", good.build, lambda dy, x, rstd, w: good.torch_fn(dy * 2, x, rstd, w),
                        good.inputs, good.sizes, "a deliberately wrong torch function")
    monkeypatch.setitem(FUSIONS, "wrong", wrong)
    args = argparse.Namespace(warmup_ms=1, rep_ms=1, host_calls=1, no_compile=True)
    runner = fusion_suite.Runner(args, device="cpu")
    runner.run_unit(fusion_suite.Unit("rmsnorm_bwd", "bf16", "dynamic", ("tiny", "small")))
    runner.run_unit(fusion_suite.Unit("wrong", "bf16", "static", ("tiny",)))
    ok, small, bad = runner.rows
    assert ok["status"] == "ok" and ok["kernels"] == 2 and ok["shape"] == "4x8"
    assert ok["bytes"] == (2 * 32 * 2 + 4 * 4 + 8 * 2) + (32 * 2 + 8 * 2)  # dy, x, rstd, w; dx, dw
    assert math.isclose(ok["pct_copy"], 100 * ok["bytes"] / 0.5e-3 / 1e12 / 1e-6)
    assert "vs_compile" not in ok and ok["vs_eager"] == 1.0
    assert small["size"] == "small" and small["host_us_per_kernel"] == 6.0
    assert bad["status"] == "mismatch"
    assert calls.count("kernel") == 4  # eager and Allotment, twice: nothing is timed for a mismatch
    summary = fusion_suite.summarize(runner.rows)
    assert len(summary["failures"]) == 1 and summary["failures"][0].startswith("wrong bf16 static tiny: mismatch")
