#!/usr/bin/env bash
# One session on a machine with 4 or 8 H200 GPUs (device tools nvidia-h200-x4, -x8):
# the distributed checks on NCCL at N ranks (rank r on cuda:r; 2x2 or 2x4 meshes,
# uneven shards, each resharding collective), allot-run --nproc N on the example of
# that mesh, and the collective bandwidth table at 2, 4 (and 8) GPUs, one run each,
# beside torch.distributed. Run from the repository root, with the pure-Python
# wheels (xdsl and its needs) carried in .whl, in two parts of under 10 minutes each:
#   bash benchmarks/multi_gpu_session.sh OUT_DIR N checks   # N = 4 or 8: the checks, allot-run, host cost
#   bash benchmarks/multi_gpu_session.sh OUT_DIR N bench    # the collective table at 2, 4 (and 8) GPUs
# Each step writes OUT_DIR/<step>.log (and .json where it has a table); a failing
# step is reported and the next one still runs. The checks run every fusion case in
# one process group (--one-group); where one fails, rerun it in its own group:
#   python3 tests/gpu/check_distributed.py --nproc N --cases CASE
# The collectives' 1 GiB size can be left out with SIZES=1MiB,64MiB.
set -u
usage="usage: multi_gpu_session.sh OUT_DIR N(4 or 8) checks|bench"
out=${1:?$usage}
n=${2:?$usage}
part=${3:?$usage}
sizes=${SIZES:-1MiB,64MiB,1GiB}
case $n in
  4) example=examples/sharded_2x2.mlir ;;
  8) example=examples/sharded_2x4.mlir ;;
  *) echo "multi_gpu_session.sh: N must be 4 or 8, got $n" >&2; exit 2 ;;
esac
mkdir -p "$out"
. benchmarks/session_common.sh
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "$out/gpu.txt"
nvidia-smi topo -m >> "$out/gpu.txt" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count())" >> "$out/gpu.txt"
git rev-parse HEAD >> "$out/gpu.txt" 2>/dev/null
if [ "$part" = checks ]; then
  # allot-run is the console script of allotment.tools.allot_run; the repository is not installed here
  step distributed$n timeout 270 python3 tests/gpu/check_distributed.py --nproc "$n" --one-group --timeout 40
  step distributed2 timeout 120 python3 tests/gpu/check_distributed.py --nproc 2 --one-group --timeout 40
  step allot_run_grid_mlp timeout 60 python3 -m allotment.tools.allot_run "$example" --nproc "$n" --device cuda --check --timeout 50
  step allot_run_grid_logits timeout 60 python3 -m allotment.tools.allot_run "$example" --func grid_logits --nproc "$n" --device cuda --check --timeout 50
  step dist_host_cost timeout 60 python3 benchmarks/dist_host_cost.py --out "$out/dist_host_cost.json"
  cat "$out/distributed$n.log" "$out/distributed2.log" "$out/dist_host_cost.log"
elif [ "$part" = bench ]; then
  for k in 2 4 8; do
    [ "$k" -le "$n" ] || continue
    step collectives$k timeout 170 python3 benchmarks/collectives.py --nproc "$k" --sizes "$sizes" --timeout 160 --out "$out/collectives$k.json"
    head -n 19 "$out/collectives$k.log"
  done
else
  echo "$usage" >&2; exit 2
fi
