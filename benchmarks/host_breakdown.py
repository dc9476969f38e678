"""Where the host time of one call goes, on the GPU: the parts, each timed on its own.

    python3 benchmarks/host_breakdown.py [--fusion rmsnorm_fwd] [--dtype bf16] [--calls 3000]

For a suite fusion at its small size with `?` extents (the case the suite's host
column reports), prints µs per call of:

- the whole call (`exe(*xs)`, calls queued, one synchronize at the end);
- the same with every launch replaced by a no-op (the host program alone);
- `launch.launch_kernel` on the call's recorded arguments (our launch layer);
- Triton's compiled launcher (`CompiledKernel.run`) with tensor arguments and with
  their `data_ptr()` ints (Triton's C launcher asks the driver about each tensor's
  pointer: `cuPointerGetAttribute`; an int is taken as it is);
- `torch.empty` of the output, the current-stream query;
- a cProfile of the whole call, top functions by own time.

Nothing here is a target figure; `fusion_suite.py` gives those.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import suite_fusions  # noqa: E402
from measure import host_us as per_call_us  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402


def _kernel_parts(kernel, grid, a, cx, warps, n: int, show_launcher: bool) -> None:  # noqa: ANN001
    """Times our launch layer and Triton's compiled launcher on one recorded launch."""
    bm, bn, i64 = cx["BLOCK_M"], cx["BLOCK_N"], cx["USE_I64"]
    name = getattr(getattr(kernel, "fn", None), "__name__", "?")
    print(f"  {name}: grid {grid}, warps {warps}, {len(a)} arguments")
    print(f"    launch.launch_kernel           {per_call_us(lambda: launch.launch_kernel(kernel, grid, a, bm, bn, i64, warps), n):6.2f}")
    reg = launch._KERNELS.get(id(kernel))
    plan = next(iter(reg.direct.values())) if reg is not None and reg.direct else None
    if plan is None:
        print("    (no direct entry: compiled launcher not recorded)")
        return
    run = plan.launcher
    function, metadata = (plan.head[4], plan.head[5]) if plan.fn is run else (None, None)
    stream = torch._C._cuda_getCurrentRawStream(torch._C._cuda_getDevice())
    cv = (bm, bn, i64)
    g = (grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1)
    ptrs = [x.data_ptr() if isinstance(x, torch.Tensor) else x for x in a]
    kind = "Triton's C launch function (raw_launcher)" if plan.fn is not run else "the launcher object"
    print(f"    direct call through {kind}")
    print(f"    CallPlan.call, int ptrs        {per_call_us(lambda: plan.call(g, stream, [*ptrs, *cv]), n):6.2f}")
    if plan.fn is run:
        print(f"    CompiledKernel.run, tensors    {per_call_us(lambda: run(*g, stream, function, metadata, None, None, None, *a, *cv), n):6.2f}")
    print(f"    launcher type {type(run).__name__}")
    if show_launcher:
        import inspect

        print(inspect.getsource(type(run).__call__))


def _floor(n: int) -> None:
    """What any launch and allocation costs on this machine, without Allotment: an empty
    Triton kernel through its compiled launcher, torch's smallest eager ops."""
    import triton

    @triton.jit
    def _empty(p):
        pass

    x = torch.zeros(16, device="cuda")
    y = torch.empty_like(x)
    k = _empty[(1,)](x)
    stream = torch._C._cuda_getCurrentRawStream(torch._C._cuda_getDevice())
    run, fn, md = k.run, k.function, k.packed_metadata
    ptr = x.data_ptr()
    print("  floor (no Allotment):")
    print(f"    empty Triton kernel, launcher  {per_call_us(lambda: run(1, 1, 1, stream, fn, md, None, None, None, ptr), n):6.2f}")
    from allotment.backend import raw_launcher

    raw = raw_launcher.plan(run, fn, md)
    print(f"    same, raw_launcher plan        {per_call_us(lambda: raw.call((1,), stream, [ptr]), n):6.2f}"
          f" ({'C function' if raw.fn is not run else 'launcher object'})")
    print(f"    torch.empty((16,))             {per_call_us(lambda: torch.empty((16,), device='cuda'), n):6.2f}")
    print(f"    torch.neg(x, out=y)            {per_call_us(lambda: torch.neg(x, out=y), n):6.2f}")
    from allotment.backend import host_runtime as rt

    arena = torch.empty(4096, dtype=torch.int8, device="cuda")
    print(f"    rt.slot of an arena (a view)   {per_call_us(lambda: rt.slot(arena, 512, torch.float32, (8, 64)), n):6.2f}")
    print(f"    torch.neg(x)                   {per_call_us(lambda: torch.neg(x), n):6.2f}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fusion", default="rmsnorm_fwd")
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--show-launcher", action="store_true", help="print the source of Triton's launcher class")
    args = p.parse_args()
    f = suite_fusions.FUSIONS[args.fusion]
    xs = f.make_inputs("small", args.dtype, "cuda")
    exe = allotment.compile(f.text(args.dtype, True, "small"))
    exe(*xs)
    n = args.calls
    print(f"{args.fusion} {args.dtype} ? small, {tuple(xs[0].shape)}: µs per call")
    print(f"  whole call                       {per_call_us(lambda: exe(*xs), n):6.2f}")

    recorded: list[tuple] = []

    def record(kernel, grid, a, constexprs, warps) -> None:  # noqa: ANN001
        recorded.append((kernel, grid, a, dict(constexprs), warps))

    with launch.intercepted(record):
        exe(*xs)
    with launch.intercepted(lambda *a: None):
        print(f"  host program, launches no-ops    {per_call_us(lambda: exe(*xs), n):6.2f}")
    print(f"  kernels launched per call: {len(recorded)}")
    for kernel, grid, a, cx, warps in recorded:
        _kernel_parts(kernel, grid, a, cx, warps, n, args.show_launcher)
    out = exe(*xs)[0]
    shape, dt, dev = tuple(out.shape), out.dtype, out.device
    empty = torch.empty
    print(f"  torch.empty of the output        {per_call_us(lambda: empty(shape, dtype=dt, device=dev), n):6.2f}")
    raw, getdev = torch._C._cuda_getCurrentRawStream, torch._C._cuda_getDevice
    print(f"  current raw stream               {per_call_us(lambda: raw(getdev()), n):6.2f}")
    _floor(n)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        exe(*xs)
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
