#!/usr/bin/env bash
# The differential tests on a GPU: the FusionDefinition tests (tests/frontend: nvFuser's
# style, every case on the backend and on the reference evaluator, on cuda when there is
# one) and the backend's own differential tests with ALLOT_TEST_DEVICE=cuda (compiled
# kernels on the GPU, the reference on the CPU). Run on the GPU machine from the
# repository root, with .whl carried (see session_common.sh):
#   bash benchmarks/gpu_tests.sh OUT_DIR [LIMIT_S]
# Writes OUT_DIR/<step>.log; prints each step's pytest summary line.
set -u
out=${1:?usage: gpu_tests.sh OUT_DIR [LIMIT_S]}
limit=${2:-480}
mkdir -p "$out"
. benchmarks/session_common.sh
export ALLOT_TEST_DEVICE=cuda
step frontend timeout "$limit" python3 -m pytest -q -p no:cacheprovider tests/frontend
step backend_new timeout "$limit" python3 -m pytest -q -p no:cacheprovider \
  tests/test_scalar_extents.py tests/test_inner_outer.py tests/test_backend_views_reductions.py
for s in frontend backend_new; do echo "$s: $(tail -n 1 "$out/$s.log")"; done
grep -E "^(FAILED|ERROR)" "$out"/frontend.log "$out"/backend_new.log | head -n 40
