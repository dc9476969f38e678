"""How a replayed call launches a compiled Triton kernel straight through the CUDA driver
(`cuLaunchKernel`), without Triton's launcher.

Triton's C launcher parses a Python argument tuple (the grid, the stream, the function,
its metadata, hooks, scratch buffers and every kernel argument), converts each argument to
the kernel parameter's C type, and calls `cuLaunchKernelEx`. A replayed call knows all of
that but the device pointers and the stream at recording time, so `DriverLayout` keeps
what the driver needs of a compiled kernel: its `CUfunction`, the block size and dynamic
shared memory, and the C type of each kernel parameter in order (the arguments that are
not constexprs, each packed as Triton's launcher packs it). The replay executor
(`native/replay.cpp`) packs the recorded arguments once, patches the pointers each call,
and launches.

The layout is read from the compiled kernel's public attributes (`src.signature`,
`metadata`), and the executor checks it against the kernel binary itself before it uses
it: `cuFuncGetParamInfo` must report exactly these parameters with these sizes, followed
by at most two 8-byte ones (the global and profile scratch pointers that Triton appends;
they are null, as for every kernel this applies to: `layout` requires no scratch). A
kernel it does not cover (a cluster launch, a cooperative or PDL launch, scratch memory,
a parameter type other than a pointer, a 32- or 64-bit int, or a float of 32 or 64
bits), a Triton whose compiled kernel lacks these attributes, or a driver without
`cuFuncGetParamInfo` keeps Triton's launcher. `ALLOT_REPLAY_DRIVER=0` turns this off.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any

CODES = {"i32": 0, "i1": 0, "i64": 1, "u32": 2, "u1": 2, "u64": 3, "fp32": 4, "fp64": 5, "ptr": 6}
"""A parameter's C type as the executor names it: int32, int64, uint32, uint64, float,
double, a device pointer (Triton packs i1 as int32 and u1 as uint32)."""

_PACK = {0: "<i", 1: "<q", 2: "<I", 3: "<Q", 4: "<f", 5: "<d", 6: "<Q"}
SIZES = {0: 4, 1: 8, 2: 4, 3: 8, 4: 4, 5: 8, 6: 8}


def enabled() -> bool:
    return os.environ.get("ALLOT_REPLAY_DRIVER", "1") not in ("0", "")


@dataclass(frozen=True)
class DriverLayout:
    """What `cuLaunchKernel` needs of one compiled kernel, besides its arguments."""

    function: int
    """The kernel's `CUfunction`, as an int."""
    block: int
    """Threads per block (warps times the warp size)."""
    shared: int
    """Dynamic shared memory in bytes."""
    params: tuple[int | None, ...]
    """Per kernel argument (the order of the kernel's parameters, constexprs included): its
    `CODES` type, or None for a constexpr (not a parameter of the binary)."""
    owner: Any = None
    """The compiled kernel, held by every plan that launches `function`: Triton unloads a
    kernel's module when its `CompiledKernel` is freed."""

    def pack(self, arguments: list[Any]) -> tuple[list[int], list[int], dict[int, int]] | None:
        """(the parameters as 64-bit words, each little-endian from its lowest byte; their
        sizes in bytes; parameter index per kernel argument index) of one launch's kernel
        arguments, or None when a value does not fit its type."""
        words: list[int] = []
        sizes: list[int] = []
        index: dict[int, int] = {}
        for k, code in enumerate(self.params):
            if code is None:
                continue
            value = arguments[k]
            if value is None and code == 6:
                value = 0
            try:
                raw = struct.pack(_PACK[code], value)
            except (struct.error, TypeError):
                return None
            index[k] = len(words)
            words.append(int.from_bytes(raw.ljust(8, b"\0"), "little"))
            sizes.append(SIZES[code])
        return words, sizes, index


def layout(compiled: Any) -> DriverLayout | None:
    """The `DriverLayout` of a compiled kernel (Triton's `CompiledKernel` after
    `_init_handles`), or None where the driver path does not apply (module docstring)."""
    if not enabled():
        return None
    try:
        md = compiled.metadata
        signature = compiled.src.signature
        function = int(compiled.function)
        warps = int(md.num_warps)
        warp_size = int(getattr(md, "warp_size", 32))
        shared = int(md.shared)
        if int(getattr(md, "num_ctas", 1)) != 1 or getattr(md, "launch_pdl", False) or \
                getattr(md, "launch_cooperative_grid", False):
            return None
        if int(getattr(md, "global_scratch_size", 0) or 0) or int(getattr(md, "profile_scratch_size", 0) or 0):
            return None
        if getattr(md, "tensordesc_meta", None) or getattr(md, "gsan", False):
            return None
        types = list(signature.values())  # in the kernel's parameter order (as Triton's launcher reads it)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None
    params: list[int | None] = []
    for ty in types:
        if ty == "constexpr":
            params.append(None)
        elif isinstance(ty, str) and ty.startswith("*"):
            params.append(CODES["ptr"])
        elif isinstance(ty, str) and ty in CODES:
            params.append(CODES[ty])
        else:
            return None
    if function == 0 or warps <= 0:
        return None
    return DriverLayout(function, warps * warp_size, shared, tuple(params), compiled)
