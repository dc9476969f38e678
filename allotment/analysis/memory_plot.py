"""A picture of a memory plan: one bar per buffer over the schedule, the peak marked.

Needs matplotlib (`pip install 'allotment[plot]'`); without it, `plot_profile`
raises an `UnsupportedError` that says how to install it.
"""

from __future__ import annotations

from pathlib import Path

from allotment.analysis.memory_profile import MemoryProfile
from allotment.errors import ArgumentError, UnsupportedError


def _held_bytes(profile: MemoryProfile) -> list[int]:
    """Bytes the plan holds at each step (from each alloc to its dealloc, or the end)."""
    held = [0] * (profile.steps + 1)
    for b in profile.buffers:
        if not b.holds_memory:
            continue
        stop = b.freed if b.freed is not None else profile.steps
        for i in range(b.start, stop + 1):
            held[i] += b.nbytes
    return held


def plot_profile(profile: MemoryProfile, path: str | Path) -> None:
    """Writes the timeline of `profile` to `path` (PNG, or any format matplotlib knows by suffix)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UnsupportedError(
            "--memory-plot needs matplotlib: pip install 'allotment[plot]' (or pip install matplotlib)"
        ) from None
    path = Path(path)
    if not path.parent.is_dir():
        raise ArgumentError(f"--memory-plot: the folder of {str(path)!r} does not exist")
    scale, unit = _unit(max([b.nbytes for b in profile.buffers], default=0))
    fig, (bars, total) = plt.subplots(2, 1, figsize=(10, 2 + 0.35 * max(1, len(profile.buffers))),
                                      sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    for row, b in enumerate(profile.buffers):
        stop = b.freed if b.freed is not None else profile.steps
        color = "tab:orange" if b.returned else ("tab:green" if b.memory.startswith("arena slot") else "tab:blue")
        bars.barh(row, stop - b.start + 1, left=b.start, color=color, alpha=0.8)
        bars.text(b.start, row, f" {b.name} ({b.nbytes / scale:.3g} {unit})", va="center", fontsize=8)
    bars.set_yticks([])
    bars.invert_yaxis()
    bars.set_title(f"@{profile.function}: {profile.summary()}", fontsize=9)
    held = _held_bytes(profile)
    total.step(range(len(held)), [h / scale for h in held], where="post", color="black")
    peak_at = max(range(len(held)), key=held.__getitem__) if held else 0
    total.axvline(peak_at, color="red", linestyle="--")
    total.annotate(f"peak {profile.planned_peak / scale:.3g} {unit}", (peak_at, held[peak_at] / scale if held else 0),
                   color="red", fontsize=8)
    total.set_ylabel(unit)
    total.set_xlabel("schedule step (top-level op)")
    fig.tight_layout()
    try:
        fig.savefig(path)
    except (OSError, ValueError) as e:
        raise ArgumentError(f"--memory-plot: cannot write {str(path)!r}: {e}") from None
    finally:
        plt.close(fig)


def _unit(nbytes: int) -> tuple[float, str]:
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= scale:
            return float(scale), unit
    return 1.0, "B"
