"""The register-cap rule (`allotment.backend.register_cap`): occupancy by registers, threads,
program slots and shared memory, and when a cap is proposed."""

from __future__ import annotations

import pytest

from allotment.backend.register_cap import MAX_CUT, SMLimits, occupancy_cap, programs_per_sm

H100 = SMLimits()


@pytest.mark.parametrize(
    ("regs", "warps", "shared", "expected"),
    [
        (59, 8, 0, 4),  # 64 a thread after rounding: 65536 / (64 * 256)
        (48, 8, 0, 5),  # 65536 / (48 * 256) = 5.3
        (32, 8, 0, 8),  # threads limit it: 2048 / 256
        (16, 1, 0, 32),  # program slots limit it
        (32, 4, 64 * 1024, 3),  # shared memory limits it
        (255, 32, 0, 0),  # 256 a thread x 1024 threads do not fit
    ],
)
def test_programs_per_sm(regs: int, warps: int, shared: int, expected: int) -> None:
    assert programs_per_sm(regs, warps, shared, H100) == expected


def test_cap_buys_one_more_program() -> None:
    # the `?` attention epilogue at 12x999x999: 59 registers, 8 warps, 2997 programs
    cap = occupancy_cap(59, 8, 0, 2997, H100, allowed=True)
    assert cap == 48
    assert programs_per_sm(cap, 8, 0, H100) == programs_per_sm(59, 8, 0, H100) + 1


@pytest.mark.parametrize(
    ("regs", "warps", "shared", "programs", "why"),
    [
        (32, 8, 0, 100_000, "threads limit it already"),
        (40, 8, 0, 500, "every program is resident (6 an SM x 132 SMs)"),
        (128, 4, 0, 100_000, "one more program needs 80 registers: a cut past MAX_CUT"),
        (59, 8, 100 * 1024, 100_000, "shared memory allows 2: the cap buys nothing"),
    ],
)
def test_no_cap(regs: int, warps: int, shared: int, programs: int, why: str) -> None:
    assert occupancy_cap(regs, warps, shared, programs, H100, allowed=True) is None, why


def test_cut_never_past_max() -> None:
    for regs in range(16, 256):
        for warps in (1, 2, 4, 8, 16, 32):
            cap = occupancy_cap(regs, warps, 0, 10**7, H100, allowed=True)
            if cap is not None:
                assert cap % 8 == 0 and (1 - MAX_CUT) * regs <= cap < regs
                assert programs_per_sm(cap, warps, 0, H100) > programs_per_sm(regs, warps, 0, H100)


def test_old_rule_never_caps() -> None:
    assert occupancy_cap(59, 8, 0, 2997, H100, allowed=False) is None


def test_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ALLOT_REGISTER_CAP", raising=False)
    assert occupancy_cap(59, 8, 0, 2997, H100) is None
    monkeypatch.setenv("ALLOT_REGISTER_CAP", "1")
    assert occupancy_cap(59, 8, 0, 2997, H100) == 48
