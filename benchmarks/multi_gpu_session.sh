#!/usr/bin/env bash
# One session on a machine with 4 or 8 H200 GPUs (device tools nvidia-h200-x4, -x8):
# the distributed checks on NCCL at N ranks (rank r on cuda:r; 2x2 or 2x4 meshes,
# uneven shards, each resharding collective), allot-run --nproc N on the example of
# that mesh, and the collective bandwidth table at 2, 4 (and 8) GPUs, one run each,
# beside torch.distributed. Run from the repository root, with the pure-Python
# wheels (xdsl and its needs) carried in .whl:
#   bash benchmarks/multi_gpu_session.sh OUT_DIR N        # N = 4 or 8
# Each step writes OUT_DIR/<step>.log (and .json where it has a table); a failing
# step is reported and the next one still runs. About 10 minutes at N = 8; the
# collectives' 1 GiB size can be left out with SIZES=1MiB,64MiB.
set -u
out=${1:?usage: multi_gpu_session.sh OUT_DIR N}
n=${2:?usage: multi_gpu_session.sh OUT_DIR N (4 or 8)}
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
# allot-run is the console script of allotment.tools.allot_run; the repository is not installed here
step distributed$n timeout 1500 python3 tests/gpu/check_distributed.py --nproc "$n" --timeout 90
step allot_run_grid_mlp timeout 300 python3 -m allotment.tools.allot_run "$example" --nproc "$n" --device cuda --check --timeout 240
step allot_run_grid_logits timeout 300 python3 -m allotment.tools.allot_run "$example" --func grid_logits --nproc "$n" --device cuda --check --timeout 240
step distributed2 timeout 900 python3 tests/gpu/check_distributed.py --nproc 2 --timeout 90
for k in 2 4 8; do
  [ "$k" -le "$n" ] || continue
  step collectives$k timeout 900 python3 benchmarks/collectives.py --nproc "$k" --sizes "$sizes" --out "$out/collectives$k.json"
done
step dist_host_cost timeout 600 python3 benchmarks/dist_host_cost.py --out "$out/dist_host_cost.json"
cat "$out/distributed$n.log"
for k in 2 4 8; do [ -f "$out/collectives$k.log" ] && head -n 19 "$out/collectives$k.log"; done
cat "$out/dist_host_cost.log"
