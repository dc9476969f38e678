"""The seeds of a fusion's hidden RNG argument (docs/ops.md): random ops given no
`rng_seed`/`rng_offset` read a seed that every `execute` draws afresh, from torch's
generators, so that `torch.manual_seed` makes a run reproducible."""

from __future__ import annotations

import threading
from typing import Any

import torch

_LOCK = threading.Lock()


def draw_seed(cuda: bool = False) -> int:
    """A seed for a fusion's hidden RNG argument (docs/ops.md): for a CUDA fusion, from the
    current device's CUDA generator as torch's own CUDA random ops draw (its seed, and its
    offset, advanced by 4 for the call), else from torch's default CPU generator.
    `torch.manual_seed` makes a run reproducible either way, and a generator state saved
    and restored (`torch.cuda.get_rng_state`, activation checkpointing) replays the seeds."""
    if cuda:
        gen = cuda_generator()
        if gen is not None:
            try:
                with _LOCK:  # (threads drawing at once get distinct offsets)
                    offset = gen.get_offset()
                    gen.set_offset(offset + 4)
                return mix_seed(gen.initial_seed(), offset)
            except RuntimeError:  # (a state it cannot give now, e.g. while a CUDA graph captures)
                pass
    return int(torch.randint(0, 1 << 62, (1,), dtype=torch.int64).item())


def cuda_generator() -> Any:
    """The current CUDA device's default generator, or None (no CUDA, or a torch without
    generator offsets)."""
    try:
        gen = torch.cuda.default_generators[torch._C._cuda_getDevice()]
    except (AttributeError, IndexError, RuntimeError):
        return None
    return gen if hasattr(gen, "get_offset") and hasattr(gen, "set_offset") else None


_M64 = (1 << 64) - 1


def mix_seed(seed: int, offset: int) -> int:
    """A 62-bit seed from a generator's (seed, offset): SplitMix64's finalizer, so that
    neighbouring offsets give unrelated seeds."""
    z = (seed * 0x9E3779B97F4A7C15 + offset + 0x632BE59BD9B4E019) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return (z ^ (z >> 31)) >> 2
