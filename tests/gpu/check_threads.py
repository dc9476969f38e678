"""GPU thread-safety run (not collected by pytest): one executable called from many threads on CUDA.

Each of 8 threads calls the same executable 50 times on its own CUDA inputs
(first calls compile and take Triton's JIT path, later ones the direct launch
path), and every result is compared with `allotment.reference.evaluate` on the
same inputs. Also calls a CPU program (Triton's interpreter) from the same
threads, interleaved, with TRITON_INTERPRET unset. Prints PASS or FAIL and the counts.

    python3 tests/gpu/check_threads.py [--threads 8] [--calls 50]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import allotment  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import evaluate  # noqa: E402

TOL = dict(rtol=5e-2, atol=5e-2)  # bf16


def cases(f, thread: int, calls: int, device: str) -> list[tuple[list, list]]:
    """(inputs, expected) per call: rows differ per call, values per thread."""
    g = torch.Generator().manual_seed(thread)
    out = []
    for call in range(calls):
        rows = 1 + (thread * 7 + call) % 37
        inputs = [torch.randn(rows, 64, generator=g).bfloat16().to(device),
                  torch.randn(64, generator=g).bfloat16().to(device)]
        out.append((inputs, evaluate(f, inputs)))
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--cpu-calls", type=int, default=3, help="interpreter calls per thread, interleaved")
    args = p.parse_args()
    text = (ROOT / "examples" / "rmsnorm.mlir").read_text()
    f = find_function(parse_module(text))
    exe = allotment.compile(text)
    work = [cases(f, t, args.calls, "cuda") for t in range(args.threads)]
    cpu_work = [cases(f, 100 + t, args.cpu_calls, "cpu") for t in range(args.threads)]
    torch.cuda.synchronize()
    errors: list[str] = []
    ok = [0, 0]
    barrier = threading.Barrier(args.threads)

    def check(inputs: list, expected: list, what: str, slot: int) -> None:
        try:
            for a, e in zip(exe(*inputs), expected, strict=True):
                torch.testing.assert_close(a, e, **TOL)
            ok[slot] += 1
        except Exception as e:  # every failure is counted and shown
            errors.append(f"{what}: {type(e).__name__}: {str(e)[:300]}")

    def worker(t: int) -> None:
        barrier.wait()
        for i, (inputs, expected) in enumerate(work[t]):
            check(inputs, expected, f"thread {t} cuda call {i}", 0)
            if i < len(cpu_work[t]):
                check(*cpu_work[t][i], f"thread {t} cpu call {i}", 1)

    t0 = time.time()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(args.threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    torch.cuda.synchronize()
    total_cuda, total_cpu = args.threads * args.calls, args.threads * args.cpu_calls
    for line in errors[:10]:
        print(line)
    status = "PASS" if not errors and ok == [total_cuda, total_cpu] else "FAIL"
    print(f"{status}: cuda {ok[0]}/{total_cuda} calls correct, cpu (interpreter) {ok[1]}/{total_cpu}, "
          f"{len(errors)} errors, {args.threads} threads, compilations {exe.compilations} "
          f"({time.time() - t0:.1f} s)", flush=True)
    return 0 if status == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
