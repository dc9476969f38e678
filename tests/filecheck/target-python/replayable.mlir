// Whether a generated program's calls may be replayed by the native executor
// (`backend/replay.py`): `REPLAYABLE = True` when `run` only checks, allocates, views,
// launches and makes library torch calls (each a function of the input signature);
// False, with the first reason, for a CPU program, an index check that reads data, or
// poison mode.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place -t python | filecheck %s --check-prefix=CUDA
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place -t python{device=cpu} | filecheck %s --check-prefix=CPU

// CUDA: rt.launch(
// CUDA: def run(
// CUDA: rt.linear(
// CUDA: REPLAYABLE = True  # calls depend on the input signature only
// CPU: REPLAYABLE = False  # cpu programs launch through Triton's interpreter
func.func @mlp(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %h = fusion.linear %x, %w, %b : tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<?x32xf32>
  %t = fusion.tanh %h : tensor<?x32xf32>
  func.return %t : tensor<?x32xf32>
}
