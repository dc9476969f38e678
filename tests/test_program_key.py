"""Every knob that changes a generated program changes its cache key (`runtime.program_key`):
a program built under one setting is never handed out under another (the in-memory and the
disk caches are keyed by it). Each knob of `runtime.program_knobs()` is toggled; a scan of the
code generator's sources finds every ALLOT_* variable it reads and requires it to be a program
knob or one of the run-time switches listed here; and poison mode, end to end, gets a poison
program after the same fusion ran without it (leaving poison out of the key passed every poison
test while checking nothing)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

import allotment
from allotment.driver import runtime

ROOT = Path(__file__).resolve().parents[1] / "allotment"

TEXT = """func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = fusion.tanh %x : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
"""

VALUES = {
    "ALLOT_TANH": "libdevice", "ALLOT_POISON": "1", "ALLOT_ON_CHIP_ROW_BYTES": "1024", "ALLOT_STREAM_ELEMENTS": "64",
    "ALLOT_SPLIT_PROGRAMS": "8", "ALLOT_INNER_SPLIT_MIN_REDUCED": "4", "ALLOT_INNER_SPLIT_MAX_KEPT": "4",
    "ALLOT_INNER_SPLIT_ALIGN": "8", "ALLOT_INNER_OUTER": "0", "ALLOT_INNER_OUTER_PROGRAMS": "4",
    "ALLOT_ROW_STAGES": "2", "ALLOT_TILED_MATMUL_OUTPUTS": "16", "ALLOT_TILED_MATMUL_OPERAND_BYTES": "4096",
}
"""A setting other than the default for each program knob."""

RUN_TIME_ONLY = {
    "ALLOT_CACHE_DIR": "where programs are stored, not what they are",
    "ALLOT_DEBUG": "tracebacks of the tools",
    "ALLOT_DIST_DIRECT": "how a collective plan reaches the process group (decided when the plan is made)",
    "ALLOT_JIT_LAUNCH": "how a launch reaches Triton",
    "ALLOT_NATIVE": "whether the native executor is built",
    "ALLOT_NCCL_EAGER": "when NCCL communicators are made",
    "ALLOT_REGISTER_CAP": "the register cap of a kernel's compile at its first launch (register_cap.py), not its text",
    "ALLOT_RESIDENT_ROWS": "the rows a program of a row kernel's first launch (resident_rows.py), not its text",
    "ALLOT_REPLAY": "whether calls are replayed",
    "ALLOT_REPLAY_DRIVER": "how replays launch",
    "ALLOT_REPLAY_SCALARS": "whether replays pass scalars through (decided per call)",
}
"""ALLOT_* variables the backend reads that change no program text (plus the block-size
overrides, ALLOT_<KIND>_BLOCKS, which `host_runtime` reads when a program calls it)."""


def test_the_table_of_values_covers_every_knob() -> None:
    assert set(VALUES) == set(runtime.program_knobs())


@pytest.mark.parametrize("knob", sorted(VALUES))
def test_every_program_knob_changes_the_key(knob: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in VALUES:
        monkeypatch.delenv(k, raising=False)
    keys = {target: runtime.program_key(TEXT, "f", target) for target in runtime.TARGETS}
    monkeypatch.setenv(knob, VALUES[knob])
    for target, before in keys.items():
        assert runtime.program_key(TEXT, "f", target) != before, f"{knob} does not change the {target} key"


def test_poison_off_is_one_key_whatever_its_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALLOT_POISON", raising=False)
    unset = runtime.program_key(TEXT, "f", "cpu")
    for off in ("0", ""):
        monkeypatch.setenv("ALLOT_POISON", off)
        assert runtime.program_key(TEXT, "f", "cpu") == unset


def test_every_variable_the_code_generator_reads_is_a_knob_or_a_run_time_switch() -> None:
    found: set[str] = set()
    for folder in ("backend", "passes", "analysis", "dialects"):
        for path in (ROOT / folder).rglob("*.py"):
            found |= set(re.findall(r"ALLOT_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_])", path.read_text()))
    unknown = {v for v in found if not v.endswith("_BLOCKS")} - set(runtime.program_knobs()) - set(RUN_TIME_ONLY)
    assert not unknown, f"read by the code generator but not in the program cache key: {sorted(unknown)}"


def test_poison_mode_gets_a_poison_program_after_a_plain_one(monkeypatch: pytest.MonkeyPatch) -> None:
    text = """func.func @chain(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = fusion.exp %x : tensor<?x4xf32>
  %s = fusion.sum %a dims [1] keepdim : tensor<?x4xf32> -> tensor<?x1xf32>
  %m = fusion.mean %x dims [0] keepdim : tensor<?x4xf32> -> tensor<1x4xf32>
  %b = fusion.mul %a, %s : tensor<?x4xf32>, tensor<?x1xf32> -> tensor<?x4xf32>
  %y = fusion.add %b, %m : tensor<?x4xf32>, tensor<1x4xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
"""
    monkeypatch.delenv("ALLOT_POISON", raising=False)
    plain = allotment.compile(text)
    x = torch.randn(3, 4)
    (want,) = plain(x)
    assert "rt.poison(" not in plain.program("cpu").source
    monkeypatch.setenv("ALLOT_POISON", "1")
    poisoned = allotment.compile(text)
    (got,) = poisoned(x)
    assert "rt.poison(" in poisoned.program("cpu").source, "poison mode ran the plain program"
    torch.testing.assert_close(got, want)
