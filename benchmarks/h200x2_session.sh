#!/usr/bin/env bash
# One session on a machine with two H200 GPUs: the distributed checks and the
# collective benchmark on both GPUs (NCCL, rank r on cuda:r), then every
# single-GPU check and benchmark of h200_session.sh on GPU 0. Run from the
# repository root, with the pure-Python wheels (xdsl and its needs) carried in .whl:
#   bash benchmarks/h200x2_session.sh OUT_DIR [quick]
# Each step writes OUT_DIR/<step>.log (and .json where it has a table); a
# failing step is reported and the next one still runs. The single-GPU
# session writes into OUT_DIR/single (`quick` is passed on to it).
set -u
out=${1:?usage: h200x2_session.sh OUT_DIR [quick]}
quick=${2:-}
mkdir -p "$out"
. benchmarks/session_common.sh
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "$out/gpu.txt"
nvidia-smi topo -m >> "$out/gpu.txt" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count())" >> "$out/gpu.txt"
# allot-run is the console script of allotment.tools.allot_run; the repository is not installed here
step distributed timeout 900 python3 tests/gpu/check_distributed.py --timeout 90
step allot_run_nproc timeout 300 python3 -m allotment.tools.allot_run examples/sharded_mlp.mlir --nproc 2 --device cuda --check --timeout 240
step allot_run_nproc_uneven timeout 300 python3 -m allotment.tools.allot_run examples/sharded_mlp.mlir --func vocab_parallel_logits --nproc 2 --device cuda --check --timeout 240
step collectives timeout 900 python3 benchmarks/collectives.py --nproc 2 --out "$out/collectives.json"
cat "$out/distributed.log"
head -n 13 "$out/collectives.log"
echo "--- single GPU (CUDA_VISIBLE_DEVICES=0): $out/single"
CUDA_VISIBLE_DEVICES=0 bash benchmarks/h200_session.sh "$out/single" $quick
