"""Whether a CPU run of `allot-run` fits in this machine's memory, decided before anything
is allocated.

On the CPU, a run larger than memory does not fail with an error: Linux grants the
allocations and then kills the process (the out-of-memory killer) when it touches pages it
cannot back, so the user sees `Killed` and no message. A `--check` at 2**31 elements is
one such run. This module compares what the run needs at least with what the machine has
and refuses with an error that names both figures and the shapes.

What a run needs at least (bytes, from the memory plan of the fusion at these shapes,
`allocation.memory_plan`; nothing is allocated to know it):

- the compiled program: its planned peak with the arguments counted
  (`MemoryProfile.peak_with_arguments`);
- the reference evaluator (`--reference`, `--check`): the arguments plus every global
  buffer of the unplanned program (`without_reuse`), since it keeps every value it
  computes until it returns, and each global buffer is one of those values (the values a
  kernel keeps on chip come on top, so this is less than it needs).

What the machine has: `MemAvailable` of /proc/meminfo, lowered to what the cgroup's
memory limit leaves (`memory.max - memory.current`, cgroup v2) where there is one. Where
neither can be read, nothing is refused. A run on a GPU still draws its inputs on the
CPU, one at a time (`staging_needs`); the GPU's allocator reports its own out-of-memory
error, which the tools already turn into a message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from allotment.analysis.memory_profile import MemoryProfile
from allotment.errors import RunError

MEMINFO = Path("/proc/meminfo")
CGROUP = Path("/sys/fs/cgroup")


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _mem_available(meminfo: Path) -> int | None:
    """`MemAvailable` of a /proc/meminfo, in bytes, or None where it cannot be read."""
    try:
        lines = meminfo.read_text().splitlines()
    except OSError:
        return None
    fields = next((line.split() for line in lines if line.startswith("MemAvailable:")), [])
    return int(fields[1]) * 1024 if len(fields) > 1 and fields[1].isdigit() else None


def available_bytes(meminfo: Path = MEMINFO, cgroup: Path = CGROUP) -> int | None:
    """Bytes this process can still allocate and touch without being killed, or None where
    that cannot be read (not Linux)."""
    found = [n for n in (_mem_available(meminfo),) if n is not None]
    limit, used = _read_int(cgroup / "memory.max"), _read_int(cgroup / "memory.current")
    if limit is not None and used is not None:  # "max" (no limit) reads as None
        found.append(max(0, limit - used))
    return min(found) if found else None


def run_needs(profile: MemoryProfile, compiled: bool, reference: bool) -> int:
    """The least bytes a run needs: the compiled program's planned peak with its arguments,
    the reference evaluator's arguments plus every global buffer, or the larger of the two
    where both run (see the module docstring)."""
    arguments = sum(a.nbytes for a in profile.arguments)
    need = profile.peak_with_arguments() if compiled else 0
    if reference:
        need = max(need, arguments + profile.without_reuse)
    return need


def staging_needs(profile: MemoryProfile) -> int:
    """The least CPU bytes a run on a GPU needs: its inputs are drawn on the CPU one at a time
    and then moved (`reference.random_inputs`), so the largest of them."""
    return max((a.nbytes for a in profile.arguments), default=0)


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def require_fits(need: int, shapes: str, available: Callable[[], int | None] | None = None,
                 advice: str = "use smaller --shapes, or --device cuda") -> None:
    """A RunError where `need` bytes of CPU memory exceed what the machine has (`available`,
    by default `available_bytes`)."""
    have = (available or available_bytes)()
    if have is not None and need > have:
        raise RunError(
            f"this run needs at least {_gib(need)} of memory on the cpu ({shapes}), and {_gib(have)} is "
            f"available: it would be killed by the operating system ({advice})"
        )
