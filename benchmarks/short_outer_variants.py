"""Kernel forms of a sum over a short outer axis (a [R, A, B] tensor summed over dim 0,
R <= 16), on the GPU: which indexing would beat torch.compile's unrolled kernel.

    python3 benchmarks/short_outer_variants.py [--shapes 7x1999x1111,16x1024x4096]

Times, with do_bench, in one process on the same bf16 input (each checked against
torch):

- `allotment`: the compiled fusion (`suite_fusions`' sum_3d_dim0, static extents);
- `generated`: its looped kernel, launched by hand into a fixed output (no host program,
  no replay: the kernel alone), and `generated unrolled`, its unrolled variant (what the
  launcher runs for at most 16 rows) the same way (not yet run on a GPU);
- `compile`: torch.compile of the torch function;
- `divmod`: a [BM kept, BN reduced] tile whose kept index is split as `rm // B`,
  `rm % B` and recombined with the strides (the generated kernel's form);
- `flat`: the same tile indexed `rm + rn * s0` (the kept dims of a dense input are one
  contiguous index);
- `flat_t`: that tile transposed, [BN reduced, BM kept];
- `unrolled`: Inductor's form: a 1-D block of kept indices, the R rows unrolled;
- `unrolled_masked`: the same with R a run-time value, its next power of two unrolled, each
  load masked by `r < R`;
- `unrolled_2d`: that as a [BLOCK, 1] tile indexed `rm // B`, `rm % B` with the strides.

Strides and extents are run-time arguments, as in generated kernels. Nothing here is a
target figure: it decides what the code generator should emit for these reductions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]


@triton.jit
def _divmod(x_ptr, out_ptr, M, N, B, s0, s1, s2, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    i2 = (rm % B)[:, None]
    i1 = (rm // B)[:, None]
    rn = tl.arange(0, BLOCK_N)[None, :]
    mask = (rm < M)[:, None] & (rn < N)
    x = tl.load(x_ptr + (rn * s0 + i1 * s1 + i2 * s2), mask=mask, other=0).to(tl.float32)
    acc = tl.sum(x, 1)[:, None]
    tl.store(out_ptr + (i1 * B + i2), acc.to(tl.bfloat16), mask=(rm < M)[:, None])


@triton.jit
def _flat(x_ptr, out_ptr, M, N, s0, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)[None, :]
    mask = (rm < M)[:, None] & (rn < N)
    x = tl.load(x_ptr + (rm[:, None] + rn * s0), mask=mask, other=0).to(tl.float32)
    tl.store(out_ptr + rm, tl.sum(x, 1).to(tl.bfloat16), mask=rm < M)


@triton.jit
def _flat_t(x_ptr, out_ptr, M, N, s0, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)[:, None]
    mask = (rm < M)[None, :] & (rn < N)
    x = tl.load(x_ptr + (rm[None, :] + rn * s0), mask=mask, other=0).to(tl.float32)
    tl.store(out_ptr + rm, tl.sum(x, 0).to(tl.bfloat16), mask=rm < M)


@triton.jit
def _unrolled(x_ptr, out_ptr, M, s0, R: tl.constexpr, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = rm < M
    acc = tl.zeros((BLOCK,), tl.float32)
    for r in tl.static_range(R):
        acc += tl.load(x_ptr + (rm + r * s0), mask=mask, other=0).to(tl.float32)
    tl.store(out_ptr + rm, acc.to(tl.bfloat16), mask=mask)


@triton.jit
def _unrolled_masked(x_ptr, out_ptr, M, R, s0, RB: tl.constexpr, BLOCK: tl.constexpr):
    """`unrolled` with the reduced extent R a run-time value: RB = next power of two of R
    loads unrolled, each masked by `r < R` (the form that serves `?` extents)."""
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = rm < M
    acc = tl.zeros((BLOCK,), tl.float32)
    for r in tl.static_range(RB):
        acc += tl.load(x_ptr + (rm + r * s0), mask=mask & (tl.full((BLOCK,), r, tl.int32) < R), other=0).to(tl.float32)
    tl.store(out_ptr + rm, acc.to(tl.bfloat16), mask=mask)


@triton.jit
def _unrolled_2d(x_ptr, out_ptr, M, R, B, s0, s1, s2, RB: tl.constexpr, BLOCK: tl.constexpr):
    """`unrolled_masked` as a [BLOCK, 1] tile with the kept index split as `rm // B`,
    `rm % B` and recombined with the strides (the code generator's strided form)."""
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = (rm < M)[:, None]
    i2 = (rm % B)[:, None]
    i1 = (rm // B)[:, None]
    acc = tl.full((BLOCK, 1), 0, tl.float32)
    for r in tl.static_range(RB):
        i0 = tl.full((1, 1), r, tl.int32)
        acc = acc + tl.load(x_ptr + (i0 * s0 + i1 * s1 + i2 * s2), mask=mask & (i0 < R), other=0).to(tl.float32)
    tl.store(out_ptr + (i1 * B + i2), acc.to(tl.bfloat16), mask=mask)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="7x1999x1111,16x1024x4096")
    a = ap.parse_args()
    for spec in a.shapes.split(","):
        r, ka, kb = (int(v) for v in spec.split("x"))
        _time_shape(r, ka, kb)


def _time_shape(r: int, ka: int, kb: int) -> None:
    import allotment

    x = torch.randn(r, ka, kb, device="cuda").to(torch.bfloat16)
    m = ka * kb
    ref = x.float().sum(0).to(torch.bfloat16)
    moved = x.numel() * 2 + m * 2
    copy = torch.empty_like(x)
    copy_ms = do_bench(lambda: copy.copy_(x), warmup=25, rep=200)
    print(f"[{r}, {ka}, {kb}] bf16, sum over dim 0: copy of the input {copy_ms * 1e3:.1f} us", flush=True)

    def report(name: str, fn, out: torch.Tensor | None = None) -> None:  # noqa: ANN001
        res = fn()
        got = out if out is not None else (res[0] if isinstance(res, (tuple, list)) else res)
        ok = torch.allclose(got.float(), ref.float(), rtol=2e-2, atol=5e-2)
        ms = do_bench(fn, warmup=25, rep=200)
        tbps = moved / (ms * 1e-3) / 1e12
        print(f"  {name:28s} {ms * 1e3:8.1f} us  {tbps:5.2f} TB/s  {'ok' if ok else 'WRONG'}", flush=True)

    exe = allotment.compile(_fusion_text(r, ka, kb))
    report("allotment", lambda: exe(x))
    out = torch.empty(ka, kb, device="cuda", dtype=torch.bfloat16)
    generated = _generated_kernel(exe, "cuda")
    if generated is not None:  # the same kernel, launched by hand into a fixed output
        from allotment.backend import host_runtime as rt

        bm, bn, warps = rt.short_outer_blocks(m, r)
        part = torch.empty(1, device="cuda")
        report(f"generated {bm}x{bn} w{warps}, by hand", lambda: generated[(triton.cdiv(m, bm),)](
            x, *x.stride(), *x.shape, part, 1, 1, 1, 1, out, *out.stride(), m, r,
            BLOCK_M=bm, BLOCK_N=bn, USE_I64=False, num_warps=warps), out)
        unrolled = getattr(exe.program("cuda").module, "k0_unrolled_", None)
        blocks = rt.unrolled_outer_blocks(m, r)
        if unrolled is not None and blocks is not None:  # the unrolled variant, by hand
            ubm, ubn, uwarps = blocks
            report(f"generated unrolled {ubm}x{ubn} w{uwarps}", lambda: unrolled[(triton.cdiv(m, ubm),)](
                x, *x.stride(), *x.shape, part, 1, 1, 1, 1, out, *out.stride(), m, r,
                BLOCK_M=ubm, BLOCK_N=ubn, USE_I64=False, num_warps=uwarps), out)
    comp = torch.compile(lambda t: t.float().sum(0).to(torch.bfloat16))
    report("compile", lambda: comp(x))
    bn = triton.next_power_of_2(r)
    s0, s1, s2 = x.stride()
    for bm, warps in ((256, 8), (512, 8), (1024, 8), (128, 4)):
        grid = (triton.cdiv(m, bm),)
        report(f"divmod {bm}x{bn} w{warps}", lambda bm=bm, w=warps, g=grid: _divmod[g](
            x, out, m, r, kb, s0, s1, s2, BLOCK_M=bm, BLOCK_N=bn, num_warps=w), out)
        report(f"flat {bm}x{bn} w{warps}", lambda bm=bm, w=warps, g=grid: _flat[g](
            x, out, m, r, s0, BLOCK_M=bm, BLOCK_N=bn, num_warps=w), out)
        report(f"flat_t {bn}x{bm} w{warps}", lambda bm=bm, w=warps, g=grid: _flat_t[g](
            x, out, m, r, s0, BLOCK_M=bm, BLOCK_N=bn, num_warps=w), out)
    for block, warps in ((256, 4), (512, 4), (1024, 4), (1024, 8), (2048, 8)):
        grid = (triton.cdiv(m, block),)
        report(f"unrolled {block} w{warps}", lambda b=block, w=warps, g=grid: _unrolled[g](
            x, out, m, s0, R=r, BLOCK=b, num_warps=w), out)
        report(f"unrolled_masked {block} w{warps}", lambda b=block, w=warps, g=grid: _unrolled_masked[g](
            x, out, m, r, s0, RB=bn, BLOCK=b, num_warps=w), out)
        report(f"unrolled_2d {block} w{warps}", lambda b=block, w=warps, g=grid: _unrolled_2d[g](
            x, out, m, r, kb, s0, s1, s2, RB=bn, BLOCK=b, num_warps=w), out)


_GENERATED_ARGS = ["in0_ptr", "in0_s0", "in0_s1", "in0_s2", "in0_n0", "in0_n1", "in0_n2", "in1_ptr", "in1_s0",
                   "in1_s1", "in1_n0", "in1_n1", "out0_ptr", "out0_s0", "out0_s1", "M", "N"]


def _generated_kernel(exe, target: str):  # noqa: ANN001, ANN202
    """The fusion's generated looped reduction kernel, if its parameters are the ones this
    script passes (the layout of today's code generator), else None."""
    kernel = getattr(exe.program(target).module, "k0_looped_", None)
    names = list(getattr(kernel, "arg_names", []))
    return kernel if names[:len(_GENERATED_ARGS)] == _GENERATED_ARGS else None


def _fusion_text(r: int, a: int, b: int) -> str:
    return (f"func.func @s(%x: tensor<{r}x{a}x{b}xbf16>) -> tensor<{a}x{b}xbf16> {{\n"
            f"  %f = fusion.cast %x : tensor<{r}x{a}x{b}xbf16> to tensor<{r}x{a}x{b}xf32>\n"
            f"  %s = fusion.sum %f dims [0] : tensor<{r}x{a}x{b}xf32> -> tensor<{a}x{b}xf32>\n"
            f"  %y = fusion.cast %s : tensor<{a}x{b}xf32> to tensor<{a}x{b}xbf16>\n"
            f"  func.return %y : tensor<{a}x{b}xbf16>\n}}\n")


if __name__ == "__main__":
    main()
