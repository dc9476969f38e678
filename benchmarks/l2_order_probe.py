"""Probe (not a rule of the code): does the last kernel of a two-pass plan gain from running
its programs in reverse order, so that it reads first what the kernel before it read last,
while that is still in L2?

    python3 benchmarks/l2_order_probe.py                 # GPU: BatchNorm's cases, < 60 s
    python3 benchmarks/l2_order_probe.py --cpu-check     # the same path on the CPU, tiny

BatchNorm's forward plan reads x twice: the statistics' split reduction (its programs
split-major, so the last ones read the tail of x: x[51:64] of a [64, 256, 4096] x, 26 MiB,
less than an H100's 50 MB of L2), then the pointwise normalization, whose programs read x
from its head. The probe builds the case's program as the code generator writes it
("forward") and a copy whose last kernel (pointwise: its tiled and flat functions) maps its program id p to
num_programs - 1 - p ("reversed": the same tiles, the same results, in reverse order), and
times both, and a device copy of the case's bytes, kernel-only as the skeptic suite does
(CUDA graphs of calls rotating over input sets that together are at least 3x L2, 5
interleaved repeats). Both programs' outputs are checked against torch first. The rewrite
is of the generated source's text and is a measurement only: a rule that came of it would
be an attribute of the kernel in the IR, read by the emitter.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import kernel_timing as kt  # noqa: E402
import skeptic_suite  # noqa: E402
from suite_fusions import FUSIONS, check_outputs  # noqa: E402

import allotment  # noqa: E402
from allotment.driver import runtime  # noqa: E402

CASES = ("batchnorm_fwd:bf16:large", "batchnorm_fwd:bf16:large:?", "batchnorm_fwd:f16:large",
         "batchnorm_fwd:f32:large:?", "batchnorm_fwd:bf16:odd")
PID = "pid = tl.program_id(0)"


def reversed_last_kernel(source: str) -> str:
    """`source` with the program id of every function of its last kernel reversed (a `?`
    pointwise kernel has a tiled and a flat function, picked at run time); that kernel must
    be pointwise (each program its own tiles, no order between programs)."""
    kernels = [int(k) for k in re.findall(r"^def k(\d+)_\w+\(", source, re.M)]
    if not kernels:
        raise ValueError("the program has no kernel")
    last = max(kernels)
    names = re.findall(rf"^def (k{last}_\w+)\(", source, re.M)
    if not all(n in (f"k{last}_pointwise_", f"k{last}_flat_") for n in names):
        raise ValueError(f"the last kernel is not pointwise: {names}")
    for name in names:
        start = source.index(f"def {name}(")
        at = source.index(PID, start)
        source = source[:at] + "pid = tl.num_programs(0) - 1 - tl.program_id(0)" + source[at + len(PID):]
    return source


def load(source: str, tag: str) -> Any:
    """The program of `source`, loaded as the runtime loads a verified one."""
    path = Path(tempfile.mkdtemp()) / f"l2_order_{tag}.py"
    path.write_text(source)
    return runtime.load_program(path, source, f"l2probe{tag}", "cuda" if torch.cuda.is_available() else "cpu")


def probe(case: str, repeats: int, cpu: bool) -> str:
    fusion, dtype, size, *dyn = case.split(":")
    f = FUSIONS[fusion]
    dev = "cpu" if cpu else "cuda"
    extents = dict(f.sizes[size])
    if cpu:  # every extent but the last 2, the last at most 64
        *outer, last = extents
        extents = {**{k: 2 for k in outer}, last: min(extents[last], 64)}
    source = allotment.compile(f.text(dtype, dyn == ["?"], extents)).source("cuda" if not cpu else "cpu")
    tag = re.sub(r"\W", "_", case)
    programs = {"forward": load(source, tag + "_f"), "reversed": load(reversed_last_kernel(source), tag + "_r")}
    xs = f.make_inputs(extents, dtype, dev)
    want = f.torch_fn(*xs)
    for name, p in programs.items():
        why = check_outputs(p(*xs), want, dtype)
        if why is not None:
            return f"{case:28s} WRONG ({name}): {why}"
    nbytes = sum(t.numel() * t.element_size() for t in (*xs, *want))
    n_sets = kt.input_sets_needed(nbytes, kt.l2_bytes()) if not cpu else 1
    sets = [xs] + [f.make_inputs(extents, dtype, dev, seed=i) for i in range(1, n_sets)]
    sides = [kt.Side(name, lambda s, p=p: p(*s)) for name, p in programs.items()]
    copy_sets = []
    n = skeptic_suite.copy_elements(nbytes)  # the suite's reference: whole 4096-element blocks
    for _ in range(kt.input_sets_needed(4 * n, kt.l2_bytes()) if not cpu else 1):
        copy_sets.append([torch.randn(n, device=dev, dtype=torch.bfloat16), torch.empty(n, device=dev, dtype=torch.bfloat16)])
    copy = kt.Side("copy", lambda s: s[1].copy_(s[0]))
    for s in sides:
        kt.prepare(s, sets, dev)
    # the same copy timed alone first, as the skeptic suite times its copy reference: on an
    # H100 on 2026-12-07 the suite's processes read 90.6 us for this copy and this probe,
    # interleaved with the programs, 111.9 us (`copy_alone` tells the two settings apart)
    alone = kt.Side("copy_alone", lambda s: s[1].copy_(s[0]))
    kt.prepare(alone, copy_sets, dev)
    kt.interleave([alone], repeats)
    kt.release([alone])
    kt.prepare(copy, copy_sets, dev)
    kt.interleave([*sides, copy], repeats)
    kt.release([*sides, copy])
    t = {s.name: kt.spread(s.samples) for s in (*sides, copy, alone)}
    if not all(t.values()):
        return f"{case:28s} not timed: " + "; ".join(f"{s.name}: {s.error}" for s in (*sides, copy, alone) if s.error)
    copy_us = t["copy"]["median"] * nbytes / (4 * n)  # the copy moves 4n bytes
    cells = " ".join(f"{name} {v['median']:7.1f} [{v['min']:.1f}-{v['max']:.1f}]" for name, v in t.items())
    ratio = t["reversed"]["median"] / t["forward"]["median"]
    pct = " ".join(f"{name} {100 * copy_us / t[name]['median']:.0f}%" for name in programs)
    return f"{case:28s} {cells}  reversed/forward {ratio:.3f}  % of copy: {pct}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(CASES), help="fusion:dtype:size[:?],...")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cpu-check", action="store_true", help="the same path on the CPU, tiny extents")
    a = p.parse_args(argv)
    name = torch.cuda.get_device_name() if torch.cuda.is_available() and not a.cpu_check else "cpu"
    print(f"# l2_order_probe: {name}, torch {torch.__version__}, repeats {a.repeats}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; us median [min-max]", flush=True)
    for case in a.cases.split(","):
        print(probe(case, a.repeats, a.cpu_check), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
