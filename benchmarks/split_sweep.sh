#!/usr/bin/env bash
# Tuning sweep of split (outer, middle-axis, full) reductions on one GPU: the first
# stage's program count (ALLOT_SPLIT_PROGRAMS) and block shape (ALLOT_OUTER_BLOCKS),
# Allotment only (no torch.compile), each configuration with its own program cache.
#   bash benchmarks/split_sweep.sh OUT_DIR
# PROGRAMS, BLOCKS (BMxBNxWARPS or `default`), FUSIONS and SIZES override the lists below.
set -u
out=${1:?usage: split_sweep.sh OUT_DIR}
mkdir -p "$out"
. benchmarks/session_common.sh
fusions=${FUSIONS:-column_sum,middle_mean,full_sum,rmsnorm_bwd}
sizes=${SIZES:-32768x4096,4096x32768}
for programs in ${PROGRAMS:-264 528 1056}; do
  for blocks in ${BLOCKS:-default 128x32x8 128x64x8 64x64x4 256x32x8}; do
    name="p${programs}_${blocks}"
    if [ "$blocks" = default ]; then unset ALLOT_OUTER_BLOCKS; else export ALLOT_OUTER_BLOCKS=$blocks; fi
    ALLOT_SPLIT_PROGRAMS=$programs ALLOT_CACHE_DIR=/tmp/allot-sweep-$name \
      python3 benchmarks/gpu_suite.py --no-compile --fusions "$fusions" --sizes "$sizes" > "$out/$name.log" 2>&1
    echo "== $name"; grep -E "^(${fusions//,/|}) " "$out/$name.log"
  done
done
