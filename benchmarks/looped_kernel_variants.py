"""A/B of edits to one generated kernel, on the GPU: which code-generation change pays.

    python3 benchmarks/looped_kernel_variants.py [--cases cross_entropy:large,log_softmax:odd]
        [--dtype bf16] [--blocks 1024x4,2048x4,2048x8] [--sass-only]

For each case (a suite fusion at one size, static extents) this compiles the fusion
with Allotment, captures the arguments of its first kernel launch, and times that
kernel as generated and with each edit applied to its source text:

- `mask_m`: the row mask is a constant true (one row a program, grid = rows);
- `label32`: `iota == label` compares in i32 against the label clamped once per row
  (an out-of-range label becomes -1, which no column index equals);
- `ftz`: the online softmax's exps (the running sum's terms, each at most 1 and one of
  them exactly 1) use `ex2.approx.ftz` (no denormal fix-up: 2 instructions, not 5);

alone and together, at each BLOCK_N x warps of `--blocks`, with the output checked
against the generated kernel's. torch.compile and the whole Allotment call are timed
in the same process. `--sass-only` compiles each variant for sm_90 offline (no GPU)
and prints its SASS instruction count per tile loop instead. Nothing here is a
target figure: it decided what the code generator emits. Since commit 90b7b97 the
generated kernel has all three edits (`backend/kernels/`), so they find nothing to change
in it; the figures of the decision are in
`benchmarks/results/looped_kernel_variants_h200_2026-12-01_0402.txt`.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import suite_fusions  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402

FTZ_HELPER = '''
@triton.jit
def _exp_ftz(x):
    return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [x * 1.4426950408889634],
                                     dtype=tl.float32, is_pure=True, pack=1)
'''


def _mask_m(src: str) -> str:
    old = "mask_m = (rm < M)[:, None]"
    assert old in src, "no row mask"
    return src.replace(old, "mask_m = tl.full((BLOCK_M, 1), 1, tl.int1)")


def _label32(src: str) -> str:
    m = re.search(r"(\s+)(ld\d+) = tl\.load\(in1_ptr \+ \(i0 \* in1_s0\), mask=mask_m, other=0\)\n", src)
    assert m, "no hoisted label load"
    indent, lab = m.group(1), m.group(2)
    src = src.replace(m.group(0), m.group(0) + f"{indent}lab32 = tl.where(({lab} >= 0) & ({lab} < N), {lab}, -1).to(tl.int32)\n")
    pat = re.compile(r"(\s+)(t\d+) = \(\(0\) \+ \(i1\) \* \(1\)\)\.to\(tl\.int64\)\.to\(tl\.int64\)\n\s+(t\d+) = \(\2 == " + lab + r"\)")
    src, n = pat.subn(lambda mm: f"{mm.group(1)}{mm.group(3)} = (i1 == lab32)", src)
    assert n >= 1, "no iota == label compare"
    return src


def _ftz(src: str) -> str:
    pat = re.compile(r"(acc\d+ = acc\d+ \* )tl\.exp\((.*?)\) \+ tl\.exp\((.*?)\)\n")
    src, n = pat.subn(lambda mm: f"{mm.group(1)}_exp_ftz({mm.group(2)}) + _exp_ftz({mm.group(3)})\n", src)
    assert n >= 1, "no online-softmax step"
    return src


def _gather(src: str) -> str:
    """The label's logit read once per row at the label (what a one-hot-sum-to-gather rewrite
    would give) instead of `where(iota == label, x, 0)` summed over every column."""
    pat = re.compile(r"\n\s+t\d+ = \(\(0\) \+ \(i1\) \* \(1\)\)\.to\(tl\.int64\)\.to\(tl\.int64\)\n"
                     r"(?:.*\n){3}\s+(acc\d+) = \1 \+ red_in\d+")
    src, n = pat.subn("", src)
    assert n >= 1, "no one-hot sum"
    acc = pat.pattern  # noqa: F841
    m = re.search(r"(tot\d+) = tl\.sum\((acc\d+), 1\)\[:, None\]\n(\s+)(red\d+) = \1\.to\(tl\.float32\)\n(?=(?:.*\n)*?.*fusion\.sub)", src)
    lab = re.search(r"(ld\d+) = tl\.load\(in1_ptr", src).group(1)
    sums = re.findall(r"(tot\d+) = tl\.sum\((acc\d+), 1\)\[:, None\]", src)
    tot, acc = sums[-1]
    assert acc not in src.split("for start", 1)[1].split("tot", 1)[0] or True
    src = src.replace(f"{tot} = tl.sum({acc}, 1)[:, None]",
                      f"{tot} = tl.where(({lab} >= 0) & ({lab} < N), tl.load(in0_ptr + i0 * in0_s0 + "
                      f"tl.minimum(tl.maximum({lab}, 0), N - 1) * in0_s1, mask=mask_m, other=0).to(tl.float32), 0.0)")
    del m
    return src


EDITS: dict[str, list[Callable[[str], str]]] = {
    "generated": [],
    "mask_m": [_mask_m],
    "label32": [_label32],
    "ftz": [_ftz],
    "mask_m+ftz": [_mask_m, _ftz],
    "all": [_mask_m, _label32, _ftz],
    "gather": [_gather],
    "mask_m+ftz+gather": [_mask_m, _ftz, _gather],
}


def _kernel_source(program: str, name: str) -> str:
    start = program.index(f"@triton.jit\ndef {name}(")
    end = program.index("\n\n\n", start)
    return program[start:end] + "\n"


def _load(header: str, kernel: str, name: str, tmp: Path, tag: str):  # noqa: ANN202
    path = tmp / f"variant_{tag}.py"
    path.write_text(header + FTZ_HELPER + "\n\n" + kernel)
    spec = importlib.util.spec_from_file_location(f"variant_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _header(program: str) -> str:
    """Imports, and every `@triton.jit` helper of the program (a kernel's helpers are
    emitted beside it), for a module holding one variant."""
    helpers = re.findall(r"@triton\.jit\ndef _\w+\(.*?\n(?=\n|@)", program, flags=re.S)
    imports = program[: program.index("@triton.jit")]
    return imports + "\n\n".join(h for h in dict.fromkeys(helpers) if "_exp_ftz" not in h) + "\n"


@dataclass
class FirstLaunch:
    """A suite case compiled with static extents, and its first kernel launch as captured."""

    fusion: suite_fusions.SuiteFusion
    exe: Any
    program: str
    inputs: list[torch.Tensor]
    kernel: Any
    name: str
    grid: tuple
    args: tuple
    constexprs: dict
    warps: int


def capture_first_launch(case: str, dtype: str, dev: str) -> FirstLaunch:
    """Compiles case `fusion:size` and runs it once with its launches captured."""
    fname, size = case.split(":")
    f = suite_fusions.FUSIONS[fname]
    exe = allotment.compile(f.text(dtype, False, size))
    xs = f.make_inputs(size, dtype, dev)
    seen: list[tuple] = []
    with launch.intercepted(lambda k, g, a, c, w: seen.append((k, g, a, c, w))):
        exe(*xs)
    kernel, grid, kargs, cx, warps = seen[0]
    name = kernel.fn.__name__ if hasattr(kernel, "fn") else kernel.__name__
    return FirstLaunch(f, exe, exe.source("cuda"), xs, kernel, name, grid, kargs, cx, warps)


def start_case(c: FirstLaunch, case: str, args: argparse.Namespace) -> str:
    """Prints the case's first kernel and (on the GPU) the reference timings; returns the
    kernel's source, which the edits change."""
    print(f"{case} {args.dtype}: {c.name}, grid {c.grid}, generated blocks {c.constexprs} x {c.warps} warps")
    if not args.sass_only:
        print_references(c)
    return _kernel_source(c.program, c.name)


def print_references(c: FirstLaunch) -> None:
    """torch.compile's and the whole Allotment call's time on the case, in this process."""
    from measure import kernel_ms

    comp = torch.compile(lambda *t: c.fusion.torch_fn(*t))
    comp(*c.inputs)
    print(f"  torch.compile {kernel_ms(lambda: comp(*c.inputs)) * 1e3:.1f} us, "
          f"Allotment call {kernel_ms(lambda: c.exe(*c.inputs)) * 1e3:.1f} us")


def apply_edits(src: str, tag: str, edits: list[Callable[[str], str]]) -> str | None:
    """`src` with each of `edits` applied in turn, or None (and a line saying why) where one
    finds nothing to change."""
    for e in edits:
        try:
            src = e(src)
        except AssertionError as err:
            print(f"  {tag}: not applicable ({err})")
            return None
    return src


def cli(doc: str, one_case: Callable[[str, argparse.Namespace, Path, str], None], cases: str, blocks: str) -> int:
    """The command line of a variants script: `one_case` for each of `--cases`."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--cases", default=cases)
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--blocks", default=blocks)
    p.add_argument("--sass-only", action="store_true")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp())
    dev = "cpu" if args.sass_only else "cuda"
    for case in args.cases.split(","):
        one_case(case, args, tmp, dev)
    return 0


def _one_case(case: str, args: argparse.Namespace, tmp: Path, dev: str) -> None:
    """Times (or compiles, `--sass-only`) every variant of one case's first kernel."""
    c = capture_first_launch(case, args.dtype, dev)
    fname = case.split(":")[0]
    program, name, grid, kargs, cx = c.program, c.name, c.grid, c.args, c.constexprs
    if "looped" not in name:
        print(f"{case}: first kernel {name} is not looped; skipped")
        return
    src = start_case(c, case, args)
    ref = None
    for tag, edits in EDITS.items():
        text = apply_edits(src, tag, edits)
        if text is None:
            continue
        k = _load(_header(program), text, name, tmp, tag.replace("+", "_"))
        for blocks in args.blocks.split(","):
            bn, w = (int(v) for v in blocks.split("x"))
            consts = dict(cx, BLOCK_N=bn)
            if args.sass_only:
                print(f"  {tag:12s} {bn}x{w}: {_sass_count(k, kargs, consts, w)}")
                continue
            out = kargs[10] if fname == "cross_entropy" else kargs[5]
            run = lambda k=k, consts=consts, w=w: k[grid](*kargs, **consts, num_warps=w)  # noqa: E731
            run()
            if ref is None:
                ref = out.clone()
            err = (out.float() - ref.float()).abs().max().item()
            from measure import kernel_ms
            us = kernel_ms(run, rep=100) * 1e3
            print(f"  {tag:12s} {bn:5d} x {w:2d} warps {us:8.1f} us  max diff vs generated {err:.1e}")


def main() -> int:
    return cli(__doc__, _one_case, "cross_entropy:large,cross_entropy:odd,log_softmax:odd", "1024x4,2048x4,2048x8")


def _sass_count(k, kargs: tuple, consts: dict, warps: int) -> str:  # noqa: ANN001
    """SASS instructions of each loop of `k` compiled for sm_90 as the JIT would specialize `kargs`."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig, cx, attrs = {}, {}, {}
    names = k.arg_names
    for i, a in enumerate(names):
        if a in consts:
            sig[a] = "constexpr"
            cx[(i,)] = consts[a]
            continue
        v = kargs[i]
        if isinstance(v, torch.Tensor):
            sig[a] = "*" + {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
                            torch.int64: "i64"}[v.dtype]
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif v == 1:
            sig[a] = "constexpr"
            cx[(i,)] = 1
        else:
            sig[a] = "i32"
            if v % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
    c = triton.compile(ASTSource(k, sig, cx, attrs), target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(c.asm["cubin"])
        fh.flush()
        sass = subprocess.run([str(Path(triton.__file__).parent / "backends/nvidia/bin/nvdisasm"), "-c", fh.name],
                              capture_output=True, text=True, check=True).stdout
    loops: list[int] = []
    count, labels = 0, {}
    for line in sass.splitlines():
        m = re.match(r"\s*\.L_x_(\d+):", line)
        if m:
            labels[m.group(1)] = count
        if re.search(r"/\*[0-9a-f]{4}\*/", line):
            count += 1
            m = re.search(r"BRA `\(\.L_x_(\d+)\)", line)
            if m and m.group(1) in labels:
                loops.append(count - labels[m.group(1)])
    return f"{count} instructions, loops of {loops}"


if __name__ == "__main__":
    sys.exit(main())
