"""CPU benchmark: how fast a large fusion is parsed, verified and printed.

Generates one `func.func` of about N fusion ops (default 10,000) in a realistic
mix: f32 elementwise chains over a `?x64` activation with broadcast weights and
scalars, casts to bf16 and back, reductions with `keepdim` and broadcast back
(RMSNorm, LayerNorm via var_mean, softmax), a reduction without keepdim
re-broadcast by `broadcast_in_dim` to a `tensor.dim` extent, reshape/permute
round trips, comparisons and `where`, and residual adds. Every op is valid.

It then times, best of R runs each:
  parse     xDSL's Parser with Allotment's context (all xDSL dialects + fusion)
  verify    module.verify()
  print     xDSL's Printer, custom form
  allot-opt the whole `allot-opt X -o Y` in process (AllotOptMain: argument
            parsing, parse, verify, print)
and prints a table of seconds and ops/second. Before timing it checks that
the fusion round-trips (allot-opt's output reprints identically).

    .venv/bin/python benchmarks/parse_verify.py --ops 10000 --repeat 3
    .venv/bin/python benchmarks/parse_verify.py --profile verify   # cProfile top 25
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from allotment.tools.allot_opt import AllotOptMain
from allotment.universe import ALL_DIALECTS

HIDDEN = 64
"""Static extent of the last dimension; the first (rows) is `?`."""

ROW = f"tensor<?x{HIDDEN}xf32>"
ROW_BF16 = f"tensor<?x{HIDDEN}xbf16>"
COL = "tensor<?x1xf32>"
VEC = f"tensor<1x{HIDDEN}xf32>"


@dataclass
class FusionWriter:
    """Emits the body of the generated fusion, one op per line."""

    lines: list[str] = field(default_factory=list)
    ops: int = 0
    counter: int = 0
    cur: str = "%xf"
    history: list[str] = field(default_factory=list)

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, text: str, results: int = 1) -> str | tuple[str, str]:
        names = [self.fresh() for _ in range(results)]
        self.lines.append(f"  {', '.join(names)} = {text}")
        self.ops += 1
        return names[0] if results == 1 else (names[0], names[1])

    def advance(self, value: str) -> None:
        self.history.append(self.cur)
        self.cur = value


def _bias_act(w: FusionWriter, rng: random.Random) -> None:
    act = rng.choice(["tanh", "sigmoid", "relu", "exp", "erf"])
    a = w.emit(f"fusion.mul {w.cur}, %wb : {ROW}, {VEC} -> {ROW}")
    b = w.emit(f"fusion.add {a}, %bb : {ROW}, {VEC} -> {ROW}")
    w.advance(w.emit(f"fusion.{act} {b} : {ROW}"))


def _scalar_chain(w: FusionWriter, rng: random.Random) -> None:
    a = w.emit(f"fusion.mul {w.cur}, %s : {ROW}, f32 -> {ROW}")
    b = w.emit(f"fusion.add {a}, %half : {ROW}, f32 -> {ROW}")
    w.advance(w.emit(f"fusion.{rng.choice(['sub', 'maximum', 'minimum'])} {b}, {w.cur} : {ROW}"))


def _rmsnorm(w: FusionWriter, rng: random.Random) -> None:
    sq = w.emit(f"fusion.mul {w.cur}, {w.cur} : {ROW}")
    ms = w.emit(f"fusion.mean {sq} dims [1] keepdim : {ROW} -> {COL}")
    me = w.emit(f"fusion.add {ms}, %eps : {COL}, f32 -> {COL}")
    inv = w.emit(f"fusion.rsqrt {me} : {COL}")
    xn = w.emit(f"fusion.mul {w.cur}, {inv} : {ROW}, {COL} -> {ROW}")
    w.advance(w.emit(f"fusion.mul {xn}, %wb : {ROW}, {VEC} -> {ROW}"))


def _layernorm(w: FusionWriter, rng: random.Random) -> None:
    var, mean = w.emit(
        f"fusion.var_mean {w.cur} dims [1] correction 0 keepdim : {ROW} -> {COL}, {COL}", 2
    )
    xc = w.emit(f"fusion.sub {w.cur}, {mean} : {ROW}, {COL} -> {ROW}")
    ve = w.emit(f"fusion.add {var}, %eps : {COL}, f32 -> {COL}")
    inv = w.emit(f"fusion.rsqrt {ve} : {COL}")
    xn = w.emit(f"fusion.mul {xc}, {inv} : {ROW}, {COL} -> {ROW}")
    xw = w.emit(f"fusion.mul {xn}, %wb : {ROW}, {VEC} -> {ROW}")
    w.advance(w.emit(f"fusion.add {xw}, %bb : {ROW}, {VEC} -> {ROW}"))


def _softmax(w: FusionWriter, rng: random.Random) -> None:
    m = w.emit(f"fusion.max {w.cur} dims [-1] keepdim : {ROW} -> {COL}")
    z = w.emit(f"fusion.sub {w.cur}, {m} : {ROW}, {COL} -> {ROW}")
    e = w.emit(f"fusion.exp {z} : {ROW}")
    s = w.emit(f"fusion.sum {e} dims [-1] keepdim : {ROW} -> {COL}")
    w.advance(w.emit(f"fusion.div {e}, {s} : {ROW}, {COL} -> {ROW}"))


def _cast_round_trip(w: FusionWriter, rng: random.Random) -> None:
    h = w.emit(f"fusion.cast {w.cur} : {ROW} to {ROW_BF16}")
    w.advance(w.emit(f"fusion.cast {h} : {ROW_BF16} to {ROW}"))


def _reshape_permute(w: FusionWriter, rng: random.Random) -> None:
    cube = "tensor<?x8x8xf32>"
    r = w.emit(f"fusion.reshape {w.cur} [-1, 8, 8] : {ROW} -> {cube}")
    p = w.emit(f"fusion.permute {r} [0, 2, 1] : {cube} -> {cube}")
    w.advance(w.emit(f"fusion.reshape {p} [-1, {HIDDEN}] : {cube} -> {ROW}"))


def _reduce_broadcast(w: FusionWriter, rng: random.Random) -> None:
    op = rng.choice(["sum", "max", "min", "mean"])
    r = w.emit(f"fusion.{op} {w.cur} dims [1] : {ROW} -> tensor<?xf32>")
    b = w.emit(f"fusion.broadcast_in_dim {r} [%n, 1] dims [0] : tensor<?xf32> -> {COL}")
    w.advance(w.emit(f"fusion.sub {w.cur}, {b} : {ROW}, {COL} -> {ROW}"))


def _where(w: FusionWriter, rng: random.Random) -> None:
    p = w.emit(f"fusion.gt {w.cur}, %zero : {ROW}, f32 -> tensor<?x{HIDDEN}xi1>")
    w.advance(
        w.emit(f"fusion.where {p}, {w.cur}, %zero : tensor<?x{HIDDEN}xi1>, {ROW}, f32 -> {ROW}")
    )


def _residual(w: FusionWriter, rng: random.Random) -> None:
    skip = rng.choice(w.history[-8:]) if w.history else "%xf"
    w.advance(w.emit(f"fusion.add {w.cur}, {skip} : {ROW}"))


BLOCKS: list[tuple[Callable[[FusionWriter, random.Random], None], int]] = [
    (_bias_act, 4),
    (_scalar_chain, 3),
    (_rmsnorm, 2),
    (_layernorm, 2),
    (_softmax, 2),
    (_cast_round_trip, 2),
    (_reshape_permute, 2),
    (_reduce_broadcast, 2),
    (_where, 1),
    (_residual, 2),
]
"""Pattern generators and their relative frequencies."""


def generate_fusion(num_ops: int, seed: int = 0) -> str:
    """The text of a module holding one fusion of about `num_ops` ops."""
    rng = random.Random(seed)
    w = FusionWriter()
    prologue = [
        "  %eps = arith.constant 1.000000e-05 : f32",
        "  %half = arith.constant 5.000000e-01 : f32",
        "  %zero = arith.constant 0.000000e+00 : f32",
        "  %c0 = arith.constant 0 : index",
        f"  %n = tensor.dim %x, %c0 : {ROW_BF16}",
        f"  %xf = fusion.cast %x : {ROW_BF16} to {ROW}",
        f"  %wf = fusion.cast %w : tensor<{HIDDEN}xbf16> to tensor<{HIDDEN}xf32>",
        f"  %wb = fusion.broadcast_in_dim %wf [1, {HIDDEN}] dims [1] : "
        f"tensor<{HIDDEN}xf32> -> {VEC}",
        f"  %bf = fusion.cast %b : tensor<{HIDDEN}xbf16> to tensor<{HIDDEN}xf32>",
        f"  %bb = fusion.broadcast_in_dim %bf [1, {HIDDEN}] dims [1] : "
        f"tensor<{HIDDEN}xf32> -> {VEC}",
    ]
    w.ops = len(prologue) + 2  # and the final cast and return
    blocks, weights = zip(*BLOCKS)
    while w.ops < num_ops:
        rng.choices(blocks, weights)[0](w, rng)
    y = w.fresh()
    header = (
        f"func.func @generated(%x: {ROW_BF16}, %w: tensor<{HIDDEN}xbf16>, "
        f"%b: tensor<{HIDDEN}xbf16>, %s: f32) -> {ROW_BF16} {{"
    )
    footer = [
        f"  {y} = fusion.cast {w.cur} : {ROW} to {ROW_BF16}",
        f"  func.return {y} : {ROW_BF16}",
        "}",
    ]
    return "\n".join([header, *prologue, *w.lines, *footer]) + "\n"


def allotment_context() -> Context:
    """A context with every xDSL dialect and Allotment's, as allot-opt has."""
    ctx = Context()
    for name, factory in {**get_all_dialects(), **ALL_DIALECTS}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def parse(ctx: Context, text: str) -> ModuleOp:
    return Parser(ctx, text, "generated.mlir").parse_module()


def print_module(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def allot_opt(src: str, dst: str) -> None:
    AllotOptMain(args=[src, "-o", dst]).run()


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def check_round_trip(src: str, dst: str) -> None:
    """`allot-opt src` reprints identically when fed back to allot-opt."""
    again = dst + ".again.mlir"
    allot_opt(src, dst)
    allot_opt(dst, again)
    with open(dst) as first, open(again) as second:
        if first.read() != second.read():
            sys.exit("error: the generated fusion does not round-trip through allot-opt")


def profile(name: str, fn: Callable[[], object], top: int) -> None:
    prof = cProfile.Profile()
    prof.runcall(fn)
    print(f"\ncProfile of {name}, top {top} by cumulative time:")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)
    print(f"cProfile of {name}, top {top} by own time:")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=10_000, help="ops in the fusion (default 10000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; best is kept")
    ap.add_argument("--seed", type=int, default=0, help="seed of the op mix")
    ap.add_argument(
        "--profile",
        choices=["parse", "verify", "print", "allot-opt"],
        help="also run cProfile on one step and print its hotspots",
    )
    ap.add_argument("--dump", metavar="FILE", help="write the generated fusion to FILE")
    args = ap.parse_args(argv)

    text = generate_fusion(args.ops, args.seed)
    if args.dump:
        with open(args.dump, "w") as f:
            f.write(text)
    ctx = allotment_context()
    parse(ctx, "func.func @warm() { func.return }")  # load the dialects parsing needs

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "fusion.mlir"), os.path.join(tmp, "out.mlir")
        with open(src, "w") as f:
            f.write(text)
        check_round_trip(src, dst)

        module = parse(ctx, text)
        num_ops = sum(1 for _ in module.walk())
        steps: list[tuple[str, Callable[[], object]]] = [
            ("parse", lambda: parse(ctx, text)),
            ("verify", module.verify),
            ("print", lambda: print_module(module)),
            ("allot-opt", lambda: allot_opt(src, dst)),
        ]
        results = [(name, best_of(args.repeat, fn)) for name, fn in steps]
        if args.profile:
            profile(args.profile, dict(steps)[args.profile], 25)

    by_name = dict(results)
    results.insert(2, ("parse + verify", by_name["parse"] + by_name["verify"]))
    print(
        f"fusion: {num_ops} ops (walk of the module), {len(text.splitlines())} lines, "
        f"{len(text) / 1e6:.2f} MB; best of {args.repeat}"
    )
    print("| step | seconds | ops/second |\n| --- | ---: | ---: |")
    for name, seconds in results:
        print(f"| {name} | {seconds:.3f} | {num_ops / seconds:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
