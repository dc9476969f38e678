"""GPU benchmark: Allotment against torch eager and torch.compile, in one process.

For bias+GELU, RMSNorm, LayerNorm, softmax and add+RMSNorm (bf16; the fusions
of examples/ with their hidden size set to the benchmark's), and for a rotary
embedding, a column sum (a bias gradient), a mean over the middle axis of
[8, rows/8, hidden], a full sum to an f32 scalar and RMSNorm backward (dx and
dw; `NEW_FUSIONS` below, static hidden size, `?` rows), at 32768x4096 and
4096x32768, it checks Allotment's outputs against eager's, then reports:

- kernel time (median of triton.testing.do_bench) and bandwidth in TB/s,
  counted as (bytes of inputs + outputs) / time, and the ratio to torch.compile;
- host time per call at 8x128: wall time of many calls with the GPU work
  queued (one synchronize at the end);
- peak memory of one call over the bytes of its outputs;
- the device-to-device copy bandwidth (bytes read + written), the ceiling.

    python benchmarks/gpu_suite.py [--sizes 32768x4096,4096x32768] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import measure  # noqa: E402 (benchmarks/measure.py: the measurements, shared with fusion_suite.py)
from measure import host_us, kernel_ms, peak_over_outputs  # noqa: E402, F401 (gpu_suite.kernel_ms: profile_kernels.py)

import allotment  # noqa: E402

EXAMPLES = ROOT / "examples"
BF16 = torch.bfloat16


def fusion_text(example: str, hidden: int) -> str:
    """The example fusion with its static hidden size replaced (or a `NEW_FUSIONS` text)."""
    if example in NEW_FUSIONS:
        return NEW_FUSIONS[example](hidden)
    text = (EXAMPLES / f"{example}.mlir").read_text()
    size = "128" if example == "softmax" else "64"
    return re.sub(rf"(?<![\dfi]){size}(?!\d)", str(hidden), text)


def _rotary_text(hidden: int) -> str:
    t, f, h = f"tensor<?x{hidden}xbf16>", f"tensor<?x{hidden}xf32>", f"tensor<?x{hidden // 2}xf32>"
    return f"""func.func @rotary(%x: {t}, %cos: {t}, %sin: {t}) -> {t} {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : {t}
  %xf = fusion.cast %x : {t} to {f}
  %x1 = fusion.slice %xf [0, 0] to [%n, {hidden // 2}] step [1, 1] : {f} -> {h}
  %x2 = fusion.slice %xf [0, {hidden // 2}] to [%n, {hidden}] step [1, 1] : {f} -> {h}
  %ng = fusion.neg %x2 : {h}
  %rot = fusion.cat %ng, %x1 dim 1 : {h}, {h} -> {f}
  %cf = fusion.cast %cos : {t} to {f}
  %sf = fusion.cast %sin : {t} to {f}
  %a = fusion.mul %xf, %cf : {f}
  %b = fusion.mul %rot, %sf : {f}
  %yf = fusion.add %a, %b : {f}
  %y = fusion.cast %yf : {f} to {t}
  func.return %y : {t}
}}
"""


def _column_sum_text(hidden: int) -> str:
    return f"""func.func @column_sum(%x: tensor<?x{hidden}xbf16>) -> tensor<{hidden}xbf16> {{
  %s = fusion.sum %x dims [0] : tensor<?x{hidden}xbf16> -> tensor<{hidden}xbf16>
  func.return %s : tensor<{hidden}xbf16>
}}
"""


def _middle_mean_text(hidden: int) -> str:
    t = f"tensor<8x?x{hidden}xbf16>"
    return f"""func.func @middle_mean(%x: {t}) -> tensor<8x{hidden}xbf16> {{
  %m = fusion.mean %x dims [1] : {t} -> tensor<8x{hidden}xbf16>
  func.return %m : tensor<8x{hidden}xbf16>
}}
"""


def _full_sum_text(hidden: int) -> str:
    return f"""func.func @full_sum(%x: tensor<?x{hidden}xbf16>) -> tensor<f32> {{
  %s = fusion.sum %x dims [0, 1] : tensor<?x{hidden}xbf16> -> tensor<f32>
  func.return %s : tensor<f32>
}}
"""


def _rmsnorm_bwd_text(hidden: int) -> str:
    t, f = f"tensor<?x{hidden}xbf16>", f"tensor<?x{hidden}xf32>"
    return f"""func.func @rmsnorm_bwd(%dy: {t}, %x: {t}, %w: tensor<{hidden}xbf16>, %rstd: tensor<?x1xf32>) -> ({t}, tensor<{hidden}xbf16>) {{
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : {t}
  %dyf = fusion.cast %dy : {t} to {f}
  %xf = fusion.cast %x : {t} to {f}
  %wf = fusion.cast %w : tensor<{hidden}xbf16> to tensor<{hidden}xf32>
  %wb = fusion.broadcast_in_dim %wf [%m, {hidden}] dims [1] : tensor<{hidden}xf32> -> {f}
  %g = fusion.mul %dyf, %wb : {f}
  %gx = fusion.mul %g, %xf : {f}
  %s = fusion.mean %gx dims [1] keepdim : {f} -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %xf, %k : {f}, tensor<?x1xf32> -> {f}
  %d = fusion.sub %g, %xk : {f}
  %dxf = fusion.mul %d, %rstd : {f}, tensor<?x1xf32> -> {f}
  %dx = fusion.cast %dxf : {f} to {t}
  %xn = fusion.mul %xf, %rstd : {f}, tensor<?x1xf32> -> {f}
  %dwp = fusion.mul %dyf, %xn : {f}
  %dwf = fusion.sum %dwp dims [0] : {f} -> tensor<{hidden}xf32>
  %dw = fusion.cast %dwf : tensor<{hidden}xf32> to tensor<{hidden}xbf16>
  func.return %dx, %dw : {t}, tensor<{hidden}xbf16>
}}
"""


NEW_FUSIONS: dict[str, Callable[[int], str]] = {
    "rotary": _rotary_text,
    "column_sum": _column_sum_text,
    "middle_mean": _middle_mean_text,
    "full_sum": _full_sum_text,
    "rmsnorm_bwd": _rmsnorm_bwd_text,
}
"""Fusions written here (not in examples/): views inside one kernel, and reductions over
every axis (split across CTAs: a partials buffer and a second kernel)."""


def rotary_torch(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor]:
    xf, h = x.float(), x.shape[-1] // 2
    rot = torch.cat([-xf[:, h:], xf[:, :h]], dim=-1)
    return ((xf * cos.float() + rot * sin.float()).to(x.dtype),)


def column_sum_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.float().sum(0).to(x.dtype),)


def middle_mean_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.float().mean(1).to(x.dtype),)


def full_sum_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (x.float().sum(),)


def rmsnorm_bwd_torch(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor, rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dyf, xf = dy.float(), x.float()
    g = dyf * w.float()
    s = (g * xf).mean(-1, keepdim=True)
    dx = (g - xf * (rstd * rstd * s)) * rstd
    dw = (dyf * xf * rstd).sum(0)
    return dx.to(x.dtype), dw.to(x.dtype)


def bias_gelu_torch(x: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor]:
    return (F.gelu(x + b, approximate="tanh"),)


def rmsnorm_torch(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor]:
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()
    return (y.to(x.dtype),)


def layernorm_torch(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor]:
    return (F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),)


def softmax_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (torch.softmax(x, dim=-1),)


def add_rmsnorm_torch(x: torch.Tensor, r: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    hf = x.float() + r.float()
    y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
    return hf.to(x.dtype), y.to(x.dtype)


def inputs_for(name: str, rows: int, hidden: int) -> list[torch.Tensor]:
    g = torch.Generator(device="cuda").manual_seed(0)
    mat = lambda: torch.randn(rows, hidden, device="cuda", dtype=BF16, generator=g)
    vec = lambda: torch.randn(hidden, device="cuda", dtype=BF16, generator=g)
    return {
        "bias_gelu": lambda: [mat(), vec()],
        "rmsnorm": lambda: [mat(), vec()],
        "layernorm": lambda: [mat(), vec(), vec()],
        "softmax": lambda: [mat()],
        "add_rmsnorm": lambda: [mat(), mat(), vec()],
        "rotary": lambda: [mat(), mat(), mat()],
        "column_sum": lambda: [mat()],
        "middle_mean": lambda: [mat().view(8, rows // 8, hidden)],
        "full_sum": lambda: [mat()],
        "rmsnorm_bwd": lambda: [mat(), mat(), vec(), torch.rand(rows, 1, device="cuda", generator=g) + 0.5],
    }[name]()


FUSIONS: dict[str, Callable[..., tuple[torch.Tensor, ...]]] = {
    "bias_gelu": bias_gelu_torch,
    "rmsnorm": rmsnorm_torch,
    "layernorm": layernorm_torch,
    "softmax": softmax_torch,
    "add_rmsnorm": add_rmsnorm_torch,
    "rotary": rotary_torch,
    "column_sum": column_sum_torch,
    "middle_mean": middle_mean_torch,
    "full_sum": full_sum_torch,
    "rmsnorm_bwd": rmsnorm_bwd_torch,
}


def copy_tbps(rows: int, hidden: int) -> float:
    """Copy bandwidth for a bf16 [rows, hidden] tensor (read + written)."""
    return measure.copy_tbps(2 * rows * hidden * 2)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="32768x4096,4096x32768")
    p.add_argument("--fusions", default=",".join(FUSIONS))
    p.add_argument("--out", default=None)
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = p.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    names = args.fusions.split(",")
    results: list[dict] = []
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    import triton

    print(f"triton {triton.__version__}", flush=True)
    for rows, hidden in sizes:
        ceiling = copy_tbps(rows, hidden)
        print(f"copy {rows}x{hidden}: {ceiling:.2f} TB/s", flush=True)
        for name in names:
            ref = FUSIONS[name]
            xs = inputs_for(name, rows, hidden)
            exe = allotment.compile(fusion_text(name, hidden))
            outs = exe(*xs)
            expect = ref(*xs)
            for o, e in zip(outs, expect):
                torch.testing.assert_close(o, e, rtol=2e-2, atol=2e-2)
            nbytes = sum(x.numel() * x.element_size() for x in xs) + sum(o.numel() * o.element_size() for o in outs)
            row = {"fusion": name, "shape": f"{rows}x{hidden}", "copy_tbps": ceiling}
            variants: dict[str, Callable[[], tuple]] = {"eager": lambda: ref(*xs), "allotment": lambda: exe(*xs)}  # noqa: B023
            if not args.no_compile:
                compiled = torch.compile(ref)
                compiled(*xs)
                variants["compile"] = lambda: compiled(*xs)  # noqa: B023
            for label, fn in variants.items():
                ms = kernel_ms(fn)
                row[f"{label}_ms"] = ms
                row[f"{label}_tbps"] = nbytes / (ms * 1e-3) / 1e12
                row[f"{label}_peak_over_out"] = peak_over_outputs(fn)
            for o, e in zip(exe(*xs), expect):  # again, through the direct launch path
                torch.testing.assert_close(o, e, rtol=2e-2, atol=2e-2)
            results.append(row)
            print(json.dumps(row), flush=True)
            del xs, outs, expect
            torch.cuda.empty_cache()
    host: dict[str, dict[str, float]] = {}
    for name in names:
        ref = FUSIONS[name]
        xs = inputs_for(name, 8, 128)
        exe = allotment.compile(fusion_text(name, 128))
        exe(*xs)
        entry = {"eager": host_us(lambda: ref(*xs)), "allotment": host_us(lambda: exe(*xs))}  # noqa: B023
        if not args.no_compile:
            compiled = torch.compile(ref)
            compiled(*xs)
            entry["compile"] = host_us(lambda: compiled(*xs))  # noqa: B023
        host[name] = entry
        print(json.dumps({"host_us_8x128": name, **entry}), flush=True)
    print()
    print(f"{'fusion':<12} {'shape':<11} {'eager':>6} {'compile':>8} {'allot':>6} {'ratio':>6} {'%copy':>6} {'peak/out e/c/a':>16}")
    for r in results:
        c = r.get("compile_tbps", float("nan"))
        print(
            f"{r['fusion']:<12} {r['shape']:<11} {r['eager_tbps']:6.2f} {c:8.2f} {r['allotment_tbps']:6.2f} "
            f"{r['allotment_tbps'] / c:6.2f} {100 * r['allotment_tbps'] / r['copy_tbps']:5.0f}% "
            f"{r['eager_peak_over_out']:4.1f}/{r.get('compile_peak_over_out', float('nan')):4.1f}/{r['allotment_peak_over_out']:4.1f}"
        )
    print(f"\n{'host us/call 8x128':<20} {'eager':>7} {'compile':>8} {'allot':>7}")
    for name, e in host.items():
        print(f"{name:<20} {e['eager']:7.1f} {e.get('compile', float('nan')):8.1f} {e['allotment']:7.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"results": results, "host_us": host}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
