"""The broad GPU benchmark suite: 30 fusions from real models and from nvFuser's and
Inductor's benchmark lists (`benchmarks/suite_fusions.py`), Allotment against torch
eager and torch.compile in one process.

For each case (fusion, element type, static or `?` extents, size) on CUDA it compiles
the fusion with Allotment, checks its outputs against eager's (tolerance by element
type: `suite_fusions.tolerance`), then measures:

- kernel time of one call (median of triton.testing.do_bench) for eager, torch.compile
  (dynamic=False for static cases, dynamic=True for `?` cases; `torch._dynamo.reset()`
  before each compile, as nvFuser's benchmarks do) and Allotment; "vs compile" is
  torch.compile's time over Allotment's (above 1: Allotment is faster);
- percent of the copy bandwidth: (bytes of inputs + outputs) / time, over a device copy
  moving the same number of bytes;
- at the small size, host µs per call (calls queued, one synchronize at the end), and
  Allotment's host µs per kernel it launched (launches counted by
  `allotment.driver.runtime.intercept_launches`);
- peak memory of one call over its output bytes (`benchmarks/peak_memory.py`).

The matrix. Most of the time goes to compiling (torch.compile's Inductor and Triton,
Allotment's Triton kernels: a few seconds per compile unit), not to timing. `--matrix
standard` (the default; `STANDARD`), in phases, most important first: bf16 with `?`
extents at the large, odd and small sizes (one compile of each side serves all three),
bf16 static at the large size, f32 `?` and f16 static at the large size, bf16 static at the
odd size: 5 compile units and 7 cases per fusion, every element type and both extent kinds.
`--matrix full`: every dtype x extents x size (12 units and 18 cases per fusion).
`--dtypes/--sizes/--extents/--fusions` filter either. `--budget-s N` stops before a compile
unit that would start past N seconds (by the median unit so far) and the results so far are
written, marked partial; the JSON is rewritten after every unit.

    python benchmarks/fusion_suite.py [--fusions a,b] [--dtypes bf16,f16,f32] [--sizes small,large,odd]
        [--extents static,dynamic] [--matrix standard|full] [--out FILE.json] [--markdown FILE.md]
        [--budget-s N] [--list]

This is the earlier method (do_bench around a Python call, one sample per case); issue 30's
kernel-only method with repeats, torch.compile's best columns and nvFuser is
`benchmarks/skeptic_suite.py`.

Exit status 1 only if an Allotment output does not match eager's (or Allotment fails to
compile or run a case); 0 otherwise, partial or not.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from suite_fusions import DTYPES, FUSIONS, SuiteFusion, check_outputs  # noqa: E402

import allotment  # noqa: E402

SIZES = ("small", "large", "odd")
EXTENTS = ("static", "dynamic")
BELOW = 0.85
"""The ratio to torch.compile under which a case counts as a miss."""
COPY_TARGET = 85.0
UNIT_S, CASE_S = 3.0, 0.6
"""Estimated H200 seconds per compile unit (torch.compile with Inductor's Triton kernels and
autotuning, Allotment's Triton kernels) and per case (timing, checks, inputs), for `--list`."""
"""Percent of the copy bandwidth a memory-bound fusion should reach at the large size."""


@dataclass(frozen=True)
class Unit:
    """One compile of each side (Allotment, torch.compile) and the sizes it runs: a `?`
    unit serves several sizes, a static one a single size."""

    fusion: str
    dtype: str
    extents: str
    sizes: tuple[str, ...]


STANDARD: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("bf16", "dynamic", ("large", "odd", "small")),
    ("bf16", "static", ("large",)),
    ("f32", "dynamic", ("large",)),
    ("f16", "static", ("large",)),
    ("bf16", "static", ("odd",)),
)
"""The default matrix's phases, most important first, run in this order (each over every
fusion): 5 compile units and 7 cases per fusion. A budget that runs out cuts the last phases."""


def plan(
    fusions: Sequence[str], dtypes: Sequence[str], sizes: Sequence[str], extents: Sequence[str], matrix: str
) -> list[Unit]:
    """The compile units to run, in order, restricted to the given fusions, dtypes, sizes and extents."""
    if matrix == "full":
        phases = [(d, e, tuple(SIZES)) for d in DTYPES for e in ("dynamic", "static")]
    elif matrix == "standard":
        phases = [(d, e, s) for d, e, s in STANDARD]
    else:
        raise ValueError(f"unknown matrix {matrix!r}: standard or full")
    units: list[Unit] = []
    for dtype, ext, phase_sizes in phases:
        if dtype not in dtypes or ext not in extents:
            continue
        chosen = tuple(s for s in phase_sizes if s in sizes)
        if not chosen:
            continue
        for name in fusions:
            if ext == "dynamic":
                units.append(Unit(name, dtype, ext, chosen))
            else:
                units.extend(Unit(name, dtype, ext, (s,)) for s in chosen)
    return units


# --------------------------------------------------------------------------- #
# Summary and tables (no GPU needed: tested on fake results)                  #
# --------------------------------------------------------------------------- #


def geomean(values: Iterable[float]) -> float:
    vals = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else float("nan")


def _ok(r: dict[str, Any]) -> bool:
    return r.get("status") == "ok"


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Geomean and worst of Allotment vs torch.compile (kernel time, the small size left out:
    there it measures launch overhead), cases below 0.85x, memory-bound fusions' percent of
    the copy bandwidth at the large size, host µs per launched kernel at the small size,
    and the failures."""
    timed = [r for r in rows if _ok(r) and r.get("vs_compile") is not None and r["size"] != "small"]
    ratios = [r["vs_compile"] for r in timed]
    worst = min(timed, key=lambda r: r["vs_compile"]) if timed else None
    large_mb = [r for r in rows if _ok(r) and r["size"] == "large" and r.get("memory_bound")
                and r.get("pct_copy") is not None]
    pcts = [r["pct_copy"] for r in large_mb]
    worst_copy = min(large_mb, key=lambda r: r["pct_copy"]) if large_mb else None
    host = [r for r in rows if _ok(r) and r.get("host_us_per_kernel") is not None]
    worst_host = max(host, key=lambda r: r["host_us_per_kernel"]) if host else None
    small_ratios = [r["vs_compile"] for r in rows if _ok(r) and r["size"] == "small" and r.get("vs_compile") is not None]
    return {
        "cases": len(rows),
        "ok": sum(1 for r in rows if _ok(r)),
        "failures": [_case(r) + f": {r.get('status')}: {r.get('error', '')}" for r in rows
                     if r.get("status") in ("mismatch", "error")],
        "skipped": [_case(r) + f": {r.get('status')}: {r.get('error', '')}" for r in rows
                    if r.get("status") not in ("ok", "mismatch", "error")],
        "geomean_vs_compile": geomean(ratios),
        "timed_cases": len(ratios),
        "worst_vs_compile": worst["vs_compile"] if worst else None,
        "worst_case": _case(worst) if worst else None,
        "below_085": [_case(r) + f" ({r['vs_compile']:.2f})" for r in timed if r["vs_compile"] < BELOW],
        "geomean_vs_compile_small": geomean(small_ratios),
        "large_memory_bound_cases": len(pcts),
        "large_memory_bound_mean_pct_copy": sum(pcts) / len(pcts) if pcts else None,
        "large_memory_bound_min_pct_copy": worst_copy["pct_copy"] if worst_copy else None,
        "large_memory_bound_min_case": _case(worst_copy) if worst_copy else None,
        "large_memory_bound_below_85": [_case(r) + f" ({r['pct_copy']:.0f}%)" for r in large_mb
                                        if r["pct_copy"] < COPY_TARGET],
        "max_host_us_per_kernel": worst_host["host_us_per_kernel"] if worst_host else None,
        "max_host_us_per_kernel_case": _case(worst_host) if worst_host else None,
    }


def _case(r: dict[str, Any]) -> str:
    return f"{r['fusion']} {r['dtype']} {r['extents']} {r['size']}"


def _num(v: Any, fmt: str = ".1f") -> str:
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, fmt)


def markdown(rows: Sequence[dict[str, Any]], summary: dict[str, Any], meta: dict[str, Any] | None = None) -> str:
    """The results as markdown: the summary, then one row per case."""
    meta = meta or {}
    lines = ["# Fusion suite", ""]
    if meta:
        lines += [", ".join(f"{k}: {v}" for k, v in meta.items()), ""]

    def pct(v: Any) -> str:
        return "n/a" if v is None else f"{v:.0f}%"

    def ratio(v: Any) -> str:
        return "n/a" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.2f}x"

    lines += [
        "## Summary",
        "",
        f"- cases: {summary['cases']}, ok: {summary['ok']}, failures: {len(summary['failures'])}, "
        f"skipped: {len(summary['skipped'])}",
        f"- Allotment vs torch.compile (kernel time, small size left out, {summary['timed_cases']} cases): "
        f"geomean {ratio(summary['geomean_vs_compile'])}, worst {ratio(summary['worst_vs_compile'])}"
        + (f" ({summary['worst_case']})" if summary["worst_case"] else ""),
        f"- below {BELOW}x: {len(summary['below_085'])}" + (f": {', '.join(summary['below_085'])}" if summary["below_085"] else ""),
        f"- at the small size (launch-bound): geomean {ratio(summary['geomean_vs_compile_small'])}",
        f"- memory-bound fusions at the large size ({summary['large_memory_bound_cases']} cases): "
        f"mean {pct(summary['large_memory_bound_mean_pct_copy'])} of the copy bandwidth, "
        f"min {pct(summary['large_memory_bound_min_pct_copy'])}"
        + (f" ({summary['large_memory_bound_min_case']})" if summary["large_memory_bound_min_case"] else "")
        + f"; below {COPY_TARGET:.0f}%: {len(summary['large_memory_bound_below_85'])}",
        f"- host µs per launched kernel at the small size: max {_num(summary['max_host_us_per_kernel'])}"
        + (f" ({summary['max_host_us_per_kernel_case']})" if summary["max_host_us_per_kernel_case"] else ""),
    ]
    for what in ("failures", "skipped"):
        if summary[what]:
            lines += ["", f"{what.capitalize()}:", ""] + [f"- {f}" for f in summary[what]]
    lines += [
        "",
        "## Cases",
        "",
        "Times are µs per call (GPU kernel time, do_bench median); vs compile = torch.compile / Allotment; "
        "% copy = Allotment's (input + output bytes) / time over the copy bandwidth; host µs per call "
        "(eager / compile / Allotment) and per Allotment kernel at the small size; peak = one call's peak "
        "memory over its output bytes (eager / compile / Allotment).",
        "",
        "| fusion | dtype | extents | size | shape | kernels | eager µs | compile µs | Allotment µs | vs compile "
        "| % copy | host µs e/c/a | host µs/kernel | peak/out e/c/a | status |",
        "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- |",
    ]
    for r in rows:
        host = "/".join(_num(r.get(f"host_us_{k}")) for k in ("eager", "compile", "allotment")) if r.get("host_us_allotment") else ""
        peak = "/".join(_num(r.get(f"peak_over_out_{k}"), ".2g") for k in ("eager", "compile", "allotment")) \
            if r.get("peak_over_out_allotment") is not None else ""
        lines.append(
            f"| {r['fusion']} | {r['dtype']} | {r['extents']} | {r['size']} | {r.get('shape', '')} | {_num(r.get('kernels'), 'd')} "
            f"| {_num(_us(r.get('eager_ms')))} | {_num(_us(r.get('compile_ms')))} | {_num(_us(r.get('allotment_ms')))} "
            f"| {_num(r.get('vs_compile'), '.2f')} | {_num(r.get('pct_copy'), '.0f')} | {host} "
            f"| {_num(r.get('host_us_per_kernel'))} | {peak} | {r.get('status', '')} |"
        )
    used = sorted({r["fusion"] for r in rows}, key=lambda n: list(FUSIONS).index(n) if n in FUSIONS else 0)
    if used:
        lines += ["", "## Fusions", "", "| fusion | memory-bound | source |", "| --- | --- | --- |"]
        for name in used:
            f = FUSIONS.get(name)
            if f is not None:
                lines.append(f"| {name} | {'yes' if f.memory_bound else 'no'} | {f.source} |")
    return "\n".join(lines) + "\n"


def _us(ms: Any) -> float | None:
    return None if ms is None else ms * 1e3


# --------------------------------------------------------------------------- #
# Running (CUDA)                                                              #
# --------------------------------------------------------------------------- #


def count_launches(exe: Any, xs: Sequence[Any]) -> int:
    """Kernels one call of an Allotment executable launches (intercepted: none runs)."""
    from allotment.driver.runtime import intercept_launches

    launched: list[object] = []
    with intercept_launches(lambda kernel, *rest: launched.append(kernel)):
        exe(*xs)
    return len(launched)


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _nbytes(ts: Iterable[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in ts)


class Runner:
    """Runs compile units on CUDA and collects one result row per case."""

    def __init__(self, args: argparse.Namespace, device: str = "cuda") -> None:
        self.args = args
        self.device = device
        """Where the inputs live: cuda (the benchmark); cpu only for the suite's own tests."""
        self.rows: list[dict[str, Any]] = []
        self._copy: dict[int, float] = {}
        self._compiled: Any = None
        """The unit's torch.compile of the fusion's torch function (one for all sizes of a `?` unit)."""

    def copy_tbps(self, nbytes: int) -> float:
        """The copy bandwidth for a transfer of about `nbytes` (cached per power of two)."""
        import measure

        key = max(1 << 20, 1 << max(0, nbytes - 1).bit_length())
        if key not in self._copy:
            self._copy[key] = measure.copy_tbps(key, self.args.warmup_ms, self.args.rep_ms)
        return self._copy[key]

    def run_unit(self, unit: Unit) -> None:
        import torch._dynamo

        f = FUSIONS[unit.fusion]
        dynamic = unit.extents == "dynamic"
        exe = None
        self._compiled = None
        text_size = unit.sizes[0]
        for size in unit.sizes:
            row: dict[str, Any] = {"fusion": f.name, "dtype": unit.dtype, "extents": unit.extents, "size": size,
                                   "memory_bound": f.memory_bound, "sizes": f.sizes[size]}
            try:
                xs = f.make_inputs(size, unit.dtype, self.device)
                row["shape"] = "x".join(str(d) for d in xs[0].shape)
                t0 = time.perf_counter()
                if exe is None or not dynamic:
                    exe = allotment.compile(f.text(unit.dtype, dynamic, text_size if dynamic else size))
                outs = exe(*xs)
                _sync()
                row["allotment_first_call_s"] = time.perf_counter() - t0
                expect = f.torch_fn(*xs)
                bad = check_outputs(outs, expect, unit.dtype)
                if bad is not None:
                    row.update(status="mismatch", error=bad)
                    self._emit(row)
                    continue
                row["kernels"] = count_launches(exe, xs)
                nbytes = _nbytes(xs) + _nbytes(outs)
                row["bytes"] = nbytes
                del outs, expect
                self._measure(row, f, unit, xs, exe)
                again = check_outputs(exe(*xs), f.torch_fn(*xs), unit.dtype)  # after timing: the direct-launch path
                row["status"] = "ok" if again is None else "mismatch"
                if again is not None:
                    row["error"] = f"after timing: {again}"
                if row.get("allotment_ms"):
                    row["tbps"] = nbytes / (row["allotment_ms"] * 1e-3) / 1e12
                    row["copy_tbps"] = self.copy_tbps(nbytes)
                    row["pct_copy"] = 100 * row["tbps"] / row["copy_tbps"]
            except torch.cuda.OutOfMemoryError as e:
                row.update(status="oom", error=str(e).splitlines()[0])
            except allotment.Error as e:
                row.update(status="error", error=f"{type(e).__name__}: {e}")
            except Exception as e:  # noqa: BLE001 (a case that cannot run is reported, the suite goes on)
                row.update(status="error", error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            self._emit(row)
            xs = None  # noqa: F841 (free the inputs before the next size)
            torch.cuda.empty_cache()
        self._compiled = None
        torch._dynamo.reset()

    def _measure(self, row: dict[str, Any], f: SuiteFusion, unit: Unit, xs: list[torch.Tensor], exe: Any) -> None:
        """Kernel times, peaks and (small size) host times of eager, torch.compile and Allotment."""
        import measure
        import torch._dynamo

        a = self.args
        variants: dict[str, Callable[[], Any]] = {"eager": lambda: f.torch_fn(*xs), "allotment": lambda: exe(*xs)}
        if not a.no_compile:
            try:
                if self._compiled is None or unit.extents == "static":
                    torch._dynamo.reset()
                    self._compiled = torch.compile(f.torch_fn, dynamic=unit.extents == "dynamic")
                compiled = self._compiled
                t0 = time.perf_counter()
                compiled(*xs)
                _sync()
                row["compile_first_call_s"] = time.perf_counter() - t0
                variants["compile"] = lambda: compiled(*xs)
            except Exception as e:  # noqa: BLE001 (torch.compile's failure is not Allotment's)
                row["compile_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        for label, fn in variants.items():
            row[f"{label}_ms"] = measure.kernel_ms(fn, a.warmup_ms, a.rep_ms)
            row[f"peak_over_out_{label}"] = measure.peak_over_outputs(fn)
        if row.get("compile_ms") and row.get("allotment_ms"):
            row["vs_compile"] = row["compile_ms"] / row["allotment_ms"]
        if row.get("eager_ms") and row.get("allotment_ms"):
            row["vs_eager"] = row["eager_ms"] / row["allotment_ms"]
        if row["size"] == "small":
            for label, fn in variants.items():
                row[f"host_us_{label}"] = measure.host_us(fn, a.host_calls)
            if row.get("kernels"):
                row["host_us_per_kernel"] = row["host_us_allotment"] / row["kernels"]
            replayer = exe.program("cuda").replayer
            if replayer is not None:  # (signatures kept, of which replayed): backend/replay.py
                row["replay_signatures"] = list(replayer.signatures())
                row["replay_driver_launches"] = replayer.driver_launches()

    def _emit(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        print(json.dumps(row, default=str), flush=True)


def write_results(args: argparse.Namespace, rows: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    summary = summarize(rows)
    if args.out:
        Path(args.out).write_text(json.dumps({"meta": meta, "summary": summary, "results": rows}, indent=1, default=str))
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows, summary, meta))
    return summary


def _split(value: str, allowed: Sequence[str], what: str) -> list[str]:
    items = [v for v in value.split(",") if v]
    bad = [v for v in items if v not in allowed]
    if bad:
        raise SystemExit(f"fusion_suite: unknown {what} {', '.join(bad)}; choose from {', '.join(allowed)}")
    return items


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fusions", default=",".join(FUSIONS))
    p.add_argument("--dtypes", default=",".join(DTYPES))
    p.add_argument("--sizes", default=",".join(SIZES))
    p.add_argument("--extents", default=",".join(EXTENTS))
    p.add_argument("--matrix", default="standard", choices=("standard", "full"))
    p.add_argument("--out", default=None, help="results as JSON (rewritten after every compile unit)")
    p.add_argument("--markdown", default=None, help="the summary and table as markdown")
    p.add_argument("--budget-s", type=float, default=0.0, help="stop before a unit that would start after N s (0: no limit)")
    p.add_argument("--warmup-ms", type=int, default=10, help="do_bench warm-up budget (ms)")
    p.add_argument("--rep-ms", type=int, default=40, help="do_bench measurement budget (ms)")
    p.add_argument("--host-calls", type=int, default=1000, help="calls per host-time measurement at the small size")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--list", action="store_true", help="list the fusions and the planned units, run nothing")
    args = p.parse_args(argv)
    fusions = _split(args.fusions, list(FUSIONS), "fusion")
    units = plan(fusions, _split(args.dtypes, list(DTYPES), "dtype"), _split(args.sizes, SIZES, "size"),
                 _split(args.extents, EXTENTS, "extents"), args.matrix)
    if args.list:
        for name in fusions:
            f = FUSIONS[name]
            print(f"{name:22s} {'memory' if f.memory_bound else 'compute'}  {f.source}")
        cases = sum(len(u.sizes) for u in units)
        minutes = (len(units) * UNIT_S + cases * CASE_S) / 60
        print(f"{len(units)} compile units, {cases} cases: about {minutes:.0f} min on an H200 "
              f"(estimated at {UNIT_S:g} s per compile unit and {CASE_S:g} s per case, not measured)")
        return 0
    if not torch.cuda.is_available():
        print("fusion_suite: needs a CUDA device (the CPU check of every fusion is tests/test_fusion_suite.py)")
        return 0
    import triton

    start = time.perf_counter()
    meta: dict[str, Any] = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                            "triton": triton.__version__, "matrix": args.matrix,
                            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(json.dumps(meta), flush=True)
    runner = Runner(args)
    unit_times: list[float] = []
    partial = False
    for i, unit in enumerate(units):
        elapsed = time.perf_counter() - start
        typical = sorted(unit_times)[len(unit_times) // 2] if unit_times else 0.0
        if args.budget_s and elapsed + typical > args.budget_s:
            partial = True
            print(f"budget: stopping after {elapsed:.0f} s, {len(units) - i} of {len(units)} units not run", flush=True)
            break
        t0 = time.perf_counter()
        runner.run_unit(unit)
        unit_times.append(time.perf_counter() - t0)
        meta.update(elapsed_s=round(time.perf_counter() - start, 1), units_run=i + 1, units_planned=len(units),
                    partial=partial)
        write_results(args, runner.rows, meta)
    meta.update(elapsed_s=round(time.perf_counter() - start, 1), partial=partial, units_planned=len(units),
                units_run=len(unit_times))
    summary = write_results(args, runner.rows, meta)
    print()
    print(markdown(runner.rows, summary, meta))
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
