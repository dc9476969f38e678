"""Run-time support of generated host programs: input checks, block sizes, launches.

Everything a generated `run()` calls besides torch lives here, so that the
generated code stays short and the internal Triton APIs are wrapped in one place.
"""

from __future__ import annotations

import functools
import math
import os
import struct
from collections.abc import Sequence
from typing import Any

import torch

from allotment.analysis import inner_outer as _inner_outer
from allotment.analysis.packing import pack as _pack
from allotment.aten import aten_operator
from allotment.backend import launch as _launch
from allotment.errors import AllotmentRuntimeError, Error, InputTypeError, RunError, first_line, is_allocation_failure


def check_arity(function: str, names: Sequence[str], inputs: Sequence[Any]) -> None:
    """Raises InputTypeError unless `inputs` has one value per argument in `names`."""
    if len(inputs) != len(names):
        listed = ", ".join(names)
        raise InputTypeError(f"{function} takes {len(names)} inputs ({listed}), got {len(inputs)}")


_KIND = {"float": (float, int), "int": (int,), "bool": (bool, int)}


def default_device(target: str | None = None) -> torch.device:
    """Where a program without tensor inputs runs: its target's device (for cuda, the
    current one), else cuda when there is one."""
    if target == "cpu":
        return torch.device("cpu")
    if target == "cuda" or torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def device_of(x: Any, name: str, cuda: bool = False) -> torch.device:
    """The device of the first tensor input (where the program runs), checking it is a
    dense tensor with memory (not sparse, not on the meta device) and, with `cuda` (a CUDA
    program that launches kernels), a CUDA tensor: the direct launch hands Triton raw
    device pointers (`launch.launch_kernel`), so a CPU tensor must be stopped here."""
    if not isinstance(x, torch.Tensor):
        raise InputTypeError(f"input {name}: expected a tensor, got {type(x).__name__}")
    if x.layout is not torch.strided or x.is_meta:
        raise AllotmentRuntimeError(
            f"input {name}: a {'meta' if x.is_meta else str(x.layout)} tensor has no dense memory to run on"
        )
    if cuda and not x.is_cuda:
        raise AllotmentRuntimeError(f"input {name} is on {x.device}, but this program runs its kernels on CUDA")
    return x.device


def check_tensor(
    x: Any, name: str, dtype: torch.dtype, shape: Sequence[int | None], device: torch.device, contiguous: bool,
    order: tuple[int, ...] | None = None,
) -> torch.Tensor:
    """Checks one input tensor against its argument type; returns it, or where the program
    views it (`contiguous`) and it does not lie as the views expect, a copy that does:
    row-major, or dense in memory order `order` (the argument's `fusion.stride_order`)."""
    if (
        type(x) is not torch.Tensor and not isinstance(x, torch.Tensor)
        or x.dtype is not dtype
        or x.device != device
        or x.dim() != len(shape)
        or x.layout is not torch.strided
    ):
        _bad_tensor(x, name, dtype, shape, device)
    sizes = x.shape
    for d, want in enumerate(shape):
        if want is not None and sizes[d] != want:
            raise AllotmentRuntimeError(f"input {name}: dimension {d} has extent {sizes[d]}, the fusion says {want}")
    if contiguous and order is not None:
        if not dense_in_order(x.shape, x.stride(), order):
            x = in_order(x, order)  # views of this input are computed for storage in that order
    elif contiguous and not x.is_contiguous():
        x = row_major_copy(x)  # views of this input are computed for row-major storage
    return x


def _bad_tensor(x: Any, name: str, dtype: torch.dtype, shape: Sequence[int | None], device: torch.device) -> None:
    if not isinstance(x, torch.Tensor):
        raise InputTypeError(f"input {name}: expected a tensor, got {type(x).__name__}")
    if x.dtype != dtype:
        raise AllotmentRuntimeError(f"input {name}: dtype {x.dtype} does not match the fusion's {dtype}")
    if x.device != device:
        raise AllotmentRuntimeError(f"input {name} is on {x.device}, other inputs on {device}")
    if x.layout is not torch.strided:
        raise AllotmentRuntimeError(f"input {name}: a {x.layout} tensor has no dense memory to run on")
    raise AllotmentRuntimeError(f"input {name}: rank {x.dim()} does not match the fusion's {len(shape)}")


def overlaps_itself(x: torch.Tensor) -> bool:
    """Whether two elements of `x` (within its extents) are at one memory location: a stride
    0 over an extent above 1, or strides that interleave (`as_strided((3, 4), (1, 1))`).

    Exact: a contiguous or dense tensor never does; otherwise the dims of extent > 1,
    innermost (smallest stride) first, cannot overlap while each stride exceeds the span of
    the dims inside it; a tensor that fails that test is checked element by element (its
    offsets counted, up to 2^24 elements; past that it is taken to overlap)."""
    if x.is_contiguous() or x.numel() <= 1:
        return False
    dims = sorted((st, n) for n, st in zip(x.shape, x.stride()) if n > 1)
    span = 0  # the largest offset reached by the dims so far
    for st, n in dims:
        if st == 0:
            return True
        if st <= span:
            break
        span += (n - 1) * st
    else:
        return False
    if x.numel() > 1 << 24:
        return True
    offsets = torch.zeros((), dtype=torch.int64)
    for st, n in dims:
        offsets = (offsets.unsqueeze(-1) + torch.arange(n, dtype=torch.int64) * st)
    return int(torch.unique(offsets.reshape(-1)).numel()) != x.numel()


def byte_range(x: torch.Tensor) -> tuple[int, int]:
    """[first, last) bytes that the elements of `x` occupy (empty for a tensor without elements)."""
    if x.numel() == 0:
        return (0, 0)
    lo = x.data_ptr()
    return (lo, lo + element_span(x) * x.element_size())


def _offsets(t: torch.Tensor) -> torch.Tensor:
    """The byte offset from `t.data_ptr()` of every byte of every element of `t` (on the CPU)."""
    offsets = torch.zeros((), dtype=torch.int64)
    for n, st in zip(t.shape, t.stride()):
        offsets = offsets.unsqueeze(-1) + torch.arange(n, dtype=torch.int64) * (st * t.element_size())
    return (offsets.reshape(-1, 1) + torch.arange(t.element_size(), dtype=torch.int64)).reshape(-1)


def _share_bytes(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether `x` and `y`, whose byte ranges intersect, have a byte in common: always for a
    contiguous pair; else counted byte by byte (interleaved rows of one storage share none),
    up to 2^24 bytes in all (past that they are taken to share)."""
    if x.is_contiguous() and y.is_contiguous():
        return True
    if (x.numel() * x.element_size() + y.numel() * y.element_size()) > 1 << 24:
        return True
    shift = y.data_ptr() - x.data_ptr()
    return bool(torch.isin(_offsets(y) + shift, _offsets(x)).any())


def check_in_place(x: torch.Tensor, name: str, others: Sequence[Any], names: Sequence[str]) -> None:
    """The entry check of an argument that the program writes (an in-place output): as torch's
    in-place ops, it refuses a tensor that overlaps itself (an expanded, stride-0 view: the
    kernel would write one location once per element that refers to it), and a tensor whose
    memory another tensor argument of the call (`others`, named `names`) also occupies (that
    argument would be read while it is written)."""
    if not x.is_contiguous() and overlaps_itself(x):
        raise AllotmentRuntimeError(
            f"input {name} is written in place (an in-place output), but more than one element of it "
            f"refers to a single memory location (sizes {list(x.shape)}, strides {list(x.stride())}): "
            f"pass a tensor that does not overlap itself, e.g. {name}.clone()")
    lo, hi = byte_range(x)
    if lo == hi:
        return
    for y, other in zip(others, names, strict=True):
        if isinstance(y, torch.Tensor) and y.device == x.device:
            ylo, yhi = byte_range(y)
            if ylo < hi and lo < yhi and _share_bytes(x, y):
                raise AllotmentRuntimeError(
                    f"input {name} is written in place (an in-place output), but input {other} occupies some "
                    f"of the same memory (they would refer to a single memory location): pass tensors that "
                    f"do not share memory, e.g. {other}.clone()")


def check_scalar(x: Any, name: str, kind: str, bits: int = 64) -> Any:
    """Checks one scalar input: its Python kind (`float` takes ints too; `bool` takes
    bools and the ints 0 and 1) and, for integers, that it fits `bits` signed bits."""
    if isinstance(x, torch.Tensor) and x.dim() == 0:
        _launch.note_host_work("a scalar read from a tensor")
        x = x.item()
    if isinstance(x, bool) and kind != "bool":
        x = int(x)
    if not isinstance(x, _KIND[kind]):
        raise InputTypeError(f"input {name}: expected a {kind} scalar, got {type(x).__name__}")
    if kind == "bool" and not isinstance(x, bool):
        if x not in (0, 1):
            raise AllotmentRuntimeError(f"input {name}: a bool scalar must be true, false, 0 or 1, got {x}")
        x = bool(x)
    elif kind == "int" and not -(1 << (bits - 1)) <= x < (1 << (bits - 1)):
        raise AllotmentRuntimeError(f"input {name}: {x} does not fit a {bits}-bit signed integer")
    return x


def check(predicate: str, a: int, b: int, message: str) -> None:
    """`alloc.check`: raises a RunError with the message and both values unless it holds."""
    if not size_arith.check_holds(predicate, a, b):
        raise AllotmentRuntimeError(f"{message} (got {a} and {b})")


def check_indices(index: torch.Tensor, extent: int, what: str, where: str) -> None:
    """The bounds check of an indexing op: every entry of `index` in [0, extent) (negative
    entries are errors, as in torch.gather), else a RunError naming the op's operand. One
    min/max and one device-to-host copy per index tensor."""
    if index.numel() == 0:
        return
    lo, hi = (int(v) for v in torch.aminmax(index))
    if lo < 0 or hi >= extent:
        bad = lo if lo < 0 else hi
        raise AllotmentRuntimeError(f"{what} holds index {bad}, outside [0, {extent}) of {where}")


# Integer arithmetic of the host program is `size_arith`'s, the one definition
# (generated code calls `rt.size_arith.<op>(a, b)`; these are its `divsi`/`remsi`).
from allotment.extents import size_arith  # noqa: E402
from allotment.extents.dims import dense_in_order  # noqa: E402

trunc_div = size_arith.divsi
trunc_rem = size_arith.remsi


def float_div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        return math.copysign(math.inf, a) * math.copysign(1.0, b) if a else math.nan


_BITS = {"f64": ("d", "q"), "f32": ("f", "i")}


def float_bits(x: float, t: str) -> int:
    """The bits of float `x` of type `t` (f64, f32) as a signed integer of its width."""
    f, i = _BITS[t]
    return struct.unpack(i, struct.pack(f, x))[0]


def bits_float(x: int, t: str) -> float:
    """The float of type `t` whose bits are the signed integer `x` (`float_bits`' inverse)."""
    f, i = _BITS[t]
    return struct.unpack(f, struct.pack(i, x))[0]


def round_float(x: float) -> float:
    return float(torch.tensor(x, dtype=torch.float32))


def offsets_need_i64(*tensors: torch.Tensor) -> bool:
    """Whether a kernel reading these tensors needs 64-bit indices (`USE_I64`): whether one
    of them spans 2^31 elements or more (`element_span`).

    Why the span is enough: a kernel indexes every tensor argument from its `data_ptr()`
    (storage offset included) through the tensor's own strides, at indices within its own
    extents: slices, pads, permutes, cats and broadcasts inside a kernel move the *domain*
    indices (`kernel_plan`'s index maps), and an input is loaded only where its indices are
    in range (masked loads; gather/scatter indices are bounds-checked before the launch).
    So the largest offset a kernel forms from a tensor's pointer is
    sum((size - 1) * stride), what the tensor's storage holds around it does not matter (a
    view of a huge storage whose elements span less than 2^31 needs no 64-bit index). Views
    the host program takes of an argument (`torch.as_strided`) lie within that argument,
    made contiguous first; buffers it allocates are checked by their element count, and
    the launcher adds the kernel's domain (`M * N >= 2**31`). Masked-off lanes may form
    larger offsets that wrap in 32 bits; they are never dereferenced."""
    for t in tensors:
        if t.is_contiguous():
            if t.numel() >= 2**31:
                return True
        elif element_span(t) >= 2**31:
            return True
    return False


def element_span(t: torch.Tensor) -> int:
    """1 + the largest element offset from `t.data_ptr()` that indexing `t` within its
    extents reaches: sum((size - 1) * stride) + 1 (torch strides are never negative), 0 for
    an empty tensor. `numel()` for a contiguous tensor; less for a broadcast (stride 0),
    more for a strided slice."""
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))


def _pow2(n: int) -> int:
    return 1 << max(0, (max(1, n) - 1).bit_length())


@functools.lru_cache(maxsize=4096)
def alignment_hint(*values: int, allowed: bool = True) -> int:
    """The ALIGN a kernel is launched with (`kernels.emitter.Emitter.aligned`): the largest
    power of two up to 8 that divides every value (its column extent, the strides of its
    rows' starts), or 1 where that is 1, where all of them are multiples of 16 (Triton
    specializes such an int argument itself: the kernel needs no hint, and keeps one
    compiled form for all of them) or where every one is 0. With ALIGN 8 a row of 1000
    bf16 elements loads as 16-byte vectors, where Triton alone loads it one element at a
    time; 4 gives f32 its 16-byte vectors. `allowed=False` is the old rule (always 1), for
    `benchmarks/schedule_ab.py`."""
    g = 0
    for v in values:
        g = math.gcd(g, v)
    if not allowed or g == 0 or g % 16 == 0:
        return 1
    return g & -g


@functools.lru_cache(maxsize=4096)
def divides_fast(*divisors: int) -> bool:
    """Whether a kernel whose indices are 32-bit divides them by these run-time extents with
    its FAST_DIV branch (`kernels.emitter.magic_division`): where every one is in
    [1, 2**31) and none is a multiple of 16. An extent that is a multiple of 16 keeps `//`
    and `%`: Triton then sees runs of 16 contiguous indices through them and loads vectors,
    which the multiply-high would hide from it."""
    return all(1 <= d < 2**31 and d % 16 for d in divisors)


@functools.lru_cache(maxsize=4096)
def divisor_shift(d: int) -> int:
    """The shift s of the division by d that a kernel does by a multiply-high
    (`kernels.emitter.magic_division`): the least s with 2**s >= d (0 outside [1, 2**31))."""
    return (d - 1).bit_length() if 1 <= d < 2**31 else 0


@functools.lru_cache(maxsize=4096)
def divisor_magic(d: int) -> int:
    """The multiplier m of the division by d that a kernel does by a multiply-high, as the
    int32 of its 32 bits: m = 2**32 * (2**s - d) // d + 1 with s = `divisor_shift(d)`, so
    that n // d == (umulhi(n, m) + n) >> s for every 0 <= n < 2**31 and 1 <= d < 2**31
    (Granlund and Montgomery's round-up method, as PyTorch's `IntDivider`: m < 2**32, and
    umulhi(n, m) <= n keeps the sum within 32 bits). Passed as an int32 so that every
    divisor gives the kernel argument the same type; outside [1, 2**31) (a kernel whose
    indices are 64-bit, which divides with `//`) it is 0."""
    if not 1 <= d < 2**31:
        return 0
    m = (1 << 32) * ((1 << divisor_shift(d)) - d) // d + 1
    return m - (1 << 32) if m >= 1 << 31 else m


TILE = 4096
"""Elements per program tile (rows x columns)."""


def parse_blocks(spec: str) -> tuple[int, int, int]:
    """(BM, BN, WARPS) from `BMxBNxWARPS`."""
    bm, bn, warps = (int(v) for v in spec.split("x"))
    return bm, bn, warps


def _env_blocks(name: str) -> tuple[int, int, int] | None:
    """ALLOT_<NAME>_BLOCKS=BMxBNxWARPS overrides a heuristic (for tuning runs)."""
    spec = os.environ.get(f"ALLOT_{name}_BLOCKS")
    return parse_blocks(spec) if spec else None


_PW = _env_blocks("POINTWISE")
_FLAT = _env_blocks("FLAT")


@functools.lru_cache(maxsize=4096)
def pointwise_blocks(m: int, n: int) -> tuple[int, int, int]:
    """Blocks of a pointwise kernel over [m, n]: up to 1024 columns (narrower, down to 128,
    while a row's last tile would leave more than 15% of the row's lanes idle), TILE
    elements a program, 8 warps above 1024 elements (ALLOT_POINTWISE_BLOCKS to tune)."""
    if _PW is not None:
        bm, bn, warps = _PW
        return min(bm, _pow2(m)), min(bn, _pow2(n)), warps
    bn = min(_pow2(n), 1024)
    while bn > 128 and n < TILE and n / (-(-n // bn) * bn) < 0.85:
        bn //= 2  # rows of 1111: 256-wide tiles use 87% of their lanes, 1024-wide ones 54%
    bm = min(_pow2(m), max(1, TILE // bn))
    return bm, bn, 4 if bm * bn <= 1024 else 8


@functools.lru_cache(maxsize=4096)
def flat_rows(n: int) -> bool:
    """Whether a pointwise kernel over rows of a static `n` elements indexes its domain
    flat (one linear index a lane, row and column by division: `kernels/pointwise`'s flat
    pointwise kernels, Inductor's pointwise scheme) rather than in [BLOCK_M, BLOCK_N] tiles:
    where the widest power-of-two tile that `pointwise_blocks` allows would still leave more
    than 15% of each row's lanes idle (rows of 96: a 128-wide tile, 25% idle; rows of 3)."""
    if n <= 1:
        return False
    bm, bn, _ = pointwise_blocks(1 << 20, n)
    return n / (-(-n // bn) * bn) < 0.85


@functools.lru_cache(maxsize=4096)
def flat_blocks(m: int, n: int) -> tuple[int, int, int]:
    """Blocks of a flat pointwise kernel over m rows of n: BLOCK_N linear indices a
    program (BLOCK_M 1), 1024 with 4 warps (eight 16-bit elements a thread: one 16-byte
    access), fewer for a small domain; ALLOT_FLAT_BLOCKS to tune (its BM is ignored)."""
    if _FLAT is not None:
        _, bn, warps = _FLAT
        return 1, min(bn, _pow2(m * n)), warps
    return 1, min(_pow2(m * n), 1024), 4


@functools.lru_cache(maxsize=4096)
def transpose_blocks(m: int, n: int) -> tuple[int, int, int]:
    """Blocks of a pointwise kernel that reads or writes some operand along the outer (m)
    axis of its domain (a transpose: `kernel_plan`'s operand maps put that operand's last,
    contiguous dim on an outer domain dim). Square tiles, so that both the operands that are
    contiguous along n and those contiguous along m are read in whole cache lines; Triton
    converts the layout between them through shared memory. 64 x 64 with 8 warps unless
    ALLOT_TRANSPOSE_BLOCKS says otherwise. Measured on an H200 (`benchmarks/block_sweep.sh`,
    `benchmarks/results/block_sweep_h200_2026-11-30_2136.txt`), x.T + z in bf16: 8192x8192
    at 95% of the copy bandwidth (the 4 x 1024 tiles of `pointwise_blocks` 60%), 5003x3001
    36 us (48); [16, 2048, 2048] transposed in its last two dims 97% (61%). Where m is below
    64 the tile is as tall as m and wider, up to 4096 elements (a [2, n] view of an [n, 2]
    tensor: 2 x 1024, not 2 x 64 under 8 warps); 4 warps for tiles of 1024 or fewer."""
    if _TR is not None:
        bm, bn, warps = _TR
        return min(bm, _pow2(m)), min(bn, _pow2(n)), warps
    bm = min(_pow2(m), 64)
    bn = min(_pow2(n), max(64, min(1024, 4096 // bm)))
    return bm, bn, 8 if bm * bn > 1024 else 4


_TR = _env_blocks("TRANSPOSE")
_PERSISTENT = _env_blocks("PERSISTENT")
_LOOPED = _env_blocks("LOOPED")


ROW_TILE_USE = 0.85
"""A persistent row is held as two tiles (`row_tiles`) where its one power-of-two tile would
leave more than 15% of the lanes idle and two tiles use at least that many fewer lanes."""

ROW_SPLIT_MIN = 512
"""The narrowest main tile of a row held as two tiles: narrower rows stay one tile."""

ROW_TAIL_MIN = 32
"""The narrowest second tile of a row held as two (a warp's width)."""


@functools.lru_cache(maxsize=4096)
def row_tiles(n: int, split: bool = True, use: float = ROW_TILE_USE) -> tuple[int, int]:
    """How a persistent row kernel holds a row of n elements: (main, tail) tile widths,
    the row's columns [0, main) in one tile and [main, n) in a second of `tail` lanes; tail
    0 means one tile of `main` >= n lanes (the power of two at or above n).

    With `split` (the rule), a row whose power-of-two tile would use less than ROW_TILE_USE of
    its lanes is held as the largest power of two below n (at least ROW_SPLIT_MIN) plus the
    power of two at or above the rest, where those lanes are within ROW_TILE_USE of the one
    tile's: rows of 1111 in 1024 + 128 lanes (96% used) instead of 2048 (54%), as nvFuser
    holds them in 124 threads of 9 elements (`benchmarks/results/nvfuser_wins_2026-12-02.md`).
    Every lane is registers of each value the row holds, so the idle half of a 2048-wide tile
    costs occupancy: ptxas gives the residual LayerNorm's kernel at 2 x 2048, 8 warps, 75
    registers a thread (three programs an SM), at 2 x (1024 + 128) 62 (four). Rows of 1999
    stay 2048 (1024 + 1024 saves nothing). A static row is split when the kernel is
    generated (`row_reduction.split_row`); a row of `?` length when it is launched, by the
    launcher of a kernel with the `two_tiles` variant (`row_reduction.row_variants`), which
    passes `tail` as BLOCK_T. `split=False` is the old rule (one tile), for A/B runs
    (`benchmarks/schedule_ab.py`). `use` replaces ROW_TILE_USE (`inner_outer_tiles`)."""
    whole = _pow2(n)
    if not split or whole == n or whole // 2 < ROW_SPLIT_MIN or n > use * whole:
        return whole, 0
    main = whole // 2
    tail = max(ROW_TAIL_MIN, _pow2(n - main))
    if main + tail > use * whole:
        return whole, 0
    return main, tail


INNER_OUTER_TILE_USE = 2 / 3
"""An inner-outer row is held as two tiles only where its one tile would leave more than a
third of its lanes idle (`inner_outer_tiles`)."""


@functools.lru_cache(maxsize=4096)
def inner_outer_tiles(n: int, split: bool = True) -> tuple[int, int]:
    """`row_tiles` for an inner-outer kernel's row: only a row of one SHORT_ROW_TILE tile a
    step (1025 to 2048 elements: 4 warps, `inner_outer_blocks`), and only where two tiles
    use at most INNER_OUTER_TILE_USE of the one tile's lanes. Measured on an H100
    (`benchmarks/inner_outer_tiles_session.sh`, BENCHMARKS.md), bf16, 4 warps, 4 programs an
    SM: LayerNorm backward over 12345x1111 89.4 us as 1024 + 128 lanes against 115.4 as
    2048 (RMSNorm 68.0 and 91.2); but over 16384x1536 77.7 as 1024 + 512 against 70.6 as
    2048 (65.4 and 63.6), and over 8192x768, two rows a step, 73.1 as 2 x (512 + 256)
    against 24.1 as 2 x 1024 (40.9 and 19.4). The rows of 1025 to 1365 that this splits are
    the ones whose one tile wastes the most."""
    if _pow2(n) != SHORT_ROW_TILE:
        return _pow2(n), 0
    return row_tiles(n, split, use=INNER_OUTER_TILE_USE)


ROW_ELEMENTS_A_THREAD = 16
"""The fewest row elements a thread of a persistent row kernel holds where the warps rule
can keep it so: a tile of TILE (4096) lanes over 8 warps is 16 a thread."""


@functools.lru_cache(maxsize=4096)
def persistent_blocks(m: int, n: int, main: int = 0, lanes_warps: bool = True) -> tuple[int, int, int]:
    """Blocks of a persistent row kernel over m rows of n: the row's power of two of columns,
    TILE elements a program, 4 to 32 warps by the tile's size (ALLOT_PERSISTENT_BLOCKS to
    tune). `main` > 0: the kernel holds its row as two tiles (`row_tiles`), BLOCK_N is the
    first one's width (`main`, whatever the override says) and the rows a program are those
    of the one power-of-two tile; its warps are the one tile's, fewer where the two tiles'
    lanes would leave a thread under ROW_ELEMENTS_A_THREAD elements (not under 4 warps):
    rows of 1111 as 2 x (1024 + 128) lanes take 4 warps (18 elements a thread), not the
    2 x 2048 tile's 8 (9 a thread), which read 5 to 18% slower on an H100 (BENCHMARKS.md).
    `lanes_warps=False` is the old rule (the one tile's warps), for A/B runs."""
    if _PERSISTENT is not None:
        bm, bn, warps = _PERSISTENT
        return min(bm, _pow2(m)), main or max(bn, _pow2(n)), warps
    bn = _pow2(n)
    bm = min(_pow2(m), max(1, TILE // bn))
    elems = bm * bn
    warps = 4 if elems <= 2048 else (8 if elems <= 8192 else (16 if elems <= 16384 else 32))
    if main and lanes_warps:
        _, tail = row_tiles(n)
        lanes = bm * (main + tail)
        while warps > 4 and lanes < ROW_ELEMENTS_A_THREAD * 32 * warps:
            warps //= 2
    return bm, main or bn, warps


@functools.lru_cache(maxsize=4096)
def looped_blocks(m: int, n: int) -> tuple[int, int, int]:
    """Blocks of a looped row reduction: one row per program, 1024 columns a step, 4 warps
    (ALLOT_LOOPED_BLOCKS to tune). Measured on an H200 (`benchmarks/block_sweep.sh`,
    `benchmarks/results/block_sweep_looped_h200_2026-12-01_0150.txt`), bf16 static, with the
    row's running max (online softmax): cross-entropy over 4096x32000 142 us with 1024 x 4,
    145 with 2048 x 8, 154 with 2048 x 4, 179 with 1024 x 8; over 1234x50257 116, 115, 203
    and 134; log-softmax over 1234x50257 164, 175, 215 and 226 (over 4096x32000 it holds
    its row)."""
    if _LOOPED is not None:
        bm, bn, warps = _LOOPED
        return min(bm, _pow2(m)), min(bn, _pow2(n)), warps
    return 1, min(_pow2(n), 1024), 4


@functools.lru_cache(maxsize=4096)
def outer_blocks(m: int, n: int, splits: int = 1, element_bytes: int = 4) -> tuple[int, int, int]:
    """Blocks of a reduction split across CTAs (first stage, or the whole reduction when it
    has one split): m kept indices, contiguous in memory, by n reduced ones in `splits`
    chunks. Up to 64 kept indices per program (128 bytes of bf16: one full cache line per
    row; the pass's `split_reduction.SPLIT_KEPT_TILE`) by 32 reduced rows, 4 warps, or 8
    warps where each program's chunk is at most SHORT_CHUNK reduced indices (a few steps: a
    program's fixed cost weighs more, and more warps keep more loads in flight); a full
    reduction (m = 1) reads `full_tile(element_bytes)` contiguous elements a step (`element_bytes`:
    the widest element the kernel loads) with `full_warps` warps. Measured on an
    H200 (`benchmarks/split_sweep.sh`, BENCHMARKS.md, 19:4x UTC 2026-11-30), 32768x4096
    bf16 with about 1088 first-stage programs: 64x32 moved a column sum at 3.40 TB/s and a
    middle-axis mean at 3.47, against 2.82 and 2.37 with 64x64 (a [64, 64] f32
    accumulator is 32 registers a thread: fewer programs resident) and 2.87 and 3.31
    with 64x16. With dx stored beside its bias gradient (`block_sweep.sh`, KNOB=OUTER,
    23:5x UTC 2026-11-30), gelu_bwd at 12345x1111 (49 chunks of 252 rows) took 68 us with
    8 warps against 105 with 4; at 16384x4096 (chunks of 1024 rows) 155 against 145."""
    if _OUTER is not None:
        bm, bn, warps = _OUTER
        return min(bm, _pow2(m)), min(bn, _pow2(n)), warps
    if m == 1:
        tile = full_tile(element_bytes)
        return 1, min(_pow2(n), tile), full_warps(tile)
    if n < SHORT_REDUCED:
        return short_outer_blocks(m, n)
    bm = min(_pow2(m), 64)
    bn = min(_pow2(n), 32)
    short = splits > 1 and -(-n // splits) <= SHORT_CHUNK
    return bm, bn, 8 if short else 4


FULL_TILE_BYTES = 8192
"""A full reduction's first stage (m = 1) reads FULL_TILE_BYTES contiguous bytes a step, 16
elements a thread (four 16-byte loads of f32, two of bf16, in flight per step): 2048 f32
elements with 4 warps, 4096 bf16 or f16 elements with 8 warps. Both are the faster of the two
tiles measured for their element size on an H200 (kernel-only, the skeptic suite,
`benchmarks/results/skeptic_suite_h200_2026-12-01_2115` and `_2026-12-02_0127`):
- f32, full_sum `?` 16384x4096: 2048 / 4 warps 66.1 us against 70.5 with 4096 / 8. With 8
  warps the kernel ran 40 registers a thread, six CTAs an SM, so the 1056 first-stage programs
  (`split_reduction.SPLIT_TARGET_PROGRAMS`, eight an SM) took 1.33 waves (Nsight Compute: 63%
  achieved occupancy); eight CTAs of 4 warps fit at up to 64 registers a thread.
- bf16, full_sum static 16384x4096: 4096 / 8 warps 35.8 us against 43.1 with 2048 / 4
  (f16 36.8 against 43.3): at half the bytes a step, the 4-warp tile keeps too few loads in
  flight."""


def full_tile(element_bytes: int) -> int:
    """Elements a step of a full reduction's first stage: FULL_TILE_BYTES of them."""
    return max(512, FULL_TILE_BYTES // max(1, element_bytes))


def full_warps(tile: int) -> int:
    """Warps of a full reduction's first stage: 16 elements a thread, 4 to 8 warps."""
    return max(4, min(8, tile // (16 * 32)))


SHORT_CHUNK = 256
"""A split's chunk of at most this many reduced indices (8 steps of 32) gets 8 warps."""


SHORT_REDUCED = 256
"""Below this many reduced indices a split reduction always has one split
(`analysis.split_reduction.SPLIT_MIN_REDUCED`): one program reduces the whole short axis."""


@functools.lru_cache(maxsize=4096)
def short_outer_blocks(m: int, n: int) -> tuple[int, int, int]:
    """Blocks of an outer reduction over a short axis (n < SHORT_REDUCED, one split: a sum
    over the 16 rows of [16, 1024, 4096]): nothing is split, so a program should own many
    kept indices. An axis of at most 8 is read in one step, 256 kept by the whole axis with
    4 warps; a longer one 1024 kept by 4 reduced a step, 4 warps (ALLOT_SHORT_OUTER_BLOCKS
    to tune). Measured on an H200 (`benchmarks/block_sweep.sh`,
    `benchmarks/results/block_sweep_h200_2026-11-30_2136.txt`), sums over dim 0 in bf16: of
    [16, 1024, 4096] 46 us (78% of the copy bandwidth) with [1024, 4], against 182 us with
    [64, 16] tiles (65536 programs), 75 with [512, 8] and 305 with [256, 16] and 8 warps;
    of [7, 1999, 1111] 20 us with [256, 8] and 8 warps, against 31 with [1024, 4]. Once
    sums stopped selecting over their loads, 4 warps beat 8 for [256, 8]: 19.0 and 19.0
    us (static) against 20.7 and 21.2, in two interleaved sweeps
    (`block_sweep_short_outer_h200_2026-12-01_1143.txt`; [512, 8] with 8 warps 19.6 to
    20.4, [128, 8] with 4 warps 20.0 to 20.8)."""
    if _SHORT is not None:
        bm, bn, warps = _SHORT
        return min(bm, _pow2(m)), min(bn, _pow2(n)), warps
    if _pow2(n) <= 8:
        return min(_pow2(m), 256), _pow2(n), 4
    bm = min(_pow2(m), 1024)
    return bm, min(_pow2(n), max(1, TILE // bm)), 4


_OUTER = _env_blocks("OUTER")
_SHORT = _env_blocks("SHORT_OUTER")


UNROLL_REDUCED = 16
"""An outer reduction of one split over at most this many reduced indices reads them
unrolled (`unrolled_outer_blocks`); a longer axis keeps the looped [BLOCK_M, BLOCK_N] tile."""

_UNROLLED = _env_blocks("UNROLLED_OUTER")


@functools.lru_cache(maxsize=4096)
def unrolled_outer_blocks(m: int, n: int, unroll: bool = True) -> tuple[int, int, int] | None:
    """Blocks of the unrolled form of an outer reduction of one split
    (`kernels/split_reduction.emit_unrolled`: a [BLOCK_M, 1] tile of kept indices, the
    BLOCK_N = n reduced indices read one after another, unrolled), or None where it does not
    apply: n above UNROLL_REDUCED or 0, or `unroll` False (the looped tile of
    `short_outer_blocks`, the rule before it; `benchmarks/schedule_ab.py --rules
    unrolled_outer`). 256 kept indices a program, 512 past 8 reduced ones, 4 warps
    (ALLOT_UNROLLED_OUTER_BLOCKS=BMxBNxWARPS to tune; its BN is ignored: BLOCK_N is n).

    Why: for a sum over the 7 rows of a bf16 [7, 1999, 1111], Nsight Compute on an H200
    (`benchmarks/results/ncu_sum_3d_dim0_odd_h200_2026-12-04_1750.txt`) gave the looped
    [256, 8] tile 14.2 us at 64 registers a thread (50% theoretical occupancy, 47% of DRAM
    bandwidth) against 11.0 us for Inductor's 1-D kernel of 7 unrolled loads at 27
    registers (100%, 61%); a warp of the 2-D tile spans 4 kept by 8 reduced indices, so
    each load touches 8 rows. Hand-written, in one process (`short_outer_variants.py`,
    `short_outer_variants_h200_2026-12-01_1113.txt` and `_1000.txt`), the unrolled 1-D form
    took 17.1 us with 256 a program and 4 warps against 20.1 for the generated tile (do_bench,
    host launches included), and over the 16 rows of [16, 1024, 4096] 42.9 us with 512
    against 47.6 for the compiled fusion. Offline, with the GPU machine's Triton 3.6 for sm_90
    (`schedule_ab.py --rules unrolled_outer --ptxas`,
    `benchmarks/results/schedule_ab_unrolled_outer_ptxas_cpu_2026-12-04_2200.txt`), the
    generated variant takes 30 registers a thread at [7, 1999, 1111] against the looped
    tile's 64 (16 programs an SM against 8) and 32 against 56 over 16 rows. The generated
    form (this tile indexed through the kept dims' strides, `_unrolled_2d` there) has not
    been timed on a GPU yet."""
    if not unroll or n < 1 or n > UNROLL_REDUCED:
        return None
    if _UNROLLED is not None:
        bm, _, warps = _UNROLLED
        return min(bm, _pow2(m)), n, warps
    return min(_pow2(m), 512 if n > 8 else 256), n, 4


@functools.lru_cache(maxsize=4096)
def split_final_blocks(m: int, splits: int) -> tuple[int, int, int]:
    """Blocks of a split reduction's second stage: m kept indices by its `splits` partials."""
    bm = min(_pow2(m), 128)
    bn = min(_pow2(splits), max(1, TILE // bm))
    return bm, bn, 4 if bm * bn <= 1024 else 8


_TILED_MATMUL = _env_blocks("TILED_MATMUL")


@functools.lru_cache(maxsize=4096)
def tiled_matmul_blocks(m: int, n: int, k: int) -> tuple[int, int, int]:
    """Output tile of a tiled library matmul (`backend/kernels/tiled_matmul.py`, small problems
    only: `analysis/library_matmul.py`): up to 64x64 (`tl.dot` needs 16 or more a side),
    32 columns where there are at most 16 rows, so that a long thin output (a decode
    step's 16x4096) still has N / 32 programs to read its weight with; 4 warps.
    ALLOT_TILED_MATMUL_BLOCKS=BMxBNxWARPS to tune."""
    if _TILED_MATMUL is not None:
        bm, bn, warps = _TILED_MATMUL
        return max(16, bm), max(16, bn), warps
    bm = min(64, max(16, _pow2(m)))
    bn = min(32 if m <= 16 else 64, max(16, _pow2(n)))
    return bm, bn, 4


_INNER_SPLIT = _env_blocks("INNER_SPLIT")


@functools.lru_cache(maxsize=4096)
def inner_split_blocks(m: int, n: int) -> tuple[int, int, int]:
    """Blocks of an inner split's first stage (`analysis.split_reduction`: a row reduction
    or BatchNorm statistics with few kept rows, each split into chunks of at least 4096
    reduced elements): one kept row by 1024 contiguous reduced elements a step, 4 warps
    (eight elements, 16 bytes of bf16, per thread and load), m kept rows and n reduced
    elements in all; ALLOT_INNER_SPLIT_BLOCKS=BMxBNxWARPS to tune (BLOCK_M > 1 works: a
    program then reduces that many rows' chunks). Measured on an H200 (`block_sweep.sh`,
    KNOB=INNER_SPLIT, `benchmarks/results/block_sweep_h200_2026-12-01_0025.txt`), bf16
    static 64x256x4096: BatchNorm statistics 57.0 us with 1 x 1024 x 4, 61.1 with
    1 x 2048 x 8, 60.8 with 1 x 4096 x 8, 73.5 with 1 x 2048 x 4; BatchNorm forward 120.2,
    123.0, 121.7 and 137.1."""
    if _INNER_SPLIT is not None:
        bm, bn, warps = _INNER_SPLIT
        return min(bm, _pow2(m)), min(bn, _pow2(n)), warps
    return 1, min(_pow2(n), 1024), 4


_IO = _env_blocks("INNER_OUTER")
_IO_FINAL = _env_blocks("INNER_OUTER_FINAL")


@functools.lru_cache(maxsize=4096)
def inner_outer_blocks(m: int, n: int, main: int = 0) -> tuple[int, int, int]:
    """Blocks of an inner-outer kernel's row programs (`backend/kernels/inner_outer.py`): the whole
    row in a tile; rows longer than SHORT_ROW_TILE one at a time with 16 warps; shorter ones
    SHORT_ROW_TILE lanes a tile (2 rows of 1024, 8 of 256, 1 of 2048) on 4 warps, with the
    program count of `analysis/inner_outer.most_programs` (the same bound: four an SM, two
    for the longer rows), ALLOT_INNER_OUTER_BLOCKS to tune. `main` > 0: the kernel holds its
    row as two tiles (`inner_outer_tiles`, rows of 1111 in 1024 + 128 lanes); BLOCK_N is the first
    one's width (whatever the override says) and the rows a program those of the one
    power-of-two tile. Measured on an H200, bf16 static (`block_sweep.sh`, KNOB=INNER_OUTER, 23:5x UTC
    2026-11-30): at 12345x1111 LayerNorm backward 113 us and RMSNorm backward 84 with 1 x 2048
    and 16 warps, against 135 and 123 with the persistent normalization's 2 x 2048 and 8
    warps (207 registers a thread: one program an SM); at 16384x4096 the same (175 and 140
    against 174 and 141). Rows of 1024 and 768 (`inner_outer_sweep.py`, 2026-12-03): 2 x 1024
    on 4 warps (80 registers a thread) with `analysis/inner_outer.SHORT_PROGRAMS` programs,
    LayerNorm backward over 8192 x 1024 24.8 us, against 59.5 with the persistent
    normalization's 4 x 1024 on 8 warps (137 registers: one program an SM) and 30.3 with 1 x
    1024 on 4."""
    if _IO is not None:
        bm, bn, warps = _IO
        return min(bm, _pow2(m)), main or max(bn, _pow2(n)), warps
    bn = _pow2(n)
    if bn > SHORT_ROW_TILE:  # one row a block, 16 warps: half the registers a thread of 8 warps
        return 1, main or bn, 16
    return min(_pow2(m), max(1, SHORT_ROW_TILE // bn)), main or bn, 4


SHORT_ROW_TILE = _inner_outer.SHORT_ROW
"""Lanes a tile of an inner-outer row program over rows of at most that many elements (4
warps: at most 16 a thread for each row-sized value); the bound of the program count
(`analysis/inner_outer.most_programs`), so the two agree."""


FINAL_PROGRAMS = 132
"""An inner-outer kernel's second stage narrows its column tile until it has this many
programs (one an H200 SM) or its tile is FINAL_MIN_COLUMNS wide (`inner_outer_final_blocks`)."""

FINAL_MIN_COLUMNS = 16
"""The narrowest column tile of an inner-outer second stage: 64 bytes of f32 partials a row
read, two whole 32-byte sectors."""


@functools.lru_cache(maxsize=4096)
def inner_outer_final_blocks(n: int, programs: int, spread: bool = True) -> tuple[int, int, int]:
    """Blocks of an inner-outer kernel's second stage: BLOCK_N columns by BLOCK_M programs'
    partials a step, 4 warps; ALLOT_INNER_OUTER_FINAL_BLOCKS to tune. BLOCK_N is 64 (256
    contiguous bytes of f32 partials a row read) narrowed, with `spread` (the rule), while
    the stage has fewer than FINAL_PROGRAMS programs, down to FINAL_MIN_COLUMNS: 1111
    columns get 70 programs of 16, not 18 of 64, and 4096 get 256, not 64. The 18 programs
    of LayerNorm backward 12345x1111 took 9.2 us of its 100 on an H200 at 5% of the DRAM
    bandwidth and 6% achieved occupancy, 128 registers a thread
    (`benchmarks/results/ncu_weak_h200_2026-12-01_2326/layernorm_bwd_bf16_static_odd.txt`),
    where nvFuser reduces the same partials across its 556 programs inside its one kernel
    (`benchmarks/results/nvfuser_wins_2026-12-02.md`). `spread=False` is the old rule, for
    A/B runs (`benchmarks/schedule_ab.py`)."""
    if _IO_FINAL is not None:
        bm, bn, warps = _IO_FINAL
        return min(bm, _pow2(programs)), min(bn, _pow2(n)), warps
    bn = min(_pow2(n), 64)
    while spread and bn > FINAL_MIN_COLUMNS and -(-n // bn) < FINAL_PROGRAMS:
        bn //= 2
    bm = min(_pow2(programs), max(1, TILE // bn), 64)
    return bm, bn, 4


# `rt.launch(kernel, grid, args, bm, bn, use_i64, warps)`: `launch.py`, the one place that
# touches Triton's launches.
from allotment.backend.launch import launch_kernel as launch  # noqa: E402, F401 (rt.launch)


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    if a.dim() == 1 or b.dim() == 1:  # torch.matmul(out=) resizes a 1-D result (deprecated): copy it
        _launch.note_host_work("a matmul result copied")
        out.copy_(torch.matmul(a, b))
        return
    _torch_call(torch.matmul, (a, b), {"out": out})


def linear(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor) -> None:
    if w.dim() == 2 and x.dim() >= 2 and out.is_contiguous():
        x2 = x.reshape(-1, x.shape[-1])
        if x2 is not x and not x2._is_view():  # reshape copied it (a host-side op)
            _launch.note_host_work("an input of a linear copied by reshape")
        o2 = out.view(-1, out.shape[-1])
        if bias is not None:
            _torch_call(torch.addmm, (bias, x2, w.t()), {"out": o2})
        else:
            _torch_call(torch.mm, (x2, w.t()), {"out": o2})
        return
    _launch.note_host_work("a linear result copied")
    out.copy_(torch.nn.functional.linear(x, w, bias))


def aten_call(name: str, args: tuple, kwargs: dict[str, Any]) -> Any:
    """An `aten` kernel's call (`backend/kernels/aten_call.py`), reported to a recording with
    what it returned (`launch.note_torch_call`, `launch.note_torch_result`): a replay makes
    the call and takes its returned tensors as the buffers they are."""
    op = aten_operator(name)
    _launch.note_torch_call(op, args, kwargs)
    try:
        result = op(*args, **kwargs)
    except Exception as e:  # the IR's arguments: torch's refusal names the call at fault
        if isinstance(e, Error) or is_allocation_failure(e):
            raise  # an allocation failure: the driver's RunError says so
        raise RunError(f"{name}: the call failed: {first_line(e)}") from None
    _launch.note_torch_result(result)
    return result


def call_result(result: Any, name: str, k: int, position: int | None, shape: tuple[int, ...],
                dtype: torch.dtype) -> torch.Tensor:
    """Result #k of ATen call `name` (its returned `result`, or item `position` of it) as the
    IR declares it: a tensor of `dtype` and `shape`. Anything else is a RunError naming the
    call: the buffers planned for the result, and every kernel reading them, take the IR's
    shape, so a result of another shape must never get through."""
    got = result
    if position is not None:
        if not isinstance(result, tuple | list) or not 0 <= position < len(result):
            kind = f"{len(result)} results" if isinstance(result, tuple | list) else f"one {type(result).__name__}"
            raise RunError(f"{name}: result #{k} is the call's result {position}, but the call returned {kind}")
        got = result[position]
    if isinstance(got, torch.Tensor) and got.dtype == dtype and got.shape == shape:
        return got
    what = (f"a tensor of dtype {got.dtype} and shape {tuple(got.shape)}" if isinstance(got, torch.Tensor)
            else f"a {type(got).__name__}")
    raise RunError(f"{name}: result #{k} is {what}, but the IR declares a tensor of dtype {dtype} and shape {shape}")


def dense(t: torch.Tensor) -> torch.Tensor:
    """A call's result as a row-major buffer (host programs index buffers row-major)."""
    if t.is_contiguous():
        return t
    return row_major_copy(t)


def in_order(t: torch.Tensor, order: tuple[int, ...]) -> torch.Tensor:
    """A call's result for a buffer planned in memory order `order` (dims outermost first,
    `alloc.alloc`'s `order`): as it is where it comes back dense in that order, else a copy
    in that order (a recorded `aten.clone`, as `row_major_copy`)."""
    if dense_in_order(t.shape, t.stride(), order):
        return t
    inverse = tuple(order.index(d) for d in range(len(order)))
    return row_major_copy(t.permute(order)).permute(inverse)


def call_layout(t: torch.Tensor) -> torch.Tensor:
    """A call's result for an `any_layout` buffer: as it is where it is dense without
    overlaps (a permutation of row-major: its elements span exactly its element count, so
    the kernels' 64-bit index decision by element count holds), else a row-major copy."""
    if t.is_contiguous() or _dense_permutation(t):
        return t
    return row_major_copy(t)


_CLONE = torch.ops.aten.clone.default
_ROW_MAJOR: dict[str, Any] = {"memory_format": torch.contiguous_format}


def row_major_copy(t: torch.Tensor) -> torch.Tensor:
    """A row-major copy of `t` (an input, or a library call's result in a layout the kernels
    do not index, e.g. a slice of a larger buffer), made as a recorded torch call
    (`aten.clone`): a replay makes the same copy on the device, so the copy keeps the program
    replayable."""
    _launch.note_torch_call(_CLONE, (t,), _ROW_MAJOR)
    result = _CLONE(t, **_ROW_MAJOR)
    _launch.note_torch_result(result)
    return result


def _dense_permutation(t: torch.Tensor) -> bool:
    """Whether `t`'s strides are a row-major layout of its dims in some order: each dim of
    extent > 1, innermost (smallest stride) first, has the stride of the element count
    inside it."""
    expected = 1
    for stride, n in sorted((st, n) for n, st in zip(t.shape, t.stride()) if n > 1):
        if stride != expected:
            return False
        expected *= n
    return True


def _torch_call(fn: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """A library kernel's torch call, reported to a recording (`launch.note_torch_call`)."""
    _launch.note_torch_call(fn, args, kwargs)
    fn(*args, **kwargs)


POISON_INTEGER = -0x5A5A5A5A
"""What poison mode writes into freed integer buffers (NaN for floats, True for bools)."""


def poison(t: torch.Tensor) -> None:
    """Fills a buffer about to be freed (`alloc.dealloc` in poison mode, ALLOT_POISON=1), so
    that a plan that reads freed memory gives visibly wrong results instead of stale ones."""
    if t.dtype.is_floating_point:
        t.fill_(math.nan)
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(max(POISON_INTEGER, torch.iinfo(t.dtype).min))


def write_back(caller: torch.Tensor, written: torch.Tensor) -> None:
    """An in-place output computed in a copy of the caller's tensor (made contiguous at entry):
    the caller's tensor gets the values."""
    if written is not caller:
        _launch.note_host_work("a write-back into the caller's tensor")
        caller.copy_(written)


def pack(sizes: tuple[int, ...], lifetimes: tuple[tuple[int, int], ...], alignment: int) -> tuple[int, ...]:
    """`alloc.pack`: (arena bytes, offset of each slot), by `analysis.packing.pack`
    (cached per tuple of sizes)."""
    total, offsets = _pack(sizes, lifetimes, alignment)
    return (total, *offsets)


_NO_ELEMENTS: dict[tuple[tuple[int, ...], torch.dtype, torch.device], torch.Tensor] = {}
"""`no_elements`'s tensors, by (shape, dtype, device)."""
_NO_ELEMENTS_KEPT = 1024
"""At most this many of them (a run-time extent can make any number of empty shapes)."""


def no_elements(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """An empty tensor (`shape` has a 0 extent) of `dtype` on `device`, the same object on
    every call: a generated program takes it for a buffer or arena slot that is empty at run
    time (a split reduction's partials when it has one split), instead of allocating. It
    holds no memory, and the program hands it only to its own Triton kernels, which write
    no element of it (`host_codegen`'s `escaping`: never a result nor a torch call's
    `out=`); its strides are `torch.empty`'s, so kernels specialize as on a fresh one."""
    key = (shape, dtype, device)
    t = _NO_ELEMENTS.get(key)
    if t is None:
        t = torch.empty(shape, dtype=dtype, device=device)
        if t.numel():
            raise ValueError(f"no_elements: shape {shape} has elements")
        if len(_NO_ELEMENTS) >= _NO_ELEMENTS_KEPT:
            _NO_ELEMENTS.clear()
        _NO_ELEMENTS[key] = t
    return t


def slot(arena: torch.Tensor, offset: int, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    """`memref.view`: a contiguous tensor of `dtype` and `shape` over the arena's bytes from `offset`."""
    n = 1
    for e in shape:
        n *= e
    nbytes = n * dtype.itemsize
    return arena[offset:offset + nbytes].view(dtype).view(shape)
