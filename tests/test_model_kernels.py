"""benchmarks/model_kernels.py on the CPU (`--cpu-smoke`): a tiny Hugging Face Llama's
inference graph is compiled, its kernels listed from the program's comments, and one step's
generated launches counted (intercepted, not run)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="transformers is a test extra (pip install -e .[test])")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import model_kernels  # noqa: E402


def test_kernels_of_reads_the_programs_comments() -> None:
    source = "x = 1\n# alloc.kernel k0 pointwise: 1 fusion.cast\n# alloc.kernel k1 library: 1 fusion.matmul, tiled\n"
    assert model_kernels.kernels_of(source) == [("k0", "pointwise", "1 fusion.cast"),
                                                ("k1", "library", "1 fusion.matmul, tiled")]


def test_a_tiny_llama_lists_every_generated_kernel_once_a_step(capsys: pytest.CaptureFixture[str]) -> None:
    rc = model_kernels.main(["--cpu-smoke", "--models", "llama", "--hidden", "64", "--layers", "1",
                             "--batch", "1", "--seq", "8", "--vocab", "64"])
    out = capsys.readouterr().out
    assert rc == 0, out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("   k")]
    kinds = [line.split()[1] for line in out.splitlines() if line.startswith("   k")]
    # every listed kernel is generated (a "library ... tiled" row is the generated tiled matmul;
    # ATen's own library calls are not kernels of the program) and launched once a step
    assert len(listed) >= 5 and "normalization" in kinds and "pointwise" in kinds, out
    assert len(set(listed)) == len(listed)
    assert f"-- {len(listed)} generated launches in one step" in out, out
