"""Text edits of the generated kernel of a sum over a short outer axis (sum_3d_dim0:
[R, A, B] bf16 summed over dim 0), launched by hand and timed on the GPU in one process:

    python3 benchmarks/short_outer_edits.py 7x1999x1111[,16x1024x4096,...]

v0 is the kernel as generated; v1 indexes the kept dims flat (`rm * stride`, valid for a
dense input); v2 drops the select over the sum's input; v3 both; v4/v5 choose v1's form
by a run-time int argument (1: specialized, so static; 0: a branch). Beside them,
torch.compile and Inductor's unrolled form (`short_outer_variants._unrolled`).

The figures in `benchmarks/results/short_outer_edits_h200_2026-12-01_1106.txt` came
from the code generator before it dropped that select
(`row_reduction.RowEmitter.zero_where_masked`, the v2 edit): today v2's edit finds
nothing to remove, so v2 equals v0 and v3 equals v1.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch
import triton
from triton.testing import do_bench

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from short_outer_variants import _fusion_text, _unrolled  # noqa: E402

import allotment  # noqa: E402

_SELECT = r"red_in(\d+) = tl.where\(mask_m & mask_n, tl.broadcast_to\((t\d+).to\(tl.float32\), \(BLOCK_M, BLOCK_N\)\), 0\)"
_FULL = "i0 * in0_s0 + i1 * in0_s1 + i2 * in0_s2"


def variants(src: str) -> dict[str, str]:
    """The edited sources, by name."""
    flat = src.replace(_FULL, "i0 * in0_s0 + rm[:, None] * in0_s2")
    flat = flat.replace("i1 * out0_s0 + i2 * out0_s1", "rm[:, None] * out0_s1")
    flag = src.replace(_FULL, f"i0 * in0_s0 + (rm[:, None] * in0_s2 if in1_n1 == 1 else {_FULL[len('i0 * in0_s0 + '):]})")
    return {
        "v0 generated": src,
        "v1 collapsed": flat,
        "v2 no where": re.sub(_SELECT, r"red_in\1 = \2", src),
        "v3 collapsed no where": re.sub(_SELECT, r"red_in\1 = \2", flat),
        "v4 flag ternary": flag,
        "v5 flag runtime 0": flag.replace("in1_n1 == 1", "in1_n0 == 1"),
    }


def load(name: str, src: str) -> Any:
    f = Path(tempfile.mkdtemp()) / f"{re.sub(r'[^a-z0-9]', '_', name)}.py"
    f.write_text(src)
    spec = importlib.util.spec_from_file_location(f.stem, f)
    assert spec is not None and spec.loader is not None
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.k0_looped_


def time_shape(r: int, a: int, b: int) -> None:
    x = torch.randn(r, a, b, device="cuda").to(torch.bfloat16)
    m = a * b
    ref = x.float().sum(0).to(torch.bfloat16)
    moved = x.numel() * 2 + m * 2
    exe = allotment.compile(_fusion_text(r, a, b))
    print(f"== [{r},{a},{b}]", flush=True)

    def rep(name: str, fn: Any, out: torch.Tensor) -> None:
        fn()
        ok = torch.allclose(out.float(), ref.float(), rtol=2e-2, atol=5e-2)
        ts = [do_bench(fn, warmup=25, rep=200) for _ in range(3)]
        print(f"  {name:40s} {' '.join(f'{t * 1e3:6.1f}' for t in ts)} us  "
              f"{moved / (min(ts) * 1e-3) / 1e12:4.2f} TB/s {'ok' if ok else 'WRONG'}", flush=True)

    res = exe(x)
    rep("exe", lambda: exe(x), res[0])
    comp = torch.compile(lambda t: t.float().sum(0).to(torch.bfloat16))
    rep("compile", lambda: comp(x), comp(x))
    out = torch.empty(a, b, device="cuda", dtype=torch.bfloat16)
    part = torch.empty(1, device="cuda")
    for name, src in variants(exe.program("cuda").source).items():
        k = load(name, src)
        for bm, bn, w in ((256, 8, 8), (512, 8, 8), (1024, 8, 8), (256, 8, 4), (128, 8, 4)):
            bn = max(bn, triton.next_power_of_2(r))
            rep(f"{name} {bm}x{bn} w{w}", lambda k=k, bm=bm, bn=bn, w=w: k[(triton.cdiv(m, bm),)](
                x, *x.stride(), *x.shape, part, 1, 1, 0, 1, out, *out.stride(), m, r,
                BLOCK_M=bm, BLOCK_N=bn, USE_I64=False, num_warps=w), out)
    for block, w in ((1024, 4), (1024, 8), (2048, 8)):
        rep(f"unrolled {block} w{w}", lambda block=block, w=w: _unrolled[(triton.cdiv(m, block),)](
            x, out, m, x.stride(0), R=r, BLOCK=block, num_warps=w), out)


def main() -> None:
    for spec in sys.argv[1].split(","):
        time_shape(*(int(v) for v in spec.split("x")))


if __name__ == "__main__":
    main()
