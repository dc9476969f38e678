"""GPU correctness run (not collected by pytest): compiled CUDA execution vs the reference.

Runs every example and N random fusions (tests/random_fusion.py) on CUDA
tensors, comparing Allotment's outputs with the reference evaluator's on the
same inputs, four times (the second call takes the direct launch path and is
recorded, the last two are replayed, on copies of the inputs).

    python3 tests/gpu/check_cuda.py --count 100
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from random_fusion import random_fusion  # noqa: E402

import allotment  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import evaluate, random_inputs  # noqa: E402

EXAMPLE_SHAPES = {
    "rmsnorm": {"x": (37, 64)}, "layernorm": {"x": (37, 64)}, "softmax": {"x": (37, 128)},
    "bias_gelu": {"x": (37, 64)}, "add_rmsnorm": {"x": (37, 64), "r": (37, 64)},
}


def tolerance(text: str) -> dict[str, float]:
    if "bf16" in text:
        return dict(rtol=5e-2, atol=5e-2)
    if "f16" in text:
        return dict(rtol=5e-3, atol=5e-3)
    return dict(rtol=1e-4, atol=1e-4)


REPLAYED = [0, 0]
"""(programs checked, programs whose later calls were replayed: `backend/replay.py`)."""


def check(text: str, shapes: dict, seed: int) -> None:
    """Four calls: the first compiles (JIT path), the second is recorded, the last two are
    replayed where the program allows it, on copies of the inputs at other addresses."""
    f = find_function(parse_module(text))
    inputs = random_inputs(f, shapes, seed=seed, device="cuda")
    ref = evaluate(f, inputs)
    exe = allotment.compile(text)
    for call in range(4):
        args = inputs if call < 2 else [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        out = exe(*args)
        for r, o in zip(ref, out):
            torch.testing.assert_close(o, r, equal_nan=True, **tolerance(text))
    replayer = exe.program("cuda").replayer
    REPLAYED[0] += 1
    REPLAYED[1] += bool(replayer is not None and replayer.recorded)


BN_STATS = """func.func @f(%x: tensor<?x?x?xbf16>) -> (tensor<?xf32>, tensor<?xf32>) {
  %xf = fusion.cast %x : tensor<?x?x?xbf16> to tensor<?x?x?xf32>
  %v, %m = fusion.var_mean %xf dims [0, 2] correction 0 : tensor<?x?x?xf32> -> tensor<?xf32>, tensor<?xf32>
  func.return %v, %m : tensor<?xf32>, tensor<?xf32>
}
"""


def check_launch_path() -> None:
    """The direct launch hands Triton data pointers (`launch.launch_kernel`): a CUDA program
    refuses a CPU first input before any launch; an inner split with one split (empty
    partials, no arena) and with several (an arena) matches the reference, twice each."""
    from allotment.errors import RunError

    exe = allotment.compile((ROOT / "examples" / "rmsnorm.mlir").read_text())
    x, w = torch.randn(8, 64, dtype=torch.bfloat16), torch.randn(64, dtype=torch.bfloat16)
    try:
        exe.program("cuda")(x, w)
    except RunError as e:
        assert "runs its kernels on CUDA" in str(e), e
    else:
        raise AssertionError("a CUDA program ran on CPU tensors")
    for shape in ((4, 8, 32), (2, 3, 20000)):  # 8 channels of 128: one split; 3 of 40000: splits
        check(BN_STATS, {"x": shape}, 0)


def main() -> int:
    check_launch_path()
    print("launch path: passed", flush=True)
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=100)
    args = p.parse_args()
    t0 = time.time()
    for name, shapes in EXAMPLE_SHAPES.items():
        check((ROOT / "examples" / f"{name}.mlir").read_text(), shapes, 0)
    print(f"examples: {len(EXAMPLE_SHAPES)} passed", flush=True)
    failures = 0
    for seed in range(args.count):
        text, shapes, _ = random_fusion(random.Random(seed))
        try:
            check(text, shapes, seed)
        except Exception as e:  # report every mismatch, keep going
            failures += 1
            print(f"seed {seed}: {type(e).__name__}: {str(e)[:400]}", flush=True)
    print(f"random fusions on cuda: {args.count - failures} passed, {failures} failed "
          f"({time.time() - t0:.0f} s); calls replayed in {REPLAYED[1]} of {REPLAYED[0]} programs", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
