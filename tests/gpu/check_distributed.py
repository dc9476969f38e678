"""Multi-GPU run of the distributed checks (not collected by pytest).

The cases of tests/test_distributed.py (`tests/distributed_cases.py`) on 2, 4 or 8
ranks (`--nproc`; on 4 and 8 the 2x2 and 2x4 meshes of `grid_cases`: every resharding
collective, uneven shards, a pipeline between two halves of the ranks) of an NCCL
process group, rank r on cuda:r: every rank's output shards against
the same shards of the single-process reference evaluator's output, every
rank's allocations against its plan (a rank outside a mesh allocates 0 bytes
for the mesh's tensors), and the collectives each program calls. Each case runs
in a fresh process group (`backend.launcher.launch`) with its own deadline, so
a hang fails that case and the next one still runs. Then bf16 variants of the
reductions (NCCL reduces bf16 natively), nvFuser's multidevice frontend, a
mesh that names more ranks than the group has, and a hang that the deadline
must end. Prints one line per check and PASS or FAIL; exit status 1 on a
failure.

    python3 tests/gpu/check_distributed.py                 # NCCL, 2 GPUs
    python3 tests/gpu/check_distributed.py --nproc 8       # NCCL, 8 GPUs
    python3 tests/gpu/check_distributed.py --device cpu    # gloo on the CPU (Triton's interpreter)
    python3 tests/gpu/check_distributed.py --device cpu --nproc 8 --one-group   # all cases in one group

`--one-group` runs every fusion case in one process group (one start of the ranks, as
tests/test_distributed.py does): much less start-up time, but a hang or a crash fails
every case of the group.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import distributed_cases as cases  # noqa: E402 (tests/distributed_cases.py)

from allotment.backend.launcher import launch  # noqa: E402
from allotment.errors import RunError  # noqa: E402
from allotment.tools.distributed_check import run_cases  # noqa: E402

NPROCS = (2, 4, 8)


def _backend(device: str) -> str:
    return "nccl" if device == "cuda" else "gloo"


def run_case(case: str, text: str, function: str, nproc: int, device: str, timeout: float) -> list[str]:
    """One case in its own process group; the problems found (none when right)."""
    per_rank = launch(run_cases, nproc, ([(text, function, {})], 0, device), timeout=timeout,
                      backend=_backend(device))
    reports = [r[0] for r in per_rank]
    return cases.check_reports(case, reports, nproc)


def run_group(group: list[tuple[str, str, str]], nproc: int, device: str, timeout: float) -> dict[str, list[str]]:
    """Every case of `group` in one process group: the problems found per case."""
    per_rank = launch(run_cases, nproc, ([(text, fn, {}) for _, text, fn in group], 0, device),
                      timeout=timeout, backend=_backend(device))
    return {case: cases.check_reports(case, [reports[i] for reports in per_rank], nproc)
            for i, (case, _, _) in enumerate(group)}


def check_hang(nproc: int, device: str, timeout: float) -> list[str]:
    deadline = min(timeout, 20.0)
    start = time.monotonic()
    try:
        launch(cases.hang_unless_rank_zero, nproc, (device,), timeout=deadline, backend=_backend(device))
    except RunError as e:
        took = time.monotonic() - start
        if "did not finish within" not in str(e):
            return [f"expected a deadline error, got: {e}"]
        if took > deadline + 30:
            return [f"the deadline of {deadline:g} s ended the hang only after {took:.0f} s"]
        return []
    return ["the hang was not detected"]


def check_too_few_ranks(nproc: int, device: str, timeout: float) -> list[str]:
    text, function, want = cases.too_few_ranks(nproc)
    try:
        launch(run_cases, nproc, ([(text, function, {})], 0, device), timeout=timeout, backend=_backend(device))
    except RunError as e:
        return [] if want in str(e) else [f"unexpected error: {e}"]
    return [f"a mesh of {2 * nproc} devices ran on {nproc} ranks"]


def check_frontend(nproc: int, device: str, timeout: float) -> list[str]:
    per_rank = launch(cases.frontend_multidevice, nproc, (device,), timeout=timeout, backend=_backend(device))
    return [p for problems in per_rank for p in problems]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cuda: NCCL, rank r on cuda:r (default); cpu: gloo")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds each case may take (default 120)")
    p.add_argument("--cases", default="", help="comma-separated case ids to run (default: all)")
    p.add_argument("--nproc", type=int, choices=NPROCS, default=2, help="ranks (default 2)")
    p.add_argument("--one-group", action="store_true",
                   help="run the fusion cases in one process group (see the module doc)")
    args = p.parse_args()
    nproc = args.nproc
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available() or torch.cuda.device_count() < nproc:
            n = torch.cuda.device_count() if torch.cuda.is_available() else 0
            print(f"FAIL: {nproc} CUDA devices needed, {n} visible", flush=True)
            return 1
    wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
    fusions = [c for c in [*cases.cases_for(nproc), *cases.extra_cases(nproc)] if not wanted or c[0] in wanted]
    checks: list[tuple[str, object]] = []
    if args.one_group and fusions:
        grouped: dict[str, list[str]] = {}

        def group_check(case: str) -> list[str]:
            if not grouped:  # the first case's check runs them all
                grouped.update(run_group(fusions, nproc, args.device, args.timeout * len(fusions)))
            return grouped[case]

        checks += [(case, lambda c=case: group_check(c)) for case, _, _ in fusions]
    else:
        checks += [(case, lambda c=case, t=text, f=function: run_case(c, t, f, nproc, args.device, args.timeout))
                    for case, text, function in fusions]
    checks += [
        ("frontend_multidevice", lambda: check_frontend(nproc, args.device, args.timeout)),
        ("too_few_ranks", lambda: check_too_few_ranks(nproc, args.device, args.timeout)),
        ("hang_fails_within_the_deadline", lambda: check_hang(nproc, args.device, args.timeout)),
    ]
    known = {name for name, _ in checks} | {c[0] for c in [*cases.cases_for(nproc), *cases.extra_cases(nproc)]}
    unknown = wanted - known
    if unknown:
        print(f"check_distributed.py: no case {', '.join(sorted(unknown))} on {nproc} ranks", file=sys.stderr)
        return 2
    print(f"{nproc} ranks, {_backend(args.device)}, {args.timeout:g} s per case", flush=True)
    failures = 0
    for name, check in checks:
        if wanted and name not in wanted:
            continue
        start = time.monotonic()
        try:
            problems = check()  # type: ignore[operator]
        except Exception as e:  # noqa: BLE001 (report every check)
            problems = [f"{type(e).__name__}: {e}"]
            if os.environ.get("ALLOT_DEBUG"):
                traceback.print_exc()
        took = time.monotonic() - start
        if problems:
            failures += 1
            print(f"FAIL {name} ({took:.1f} s)", flush=True)
            for line in problems:
                print(f"     {line}", flush=True)
        else:
            print(f"ok  {name} ({took:.1f} s)", flush=True)
    print("PASS" if failures == 0 else f"FAIL: {failures} checks failed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
