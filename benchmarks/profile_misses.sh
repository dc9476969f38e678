#!/usr/bin/env bash
# Nsight Compute profiles of the fusions below 0.85x torch.compile in BENCHMARKS.md:
# Allotment's kernels and torch.compile's, one call each, the "detailed" section set
# (speed of light, memory workload, occupancy, launch statistics), clocks left alone
# (--clock-control none: ncu reads counters on the Firecracker machines, not on gVisor). Run on the GPU
# machine from the repository root, with .whl carried (see session_common.sh):
#   bash benchmarks/profile_misses.sh OUT_DIR
# Writes OUT_DIR/<fusion>_<size>.ncu-rep and a text summary OUT_DIR/<fusion>_<size>.txt.
set -u
out=${1:?usage: profile_misses.sh OUT_DIR}
mkdir -p "$out"
. benchmarks/session_common.sh
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -z "$ncu" ]; then echo "profile_misses.sh: no ncu on this machine"; exit 1; fi
for case in "middle_mean 32768x4096" "rmsnorm_bwd 32768x4096" "column_sum 32768x4096"; do
  set -- $case
  name="$1_$2"
  step "ncu_$name" timeout 300 "$ncu" --clock-control none --profile-from-start off --set detailed -f -o "$out/$name" \
    python3 benchmarks/profile_kernels.py "$1" "$2"
  "$ncu" --import "$out/$name.ncu-rep" --print-summary per-kernel --page details \
    --section SpeedOfLight --section Occupancy --section LaunchStats > "$out/$name.txt" 2>&1
  grep -E "^  [a-z_0-9]+|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Grid Size|Registers Per|Block Size|Waves Per SM" "$out/$name.txt" | head -n 80
done
