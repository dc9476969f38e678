"""The generated tiled matmul of a `library` kernel scheduled `tiled` (or `tiled_if`).

`alloc-place` decides which library kernels run tiled (`analysis/library_matmul.py`:
small 2-D matmuls and linears of one float type); this module emits what the backend
needs for one: a Triton function, its launcher and its argument layout.

The kernel: one program per [BLOCK_M, BLOCK_N] tile of each output matrix (a batched
problem's matrices one after another along the grid), looping over K in
steps of `TILE_K` with `tl.dot` accumulating in f32 (IEEE f32 products for f32
operands: torch's default, TF32 off), the bias added in f32 to the accumulator, and
one rounding to the output type at the store, as cuBLAS's bias epilogue does. Every
operand is read through its own strides (a transposed weight costs nothing) with
masks, so any extent works. `host_runtime.tiled_matmul_blocks` picks the tile.

The kernel takes the generated kernels' constexprs (BLOCK_M, BLOCK_N, USE_I64), so it
is launched, recorded and replayed as they are (`rt.launch`, `backend/replay.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from allotment.analysis.library_matmul import LibraryMatmul
from allotment.backend.identifiers import comment
from allotment.backend.kernels.prelude import to_dtype
from allotment.dtypes import triton_dtype

TILE_K = 32
"""Reduced indices a step: 64 bytes of a 16-bit row (the minimum for `tl.dot` is 16)."""


@dataclass
class TiledMatmulKernel:
    """The generated parts of one tiled library kernel."""

    name: str
    """The kernel's name in the IR (for the comment)."""
    function: str
    """The Triton function's name."""
    source: str
    launcher: str
    layout: str
    """Its `kernel_layouts()` entry: (functions, tensor positions, loose, count, params)."""
    op_name: str
    helpers: set[str] = field(default_factory=set)
    """The module prelude's helpers its function calls (`prelude.to_dtype`'s `_to_bf16`)."""

    @property
    def comment(self) -> str:
        return f"# alloc.kernel {comment(self.name)} library: 1 {comment(self.op_name)}, tiled"


def generate(lm: LibraryMatmul, kernel_name: str, function: str, launch: str, target: str,
             n_in: int) -> TiledMatmulKernel:
    """The Triton function `function` and launcher `launch(in0, ..., out0, huge)` of a
    tiled library kernel with `n_in` inputs (names come from the caller's namespace). The
    kernel's parameters are named by role (lhs, rhs, bias): one input may be both operands.
    A batched problem has B times the programs of one matrix; each operand's batch
    stride is 0 where it has no batch dim or a batch extent of 1 (broadcast)."""
    a, b, c = lm.lhs, lm.rhs, lm.bias
    helpers: dict[str, None] = {}
    out_type = triton_dtype(lm.op.results[0].type.element_type)
    params = ["lhs_ptr", "lhs_sb", "lhs_s0", "lhs_s1", "rhs_ptr", "rhs_sb", "rhs_s0", "rhs_s1"]
    if c is not None:
        params += ["bias_ptr", "bias_s0"]
    params += ["out0_ptr", "out0_sb", "out0_s0", "out0_s1", "M", "N", "K"]
    # b[k, n]: the matmul's rhs [K, N], or the linear's weight [N, K] read transposed
    sk, sn = ("rhs_s1", "rhs_s0") if lm.weight else ("rhs_s0", "rhs_s1")
    precision = ', input_precision="ieee"' if out_type == "tl.float32" else ""
    body = [
        "pid = tl.program_id(0)",
        "tiles_n = (N + BLOCK_N - 1) // BLOCK_N",
        "tiles = (M + BLOCK_M - 1) // BLOCK_M * tiles_n",
        "batch = pid // tiles",
        "pid = pid % tiles",
        "rm = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)",
        "rn = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)",
        "if USE_I64:",
        "    rm = rm.to(tl.int64)",
        "    rn = rn.to(tl.int64)",
        "    batch = batch.to(tl.int64)",
        "mask_m = (rm < M)[:, None]",
        "mask_n = (rn < N)[None, :]",
        "acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)",
        f"for start in range(0, K, {TILE_K}):",
        f"    rk = start + tl.arange(0, {TILE_K})",
        "    if USE_I64:",
        "        rk = rk.to(tl.int64)",
        "    lhs = tl.load(lhs_ptr + (batch * lhs_sb + rm[:, None] * lhs_s0 + rk[None, :] * lhs_s1), "
        "mask=mask_m & (rk < K)[None, :], other=0)",
        f"    rhs = tl.load(rhs_ptr + (batch * rhs_sb + rk[:, None] * {sk} + rn[None, :] * {sn}), "
        "mask=(rk < K)[:, None] & mask_n, other=0)",
    ]
    if target != "cuda" and out_type != "tl.float32":
        # Triton's interpreter multiplies bf16 tiles as raw 16-bit integers: it gets f32
        # tiles (each product of two 16-bit floats is exact in f32, as on tensor cores)
        body += ["    lhs = lhs.to(tl.float32)", "    rhs = rhs.to(tl.float32)"]
        precision = ', input_precision="ieee"'
    body.append(f"    acc = tl.dot(lhs, rhs, acc{precision})")
    if c is not None:
        body.append("acc = acc + tl.load(bias_ptr + rn * bias_s0, mask=rn < N, other=0).to(tl.float32)[None, :]")
    body.append(f"tl.store(out0_ptr + (batch * out0_sb + rm[:, None] * out0_s0 + rn[None, :] * out0_s1), "
                f"{to_dtype('acc', out_type, target, helpers.setdefault)}, mask=mask_m & mask_n)")
    lines = [f"    {line}" for line in body]
    source = (f"@triton.jit\ndef {function}({', '.join(params)}, BLOCK_M: tl.constexpr, "
              "BLOCK_N: tl.constexpr, USE_I64: tl.constexpr):\n" + "\n".join(lines) + "\n")
    out_rank = max(lm.lhs_rank, lm.rhs_rank)

    def batch_stride(t: str, rank: int) -> str:
        return f"({t}_s[0] if {t}.shape[0] != 1 else 0)" if rank == 3 else "0"

    ins = [f"in{i}" for i in range(n_in)]
    strided = list(dict.fromkeys([f"in{a}", f"in{b}"] + ([f"in{c}"] if c is not None else []) + ["out0"]))
    r, q = lm.lhs_rank - 2, lm.rhs_rank - 2  # the matrix dims' first index in each operand
    args = [f"in{a}", batch_stride(f"in{a}", lm.lhs_rank), f"in{a}_s[{r}]", f"in{a}_s[{r + 1}]",
            f"in{b}", batch_stride(f"in{b}", lm.rhs_rank), f"in{b}_s[{q}]", f"in{b}_s[{q + 1}]"]
    if c is not None:
        args += [f"in{c}", f"in{c}_s[0]"]
    o = out_rank - 2
    args += ["out0", "out0_s[0]" if out_rank == 3 else "0", f"out0_s[{o}]", f"out0_s[{o + 1}]", "M", "N", "K"]
    tensors = [k for k, x in enumerate(args) if x.startswith(("in", "out")) and x.isidentifier()]
    launcher = "\n".join([
        f"def {launch}({', '.join(ins)}, out0, huge):",
        "    M, N = out0.shape[-2:]",
        "    B = out0.shape[0]" if out_rank == 3 else "    B = 1",
        f"    K = in{a}.shape[-1]",
        "    if M == 0 or N == 0 or B == 0:",
        "        return",
        "    use_i64 = huge or B * max(M, N) * max(K, 1) >= 2**31 or B * M * N >= 2**31",
        f"    {', '.join(f'{t}_s' for t in strided)} = {', '.join(f'{t}.stride()' for t in strided)}",
        f"    args = ({', '.join(args)})",
        "    bm, bn, warps = rt.tiled_matmul_blocks(M, N, K)",
        f"    rt.launch({function}, (B * -(-M // bm) * -(-N // bn),), args, bm, bn, use_i64, warps)",
    ])
    layout = f"(({function},), ({', '.join(str(k) for k in tensors)},), (), {len(args)}, ())"
    return TiledMatmulKernel(kernel_name, function, source, launcher, layout, lm.op.name, set(helpers))
