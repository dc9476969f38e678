"""Does a kernel that re-reads what the kernel before it streamed gain from walking its grid
backwards? An experiment on the GPU, before any scheduler rule.

    python3 benchmarks/reread_order_variants.py [--cases batchnorm_fwd:large,batchnorm_fwd:odd]

BatchNorm's forward is two kernels: the statistics (a split reduction over N and L) read x
whole, then the normalization reads x again and writes y. At the large size x is 128 MiB,
2.5x the H200's L2, so the second read comes from DRAM, and at the copy's bandwidth the
pair is bounded by 67% of copy (384 MiB moved for 256 MiB of inputs and outputs). The last
programs of the statistics kernel read the end of x (the split index is the slow one of
its grid, and the batch index is the outermost of x); a normalization whose program i runs
the tile of program (programs - 1 - i) starts where the statistics ended, so its first L2's
worth of reads may hit.

Sides, timed kernel-only as the skeptic suite times them (`kernel_timing.GraphTimer`: a CUDA
graph of many calls rotating over input sets of at least 3x the L2), 5 interleaved repeats,
min/median/max in us, every output checked against the suite's torch function:

- `allotment`: the compiled fusion as generated (static extents, or `?` with `:?`);
- `reversed`: the same generated program with every kernel after the first walking its grid
  backwards (`pid = tl.num_programs(0) - 1 - tl.program_id(0)`; a permutation of
  independent programs, so the same results). This is an experiment's edit of the
  generated text, loaded from a temporary file; no code generator does it;
- `evicting`: the generated program with cache hints on x and y: the first kernel reads x
  with `eviction_policy='evict_last'` (its lines stay in L2 before others), every later kernel
  reads x with `evict_first` and stores its outputs with `cache_modifier='.cs'` (streaming),
  so that the normalization's own traffic does not push out what the statistics left;
- `both`: `reversed` and `evicting` together;
- `stats`: the statistics alone (the suite's bn_stats fusion on the same x);
- `copy`: a device copy of x into y (the bandwidth the % of copy is measured against);
- `eager` and `compile`: torch and torch.compile (`dynamic=False`), for reference.

Nothing here is a target figure: it decides whether the code generator should order grids so.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import kernel_timing as kt  # noqa: E402
from suite_fusions import FUSIONS, check_outputs  # noqa: E402

import allotment  # noqa: E402

_KERNEL_DEF = re.compile(r"^def (k(\d+)_\w*)\(", re.M)


def _each_kernel(source: str, edit: Callable[[int, str], str]) -> str:
    """`source` with the text of each kernel k<i> (up to the next kernel) replaced by edit(i, text)."""
    out, last = [], 0
    defs = list(_KERNEL_DEF.finditer(source))
    for i, m in enumerate(defs):
        end = defs[i + 1].start() if i + 1 < len(defs) else len(source)
        out.append(source[last:m.start()] + edit(int(m.group(2)), source[m.start():end]))
        last = end
    out.append(source[last:])
    return "".join(out)


def evicting(source: str) -> str:
    """`source` with x (in0) read `evict_last` by k0, `evict_first` by later kernels, and the
    later kernels' stores streaming (`.cs`)."""
    def edit(k: int, body: str) -> str:
        lines = []
        for line in body.split("\n"):
            if "tl.load(in0_ptr" in line and line.rstrip().endswith("other=0)"):
                policy = "evict_last" if k == 0 else "evict_first"
                line = line.rstrip()[:-1] + f", eviction_policy='{policy}')"
            elif k > 0 and "tl.store(out" in line and line.rstrip().endswith(")"):
                line = line.rstrip()[:-1] + ", cache_modifier='.cs')"
            lines.append(line)
        return "\n".join(lines)
    return _each_kernel(source, edit)


def reversed_grids(source: str) -> str:
    """`source` with `pid = tl.program_id(0)` of every kernel but k0 replaced by the
    reversed program index."""
    def edit(k: int, body: str) -> str:
        return body if k == 0 else body.replace(
            "pid = tl.program_id(0)", "pid = tl.num_programs(0) - 1 - tl.program_id(0)", 1)
    return _each_kernel(source, edit)


def load(source: str, name: str, tmp: Path) -> ModuleType:
    path = tmp / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_case(case: str, repeats: int, tmp: Path) -> None:
    fusion, size, *rest = case.split(":")
    dynamic = rest == ["?"]
    f = FUSIONS[fusion]
    ext = f.sizes[size]
    first = f.make_inputs(size, "bf16", "cuda", seed=0)
    n_sets = kt.input_sets_needed(2 * sum(x.numel() * x.element_size() for x in first), kt.l2_bytes())
    sets = [first] + [f.make_inputs(size, "bf16", "cuda", seed=k) for k in range(1, n_sets)]
    exe = allotment.compile(f.text("bf16", dynamic, ext))
    src = exe.source("cuda")
    rev_src = reversed_grids(src)
    changed = rev_src != src
    gen = load(src, f"gen_{fusion}_{size}", tmp)
    rev = load(rev_src, f"rev_{fusion}_{size}", tmp)
    ev = load(evicting(src), f"ev_{fusion}_{size}", tmp)
    both = load(evicting(rev_src), f"both_{fusion}_{size}", tmp)
    stats = allotment.compile(FUSIONS["bn_stats"].text("bf16", dynamic, ext)) if fusion == "batchnorm_fwd" else None
    compiled = torch.compile(f.torch_fn, dynamic=False)
    x0 = sets[0][0]
    ys = [torch.empty_like(xs[0]) for xs in sets]
    want = f.torch_fn(*sets[0])
    for name, fn in (("allotment", exe), ("generated", gen.run), ("reversed", rev.run), ("evicting", ev.run),
                     ("both", both.run)):
        err = check_outputs(fn(*sets[0]), want, "bf16")
        if err:
            print(f"{case} {name}: WRONG {err}")
            return
    sides = [kt.Side("eager", lambda xs: f.torch_fn(*xs)), kt.Side("compile", lambda xs: compiled(*xs)),
             kt.Side("allotment", lambda xs: exe(*xs)), kt.Side("reversed", lambda xs: rev.run(*xs)),
             kt.Side("evicting", lambda xs: ev.run(*xs)), kt.Side("both", lambda xs: both.run(*xs))]
    if stats is not None:
        sides.append(kt.Side("stats", lambda xs: stats(xs[0])))
    copy_of = {id(xs[0]): y for xs, y in zip(sets, ys)}
    sides.append(kt.Side("copy", lambda xs: copy_of[id(xs[0])].copy_(xs[0])))
    for s in sides:
        kt.prepare(s, sets, "cuda")
    kt.interleave(sides, repeats)
    io = sum(x.numel() * x.element_size() for x in sets[0]) + sum(t.numel() * t.element_size() for t in want)
    copy_med = kt.spread(next(s for s in sides if s.name == "copy").samples)
    print(f"\n{case} bf16, x {tuple(x0.shape)}, inputs + outputs {io / 2**20:.1f} MiB, "
          f"{len(sets)} input sets, reversed program differs: {changed}")
    for s in sides:
        sp = kt.spread(s.samples)
        if sp is None:
            print(f"  {s.name:10s} -  {s.error}")
            continue
        pct = ""
        if s.name in ("allotment", "reversed", "evicting", "both", "eager", "compile") and copy_med:
            pct = f"  {100 * copy_med['median'] * io / (2 * x0.numel() * x0.element_size()) / sp['median']:5.1f}% of copy"
        print(f"  {s.name:10s} {sp['median']:8.1f} [{sp['min']:.1f}-{sp['max']:.1f}] us ({s.method}){pct}")
    kt.release(sides)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="batchnorm_fwd:large,batchnorm_fwd:odd,batchnorm_fwd:large:?")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("reread_order_variants.py needs a GPU")
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            try:
                run_case(case, args.repeats, Path(tmp))
            except Exception as e:  # noqa: BLE001 (one case's failure is reported, the rest run)
                print(f"{case}: FAILED {type(e).__name__}: {str(e)[:400]}")


if __name__ == "__main__":
    main()
