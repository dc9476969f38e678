"""The kernels of a model's compiled graphs under Allotment: each `alloc.kernel` of each
graph's program (its kind and the fusion ops it holds, from the program's comments) and the
launches of one call, so that a kernel count in a profile can be read kernel by kernel.

    python3 benchmarks/model_kernels.py --models llama --modes infer            # GPU, bf16 autocast
    python3 benchmarks/model_kernels.py --cpu-smoke --models llama --modes infer

The models and sizes are `torch_compile_models.py`'s (same flags). Kernels are launched for
real in a first step on the GPU; the step whose launches are listed has its generated kernels
intercepted, not run (the ATen library calls still run, on whatever the buffers hold). With
`--cpu-smoke` every step is intercepted, so the listing is quick at any size on the CPU, whose
ATen graph (autocast, attention) is not the GPU's.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import torch_compile_models as tcm  # noqa: E402

from allotment.backend import launch  # noqa: E402

KERNEL_COMMENT = re.compile(r"^# alloc\.kernel (\S+) (\S+): (.*)$", re.M)
"""The comment the host program writes above each kernel: name, kind, ops."""


def kernels_of(source: str) -> list[tuple[str, str, str]]:
    """(name, kind, ops) of each kernel of a generated program, in program order."""
    return KERNEL_COMMENT.findall(source)


def _recorder(seen: list[str]) -> Callable[[Any, Any, Any, Any, Any], None]:
    """A launch interceptor that appends each generated kernel's name to `seen`."""

    def record(k: Any, grid: Any, a: Any, cx: Any, w: Any) -> None:
        seen.append(getattr(k, "__name__", "") or k.fn.__name__)

    return record


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu-smoke", action="store_true", help="on the CPU, generated kernels intercepted")
    p.add_argument("--models", nargs="+", default=["llama"], choices=["gpt2", "llama"])
    p.add_argument("--modes", nargs="+", default=["infer"], choices=["train", "infer"])
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--vocab", type=int, default=None, help="override the vocabulary (a quick CPU listing)")
    args = p.parse_args(argv)
    cuda = not args.cpu_smoke
    if cuda and not torch.cuda.is_available():
        print("no GPU: use --cpu-smoke")
        return 2
    tcm.ensure_backend()
    from allotment.frontend.torch_compile import compiled_graphs, reset_census

    device = "cuda" if cuda else "cpu"
    for name in args.models:
        size = tcm.sizes(False, args.hidden, args.layers, args.batch, args.seq)
        if args.vocab:
            size["vocab"] = args.vocab
        torch.manual_seed(0)
        model = tcm.make_model(name, size).to(device)
        params = list(model.parameters())
        ids = torch.randint(0, size["vocab"], (size["batch"], size["seq"]), device=device)
        autocast = lambda: torch.autocast(device, dtype=torch.bfloat16)  # noqa: E731
        for mode in args.modes:
            torch._dynamo.reset()
            reset_census()
            fn = tcm.step_fn(torch.compile(model, backend="allotment"), ids, mode, autocast, params, False)
            seen: list[str] = []
            record = _recorder(seen)

            if cuda:  # compiled and run for real once, then one step's launches recorded, not run
                fn()
                torch.cuda.synchronize()
            with launch.intercepted(record):
                fn()
            print(f"== {name} {mode} ({device}, {size})")
            for g in compiled_graphs():
                ks = kernels_of(g.executable.source(device))
                kinds = collections.Counter(kind for _, kind, _ in ks)
                print(f"-- graph {g.program.census.graph}: {len(ks)} kernels {dict(kinds)}")
                for k, kind, ops in ks:
                    print(f"   {k:6s} {kind:14s} {ops}")
            launches = collections.Counter(re.sub(r"_[a-z_]*_$", "", s) for s in seen)
            print(f"-- {len(seen)} generated launches in one step; kernels launched more than once: "
                  f"{ {k: n for k, n in launches.items() if n > 1} }")
    return 0


if __name__ == "__main__":
    sys.exit(main())
