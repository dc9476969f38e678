"""Which `library` kernels a generated tiled matmul can compute, and when it should.

A `library` kernel holds one `fusion.matmul` or `fusion.linear`. Through torch, each
is one vendor library call (cuBLAS on a GPU), which costs 15 to 20 us of host time
on an H200 whatever the size (`benchmarks/tiled_matmul.py`): at small sizes that is
most of a fusion's time. A generated Triton kernel of output tiles
(`backend/tiled_matmul.py`) launches in a few microseconds, so small problems run
tiled, large ones on the vendor library. This module is the one home of both rules:

- `tileable(kernel)`: the kernel's op as a `LibraryMatmul` when the tiled kernel
  computes it (2-D operands, a 1-D bias, every operand and the result of one float
  type among bf16, f16 and f32, nothing sharded), else None;
- `TiledLimits.terms(m, n, k, element_bytes)`: the size rule. A problem is small when
  its output has at most `outputs` elements and each operand at most `operand_bytes`
  bytes (products of two extents only, so nothing overflows 64 bits). `alloc-place`
  applies it to static extents at compile time, and builds it into the IR as
  `%<kernel>_fits` where an extent is `?`.

The limits come from `benchmarks/tiled_matmul.py` on an H200 (BENCHMARKS.md, "Small
matmuls"): with 16-bit operands the tiled kernel's GPU time stayed within 1.5 us of
cuBLAS's up to 256x256x256 (7.7 against 6.2 us) while its host time was 8 us against
25, but with a 1024x1024 weight it took 15 to 17 us against 8 to 10; f32 (IEEE
products, no tensor cores) lost at 256x256x256 (28 against 13.5 us) and won at
32x256x64 (9.6 against 18.4 us) but lost at 64x256x128 (16.6 against 9.0). Hence
65,536 output elements and 128 KiB an operand, an f32 byte counting twice (its
products run on CUDA cores, not tensor cores): 65,536 16-bit elements, 16,384 f32. `ALLOT_TILED_MATMUL_OUTPUTS` and
`ALLOT_TILED_MATMUL_OPERAND_BYTES` override them (0: never tiled). The CPU target
uses the same rule, so that its tests run the kernels a GPU runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, NoneAttr, TensorType

from allotment.analysis.capacity import env_int
from allotment.dialects import alloc, fusion

TILED_ENV = ("ALLOT_TILED_MATMUL_OUTPUTS", "ALLOT_TILED_MATMUL_OPERAND_BYTES")
"""The environment variables that override `limits` (part of the program cache key)."""


@dataclass(frozen=True)
class LibraryMatmul:
    """A library kernel's matmul or linear, by the kernel inputs it reads: `lhs` [M, K];
    `rhs` [K, N] for a matmul or the weight [N, K] of a linear (`weight`); `bias` [N] or None."""

    op: fusion.MatmulOp | fusion.LinearOp
    lhs: int
    rhs: int
    bias: int | None
    weight: bool

    def extent_sources(self) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
        """(kernel input, dim) giving M, N and K."""
        n = (self.rhs, 0) if self.weight else (self.rhs, 1)
        return (self.lhs, 0), n, (self.lhs, 1)


T = TypeVar("T")


@dataclass(frozen=True)
class TiledLimits:
    """The size rule (module docstring)."""

    outputs: int
    operand_bytes: int

    def operand_elements(self, element_bytes: int) -> int:
        """An operand's limit in elements; an f32 byte counts twice (module docstring)."""
        return self.operand_bytes // max(1, element_bytes) // (2 if element_bytes >= 4 else 1)

    def terms(self, m: T, n: T, k: T, element_bytes: int) -> list[tuple[T, T, int]]:
        """The rule as (a, b, cap) terms: a problem is small when a * b <= cap for each.
        M, N and K may be ints or anything standing for them (a `?` extent's source)."""
        cap = self.operand_elements(element_bytes)
        return [(m, n, self.outputs), (m, k, cap), (n, k, cap)]


DEFAULT_LIMITS = TiledLimits(outputs=1 << 16, operand_bytes=1 << 17)
"""65,536 output elements, 128 KiB an operand (module docstring)."""


def limits() -> TiledLimits:
    """The limits, with the environment's overrides (a ValueError names a bad one)."""
    return TiledLimits(
        outputs=env_int(TILED_ENV[0], DEFAULT_LIMITS.outputs, minimum=0),
        operand_bytes=env_int(TILED_ENV[1], DEFAULT_LIMITS.operand_bytes, minimum=0),
    )


_TILED_TYPES = (BFloat16Type, Float16Type, Float32Type)


def library_op(kernel: alloc.KernelOp) -> fusion.MatmulOp | fusion.LinearOp | None:
    """The one matmul or linear of a library kernel (constants aside), else None."""
    body = [o for o in kernel.body.block.ops if not isinstance(o, alloc.YieldOp | arith.ConstantOp)]
    if kernel.kind.data != "library" or len(body) != 1:
        return None
    op = body[0]
    return op if isinstance(op, fusion.MatmulOp | fusion.LinearOp) else None


def tileable(kernel: alloc.KernelOp) -> LibraryMatmul | None:
    """The kernel's op as a `LibraryMatmul` if the tiled kernel computes it (module docstring)."""
    op = library_op(kernel)
    if op is None or len(kernel.outs) != 1:
        return None
    args = list(kernel.body.block.args)
    if isinstance(op, fusion.MatmulOp):
        operands, ranks = [op.lhs, op.rhs], [2, 2]
    else:
        operands = [op.input, op.weight] + ([op.bias] if op.bias is not None else [])
        ranks = [2, 2, 1][: len(operands)]
    if any(v not in args for v in operands):
        return None
    result = op.results[0].type
    if not isinstance(result, TensorType) or len(result.get_shape()) != 2 or not isinstance(result.encoding, NoneAttr):
        return None  # a sharded matmul (an encoding) stays with the vendor library
    element = result.element_type
    if not isinstance(element, _TILED_TYPES):
        return None
    for v, rank in zip(operands, ranks):
        t = v.type
        if (not isinstance(t, TensorType) or len(t.get_shape()) != rank or t.element_type != element
                or not isinstance(t.encoding, NoneAttr)):
            return None
    index = [args.index(v) for v in operands]
    return LibraryMatmul(op, index[0], index[1], index[2] if len(index) > 2 else None,
                         isinstance(op, fusion.LinearOp))
