#!/usr/bin/env bash
# A sweep of Allotment's environment knobs over suite fusions, timed by the skeptic suite's
# method (kernel-only, CUDA-graph replay, interleaved repeats; Allotment and the copy only:
# --no-compile, no nvFuser), each configuration in its own process and program cache. For
# the knobs that change a schedule (ALLOT_SPLIT_PROGRAMS, ALLOT_INNER_SPLIT_*, the
# ALLOT_<KIND>_BLOCKS overrides) before any rule is changed. From the repository root on
# the GPU machine, with .whl carried:
#
#   CONFIGS="default p2112:ALLOT_SPLIT_PROGRAMS=2112 w8:ALLOT_INNER_SPLIT_BLOCKS=1x1024x8" \
#     FUSIONS=batchnorm_fwd,bn_stats bash benchmarks/env_sweep.sh OUT_DIR
#
# CONFIGS: space-separated NAME[:VAR=VALUE[,VAR=VALUE...]] ("default": none set). FUSIONS and
# DTYPES (default bf16) and SIZES (default: all) pick the cases. Prints one line per config and case:
# config, fusion, extents, size, Allotment's median us [min-max], % of copy; writes
# OUT_DIR/<config>.json (the suite's results file) and .log. CPU_CHECK=1 runs the same at the
# tiny extents on the CPU (`skeptic_suite.py --cpu-check`: checks the script, times nothing).
# The default configs sweep BatchNorm's statistics kernel (`inner_split_blocks`, and the split
# count through ALLOT_SPLIT_PROGRAMS), which read 65.6% of DRAM bandwidth in Nsight Compute on
# an H200 on 2026-12-07 (1280 programs of 4 warps, one partial wave).
set -u
out=${1:?usage: env_sweep.sh OUT_DIR}
mkdir -p "$out"
if [ -z "${CPU_CHECK:-}" ]; then . benchmarks/session_common.sh; fi
configs=${CONFIGS:-"default p2112:ALLOT_SPLIT_PROGRAMS=2112 p4224:ALLOT_SPLIT_PROGRAMS=4224 w8:ALLOT_INNER_SPLIT_BLOCKS=1x1024x8 n2048w8:ALLOT_INNER_SPLIT_BLOCKS=1x2048x8 p2112w8:ALLOT_SPLIT_PROGRAMS=2112,ALLOT_INNER_SPLIT_BLOCKS=1x1024x8"}
fusions=${FUSIONS:-batchnorm_fwd,bn_stats}
check=()
[ "${CPU_CHECK:-0}" = 1 ] && check=(--cpu-check --repeats 2 --host-calls 3)
for config in $configs; do
  name=${config%%:*}
  settings=()
  if [ "$config" != "$name" ]; then IFS=',' read -r -a settings <<< "${config#*:}"; fi
  env "${settings[@]}" ALLOT_CACHE_DIR="/tmp/allot-env-sweep-$name" \
    python3 benchmarks/skeptic_suite.py --no-compile --fusions "$fusions" --dtypes "${DTYPES:-bf16}" --sizes "${SIZES:-}" \
    "${check[@]}" --out "$out/$name.json" > "$out/$name.log" 2>&1 || { echo "$name: FAILED"; tail -n 5 "$out/$name.log"; continue; }
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    t = r.get("times", {}).get("allotment")
    cell = f"{t['median']:9.1f} [{t['min']:.1f}-{t['max']:.1f}] us" if t else f"{'-':>9s}  {r.get('status', '')}"
    pct = r.get("pct_copy")
    print(f"{sys.argv[2]:12s} {r['fusion']:16s} {r['extents']:8s} {r['size']:6s} {cell}  "
          + (f"{pct:5.1f}% of copy" if pct else ""))
PY
done
