# Sourced by the GPU session scripts (h200_session.sh, h200x2_session.sh, split_sweep.sh):
# installs the pure-Python wheels carried in .whl, sets the environment, and defines
# `step NAME CMD...`, which runs CMD into $out/NAME.log and reports ok or FAILED (with
# the log's tail) without stopping the session. Needs $out set.
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
export PYTHONUNBUFFERED=1 ALLOT_CACHE_DIR=${ALLOT_CACHE_DIR:-/tmp/allot-cache}
step() {
  local name=$1; shift
  local start=$SECONDS
  if "$@" > "$out/$name.log" 2>&1; then
    echo "$name: ok ($((SECONDS - start)) s)"
  else
    echo "$name: FAILED ($((SECONDS - start)) s)"; tail -n 15 "$out/$name.log"
  fi
}
# record_gpu: writes $out/gpu.txt (the GPU's name and clock, torch's and Triton's versions and
# ALLOT_COMMIT, "unknown" where unset: the GPU machine's tree has no .git) and prints it.
record_gpu() {
  export ALLOT_COMMIT=${ALLOT_COMMIT:-unknown}
  { nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
    python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)'; echo "commit $ALLOT_COMMIT"; } > "$out/gpu.txt"
  cat "$out/gpu.txt"
}
