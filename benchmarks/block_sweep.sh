#!/usr/bin/env bash
# Tuning sweep of one block heuristic of `allotment/backend/host_runtime.py` on one GPU,
# over suite fusions (`benchmarks/suite_fusions.py`), Allotment only (no torch.compile),
# each configuration with its own program cache:
#   KNOB=TRANSPOSE VALUES="default 64x64x4 32x32x4" FUSIONS=transpose_add_2d SIZES=large \
#     bash benchmarks/block_sweep.sh OUT_DIR
# KNOB names the override ALLOT_<KNOB>_BLOCKS (POINTWISE, TRANSPOSE, PERSISTENT, LOOPED,
# OUTER, SHORT_OUTER, INNER_OUTER, INNER_SPLIT, ...); each value is BMxBNxWARPS or
# `default` (the heuristic). DTYPES (default bf16) and EXTENTS (default static,dynamic)
# filter the cases. Prints one line per case: config, fusion, extents, size, ms, % of copy.
set -u
out=${1:?usage: block_sweep.sh OUT_DIR}
mkdir -p "$out"
. benchmarks/session_common.sh
knob=${KNOB:?KNOB=<name of ALLOT_<KNOB>_BLOCKS>}
for value in ${VALUES:-default}; do
  name="${knob}_${value}"
  if [ "$value" = default ]; then unset "ALLOT_${knob}_BLOCKS"; else export "ALLOT_${knob}_BLOCKS=$value"; fi
  ALLOT_CACHE_DIR=/tmp/allot-sweep-$name python3 benchmarks/fusion_suite.py --no-compile \
    --fusions "${FUSIONS:?}" --sizes "${SIZES:-large,odd}" --dtypes "${DTYPES:-bf16}" \
    --extents "${EXTENTS:-static,dynamic}" --rep-ms 30 --out "$out/$name.json" > "$out/$name.log" 2>&1
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
for r in data.get("results", []):
    ms = r.get("allotment_ms")
    print(f"{sys.argv[2]:28s} {r['fusion']:20s} {r['extents']:8s} {r['size']:6s} "
          f"{(ms or 0) * 1e3:9.1f} us  {r.get('pct_copy') or 0:5.0f}%  {r.get('status', '')} {r.get('error', '')}")
PY
  unset "ALLOT_${knob}_BLOCKS"
done
