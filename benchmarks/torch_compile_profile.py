"""Where a step's time goes: torch.profiler over a few steps of a model under Allotment and
under Inductor (default mode), on the GPU.

    ALLOT_COMMIT=<sha> python3 benchmarks/torch_compile_profile.py [--models llama gpt2] [--modes train infer]

For each model, step and backend it prints the step time (CUDA events over 10 steps), the
peak memory, the first-call time, then the kernels by self device time per step and the host
operators by self CPU time per step (`key_averages`). Read with care: the self device time of
`CompiledFunction`/`CompiledFunctionBackward` (Allotment) is its own Triton kernels, launched
without an ATen operator around them, and Inductor's Triton kernels are listed twice (the
kernel and the launching event); the category totals before them count the GPU's kernel
activities only (generated, matmul, attention/cuDNN, fill/copy/memset, other ATen), the figure to
compare between backends. `--cpu-smoke` checks the code path on the CPU at tiny sizes.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import torch_compile_models as tcm  # noqa: E402


def self_device_us(e: Any) -> float:
    for a in ("self_device_time_total", "self_cuda_time_total"):
        if hasattr(e, a):
            return float(getattr(e, a))
    return 0.0


CATEGORIES = (
    ("generated", re.compile(r"^(k\d+_|triton_)")),
    ("matmul", re.compile(r"nvjet|gemm|cutlass|xmma|cublas", re.I)),
    ("attention/cuDNN", re.compile(r"sdpa|flash|fmha|attention|cudnn", re.I)),
    ("fill/copy/memset", re.compile(r"Memset|Memcpy|Fill|copy", re.I)),
)
"""Kernel categories by name, first match wins (Allotment's kernels are `k<N>_<kind>_`,
Inductor's `triton_...`); anything else is "other ATen"."""


def category_totals(prof: Any, steps: int) -> dict[str, tuple[float, float]]:
    """(ms a step, kernels a step) of each category, over the GPU's kernel activities only
    (not the operators that launch them, so nothing is counted twice)."""
    totals: dict[str, list[float]] = {}
    for e in prof.events():
        if getattr(e, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        us = self_device_us(e)
        if us <= 0:
            continue
        cat = next((c for c, rx in CATEGORIES if rx.search(e.name)), "other ATen")
        t = totals.setdefault(cat, [0.0, 0.0])
        t[0] += us
        t[1] += 1
    return {c: (us / steps / 1e3, n / steps) for c, (us, n) in sorted(totals.items(), key=lambda kv: -kv[1][0])}


def profile_one(name: str, mode: str, backend: str, cuda: bool, steps: int, top: int) -> None:
    size = tcm.sizes(not cuda, 1024, 4, 8, 1024)
    device = "cuda" if cuda else "cpu"
    torch.manual_seed(0)
    model = tcm.make_model(name, size).to(device)
    params = list(model.parameters())
    ids = torch.randint(0, size["vocab"], (size["batch"], size["seq"]), device=device)
    if cuda:
        autocast = lambda: torch.autocast("cuda", dtype=torch.bfloat16)  # noqa: E731
    else:
        autocast = lambda: torch.autocast("cpu", enabled=False)  # noqa: E731
    torch._dynamo.reset()
    compiled = torch.compile(model) if backend == "inductor" else torch.compile(model, backend="allotment")
    fn = tcm.step_fn(compiled, ids, mode, autocast, params)
    t = time.perf_counter()
    fn()
    if cuda:
        torch.cuda.synchronize()
    first = time.perf_counter() - t
    for _ in range(3):
        fn()
    peak = 0.0
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    ms = tcm.Timer(cuda)(fn, 10)
    if cuda:
        peak = torch.cuda.max_memory_allocated() / 2**20
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        for _ in range(steps):
            fn()
        if cuda:
            torch.cuda.synchronize()
    averages = prof.key_averages()
    kernels = sorted(((self_device_us(e), e.count, e.key) for e in averages if self_device_us(e) > 0), reverse=True)
    host = sorted(((e.self_cpu_time_total, e.count, e.key) for e in averages), reverse=True)
    print(f"\n=== {name} {mode} {backend}: {ms:.2f} ms/step (events), peak {peak:.0f} MiB, first call {first:.1f} s")
    totals = category_totals(prof, steps)
    print("-- device time by kernel category (ms/step, kernels/step)")
    for cat, (ms_step, n) in totals.items():
        print(f"{ms_step:8.3f} {n:6.1f}  {cat}")
    print(f"{sum(v[0] for v in totals.values()):8.3f} {sum(v[1] for v in totals.values()):6.1f}  all kernels")
    print("-- top device time (ms/step, calls/step, name)")
    for us, n, key in kernels[:top]:
        print(f"{us / steps / 1e3:8.3f} {n / steps:6.1f}  {key[:150]}")
    print("-- top host self time (ms/step, calls/step, name)")
    for us, n, key in host[:top]:
        print(f"{us / steps / 1e3:8.3f} {n / steps:7.1f}  {key[:120]}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["llama", "gpt2"], choices=["gpt2", "llama"])
    p.add_argument("--modes", nargs="+", default=["train", "infer"], choices=["train", "infer"])
    p.add_argument("--backends", nargs="+", default=["allotment", "inductor"], choices=["allotment", "inductor"])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--cpu-smoke", action="store_true")
    args = p.parse_args(argv)
    from torch._dynamo.backends.registry import list_backends, register_backend

    from allotment.frontend.torch_compile import allotment_backend

    if "allotment" not in list_backends(exclude_tags=()):
        register_backend(allotment_backend, name="allotment")
    print(f"commit {tcm.git_commit()} torch {torch.__version__}")
    backends = ["allotment"] if args.cpu_smoke else args.backends
    for name in args.models:
        for mode in args.modes:
            for backend in backends:
                profile_one(name, mode, backend, not args.cpu_smoke, args.steps, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
