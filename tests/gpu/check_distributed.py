"""Multi-GPU run of the distributed checks (not collected by pytest).

The cases of tests/test_distributed.py (`tests/distributed_cases.py`) on 2 ranks
of an NCCL process group, rank r on cuda:r: every rank's output shards against
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
    python3 tests/gpu/check_distributed.py --device cpu    # gloo on the CPU (Triton's interpreter)
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

NPROC = 2


def run_case(case: str, text: str, function: str, device: str, timeout: float) -> list[str]:
    """One case in its own process group; the problems found (none when right)."""
    backend = "nccl" if device == "cuda" else "gloo"
    per_rank = launch(run_cases, NPROC, ([(text, function, {})], 0, device), timeout=timeout, backend=backend)
    reports = [r[0] for r in per_rank]
    return cases.check_reports(case, reports, NPROC)


def check_hang(device: str, timeout: float) -> list[str]:
    backend = "nccl" if device == "cuda" else "gloo"
    deadline = min(timeout, 20.0)
    start = time.monotonic()
    try:
        launch(cases.hang_unless_rank_zero, NPROC, (device,), timeout=deadline, backend=backend)
    except RunError as e:
        took = time.monotonic() - start
        if "did not finish within" not in str(e):
            return [f"expected a deadline error, got: {e}"]
        if took > deadline + 30:
            return [f"the deadline of {deadline:g} s ended the hang only after {took:.0f} s"]
        return []
    return ["the hang was not detected"]


def check_too_few_ranks(device: str, timeout: float) -> list[str]:
    backend = "nccl" if device == "cuda" else "gloo"
    try:
        launch(run_cases, NPROC, ([(cases.TOO_FEW_RANKS, "needs_four", {})], 0, device), timeout=timeout,
               backend=backend)
    except RunError as e:
        want = "mesh @four names device 2, but the process group has 2 ranks"
        return [] if want in str(e) else [f"unexpected error: {e}"]
    return ["a mesh of 4 devices ran on 2 ranks"]


def check_frontend(device: str, timeout: float) -> list[str]:
    backend = "nccl" if device == "cuda" else "gloo"
    per_rank = launch(cases.frontend_multidevice, NPROC, (device,), timeout=timeout, backend=backend)
    return [p for problems in per_rank for p in problems]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cuda: NCCL, rank r on cuda:r (default); cpu: gloo")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds each case may take (default 120)")
    p.add_argument("--cases", default="", help="comma-separated case ids to run (default: all)")
    args = p.parse_args()
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available() or torch.cuda.device_count() < NPROC:
            n = torch.cuda.device_count() if torch.cuda.is_available() else 0
            print(f"FAIL: {NPROC} CUDA devices needed, {n} visible", flush=True)
            return 1
    wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
    checks: list[tuple[str, object]] = []
    for case, text, function in [*cases.TWO_RANK_CASES, *cases.EXTRA_TWO_RANK_CASES]:
        checks.append((case, lambda c=case, t=text, f=function: run_case(c, t, f, args.device, args.timeout)))
    checks += [
        ("frontend_multidevice", lambda: check_frontend(args.device, args.timeout)),
        ("too_few_ranks", lambda: check_too_few_ranks(args.device, args.timeout)),
        ("hang_fails_within_the_deadline", lambda: check_hang(args.device, args.timeout)),
    ]
    unknown = wanted - {name for name, _ in checks}
    if unknown:
        print(f"check_distributed.py: no case {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    backend = "nccl" if args.device == "cuda" else "gloo"
    print(f"{NPROC} ranks, {backend}, {args.timeout:g} s per case", flush=True)
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
