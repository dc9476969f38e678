"""Host overhead of `FusionDefinition.execute` (not collected by pytest; needs a GPU).

A one-kernel fusion (bf16 in, f32 math, bf16 out) at 8x128: wall time per call
with the GPU work queued (synchronized once at the end), for
- `fd.execute([x])` (input checks, cache lookup, output handling),
- the compiled executable called directly (`exe(*args)`),
- the same computation in eager torch.

    python3 tests/frontend/gpu_overhead.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from allotment import DataType, FusionDefinition  # noqa: E402


def per_call_us(fn, calls: int = 5000, warmup: int = 200) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def main() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([-1, 128], contiguity=True, dtype=DataType.BFloat16)
        t1 = fd.ops.cast(t0, DataType.Float)
        t2 = fd.ops.add(fd.ops.mul(t1, 2.0), 1.0)
        fd.add_output(fd.ops.cast(t2, DataType.BFloat16))
    x = torch.randn(8, 128, device="cuda", dtype=torch.bfloat16)
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, (x.float() * 2.0 + 1.0).bfloat16())
    exe, args = fd.executable_for([x])
    results = {
        "fd.execute([x])": per_call_us(lambda: fd.execute([x])),
        "exe(*args) (compiled executable)": per_call_us(lambda: exe(*args)),
        "eager torch": per_call_us(lambda: (x.float() * 2.0 + 1.0).bfloat16()),
    }
    print(f"one-kernel fusion, 8x128 bf16, {torch.cuda.get_device_name()}:")
    for name, us in results.items():
        print(f"  {name:36s} {us:7.1f} us/call")
    extra = results["fd.execute([x])"] - results["exe(*args) (compiled executable)"]
    print(f"  execute's own overhead               {extra:7.1f} us/call")


if __name__ == "__main__":
    main()
