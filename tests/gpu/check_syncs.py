"""GPU check (not collected by pytest): a compiled training step of GPT-2 and Llama
synchronizes nothing, and an out-of-range token stops the embedding kernel.

1. For each model (bf16 autocast, random weights, hidden 256, 2 layers, batch 2, seq 128):
   two warm-up steps, then three steps under `torch.cuda.set_sync_debug_mode("error")`,
   which raises at any synchronizing call (`.item()`, a device-to-host copy,
   `cudaStreamSynchronize`); the traceback names the caller.
2. In a child process (a device-side assert leaves the CUDA context unusable): a tiny
   embedding model, compiled, called with a token past its vocabulary. The kernel's
   `tl.device_assert` must fire: the child fails, its stderr has the check's message.

    python3 tests/gpu/check_syncs.py          # on the GPU
    python3 tests/gpu/check_syncs.py --cpu    # the code path on the CPU (profiler counts, no child)

Prints one line per check and PASS or FAIL.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "torch_compile"), str(ROOT / "benchmarks")]

from torch._dynamo.backends.registry import list_backends, register_backend  # noqa: E402

from allotment.frontend.torch_compile import allotment_backend  # noqa: E402

if "allotment" not in list_backends(exclude_tags=()):  # a source tree with no installed entry point
    register_backend(allotment_backend, name="allotment")

failures: list[str] = []


def model(name: str, cpu: bool) -> torch.nn.Module:
    from torch_compile_models import make_model, sizes

    size = sizes(cpu, 256, 2, 2, 128)
    return make_model(name, size), size


def check_model(name: str, cpu: bool) -> None:
    torch._dynamo.reset()
    torch.manual_seed(0)
    device = "cpu" if cpu else "cuda"
    m, size = model(name, cpu)
    m = m.to(device)
    compiled = torch.compile(m, backend="allotment")

    def step() -> None:
        ids = torch.randint(0, size["vocab"], (size["batch"], size["seq"]), device=device)
        with torch.autocast(device, dtype=torch.bfloat16, enabled=not cpu):
            loss = compiled(input_ids=ids, labels=ids).loss
        loss.backward()

    step()
    step()
    try:
        if cpu:
            from test_host_syncs import READS
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                step()
            reads = {e.key: e.count for e in prof.key_averages() if e.key in READS}
            if reads:
                raise RuntimeError(f"host reads {reads}")
        else:
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
            try:
                for _ in range(3):
                    step()
            finally:
                torch.cuda.set_sync_debug_mode("default")
            torch.cuda.synchronize()
        print(f"ok   {name}: a training step synchronizes nothing")
    except RuntimeError as e:
        failures.append(name)
        print(f"FAIL {name}: {e}")
        traceback.print_exc()


CHILD = """
import torch
from torch._dynamo.backends.registry import list_backends, register_backend
from allotment.frontend.torch_compile import allotment_backend
if "allotment" not in list_backends(exclude_tags=()):
    register_backend(allotment_backend, name="allotment")
emb = torch.nn.Embedding(16, 8).cuda()
c = torch.compile(lambda ids: emb(ids).sum(-1), backend="allotment")
c(torch.tensor([1, 2, 3], device="cuda"))
torch.cuda.synchronize()
c(torch.tensor([1, 16, 3], device="cuda"))
torch.cuda.synchronize()
print("NO ERROR")
"""


def check_device_assert() -> None:
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=600)
    out = child.stdout + child.stderr
    if child.returncode != 0 and "index out of range" in out and "NO ERROR" not in out:
        print("ok   an out-of-range token fires the embedding kernel's device assert")
    else:
        failures.append("device assert")
        print(f"FAIL an out-of-range token: exit {child.returncode}, output tail:\n{out[-3000:]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", action="store_true", help="the code path on the CPU (tiny sizes, profiler counts)")
    p.add_argument("--models", nargs="+", default=["gpt2", "llama"], choices=["gpt2", "llama"])
    args = p.parse_args()
    for name in args.models:
        check_model(name, args.cpu)
    if not args.cpu:
        check_device_assert()
    print("FAIL" if failures else "PASS")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
