#!/usr/bin/env bash
# One GPU session's checks and benchmarks, in the order they are reported in
# BENCHMARKS.md; run on the H200 machine from the repository root, with the
# pure-Python wheels (xdsl and its needs) carried in .whl:
#   bash benchmarks/h200_session.sh OUT_DIR [quick]
# Each step writes OUT_DIR/<step>.log (and .json where it has a table);
# a failing step is reported and the next one still runs.
set -u
out=${1:?usage: h200_session.sh OUT_DIR [quick]}
quick=${2:-}
mkdir -p "$out"
. benchmarks/session_common.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$out/gpu.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" >> "$out/gpu.txt"
step threads python3 tests/gpu/check_threads.py
step planning python3 tests/gpu/check_planning.py
step cuda python3 tests/gpu/check_cuda.py --count 20
step graphs python3 tests/gpu/check_graphs.py
step memory python3 benchmarks/memory_suite.py --out "$out/memory.json"
if [ "$quick" != quick ]; then
  step kernels python3 benchmarks/gpu_suite.py --out "$out/kernels.json"
  # the broad suite (benchmarks/suite_fusions.py), cut at 6 minutes: partial results are kept
  step fusion_suite python3 benchmarks/fusion_suite.py --budget-s 360 \
    --out "$out/fusion_suite.json" --markdown "$out/fusion_suite.md"
fi
tail -n 20 "$out/memory.log"
tail -n 8 "$out/graphs.log"
