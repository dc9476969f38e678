#!/usr/bin/env bash
# Nsight Compute profiles of the suite cases below 0.85x torch.compile in BENCHMARKS.md
# (or of the cases given as arguments, each "FUSION DTYPE EXTENTS SIZE"): Allotment's
# kernels and torch.compile's, one call each, the "detailed" section set (speed of
# light, memory workload, occupancy, launch statistics), clocks left alone
# (--clock-control none: ncu reads counters on the Firecracker machines, not on gVisor).
# Run on the GPU machine from the repository root, with .whl carried (session_common.sh):
#   bash benchmarks/profile_misses.sh OUT_DIR ["gelu_bwd bf16 static odd" ...]
# Writes OUT_DIR/<case>.ncu-rep and a text summary OUT_DIR/<case>.txt.
set -u
out=${1:?usage: profile_misses.sh OUT_DIR [CASE...]}
shift
mkdir -p "$out"
. benchmarks/session_common.sh
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -z "$ncu" ]; then echo "profile_misses.sh: no ncu on this machine"; exit 1; fi
if [ $# -eq 0 ]; then
  set -- "gelu_bwd bf16 static odd" "layernorm_bwd bf16 static odd" "rotary bf16 static odd" \
    "mean_3d_dim1 f16 static large" "reduction_epilogue bf16 static odd"
fi
for case in "$@"; do
  name=$(echo "$case" | tr ' ' '_')
  step "ncu_$name" timeout 300 "$ncu" --clock-control none --profile-from-start off --set detailed -f -o "$out/$name" \
    python3 benchmarks/profile_kernels.py $case
  grep " us$" "$out/ncu_$name.log"
  "$ncu" --import "$out/$name.ncu-rep" --print-summary per-kernel --page details \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis > "$out/$name.txt" 2>&1
  grep -E "^  [a-zA-Z_0-9]+.*Invocations|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Grid Size|Registers Per|Block Size|Waves Per SM|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth" "$out/$name.txt" | head -n 120
done
