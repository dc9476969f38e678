"""Kernel launches: the one place that touches Triton's launch machinery.

`launch(kernel, grid, args, constexprs, num_warps)` runs a generated kernel.

- Under Triton's interpreter it calls `kernel[grid](...)`, the public JIT path.
- On a GPU the first launch of each specialization goes through the JIT path,
  which compiles and returns the `CompiledKernel`; later launches call that
  kernel's launcher directly (`CompiledKernel.run`), skipping Triton's
  argument binding and cache lookup (about 7 us instead of 13 to 19 us per
  launch on an H200, ../shared/notes/triton.md). Internal Triton
  API: if the direct call fails once, every later launch uses the JIT path.
The key holds every integer argument itself (a superset of what Triton
specializes on); launches with a pointer that is not 16-byte aligned always
take the JIT path.
"""

from __future__ import annotations

import os
from typing import Any

import torch

_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
_DIRECT: dict[tuple, tuple] = {}
_direct_ok = os.environ.get("ALLOT_JIT_LAUNCH", "0") in ("", "0")


def launch(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int) -> None:
    global _direct_ok
    if _INTERPRET or not _direct_ok:
        kernel[grid](*args, **constexprs, num_warps=num_warps)
        return
    cvals = tuple(constexprs.values())
    aligned = True
    ints = []
    for a in args:
        if type(a) is int:
            ints.append(a)
        elif isinstance(a, torch.Tensor):
            aligned = aligned and a.data_ptr() % 16 == 0
        else:
            ints.append(type(a))
    if not aligned:  # Triton specializes on each pointer's alignment: let it decide
        kernel[grid](*args, **constexprs, num_warps=num_warps)
        return
    key = (kernel, num_warps, cvals, *ints)
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
    stream = torch._C._cuda_getCurrentRawStream(torch._C._cuda_getDevice())
    try:
        run(grid[0], g1, g2, stream, function, metadata, None, None, None, *args, *cvals)
    except Exception:
        _direct_ok = False
        kernel[grid](*args, **constexprs, num_warps=num_warps)
