"""A picture of a memory plan: one bar per buffer over the schedule, the peak marked.

Needs matplotlib (`pip install 'allotment[plot]'`); without it, `plot_profile`
raises an `UnsupportedError` that says how to install it.
"""

from __future__ import annotations

from pathlib import Path

from allotment.analysis.memory_profile import MemoryProfile
from allotment.errors import ArgumentError, UnsupportedError


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
    names = [name for _, name in profile.kernels]
    fig, (bars, total) = plt.subplots(2, 1, figsize=(max(6, min(24, 2 + 0.6 * len(names))),
                                                     2 + 0.35 * max(1, len(profile.buffers))),
                                      sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    # x: the kernels, one unit each; a buffer's bar covers the kernels that run while it
    # holds its memory (from its alloc to its dealloc: `MemoryProfile.kernel_span`).
    # A tensor written in place of a dead one has no bar of its own: its name joins the
    # bar of the buffer that holds it (the report's "in place of NAME").
    guests: dict[str, list[str]] = {}
    for b in profile.buffers:
        if b.memory.startswith("in place of "):
            guests.setdefault(b.memory.removeprefix("in place of "), []).append(b.name)
    drawn = [b for b in profile.buffers if not b.memory.startswith("in place of ")]
    for row, b in enumerate(drawn):
        first, stop = profile.kernel_span(b)
        color = "tab:orange" if b.returned else ("tab:green" if b.memory.startswith("arena slot") else "tab:blue")
        bars.barh(row, stop - first, left=first, color=color, alpha=0.8)
        also = f"; then {', '.join(guests[b.name])} in place" if b.name in guests else ""
        bars.text(first, row, f" {b.name} ({b.nbytes / scale:.3g} {unit}{also})", va="center", fontsize=8)
    bars.set_yticks([])
    bars.invert_yaxis()
    bars.set_title(f"@{profile.function}: planned peak {profile.planned_peak / scale:.3g} {unit}, lower bound "
                   f"{profile.lower_bound / scale:.3g} {unit}, without reuse {profile.without_reuse / scale:.3g} {unit}",
                   fontsize=9)
    held = profile.held_per_kernel()
    if held:
        total.bar([k + 0.5 for k in range(len(held))], [h / scale for h in held], width=0.9, color="gray")
        peak_at = max(range(len(held)), key=held.__getitem__)
        total.annotate(f"peak {profile.planned_peak / scale:.3g} {unit}", (peak_at + 0.5, held[peak_at] / scale),
                       color="red", fontsize=8, ha="center", va="bottom")
        total.set_ylim(0, max(held) / scale * 1.3 or 1)
    total.set_xlim(0, max(1, len(names)))
    total.set_xticks([k + 0.5 for k in range(len(names))], names, fontsize=8,
                     rotation=0 if len(names) <= 12 else 90)
    total.set_ylabel(f"held ({unit})")
    total.set_xlabel("kernel (in schedule order)")
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
