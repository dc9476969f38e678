#!/usr/bin/env bash
# One GPU call for the two rules that were only checked offline: ALIGN (`align_hint`) and the
# index-typed integer arithmetic (`index_ranges`), plus the ALiBi epilogue's persistent blocks.
# From the repository root on the GPU machine, with .whl carried:
#
#   ALLOT_COMMIT=<commit> bash benchmarks/align_index_session.sh OUT_DIR
#
# Steps, each cut by its own timeout so the whole stays under about 560 s:
# 1. gpu_tests.log: tests/test_align_hint.py, test_align_suite.py and test_index_ranges.py with
#    the kernels on the GPU (ALLOT_TEST_DEVICE=cuda): a wrong ALIGN would be a misaligned
#    vector access there, which Triton's interpreter cannot show;
# 2. ab.log: schedule_ab.py A/Bs (kernel-only, CUDA-graph replay, 5 interleaved repeats):
#    align_hint in bf16 (its own cases) and in f32 (rows of 1000 and 1004), on the soft-capped
#    softmax (unseen_fusions.py), index_ranges on the ALiBi epilogue and on the suite's
#    attention epilogue;
# 3. alibi_blocks.log: the ALiBi epilogue, bf16 static and `?` at the odd size (12 x 777 x 777),
#    under ALLOT_PERSISTENT_BLOCKS settings (Allotment and the copy only, the suite's method).
set -u
out=${1:?usage: align_index_session.sh OUT_DIR}
mkdir -p "$out"
. benchmarks/session_common.sh
record_gpu
ALLOT_TEST_DEVICE=cuda timeout 70 python3 -m pytest -q -p no:cacheprovider \
  tests/test_align_hint.py tests/test_align_suite.py tests/test_index_ranges.py > "$out/gpu_tests.log" 2>&1
echo "gpu tests: $(tail -n 1 "$out/gpu_tests.log")"
A="python3 benchmarks/schedule_ab.py"
U="python3 benchmarks/unseen_fusions.py ab"
{
  echo "== align_hint bf16"; timeout 140 $A --rules align_hint --budget-s 110
  echo "== align_hint f32"; timeout 80 $A --rules align_hint --dtype f32 --budget-s 50 \
    --cases softmax_fwd:M=32768/N=1000,softmax_fwd:M=32768/N=1000:?,swiglu:M=16384/N=1000,layernorm_fwd:M=32768/N=1000:?,softmax_fwd:M=32768/N=1004
  echo "== align_hint unseen"; timeout 55 $U --rules align_hint --budget-s 35 \
    --cases softcap_softmax:odd,softcap_softmax:odd:?,softcap_softmax:large
  echo "== index_ranges unseen"; timeout 55 $U --rules index_ranges --budget-s 35 \
    --cases alibi_epilogue:odd,alibi_epilogue:odd:?,alibi_epilogue:large
  echo "== index_ranges suite"; timeout 55 $A --rules index_ranges --budget-s 35
} > "$out/ab.log" 2>&1
for config in default 1x1024x4 1x1024x8 2x1024x4 2x1024x8; do
  settings=()
  [ "$config" != default ] && settings=(ALLOT_PERSISTENT_BLOCKS="$config")
  env "${settings[@]}" ALLOT_CACHE_DIR="/tmp/allot-alibi-$config" timeout 40 python3 benchmarks/unseen_fusions.py suite \
    --no-compile --fusions alibi_epilogue --dtypes bf16 --sizes odd --out "$out/alibi_$config.json" > /dev/null 2>&1
  python3 - "$out/alibi_$config.json" "$config" <<'PY' 2>&1
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["results"]
except Exception as e:  # the step timed out or failed: say so
    print(f"{sys.argv[2]:10s} no results ({e})")
    sys.exit(0)
for r in rows:
    t = r.get("times", {}).get("allotment")
    cell = f"{t['median']:7.1f} [{t['min']:.1f}-{t['max']:.1f}] us" if t else r.get("status", "")
    print(f"{sys.argv[2]:10s} {r['fusion']} {r['extents']:8s} {r['size']} {cell}")
PY
done > "$out/alibi_blocks.log"
rm -f "$out"/alibi_*.json
grep -v '^\s*$' "$out/ab.log" | tail -c 7000
cat "$out/alibi_blocks.log"
