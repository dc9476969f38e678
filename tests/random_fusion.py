"""Random valid fusions with concrete input shapes, for property tests.

`random_fusion(rng)` builds a `func.func` with the fusion dialect's Python
builders (each op infers its result type, so every generated op is valid) and
returns its text, the concrete shape of every argument, and the names of the
tensor values it defines. Extents are tracked as (static value) or (dynamic
identity, concrete value): elementwise operands are only combined when their
extents are equal by construction or a static 1, as the dialect requires.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    bf16,
    f16,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.printer import Printer

from allotment.dialects import fusion

FLOATS = (f32, f16, bf16)


@dataclass(frozen=True)
class Dim:
    """An extent: its concrete value, and an identity when it is dynamic."""

    value: int
    ident: int | None  # None: static

    @property
    def static(self) -> bool:
        return self.ident is None


@dataclass
class Builder:
    rng: random.Random
    block: Block
    values: list[tuple[SSAValue, list[Dim]]] = field(default_factory=list)
    next_ident: int = 0
    count: int = 0
    patterns: bool = False  # also rotary embeddings and reductions split across CTAs (`random_fusion`)

    def new_dim(self, value: int) -> Dim:
        self.next_ident += 1
        return Dim(value, self.next_ident)

    def add(self, op: Operation, dims: list[list[Dim]] | None = None) -> Operation:
        self.block.add_op(op)
        for i, r in enumerate(op.results):
            if isinstance(r.type, TensorType):
                r.name_hint = f"v{self.count}"
                self.count += 1
                if dims is not None:
                    self.values.append((r, self.sync(r, dims[i])))
        return op

    def sync(self, v: SSAValue, dims: list[Dim]) -> list[Dim]:
        """Static extents of the inferred type win over the model."""
        shape = v.type.get_shape()
        assert len(shape) == len(dims), (shape, dims)
        out = []
        for e, d in zip(shape, dims):
            if e != DYNAMIC_INDEX:
                assert e == d.value, (shape, dims)
                out.append(Dim(e, None))
            else:
                out.append(d if not d.static else self.new_dim(d.value))
        return out

    def const_index(self, n: int) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(n, IndexType()))
        self.block.add_op(op)
        return op.result

    def extent(self, value: SSAValue, d: int) -> SSAValue:
        op = tensor.DimOp(value, self.const_index(d))
        self.block.add_op(op)
        return op.result

    def scalar(self) -> SSAValue:
        op = arith.ConstantOp(FloatAttr(round(self.rng.uniform(-2, 2), 2), f32))
        self.block.add_op(op)
        return op.result


def infer(op: Operation) -> Operation:
    fusion.retype_results(op)
    return op


def build(cls: type, operands: list, props: dict | None = None, placeholder: Attribute | None = None, n: int = 1) -> Operation:
    from xdsl.irdl import IRDLOperation

    ph = placeholder or TensorType(f32, [])
    op = cls.__new__(cls)
    IRDLOperation.__init__(op, operands=operands, result_types=[ph] * n, properties=props or {})
    return infer(op)


def ints(values: list[int]) -> Attribute:
    return fusion.int_list(values)


def shape_list(b: Builder, like: SSAValue, dims: list[Dim]) -> tuple[list[SSAValue], list[int]]:
    """Static extents and `tensor.dim` values reproducing the extents of `like`."""
    dynamic, static = [], []
    for d, dim in enumerate(dims):
        if dim.static:
            static.append(dim.value)
        else:
            static.append(DYNAMIC_INDEX)
            dynamic.append(b.extent(like, d))
    return dynamic, static


def same(x: Dim, y: Dim) -> bool:
    return x.static == y.static and (x.value == y.value if x.static else x.ident == y.ident)


def compatible(a: list[Dim], c: list[Dim]) -> bool:
    if len(a) != len(c):
        return False
    for x, y in zip(a, c):
        if x.static and x.value == 1 or y.static and y.value == 1:
            continue
        if x.static != y.static or (x.static and x.value != y.value) or (not x.static and x.ident != y.ident):
            return False
    return True


def pick(b: Builder, pred=lambda v, d: True) -> tuple[SSAValue, list[Dim]] | None:
    choices = [(v, d) for v, d in b.values if pred(v, d)]
    return b.rng.choice(choices) if choices else None


def _float_input(b: Builder, v: SSAValue, dims: list[Dim]) -> tuple[SSAValue, list[Dim]]:
    return v, dims


def step(b: Builder) -> None:
    rng = b.rng
    v, dims = rng.choice(b.values[-6:] if rng.random() < 0.7 else b.values)
    rank = len(dims)
    kind = rng.choice(
        ["unary", "binary", "binary", "scalar", "cast", "reduce", "reduce", "broadcast", "permute",
         "slice", "reshape", "pad", "cat", "expand_squeeze", "full", "matmul", "linear"]
        + (["rotary", "rotary", "split_reduce", "split_reduce"] if b.patterns else [])
    )
    if kind == "unary":
        cls = rng.choice([fusion.ExpOp, fusion.NegOp, fusion.AbsOp, fusion.TanhOp, fusion.SigmoidOp, fusion.ReluOp, fusion.SinOp])
        b.add(cls(v), [dims])
    elif kind == "binary":
        other = pick(b, lambda w, d: compatible(d, dims) and w.type.element_type == v.type.element_type)
        if other is None:
            return
        cls = rng.choice([fusion.AddOp, fusion.SubOp, fusion.MulOp, fusion.MaximumOp])
        w, wd = other
        out = [x if not (x.static and x.value == 1) else y for x, y in zip(dims, wd)]
        a, c = (v, w) if rng.random() < 0.5 else (w, v)
        b.add(cls(a, c), [out])
    elif kind == "scalar":
        b.add(fusion.MulOp(v, b.scalar()), [dims])
    elif kind == "cast":
        target = rng.choice([t for t in FLOATS if t != v.type.element_type])
        b.add(fusion.CastOp(v, target), [dims])
    elif kind == "reduce" and rank >= 1:
        k = rng.randint(1, rank)
        rdims = sorted(rng.sample(range(rank), k))
        keep = rng.random() < 0.6
        out = [Dim(1, None) if d in rdims else x for d, x in enumerate(dims)] if keep else [x for d, x in enumerate(dims) if d not in rdims]
        props = {"dims": ints(rdims)}
        if keep:
            from xdsl.dialects.builtin import UnitAttr

            props["keepdim"] = UnitAttr()
        if rng.random() < 0.2 and rank >= 1:
            props["correction"] = IntegerAttr(rng.randint(0, 1), i64)
            op = build(fusion.VarMeanOp, [v], props, n=2)
            b.add(op, [out, out])
        else:
            cls = rng.choice([fusion.SumOp, fusion.MaxOp, fusion.MeanOp])
            b.add(build(cls, [v], props, placeholder=TensorType(v.type.element_type, [])), [out])
    elif kind == "broadcast":
        target = pick(b, lambda w, d: len(d) > rank and len(d) <= 4)
        if target is None:
            return
        w, wd = target
        positions = sorted(rng.sample(range(len(wd)), rank))
        # the input's dims must equal (or be static 1 for) the target's dims at those positions
        if not all(dims[i].static and dims[i].value == 1 or same(dims[i], wd[p]) for i, p in enumerate(positions)):
            return
        dyn, static = shape_list(b, w, wd)
        op = build(fusion.BroadcastInDimOp, [v, dyn], {"static_shape": ints(static), "broadcast_dims": ints(positions)},
                   placeholder=TensorType(v.type.element_type, []))
        b.add(op, [wd])
    elif kind == "permute" and rank >= 2:
        perm = list(range(rank))
        rng.shuffle(perm)
        b.add(build(fusion.PermuteOp, [v], {"dims": ints(perm)}), [[dims[p] for p in perm]])
    elif kind == "slice" and rank >= 1:
        d = rng.randrange(rank)
        size = dims[d].value
        start = rng.randint(0, max(0, size - 1))
        stop = rng.randint(start + 1, size + 2)
        st = rng.randint(1, 2)
        starts, stops, steps = [0] * rank, [x.value + (0 if x.static else 7) for x in dims], [1] * rank
        # a dynamic dim keeps its extent when sliced [0:huge:1] (clamped)
        starts[d], stops[d], steps[d] = start, stop, st
        new = -(-(min(stop, size) - min(start, size)) // st)
        out = list(dims)
        out[d] = Dim(new, None) if dims[d].static else b.new_dim(new)
        for e, x in enumerate(dims):
            if e != d and not x.static:
                out[e] = b.new_dim(x.value)  # clamping makes a new symbol
        props = {
            "static_start": ints(starts), "static_stop": ints(stops), "static_step": ints(steps),
        }
        b.add(build(fusion.SliceOp, [v, [], [], []], props), [out])
    elif kind == "reshape" and rank >= 1:
        numel = 1
        for x in dims:
            numel *= x.value
        if rank >= 2 or rng.random() < 0.5:
            out = [b.new_dim(numel)] if any(not x.static for x in dims) else [Dim(numel, None)]
            b.add(build(fusion.ReshapeOp, [v, []], {"static_shape": ints([-1])}), [out])
        else:
            b.add(build(fusion.ReshapeOp, [v, []], {"static_shape": ints([1, -1])}),
                  [[Dim(1, None), b.new_dim(numel) if not dims[0].static else Dim(numel, None)]])
    elif kind == "pad" and rank >= 1:
        low = [rng.randint(0, 2) for _ in dims]
        high = [rng.randint(0, 2) for _ in dims]
        out = [Dim(x.value + lo + hi, None) if x.static else b.new_dim(x.value + lo + hi) for x, lo, hi in zip(dims, low, high)]
        b.add(build(fusion.PadOp, [v, b.scalar(), [], []], {"low": ints(low), "high": ints(high)}), [out])
    elif kind == "cat" and rank >= 1:
        d = rng.randrange(rank)
        other = pick(b, lambda w, wd: len(wd) == rank and w.type.element_type == v.type.element_type and all(
            e == d or (x.static == y.static and (x.value == y.value if x.static else x.ident == y.ident)) for e, (x, y) in enumerate(zip(dims, wd))))
        if other is None:
            return
        w, wd = other
        out = list(dims)
        total = dims[d].value + wd[d].value
        out[d] = Dim(total, None) if dims[d].static and wd[d].static else b.new_dim(total)
        b.add(build(fusion.CatOp, [[v, w]], {"dim": IntegerAttr(d, i64)}, placeholder=TensorType(v.type.element_type, [])), [out])
    elif kind == "expand_squeeze" and rank >= 1:
        ones = [d for d, x in enumerate(dims) if x.static and x.value == 1]
        if not ones:
            return
        if rng.random() < 0.5:
            d = rng.choice(ones)
            b.add(build(fusion.SqueezeOp, [v], {"dims": ints([d])}), [[x for e, x in enumerate(dims) if e != d]])
        else:
            target = pick(b, lambda w, wd: len(wd) == rank and compatible(wd, dims))
            if target is None:
                return
            w, wd = target
            out = [y if (x.static and x.value == 1) else x for x, y in zip(dims, wd)]
            dyn, static = shape_list(b, w, [y if (x.static and x.value == 1) else x for x, y in zip(dims, wd)])
            # dynamic entries must come from a value that has them: use w for all dims
            dyn, static = shape_list(b, w, wd)
            if not all((x.static and x.value == 1) or same(x, y) for x, y in zip(dims, wd)):
                return
            b.add(build(fusion.ExpandOp, [v, dyn], {"static_shape": ints(static)}), [wd if True else out])
    elif kind == "full":
        dyn, static = shape_list(b, v, dims)
        op = build(fusion.FullOp, [b.scalar(), dyn], {"static_sizes": ints(static)}, placeholder=TensorType(v.type.element_type, []))
        b.add(op, [dims])
    elif kind == "rotary" and rank >= 1 and dims[-1].value >= 2:
        rotary(b, v, dims)
    elif kind == "split_reduce" and 1 <= rank <= 2:
        split_reduce(b, v, dims)
    elif kind == "matmul" and rank == 2:
        t = build(fusion.PermuteOp, [v], {"dims": ints([1, 0])})
        b.add(t, [[dims[1], dims[0]]])
        b.add(fusion.MatmulOp(v, t.results[0]), [[dims[0], dims[0]]])
    elif kind == "linear" and rank >= 1:
        weight = pick(b, lambda w, wd: len(wd) == 2 and w.type.element_type == v.type.element_type and compatible([wd[1]], [dims[-1]]) and not (wd[1].static and wd[1].value == 1 and not (dims[-1].static and dims[-1].value == 1)))
        if weight is None:
            return
        w, wd = weight
        if not (wd[1].static == dims[-1].static and (wd[1].value == dims[-1].value if wd[1].static else wd[1].ident == dims[-1].ident)):
            return
        b.add(build(fusion.LinearOp, [v, w, []], {}), [list(dims[:-1]) + [wd[0]]])


def rotary(b: Builder, v: SSAValue, dims: list[Dim]) -> None:
    """cat(-x2, x1) of the halves x1, x2 of v's last dim (bounds from `tensor.dim` when it is
    dynamic), times v when the extents allow: a rotary embedding's shape."""
    rank, last = len(dims), dims[-1]
    if last.static:
        mid: SSAValue | int = last.value // 2
        end: SSAValue | int = last.value
    else:
        end = b.extent(v, rank - 1)
        half = arith.DivUIOp(end, b.const_index(2))
        b.block.add_op(half)
        mid = half.result
    full = [x.value + (0 if x.static else 7) for x in dims]

    def piece(lo: SSAValue | int, hi: SSAValue | int, extent: int) -> SSAValue:
        starts, stops = [0] * rank, list(full)
        dyn_start = [lo] if isinstance(lo, SSAValue) else []
        dyn_stop = [hi] if isinstance(hi, SSAValue) else []
        starts[-1] = DYNAMIC_INDEX if dyn_start else lo
        stops[-1] = DYNAMIC_INDEX if dyn_stop else hi
        props = {"static_start": ints(starts), "static_stop": ints(stops), "static_step": ints([1] * rank)}
        out = [x if x.static else b.new_dim(x.value) for x in dims[:-1]]
        out.append(Dim(extent, None) if last.static else b.new_dim(extent))
        return b.add(build(fusion.SliceOp, [v, dyn_start, dyn_stop, []], props), [out]).results[0]

    h = last.value // 2
    x1 = piece(0, mid, h)
    x2 = piece(mid, end, last.value - h)
    n = b.add(fusion.NegOp(x2), [b.values[-1][1]]).results[0]
    out = [x if x.static else b.new_dim(x.value) for x in dims[:-1]]
    out.append(Dim(last.value, None) if last.static else b.new_dim(last.value))
    rot = b.add(build(fusion.CatOp, [[n, x1]], {"dim": IntegerAttr(rank - 1, i64)},
                      placeholder=TensorType(v.type.element_type, [])), [out]).results[0]
    if all(x.static for x in dims):
        b.add(fusion.MulOp(rot, v), [dims])


def split_reduce(b: Builder, v: SSAValue, dims: list[Dim]) -> None:
    """A sum, mean or max over a broadcast outer dim of a few hundred rows (dim 0 only, or
    every dim): long enough that the reduction is split across CTAs."""
    big = b.rng.choice([257, 300, 513])
    dyn, static = shape_list(b, v, dims)
    wide = build(fusion.BroadcastInDimOp, [v, dyn], {"static_shape": ints([big, *static]),
                 "broadcast_dims": ints(list(range(1, len(dims) + 1)))}, placeholder=TensorType(v.type.element_type, []))
    w = b.add(wide, [[Dim(big, None), *dims]]).results[0]
    w = b.add(fusion.SinOp(w), [b.values[-1][1]]).results[0]  # computed in the reducing kernel
    rdims = [0] if b.rng.random() < 0.6 else list(range(len(dims) + 1))
    cls = b.rng.choice([fusion.SumOp, fusion.MeanOp, fusion.MaxOp])
    out = list(dims) if rdims == [0] else []
    b.add(build(cls, [w], {"dims": ints(rdims)}, placeholder=TensorType(v.type.element_type, [])), [out])


def _segments(sizes: list[int]) -> Attribute:
    from xdsl.dialects.builtin import DenseArrayBase, i32

    return DenseArrayBase.from_list(i32, sizes)


def random_fusion(
    rng: random.Random, max_ops: int = 12, patterns: bool = False
) -> tuple[str, dict[str, tuple[int, ...]], list[str]]:
    """(fusion text, argument shapes by name, names of the defined tensor values). With
    `patterns`, steps also build rotary embeddings and reductions split across CTAs (the
    fusions of a seed without it are unchanged)."""
    arg_types: list[Attribute] = []
    arg_dims: list[list[Dim]] = []
    ident = 0
    shared: list[Dim] = []
    for _ in range(rng.randint(1, 3)):
        rank = rng.randint(1, 3)
        dims = []
        for _ in range(rank):
            if shared and rng.random() < 0.5:
                dims.append(rng.choice(shared))
                continue
            value = rng.randint(1, 5)
            if rng.random() < 0.5:
                ident += 1
                dim = Dim(value, ident)
                shared.append(dim)
            else:
                dim = Dim(value, None)
            dims.append(dim)
        arg_types.append(TensorType(rng.choice(FLOATS), [DYNAMIC_INDEX if not x.static else x.value for x in dims]))
        arg_dims.append(dims)
    block = Block(arg_types=arg_types)
    b = Builder(rng, block, next_ident=ident + 1000, patterns=patterns)
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (arg, dims) in enumerate(zip(block.args, arg_dims)):
        arg.name_hint = f"a{i}"
        b.values.append((arg, dims))
        shapes[f"a{i}"] = tuple(x.value for x in dims)
    for _ in range(rng.randint(1, max_ops)):
        step(b)
    defined = [v for v, _ in b.values if not isinstance(v.owner, Block)]
    if not defined:
        b.add(fusion.ExpOp(block.args[0]), [arg_dims[0]])
        defined = [b.values[-1][0]]
    results = [defined[-1]] + [v for v in defined[:-1] if rng.random() < 0.2]
    block.add_op(func.ReturnOp(*results))
    f = func.FuncOp("random", ([a.type for a in block.args], [r.type for r in results]), Region(block))
    module = ModuleOp([f])
    module.verify()
    import io

    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    names = [v.name_hint for v in defined if v.name_hint]
    return stream.getvalue(), shapes, names
