"""The fusion suite measured like a skeptic: kernel-only times of every side, torch.compile
at its best, interleaved repeats with their spread, real nvFuser on the same definitions,
and a memory bound checked against every measured peak.

The cases are `suite_fusions.py`'s 30 fusions in the ninth run's matrix: bf16 with static
and `?` extents at the large and odd sizes and `?` at the small size, f32 `?` and f16
static at the large size (180 cases past the small size, 30 at it). Cases of one fusion,
element type and size share one group: one set of inputs, and the sides measured once
for all of them, in turn:

- `eager`: the fusion's torch function;
- `compile_static`: `torch.compile(dynamic=False)` at this shape (the `compile` column of
  a static case, and the `compile_static` column of a `?` case);
- `compile_dynamic`: `torch.compile(dynamic=True)`, one compile for every size of the
  fusion and element type (the `compile` column of a `?` case);
- `compile_max_autotune`: `mode="max-autotune-no-cudagraphs"`, static, at the large size
  (`--max-autotune`; slow to compile);
- `allotment_static`, `allotment_dynamic`: Allotment's compile of the fusion text with
  static or `?` extents (one `?` program for every size);
- `nvfuser_static`, `nvfuser_dynamic`: real nvFuser (`nvfuser_direct`), on the same fusion
  written by the same build function (`suite_fd.py`); where it does not import, every
  case records the import error and the column is empty.

Each side's first call is timed (compile and first run; for `?` sides past their first size,
the cost of a new shape), its outputs checked against eager's, then every side is timed
kernel-only (`kernel_timing.py`: CUDA-graph replay over rotating input sets, torch.profiler
kernel sums where a side cannot be captured), `--repeats` samples each, interleaved.
Ratios use medians; min and max are kept. Peak memory of one call per side (torch's
allocator, above what was held before it) plus the inputs is checked against the lower
bound inputs + outputs (see `lower_bound` below): a peak under it is flagged as a bug of
the measurement. At the small size, host µs per call per side, torch.compile's
`mode="reduce-overhead"` beside its default.

    python benchmarks/skeptic_suite.py --out R.json --markdown R.md [--budget-s N] [--max-autotune]
        [--dtypes bf16] [--fusions a,b] [--shard K/N] [--repeats 5]
    python benchmarks/skeptic_suite.py --merge A.json B.json --out R.json --markdown R.md
    python benchmarks/skeptic_suite.py --cpu-check --fusions rmsnorm_fwd --out /tmp/c.json

`--cpu-check` runs the same code on the CPU at the `tiny` extents (every size name maps to
them): eager, torch.compile on the CPU, Allotment through Triton's interpreter, nvFuser
as far as it imports; times are wall clock (`WallTimer`) and mean nothing.

Exit status: 1 if an Allotment output does not match eager's or Allotment fails a case,
2 if a memory bound is above a measured peak; 0 otherwise (partial or not).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import kernel_timing as kt  # noqa: E402
import suite_fd  # noqa: E402
from suite_fusions import DTYPES, FUSIONS, SuiteFusion, check_outputs  # noqa: E402

import allotment  # noqa: E402

PHASES: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    ("bf16", (("large", ("static", "dynamic")), ("odd", ("static", "dynamic")), ("small", ("dynamic",)))),
    ("f32", (("large", ("dynamic",)),)),
    ("f16", (("large", ("static",)),)),
)
"""The ninth run's matrix, in the order it runs (bf16 first): per element type, per fusion,
the sizes and the extents kinds measured at each."""

TARGETS = {"static_geomean": 1.2, "dynamic_vs_static_geomean": 1.0, "worst_vs_best_compile": 0.9,
           "nvfuser_geomean": 1.0, "median_pct_copy": 85.0, "min_pct_copy_large": 70.0,
           "host_us_per_kernel": 10.0}
"""Issue 30's targets, checked on medians."""


@dataclass(frozen=True)
class Group:
    """The cases of one fusion, element type and size, measured together."""

    fusion: str
    dtype: str
    size: str
    extents: tuple[str, ...]


def plan(fusions: Sequence[str], dtypes: Sequence[str], only_sizes: Sequence[str] = ()) -> list[Group]:
    """The groups of the run, in order: every phase's dtype in `dtypes`, each fusion at each
    of its sizes (those in `only_sizes`, where given: a sweep's subset)."""
    return [Group(name, dtype, size, ext) for dtype, sizes in PHASES if dtype in dtypes
            for name in fusions for size, ext in sizes if not only_sizes or size in only_sizes]


# --------------------------------------------------------------------------- #
# Summary (no GPU needed)                                                     #
# --------------------------------------------------------------------------- #


def geomean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def _med(row: dict[str, Any], label: str) -> float | None:
    t = row.get("times", {}).get(label)
    return t["median"] if t else None


def case_name(r: dict[str, Any]) -> str:
    return f"{r['fusion']} {r['dtype']} {'`?`' if r['extents'] == 'dynamic' else 'static'} {r['size']}"


def distribution(values: Sequence[tuple[float, str]]) -> dict[str, Any] | None:
    if not values:
        return None
    vs = sorted(values)
    return {"n": len(vs), "mean": statistics.fmean(v for v, _ in vs), "median": statistics.median(v for v, _ in vs),
            "lowest5": [[round(v, 1), n] for v, n in vs[:5]]}


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The headline (medians), the spread of the cases below target, % of copy distributions,
    nvFuser, host and memory checks, and each target met or not."""
    ok = [r for r in rows if r.get("status") == "ok"]
    timed = [r for r in ok if r["size"] != "small"]
    static = [r for r in timed if r["extents"] == "static"]
    dyn = [r for r in timed if r["extents"] == "dynamic"]
    s: dict[str, Any] = {"cases": len(rows), "ok": len(ok),
                         "failures": [f"{case_name(r)}: {r.get('status')}: {r.get('error', '')}" for r in rows
                                      if r.get("status") in ("mismatch", "error")],
                         "not_run": [f"{case_name(r)}: {r.get('status')}: {r.get('error', '')}" for r in rows
                                     if r.get("status") not in ("ok", "mismatch", "error")]}
    vs = lambda rs, k: [r["vs"][k] for r in rs if r.get("vs", {}).get(k)]  # noqa: E731
    s["static_cases"] = len(static)
    s["static_geomean_vs_compile"] = geomean(vs(static, "compile"))
    s["dynamic_cases"] = len(dyn)
    s["dynamic_geomean_vs_compile_dynamic"] = geomean(vs(dyn, "compile"))
    s["dynamic_geomean_vs_compile_static"] = geomean(vs(dyn, "compile_static"))
    s["all_geomean_vs_best_compile"] = geomean(vs(timed, "compile_best"))
    s["max_autotune_cases"] = sum(1 for r in timed if _med(r, "compile_max_autotune"))
    below = [r for r in timed if r.get("vs", {}).get("compile_best") is not None and r["vs"]["compile_best"] < TARGETS["worst_vs_best_compile"]]
    s["below_09_vs_best_compile"] = [
        f"{case_name(r)}: {r['vs']['compile_best']:.2f}x vs {r['best_compile']} "
        f"(Allotment {_fmt_spread(r['times'].get('allotment'))}, {r['best_compile']} {_fmt_spread(r['times'].get(r['best_compile']))})"
        for r in sorted(below, key=lambda r: r["vs"]["compile_best"])]
    worst = min((r for r in timed if r.get("vs", {}).get("compile_best")), key=lambda r: r["vs"]["compile_best"], default=None)
    s["worst_vs_best_compile"] = [worst["vs"]["compile_best"], case_name(worst)] if worst else None
    nv = [r for r in timed if r.get("vs", {}).get("nvfuser")]
    s["nvfuser_cases"] = len(nv)
    s["nvfuser_geomean"] = geomean(vs(nv, "nvfuser"))
    s["nvfuser_wins"] = [f"{case_name(r)}: {r['vs']['nvfuser']:.2f}x" for r in sorted(nv, key=lambda r: r["vs"]["nvfuser"])
                         if r["vs"]["nvfuser"] < 1.0]
    errs = sorted({r.get("errors", {}).get("nvfuser", "") for r in rows} - {""})
    s["nvfuser_errors"] = errs[:5]
    for size in ("large", "odd"):
        mb = [(r["pct_copy"], case_name(r)) for r in ok if r["size"] == size and r.get("memory_bound") and r.get("pct_copy")]
        s[f"pct_copy_{size}"] = distribution(mb)
    mb_all = [(r["pct_copy"], case_name(r)) for r in ok if r["size"] in ("large", "odd") and r.get("memory_bound") and r.get("pct_copy")]
    s["pct_copy_all"] = distribution(mb_all)
    s["pct_copy_large_below_70"] = [f"{n} ({v:.0f}%)" for v, n in sorted(
        (r["pct_copy"], case_name(r)) for r in ok if r["size"] == "large" and r.get("memory_bound") and r.get("pct_copy")
        and r["pct_copy"] < TARGETS["min_pct_copy_large"])]
    small = [r for r in ok if r["size"] == "small" and r.get("host")]
    per_kernel = [(r["host"]["us_per_kernel"], case_name(r)) for r in small if r["host"].get("us_per_kernel")]
    s["host_us_per_kernel_max"] = list(max(per_kernel)) if per_kernel else None
    s["host_us_per_kernel_median"] = statistics.median(v for v, _ in per_kernel) if per_kernel else None
    ro = [r for r in small if r["host"]["us"].get("compile_reduce_overhead") and r["host"]["us"].get("allotment")]
    s["host_vs_reduce_overhead"] = {"cases": len(ro), "allotment_not_below": [
        f"{case_name(r)}: {r['host']['us']['allotment']:.1f} vs {r['host']['us']['compile_reduce_overhead']:.1f} us"
        for r in ro if r["host"]["us"]["allotment"] >= r["host"]["us"]["compile_reduce_overhead"]]}
    viol = [f"{case_name(r)}: {side}" for r in rows for side in r.get("memory", {}).get("violations", [])]
    s["memory_bound_violations"] = viol
    ratios: dict[str, list[float]] = {}
    for r in rows:
        for side, v in r.get("memory", {}).get("peak_over_in_out", {}).items():
            ratios.setdefault(side, []).append(v)
    s["memory_peak_over_in_out_median"] = {k: statistics.median(v) for k, v in sorted(ratios.items())}
    s["first_call_s"] = _first_calls(rows)
    s["targets"] = _targets(s)
    return s


def _first_calls(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Median and max seconds of each column's first call (a compile and a run), and of a
    `?` column's first call at a new shape (its sizes after the large one)."""
    seen: dict[str, list[float]] = {}
    for r in rows:
        for c, v in r.get("first_call_s", {}).items():
            new_shape = r["extents"] == "dynamic" and r["size"] != "large" and c in ("compile", "allotment", "nvfuser")
            seen.setdefault(f"{c} (new shape)" if new_shape else c, []).append(v)
    return {k: {"median": statistics.median(v), "max": max(v), "n": len(v)} for k, v in sorted(seen.items())}


def _targets(s: dict[str, Any]) -> dict[str, str]:
    def met(value: float | None, target: float, above: bool = True) -> str:
        if value is None:
            return "not measured"
        good = value >= target if above else value <= target
        return f"{'met' if good else 'NOT met'} ({value:.3g} vs {'>=' if above else '<='} {target:g})"

    t = TARGETS
    pl, po = s.get("pct_copy_large"), s.get("pct_copy_odd")
    return {
        "static geomean vs compile >= 1.2": met(s["static_geomean_vs_compile"], t["static_geomean"]),
        "`?` geomean vs compile static >= 1.0": met(s["dynamic_geomean_vs_compile_static"], t["dynamic_vs_static_geomean"]),
        "no case below 0.9x the fastest compile": met(s["worst_vs_best_compile"][0] if s["worst_vs_best_compile"] else None,
                                                      t["worst_vs_best_compile"]),
        "nvFuser geomean >= 1.0 (never met by default)": met(s["nvfuser_geomean"], t["nvfuser_geomean"])
        if s["nvfuser_cases"] else "not measured (nvFuser did not run)",
        "median % copy >= 85 (large)": met(pl["median"] if pl else None, t["median_pct_copy"]),
        "median % copy >= 85 (odd)": met(po["median"] if po else None, t["median_pct_copy"]),
        "no large memory-bound case below 70% of copy": "met" if pl and not s["pct_copy_large_below_70"]
        else ("not measured" if not pl else f"NOT met ({len(s['pct_copy_large_below_70'])} cases)"),
        "host us per kernel <= 10": met(s["host_us_per_kernel_max"][0] if s["host_us_per_kernel_max"] else None,
                                        t["host_us_per_kernel"], above=False),
        "host per call below reduce-overhead": "not measured" if not s["host_vs_reduce_overhead"]["cases"]
        else ("met" if not s["host_vs_reduce_overhead"]["allotment_not_below"]
              else f"NOT met ({len(s['host_vs_reduce_overhead']['allotment_not_below'])} cases)"),
    }


def _fmt_spread(t: dict[str, float] | None) -> str:
    return "" if not t else f"{t['median']:.1f} [{t['min']:.1f}-{t['max']:.1f}]"


def _num(v: Any, fmt: str = ".2f") -> str:
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, fmt)


COLUMNS = ("eager", "compile", "compile_static", "compile_max_autotune", "allotment", "nvfuser")


def markdown(rows: Sequence[dict[str, Any]], summary: dict[str, Any], meta: dict[str, Any]) -> str:
    """The summary, the targets and one row per case, generated from the results alone."""
    s = summary
    g = lambda v: "n/a" if v is None else f"{v:.2f}x"  # noqa: E731
    lines = ["# Fusion suite, measured like a skeptic", "",
             ", ".join(f"{k}: {v}" for k, v in meta.items() if k not in ("argv",)), "",
             "## Summary (medians of interleaved repeats, kernel-only)", "",
             f"- cases: {s['cases']}, ok: {s['ok']}, failures: {len(s['failures'])}, not run: {len(s['not_run'])}",
             f"- static cases ({s['static_cases']}): geomean vs torch.compile(dynamic=False) {g(s['static_geomean_vs_compile'])}",
             f"- `?` cases ({s['dynamic_cases']}): vs torch.compile(dynamic=True) {g(s['dynamic_geomean_vs_compile_dynamic'])}, "
             f"vs torch.compile's static compile at the same shape {g(s['dynamic_geomean_vs_compile_static'])}",
             f"- every case vs the fastest torch.compile column: {g(s['all_geomean_vs_best_compile'])}; worst "
             + (f"{s['worst_vs_best_compile'][0]:.2f}x ({s['worst_vs_best_compile'][1]})" if s["worst_vs_best_compile"] else "n/a")
             + f"; max-autotune measured in {s['max_autotune_cases']} cases",
             f"- below 0.9x the fastest compile column: {len(s['below_09_vs_best_compile'])}"]
    lines += [f"  - {x}" for x in s["below_09_vs_best_compile"]]
    lines.append(f"- nvFuser ({s['nvfuser_cases']} cases): geomean {g(s['nvfuser_geomean'])}"
                 + (f"; nvFuser faster in {len(s['nvfuser_wins'])}" if s["nvfuser_cases"] else "")
                 + (f"; errors: {'; '.join(s['nvfuser_errors'])}" if s["nvfuser_errors"] else ""))
    for key, what in (("pct_copy_large", "large"), ("pct_copy_odd", "odd"), ("pct_copy_all", "large and odd")):
        d = s.get(key)
        if d:
            lines.append(f"- % of copy, memory-bound, {what} ({d['n']} cases): mean {d['mean']:.0f}%, median "
                         f"{d['median']:.0f}%, lowest five: " + ", ".join(f"{n} {v:.0f}%" for v, n in d["lowest5"]))
    if s["host_us_per_kernel_max"]:
        lines.append(f"- host µs per launched kernel (small size): median {s['host_us_per_kernel_median']:.1f}, max "
                     f"{s['host_us_per_kernel_max'][0]:.1f} ({s['host_us_per_kernel_max'][1]}); Allotment's call not below "
                     f"reduce-overhead's in {len(s['host_vs_reduce_overhead']['allotment_not_below'])} of "
                     f"{s['host_vs_reduce_overhead']['cases']}")
    lines.append(f"- memory: bound above a measured peak in {len(s['memory_bound_violations'])} (side, case) pairs"
                 + (": " + ", ".join(s["memory_bound_violations"][:10]) if s["memory_bound_violations"] else "")
                 + "; median peak / (inputs + outputs): "
                 + ", ".join(f"{k} {v:.3f}" for k, v in s["memory_peak_over_in_out_median"].items()))
    if s.get("first_call_s"):
        lines.append("- first call, s (compile and run; median / max): " + ", ".join(
            f"{k} {v['median']:.2f} / {v['max']:.2f}" for k, v in s["first_call_s"].items())
            + ("; max-autotune's builds were warmed before the run (`--warm-max-autotune`): its first calls are a "
               "warm cache's" if meta.get("max_autotune_warmed") else ""))
    lines += ["", "## Targets", ""] + [f"- {k}: {v}" for k, v in s["targets"].items()]
    for what in ("failures", "not_run"):
        if s[what]:
            shown = s[what] if what == "failures" else s[what][:20]
            lines += ["", f"{what.replace('_', ' ').capitalize()} ({len(s[what])}):", ""] + [f"- {f}" for f in shown]
            if len(shown) < len(s[what]):
                lines.append(f"- ... and {len(s[what]) - len(shown)} more (the JSON lists them)")
    lines += ["", "## Cases", "",
              "µs per call, kernel-only: median [min-max] of the repeats. compile = torch.compile of the case's kind "
              "(static: dynamic=False; `?`: dynamic=True); compile static = dynamic=False at the same shape; "
              "max-autotune = mode max-autotune-no-cudagraphs. vs = that column's median over Allotment's "
              "(above 1: Allotment faster); best = the fastest compile column. % copy = the median time of a device "
              "copy moving the case's input + output bytes (timed the same way; above 256 MiB at that copy's "
              "bandwidth) over Allotment's median: a kernel that only reads may pass 100%. peak/(in+out): e/c/a/n. "
              "Methods other than cuda-graph are marked after the time.",
              "",
              "| case | eager | compile | compile static | max-autotune | Allotment | nvFuser | vs compile | vs static "
              "| vs best | vs nvFuser | % copy | peak/(in+out) e/c/a/n | host µs e/c/ro/a/n | status |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |"]
    for r in rows:
        cells = []
        for c in COLUMNS:
            t = r.get("times", {}).get(c)
            m = r.get("methods", {}).get(c, "")
            cells.append(_fmt_spread(t) + (f" ({m})" if t and m and m != "cuda-graph" else "")
                         + (" (`?` def)" if c == "nvfuser" and t and r.get("nvfuser_definition") == "dynamic" else ""))
        v = r.get("vs", {})
        mem = r.get("memory", {}).get("peak_over_in_out", {})
        peak = "/".join(_num(mem.get(k), ".2f") for k in ("eager", "compile", "allotment", "nvfuser")) if mem else ""
        h = r.get("host", {}).get("us", {})
        host = "/".join(_num(h.get(k), ".1f") for k in ("eager", "compile", "compile_reduce_overhead", "allotment", "nvfuser")) if h else ""
        lines.append(f"| {case_name(r)} {r.get('shape', '')} | " + " | ".join(cells)
                     + f" | {_num(v.get('compile'))} | {_num(v.get('compile_static'))} | {_num(v.get('compile_best'))} "
                     f"| {_num(v.get('nvfuser'))} | {_num(r.get('pct_copy'), '.0f')} | {peak} | {host} | {r.get('status', '')} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- #
# Running                                                                     #
# --------------------------------------------------------------------------- #


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:300] if text else ''}"


def import_nvfuser() -> tuple[types.ModuleType | None, str]:
    """`nvfuser_direct` and its version, or None and why it does not import. The import is
    tried in a child process first: a wheel built for another torch can abort the process
    that loads it, which must not take the suite down."""
    try:
        probe = subprocess.run([sys.executable, "-c", "import torch, nvfuser_direct"], capture_output=True, text=True,
                               timeout=300)
    except Exception as e:  # noqa: BLE001
        return None, f"not importable: the import check failed: {_short(e)}"
    if probe.returncode != 0:
        tail = [ln for ln in (probe.stderr or "").strip().splitlines() if ln.strip()][-1:] or [f"exit {probe.returncode}"]
        return None, f"not importable: {tail[0][:400]} (exit {probe.returncode})"
    try:
        import nvfuser_direct  # type: ignore[import-not-found]
    except BaseException as e:  # noqa: BLE001 (an import can fail in any way: a missing symbol, an abort)
        return None, f"not importable: {_short(e)}"
    version = getattr(nvfuser_direct, "__version__", None) or getattr(nvfuser_direct, "version", lambda: "?")()
    return nvfuser_direct, f"nvfuser_direct {version}"


def case_extents(f: SuiteFusion, size: str, cpu_check: bool) -> dict[str, int]:
    """The extents a group runs at: its size's, or the tiny ones with `--cpu-check`."""
    return f.sizes["tiny"] if cpu_check else f.sizes[size]


def max_autotune_compile(f: SuiteFusion, size: str, backend: str) -> Callable[..., Any]:
    """torch.compile's max-autotune-no-cudagraphs build of the fusion at one size (static):
    one definition for the run's column and for `warm_max_autotune`, so that both compile the
    same graph under the same options and Inductor's caches serve the one from the other."""
    return torch.compile(fresh_function(f.torch_fn, f"mat_{size}"), dynamic=False, backend=backend,
                         mode="max-autotune-no-cudagraphs")


def warm_max_autotune(groups: Sequence[Group], a: argparse.Namespace) -> int:
    """Compiles and calls each group's max-autotune build once (`--warm-max-autotune`), in
    a process of its own beside others, before the run on the same machine: its autotuning
    (tens of seconds a compile, most of it on the CPU) fills Inductor's on-disk caches, so the
    run's own compile of the same graph is a cache hit and its column covers every large
    case within the run's budget. The run's first-call seconds of that column are then a
    warm cache's (`max_autotune_warmed` in its metadata). Stops past --budget-s."""
    t0 = time.perf_counter()
    device = "cpu" if a.cpu_check else "cuda"
    for g in groups:
        if a.budget_s and time.perf_counter() - t0 > a.budget_s:
            print(f"warm: stopped at {time.perf_counter() - t0:.0f} s, before {g.fusion} {g.dtype}", flush=True)
            break
        f = FUSIONS[g.fusion]
        t = time.perf_counter()
        try:
            xs = f.make_inputs(case_extents(f, g.size, a.cpu_check), g.dtype, device)
            max_autotune_compile(f, g.size, a.compile_backend)(*xs)
            if device == "cuda":
                torch.cuda.synchronize()
            print(f"warm: {g.fusion} {g.dtype} {time.perf_counter() - t:.1f} s", flush=True)
        except Exception as e:  # noqa: BLE001 (the run records the error; warming goes on)
            print(f"warm: {g.fusion} {g.dtype} failed: {_short(e)}", flush=True)
        if device == "cuda":
            torch.cuda.empty_cache()
    return 0


def fresh_function(fn: Callable[..., Any], tag: str) -> Callable[..., Any]:
    """`fn` with a code object of its own, so that each torch.compile variant starts from a
    cache of its own (dynamo keys compiled code on the code object)."""
    code = fn.__code__.replace(co_name=f"{fn.__code__.co_name}_{tag}")
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


COPY_REFERENCE_MAX_BYTES = 256 << 20
"""The largest copy timed whole for the % of copy reference: more bytes are costed at this
copy's bandwidth. One copy_ of 1 GiB (512 MiB each way) ran at 2.75 TB/s on the H200, where
copies of 256 and 512 MiB ran at 4.1 to 4.2 (skeptic_suite_h200_2026-12-01_2115): a property
of that one copy kernel, not of the memory, which Allotment's add_rmsnorm moved at 4.15."""


COPY_BLOCK_ELEMENTS = 4096
"""torch's device copy of bf16 runs at its full speed only over a whole number of 4096-element
blocks: on an H100 (`copy_reference_probe.py`, 2026-12-07) 2**26 elements copied at 2.98 TB/s,
2**26 + 4096 at 2.97, but 2**26 + 1 and 2**26 +- 1024 at 2.40, and 2**25 + 1024 at 2.37. A
reference timed at any other count was the slow kernel's: it made cases whose bytes are not
such a count (most odd sizes, and BatchNorm's 2**26 + 1,000 elements in `l2_order_probe.py`)
look up to 24% closer to copy than they are."""
COPY_BLOCKED_FROM = 16 * COPY_BLOCK_ELEMENTS
"""Copies of at least this many elements are timed at the next whole number of blocks."""


def copy_reference_us(nbytes: int, time_elements: Callable[[int], float]) -> float | None:
    """The copy time that `% of copy` divides by, for a case that reads and writes `nbytes`
    in all: `time_elements(n)` (µs to copy n bf16 elements into n others, 4n bytes moved)
    for n = nbytes / 4 (rounded up to whole COPY_BLOCK_ELEMENTS blocks from COPY_BLOCKED_FROM
    elements, where torch's copy is at its fastest: the reference is the copy at its best),
    scaled by nbytes / 4n; above COPY_REFERENCE_MAX_BYTES, that copy's time scaled linearly. Each case gets the time of its own byte count: the suite once
    cached the copy of the next power of two already scaled to the first case that asked for
    it, so that every later case of the same power of two was compared with the first one's
    bytes (row_sum's 134 MB against softmax's 268 MB: 206% of copy, add_rmsnorm 151%)."""
    if nbytes <= 0:
        return None
    n = copy_elements(nbytes)
    return time_elements(n) * nbytes / (4 * n)


def copy_elements(nbytes: int) -> int:
    """The bf16 elements the copy reference of `nbytes` (read + written) times (`copy_reference_us`)."""
    n = max(1, min(nbytes, COPY_REFERENCE_MAX_BYTES) // 4)
    if n >= COPY_BLOCKED_FROM:
        n = -(-n // COPY_BLOCK_ELEMENTS) * COPY_BLOCK_ELEMENTS
    return n


def lower_bound(in_bytes: int, out_bytes: int) -> int:
    """The fewest bytes any schedule of a suite fusion holds at its peak: the inputs (the
    caller holds them through the call) plus the outputs (all exist at its end). Every
    fusion of the suite has a one-kernel schedule that materializes nothing else (each
    reduction's partial results fit in registers or a grid-sized scratch that is rounding
    next to the outputs), so nothing more can be claimed of every schedule."""
    return in_bytes + out_bytes


def _nbytes(ts: Iterable[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in ts)


def git_state() -> dict[str, str]:
    out: dict[str, str] = {}
    if os.environ.get("ALLOT_COMMIT"):  # the GPU machine's copy of the tree: its git, where it has
        out["commit"] = os.environ["ALLOT_COMMIT"]  # one, names an older commit (source_sha256 checks)
        out["dirty"] = "unknown (ALLOT_COMMIT)"
    else:
        try:
            out["commit"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                           text=True, check=True, timeout=10).stdout.strip()
            dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, check=True, timeout=10).stdout.strip()
            out["dirty"] = "yes" if dirty else "no"
        except Exception:  # noqa: BLE001 (no git here)
            out["commit"] = "unknown (no git here: set ALLOT_COMMIT)"
    h = hashlib.sha256()
    for p in sorted((ROOT / "allotment").rglob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py")):
        h.update(p.read_bytes())
    out["source_sha256"] = h.hexdigest()[:16]
    return out


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.a = args
        self.device = "cpu" if args.cpu_check else "cuda"
        self.rows: list[dict[str, Any]] = []
        self.nvf, self.nvf_status = import_nvfuser()
        self._copy: dict[int, float] = {}
        self._state: dict[str, Any] = {}
        self._state_key: tuple[str, str] | None = None

    # -- sides ---------------------------------------------------------------- #

    def _sync(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()

    def _extents(self, f: SuiteFusion, size: str) -> dict[str, int]:
        return case_extents(f, size, self.a.cpu_check)

    def _first(self, call: Callable[[], Any]) -> tuple[Any, float]:
        t0 = time.perf_counter()
        outs = call()
        self._sync()
        return outs, time.perf_counter() - t0

    def _per_fusion(self, g: Group) -> dict[str, Any]:
        """What serves every size of one fusion and element type (the `?` sides)."""
        key = (g.fusion, g.dtype)
        if self._state_key != key:
            self._state = {}
            self._state_key = key
            import torch._dynamo

            torch._dynamo.reset()
        return self._state

    def _sides(self, g: Group, f: SuiteFusion, xs: list[torch.Tensor]) -> tuple[dict[str, Callable], dict[str, float], dict[str, str]]:
        """Every side's call (on an input set), first-call seconds and errors."""
        state = self._per_fusion(g)
        calls: dict[str, Callable] = {"eager": lambda s: f.torch_fn(*s)}
        first: dict[str, float] = {}
        errors: dict[str, str] = {}
        _, first["eager"] = self._first(lambda: f.torch_fn(*xs))
        backend = self.a.compile_backend

        def add(name: str, make: Callable[[], Callable]) -> None:
            """`make()` builds the side (Allotment's and nvFuser's compile start there,
            torch.compile's at the first call): its time counts in the first call's."""
            try:
                t0 = time.perf_counter()
                c = make()
                self._first(lambda: c(xs))
                first[name] = time.perf_counter() - t0
                calls[name] = c
            except Exception as e:  # noqa: BLE001 (a side that cannot run is recorded; the others go on)
                errors[name] = _short(e)

        if not self.a.no_compile:
            def static_compile() -> Callable:
                cf = torch.compile(fresh_function(f.torch_fn, f"static_{g.size}"), dynamic=False, backend=backend)
                return lambda s: cf(*s)

            add("compile_static", static_compile)
            if "dynamic" in g.extents:
                if "compile_dynamic" not in state:
                    state["compile_dynamic"] = torch.compile(fresh_function(f.torch_fn, "dynamic"), dynamic=True,
                                                             backend=backend)
                cd = state["compile_dynamic"]
                add("compile_dynamic", lambda: lambda s: cd(*s))
            if self.a.max_autotune and g.size == "large" and not self._past(self.a.max_autotune_budget_s):
                def max_autotune() -> Callable:
                    cm = max_autotune_compile(f, g.size, backend)
                    return lambda s: cm(*s)

                add("compile_max_autotune", max_autotune)
        if "static" in g.extents:
            def allot_static() -> Callable:
                exe = allotment.compile(self._allotment_text(f, g, False))
                return lambda s: exe(*s)

            add("allotment_static", allot_static)
        if "dynamic" in g.extents:
            def allot_dynamic() -> Callable:
                if "allotment_dynamic" not in state:
                    state["allotment_dynamic"] = allotment.compile(self._allotment_text(f, g, True))
                exe_d = state["allotment_dynamic"]
                return lambda s: exe_d(*s)

            add("allotment_dynamic", allot_dynamic)
        for ext in (g.extents if self.a.nvfuser_extents == "both" else ("dynamic",)):
            name = f"nvfuser_{ext}"
            if self.nvf is None:
                errors[name] = self.nvf_status
                continue
            def make_nvf(ext: str = ext, nvf: types.ModuleType = self.nvf) -> Callable:
                key = f"nvfuser_fd_{ext}"
                if ext == "static" or key not in state:
                    state[key] = suite_fd.define(f, nvf, g.dtype, ext == "dynamic", self._extents(f, g.size))
                fd = state[key]
                return lambda s: fd.execute(list(s))

            add(name, make_nvf)
        return calls, first, errors

    def _allotment_text(self, f: SuiteFusion, g: Group, dynamic: bool) -> str:
        """The fusion text Allotment compiles: the suite's text builder's (`--allotment-source
        text`, the default, as in every earlier run) or the `FusionDefinition` that the same
        build function writes through `suite_fd` (`fd`: op for op nvFuser's definition)."""
        if self.a.allotment_source == "fd":
            return suite_fd.define(f, allotment, g.dtype, dynamic, self._extents(f, g.size)).ir()
        return f.text(g.dtype, dynamic, self._extents(f, g.size))

    def _past(self, budget_s: float) -> bool:
        return bool(budget_s) and time.perf_counter() - self.start > budget_s

    # -- measurements ---------------------------------------------------------- #

    def copy_us(self, nbytes: int) -> float | None:
        """Median µs of a device copy moving `nbytes` (read + written), timed like the sides:
        `copy_reference_us` over `_copy_elements_us` (a copy of exactly that many elements,
        timed once per distinct size)."""
        v = copy_reference_us(nbytes, self._copy_elements_us)
        return None if v is None or not math.isfinite(v) else v

    def _copy_elements_us(self, n: int) -> float:
        """Median µs of copying `n` bf16 elements into another `n` (4 * n bytes moved)."""
        if n not in self._copy:
            k = kt.input_sets_needed(4 * n, kt.l2_bytes()) if self.device == "cuda" else 2
            sets = [[torch.randn(n, device=self.device, dtype=torch.bfloat16), torch.empty(n, device=self.device,
                                                                                              dtype=torch.bfloat16)]
                    for _ in range(k)]
            side = kt.Side("copy", lambda s: s[1].copy_(s[0]))
            kt.prepare(side, sets, self.device)
            kt.interleave([side], self.a.repeats)
            kt.release([side])
            sp = kt.spread(side.samples)
            self._copy[n] = sp["median"] if sp else math.nan
        return self._copy[n]

    def _peak_total(self, call: Callable[[], Sequence[torch.Tensor]], in_bytes: int) -> int | None:
        """Inputs plus one call's peak allocation above what was held before it (CUDA)."""
        if self.device != "cuda":
            return None
        import peak_memory

        call()
        peak, _ = peak_memory.measured_peak(call)
        return in_bytes + peak

    def run_group(self, g: Group) -> None:
        f = FUSIONS[g.fusion]
        base = {"fusion": f.name, "dtype": g.dtype, "size": g.size, "memory_bound": f.memory_bound}
        rows = {ext: dict(base, extents=ext) for ext in g.extents}
        try:
            self._run_group(g, f, rows)
        except torch.cuda.OutOfMemoryError as e:
            for r in rows.values():
                r.setdefault("status", "oom")
                r.setdefault("error", _short(e))
        except Exception as e:  # noqa: BLE001 (a group that cannot run is reported, the suite goes on)
            for r in rows.values():
                r.setdefault("status", "error")
                r.setdefault("error", _short(e))
        for r in rows.values():
            self.rows.append(r)
            print(json.dumps(r, default=str), flush=True)
        if self.device == "cuda":
            torch.cuda.empty_cache()

    def _run_group(self, g: Group, f: SuiteFusion, rows: dict[str, dict[str, Any]]) -> None:
        ext = self._extents(f, g.size)
        xs = f.make_inputs(ext, g.dtype, self.device)
        in_bytes = _nbytes(xs)
        expect = f.torch_fn(*xs)
        out_bytes = _nbytes(expect)
        calls, first, errors = self._sides(g, f, xs)
        for r in rows.values():
            r.update(shape="x".join(str(d) for d in xs[0].shape), bytes=in_bytes + out_bytes)
        # correctness of every side on the first input set
        bad: dict[str, str] = {}
        for name, c in list(calls.items()):
            if name == "eager":
                continue
            why = check_outputs(c(xs), expect, g.dtype)
            if why is not None:
                bad[name] = why
                errors[name] = f"mismatch: {why}"
                del calls[name]
        del expect
        k = kt.input_sets_needed(in_bytes + out_bytes, kt.l2_bytes()) if self.device == "cuda" else 2
        sets = [xs] + [f.make_inputs(ext, g.dtype, self.device, seed=i) for i in range(1, k)]
        sides = [kt.Side(n, c) for n, c in calls.items()]
        for s in sides:
            kt.prepare(s, sets, self.device)
            if s.error:
                errors[s.name] = s.error
        kt.interleave(sides, self.a.repeats)
        kt.release(sides)
        times = {s.name: kt.spread(s.samples) for s in sides if s.samples}
        methods = {s.name: s.method for s in sides if s.samples}
        del sets
        # memory: inputs + one call's peak, per side, against the bound
        peaks: dict[str, int] = {}
        for name, c in calls.items():
            try:
                p = self._peak_total(lambda c=c: c(xs), in_bytes)
            except Exception as e:  # noqa: BLE001
                errors[f"{name}_memory"] = _short(e)
                p = None
            if p is not None:
                peaks[name] = p
        # host cost at the small size (and reduce-overhead's)
        host: dict[str, float] = {}
        kernels = None
        if g.size == "small":
            hcalls = dict(calls)
            if not self.a.no_compile and self.device == "cuda":
                try:
                    ro = torch.compile(fresh_function(f.torch_fn, f"ro_{g.size}"), mode="reduce-overhead", dynamic=False)
                    _, first["compile_reduce_overhead"] = self._first(lambda: [t.clone() for t in ro(*xs)])
                    hcalls["compile_reduce_overhead"] = lambda s: ro(*s)
                except Exception as e:  # noqa: BLE001
                    errors["compile_reduce_overhead"] = _short(e)
            for name, c in hcalls.items():
                host[name] = kt.host_us(lambda c=c: c(xs), self.a.host_calls, self.device)
            if "allotment_dynamic" in calls:
                from fusion_suite import count_launches

                kernels = count_launches(self._state["allotment_dynamic"], xs)
        # the direct-launch path after the replays: still right
        for name in [n for n in calls if n.startswith("allotment")]:
            why = check_outputs(calls[name](xs), f.torch_fn(*xs), g.dtype)
            if why is not None:
                bad[name] = f"after timing: {why}"
        self._rows(g, f, rows, times, methods, first, errors, bad, peaks, host, kernels, in_bytes, out_bytes)

    def _rows(self, g: Group, f: SuiteFusion, rows: dict[str, dict[str, Any]], times: dict, methods: dict,
              first: dict, errors: dict, bad: dict, peaks: dict, host: dict, kernels: int | None,
              in_bytes: int, out_bytes: int) -> None:
        lb = lower_bound(in_bytes, out_bytes)
        for ext, r in rows.items():
            cols = {"eager": "eager", "compile": f"compile_{ext}", "compile_static": "compile_static",
                    "compile_max_autotune": "compile_max_autotune", "allotment": f"allotment_{ext}",
                    "nvfuser": f"nvfuser_{ext}"}
            if ext == "static":
                cols.pop("compile_static")
                if self.a.nvfuser_extents == "dynamic":  # one nvFuser definition, `?`, for both rows
                    cols["nvfuser"] = "nvfuser_dynamic"
                    r["nvfuser_definition"] = "dynamic"
            r["times"], r["methods"], r["first_call_s"] = (_pick(cols, d) for d in (times, methods, first))
            r["errors"] = {c: errors[s] for c, s in cols.items() if s in errors}
            r["errors"].update({k: v for k, v in errors.items() if k.endswith("_memory")})
            a = _med(r, "allotment")
            r["vs"] = {}
            if a:
                for c in ("eager", "compile", "compile_static", "compile_max_autotune", "nvfuser"):
                    m = _med(r, c)
                    if m:
                        r["vs"][c] = m / a
                comp = {c: _med(r, c) for c in ("compile", "compile_static", "compile_max_autotune") if _med(r, c)}
                if comp:
                    best = min(comp, key=lambda c: comp[c])
                    r["best_compile"], r["vs"]["compile_best"] = best, comp[best] / a
                if r["size"] != "small":
                    copy = self.copy_us(in_bytes + out_bytes)
                    if copy:
                        r["pct_copy"] = 100 * copy / a
                        r["copy_us"] = copy
            mem_sides = {c: peaks[s] for c, s in cols.items() if s in peaks}
            r["memory"] = {"inputs": in_bytes, "outputs": out_bytes, "lower_bound": lb, "peak_total": mem_sides,
                           "peak_over_in_out": {c: p / lb for c, p in mem_sides.items()},
                           "violations": [c for c, p in mem_sides.items() if lb > p]}
            if host:
                hc = dict(cols, compile_reduce_overhead="compile_reduce_overhead")
                r["host"] = {"us": {c: host[s] for c, s in hc.items() if s in host}}
                if ext == "dynamic" and kernels:
                    r["host"]["kernels"] = kernels
                    r["host"]["us_per_kernel"] = host["allotment_dynamic"] / kernels
            name = f"allotment_{ext}"
            if name in bad:
                r.update(status="mismatch", error=bad[name])
            elif name in errors and name not in times:
                r.update(status="error", error=errors[name])
            else:
                r["status"] = "ok"

    # -- the loop ---------------------------------------------------------------- #

    def run(self, groups: Sequence[Group], write: Callable[[bool], None]) -> bool:
        self.start = time.perf_counter()
        spent: list[float] = []
        for i, g in enumerate(groups):
            typical = statistics.median(spent) if spent else 0.0
            if self.a.budget_s and time.perf_counter() - self.start + typical > self.a.budget_s:
                print(f"budget: stopping at {time.perf_counter() - self.start:.0f} s, {len(groups) - i} of "
                      f"{len(groups)} groups not run", flush=True)
                for h in groups[i:]:
                    for ext in h.extents:
                        self.rows.append({"fusion": h.fusion, "dtype": h.dtype, "size": h.size, "extents": ext,
                                          "memory_bound": FUSIONS[h.fusion].memory_bound, "status": "not run",
                                          "error": "budget"})
                write(True)
                return True
            t0 = time.perf_counter()
            self.run_group(g)
            spent.append(time.perf_counter() - t0)
            write(False)
        return False


def _pick(cols: dict[str, str], d: dict[str, Any]) -> dict[str, Any]:
    """A side-keyed dict re-keyed by the row's columns."""
    return {c: d[s] for c, s in cols.items() if s in d}


def write_results(path: str | None, md: str | None, rows: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    summary = summarize(rows)
    if path:
        Path(path).write_text(json.dumps({"meta": meta, "summary": summary, "results": rows}, indent=1, default=str))
    if md:
        Path(md).write_text(markdown(rows, summary, meta))
    return summary


def merged_meta(metas: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """The metadata of a merged run: the first file's, with what differs between its commands
    taken from all of them: the max-autotune column warmed where any command warmed it (only
    the large size's command measures that column), the elapsed time their sum, and each
    command's date, arguments, time and warming under `parts`."""
    meta = dict(metas[0])
    meta["merged_from"] = ", ".join(names)
    meta["max_autotune_warmed"] = any(m.get("max_autotune_warmed") for m in metas)
    meta["elapsed_s"] = round(sum(m.get("elapsed_s", 0) for m in metas), 1)
    meta["parts"] = [{"file": n, **{k: m.get(k) for k in ("date", "argv", "elapsed_s", "max_autotune_warmed")}}
                     for n, m in zip(names, metas, strict=True)]
    return meta


def merge(files: Sequence[str], out: str | None, md: str | None, fill_plan: bool = False) -> int:
    """One results file (and its Markdown) from several runs' (shards of one run); with
    `fill_plan`, every case of the whole matrix that no file has is a "not run" row (a shard
    that was killed before it wrote them)."""
    by_case: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    metas = []
    for p in files:
        d = json.loads(Path(p).read_text())
        metas.append(d["meta"])
        for r in d["results"]:
            key = (r["fusion"], r["dtype"], r["size"], r["extents"])
            old = by_case.get(key)
            if old is None or old["status"] == "not run":
                by_case[key] = r  # a later command of the same run fills a case the first left
            elif r["status"] != "not run":
                raise SystemExit(f"merge: {' '.join(key)} was measured in two files; one run times a case once")
    commits = {m.get("commit") for m in metas}
    if len(commits) > 1:
        raise SystemExit(f"merge: the files come from different commits {sorted(map(str, commits))}; "
                         "one results file is one commit")
    rows = list(by_case.values())
    if fill_plan:
        have = {(r["fusion"], r["dtype"], r["size"], r["extents"]) for r in rows}
        for g in plan(list(FUSIONS), list(DTYPES)):
            for ext in g.extents:
                if (g.fusion, g.dtype, g.size, ext) not in have:
                    rows.append({"fusion": g.fusion, "dtype": g.dtype, "size": g.size, "extents": ext,
                                 "memory_bound": FUSIONS[g.fusion].memory_bound, "status": "not run",
                                 "error": "missing from every result file (a shard stopped)"})
    meta = merged_meta(metas, [Path(p).name for p in files])
    meta["partial"] = any(r["status"] == "not run" for r in rows)
    order = {n: i for i, n in enumerate(FUSIONS)}
    dorder = {d: i for i, (d, _) in enumerate(PHASES)}
    rows.sort(key=lambda r: (dorder.get(r["dtype"], 9), order.get(r["fusion"], 99)))
    s = write_results(out, md, rows, meta)
    print(json.dumps(s["targets"], indent=1))
    return _status(s)


def _status(s: dict[str, Any]) -> int:
    if s["failures"]:
        return 1
    return 2 if s["memory_bound_violations"] else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusions", default=",".join(FUSIONS))
    p.add_argument("--dtypes", default=",".join(DTYPES))
    p.add_argument("--sizes", default="", help="only these sizes (comma-separated; default: every size)")
    p.add_argument("--repeats", type=int, default=5, help="interleaved samples per side (at least 5 on the GPU)")
    p.add_argument("--host-calls", type=int, default=1000)
    p.add_argument("--budget-s", type=float, default=0.0, help="stop before a group that would end past N s")
    p.add_argument("--max-autotune", action="store_true", help="add mode=max-autotune-no-cudagraphs at the large size")
    p.add_argument("--max-autotune-budget-s", type=float, default=0.0,
                   help="no max-autotune compile past N s into the run (0: no limit)")
    p.add_argument("--warm-max-autotune", action="store_true",
                   help="only compile and call max-autotune-no-cudagraphs once a large group, to fill Inductor's "
                        "on-disk caches before a run (nothing is timed nor written)")
    p.add_argument("--shard", default="0/1", help="K/N: run the fusions whose index is K modulo N")
    p.add_argument("--nvfuser-extents", default="both", choices=("both", "dynamic"),
                   help="nvFuser definitions per group: static and `?` (both), or `?` only, timed for both rows")
    p.add_argument("--allotment-source", default="text", choices=("text", "fd"),
                   help="Allotment compiles the suite's fusion text, or the FusionDefinition nvFuser also runs")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--compile-backend", default="inductor")
    p.add_argument("--cpu-check", action="store_true", help="the whole code path on the CPU at tiny extents")
    p.add_argument("--out", default=None)
    p.add_argument("--markdown", default=None)
    p.add_argument("--merge", nargs="+", default=None, help="merge result files into --out/--markdown")
    p.add_argument("--fill-plan", action="store_true", help="with --merge: cases of the matrix no file has are 'not run'")
    a = p.parse_args(argv)
    if a.merge:
        return merge(a.merge, a.out, a.markdown, a.fill_plan)
    fusions = [n for n in a.fusions.split(",") if n]
    unknown = [n for n in fusions if n not in FUSIONS] + [d for d in a.dtypes.split(",") if d and d not in DTYPES]
    if unknown:
        raise SystemExit(f"skeptic_suite: unknown fusion or dtype: {', '.join(unknown)}")
    k, n = (int(x) for x in a.shard.split("/"))
    fusions = [name for i, name in enumerate(fusions) if i % n == k]
    if not a.cpu_check and not torch.cuda.is_available():
        print("skeptic_suite: needs a CUDA device (or --cpu-check)")
        return 0
    if not a.cpu_check and a.repeats < 5:
        raise SystemExit("skeptic_suite: --repeats must be at least 5 on the GPU")
    import triton

    if a.warm_max_autotune:
        return warm_max_autotune(plan(fusions, [d for d in a.dtypes.split(",") if d], ["large"]), a)
    runner = Runner(a)
    meta: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if not a.cpu_check else "cpu (--cpu-check: times mean nothing)",
        "torch": torch.__version__, "triton": triton.__version__, "nvfuser": runner.nvf_status,
        **git_state(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "repeats": a.repeats,
        "method": "kernel-only: CUDA-graph replay over rotating input sets (>= 3x L2), interleaved repeats, medians",
        "shard": a.shard, "allotment_source": a.allotment_source,
        "max_autotune_warmed": os.environ.get("MAX_AUTOTUNE_WARMED") == "1", "argv": " ".join(sys.argv[1:] if argv is None else argv)}
    print(json.dumps(meta), flush=True)
    groups = plan(fusions, [d for d in a.dtypes.split(",") if d], [z for z in a.sizes.split(",") if z])

    def write(partial: bool) -> None:
        meta.update(elapsed_s=round(time.perf_counter() - runner.start, 1), partial=partial)
        write_results(a.out, a.markdown, runner.rows, meta)

    runner.run(groups, write)
    write(meta.get("partial", False))
    s = summarize(runner.rows)
    print(json.dumps(s["targets"], indent=1))
    return _status(s)


if __name__ == "__main__":
    sys.exit(main())
