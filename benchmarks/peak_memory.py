"""Peak memory of one call on the GPU: the one measurement every benchmark and GPU check uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def measured_peak(fn: Callable[[], Sequence[torch.Tensor]]) -> tuple[int, int]:
    """(bytes `fn()` allocated at its peak above what was held before the call, the bytes of
    the tensors it returned): `torch.cuda.max_memory_allocated` after `reset_peak_memory_stats`."""
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    outs = fn()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    out_bytes = sum(o.numel() * o.element_size() for o in outs)
    del outs
    return peak, out_bytes
