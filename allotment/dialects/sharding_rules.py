"""How shardings flow through fusion ops: the one home of the agreement rules.

A tensor's sharding is its `#fusion.sharding` encoding, or none: a tensor
without an encoding lives whole on every rank of the process group (it is
"everywhere"). For every fusion op (except `fusion.set`, the one op whose
result may be sharded differently from its input: a resharding) each
dimension of each tensor operand is related to the result by `operand_dims`:

- `int d`: the operand dimension is result dimension `d` and must be split
  exactly as `d` is (elementwise ops, cast, where, the kept dims of
  reductions, views that keep a dimension, matmul's M and N, linear's out);
- `REPLICATED`: the dimension must not be split (a size-1 dimension that
  broadcasts, a squeezed, sliced, padded or concatenated dimension, every
  dimension of a reshape);
- `Contracted(k)`: the dimension is reduced away (a reduction's dims, the
  contraction dim K of matmul and linear); it may be split, and the operands
  sharing contraction `k` must split it alike. A contraction over split axes
  leaves a partial result, which `fusion-insert-resharding` completes with a
  `comm.all_reduce` (or `comm.reduce_scatter`).

All tensors of an op are on one mesh. `infer_result` gives the result's
sharding from the operands (the first sharded operand, in operand order,
decides: the documented conflict rule), `required_operand` what an operand
must be given the result's sharding. `op_sharding_problem` is the verifier's
check: it compares only tensors that carry a sharding, so IR before
`fusion-propagate-sharding` (unannotated intermediates) verifies, and after
it (every tensor of a sharded op annotated) every operand agrees with its op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Operation

from allotment.dialects import fusion
from allotment.extents.dims import dim_set, normalize_dim


@dataclass(frozen=True)
class Contracted:
    """An operand dimension reduced away by contraction `k` of its op."""

    k: int


class _Replicated:
    def __repr__(self) -> str:
        return "REPLICATED"


REPLICATED = _Replicated()
"""An operand dimension that must not be split."""

DimRule = int | Contracted | _Replicated
Axes = tuple[int, ...] | None
"""The mesh axes a dimension must be split over; None: any (a contraction decides)."""


@dataclass(frozen=True)
class Requirement:
    """What an operand's sharding must be: its mesh, axes per dim (None: free), unevenness."""

    mesh: str
    axes: tuple[Axes, ...]
    uneven: bool | None
    """None: either (no dim mapped to a result dim is split)."""

    def accepts(self, s: fusion.ShardingAttr) -> bool:
        if s.mesh.root_reference.data != self.mesh or len(s.axes) != len(self.axes):
            return False
        for want, got in zip(self.axes, s.axes):
            if want is not None and tuple(got) != want:
                return False
        return self.uneven is None or not any(s.axes) or s.allows_uneven == self.uneven

    def sharding(self) -> fusion.ShardingAttr:
        """The requirement as a sharding (free dims replicated)."""
        return make(self.mesh, [list(a or ()) for a in self.axes], bool(self.uneven))

    def __str__(self) -> str:
        dims = ", ".join("*" if a is None else "[" + ", ".join(map(str, a)) + "]" for a in self.axes)
        return f"<@{self.mesh}, [{dims}]{', uneven' if self.uneven else ''}>"


def sharding_of(t: Attribute) -> fusion.ShardingAttr | None:
    """The sharding of a tensor type (None: unannotated, or not a tensor)."""
    enc = t.encoding if isinstance(t, TensorType) else None
    return enc if isinstance(enc, fusion.ShardingAttr) else None


def show(s: fusion.ShardingAttr | None) -> str:
    """`<@tp, [[0], []]>`, or `unsharded` (whole on every rank)."""
    if s is None:
        return "unsharded"
    dims = ", ".join("[" + ", ".join(map(str, d)) + "]" for d in s.axes)
    return f"<@{s.mesh.root_reference.data}, [{dims}]{', uneven' if s.allows_uneven else ''}>"


def is_split(s: fusion.ShardingAttr | None) -> bool:
    return s is not None and any(s.axes)


def make(mesh: str, axes: Sequence[Sequence[int]], uneven: bool) -> fusion.ShardingAttr:
    """A sharding, `uneven` kept only where some dim is split (it means nothing otherwise)."""
    return fusion.ShardingAttr(mesh, [list(a) for a in axes], uneven and any(axes))


def equivalent(a: fusion.ShardingAttr | None, b: fusion.ShardingAttr | None) -> bool:
    """Whether two shardings place the same elements on the same devices."""
    if a is None or b is None:
        return a is b
    return a.mesh == b.mesh and a.axes == b.axes and (a.allows_uneven == b.allows_uneven or not any(a.axes))


def replicated(mesh: str, rank: int) -> fusion.ShardingAttr:
    """Whole on every device of `mesh`."""
    return fusion.ShardingAttr(mesh, [[] for _ in range(rank)])


def with_sharding(t: TensorType, s: fusion.ShardingAttr | None) -> TensorType:
    """`t` with encoding `s` (none when `s` is None)."""
    if s is None:
        return TensorType(t.element_type, t.get_shape())
    return TensorType(t.element_type, t.get_shape(), s)


# --------------------------------------------------------------------------- #
# Dimension maps                                                              #
# --------------------------------------------------------------------------- #


def _shape(v: object) -> tuple[int, ...]:
    t = v.type  # type: ignore[attr-defined]
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def _same_dims(in_shape: Sequence[int], out_shape: Sequence[int]) -> list[DimRule]:
    """Dim d -> d, except a static size-1 dim that broadcasts to another extent."""
    return [
        REPLICATED if e == 1 and o != 1 else d
        for d, (e, o) in enumerate(zip(in_shape, out_shape))
    ]


def _reduction(rank: int, dims: Sequence[int], keepdim: bool) -> list[DimRule]:
    reduced = dim_set(dims, rank)
    out: list[DimRule] = []
    kept = 0
    for d in range(rank):
        if d in reduced:
            out.append(Contracted(reduced.index(d)))
            if keepdim:
                kept += 1
        else:
            out.append(kept)
            kept += 1
    return out


def _matmul(op: fusion.MatmulOp) -> list[list[DimRule]]:
    a, b = _shape(op.lhs), _shape(op.rhs)
    r = len(_shape(op.result))
    k = Contracted(0)
    if len(a) == 1 and len(b) == 1:
        return [[k], [k]]
    if len(b) == 1:
        return [list(range(len(a) - 1)) + [k], [k]]
    if len(a) == 1:
        return [[k], list(range(len(b) - 2)) + [k, r - 1]]
    out_batch = _shape(op.result)[: r - 2]

    def batch(s: Sequence[int]) -> list[DimRule]:
        lead = r - 2 - (len(s) - 2)
        return [
            REPLICATED if e == 1 and out_batch[lead + i] != 1 else lead + i
            for i, e in enumerate(s[:-2])
        ]

    return [batch(a) + [r - 2, k], batch(b) + [k, r - 1]]


def _linear(op: fusion.LinearOp) -> list[list[DimRule]]:
    x, w = _shape(op.input), _shape(op.weight)
    k = Contracted(0)
    rules: list[list[DimRule]] = [list(range(len(x) - 1)) + [k]]
    r = len(_shape(op.result))
    rules.append([r - 1, k] if len(w) == 2 else [k])
    if op.bias is not None:
        rules.append([r - 1] if len(_shape(op.bias)) == 1 else [])
    return rules


def _slice(op: fusion.SliceOp) -> list[DimRule]:
    shape = _shape(op.input)
    starts, stops, steps = (op.static_start.get_values(), op.static_stop.get_values(),
                            op.static_step.get_values())
    return [
        d if (start == 0 and step == 1 and stop == e and e != DYNAMIC_INDEX) else REPLICATED
        for d, (e, start, stop, step) in enumerate(zip(shape, starts, stops, steps))
    ]


def operand_dims(op: Operation) -> list[list[DimRule]] | None:
    """For each operand (scalars: an empty list), how its dims relate to result 0's;
    None for an op whose shardings are free (`fusion.set`) or that has no tensors."""
    if isinstance(op, fusion.SetOp):
        return None
    out_shape = _shape(op.results[0]) if op.results else ()
    if isinstance(op, fusion.ElementwiseOp | fusion.CastOp):
        return [_same_dims(_shape(v), out_shape) if isinstance(v.type, TensorType) else [] for v in op.operands]
    if isinstance(op, fusion.ReductionOp | fusion.VarMeanOp | fusion.WelfordOp):
        rank = len(_shape(op.operands[0]))
        return [_reduction(rank, list(op.dims.get_values()), op.keepdim is not None)]
    if isinstance(op, fusion.BroadcastInDimOp):
        in_shape = _shape(op.input)
        dims = list(op.broadcast_dims.get_values())
        return [[REPLICATED if e == 1 and out_shape[dims[s]] != 1 else dims[s] for s, e in enumerate(in_shape)]]
    if isinstance(op, fusion.ExpandOp):
        return [_same_dims(_shape(op.input), out_shape)]
    if isinstance(op, fusion.PermuteOp):
        rank = len(out_shape)
        perm = [normalize_dim(d, rank) for d in op.dims.get_values()]
        rule: list[DimRule] = [0] * rank
        for i, p in enumerate(perm):
            rule[p] = i
        return [rule]
    if isinstance(op, fusion.SqueezeOp):
        rank = len(_shape(op.input))
        dropped = set(dim_set(op.dims.get_values(), rank))
        rule, kept = [], 0
        for d in range(rank):
            if d in dropped:
                rule.append(REPLICATED)
            else:
                rule.append(kept)
                kept += 1
        return [rule]
    if isinstance(op, fusion.ReshapeOp):
        return [[REPLICATED] * len(_shape(op.input))] + [[] for _ in op.operands[1:]]
    if isinstance(op, fusion.SliceOp):
        return [_slice(op)] + [[] for _ in op.operands[1:]]
    if isinstance(op, fusion.PadOp):
        lows, highs = op.low.get_values(), op.high.get_values()
        return [[d if lo == 0 and hi == 0 else REPLICATED for d, (lo, hi) in enumerate(zip(lows, highs))]] + [
            [] for _ in op.operands[1:]
        ]
    if isinstance(op, fusion.CatOp):
        rank = len(out_shape)
        dim = op.dim.value.data if hasattr(op.dim, "value") else int(op.dim.data)
        dim = normalize_dim(dim, rank)
        return [[REPLICATED if d == dim else d for d in range(rank)] for _ in op.operands]
    if isinstance(op, fusion.MatmulOp):
        return _matmul(op)
    if isinstance(op, fusion.LinearOp):
        return _linear(op)
    if isinstance(op, fusion.FullOp | fusion.IotaOp | fusion.RandomOp):
        return [[] for _ in op.operands]
    return None


# --------------------------------------------------------------------------- #
# Inference and requirements                                                  #
# --------------------------------------------------------------------------- #


def lead_operand(op: Operation) -> int | None:
    """The operand whose sharding decides the op's (the first sharded tensor operand)."""
    for i, v in enumerate(op.operands):
        if sharding_of(v.type) is not None:
            return i
    return None


def contraction_axes(op: Operation, rules: list[list[DimRule]]) -> dict[int, tuple[int, ...]]:
    """The axes each contraction is split over, from the first sharded operand that has it."""
    out: dict[int, tuple[int, ...]] = {}
    for v, rule in zip(op.operands, rules):
        s = sharding_of(v.type)
        if s is None:
            continue
        for r, axes in zip(rule, s.axes):
            if isinstance(r, Contracted) and r.k not in out:
                out[r.k] = tuple(axes)
    return out


def infer_result(op: Operation) -> fusion.ShardingAttr | None:
    """Result 0's sharding implied by the operands: the first sharded operand's mesh
    and unevenness; each result dim split as the first sharded operand mapping to
    it is; dims no sharded operand maps to are replicated. None if no operand is sharded."""
    rules = operand_dims(op)
    lead = lead_operand(op)
    if rules is None or lead is None:
        return None
    lead_s = sharding_of(op.operands[lead].type)
    assert lead_s is not None
    mesh = lead_s.mesh.root_reference.data
    rank = len(_shape(op.results[0]))
    axes: list[list[int] | None] = [None] * rank
    for v, rule in zip(op.operands, rules):
        s = sharding_of(v.type)
        if s is None or s.mesh.root_reference.data != mesh:
            continue
        for r, a in zip(rule, s.axes):
            if isinstance(r, int) and axes[r] is None:
                axes[r] = list(a)
    filled = [a if a is not None else [] for a in axes]
    used: set[int] = set()
    for d, a in enumerate(filled):  # a mesh axis splits one dim: later dims give it up
        if used & set(a):
            filled[d] = []
        used |= set(a)
    partial = {a for axes_k in contraction_axes(op, rules).values() for a in axes_k}
    filled = [[] if set(a) & partial else a for a in filled]
    return make(mesh, filled, lead_s.allows_uneven)


def required_operand(
    op: Operation, i: int, result: fusion.ShardingAttr, contractions: dict[int, tuple[int, ...]]
) -> Requirement | None:
    """What operand `i` must be, given the result's sharding and the contractions' axes
    (None for a scalar operand)."""
    rules = operand_dims(op)
    if rules is None or not isinstance(op.operands[i].type, TensorType):
        return None
    axes: list[Axes] = []
    mapped_split = False
    for r in rules[i]:
        if isinstance(r, int):
            axes.append(tuple(result.axes[r]))
            mapped_split = mapped_split or bool(result.axes[r])
        elif isinstance(r, Contracted):
            axes.append(contractions.get(r.k))
        else:
            axes.append(())
    uneven = result.allows_uneven if mapped_split else None
    return Requirement(result.mesh.root_reference.data, tuple(axes), uneven)


def op_sharding_problem(op: Operation) -> str | None:
    """Why the sharded tensors of `op` disagree (None if they agree).

    Only tensors that carry a sharding are compared: the result's declared sharding
    (else the one the operands imply) fixes what every sharded operand must be."""
    rules = operand_dims(op)
    if rules is None:
        return None
    declared = [sharding_of(r.type) for r in op.results]
    result = next((s for s in declared if s is not None), None) or infer_result(op)
    if result is None:
        return None
    if isinstance(op, fusion.IotaOp) and is_split(result):
        return "fusion.iota cannot produce a split tensor (every shard would count from 0); reshard its result"
    if isinstance(op, fusion.RandomOp) and is_split(result):
        return (f"{op.name} cannot produce a split tensor (every shard would draw the first shard's numbers); "
                "reshard its result")
    for j, s in enumerate(declared):
        if s is not None and not equivalent(s, result):
            return f"result #{j} is sharded {show(s)} but result #0 {show(result)}"
    contractions = contraction_axes(op, rules)
    for i, v in enumerate(op.operands):
        s = sharding_of(v.type)
        if s is None:
            continue
        req = required_operand(op, i, result, contractions)
        if req is not None and not req.accepts(s):
            return (
                f"operand #{i} is sharded {show(s)}, but the result sharded {show(result)} needs {req}; "
                "reshard the operand with fusion.set"
            )
    return None


fusion.register_sharding_check(op_sharding_problem)
