"""Random numbers: `rand` and `randn` (Philox, seeded by operands)."""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from allotment.dialects import fusion_rules as rules
from allotment.dialects.fusion.base import _tensor
from allotment.dialects.fusion.creation import SizedOp
from allotment.dialects.fusion_rules import type_name

# --------------------------------------------------------------------------- #
# Random numbers                                                              #
# --------------------------------------------------------------------------- #


class RandomOp(SizedOp, ABC):
    """A new tensor of random numbers: a pure function of (seed, offset, the element's
    row-major linear index, the result type), the same on every target and in every
    kernel that computes it (blocks, segmentation and recomputation do not matter).

    Each element runs Philox-4x32-10 on the counter (index low 32 bits, index high 32
    bits, offset low, offset high) with the key (seed low, seed high); `seed` and
    `offset` are i64 scalars (two offsets give independent streams). Extents are
    static or `index` values, as `fusion.full`'s. The result's element type is a
    float (f16, bf16, f32, f64); the mapping from Philox's four words to a value is
    on each op. Syntax: `%r = fusion.rand %seed, %offset [%n, 4] : tensor<?x4xf32>`.
    """

    seed = operand_def(i64)
    offset = operand_def(i64)
    assembly_format = (
        "$seed `,` $offset custom<DynamicIndexList>($sizes, $static_sizes) attr-dict `:` type($result)"
    )

    def infer_result_types(self) -> list[Attribute]:
        what = self.name.removeprefix("fusion.")
        for v, role in ((self.seed, "seed"), (self.offset, "offset")):
            if v.type != i64:
                raise VerifyException(f"the {role} must be an i64 scalar, got {type_name(v.type)}")
        et = self.result.type.element_type
        if not rules.is_float(et):
            raise VerifyException(f"{what} produces floating-point elements (f16, bf16, f32, f64), got {type_name(et)}")
        return [_tensor(et, self.extents())]


@irdl_op_definition
class RandOp(RandomOp):
    """Uniform random numbers in [0, 1) (`torch.rand`), exactly representable: from
    Philox's first word w0 (and second w1 for f64), f32 is `(w0 >> 8) * 2^-24`, f64
    `((w0 << 21) | (w1 >> 11)) * 2^-53`, f16 `(w0 >> 21) * 2^-11`, bf16 `(w0 >> 24) * 2^-8`.
    Bit-identical on every target."""

    name = "fusion.rand"


@irdl_op_definition
class RandnOp(RandomOp):
    """Standard normal random numbers (`torch.randn`) by Box-Muller in f64:
    `sqrt(-2 log u1) * cos(2 pi u2)` with u1 in (0, 1] from Philox's words 0 and 1
    (`(53 bits + 1) * 2^-53`) and u2 in [0, 1) from words 2 and 3 (53 bits * 2^-53),
    then rounded to the result type (16-bit types through f32). Targets differ only
    where their f64 log and cos differ (an f64 ulp or two: for f32 and narrower
    results, the same value except in rare double-rounding cases)."""

    name = "fusion.randn"
