"""GPU measurements shared by the benchmark scripts (gpu_suite.py, fusion_suite.py).

- `kernel_ms(fn)`: the median of `triton.testing.do_bench` (GPU time of one call, with
  the L2 cache flushed between calls);
- `host_us(fn)`: host wall time per call with the GPU work queued (one synchronize at the end);
- `peak_over_outputs(fn)`: one call's peak memory above what was held before it, over the
  bytes of its outputs (`peak_memory.measured_peak`);
- `copy_tbps(nbytes)`: device-to-device copy bandwidth (bytes read + written), the ceiling
  of a memory-bound kernel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import peak_memory
import torch


def kernel_ms(fn: Callable[[], object], warmup: int = 25, rep: int = 200) -> float:
    """Median GPU time of `fn()` in ms (`warmup` and `rep` are do_bench's budgets in ms)."""
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))


def host_us(fn: Callable[[], object], calls: int = 2000) -> float:
    """Host µs per call of `fn()`: `calls` calls queued, one synchronize at the end."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def peak_over_outputs(fn: Callable[[], Sequence[torch.Tensor]]) -> float:
    """One call's peak memory above what was held before it, over the bytes of its outputs."""
    fn()
    peak, out_bytes = peak_memory.measured_peak(fn)
    return peak / out_bytes


def copy_tbps(nbytes: int, warmup: int = 25, rep: int = 200) -> float:
    """Bandwidth (TB/s, bytes read + written) of a device-to-device copy moving `nbytes` in all."""
    n = max(1, nbytes // 4)  # bf16 elements: half the bytes read, half written
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    ms = kernel_ms(lambda: y.copy_(x), warmup, rep)
    return 2 * x.numel() * x.element_size() / (ms * 1e-3) / 1e12
