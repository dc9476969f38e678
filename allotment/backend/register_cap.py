"""Occupancy by a register cap: whether a compiled kernel is recompiled with `maxnreg`.

An SM holds as many programs of a kernel as its registers, threads, program slots and
shared memory allow. Registers are allocated a warp at a time, in units of 256 (8 a
thread), so a kernel a few registers past a step holds a whole program less: the
`?` attention epilogue at 12x999x999 (rows of 999 held in a 4x1024 tile, 8 warps) gets
59 registers from ptxas where its static twin gets 48, 4 programs an SM against 5, and
reads 1.18x the static one's time on an H100 (skeptic run of 2026-12-07). The
difference is ptxas's choice, not the kernel's need: compiled with `.maxnreg 48` it
spills nothing.

`occupancy_cap` is the rule: given what ptxas gave a kernel, the register count that
buys one more program an SM, where that cuts at most `MAX_CUT` of its registers and the
launch has more programs than the SMs hold at once. The launcher (`launch._first_launch`)
then compiles the kernel again with that cap and keeps the capped build only where it
spills nothing; otherwise the kernel runs as ptxas first built it. Results do not change
(the same instructions over fewer registers); only residency does.

It is off unless `ALLOT_REGISTER_CAP=1`: timed on an H200 (`benchmarks/schedule_ab.py
--rules register_cap`, 2026-12-07, 16 bf16 suite programs where the cap applies spill-free)
it read 0.95x for the `?` attention epilogue above and 0.94 to 0.97x for the transposed
adds and the odd add-RMSNorm, but 1.13x for the static attention epilogue (48 registers
capped to 40, five programs an SM to six) and 1.005 to 1.025x for five others: more programs
an SM is not always faster, and nothing the launcher knows before timing tells those apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_CUT = 0.2
"""The largest share of a kernel's registers a cap may take away: the deeper the cut, the
more ptxas must spill or recompute (offline, sm_90: of the 40 launches of the bf16 suite
this rule caps, 13 spill even within 20%, `benchmarks/offline_kernels.py`)."""


REG_UNIT = 8
"""Registers a thread are allocated in units of 8 (256 a warp)."""


@dataclass(frozen=True)
class SMLimits:
    """What one SM of the device holds: registers, threads, programs and shared memory
    (bytes), and how many SMs the device has."""

    registers: int = 65536
    threads: int = 2048
    programs: int = 32
    shared: int = 227 * 1024
    count: int = 132


def programs_per_sm(regs: int, warps: int, shared: int, sm: SMLimits) -> int:
    """Programs of a kernel with `regs` registers a thread, `warps` warps and `shared` bytes
    of shared memory that one SM holds at once."""
    per_thread = -(-max(regs, 1) // REG_UNIT) * REG_UNIT
    by_regs = sm.registers // (per_thread * 32 * warps)
    by_shared = sm.shared // shared if shared else sm.programs
    return max(0, min(by_regs, sm.threads // (32 * warps), sm.programs, by_shared))


def enabled() -> bool:
    """Whether the rule is on (`ALLOT_REGISTER_CAP=1`; read at each specialization's first launch)."""
    return os.environ.get("ALLOT_REGISTER_CAP", "0") not in ("", "0")


def occupancy_cap(regs: int, warps: int, shared: int, programs: int, sm: SMLimits,
                  allowed: bool | None = None) -> int | None:
    """The `maxnreg` that gives a kernel (`regs` registers a thread from ptxas, `warps`,
    `shared` bytes, launched over `programs` programs) one more program an SM, or None:
    where registers are not what limits it, where the cap would cut more than `MAX_CUT` of
    its registers, or where every program of the launch is resident already. `allowed`
    (default: `enabled()`) False is the old rule (no cap), for `benchmarks/schedule_ab.py`."""
    if not (enabled() if allowed is None else allowed) or warps < 1:
        return None
    now = programs_per_sm(regs, warps, shared, sm)
    if now < 1 or programs <= now * sm.count:
        return None
    cap = sm.registers // ((now + 1) * 32 * warps) // REG_UNIT * REG_UNIT
    if cap < 16 or cap >= regs or cap < (1 - MAX_CUT) * regs:
        return None
    if programs_per_sm(cap, warps, shared, sm) <= now:  # threads, slots or shared memory limit it
        return None
    return cap
