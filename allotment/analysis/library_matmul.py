"""Which `library` kernels a generated tiled matmul can compute, and when it should.

A `library` kernel holds one `fusion.matmul` or `fusion.linear`. Through torch, each
is one vendor library call (cuBLAS on a GPU), which costs 15 to 20 us of host time
on an H200 whatever the size (`benchmarks/tiled_matmul.py`): at small sizes that is
most of a fusion's time. A generated Triton kernel of output tiles
(`backend/kernels/tiled_matmul.py`) launches in a few microseconds, so small problems run
tiled, large ones on the vendor library. This module is the one home of both rules:

- `tileable(kernel)`: the kernel's op as a `LibraryMatmul` when the tiled kernel
  computes it (2-D or 3-D operands, at most one batch dim, a 2-D weight and a 1-D bias
  for a linear, every operand and the result of one float type among bf16, f16 and
  f32, nothing sharded), else None;
- `TiledLimits.terms(...)`: the size rule. A problem is small when its output has at
  most `outputs` elements and each operand at most `operand_bytes` bytes (each product
  the element count of a tensor, so nothing overflows 64 bits). `alloc-place`
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
    """A library kernel's matmul or linear, by the kernel inputs it reads: `lhs` [M, K] or
    [B, M, K]; `rhs` [K, N] or [B, K, N] for a matmul, or the weight [N, K] of a linear
    (`weight`); `bias` [N] or None. A batch extent of 1 broadcasts against the other's."""

    op: fusion.MatmulOp | fusion.LinearOp
    lhs: int
    rhs: int
    bias: int | None
    weight: bool
    lhs_rank: int
    rhs_rank: int

    def extent_sources(self) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
        """(kernel input, dim) giving M, N and K."""
        n = (self.rhs, 0) if self.weight else (self.rhs, self.rhs_rank - 1)
        return (self.lhs, self.lhs_rank - 2), n, (self.lhs, self.lhs_rank - 1)

    def batch_sources(self) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """(kernel input, dim) of the lhs's and the rhs's batch extent, None where unbatched."""
        return ((self.lhs, 0) if self.lhs_rank == 3 else None), ((self.rhs, 0) if self.rhs_rank == 3 else None)


T = TypeVar("T")


@dataclass(frozen=True)
class TiledLimits:
    """The size rule (module docstring)."""

    outputs: int
    operand_bytes: int

    def operand_elements(self, element_bytes: int) -> int:
        """An operand's limit in elements; an f32 byte counts twice (module docstring)."""
        return self.operand_bytes // max(1, element_bytes) // (2 if element_bytes >= 4 else 1)

    def terms(self, m: T, n: T, k: T, lhs_batch: T | None, rhs_batch: T | None,
              element_bytes: int) -> list[tuple[list[T], int]]:
        """The rule as (factors, cap) terms: a problem is small when the product of each
        term's factors is at most its cap: the output's elements (B * M * N, B the batch
        of the batched operand, the lhs's where both are), the lhs's (B * M * K) and the
        rhs's (B * N * K). Each product is the element count of a tensor the call holds,
        so it fits 64 bits. The factors may be ints or anything standing for them (a `?`
        extent's source)."""
        cap = self.operand_elements(element_bytes)
        lb = [lhs_batch] if lhs_batch is not None else []
        rb = [rhs_batch] if rhs_batch is not None else []
        return [((lb or rb) + [m, n], self.outputs), (lb + [m, k], cap), (rb + [n, k], cap)]


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
    result = op.results[0].type
    if isinstance(op, fusion.MatmulOp):
        operands = [op.lhs, op.rhs]
        ranks = [len(v.type.get_shape()) if isinstance(v.type, TensorType) else 0 for v in operands]
        if ranks not in ([2, 2], [3, 3], [3, 2], [2, 3]):
            return None  # 1-D operands and more than one batch dim stay with the vendor library
    else:
        operands = [op.input, op.weight] + ([op.bias] if op.bias is not None else [])
        lhs_rank = len(op.input.type.get_shape()) if isinstance(op.input.type, TensorType) else 0
        ranks = [lhs_rank if lhs_rank in (2, 3) else 2, 2, 1][: len(operands)]
    if any(v not in args for v in operands):
        return None
    if (not isinstance(result, TensorType) or len(result.get_shape()) != max(ranks[:2])
            or not isinstance(result.encoding, NoneAttr)):
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
                         isinstance(op, fusion.LinearOp), ranks[0], ranks[1])
