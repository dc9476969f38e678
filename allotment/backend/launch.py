"""Kernel launches: the one place that touches Triton's launch machinery.

`launch(kernel, grid, args, constexprs, num_warps)` runs a generated kernel.

- Under Triton's interpreter it calls `kernel[grid](...)`, the public JIT path.
- On a GPU the first launch of each specialization goes through the JIT path,
  which compiles and returns the `CompiledKernel`; later launches call that
  kernel's launcher directly (`CompiledKernel.run`), skipping Triton's
  argument binding and cache lookup (about 7 us instead of 13 to 19 us per
  launch on an H200, ../shared/notes/triton.md). The specialization key is
  what Triton specializes on: each pointer's 16-byte alignment and each
  integer's value 1, divisibility by 16 and 32/64-bit range. Internal Triton
  API: if the direct call fails once, every later launch uses the JIT path.
"""

from __future__ import annotations

import os
from typing import Any

import torch

_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
_DIRECT: dict[tuple, tuple] = {}
_direct_ok = os.environ.get("ALLOT_JIT_LAUNCH", "0") in ("", "0")


def _spec(a: Any) -> object:
    if isinstance(a, torch.Tensor):
        return a.data_ptr() % 16 == 0
    if isinstance(a, bool):
        return ("b", a)
    if isinstance(a, int):
        return (a == 1, a % 16 == 0, -(2**31) <= a < 2**31)
    return type(a)


def launch(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int) -> None:
    global _direct_ok
    if _INTERPRET or not _direct_ok:
        kernel[grid](*args, **constexprs, num_warps=num_warps)
        return
    cvals = tuple(constexprs.values())
    key = (kernel, num_warps, cvals, tuple(map(_spec, args)))
    entry = _DIRECT.get(key)
    if entry is None:
        compiled = kernel[grid](*args, **constexprs, num_warps=num_warps)
        try:
            compiled._init_handles()
            _DIRECT[key] = (compiled.run, compiled.function, compiled.packed_metadata)
        except Exception:  # an internal API that moved: keep the public path
            _direct_ok = False
        return
    run, function, metadata = entry
    g1 = grid[1] if len(grid) > 1 else 1
    g2 = grid[2] if len(grid) > 2 else 1
    stream = torch.cuda.current_stream().cuda_stream
    try:
        run(grid[0], g1, g2, stream, function, metadata, None, None, None, *args, *cvals)
    except Exception:
        _direct_ok = False
        kernel[grid](*args, **constexprs, num_warps=num_warps)
