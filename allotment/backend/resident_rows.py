"""Rows a program by residency: whether a persistent row kernel's first launch halves BLOCK_M.

A persistent row kernel holds BLOCK_M whole rows a program. How many registers that takes
is ptxas's answer, known only once the kernel is compiled, and a few registers can halve
how many threads an SM keeps resident. The `?` attention epilogue at 12x999x999 (rows of
999 as 4 x 1024 lanes on 8 warps) gets 59 registers a thread where its static twin gets 48
(the run-time row divisor and column bound together: BENCHMARKS.md), so an SM holds 4 of
its programs, 32 warps, half its threads, and it read 30.1 us on an H100 against the
static kernel's 25.2. At 2 rows a program it compiles to 32 registers, 64 warps an SM, and
reads 24.8 (`benchmarks/env_sweep.sh`, 2026-12-07). Halving every multi-row program instead
(`rows_within_8` in `benchmarks/schedule_ab.py`) read 1.02 to 1.10x slower on kernels an
SM already held at 40 to 64 warps.

`halve` is the rule: a kernel of at least 2 rows a program, launched over more programs
than the SMs hold at once, whose SM holds at most `MAX_SHARE` of its threads. The launcher
(`launch._first_launch`, for kernels launched by `launch_kernel(..., rows=M)`) then compiles
the kernel at BLOCK_M / 2 and launches that build over twice the programs where it spills
nothing and an SM holds more of its warps than of the first build's; otherwise the first
build runs. Results do not change (each row is reduced by one program either way); only
the rows a program and the grid do. Decided once a specialization, at its first launch, so
a call's later launches and its replays launch the same build.

On unless `ALLOT_RESIDENT_ROWS=0`.
"""

from __future__ import annotations

import os

from allotment.backend.register_cap import SMLimits, programs_per_sm

MAX_SHARE = 0.5
"""The largest share of an SM's threads a kernel may keep resident and still have its rows
halved: the `?` attention epilogue above holds 50%; the kernels where halving lost held 62.5
to 100% (BENCHMARKS.md, the occupancy table of 2026-12-07)."""


def enabled() -> bool:
    """Whether the rule is on (default; read at each specialization's first launch):
    `ALLOT_RESIDENT_ROWS=0` turns it off, and so does `ALLOT_PERSISTENT_BLOCKS`, whose blocks
    a tuning run (`benchmarks/env_sweep.sh`) means to time as it gives them."""
    if os.environ.get("ALLOT_PERSISTENT_BLOCKS"):
        return False
    return os.environ.get("ALLOT_RESIDENT_ROWS", "1") not in ("", "0")


def resident_warps(regs: int, warps: int, shared: int, sm: SMLimits) -> int:
    """Warps of a kernel (`regs` registers a thread, `warps` a program, `shared` bytes) one SM holds at once."""
    return programs_per_sm(regs, warps, shared, sm) * warps


def halve(regs: int, warps: int, shared: int, block_m: int, programs: int, sm: SMLimits,
          allowed: bool | None = None) -> bool:
    """Whether a persistent row kernel of `block_m` rows a program, compiled to `regs`
    registers a thread and `shared` bytes on `warps` warps and launched over `programs`
    programs, is to be tried at half its rows: at least 2 rows a program, an SM holding at
    most `MAX_SHARE` of its threads, and more programs than the SMs hold at once. `allowed`
    (default: `enabled()`) False is the old rule (never), for `benchmarks/schedule_ab.py`."""
    if not (enabled() if allowed is None else allowed) or block_m < 2 or warps < 1:
        return False
    held = programs_per_sm(regs, warps, shared, sm)
    if held < 1 or programs <= held * sm.count:
        return False
    return held * warps * 32 <= MAX_SHARE * sm.threads


def keep_halved(first: tuple[int, int, int], halved: tuple[int, int, int], halved_spills: int, sm: SMLimits) -> bool:
    """Whether the build at half the rows replaces the first one: it spills nothing and an SM
    holds more of its warps. `first` and `halved` are (registers, warps, shared bytes)."""
    return halved_spills == 0 and resident_warps(*halved, sm) > resident_warps(*first, sm)
