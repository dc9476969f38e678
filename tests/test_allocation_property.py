"""Property: the allocation pass's sizes are the shapes the reference evaluator produces.

For random fusions and random concrete input shapes: `fusion-segment` +
`fusion-allocate` + size evaluation (no kernel, no allocation) must give every
global buffer exactly the shape of the tensor it holds, as computed by the
reference evaluator on random inputs of those shapes; each on-chip row buffer
must hold exactly the reduced row of its reduction's input; and the allocated
function's view casts and checks must accept those shapes.
"""

from __future__ import annotations

import math
import os
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_fusion import random_fusion
from xdsl.dialects import func
from xdsl.dialects.builtin import i8

from allotment.allocation import plan_buffers
from allotment.analysis import inner_outer, split_reduction
from allotment.extents.symbolic import Const
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate, random_inputs

EXAMPLES = int(os.environ.get("ALLOT_PROPERTY_EXAMPLES", "500"))


def reference_shapes(text: str, shapes: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """Shape of every named tensor value, from the reference evaluator.

    The function is evaluated with every tensor value it defines returned, so
    that the intermediates' shapes are observed, not predicted.
    """
    module = parse_module(text)
    f = find_function(module)
    block = f.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    values = [r for op in block.ops for r in op.results if r.name_hint and r.name_hint.startswith("v")]
    ret.operands = values
    f.function_type = func.FunctionType.from_lists([a.type for a in block.args], [v.type for v in values])
    outputs = evaluate(f, random_inputs(f, shapes, seed=0))
    return {v.name_hint: tuple(t.shape) for v, t in zip(values, outputs)}


def check_fusion(seed: int) -> None:
    text, shapes, names = random_fusion(random.Random(seed))
    expected = reference_shapes(text, shapes)
    buffers = plan_buffers(text, shapes)
    for b in buffers:
        if b.memory in ("global", "arena") and "_partials_" in b.name:
            # <kernel>_partials_<reduction result>: [split, kept] partials of a reduction split across CTAs
            # (a var_mean's two are named after its mean and its var)
            reduction = b.name.split("_partials_", 1)[1]
            op = next(o for o in parse_module(text).walk() if any(r.name_hint == reduction for r in o.results))
            src_shape = expected.get(op.operands[0].name_hint) or shapes[op.operands[0].name_hint]
            dims = set(op.reduced_dims())
            kept = math.prod(e for d, e in enumerate(src_shape) if d not in dims)
            count = split_reduction.count_for(op, Const(math.prod(src_shape[d] for d in dims)), Const(kept))
            # a reduction split across CTAs: [split, kept] ([1, 0] for an inner split's unused partials)
            shapes_ok = {(count.value, split_reduction.partials_kept(op, count, Const(kept)).value)}
            if inner_outer.is_column_reduction(op, len(src_shape)):  # an inner-outer kernel's: [programs, N]
                shapes_ok.add((inner_outer.program_count(Const(math.prod(src_shape[:-1]))).value, src_shape[-1]))
            assert b.shape in shapes_ok, f"seed {seed}: partials {b.name} planned {b.shape}\n{text}"
        elif "_acc_" in b.name:
            # <kernel>_acc_<column reduction result>: an inner-outer kernel's on-chip accumulator [N]
            reduction = b.name.split("_acc_", 1)[1]
            op = next(o for o in parse_module(text).walk() if any(r.name_hint == reduction for r in o.results))
            src_shape = expected.get(op.operands[0].name_hint) or shapes[op.operands[0].name_hint]
            assert b.memory == "local" and b.shape == (src_shape[-1],), (
                f"seed {seed}: accumulator {b.name} planned {b.memory} {b.shape}\n{text}"
            )
        elif b.memory == "global" and b.element_type == i8:
            continue  # an arena (alloc-plan): its slots are checked as the buffers below
        elif b.memory in ("global", "arena", "reused"):  # reused: a tensor written into a dead one's buffer
            copied = re.fullmatch(r"(.*)_contiguous(_\d+)?", b.name)
            if copied:  # the copy fusion-segment makes before a reshape (one per reshape: `_contiguous_1`, ...)
                b = type(b)(copied.group(1), *list(b.__dict__.values())[1:])
            assert b.name in expected, f"seed {seed}: buffer {b.name} holds no named tensor\n{text}"
            assert b.shape == expected[b.name], (
                f"seed {seed}: buffer {b.name} planned {b.shape}, reference {expected[b.name]}\n{text}"
            )
        else:
            # <kernel>_row_<reduction result>: one reduced row of the reduction's input
            reduction = b.name.split("_row_", 1)[1]
            op = next(o for o in parse_module(text).walk() if any(r.name_hint == reduction for r in o.results))
            src_shape = expected.get(op.operands[0].name_hint) or shapes[op.operands[0].name_hint]
            rank = len(src_shape)
            dims = {d + rank if d < 0 else d for d in op.dims.get_values()}
            assert b.shape == (math.prod(src_shape[d] for d in dims),), f"seed {seed}: row buffer {b.name}\n{text}"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_planned_sizes_match_reference(seed: int) -> None:
    check_fusion(seed)


@pytest.mark.parametrize("seed", range(20))
def test_planned_sizes_fixed_seeds(seed: int) -> None:
    check_fusion(seed)
