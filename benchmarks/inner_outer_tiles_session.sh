#!/usr/bin/env bash
# One GPU call for the inner-outer kernel's rows of 1025 to 2048 (LayerNorm and RMSNorm
# backward): held as two tiles (rows of 1111 in 1024 + 128 lanes) on 4 warps with four
# programs an SM, against the form before (one 2048-lane tile, 16 warps, two an SM). From the
# repository root on the GPU machine, with .whl carried:
#
#   ALLOT_COMMIT=<commit> bash benchmarks/inner_outer_tiles_session.sh OUT_DIR
#
# `inner_outer_sweep.py` (every configuration's outputs checked against torch on the GPU,
# then kernel-only CUDA-graph replay, 5 interleaved repeats with torch.compile static and
# eager beside) at the suite's odd size and at the row lengths the rule moves: 2048 (one tile,
# now 4 warps), 1536 (1024 + 512), 768 (512 + 256, two rows a step). "old" is the form before;
# `auto:default` is the rule now. Output: sweep.log, gpu.txt.
set -u
out=${1:?usage: inner_outer_tiles_session.sh OUT_DIR}
mkdir -p "$out"
. benchmarks/session_common.sh
record_gpu
S="python3 benchmarks/inner_outer_sweep.py --fusions layernorm_bwd,rmsnorm_bwd"
{
  echo "== bf16 12345x1111 (old: 264:1x1x16:one)"
  timeout 200 $S --shapes 12345x1111 \
    --configs 264:1x1x16:one,528:1x1x4:one,auto:default,264:default,792:default,1056:default,528:1x1x8
  echo "== bf16 16384x2048 (old: 264:1x1x16)"
  timeout 90 $S --shapes 16384x2048 --configs 264:1x1x16,auto:default,528:1x1x8,264:1x1x8
  echo "== bf16 16384x1536 (old: 264:1x1x16:one)"
  timeout 80 $S --shapes 16384x1536 --configs 264:1x1x16:one,auto:default:one,auto:default
  echo "== bf16 8192x768 (old: auto:default:one)"
  timeout 60 $S --shapes 8192x768 --configs auto:default:one,auto:default
  echo "== f32 12345x1111 (old: 264:1x1x16:one)"
  timeout 80 $S --dtype f32 --shapes 12345x1111 --configs 264:1x1x16:one,auto:default,792:default
} > "$out/sweep.log" 2>&1
tail -n 80 "$out/sweep.log"
