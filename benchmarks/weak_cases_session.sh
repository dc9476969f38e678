#!/usr/bin/env bash
# One GPU call for issue 30's weak cases, before a whole skeptic session: the A/Bs of the
# schedule rules not yet timed on a GPU, the BatchNorm re-read experiment, and Nsight
# Compute profiles of the cases that stood below 0.9x the fastest torch.compile column.
# From the repository root, with .whl carried (session_common.sh):
#
#   ALLOT_COMMIT=<commit> bash benchmarks/weak_cases_session.sh OUT_DIR [WALL_S]
#
# Steps (STEPS, default all five: "ab_unrolled ab_two_tile ab_magic reread ncu"), each into
# OUT_DIR/<step>.log and each cut by its own timeout; the profiles run while the wall
# budget (default 540 s) leaves 60 s or more:
#   ab_unrolled     schedule_ab.py --rules unrolled_outer (sum_3d_dim0's short outer sums)
#   ab_two_tile     schedule_ab.py --rules two_tile_rows_at_run_time (rows of ? length)
#   ab_magic        schedule_ab.py --rules magic_division (? indices divided by a multiply-high)
#   cuda_tests      tests/test_fast_division.py with ALLOT_TEST_DEVICE=cuda (FAST_DIV compiled
#                   by the GPU's Triton, specialized extents of 1 and 2 included)
#   suite_weak      skeptic_suite.py on WEAK_FUSIONS (default: the fusions of the f354eb1
#                   run's cases below 0.9x, the BatchNorm pair) in bf16, within what is
#                   left of the wall budget less 30 s: weak_suite.json and weak_suite.md
#   reread          reread_order_variants.py (BatchNorm's normalization walking backwards)
#   ncu_<case>      profile_misses.sh on CASES (default: the f354eb1 run's cases below 0.9x)
# AB_BUDGET_S (default 120): each A/B's --budget-s (cases not started by then are skipped).
# CPU_CHECK=1: the script's path on a machine without a GPU: the A/Bs with --cpu-check
# (Triton's interpreter, one case each, times that mean nothing); reread and ncu need a GPU
# and say so.
# The .ncu-rep reports stay on the machine; their text summaries are packed into
# OUT_DIR/ncu.tar.xz (the device tool returns at most 8 files).
set -u
out=${1:?usage: weak_cases_session.sh OUT_DIR [WALL_S]}
wall=${2:-540}
mkdir -p "$out"
t0=$SECONDS
exec > >(tee "$out/session.log") 2>&1
. benchmarks/session_common.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
echo "commit ${ALLOT_COMMIT:-unknown}"
steps=" ${STEPS:-ab_unrolled ab_two_tile ab_magic reread ncu} "
on() { [[ "$steps" == *" $1 "* ]]; }
cpu=()
if [ "${CPU_CHECK:-0}" = 1 ]; then
  cpu=(--cpu-check --repeats 2)
  steps=${steps/ reread / }; steps=${steps/ ncu / }; steps=${steps/ cuda_tests / }
  echo "CPU_CHECK=1: reread, ncu and cuda_tests not run (they need a GPU)"
fi
if on ab_unrolled; then
  step ab_unrolled timeout 150 python3 benchmarks/schedule_ab.py --rules unrolled_outer --budget-s "${AB_BUDGET_S:-120}" \
    ${cpu[@]+"${cpu[@]}" --cases sum_3d_dim0:odd:?}
  tail -n 12 "$out/ab_unrolled.log"
fi
if on ab_two_tile; then
  step ab_two_tile timeout 150 python3 benchmarks/schedule_ab.py --rules two_tile_rows_at_run_time --budget-s "${AB_BUDGET_S:-120}" \
    ${cpu[@]+"${cpu[@]}" --cases rmsnorm_fwd:odd:?}
  tail -n 12 "$out/ab_two_tile.log"
fi
if on ab_magic; then
  step ab_magic timeout 150 python3 benchmarks/schedule_ab.py --rules magic_division --budget-s "${AB_BUDGET_S:-120}" \
    ${cpu[@]+"${cpu[@]}" --cases bn_stats:odd:?}
  tail -n 14 "$out/ab_magic.log"
fi
if on cuda_tests; then
  step cuda_tests env ALLOT_TEST_DEVICE=cuda timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_fast_division.py
  tail -n 3 "$out/cuda_tests.log"
fi
if on suite_weak; then
  left=$((wall - (SECONDS - t0) - 30))
  fusions=${WEAK_FUSIONS:-sum_3d_dim0,attention_epilogue,bn_stats,batchnorm_fwd,residual_layernorm,rmsnorm_bwd,kv_cat}
  if [ "$left" -lt 40 ]; then
    echo "suite_weak: not run (budget)"
  else
    . benchmarks/nvfuser_env.sh
    step suite_weak timeout $((left + 20)) python3 benchmarks/skeptic_suite.py --fusions "$fusions" --dtypes bf16 \
      --budget-s "$left" --nvfuser-extents dynamic ${cpu[@]+--cpu-check --repeats 2 --host-calls 2 --compile-backend aot_eager} \
      --out "$out/weak_suite_raw.json"
    python3 benchmarks/skeptic_suite.py --merge "$out/weak_suite_raw.json" --out "$out/weak_suite.json" \
      --markdown "$out/weak_suite.md" > /dev/null && sed -n '/## Summary/,/## Cases/p' "$out/weak_suite.md"
  fi
fi
if on reread; then
  step reread timeout 120 python3 benchmarks/reread_order_variants.py
  tail -n 20 "$out/reread.log"
fi
if on ncu; then
  cases=${CASES:-"sum_3d_dim0 bf16 dynamic odd|attention_epilogue bf16 dynamic odd|full_sum f32 dynamic large|rotary f32 dynamic large|kv_cat bf16 dynamic odd|rmsnorm_bwd bf16 dynamic odd"}
  IFS='|' read -r -a case_list <<< "$cases"
  mkdir -p /tmp/ncu
  for c in "${case_list[@]}"; do
    left=$((wall - (SECONDS - t0)))
    if [ "$left" -lt 60 ]; then echo "ncu $c: not run (budget)"; continue; fi
    timeout $((left - 20)) bash benchmarks/profile_misses.sh /tmp/ncu "$c" 2>&1 | tail -n 40
  done
  tar cJf "$out/ncu.tar.xz" --exclude='*.ncu-rep' -C /tmp/ncu . 2>/dev/null
fi
echo "session: $((SECONDS - t0)) s"
