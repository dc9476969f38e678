#!/usr/bin/env bash
# One GPU call for the torch.compile models and the schedule A/B, from the repository root,
# with .whl (xdsl and its needs) carried:
#
#   ALLOT_COMMIT=<commit> bash benchmarks/models_session.sh "$OUT"
#
# In this order, each cut at its own limit (about 9 minutes in all on one H200):
# 1. benchmarks/schedule_ab.py: the schedule rules' old and new kernels, timed side by side
#    (150 s);
# 2. benchmarks/torch_compile_models.py: Llama and GPT-2, training step and inference, for
#    eager, Inductor and Allotment, interleaved (280 s);
# 3. tests/gpu/check_syncs.py: a compiled training step synchronizes nothing, and an
#    out-of-range token fires the device assert (110 s).
# AB=0 skips 1; REPLAY=1 adds tests/gpu/check_replay_models.py (150 s) before 3; SNAPSHOT=1
# adds benchmarks/peak_snapshot.py for Llama (150 s) before 3; SYNCS=0 skips 3; MAXAUTOTUNE=1 adds
# Inductor's max-autotune-no-cudagraphs on MAXAUTOTUNE_MODELS (default llama) training, alone in
# its process, cut at MAXAUTOTUNE_S (default 420 s): run it in a call of its own, with MODELS=0
# (skips 2) AB=0 SYNCS=0.
# Files in OUT: gpu.txt, session.log, schedule_ab.txt, models.json, models.log, replay.log, syncs.log.
set -u
out=${1:?usage: models_session.sh OUT_DIR}
mkdir -p "$out"
t0=$SECONDS
exec > >(tee "$out/session.log") 2>&1
. benchmarks/session_common.sh
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" >> "$out/gpu.txt"
if [ "${AB:-1}" = 1 ]; then  # AB=0 skips it
  timeout 150 python3 benchmarks/schedule_ab.py > "$out/schedule_ab.txt" 2>&1
  echo "schedule_ab: exit $? at $((SECONDS - t0)) s"; tail -n 30 "$out/schedule_ab.txt"
fi
if [ "${MODELS:-1}" = 1 ]; then  # MODELS=0 skips 2
  timeout 280 python3 benchmarks/torch_compile_models.py --models llama gpt2 --modes train infer \
    --out "$out/models.json" > "$out/models.log" 2>&1
  echo "models: exit $? at $((SECONDS - t0)) s"
  grep -E "ms \(min|failed|graphs |predicted" "$out/models.log"
fi
if [ "${MAXAUTOTUNE:-0}" = 1 ]; then  # MAXAUTOTUNE=1: Inductor's max-autotune-no-cudagraphs, in a
  # process of its own (its first Llama training step took 284 s in the census)
  timeout "${MAXAUTOTUNE_S:-420}" python3 benchmarks/torch_compile_models.py --models ${MAXAUTOTUNE_MODELS:-llama} \
    --modes train --backends inductor-max-autotune --out "$out/models_max_autotune.json" > "$out/max_autotune.log" 2>&1
  echo "max-autotune: exit $? at $((SECONDS - t0)) s"; grep -E "ms \(min|failed" "$out/max_autotune.log"
fi
if [ "${REPLAY:-0}" = 1 ]; then  # REPLAY=1: which programs replay, and why any is refused
  timeout 150 python3 tests/gpu/check_replay_models.py > "$out/replay.log" 2>&1
  echo "replay: exit $? at $((SECONDS - t0)) s"; grep -E "FAIL|PASS|programs:|refused|not replayable" "$out/replay.log"
fi
if [ "${SNAPSHOT:-0}" = 1 ]; then  # SNAPSHOT=1: what is live at Llama's training peak, per backend
  timeout 150 python3 benchmarks/peak_snapshot.py --model llama --out "$out/peak_llama.json" > "$out/peak.log" 2>&1
  echo "peak snapshot: exit $? at $((SECONDS - t0)) s"; cat "$out/peak.log" | head -80
fi
if [ "${SYNCS:-1}" = 1 ]; then  # SYNCS=0 skips it
  timeout 110 python3 tests/gpu/check_syncs.py > "$out/syncs.log" 2>&1
  echo "syncs: exit $? at $((SECONDS - t0)) s"; grep -E "^(ok|FAIL|PASS)" "$out/syncs.log"
fi
echo "session: $((SECONDS - t0)) s"
