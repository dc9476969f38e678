#!/usr/bin/env bash
# One GPU session of the skeptic's method (benchmarks/skeptic_suite.py, memory_suite.py),
# in one device call, from the repository root, with .whl (xdsl and its needs) and .nvf
# (nvFuser, packed) carried:
#
#   ALLOT_COMMIT=<commit> bash benchmarks/skeptic_session.sh "$OUT" [WALL_S]
#
# WALL_S (default 540) is the whole session's wall-clock budget in seconds, in this order:
# the setup (wheels, nvFuser unpacked and its import checked: tens of seconds); the memory
# table on GPU 0 and, on a second GPU, the host-cost table with reduce-overhead, side by
# side (each cut at 150 s; about a minute expected); then the suite, its 150 groups (180
# cases past the small size, 30 at it) bf16 first, then f32 `?` and f16 static, sharded by
# fusion over every GPU (one process per GPU), each stopping before a group that would end
# past its budget, WALL_S minus the time spent so far minus RESERVE_S (default 60), and
# killed at that budget + 40 s (a group in flight is then "not run"); the merge. So the
# session ends by WALL_S - 15 s at the latest. On one H200 the budget is expected to cover
# bf16 and part of f32/f16 (the rest is marked "not run"); on two, all of it (not yet run).
# nvFuser gets a static and a `?` definition per group on two GPUs or more; on one, only the
# `?` one (NVF_EXTENTS=both|dynamic overrides), timed for both rows, to halve its compiles.
# SIZES=small,odd (or large): only those sizes' groups; SKIP_MEMORY=1: no memory table. So one
# run may take two calls on one commit when one call cannot hold it all (on a slow host, or
# with max-autotune's warming): `SIZES=small,odd` first, then `SIZES=large MAX_AUTOTUNE=1
# SKIP_MEMORY=1`, and `skeptic_suite.py --merge A.json B.json --fill-plan` (the second call's
# rows fill the cases the first marked "not run").
# SMOKE=1: three fusions in bf16 and f32 and two memory cases (about 1 to 2 minutes), to
# check the GPU-only paths (graph capture of every side, nvFuser) before the full session.
# MAX_AUTOTUNE=1 adds torch.compile's max-autotune-no-cudagraphs column at the large size
# while the run is under MAX_AUTOTUNE_S (default 120) seconds (slow: tens of seconds a compile,
# so warmed first: step 0 below; its autotuning then runs beside other processes on the GPU).
#
# Files in OUT (at most 8 come back): skeptic_suite.json (every dtype and size, with the
# commit), skeptic_suite.md (generated from it), memory.json, memory.log, host_cost.json,
# suite.log (the shards' tails), session.log, gpu.txt.
set -u
out=${1:?usage: skeptic_session.sh OUT_DIR [WALL_S]}
wall=${2:-540}
reserve=${RESERVE_S:-60}
mkdir -p "$out"
t0=$SECONDS
exec > >(tee "$out/session.log") 2>&1
. benchmarks/session_common.sh
. benchmarks/nvfuser_env.sh
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" >> "$out/gpu.txt"
cat "$out/gpu.txt"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$gpus" -ge 1 ] || gpus=1
# CPU_CHECK=1: the same session on this machine's CPU, one fusion at tiny extents (checks the script)
check=() mem_check=()
if [ "${CPU_CHECK:-0}" = 1 ]; then
  check=(--cpu-check --fusions rmsnorm_fwd --dtypes bf16 --repeats 2 --host-calls 3 --compile-backend aot_eager)
  mem_check=(--device cpu --scale 0.002 --only attention,adam)
elif [ "${SMOKE:-0}" = 1 ]; then  # a short GPU check of the whole path before the full session
  check=(--fusions rmsnorm_fwd,kv_cat,cross_entropy --dtypes bf16,f32)
  mem_check=(--only attention,adam)
fi
# 0. with MAX_AUTOTUNE=1: WARM_PROCS (default 3) processes compile every large group's
# max-autotune build once beside the memory table, for at most WARM_S (default 200) seconds,
# so that the suite's own compiles of them hit Inductor's caches (`--warm-max-autotune`)
wpids=()
if [ "${MAX_AUTOTUNE:-0}" = 1 ] && [ "${WARM_PROCS:-3}" -gt 0 ] && [[ -z "${SIZES:-}" || ",${SIZES}," == *,large,* ]]; then
  for k in $(seq 0 $((${WARM_PROCS:-3} - 1))); do
    timeout $((${WARM_S:-200} + 30)) python3 benchmarks/skeptic_suite.py --warm-max-autotune --budget-s "${WARM_S:-200}" \
      --shard "$k/${WARM_PROCS:-3}" "${check[@]}" > "/tmp/warm_$k.log" 2>&1 &
    wpids+=($!)
  done
  export MAX_AUTOTUNE_WARMED=1
fi
# 1. the memory table (GPU 0) and, on a second GPU, the host-cost table, before the suite
if [ "$gpus" -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=1 timeout 150 python3 benchmarks/host_cost.py --out "$out/host_cost.json" > /tmp/host_cost.log 2>&1 &
  hpid=$!
fi
if [ "${SKIP_MEMORY:-0}" != 1 ]; then
  CUDA_VISIBLE_DEVICES=0 timeout 150 python3 benchmarks/memory_suite.py "${mem_check[@]}" --out "$out/memory.json" \
    > "$out/memory.log" 2>&1
  echo "memory: exit $? at $((SECONDS - t0)) s"
  tail -n 16 "$out/memory.log"
fi
if [ "$gpus" -ge 2 ]; then wait "$hpid"; echo "host_cost: exit $? at $((SECONDS - t0)) s"; tail -n 16 /tmp/host_cost.log; fi
for p in "${wpids[@]}"; do wait "$p"; done
[ ${#wpids[@]} -gt 0 ] && { echo "max-autotune warmed at $((SECONDS - t0)) s: $(grep -h "^warm: .* s$" /tmp/warm_*.log | wc -l) builds"; grep -h "failed\|stopped" /tmp/warm_*.log; }
# 2. the suite, sharded by fusion over every GPU, under what is left of the budget
budget=$((wall - (SECONDS - t0) - reserve))
echo "setup and memory $((SECONDS - t0)) s; suite budget $budget s over $gpus GPU(s)"
extra=(--nvfuser-extents "${NVF_EXTENTS:-$([ "$gpus" -ge 2 ] && echo both || echo dynamic)}")
[ "${MAX_AUTOTUNE:-0}" = 1 ] && extra+=(--max-autotune --max-autotune-budget-s "${MAX_AUTOTUNE_S:-120}")
[ -n "${SIZES:-}" ] && extra+=(--sizes "$SIZES")
rm -f /tmp/skeptic_*.json
pids=()
for k in $(seq 0 $((gpus - 1))); do
  CUDA_VISIBLE_DEVICES=$k ALLOT_CACHE_DIR=/tmp/allot-cache-$k timeout $((budget + 40)) \
    python3 benchmarks/skeptic_suite.py --shard "$k/$gpus" --budget-s "$budget" "${extra[@]}" \
    "${check[@]}" --out "/tmp/skeptic_$k.json" > "/tmp/skeptic_$k.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; echo "suite shard (pid $p): exit $?"; done
for k in $(seq 0 $((gpus - 1))); do echo "== shard $k"; tail -n 40 "/tmp/skeptic_$k.log"; done > "$out/suite.log"
python3 benchmarks/skeptic_suite.py --merge /tmp/skeptic_*.json --fill-plan --out "$out/skeptic_suite.json" \
  --markdown "$out/skeptic_suite.md"
echo "merged: exit $? at $((SECONDS - t0)) s"
sed -n '/## Summary/,/## Cases/p' "$out/skeptic_suite.md"
echo "session: $((SECONDS - t0)) s"
