"""Kernel launches: the one place that touches Triton's launch machinery.

`launch(kernel, grid, args, constexprs, num_warps)` calls `kernel[grid](...)`,
Triton's public JIT path (the only one its interpreter has).
"""

from __future__ import annotations

from typing import Any


def launch(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int) -> None:
    kernel[grid](*args, **constexprs, num_warps=num_warps)
