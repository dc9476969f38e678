"""CPU benchmark: very large IR through parse, verify and the compile pipeline.

Writes IR of about N ops in one of two layouts:

  one    one `func.func` of N ops (`parse_verify.generate_fusion`'s realistic mix)
  many   N / OPS_PER_FUNCTION functions of that mix, each a few blocks long

then times, once each (the sizes are large: best-of runs would take minutes):

  parse    Allotment's `LocatedParser` (what allot-opt, allot-run and
           `allotment.ir.parse_module` use), with every xDSL dialect loaded
  verify   `verify_located` (every op's verifier, then dominance)
  <pass>   each pass of the compile pipeline (`passes.pipeline.compile_passes`),
           applied in place to the parsed module, as `allot-opt -p` applies it
  plan     the passes together, with one `verify_located` after the last

and prints a Markdown table of CPU seconds (`time.process_time`: on a shared
machine wall time also counts the other processes) and ops per CPU second.

    .venv/bin/python benchmarks/large_ir.py --ops 20000 --layout one
    .venv/bin/python benchmarks/large_ir.py --ops 20000 --layout many
    .venv/bin/python benchmarks/large_ir.py --ops 20000 --layout one --write big.mlir   # only write
    .venv/bin/python benchmarks/large_ir.py --ops 20000 --profile parse   # cProfile top 30
    .venv/bin/python benchmarks/large_ir.py --ops 20000 --steps parse,verify   # skip planning
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from parse_verify import generate_fusion  # noqa: E402
from xdsl.context import Context  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402

from allotment.diagnostics import LocatedParser, verify_located, walk_ops  # noqa: E402
from allotment.ir import make_context  # noqa: E402
from allotment.limits import call_with_deep_stack  # noqa: E402
from allotment.passes.pipeline import compile_passes  # noqa: E402

OPS_PER_FUNCTION = 30
"""Ops of each function in the `many` layout (about; the generator ends on a whole block)."""


def generate(num_ops: int, layout: str, seed: int = 0) -> str:
    """The text of a module of about `num_ops` ops in `layout` (`one` or `many`)."""
    if layout == "one":
        return generate_fusion(num_ops, seed)
    funcs = []
    for i in range(max(1, num_ops // OPS_PER_FUNCTION)):
        text = generate_fusion(OPS_PER_FUNCTION, seed + i)
        funcs.append(text.replace("func.func @generated(", f"func.func @generated{i}(", 1))
    return "".join(funcs)


def parse(text: str, ctx: Context | None = None) -> ModuleOp:
    return LocatedParser(ctx or make_context(), text, "large.mlir").parse_module()


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """CPU seconds of this process (the machine is shared: wall time counts the others)."""
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def profile(fn: Callable[[], object], top: int) -> None:
    """cProfile of `fn`, run on Allotment's deep-stack thread (the passes' own calls to
    `call_with_deep_stack` then run in it, where the profiler sees them)."""
    prof = cProfile.Profile()
    call_with_deep_stack(lambda: prof.runcall(fn))
    for order in ("cumulative", "tottime"):
        print(f"\ncProfile, top {top} by {order}:")
        pstats.Stats(prof).sort_stats(order).print_stats(top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=20_000, help="ops in the module (default 20000)")
    ap.add_argument("--layout", choices=["one", "many"], default="one", help="one function or many")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", metavar="FILE", help="only write the generated IR to FILE")
    ap.add_argument("--steps", default="parse,verify,plan", help="which of parse,verify,plan to time")
    ap.add_argument("--profile", choices=["parse", "verify", "plan"], help="cProfile one step instead of timing")
    args = ap.parse_args(argv)

    text = generate(args.ops, args.layout, args.seed)
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)
        print(f"wrote {args.write}: {len(text) / 1e6:.2f} MB, {text.count(chr(10))} lines")
        return 0
    ctx = make_context()
    parse("func.func @warm() { func.return }", ctx)  # load the dialects parsing needs
    if args.profile == "parse":
        profile(lambda: parse(text, ctx), 30)
        return 0
    gc.collect()
    wall = time.perf_counter()
    rows: list[tuple[str, float]] = []
    seconds, module = timed(lambda: parse(text, ctx))
    rows.append(("parse", seconds))
    num_ops = sum(1 for _ in walk_ops(module))
    steps = args.steps.split(",")
    if args.profile == "verify":
        profile(lambda: verify_located(module), 30)
        return 0
    if "verify" in steps:
        rows.append(("verify", timed(lambda: verify_located(module))[0]))
    if args.profile == "plan":
        profile(lambda: [p.apply(Context(), module) for p in compile_passes()], 30)
        return 0
    if "plan" in steps:
        total = 0.0
        for p in compile_passes():
            applies_to = getattr(p, "applies_to", None)
            if applies_to is not None and not applies_to(module):
                continue
            seconds = timed(lambda p=p: p.apply(Context(), module))[0]
            rows.append((f"  {p.name}", seconds))
            total += seconds
        seconds = timed(lambda: verify_located(module))[0]
        rows.append(("  verify after the last pass", seconds))
        rows.append(("plan", total + seconds))
    funcs = text.count("func.func @")
    print(f"{args.layout}: {num_ops} ops in {funcs} function(s), {len(text) / 1e6:.2f} MB, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| step | CPU seconds | ops/second |\n| --- | ---: | ---: |")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} | {num_ops / max(seconds, 1e-9):,.0f} |")
    top = [s for name, s in rows if not name.startswith(" ")]
    print(f"| total | {sum(top):.2f} | {num_ops / sum(top):,.0f} |")
    print(f"wall time: {time.perf_counter() - wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
